#!/usr/bin/env bash
# run-tests.sh — the whole suite: every unit test binary in $UNIT_DIR, then
# every tests/integration/*.sh against one throwaway PostgreSQL started here
# (each test file gets its own database). Ends with "N passed, N failed".
#   CRONQ      the binary under test (absolute path)
#   UNIT_DIR   where the unit test binaries are
#   TESTS      optional: only integration tests whose name contains one of
#              these space-separated words
#   UNIT_ONLY  set: the unit tests alone, no PostgreSQL
#   NO_UNIT    set: the integration tests alone
#   TEST_LANES how many integration tests run at once (default 2), each
#              lane against a PostgreSQL of its own: most tests spend their
#              time waiting (leases, timeouts, restarts), and a lane's
#              tests run one after another as they always did, so that a
#              test that restarts its server or counts its sessions meets
#              no other test there. 1 under SOAK.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${CRONQ:?set CRONQ to the cronq binary}"
: "${UNIT_DIR:?set UNIT_DIR to the unit test binaries}"
export CRONQ

passed=0; failed=0
# result_line LOG: a test's last "name: N passed, M failed" line, if any.
result_line() { grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1; }
tally() {  # add up a log's result line
    local line p f
    line=$(result_line "$1")
    if [ -z "$line" ]; then
        echo "not ok $2: no result line (crashed?)"; failed=$((failed + 1)); return
    fi
    p=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/' <<<"$line")
    f=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/' <<<"$line")
    passed=$((passed + p)); failed=$((failed + f))
}

tmp=$(mktemp -d /tmp/cronq-test.XXXXXX)
chmod 755 "$tmp"  # the cluster runs as postgres when we are root
# On the way out (interrupted too): each lane's test still running stopped
# with everything it started in its process group (timeout leads one),
# then the lanes, then their servers.
cleanup() {
    local f pid jobs d
    for f in "$tmp"/running*; do
        pid=$(cat "$f" 2>/dev/null)
        [ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null && sleep 1 && kill -KILL -- "-$pid" 2>/dev/null
    done
    jobs=$(jobs -p)
    [ -z "$jobs" ] || kill $jobs 2>/dev/null
    for d in "$tmp"/pg*; do [ -d "$d" ] && "$root/scripts/pg.sh" stop "$d" >/dev/null 2>&1; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== unit tests"
# The compiled tests, and the checks of the source (tests/unit/*.sh) with them.
unit_tests=("$UNIT_DIR"/test_*)
[ -d "$UNIT_DIR" ] && unit_tests+=("$root"/tests/unit/test_*.sh)
[ -n "${NO_UNIT:-}" ] && unit_tests=()
for t in "${unit_tests[@]}"; do
    [ -x "$t" ] || continue
    name=$(basename "$t" .sh)
    (cd "$root" && timeout --kill-after=10 "${TEST_TIMEOUT:-600}" "$t") >"$tmp/$name.log" 2>&1 \
        || case $? in 124|137) echo "not ok $name: timed out"; failed=$((failed + 1)) ;; esac
    grep -E '^not ok|: [0-9]+ passed' "$tmp/$name.log"
    tally "$tmp/$name.log" "$name"
done

[ -n "${UNIT_ONLY:-}" ] && { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

echo "== integration tests"
tests=()
for t in "$root"/tests/integration/t_*.sh; do
    name=$(basename "$t" .sh)
    if [ -n "${TESTS:-}" ]; then
        wanted=0
        for want in $TESTS; do [[ "$name" == *"$want"* ]] && wanted=1; done
        [ $wanted = 1 ] || continue
    fi
    tests+=("$name")
done
# The tests that take a minute or more start first, so that the lanes end
# together; the rest in name order.
long=" t_hang t_compose_hostile t_limits t_crash t_reliability t_failover t_compose t_restart "
printf '%s\n' "${tests[@]}" | awk -v long="$long" '{ print (index(long, " " $0 " ") ? 0 : 1), $0 }' |
    sort -s -k1,1n | cut -d' ' -f2 >"$tmp/queue"
lanes=${TEST_LANES:-2}
[ -n "${SOAK:-}" ] && lanes=1
[ "$lanes" -gt "${#tests[@]}" ] && lanes=${#tests[@]}
[ "$lanes" -ge 1 ] || lanes=1
for lane in $(seq 1 "$lanes"); do
    "$root/scripts/pg.sh" start "$tmp/pg$lane" fast >"$tmp/env$lane" ||
        { echo "could not start PostgreSQL"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
done
export TEST_TMP="$tmp"
echo 0 >"$tmp/next"

# lane N: take the next test off the queue until none is left, each run
# against lane N's server, its report printed whole once it ends; the
# counts are read from the logs once every lane is done.
lane() {
    local n=$1 name i start limit rc
    eval "$(cat "$tmp/env$n")"
    while :; do
        i=$(flock "$tmp/next" bash -c 'i=$(cat "$1"); echo $((i + 1)) >"$1"; echo "$i"' _ "$tmp/next")
        name=$(sed -n "$((i + 1))p" "$tmp/queue")
        [ -n "$name" ] || break
        start=$(date +%s)
        # A hang fails with the test's name: TEST_TIMEOUT seconds per file
        # (default 600; the load scenarios under `make soak` get an hour).
        limit=${TEST_TIMEOUT:-600}
        [ -n "${SOAK:-}" ] && limit=3600
        timeout --kill-after=10 "$limit" bash "$root/tests/integration/$name.sh" >"$tmp/$name.log" 2>&1 </dev/null &
        echo $! >"$tmp/running$n"
        wait $!
        rc=$?
        : >"$tmp/running$n"
        {
            if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                echo "not ok $name: timed out after ${limit}s"
                echo "$name: 0 passed, 1 failed" >>"$tmp/$name.log"
            elif [ -z "$(result_line "$tmp/$name.log")" ]; then
                echo "not ok $name: no result line (crashed? exit $rc)"
                echo "$name: 0 passed, 1 failed" >>"$tmp/$name.log"
            fi
            grep -E '^not ok|^  |: [0-9]+ passed' "$tmp/$name.log"
            echo "   ($(( $(date +%s) - start ))s)"
        } >"$tmp/$name.report"
        flock "$tmp/queue" cat "$tmp/$name.report"
    done
}
for lane_n in $(seq 1 "$lanes"); do lane "$lane_n" & done
wait
for name in "${tests[@]}"; do tally "$tmp/$name.log" "$name"; done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
