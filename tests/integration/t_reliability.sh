#!/usr/bin/env bash
# Never lose a job: concurrent runners, kill -9 and lease rescue, SIGTERM
# and give-back, fencing against a worker whose lease was taken over.
. "$(dirname "$0")/lib.sh"
migrate

# An exec program that says when it started (its pid in a file), sleeps,
# then leaves a file behind: a job whose progress the tests can see.
#   mark DIR SECONDS [EXIT]
exec_dir="$T_DIR/bin"; marks="$T_DIR/marks"
mkdir -p "$exec_dir" "$marks"
chmod 755 "$T_DIR" "$exec_dir"; chmod 777 "$marks"
cat >"$exec_dir/mark" <<'SH'
#!/bin/sh
echo $$ >"$1/started.$CRONQ_JOB_ID.$CRONQ_ATTEMPT"
sleep "$2"
touch "$1/done.$CRONQ_JOB_ID.$CRONQ_ATTEMPT"
exit "${3:-0}"
SH
# stop PIDFILE: SIGTERM to the runner whose pid is in the file.
cat >"$exec_dir/stop" <<'SH'
#!/bin/sh
while [ ! -s "$1" ]; do sleep 0.01; done
kill -TERM "$(cat "$1")"
SH
chmod 755 "$exec_dir/mark" "$exec_dir/stop"
q "grant cronq_exec to postgres" 2>/dev/null
mark_job() {  # mark_job SECONDS [EXIT [ENQUEUE-OPTION…]]: enqueue one; prints its id
    local secs=$1 code=${2:-0}
    shift $(( $# < 2 ? $# : 2 ))
    "$CRONQ" enqueue exec "{\"command\": \"mark\", \"args\": [\"$marks\", \"$secs\", \"$code\"]}" "$@"
}
wait_file() { poll "$2" test -s "$1"; }  # wait_file PATH SECONDS
gone() { ! kill -0 "$1" 2>/dev/null; }

# 4 concurrent runners drain 10,000 noop jobs.
seq 1 10000 | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl
for i in 1 2 3 4; do "$CRONQ" run --batch 100 >"$T_DIR/r$i.out" 2>&1 & done
wait
eq "4 runners: every job succeeded" "10000|10000" "$(q "select count(*), count(*) filter (where status = 'succeeded' and attempts = 1) from cronq.jobs")"
eq "4 runners: exactly one job_runs row per job" "10000|10000|1" "$(q "select count(*), count(distinct job_id), max(attempt) from cronq.job_runs")"
eq "4 runners: nothing queued or running" 0 "$(q "select count(*) from cronq.jobs where status in ('queued', 'running')")"
eq "4 runners: silent" "" "$(cat "$T_DIR"/r*.out)"
check "4 runners: the work was shared" [ "$(q "select count(distinct worker) from cronq.job_runs")" -ge 2 ]
"$CRONQ" run --concurrency 3 --max-jobs 1 >/dev/null
eq "concurrency with nothing due is fine" 0 $?

# --concurrency: threads each with a connection.
q "delete from cronq.jobs; delete from cronq.job_runs"
seq 1 2000 | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl
"$CRONQ" run --concurrency 4 --batch 50
eq "concurrency 4: all succeeded once" "2000|2000" "$(q "select count(*) filter (where status = 'succeeded'), (select count(*) from cronq.job_runs) from cronq.jobs")"
eq "concurrency 4: workers named /1../4" 4 "$(q "select count(distinct worker) from cronq.job_runs where worker ~ '/[1-4]$'")"

# kill -9 during a sleep job: after the lease expires the next run rescues
# it (a lease_expired attempt) and completes it.
q "delete from cronq.jobs; delete from cronq.job_runs"
# (A lease of 4 s: a second run started under valgrind on a busy machine
# took longer than 2 s to look.)
id=$("$CRONQ" enqueue sleep '{"seconds": 1}')
"$CRONQ" run --lease 4s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
kill -9 $pid; wait $pid 2>/dev/null
cronq run --lease 2s
eq "before the lease expires, the job is left alone" "0|running|0" \
    "$RC|$(q "select status || '|' || (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
poll 10 is_true "select locked_until < now() from cronq.jobs where id = $id"
cronq run
eq "rescued and completed" "succeeded|2" "$(q "select status, attempts from cronq.jobs where id = $id")"
eq "the lost attempt is recorded as lease_expired" "1|lease_expired|lease_expired;2|succeeded|" \
    "$(q "select string_agg(attempt || '|' || outcome || '|' || coalesce(error_code, ''), ';' order by attempt) from cronq.job_runs where job_id = $id")"

# Rescue of a job out of attempts: dead.
id=$("$CRONQ" enqueue sleep '{"seconds": 5}' --max-attempts 1)
"$CRONQ" run --lease 1s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
kill -9 $pid; wait $pid 2>/dev/null
sleep 1.2
"$CRONQ" run 2>"$T_DIR/err"
eq "rescued job out of attempts is dead" "dead|lease_expired" "$(q "select status, error_code from cronq.jobs where id = $id")"

# SIGTERM during a long job: given back after the grace period, attempt not counted.
id=$("$CRONQ" enqueue sleep '{"seconds": 30}')
"$CRONQ" run --grace 1s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
start=$(date +%s%N)
kill -TERM $pid; wait $pid
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
eq "SIGTERM: exit 0" 0 $rc
check "SIGTERM: exits after the grace period, not the job (${ms}ms)" [ $ms -ge 900 -a $ms -lt 5000 ]
eq "SIGTERM: job given back, attempt not counted" "queued|0||" "$(q "select status, attempts, locked_by, locked_until from cronq.jobs where id = $id")"
eq "SIGTERM: given_back recorded" "given_back" "$(q "select outcome from cronq.job_runs where job_id = $id")"

# SIGTERM with a short job: it finishes within the grace period.
q "delete from cronq.jobs where id = $id"
id=$("$CRONQ" enqueue sleep '{"seconds": 1}')
"$CRONQ" run --grace 5s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
kill -INT $pid; wait $pid
eq "SIGINT: a job that ends within the grace period succeeds" "succeeded|1" "$(q "select status, attempts from cronq.jobs where id = $id")"

# SIGTERM with unstarted jobs in the batch: they are given back too. Three
# noops first: a worker's claims grow (1, then 8) while jobs are quick, so
# the second claim takes the three jobs below with two noops; the first of
# them sends SIGTERM to the runner and ends, before the other two started.
q "delete from cronq.jobs; delete from cronq.job_runs"
for i in 1 2 3; do "$CRONQ" enqueue noop >/dev/null; done
"$CRONQ" enqueue exec "{\"command\": \"stop\", \"args\": [\"$T_DIR/runner.pid\"]}" --priority 1 >/dev/null
for i in 1 2; do "$CRONQ" enqueue sleep '{"seconds": 10}' --priority 2 >/dev/null; done
rm -f "$T_DIR/runner.pid"
"$CRONQ" run --grace 0s --exec-dir "$exec_dir" &
pid=$!
echo $pid >"$T_DIR/runner.pid"
wait $pid
eq "the exit after SIGTERM" 0 $?
eq "batch given back: the two unstarted queued, attempts not counted" "2|0|0" \
    "$(q "select count(*) filter (where status = 'queued'), max(attempts), count(*) filter (where status = 'running') from cronq.jobs where priority = 2")"

# Fencing: worker A is frozen (SIGSTOP) past its lease; worker B rescues
# and completes the job; when A wakes, it cannot overwrite B's outcome.
# A is frozen once its program has started (a claim alone is not a start:
# a job A never began leaves no attempt of A's in the history).
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$(mark_job 1.5)
"$CRONQ" run --lease 2s --worker-id worker-a --exec-dir "$exec_dir" 2>"$T_DIR/a.err" &
pid=$!
check "A runs the job" wait_file "$marks/started.$id.1" 10
kill -STOP $pid
sleep 2.3
"$CRONQ" run --worker-id worker-b --exec-dir "$exec_dir"
eq "B completed the job" "succeeded|2|worker-b" "$(q "select j.status, j.attempts, r.worker from cronq.jobs j join cronq.job_runs r on r.job_id = j.id and r.outcome = 'succeeded' where j.id = $id")"
kill -CONT $pid; wait $pid
eq "A's late outcome did not overwrite B's" "succeeded|2" "$(q "select status, attempts from cronq.jobs where id = $id")"
eq "A's refused outcome is in the history as lease_lost" "1|lease_expired|worker-a;1|lease_lost|worker-a;2|succeeded|worker-b" \
    "$(q "select string_agg(attempt || '|' || outcome || '|' || worker, ';' order by attempt, id) from cronq.job_runs where job_id = $id")"
match "A says so on stderr" "no longer held by this worker|taken over by another worker" "$(cat "$T_DIR/a.err")"

# Fencing at the statement level: an outcome for an attempt the worker no
# longer holds changes nothing.
id=$("$CRONQ" enqueue noop)
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'worker-c', locked_until = now() + interval '1 minute' where id = $id"
"$CRONQ" run --worker-id worker-c
eq "another worker's running job is not claimed" "running|worker-c" "$(q "select status, locked_by from cronq.jobs where id = $id")"

# A lease taken over while its job runs (another worker's claim, written
# here as SQL: the holder can be another worker at the same attempt, or a
# worker of the same name at a later attempt, after a retry reset the
# count). The old holder's heartbeat must not renew the new holder's
# lease, must notice, stop the program before it finishes, and say so.
# (A lease of 6 s, beats every 2 s, a program of 5 s: the first beat after
# the theft stops it. The worker's own count of its lease, which stops a
# job whose lease ran out unrenewed, would come only at 6 s: too late.)
far="2100-01-01 00:00:00+00"
steal() {  # steal ID ATTEMPT WORKER
    q "update cronq.jobs set attempts = $2, locked_by = '$3', locked_until = '$far' where id = $1"
}
holder() { q "select status || '|' || attempts || '|' || locked_by || '|' || (locked_until = '$far') from cronq.jobs where id = $1"; }
for how in "same attempt|1|thief" "a later attempt, same worker name|2|worker-a"; do
    IFS='|' read -r label attempt who <<<"$how"
    q "delete from cronq.jobs; delete from cronq.job_runs"
    id=$(mark_job 5)
    "$CRONQ" run --lease 6s --worker-id worker-a --exec-dir "$exec_dir" 2>"$T_DIR/a.err" &
    pid=$!
    check "$label: A started the program" wait_file "$marks/started.$id.1" 10
    steal "$id" "$attempt" "$who"
    wait $pid
    eq "$label: A's heartbeat left the new holder's lease alone" "running|$attempt|$who|true" "$(holder "$id")"
    check "$label: A stopped the program before it finished" [ ! -e "$marks/done.$id.1" ]
    check "$label: the program is gone" gone "$(cat "$marks/started.$id.1")"
    match "$label: A says it lost the job" "job $id is no longer held by this worker; stopping it" "$(cat "$T_DIR/a.err")"
    eq "$label: A's attempt is in the history as lease_lost" "1|lease_lost|worker-a" \
        "$(q "select string_agg(attempt || '|' || outcome || '|' || worker, ';') from cronq.job_runs where job_id = $id")"
done

# The fence of every outcome: the thief takes the row between two
# heartbeats (lease 60 s), so A's outcome (a success, a failure, a timeout,
# a give-back at shutdown) arrives before A knows. The thief's row stays
# the thief's.
fenced() {  # fenced LABEL ID OUTCOME
    eq "$1: the thief's row is untouched" "running|1|thief|true" "$(holder "$2")"
    eq "$1: A's outcome is in the history as refused" "lease_lost|lease lost: outcome $3 not recorded" \
        "$(q "select string_agg(outcome || '|' || error, ';') from cronq.job_runs where job_id = $2")"
}
# run_then_steal LABEL ID RUN-OPTION…: A runs job ID (its pid in $pid);
# once the program has started, the thief takes the row.
run_then_steal() {
    local label=$1 id=$2; shift 2
    "$CRONQ" run --lease 60s --worker-id worker-a --exec-dir "$exec_dir" "$@" 2>/dev/null &
    pid=$!
    check "$label: A started the program" wait_file "$marks/started.$id.1" 10
    steal "$id" 1 thief
}
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$(mark_job 2)
run_then_steal "succeeding job" "$id"
wait $pid
check "succeeding job: the program ran to its end" [ -e "$marks/done.$id.1" ]
fenced "succeeding job" "$id" succeeded

# (A plain success, no output, is recorded by a statement of its own.)
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sleep '{"seconds": 2}')
"$CRONQ" run --lease 60s --worker-id worker-a 2>"$T_DIR/plain-a.err" &
pid=$!
check "plain success: A claimed the job" wait_for "claimed" 10 "select locked_by = 'worker-a' from cronq.jobs where id = $id"
steal "$id" 1 thief
wait $pid
fenced "plain success" "$id" succeeded
match "plain success: A knows its outcome was not recorded" \
    "job $id was taken over by another worker; its outcome was not recorded" "$(cat "$T_DIR/plain-a.err")"

q "delete from cronq.jobs; delete from cronq.job_runs"
id=$(mark_job 2 3)
run_then_steal "failing job" "$id"
wait $pid
check "failing job: the program ran to its end (and failed)" [ -e "$marks/done.$id.1" ]
fenced "failing job" "$id" failed

q "delete from cronq.jobs; delete from cronq.job_runs"
id=$(mark_job 30 0 --timeout 2s)
run_then_steal "timing-out job" "$id" --kill-grace 1s
wait $pid
fenced "timing-out job" "$id" timeout

q "delete from cronq.jobs; delete from cronq.job_runs"
id=$(mark_job 30)
run_then_steal "given back at shutdown" "$id" --grace 0s --kill-grace 1s
kill -TERM $pid; wait $pid
fenced "given back at shutdown" "$id" given_back

# rescue_waits PREFIX ARGS…: a noop job left running by slow-worker, its
# lease expired (its id in id); a session (fed through fd 7, its pid in
# historian) holds the history table locked; cronq run ARGS… (its pid in
# pid) started, and waiting at the rescue's write.
rescue_waits() {
    local prefix=$1; shift
    q "delete from cronq.jobs; delete from cronq.job_runs"
    id=$("$CRONQ" enqueue noop)
    q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'slow-worker', locked_until = now() - interval '1 second' where id = $id"
    rm -f "$T_DIR/hist"; mkfifo "$T_DIR/hist"
    "$PSQL" -XAtq <"$T_DIR/hist" >/dev/null 2>&1 &
    historian=$!
    exec 7>"$T_DIR/hist"
    echo "begin; lock table cronq.job_runs in share mode;" >&7
    check "${prefix}the history is locked" wait_for "locked" 10 \
        "select count(*) = 1 from pg_stat_activity where state = 'idle in transaction' and datname = current_database()"
    "$CRONQ" run "$@" 2>"$T_DIR/r.err" 7>&- &
    pid=$!
    check "${prefix}the rescue's write waits" wait_for "waiting" 10 \
        "select count(*) = 1 from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()"
}

# The rescue is fenced too: a lease renewed between the rescue's look
# (expired) and its write is not rescued. A session holds a lock on the
# history table that the rescue's write waits for; meanwhile it renews the
# lease, then commits.
rescue_waits ""
echo "update cronq.jobs set locked_until = '$far' where id = $id; commit;" >&7
exec 7>&-
wait $historian
wait $pid
eq "a lease renewed under the rescue is kept" "running|1|slow-worker|true" "$(holder "$id")"
eq "and nothing is in its history" 0 "$(q "select count(*) from cronq.job_runs where job_id = $id")"

# And a job's row locked between the rescue's look and its write is
# skipped, not waited for: the run goes on at once (waiting would end it
# with its answer limit, the 6 s lease, or at the locker's commit, 12 s
# on); a later rescue takes the job. The bound leaves a loaded machine
# 4 s for what takes milliseconds.
rescue_waits "row locked mid-rescue: " --lease 6s
"$PSQL" -XAtq -c "begin" -c "select id from cronq.jobs where id = $id for update" -c "select pg_sleep(12)" \
    -c "commit" >/dev/null 2>&1 7>&- &
locker=$!
check "row locked mid-rescue: another session locks the job's row" wait_for "lock" 5 \
    "select exists ($(sleepers 12))"
t0=$(date +%s%N)
echo "commit;" >&7
exec 7>&-
wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait $historian
eq "row locked mid-rescue: the run ends 0" 0 $rc
check "row locked mid-rescue: without waiting for the row (${ms} ms)" [ "$ms" -lt 4000 ]
eq "row locked mid-rescue: the job is left as it was, for a later rescue" "running|1|slow-worker|false" "$(holder "$id")"
q "select pg_terminate_backend(pid) from ($(sleepers 12)) s" >/dev/null
wait $locker

# SKIP LOCKED: a row another session holds locked (a claim in progress
# elsewhere) neither blocks a claim nor is taken by it. The run ends while
# the lock is still held, having run every other job. The row is first in
# run order, so that both the worker's first claim (claim.sql) and the
# ones after it (claim_plain.sql, no flow control in effect) meet it.
q "delete from cronq.jobs; delete from cronq.job_runs"
held=$("$CRONQ" enqueue noop --priority -1)
for i in 1 2 3; do "$CRONQ" enqueue noop >/dev/null; done
"$PSQL" -XAtq -c "begin; select id from cronq.jobs where id = $held for update; select pg_sleep(60); commit" >/dev/null 2>&1 &
locker=$!
check "another session holds a job's row" wait_for "locked" 10 \
    "select count(*) = 1 from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()"
timeout -k 5 30 "$CRONQ" run
eq "a claim skips a row locked elsewhere: the others ran, it is left queued" "3|queued|0" \
    "$(q "select count(*) filter (where status = 'succeeded'), (select status || '|' || attempts from cronq.jobs where id = $held) from cronq.jobs")"
check "the run ended while the row was still locked (it never waited)" kill -0 $locker
q "select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()" >/dev/null
wait $locker

# A quick job's outcome is recorded while the next job of its batch runs,
# not after: kill -9 during the long job must not cost the quick one its
# success (it would run again, or go dead, after the lease expired).
q "delete from cronq.jobs; delete from cronq.job_runs"
quick=$("$CRONQ" enqueue noop --max-attempts 1)
slow=$("$CRONQ" enqueue sleep '{"seconds": 20}' --priority 1)
"$CRONQ" run --batch 2 --lease 3s &
pid=$!
check "the slow job is running" wait_for "slow running" 5 "select status = 'running' and started_at is not null from cronq.jobs where id = $slow"
check "the quick job is recorded while the slow one runs" wait_for "quick recorded" 3 \
    "select status = 'succeeded' from cronq.jobs where id = $quick"
kill -9 $pid; wait $pid 2>/dev/null
eq "after the crash, the quick job has its success and one run" "succeeded|1|succeeded" \
    "$(q "select status, (select count(*) from cronq.job_runs where job_id = $quick), (select string_agg(outcome, ',') from cronq.job_runs where job_id = $quick) from cronq.jobs where id = $quick")"
q "delete from cronq.jobs; delete from cronq.job_runs"

# An operator's cancel wins over the attempt's outcome even when the worker
# has not heard of it yet (its heartbeat comes every lease/3): a running job
# that then times out ends cancelled, not failed and due again.
id=$("$CRONQ" enqueue sleep '{"seconds": 30}' --timeout 2s)
"$CRONQ" run 2>"$T_DIR/c.err" &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
"$CRONQ" cancel "$id" >/dev/null
wait $pid
eq "cancelled while running, then timed out: cancelled" "cancelled|cancelled|t" \
    "$(q "select status, error_code, finished_at is not null from cronq.jobs where id = $id")"
eq "its history keeps the attempt's own outcome" "timeout" "$(q "select string_agg(outcome, ',') from cronq.job_runs where job_id = $id")"

# ... and given back at shutdown, it is not queued to run again.
id=$("$CRONQ" enqueue sleep '{"seconds": 30}')
"$CRONQ" run --grace 0s &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
"$CRONQ" cancel "$id" >/dev/null
kill -TERM $pid; wait $pid
eq "cancelled, then given back at shutdown: cancelled" "cancelled|0" "$(q "select status, attempts from cronq.jobs where id = $id")"

# A claimed job cancelled while an earlier job of its batch runs is not
# started: given back 250 ms after the claim, it ends cancelled (or, kept
# because the canceller still held its row then, as under valgrind, a
# heartbeat before its start finds the cancel). Warmed up by a noop (a
# claim of 1, then of 8), one claim takes the three jobs below: the first cancels the third (as an
# operator would, in its own committed transaction), the second is slow.
q "delete from cronq.jobs; delete from cronq.job_runs"
"$CRONQ" enqueue noop >/dev/null
later=$(mark_job 0 0 --priority 3)
"$CRONQ" enqueue sql "{\"sql\": \"select cronq.cancel($later)\"}" --priority 1 >/dev/null
slow=$("$CRONQ" enqueue sleep '{"seconds": 2}' --priority 2)
cronq run --exec-dir "$exec_dir"
eq "the run: exit 0, silent" "0||" "$RC|$OUT|$ERR"
eq "the cancelled job of the batch: cancelled" "cancelled|cancelled" \
    "$(q "select status, error_code from cronq.jobs where id = $later")"
check "the cancelled job of the batch did not run" [ -z "$(ls "$marks" | grep "started.$later\.")" ]
eq "the slow job succeeded" "succeeded" "$(q "select status from cronq.jobs where id = $slow")"

# --max-runtime: the wake ends near it, after the job it had started; the
# jobs not started stay queued, their attempt not counted (a worker holds
# one slow job at a time: fair sharing).
q "delete from cronq.jobs; delete from cronq.job_runs"
for i in 1 2 3 4 5; do "$CRONQ" enqueue sleep '{"seconds": 1}' >/dev/null; done
start=$(date +%s%N)
cronq run --batch 5 --max-runtime 2s
ms=$(( ($(date +%s%N) - start) / 1000000 ))
eq "--max-runtime: exit 0, silent" "0||" "$RC|$OUT|$ERR"
check "--max-runtime 2s: the wake ends after the job it had started, not five jobs later (${ms}ms)" [ $ms -lt 4500 ]
row=$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'queued'), coalesce(max(attempts) filter (where status = 'queued'), -1), (select count(*) from cronq.job_runs where outcome = 'given_back'), count(*) filter (where status = 'running') from cronq.jobs")
IFS='|' read -r ran back back_attempts back_runs running <<<"$row"
check "--max-runtime: some ran, the rest queued, never started ($row)" \
    [ "$ran" -ge 1 -a "$back" -ge 2 -a $((ran + back)) -eq 5 -a "$back_attempts" -eq 0 -a "$back_runs" -eq 0 -a "$running" -eq 0 ]

# A dropped connection mid-job (its backend terminated): the worker opens a
# new one at its next heartbeat, says so, and the job runs on to success on
# its one attempt; the wake ends normally.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sleep '{"seconds": 3}' --max-attempts 1)
"$CRONQ" run --lease 3s 2>"$T_DIR/d.err" &
pid=$!
check "job is running" wait_for "running" 5 "select status = 'running' from cronq.jobs where id = $id"
eq "the runner's backend is terminated" 1 \
    "$(q "select count(*) from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'cronq' and pid <> pg_backend_pid()) t")"
wait $pid
eq "connection dropped mid-job: exit 0" 0 $?
eq "the job succeeded on its one attempt" "succeeded|1|succeeded" \
    "$(q "select status, attempts, (select string_agg(outcome, ',') from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
match "the reconnection is logged" "warning: .*connection to the database was lost.*reconnected" "$(cat "$T_DIR/d.err")"
eq "the wake is closed" "0" "$(q "select exit_status from cronq.wakes order by id desc limit 1")"

# The server ends every session while a sql job runs (as a restart or a
# failover does; here the runner's backends first, then the author's): no
# fault of the job's. The worker reconnects, gives the job back, its
# attempt not counted, and runs it again: one attempt, which succeeds.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(2)"}' --max-attempts 1)
"$CRONQ" run --lease 3s 2>"$T_DIR/s.err" &
pid=$!
check "sql job is running" wait_for "running" 5 "select count(*) = 1 from pg_stat_activity where query = 'select pg_sleep(2)' and state = 'active'"
eq "the runner's backends and then the job's are terminated" "t" "$(q "select bool_and(t) and count(*) >= 2 from (select pg_terminate_backend(pid) t
    from (select pid from pg_stat_activity where application_name = 'cronq' and pid <> pg_backend_pid() order by query = 'select pg_sleep(2)') o) x")"
wait $pid
rc=$?
eq "sessions ended mid-sql-job: exit 0" 0 $rc
eq "the job was given back, then succeeded on its one attempt" "succeeded|1|given_back,succeeded" \
    "$(q "select status, attempts, (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
match "the give-back says why" "the server ended the job's session and the runner's" \
    "$(q "select error from cronq.job_runs where job_id = $id and outcome = 'given_back'")"

# The same for a purge, on the session the runner lends it: here its
# delete waits for a lock another session holds on a run of the job it
# deletes when the server ends every session. Given back, not counted;
# run again, it deletes the job once the lock is gone.
q "delete from cronq.jobs; delete from cronq.job_runs"
old=$("$CRONQ" enqueue noop)
cronq run
eq "a finished job to purge" "succeeded" "$(q "select status from cronq.jobs where id = $old")"
PGAPPNAME=holder q "begin; select from cronq.job_runs where job_id = $old for update; select pg_sleep(60); commit" >/dev/null 2>&1 &
holder=$!
id=$("$CRONQ" enqueue purge '{"older_than": "0s", "statuses": ["succeeded"]}' --max-attempts 1)
"$CRONQ" run --lease 3s 2>"$T_DIR/p.err" &
pid=$!
check "the purge waits for the lock" wait_for "waiting" 5 \
    "select count(*) = 1 from pg_stat_activity where application_name = 'cronq' and wait_event_type = 'Lock'"
eq "the runner's backends and then the purge's are terminated" "t" "$(q "select bool_and(t) and count(*) >= 2 from (select pg_terminate_backend(pid) t
    from (select pid from pg_stat_activity where application_name = 'cronq' and pid <> pg_backend_pid() order by wait_event_type = 'Lock') o) x")"
check "the purge is given back" wait_for "given back" 10 "select count(*) = 1 from cronq.job_runs where job_id = $id"
q "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'holder'" >/dev/null
wait $pid
rc=$?
wait $holder
eq "sessions ended mid-purge: exit 0" 0 $rc
eq "the purge was given back, then succeeded on its one attempt" "succeeded|1|given_back,succeeded" \
    "$(q "select status, attempts, (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
eq "the purged job and its run are gone" "0 0" \
    "$(q "select (select count(*) from cronq.jobs where id = $old) || ' ' || (select count(*) from cronq.job_runs where job_id = $old)")"

# The same every time it runs (a job that crashes the server, behind a
# pooler that accepts the runner's new connection at once): given back 3
# times in a row, then counted; with one attempt allowed, dead.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(2)"}' --max-attempts 1)
"$CRONQ" run --lease 3s 2>"$T_DIR/s4.err" &
pid=$!
for i in 1 2 3 4; do
    wait_for "sql job running ($i)" 10 "select count(*) = 1 from pg_stat_activity where query = 'select pg_sleep(2)' and state = 'active'" \
        || fail "sql job running ($i)"
    q "select count(*) from (select pg_terminate_backend(pid) from (select pid from pg_stat_activity
       where application_name = 'cronq' and pid <> pg_backend_pid() order by query = 'select pg_sleep(2)') o) x" >/dev/null
    wait_for "the loss recorded ($i)" 10 "select count(*) = $i from cronq.job_runs where job_id = $id" || fail "the loss recorded ($i)"
done
wait $pid
eq "sessions ended four times: given back three times, then counted (dead)" "dead|1|given_back,given_back,given_back,failed" \
    "$(q "select status, attempts, (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# A job whose SQL ends its own session fails like any other error (the
# runner's session outlived it): it goes dead on its one attempt, and the
# run goes on with the next job.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sql '{"sql": "select pg_terminate_backend(pg_backend_pid())"}' --max-attempts 1 --priority 1)
next=$("$CRONQ" enqueue noop)
cronq run --max-runtime 10s
eq "a job that ends its own session: the run exits 0" 0 "$RC"
eq "that job is dead on its one attempt, 57P01 (not given back); the next job ran" "dead|1|failed 57P01|succeeded" \
    "$(q "select j.status, j.attempts, (select string_agg(outcome || ' ' || coalesce(error_code, '-'), ',') from cronq.job_runs where job_id = $id), (select status from cronq.jobs where id = $next) from cronq.jobs j where id = $id")"

# An outcome whose statement fails (here triggers the test adds, standing
# for any fault in one job's data or row): the batch's other outcomes are
# recorded one by one. One that fails for what its job wrote is recorded
# without it, a note saying why; one that fails even so stays unrecorded,
# with a warning, and the rescue takes it once its lease expires. (The
# message is long and not ASCII: the note quoting it is cut between
# characters, not inside one.)
q "delete from cronq.jobs; delete from cronq.job_runs"
q "create function public.poison() returns trigger language plpgsql as \$\$
   begin raise exception 'poisoned %: %', tg_table_name, repeat('é', 300) using errcode = '22000'; end \$\$"
q "create trigger poison before update on cronq.jobs for each row
   when (old.status = 'running' and new.status <> 'running' and new.queue = 'poison') execute function public.poison()"
q "create trigger poison before insert on cronq.job_runs for each row
   when (new.output is not null and new.error_code is null) execute function public.poison()"
# (the slow job near the end: the outcomes before it are recorded while
# it runs, the way a batch's quick outcomes are; its own and p2's after
# it, with the next claim)
a=$("$CRONQ" enqueue noop); b=$("$CRONQ" enqueue noop)
p=$("$CRONQ" enqueue noop --queue poison)
o=$("$CRONQ" enqueue sql '{"sql": "select 1"}')
slow=$("$CRONQ" enqueue sleep '{"seconds": 1}' --priority 9)
p2=$("$CRONQ" enqueue noop --queue poison --priority 9)
"$CRONQ" run --batch 10 --lease 2s 2>"$T_DIR/p.err"
rc=$?
eq "a poisoned outcome: the run exits 0" 0 $rc
eq "the other jobs' outcomes are recorded, one history row each" "succeeded|1|succeeded|1|succeeded|1" \
    "$(q "select string_agg(status || '|' || (select count(*) from cronq.job_runs r where r.job_id = j.id), '|' order by id) from cronq.jobs j where id in ($a, $b, $slow)")"
eq "the job whose output its row refused: succeeded, recorded without it, saying why" "succeeded|||1" \
    "$(q "select j.status || '|' || coalesce(r.output, '') || '|' || coalesce(r.result::text, '') || '|' || (r.error like 'its outcome could not be recorded with what the job wrote: %poisoned job_runs%')::int from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $o")"
eq "the jobs whose row refuses any outcome (recorded while a job ran, and with a claim): still running, no history row" "running|0|running|0" \
    "$(q "select string_agg(status || '|' || (select count(*) from cronq.job_runs where job_id = j.id), '|' order by id) from cronq.jobs j where id in ($p, $p2)")"
match "... and a warning says so" "job $p's outcome \(succeeded\) could not be recorded: .*poisoned jobs: é+; the job runs again once its lease expires" "$(cat "$T_DIR/p.err")"
match "... for each" "job $p2's outcome \(succeeded\) could not be recorded" "$(cat "$T_DIR/p.err")"
q "drop trigger poison on cronq.jobs; drop trigger poison on cronq.job_runs; drop function public.poison()"
sleep 2.2
"$CRONQ" run --lease 2s 2>/dev/null
eq "once the fault is gone, the rescue takes them and they run again" "succeeded|lease_expired,succeeded|succeeded|lease_expired,succeeded" \
    "$(q "select string_agg(status || '|' || (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = j.id), '|' order by id) from cronq.jobs j where id in ($p, $p2)")"

# A job whose backend dies (here kill -9, as the kernel's OOM killer does)
# crashes the server, which restarts every session. Its lease (2 s) leaves
# no time to wait: the worker tries once. Still in recovery then, the run
# exits 75 and the rescue counts the attempt; already back, the job is
# given back, as for any restart (three times in a row at most, then
# counted: "sessions ended four times" above). Which one is the server's
# timing; either way the job runs again once, and nothing is lost.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(3)"}' --max-attempts 2)
"$CRONQ" run --lease 2s 2>"$T_DIR/k.err" &
pid=$!
check "the crashing job is running" wait_for "running" 5 "select count(*) = 1 from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active'"
kill -9 "$(q "select pid from pg_stat_activity where query = 'select pg_sleep(3)'")"
wait $pid
rc=$?
check "the server is back" poll 30 is_true "select true"
sleep 2.2
"$CRONQ" run --lease 2s 2>/dev/null
got="$rc|$(q "select status || '|' || attempts || '|' || (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
case $got in
75\|*) eq "a crash mid-sql-job met in recovery: exit 75, the rescue counted the attempt; it ran again" \
        "75|succeeded|2|lease_expired,succeeded" "$got" ;;
*) eq "a crash mid-sql-job met after recovery: exit 0, given back; it ran again on its one attempt" \
       "0|succeeded|1|given_back,succeeded" "$got" ;;
esac

done_testing
