#!/usr/bin/env bash
# Fair sharing: a worker never holds claimed jobs it cannot start soon.
# Slow jobs run in parallel on every idle worker whatever --batch says;
# jobs claimed behind a slow one are given back (no attempt counted, no
# history row) and `running` means started; what could not be given back
# is started only while still the worker's, and not once cancelled.
# Timing-sensitive: not run under valgrind.
. "$(dirname "$0")/lib.sh"
migrate
q "update cronq.schedules set enabled = false" >/dev/null

# Six 3-second jobs, three processes of two workers, the default --batch:
# each job on its own worker, all six at once.
for i in 1 2 3 4 5 6; do "$CRONQ" enqueue sleep '{"seconds": 3}' >/dev/null; done
start=$(date +%s%N)
pids=()
for p in 1 2 3; do "$CRONQ" run --concurrency 2 & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid"; done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
eq "six slow jobs: all succeeded at their first attempt" "6|6" \
    "$(q "select count(*) filter (where status = 'succeeded' and attempts = 1), count(*) from cronq.jobs")"
eq "six slow jobs: six workers, one job each" "6|6" \
    "$(q "select count(distinct worker), count(*) from cronq.job_runs")"
check "six slow jobs ran together: ${elapsed_ms} ms, under two jobs' time" [ "$elapsed_ms" -lt 6000 ]
eq "six slow jobs started within a second of each other" "t" \
    "$(q "select max(started_at) - min(started_at) < interval '1 second' from cronq.job_runs")"

# A batch meets a slow job: one worker (--concurrency 1, --batch 10)
# drains quick jobs, so its claims grow to 10; its last batch holds the
# last noop, a 0.15 s job and three 1.5 s jobs. 250 ms after that claim the
# jobs not started go back to the queue: queued, not running, while the
# first slow one runs; the running one's started_at is its task's start.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
for i in $(seq 1 40); do "$CRONQ" enqueue noop >/dev/null; done
"$CRONQ" enqueue --priority 1 sleep '{"seconds": 0.15}' >/dev/null
for i in 1 2 3; do "$CRONQ" enqueue --priority 2 sleep '{"seconds": 1.5}' >/dev/null; done
"$CRONQ" run --concurrency 1 --batch 10 --verbose 2>"$T_DIR/one.err" &
pid=$!
slow_states() {
    [ "$(q "select count(*) filter (where status = 'running') || '|' ||
                   count(*) filter (where status = 'queued') from cronq.jobs where priority = 2")" == "1|2" ]
}
check "the jobs behind the running slow one are queued, not running" poll 5 slow_states
running=$(q "select id || ' ' || started_at from cronq.jobs where priority = 2 and status = 'running'")
wait $pid
eq "the run succeeded" 0 $?
eq "every job succeeded at its first attempt" "44|44" \
    "$(q "select count(*) filter (where status = 'succeeded' and attempts = 1), count(*) from cronq.jobs")"
eq "one history row per job: giving back leaves none" "44|44" \
    "$(q "select count(*), count(*) filter (where outcome = 'succeeded') from cronq.job_runs")"
read -r rid rstart <<<"$running"
eq "a running job's started_at is its task's start" "$rstart" \
    "$(q "select started_at from cronq.job_runs where job_id = ${rid:-0}")"
match "the worker says it gave jobs back" "gave back [0-9]+ jobs? not started" "$(cat "$T_DIR/one.err")"
match "the run's summary counts them" "run finished: 44 jobs, 44 succeeded, 0 failed, [1-9][0-9]* given back" "$(cat "$T_DIR/one.err")"

# The give-back statement itself (lib/queue/release.sql, as a DBA would
# paste it): fenced like every outcome, so a row another worker took, or
# taken again at a later attempt, is left alone; a row another
# transaction holds locked is skipped, not waited for; the running job's
# started_at becomes its task's start.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
for i in 1 2 3 4 5; do "$CRONQ" enqueue noop >/dev/null; done
read -r j1 j2 j3 j4 j5 <<<"$(q "select string_agg(id::text, ' ' order by id) from cronq.jobs")"
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'me', locked_until = now() + interval '1 minute',
       started_at = now() where id in ($j1, $j3, $j4, $j5);
   update cronq.jobs set attempts = 2 where id = $j3;
   update cronq.jobs set status = 'running', attempts = 1, locked_by = 'thief', started_at = now() where id = $j2" >/dev/null
"$PSQL" -XAtq -c "begin" -c "select id from cronq.jobs where id = $j5 for update" -c "select pg_sleep(5)" -c "commit" \
    >/dev/null 2>&1 &
locker=$!
check "the other transaction holds its lock" wait_for "lock" 5 \
    "select exists (select from pg_locks l join pg_stat_activity a on a.pid = l.pid
                    where a.query like '%pg_sleep(5)%' and l.locktype = 'transactionid')"
start=$(date +%s%N)
out=$({ echo "prepare release as"; cat "$(dirname "$0")/../../lib/queue/release.sql"
        echo "execute release('me', '{$j1,$j2,$j3,$j5}', '{1,1,1,1}', $j4, 1, '2026-01-01 00:00:00+00', 150);"; } |
      "$PSQL" -XAtq -v ON_ERROR_STOP=1 2>&1)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
eq "release: the one job it may give back is given back" "$j1" "$out"
check "release: the locked row is skipped, not waited for (${ms} ms)" [ "$ms" -lt 3000 ]
eq "release: given back as if never claimed; another's, a later attempt's and a locked one untouched" \
    "queued|0||false;running|1|thief|true;running|2|me|true;running|1|me|2026-01-01 00:00:00.15+00;running|1|me|true" \
    "$(q "select string_agg(status || '|' || attempts || '|' || coalesce(locked_by, '') || '|' ||
            coalesce(case when id = $j4 then started_at::text else (started_at is not null)::text end, ''), ';' order by id)
          from cronq.jobs")"
wait $locker


# What the give-back could not give back. A sql job cancels a later job of
# its batch in its own transaction and runs on (1 s): the give-back skips
# the locked row and keeps it; when the sql job commits, the kept job is
# cancelled: a heartbeat before it starts says so, and it must not run.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
for i in 1 2 3 4 5 6 7; do "$CRONQ" enqueue noop >/dev/null; done
sib=$("$CRONQ" enqueue --priority 2 sleep '{"seconds": 0.1}')
"$CRONQ" enqueue --priority 1 sql "{\"sql\": \"select cronq.cancel($sib); select pg_sleep(1)\"}" >/dev/null
timeout 20 "$CRONQ" run --verbose 2>"$T_DIR/cancel.err"
eq "the run ends (no hang)" 0 $?
eq "a job cancelled (by a job of its batch) while kept after the give-back does not run" \
    "cancelled|0" "$(q "select status, (select count(*) from cronq.job_runs where job_id = $sib and outcome = 'succeeded') from cronq.jobs where id = $sib")"

# The give-back commits but its answer is lost (a proxy cuts the
# connection right after the server's ReadyForQuery); the worker reconnects
# and sends it again, which finds nothing to give back. Meanwhile an idle
# worker (B) claimed and ran the jobs. A must not run them too.
if ! command -v python3 >/dev/null; then fail "no python3 for the proxy"; done_testing; exit; fi
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
q "create table public.rv_log (tag text)" >/dev/null
# one noop: A's claims are 1, then 3 (--batch 3): the sleep and both sql jobs
"$CRONQ" enqueue noop >/dev/null
"$CRONQ" enqueue --priority 1 sleep '{"seconds": 2}' >/dev/null
for t in j1 j2; do "$CRONQ" enqueue --priority 2 sql "{\"sql\": \"insert into public.rv_log values ('$t')\"}" >/dev/null; done
# a port no server listens on (another lane's may be anywhere)
for _ in $(seq 1 50); do
    lp=$(( 20000 + RANDOM % 30000 ))
    ss -ltn | grep -q ":$lp " || break
done
python3 "$(dirname "$0")/proxy_cut_after.py" "$lp" "$PGPORT" >"$T_DIR/proxy.out" 2>&1 &
px=$!
poll 10 sh -c "ss -ltn | grep -q \"127.0.0.1:$lp \"" || fail "the proxy did not start"
"$CRONQ" run --verbose --batch 3 --db "host=127.0.0.1 port=$lp dbname=$PGDATABASE" 2>"$T_DIR/a.err" &
a=$!
# B starts once A holds both sql jobs (so that they are A's to give back)
check "A holds both" wait_for "A holds both" 5 "select count(*) = 2 from cronq.jobs where type = 'sql' and status = 'running'"
"$CRONQ" run --type sql --linger 4s --poll 100ms 2>"$T_DIR/b.err" &
b=$!
wait $a; wait $b; kill $px 2>/dev/null
match "the proxy cut the connection after the give-back committed" "cutting" "$(cat "$T_DIR/proxy.out")"
eq "each sql job ran once" "j1|1;j2|1" "$(q "select string_agg(tag || '|' || n, ';' order by tag) from (select tag, count(*) n from public.rv_log group by tag) s")"
eq "no job was run by a worker that no longer held it" "0" "$(q "select count(*) from cronq.job_runs where outcome = 'lease_lost'")"

done_testing
