#!/usr/bin/env bash
# run: silence, outcomes, retries with the documented backoff, dead after
# max_attempts, permanent failures, filters and limits, the wake record.
. "$(dirname "$0")/lib.sh"
migrate

cronq run
expect "empty queue: nothing printed, exit 0" 0 "" ""
eq "the wake is recorded" "1|0|0" "$(q "select count(*), max(jobs_run), max(exit_status) from cronq.wakes where finished_at is not null")"

# Success, with its history row.
id=$("$CRONQ" enqueue noop)
cronq run
expect "a good run is silent" 0 "" ""
eq "noop succeeded" "succeeded|1|||t" "$(q "select status, attempts, locked_by, locked_until, finished_at is not null from cronq.jobs where id = $id")"
eq "one job_runs row" "1|succeeded|1" "$(q "select count(*), max(outcome), max(attempt) from cronq.job_runs where job_id = $id")"

# A fail job with max_attempts 3: failed, failed, dead; 3 attempts, 3 rows,
# each retry waiting the documented backoff: uniform in [d/2, d] with
# d = min(1h, 10s * 2^(attempt-1)).
id=$("$CRONQ" enqueue fail '{"message": "boom", "code": "boom_code"}' --max-attempts 3)
prev_run_at=$(q "select extract(epoch from run_at) from cronq.jobs where id = $id")
for attempt in 1 2 3; do
    cronq run --seed 42
    eq "attempt $attempt quiet or warning only at death" 0 "$RC"
    row=$(q "select status, attempts, error_code, last_error from cronq.jobs where id = $id")
    if [ $attempt -lt 3 ]; then
        eq "attempt $attempt leaves the job failed" "failed|$attempt|boom_code|boom" "$row"
        lo=$(( 5000 * (1 << (attempt - 1)) )); hi=$(( 10000 * (1 << (attempt - 1)) ))
        delay=$(q "select round(extract(epoch from j.run_at - r.finished_at) * 1000) from cronq.jobs j join cronq.job_runs r on r.job_id = j.id and r.attempt = $attempt where j.id = $id")
        check "attempt $attempt backoff ${delay}ms within [$lo, $hi]ms" [ "$delay" -ge $((lo - 100)) -a "$delay" -le $((hi + 100)) ]
        run_at=$(q "select extract(epoch from run_at) from cronq.jobs where id = $id")
        check "retry $attempt is later than the previous run_at" awk "BEGIN { exit !($run_at > $prev_run_at) }"
        prev_run_at=$run_at
        q "update cronq.jobs set run_at = now() where id = $id"   # skip the wait
    else
        eq "attempt 3 leaves the job dead" "dead|3|boom_code|boom" "$row"
        match "going dead is worth a warning" "^cronq: warning: job $id \\(fail\\) is dead after attempt 3: \"boom\"" "$ERR"
    fi
done
eq "3 job_runs rows, all failed" "3|failed|1|3" "$(q "select count(*), max(outcome), min(attempt), max(attempt) from cronq.job_runs where job_id = $id")"
cronq run
eq "a dead job is not run again" "3" "$(q "select count(*) from cronq.job_runs where job_id = $id")"

# The jitter is real: ten jobs failing together wait ten different delays
# (run_at - updated_at: both written by the statement that records the
# outcome, at its now()), each in [d/2, d] of the first attempt.
q "delete from cronq.jobs where status <> 'dead'"
for i in $(seq 1 10); do "$CRONQ" enqueue fail >/dev/null; done
"$CRONQ" run --seed 11 2>/dev/null
eq "ten failed first attempts, ten distinct delays within [5, 10] s" "10|10|t" \
    "$(q "select count(*), count(distinct run_at - updated_at),
                 bool_and(run_at - updated_at between interval '5 s' and interval '10 s')
          from cronq.jobs where status = 'failed'")"
q "delete from cronq.jobs where status = 'failed'"

# The same seed gives the same jitter.
a=$("$CRONQ" enqueue fail); b=$("$CRONQ" enqueue fail)
q "update cronq.jobs set id = id + 1000000 where id in ($a, $b)" 2>/dev/null
"$CRONQ" run --seed 7 2>/dev/null
d1=$(q "select string_agg(round(extract(epoch from j.run_at - r.finished_at))::text, ',' order by j.id) from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id in ($a + 1000000, $b + 1000000)")
q "update cronq.jobs set status = 'queued', attempts = 0, run_at = now() where id in ($a + 1000000, $b + 1000000)"
q "delete from cronq.job_runs where job_id in ($a + 1000000, $b + 1000000)"
"$CRONQ" run --seed 7 2>/dev/null
d2=$(q "select string_agg(round(extract(epoch from j.run_at - r.finished_at))::text, ',' order by j.id) from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id in ($a + 1000000, $b + 1000000)")
eq "same seed, same delays" "$d1" "$d2"

# Permanent failure: dead at once.
id=$("$CRONQ" enqueue fail '{"permanent": true}')
"$CRONQ" run 2>/dev/null
eq "permanent failure is dead after one attempt" "dead|1" "$(q "select status, attempts from cronq.jobs where id = $id")"

# A job whose type is unknown to this runner (stored behind the trigger's back) goes dead.
q "alter table cronq.jobs disable trigger jobs_guard"
id=$(q "insert into cronq.jobs (type, payload, queue, priority, run_at, max_attempts, enqueued_by) values ('mystery', '{}', 'default', 0, now(), 5, current_user) returning id")
q "alter table cronq.jobs enable trigger jobs_guard"
"$CRONQ" run 2>/dev/null
eq "unknown task goes dead at once" "dead|unknown_task|unrecognized task type \"mystery\"" "$(q "select status, error_code, last_error from cronq.jobs where id = $id")"

# Priority order, filters and limits.
q "delete from cronq.jobs; delete from cronq.job_runs"
for p in 5 1 3; do "$CRONQ" enqueue noop --priority $p --queue a >/dev/null; done
"$CRONQ" enqueue noop --queue b >/dev/null
"$CRONQ" enqueue sleep '{"seconds": 0}' --queue a >/dev/null
"$CRONQ" run --max-jobs 1 --queue a --type noop
eq "max-jobs 1 runs the lowest priority value first" "1" "$(q "select string_agg(priority::text, ',') from cronq.jobs where status = 'succeeded'")"
"$CRONQ" run --queue a --type noop
eq "queue and type filters" "queued|queued" "$(q "select string_agg(status, '|' order by queue) from cronq.jobs where queue = 'b' or type = 'sleep'")"
CRONQ_QUEUE=b "$CRONQ" run
eq "CRONQ_QUEUE works like --queue" "queued|succeeded" "$(q "select string_agg(status, '|' order by queue) from cronq.jobs where queue = 'b' or type = 'sleep'")"
"$CRONQ" run --batch 1
eq "everything done" "0" "$(q "select count(*) from cronq.jobs where status <> 'succeeded'")"

# Flags win over the environment: CRONQ_QUEUE is not merged with --queue.
q "delete from cronq.jobs; delete from cronq.job_runs"
a=$("$CRONQ" enqueue noop --queue a); b=$("$CRONQ" enqueue noop --queue b); c=$("$CRONQ" enqueue noop --queue c)
CRONQ_QUEUE=a cronq run --queue b
expect "CRONQ_QUEUE with --queue: quiet" 0 "" ""
eq "--queue b wins over CRONQ_QUEUE=a" "queued|succeeded|queued" \
    "$(q "select string_agg(status, '|' order by queue) from cronq.jobs where id in ($a, $b, $c)")"
CRONQ_QUEUE=a,c cronq run
eq "CRONQ_QUEUE=a,c is a list for run" "succeeded|succeeded|succeeded" \
    "$(q "select string_agg(status, '|' order by queue) from cronq.jobs where id in ($a, $b, $c)")"

# --exclude-queue: jobs of that queue are never claimed; repeatable; it wins
# over --queue (a queue both given and excluded is excluded); the
# environment gives it as a list, and since it does not clash with --queue,
# CRONQ_EXCLUDE_QUEUE still applies when the command line picks queues.
by_queue() {
    q "select string_agg(queue || ':' || status || ':' || n, ' ' order by queue, status)
       from (select queue, status::text, count(*) n from cronq.jobs group by 1, 2) s"
}
three_queues() {
    q "delete from cronq.jobs; delete from cronq.job_runs"
    for qn in a b c; do for i in 1 2; do "$CRONQ" enqueue noop --queue $qn >/dev/null; done; done
}
three_queues
cronq run --exclude-queue b
expect "--exclude-queue b: quiet" 0 "" ""
eq "--exclude-queue b runs a and c, leaves b queued" "a:succeeded:2 b:queued:2 c:succeeded:2" "$(by_queue)"
eq "--exclude-queue b: b's jobs were never claimed" "0|0" \
    "$(q "select sum(attempts), (select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.queue = 'b') from cronq.jobs where queue = 'b'")"
three_queues
cronq run --exclude-queue a --exclude-queue c --batch 1 --concurrency 2
expect "--exclude-queue twice: quiet" 0 "" ""
eq "--exclude-queue a --exclude-queue c runs b alone" "a:queued:2 b:succeeded:2 c:queued:2" "$(by_queue)"
three_queues
cronq run --queue a --queue b --exclude-queue b
expect "--queue with --exclude-queue: quiet" 0 "" ""
eq "--queue a --queue b --exclude-queue b runs a alone" "a:succeeded:2 b:queued:2 c:queued:2" "$(by_queue)"
three_queues
CRONQ_EXCLUDE_QUEUE=a,c cronq run
eq "CRONQ_EXCLUDE_QUEUE=a,c is a list" "a:queued:2 b:succeeded:2 c:queued:2" "$(by_queue)"
three_queues
CRONQ_EXCLUDE_QUEUE=b cronq run --queue b --queue c
eq "CRONQ_EXCLUDE_QUEUE=b still applies with --queue b --queue c" "a:queued:2 b:queued:2 c:succeeded:2" "$(by_queue)"
three_queues
CRONQ_EXCLUDE_QUEUE=b cronq run --exclude-queue c
eq "--exclude-queue c wins over CRONQ_EXCLUDE_QUEUE=b" "a:succeeded:2 b:succeeded:2 c:queued:2" "$(by_queue)"

# The wake's probe applies the exclusion too: when only excluded jobs are
# due, the wake's first statement finds nothing to do and records the wake
# finished (finished_at = started_at: the same transaction), nothing claimed.
three_queues
q "delete from cronq.jobs where queue <> 'b'; delete from cronq.wakes"
cronq run --worker-id excl-wake --exclude-queue b
expect "only excluded jobs due: quiet, exit 0" 0 "" ""
eq "only excluded jobs due: an idle wake, finished by its first statement" "1|t|0|0" \
    "$(q "select count(*), bool_and(finished_at = started_at), max(exit_status), max(jobs_run) from cronq.wakes where worker = 'excl-wake'")"
eq "only excluded jobs due: still queued, no attempt" "b:queued:2:0" \
    "$(q "select string_agg(queue || ':' || status || ':' || n || ':' || a, ' ') from (select queue, status::text, count(*) n, sum(attempts) a from cronq.jobs where queue = 'b' group by 1, 2) s")"
cronq run --worker-id excl-wake2 --queue b --exclude-queue b
eq "--queue b --exclude-queue b: an idle wake too, b untouched" "1|t|0|b:queued:2" \
    "$(q "select count(*), bool_and(finished_at = started_at), max(jobs_run), (select string_agg(queue || ':' || status || ':' || n, ' ') from (select queue, status::text, count(*) n from cronq.jobs where queue = 'b' group by 1, 2) s) from cronq.wakes where worker = 'excl-wake2'")"
cronq run --worker-id excl-wake3 --exclude-queue a
eq "excluding another queue: b's jobs run, counted in the wake" "2|0|b:succeeded:2" \
    "$(q "select max(jobs_run), max(exit_status), (select string_agg(queue || ':' || status || ':' || n, ' ') from (select queue, status::text, count(*) n from cronq.jobs where queue = 'b' group by 1, 2) s) from cronq.wakes where worker = 'excl-wake3'")"

# An exec directory that is not a directory stops run before it claims anything.
q "delete from cronq.jobs; delete from cronq.job_runs"
id=$("$CRONQ" enqueue noop)
cronq run --exec-dir "$T_DIR/nonexistent"
expect "run --exec-dir missing: exit 78, one line" 78 "" "cronq: error: exec directory \"$T_DIR/nonexistent\" is not usable: No such file or directory"
: >"$T_DIR/a-file"
CRONQ_EXEC_DIR="$T_DIR/a-file" cronq run
expect "CRONQ_EXEC_DIR a file: exit 78, one line" 78 "" "cronq: error: exec directory \"$T_DIR/a-file\" is not usable: Not a directory"
eq "nothing claimed" "queued|0" "$(q "select status, attempts from cronq.jobs where id = $id")"
CRONQ_EXEC_DIR="$T_DIR/nonexistent" cronq run --exec-dir "$T_DIR"
expect "--exec-dir wins over CRONQ_EXEC_DIR" 0 "" ""
eq "then the job runs" succeeded "$(q "select status from cronq.jobs where id = $id")"

# Future jobs are not run.
id=$("$CRONQ" enqueue noop --in 1h)
"$CRONQ" run
eq "future job waits" "queued" "$(q "select status from cronq.jobs where id = $id")"

# --linger keeps polling: a job enqueued while it runs starts within a poll.
"$CRONQ" run --linger 3s --poll 200ms &
pid=$!
sleep 1
id=$("$CRONQ" enqueue noop)
check "lingering runner picks up a new job" wait_for "linger" 2 "select status = 'succeeded' from cronq.jobs where id = $id"
wait $pid
eq "lingering runner exits 0" 0 $?

# --max-runtime stops claiming.
q "delete from cronq.jobs"
for i in 1 2 3 4 5; do "$CRONQ" enqueue sleep '{"seconds": 0.4}' >/dev/null; done
"$CRONQ" run --batch 1 --max-runtime 500ms
n=$(q "select count(*) from cronq.jobs where status = 'succeeded'")
check "max-runtime 500ms runs 1 or 2 jobs of 400ms, not all ($n)" [ "$n" -ge 1 -a "$n" -le 2 ]
eq "nothing left running" 0 "$(q "select count(*) from cronq.jobs where status = 'running'")"

# --fail-on-error and --log-format json.
"$CRONQ" enqueue fail >/dev/null
cronq run --fail-on-error --log-format json --verbose --max-jobs 1 --type fail
eq "fail-on-error exits 1" 1 "$RC"
line=$(grep '"outcome"' <<<"$ERR" | head -n 1)
match "json log line has job fields" '"level":"info".*"job":[0-9]+,"type":"fail","queue":"default","attempt":1,"duration_ms":[0-9]+,"outcome":"failed","status":"failed"' "$line"

# Every line of --log-format json parses as JSON with the documented keys.
q "delete from cronq.jobs"
for i in 1 2 3; do "$CRONQ" enqueue noop >/dev/null; done
"$CRONQ" enqueue fail '{"message": "quote \" and \\ and\nnewline"}' --max-attempts 1 >/dev/null
"$CRONQ" run --log-format json --verbose 2>"$T_DIR/json.log"
lines=0; bad=0; jobs=0
while IFS= read -r l; do
    lines=$((lines + 1))
    # psql interpolates :'l' (quoted safely) only in input, not in -c.
    keys=$(echo "select string_agg(k, ',' order by k) from json_object_keys(:'l'::json) k" \
        | "$PSQL" -XAtq -v ON_ERROR_STOP=1 -v l="$l" 2>/dev/null) || { bad=$((bad + 1)); continue; }
    case ",$keys," in *,level,*msg,*time,*) ;; *) bad=$((bad + 1)); continue ;; esac
    case ",$keys," in *,job,*)
        jobs=$((jobs + 1))
        for k in type queue attempt duration_ms outcome status; do
            case ",$keys," in *",$k,"*) ;; *) bad=$((bad + 1)) ;; esac
        done ;;
    esac
done <"$T_DIR/json.log"
eq "json log: every line parses with time, level and msg" 0 "$bad"
eq "json log: one line per job outcome with its fields" 4 "$jobs"
check "json log: claims are logged too ($lines lines)" [ "$lines" -gt "$jobs" ]

# The wake's one statement: an idle wake is recorded finished at once; a
# wake that lingers is finished at its end; wakes are trimmed to the newest
# 10,000 (and at most 100 more) by the wake whose id is a multiple of 100.
q "delete from cronq.jobs; delete from cronq.wakes"
cronq run --worker-id idle-wake
eq "idle wake: one row, finished, exit 0, nothing run" "1|t|0|0" \
    "$(q "select count(*), bool_and(finished_at >= started_at), max(exit_status), max(jobs_run) from cronq.wakes where worker = 'idle-wake'")"
cronq run --worker-id linger-wake --linger 600ms --poll 100ms
eq "lingering wake: finished after its linger" "t|0" \
    "$(q "select finished_at - started_at >= interval '500 ms', exit_status from cronq.wakes where worker = 'linger-wake'")"
id=$("$CRONQ" enqueue noop)
cronq run --worker-id work-wake --queue elsewhere
eq "a wake filtered away from the due job leaves it queued, finished idle" "queued|1|0" \
    "$(q "select (select status from cronq.jobs where id = $id), count(*), max(exit_status) from cronq.wakes where worker = 'work-wake' and finished_at is not null")"
cronq run --worker-id work-wake2
eq "a wake with work records its jobs at its end" "succeeded|1|0" \
    "$(q "select (select status from cronq.jobs where id = $id), max(jobs_run), max(exit_status) from cronq.wakes where worker = 'work-wake2'")"
q "insert into cronq.wakes (id, worker, host, started_at, finished_at, exit_status) overriding system value
   select g, 'old', 'h', now() - interval '1 day', now() - interval '1 day', 0 from generate_series(100000, 110199) g"
q "select setval(pg_get_serial_sequence('cronq.wakes', 'id'), 110199)"
cronq run --worker-id trim-wake
eq "the wake with id 110200 trims the table to the newest 10,000" "110200|10000|100201" \
    "$(q "select max(id), count(*), min(id) from cronq.wakes where id >= 100000")"

# The wake's "any job due?" keeps to jobs_due when the statistics still
# count a drained backlog as due: a bare exists() took a sequential scan of
# the whole history then. Seen in the index's own scan count.
q "delete from cronq.jobs; alter table cronq.jobs set (autovacuum_enabled = false)"
q "insert into cronq.jobs (type, payload) select 'noop', '{}' from generate_series(1, 5000)"
q "analyze cronq.jobs"
q "update cronq.jobs set status = 'succeeded', finished_at = now()"
due_scans() { q "select idx_scan from pg_stat_user_indexes where indexrelid = 'cronq.jobs_due'::regclass"; }
before=$(due_scans)
cronq run --worker-id stale-wake
after=$(due_scans)
eq "stale statistics: the wake was idle" "0|t" \
    "$(q "select exit_status, finished_at is not null from cronq.wakes where worker = 'stale-wake'")"
check "stale statistics: the wake read jobs_due ($((after - before)) scans)" [ $((after - before)) -ge 1 ]
q "alter table cronq.jobs reset (autovacuum_enabled); delete from cronq.jobs"

# Outcomes: plain successes go by the short statement, a batch with a
# failure by the full one; both fenced, both with history. Job a's lease
# is taken while it sleeps (it runs first): its success is refused, kept
# as lease_lost, and b and c, claimed after it, still succeed.
q "delete from cronq.jobs; delete from cronq.job_runs"
a=$("$CRONQ" enqueue sleep '{"seconds": 0.8}' --priority 1); b=$("$CRONQ" enqueue noop --priority 2); c=$("$CRONQ" enqueue noop --priority 3)
"$CRONQ" run --worker-id plain-w --batch 3 2>"$T_DIR/plain.err" &
pid=$!
check "the sleep job started" wait_for "sleep" 5 "select started_at is not null from cronq.jobs where id = $a and status = 'running'"
q "update cronq.jobs set locked_by = 'thief', attempts = attempts + 1 where id = $a"
wait $pid
eq "plain success: taken job untouched, others succeeded" "running|thief|2;succeeded||1;succeeded||1" \
    "$(q "select string_agg(status || '|' || coalesce(locked_by, '') || '|' || attempts, ';' order by id) from cronq.jobs where id in ($a, $b, $c)")"
eq "plain success: history, the refused success as lease_lost" \
    "$a|lease_lost|lease lost: outcome succeeded not recorded;$b|succeeded|;$c|succeeded|" \
    "$(q "select string_agg(job_id || '|' || outcome || '|' || coalesce(error, ''), ';' order by job_id) from cronq.job_runs where job_id in ($a, $b, $c)")"
eq "plain success: times are the task's" "t" \
    "$(q "select bool_and(r.started_at = j.started_at and r.finished_at = j.finished_at and r.duration = j.finished_at - j.started_at) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.id in ($b, $c)")"
match "plain success: the refused outcome is logged" "job $a was taken over by another worker" "$(cat "$T_DIR/plain.err")"
q "delete from cronq.jobs; delete from cronq.job_runs"
a=$("$CRONQ" enqueue noop --priority 1); b=$("$CRONQ" enqueue fail '{"message": "no", "code": "nope"}' --priority 2 --max-attempts 2); c=$("$CRONQ" enqueue noop --priority 3)
cronq run --batch 3 --seed 7
eq "mixed batch: each outcome recorded" "succeeded|1|;failed|1|nope;succeeded|1|" \
    "$(q "select string_agg(status || '|' || attempts || '|' || coalesce(error_code, ''), ';' order by id) from cronq.jobs where id in ($a, $b, $c)")"
eq "mixed batch: one history row each" "succeeded|;failed|no;succeeded|" \
    "$(q "select string_agg(outcome || '|' || coalesce(error, ''), ';' order by job_id) from cronq.job_runs where job_id in ($a, $b, $c)")"


# The outcomes of one batch and the claim of the next are one transaction:
# when recording fails (here a trigger refuses job a's history row for
# want of resources: no one outcome's fault, which t_reliability covers),
# the next batch is not claimed either; a stays running for a rescue.
q "delete from cronq.jobs; delete from cronq.job_runs"
a=$("$CRONQ" enqueue noop --priority 1); b=$("$CRONQ" enqueue noop --priority 2)
q "create function pg_temp_refuse() returns trigger language plpgsql as \$\$ begin raise exception 'refused by test' using errcode = '53000'; end \$\$"
q "create trigger refuse before insert on cronq.job_runs for each row when (new.job_id = $a) execute function pg_temp_refuse()"
cronq run --batch 1
eq "recording failed: exit 70" 70 "$RC"
match "the error is named" "refused by test" "$ERR"
eq "nothing of the failed transaction stayed: a running, b never claimed" "running|1;queued|0" \
    "$(q "select string_agg(status || '|' || attempts, ';' order by id) from cronq.jobs where id in ($a, $b)")"
eq "no history row" 0 "$(q "select count(*) from cronq.job_runs where job_id in ($a, $b)")"
q "drop trigger refuse on cronq.job_runs; drop function pg_temp_refuse()"
q "update cronq.jobs set locked_until = now() - interval '1 second' where id = $a"
cronq run
eq "a rescued and run again, b run" "succeeded|2;succeeded|1" \
    "$(q "select string_agg(status || '|' || attempts, ';' order by id) from cronq.jobs where id in ($a, $b)")"


eq "wakes recorded for every run" t "$(q "select count(*) >= 10 from cronq.wakes")"
done_testing
