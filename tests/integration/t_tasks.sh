#!/usr/bin/env bash
# Tasks that do real work: sql (as the enqueuing role), exec (allow-listed
# programs), purge; heartbeats, timeouts and cancellation.
. "$(dirname "$0")/lib.sh"
migrate
status_of() { q "select status || '|' || coalesce(error_code, '') from cronq.jobs where id = $1"; }

# Heartbeat: lease 3 s, sleep 10 s, a second runner polling every second:
# never taken over, exactly one attempt.
id=$("$CRONQ" enqueue sleep '{"seconds": 10}')
"$CRONQ" run --lease 3s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
"$CRONQ" run --linger 9s --poll 1s --lease 3s 2>"$T_DIR/other.err"
wait $pid
eq "heartbeat keeps the job: one attempt, succeeded" "succeeded|1|1" \
    "$(q "select status, attempts, (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
eq "the other runner saw nothing to do" "" "$(cat "$T_DIR/other.err")"

# Timeouts: sleep, sql and exec, each stopped within timeout + grace and retried.
exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"
chmod 755 "$T_DIR" "$exec_dir"
cat >"$exec_dir/sleeper" <<'SH'
#!/bin/sh
echo "sleeping"
sleep 30
SH
cat >"$exec_dir/stubborn" <<'SH'
#!/bin/sh
# A child that ignores SIGTERM: only SIGKILL of the group stops it.
sh -c 'trap "" TERM; echo "child $$"; while :; do sleep 1; done' &
echo $! > "$OUT_DIR/stubborn.pid"
wait
SH
cat >"$exec_dir/tempfail" <<'SH'
#!/bin/sh
echo "try later" >&2
exit 75
SH
cat >"$exec_dir/three" <<'SH'
#!/bin/sh
exit 3
SH
cat >"$exec_dir/killed" <<'SH'
#!/bin/sh
kill -KILL $$
SH
cat >"$exec_dir/chatty" <<'SH'
#!/bin/sh
# 5 MB of output; the last line marks the end.
head -c 5000000 /dev/zero | tr '\0' 'x'
echo
echo "THE END"
SH
cat >"$exec_dir/env" <<'SH'
#!/bin/sh
echo "id=$CRONQ_JOB_ID attempt=$CRONQ_ATTEMPT key=$CRONQ_IDEMPOTENCY_KEY payload=$CRONQ_PAYLOAD colour=$COLOUR db=${CRONQ_DATABASE_URL:-none} args=$*"
SH
printf '#!/bin/sh\necho no\n' >"$exec_dir/noexec"
chmod 755 "$exec_dir"/sleeper "$exec_dir"/stubborn "$exec_dir"/tempfail "$exec_dir"/three "$exec_dir"/killed "$exec_dir"/chatty "$exec_dir"/env
chmod 644 "$exec_dir/noexec"
printf '#!/bin/sh\necho outside\n' >"$T_DIR/outside"; chmod 755 "$T_DIR/outside"
ln -sf "$T_DIR/outside" "$exec_dir/escape"

q "grant cronq_exec to postgres" 2>/dev/null
a=$("$CRONQ" enqueue sleep '{"seconds": 30}' --timeout 2s)
b=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(30)"}' --timeout 2s)
c=$("$CRONQ" enqueue exec '{"command": "sleeper"}' --timeout 2s)
start=$(date +%s)
"$CRONQ" run --exec-dir "$exec_dir" --kill-grace 1s --concurrency 3 --batch 1
took=$(( $(date +%s) - start ))
check "three 2 s timeouts stopped within timeout + grace (${took}s)" [ $took -le 5 ]
for id in $a $b $c; do
    eq "job $id timed out and waits for a retry" "failed|timeout" "$(status_of $id)"
    eq "job $id: its run is recorded as timeout" "timeout|timed out after 2s" "$(q "select outcome || '|' || error from cronq.job_runs where job_id = $id")"
    check "job $id: retried per backoff (5-10 s)" [ "$(q "select extract(epoch from run_at - now()) between 3 and 10 from cronq.jobs where id = $id")" = t ]
done

# SQL that commits though the timeout's cancel came (it catches it): its work
# is done, so the job is recorded succeeded, not retried to do it again.
q "create table swallowed (n int)"
for tx in true false; do
    id=$("$CRONQ" enqueue sql "{\"sql\": \"do \$\$ begin perform pg_sleep(3); exception when query_canceled then insert into swallowed values (1); end \$\$\", \"transaction\": $tx}" --timeout 1s)
    "$CRONQ" run 2>/dev/null
    eq "transaction $tx: committed after the timeout's cancel: succeeded, once" "succeeded|1|succeeded" \
        "$(q "select status, (select count(*) from swallowed), (select string_agg(outcome, ',') from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
    q "delete from swallowed"
done

# A child ignoring SIGTERM: after the timeout nothing of the job remains.
id=$("$CRONQ" enqueue exec "{\"command\": \"stubborn\", \"env\": {\"OUT_DIR\": \"$T_DIR\"}}" --timeout 1s)
"$CRONQ" run --exec-dir "$exec_dir" --kill-grace 1s
child=$(cat "$T_DIR/stubborn.pid")
gone() {  # dead: no such process, or a zombie waiting for its reaper
    for _ in $(seq 1 20); do
        [ -e "/proc/$1" ] || return 0
        [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
        sleep 0.1
    done
    return 1
}
check "the SIGTERM-ignoring child is gone (pid $child)" gone "$child"
eq "stubborn job timed out" "failed|timeout" "$(status_of $id)"

# Exit statuses and output.
t=$("$CRONQ" enqueue exec '{"command": "tempfail"}')
x=$("$CRONQ" enqueue exec '{"command": "three"}')
k=$("$CRONQ" enqueue exec '{"command": "killed"}')
o=$("$CRONQ" enqueue exec '{"command": "chatty"}')
e=$("$CRONQ" enqueue exec '{"command": "env", "args": ["a b", "c"], "env": {"COLOUR": "red"}}' --key env-job)
CRONQ_DATABASE_URL="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=postgres" "$CRONQ" run --exec-dir "$exec_dir" 2>"$T_DIR/exit.err"
eq "exec run: exit 0" 0 $?
eq "exit 75 is retryable" "failed|tempfail" "$(status_of $t)"
eq "exit 75 keeps stderr, apart from stdout" $'try later\n|' "$(q "select stderr || '|' || output from cronq.job_runs where job_id = $t order by id limit 1")"
eq "exit 3 fails for good" "dead|exit_status" "$(status_of $x)"
eq "killed by a signal: retryable, the signal named" "failed|signal|killed was killed by signal 9 (Killed)" "$(status_of $k)|$(q "select last_error from cronq.jobs where id = $k")"
eq "5 MB of output: the last 64 KiB kept" "65536|t" "$(q "select octet_length(output), output like '%THE END%' from cronq.job_runs where job_id = $o")"
eq "environment and arguments" "id=$e attempt=1 key=env-job payload={\"env\": {\"COLOUR\": \"red\"}, \"args\": [\"a b\", \"c\"], \"command\": \"env\"} colour=red db=none args=a b c" \
    "$(q "select output from cronq.job_runs where job_id = $e order by id limit 1" | tr -d '\n')"

# exec refusals: each before anything runs, the job dead with a clear message.
refuse() {  # DESC PAYLOAD EXPECTED-ERROR [RUN-ARGS…]
    local desc=$1 payload=$2 expected=$3; shift 3
    local id
    id=$("$CRONQ" enqueue exec "$payload")
    "$CRONQ" run "$@" 2>/dev/null
    eq "exec refused: $desc" "dead|$expected" "$(q "select status || '|' || last_error from cronq.jobs where id = $id")"
    eq "exec refused: $desc ran nothing" "" "$(q "select coalesce(output, '') from cronq.job_runs where job_id = $id")"
}
refuse "no directory configured" '{"command": "env"}' 'exec jobs are refused: no exec directory is configured (--exec-dir or CRONQ_EXEC_DIR)'
refuse "a symlink leading outside" '{"command": "escape"}' "program \"escape\" leads outside the exec directory $exec_dir" --exec-dir "$exec_dir"
refuse "a non-executable file" '{"command": "noexec"}' 'program "noexec" is not executable' --exec-dir "$exec_dir"
refuse "a missing program" '{"command": "nothere"}' "no program \"nothere\" in the exec directory $exec_dir" --exec-dir "$exec_dir"
CRONQ_EXEC_DIR="$exec_dir" "$CRONQ" enqueue exec '{"command": "env"}' >/dev/null && CRONQ_EXEC_DIR="$exec_dir" "$CRONQ" run
eq "CRONQ_EXEC_DIR works like --exec-dir" 0 "$(q "select count(*) from cronq.jobs where type = 'exec' and status = 'queued'")"
cronq enqueue exec '{"command": "../x"}'
expect "exec: ../x refused at enqueue" 65 "" 'cronq: error: invalid payload for task "exec": "command" must be a program name in the exec directory: letters, digits and _.+- with no "/"'
cronq enqueue exec '{"command": "/bin/sh"}'
expect "exec: an absolute path refused at enqueue" 65 "" 'cronq: error: invalid payload for task "exec": "command" must be a program name in the exec directory: letters, digits and _.+- with no "/"'
cronq enqueue exec '{"command": "env", "env": {"CRONQ_JOB_ID": "1"}}'
expect "exec: CRONQ_ variables are ours" 65 "" 'cronq: error: invalid payload for task "exec": "env" must map variable names (not CRONQ_*) to strings'

# Only members of cronq_exec may enqueue exec jobs; checked again before running.
mkrole tk_eve
q "revoke cronq_exec from tk_eve; grant cronq_user to tk_eve"
cronq enqueue exec '{"command": "env"}' --db "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=tk_eve"
expect "exec: a non-member of cronq_exec cannot enqueue" 78 "" 'cronq: error: role "tk_eve" may not enqueue exec jobs: it is not a member of cronq_exec'
q "grant cronq_exec to tk_eve"
id=$(PGUSER=tk_eve "$CRONQ" enqueue exec '{"command": "env"}')
q "revoke cronq_exec from tk_eve"
"$CRONQ" run --exec-dir "$exec_dir" 2>/dev/null
eq "exec: membership is checked again before running" "dead|permission_denied" "$(status_of $id)"

# sql runs as the role that enqueued it.
mkrole tk_alice tk_mallory
q "grant cronq_user to tk_alice; grant create on schema public to tk_alice"
q "grant cronq_user to tk_mallory"
q "create table secret (x int); create table guestbook (x int); grant select on guestbook to tk_mallory"
id=$(PGUSER=tk_alice "$CRONQ" enqueue sql '{"sql": "create table alices (x int); insert into alices values (1), (2)"}')
"$CRONQ" run
eq "sql as tk_alice succeeded" "succeeded|" "$(status_of $id)$(q "select coalesce(' ' || last_error, '') from cronq.jobs where id = $id and status <> 'succeeded'")"
eq "the table is tk_alice's" tk_alice "$(q "select tableowner from pg_tables where tablename = 'alices'")"
eq "rows affected are in the output" "rows: 2" "$(q "select output from cronq.job_runs where job_id = $id")"
id=$(PGUSER=tk_mallory "$CRONQ" enqueue sql '{"sql": "insert into guestbook values (1)"}')
"$CRONQ" run 2>/dev/null
eq "a role without INSERT cannot make a sql job write" "dead|permission_denied" "$(status_of $id)"
eq "nothing written" 0 "$(q "select count(*) from guestbook")"
id=$(PGUSER=tk_mallory "$CRONQ" enqueue sql '{"sql": "reset role; insert into secret values (1)"}')
"$CRONQ" run 2>/dev/null
eq "RESET ROLE inside a job does not climb back to the runner" "dead" "$(q "select status from cronq.jobs where id = $id")"
eq "the escape wrote nothing" 0 "$(q "select count(*) from secret")"
# A runner that cannot log in as the author is tried in t_security, where
# the server asks for passwords: under this suite's trust, anyone is anyone.

# "transaction": false runs statements that cannot run in a transaction block.
id=$("$CRONQ" enqueue sql '{"sql": "vacuum guestbook", "transaction": false}')
"$CRONQ" run
eq "vacuum with transaction false" "succeeded|" "$(status_of $id)"
id=$("$CRONQ" enqueue sql '{"sql": "vacuum guestbook"}')
"$CRONQ" run 2>/dev/null
match "vacuum inside a transaction fails" "^(failed|dead)\\|" "$(status_of $id)"
# ... and as its author too, like any sql job: what it creates is the
# author's, and what the author may not do, it cannot do this way either.
id=$(PGUSER=tk_alice "$CRONQ" enqueue sql '{"sql": "create table alices_nt (x int)", "transaction": false}')
"$CRONQ" run
eq "transaction false, by tk_alice: succeeded" "succeeded|" "$(status_of $id)"
eq "transaction false: the table is tk_alice's" tk_alice "$(q "select tableowner from pg_tables where tablename = 'alices_nt'")"
id=$(PGUSER=tk_mallory "$CRONQ" enqueue sql '{"sql": "insert into secret values (1)", "transaction": false}')
"$CRONQ" run 2>/dev/null
eq "transaction false: a role without INSERT cannot write" "dead|permission_denied" "$(status_of $id)"
eq "transaction false: nothing written" 0 "$(q "select count(*) from secret")"

# cancel: queued at once; running within two heartbeats, ending cancelled.
q1=$("$CRONQ" enqueue noop --in 1h)
cronq cancel $q1 -v
expect_told "cancel a queued job" 0 "$q1 cancelled" ""
cronq cancel $q1
expect "cancel it again" 0 "" "cronq: warning: job $q1 has already finished; not cancelled"
cronq cancel 999999
expect "cancel a missing job" 65 "" 'cronq: error: job 999999 does not exist; nothing cancelled'
q3=$("$CRONQ" enqueue noop --in 1h)
cronq cancel $q3 999999
eq "cancel of a queued job and a missing id: all or nothing, the job left queued" "65||queued" \
    "$RC|$OUT|$(q "select status from cronq.jobs where id = $q3")"
cronq cancel abc
expect "cancel a bad id" 64 "" 'cronq: error: invalid value "abc" for job id: must be an integer from 1 to 9223372036854775807'
q "delete from cronq.jobs where status in ('queued', 'failed')"
id=$("$CRONQ" enqueue sleep '{"seconds": 60}')
"$CRONQ" run --lease 3s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
start=$(date +%s%N)
cronq cancel $id -v
eq "cancel of a running job is a request" "$id cancelling: running; its worker stops it at its next heartbeat" "$(told)"
wait $pid
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "stopped within two heartbeat intervals (${ms} ms <= 2000 ms + slack)" [ $ms -le 2600 ]
eq "running job ends cancelled" "cancelled|cancelled|1" "$(q "select j.status, r.outcome, count(*) over () from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $id")"

# purge: old terminal rows go, in batches, while 2 runners drain new jobs.
q "delete from cronq.jobs; delete from cronq.job_runs"
q "alter table cronq.jobs disable trigger jobs_guard"
q "insert into cronq.jobs (type, payload, queue, priority, run_at, max_attempts, enqueued_by, status, attempts, finished_at)
   select 'noop', '{}', 'default', 0, now() - interval '40 days', 10, 'postgres', (array['succeeded', 'dead', 'cancelled'])[1 + i % 3], 1, now() - interval '40 days'
   from generate_series(1, 200000) i"
q "insert into cronq.job_runs (job_id, attempt, outcome, finished_at) select id, 1, 'succeeded', finished_at from cronq.jobs"
q "alter table cronq.jobs enable trigger jobs_guard"
recent=$(q "insert into cronq.jobs (type, payload, queue, priority, run_at, max_attempts, enqueued_by, status, attempts, finished_at) values ('noop', '{}', 'default', 0, now(), 10, 'postgres', 'succeeded', 1, now()) returning id")
seq 1 20000 | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl
id=$("$CRONQ" enqueue purge '{"older_than": "30d", "statuses": ["succeeded", "dead", "cancelled"]}' --priority -1)
# Claim latency while the purge runs: each claim statement of the drain is timed by the server.
q "alter system set log_min_duration_statement = 1000" >/dev/null; q "select pg_reload_conf()" >/dev/null
q "select pg_sleep(1.05) /* slow-probe */" >/dev/null
check "the slow-statement log works (probe found)" grep -q 'duration: .*slow-probe' "$PGHOST/server.log"
"$CRONQ" run --batch 100 --type purge &
p1=$!
"$CRONQ" run --batch 100 --type noop --verbose 2>"$T_DIR/d1.err" &
p2=$!
"$CRONQ" run --batch 100 --type noop 2>"$T_DIR/d2.err" &
p3=$!
wait $p1 $p2 $p3
q "alter system reset log_min_duration_statement" >/dev/null; q "select pg_reload_conf()" >/dev/null
eq "purge succeeded" "succeeded|deleted 200000 jobs" "$(q "select j.status || '|' || r.output from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $id")"
eq "every old row is gone, recent ones stay" "0|1" "$(q "select count(*) filter (where finished_at < now() - interval '30 days'), count(*) filter (where id = $recent) from cronq.jobs")"
eq "their runs are gone too" 0 "$(q "select count(*) from cronq.job_runs r where not exists (select 1 from cronq.jobs j where j.id = r.job_id)")"
eq "the drain finished meanwhile" 20000 "$(q "select count(*) from cronq.jobs j where type = 'noop' and status = 'succeeded' and exists (select 1 from cronq.job_runs r where r.job_id = j.id)")"
slow=$(grep -c 'duration: .* due as (' "$PGHOST/server.log" 2>/dev/null || true)
eq "no claim statement took 1 s or more while purging" 0 "${slow:-0}"
eq "runners were silent" "" "$(cat "$T_DIR/d2.err")"

# purge payloads are checked like any other.
cronq enqueue purge '{"older_than": "soon"}'
expect "purge: bad duration" 65 "" 'cronq: error: invalid payload for task "purge": "older_than" must be a duration such as "30d" or "12h"'
cronq enqueue purge '{"older_than": "1d", "statuses": ["queued"]}'
expect "purge: only terminal statuses" 65 "" 'cronq: error: invalid payload for task "purge": "statuses" must be a non-empty list of succeeded, dead and cancelled'
cronq enqueue purge '{"older_than": "1d"}' --db "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=tk_alice"
expect "purge: only cronq's own role or an admin may enqueue it" 78 "" 'cronq: error: role "tk_alice" may not enqueue purge jobs: only the owner of cronq.jobs or a member of cronq_admin may'
eq "migrate installed the daily purge schedule" "17 3 * * *|purge|{\"older_than\": {\"dead\": \"90d\", \"cancelled\": \"14d\", \"succeeded\": \"14d\"}}" \
    "$(q "select cron || '|' || type || '|' || payload from cronq.schedules where name = 'cronq-purge'")"

done_testing
