#!/usr/bin/env bash
# cronq wait (issue 22): exit 0 when every job succeeded, 1 when one ended
# dead or cancelled, 75 on timeout (promptly, naming the pending jobs), 65
# for an id that is not a number or not a visible job (before any wait),
# 64 for usage errors; --json; a failed job is not finished; SIGTERM ends
# it at once; and a script's id=$(cronq enqueue …); cronq wait "$id" while
# a cronq run drains in the background.
. "$(dirname "$0")/lib.sh"
migrate
q "update cronq.schedules set enabled = false" >/dev/null

exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"
chmod 755 "$T_DIR" "$exec_dir"
printf '#!/bin/sh\nprintf %s >&3\n' "'{\"ok\": true}'" >"$exec_dir/answer"
chmod 755 "$exec_dir/answer"
run() { "$CRONQ" run --exec-dir "$exec_dir" "$@" >/dev/null 2>"$T_DIR/run.err"; }
# gone PID: the process has ended (a zombie not yet reaped counts).
gone() { [ ! -e /proc/$1 ] || grep -q '^State:.*Z' /proc/$1/status 2>/dev/null; }

# --- usage and bad ids --------------------------------------------------------
cronq wait --help
match "wait --help" "Usage:.*cronq wait ID\\.\\.\\. \\[OPTION\\]\\.\\.\\..*--timeout DURATION.*--json" "$(tr '\n' ' ' <<<"$OUT")"
cronq wait
expect "no id" 64 "" $'cronq: error: missing required argument ID\nTry "cronq wait --help" for more information.'
cronq wait 1 --timeout soon
expect "bad timeout" 64 "" 'cronq: error: invalid value "soon" for --timeout: invalid duration "soon": expected a number at "soon"
cronq: hint: A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, "2 hours 30 minutes".'
cronq wait abc
expect "an id that is not a number" 65 "" 'cronq: error: invalid value "abc" for job id: must be an integer from 1 to 9223372036854775807'
ok=$("$CRONQ" enqueue noop)
cronq wait "$ok" 424242 424243 --timeout 5s
expect "ids that are no job, named before any wait" 65 "" $'cronq: error: job 424242 does not exist\ncronq: error: job 424243 does not exist'

# --- success, failure, cancel -------------------------------------------------
a=$("$CRONQ" enqueue exec '{"command": "answer"}')
run
cronq wait "$ok" "$a"
expect "all succeeded: 0" 0 "$ok succeeded
$a succeeded" ""
cronq wait "$a" --json
expect "--json: one compact object" 0 "{\"id\":$a,\"status\":\"succeeded\",\"error_code\":null,\"last_error\":null,\"result\":{\"ok\": true}}" ""
d=$("$CRONQ" enqueue fail '{"message": "no luck", "permanent": true}')
f=$("$CRONQ" enqueue fail '{"message": "again"}' --max-attempts 3)
run
eq "one dead, one failed (retrying)" "dead|failed" "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($d, $f)")"
cronq wait "$ok" "$d"
expect "dead: 1" 1 "$ok succeeded
$d dead" ""
cronq wait "$d" --json
expect "--json: a dead job's error" 1 "{\"id\":$d,\"status\":\"dead\",\"error_code\":\"failed\",\"last_error\":\"no luck\",\"result\":null}" ""
start=$(date +%s%N)
cronq wait "$f" "$ok" --timeout 1s
took=$(( ($(date +%s%N) - start) / 1000000 ))
expect "a failed job is not finished: timeout, 75" 75 "$f failed
$ok succeeded" "cronq: error: timed out after 1s; still pending: $f (failed)"
check "the timeout is prompt (took ${took} ms)" [ "$took" -ge 900 -a "$took" -lt 3000 ]
cronq wait "$f" --timeout 0s
expect "--timeout 0s looks once" 75 "$f failed" "cronq: error: timed out after 0s; still pending: $f (failed)"
c=$("$CRONQ" enqueue noop --in 1h)
"$CRONQ" wait "$c" >"$T_DIR/c.out" 2>"$T_DIR/c.err" &
waiter=$!
sleep 0.5
"$CRONQ" cancel "$c" >/dev/null
poll 10 gone $waiter || kill -KILL $waiter
wait $waiter
eq "cancelled while waited for: 1" "1|$c cancelled|" "$?|$(cat "$T_DIR/c.out")|$(cat "$T_DIR/c.err")"

# --- SIGTERM and SIGINT end it at once ----------------------------------------
# (a background job of a script ignores SIGINT: wait must not)
later=$("$CRONQ" enqueue noop --in 1h)
for sig in TERM INT; do
    "$CRONQ" wait "$later" >/dev/null 2>&1 &
    waiter=$!
    sleep 0.3
    start=$(date +%s%N)
    kill -$sig $waiter
    poll 3 gone $waiter || kill -KILL $waiter
    wait $waiter
    rc=$?
    took=$(( ($(date +%s%N) - start) / 1000000 ))
    check "SIG$sig ends the wait at once (rc $rc, ${took} ms)" [ "$rc" -ne 0 -a "$took" -lt 1000 ]
done

# --- a cronq_user sees only its own jobs --------------------------------------
mkrole wait_app
q "grant cronq_user to wait_app" >/dev/null
mine=$(PGUSER=wait_app "$CRONQ" enqueue noop)
run
OUT=$(PGUSER=wait_app "$CRONQ" wait "$mine" 2>"$T_DIR/stderr"); RC=$?; ERR=$(cat "$T_DIR/stderr")
expect "a user waits for its own job" 0 "$mine succeeded" ""
OUT=$(PGUSER=wait_app "$CRONQ" wait "$ok" 2>"$T_DIR/stderr"); RC=$?; ERR=$(cat "$T_DIR/stderr")
expect "another role's job does not exist for it" 65 "" "cronq: error: job $ok does not exist"

# --- from a script, while a runner drains in the background -------------------
"$CRONQ" run --exec-dir "$exec_dir" --linger 20s --poll 200ms >/dev/null 2>"$T_DIR/linger.err" &
runner=$!
cat >"$T_DIR/script.sh" <<SH
set -e
id=\$("$CRONQ" enqueue exec '{"command": "answer"}')
"$CRONQ" wait "\$id" --timeout 15s --json
SH
out=$(bash "$T_DIR/script.sh" 2>"$T_DIR/script.err"); rc=$?
match "script: enqueue, then wait for the result" '^\{"id":[0-9]+,"status":"succeeded","error_code":null,"last_error":null,"result":\{"ok": true\}\}$' "$out"
eq "script: exit 0, nothing on stderr" "0|" "$rc|$(cat "$T_DIR/script.err")"
id2=$("$CRONQ" enqueue fail '{"message": "nope", "permanent": true}')
cronq wait "$id2" --timeout 15s
expect "script: a job that goes dead meanwhile" 1 "$id2 dead" ""
kill -TERM $runner
wait $runner

done_testing
