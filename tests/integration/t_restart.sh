#!/usr/bin/env bash
# Database restarts mid-run (fast and immediate): cronq run exits 75 with a
# one-line message, without hanging, or, when the server is back before the
# worker's one reconnection attempt, goes on and says so in one line; the
# next runs resume and finish.
. "$(dirname "$0")/lib.sh"
migrate
root="$(dirname "$0")/../.."

for mode in fast immediate; do
    q "delete from cronq.jobs; delete from cronq.job_runs"
    for i in 1 2 3; do "$CRONQ" enqueue sleep '{"seconds": 2}' >/dev/null; done
    "$CRONQ" run --lease 2s >"$T_DIR/out" 2>"$T_DIR/err" &
    pid=$!
    check "$mode: a job is running" wait_for "running" 5 "select count(*) > 0 from cronq.jobs where status = 'running'"
    start=$(date +%s)
    "$root/scripts/pg.sh" restart "$PGHOST" $mode
    wait $pid
    rc=$?
    took=$(( $(date +%s) - start ))
    # A worker whose connection fails opens a new one, once: if the server
    # is back by then, the run goes on (0, and says so); if not, it exits 75.
    case $rc in
        75) match "$mode: exit 75, naming the problem" '^cronq: error: (could not [a-z ]+: )?(connection to database lost|terminating connection|server closed the connection)' "$(cat "$T_DIR/err")" ;;
        0) match "$mode: exit 0 after reconnecting, saying so" '^cronq: warning: the connection to the database was lost .*; reconnected' "$(cat "$T_DIR/err")" ;;
        *) fail "$mode: cronq run exits 75 (or 0 after reconnecting), got $rc: $(cat "$T_DIR/err")" ;;
    esac
    eq "$mode: one line on stderr" 1 "$(grep -c . "$T_DIR/err")"
    check "$mode: no hang (${took}s)" [ $took -le 10 ]
    check "$mode: no core dump" [ ! -e core ]
    # The next runs rescue the interrupted job once its lease expires and finish everything.
    sleep 2.2
    for _ in 1 2 3; do "$CRONQ" run --lease 2s 2>/dev/null; done
    eq "$mode: everything finished" "3|0" "$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status <> 'succeeded') from cronq.jobs")"
done

# Unreachable from the start: 69, one line.
cronq run --db "host=$PGHOST port=1"
expect_rc_err "unreachable database" 69 '^cronq: error: could not connect to database: '

done_testing
