#!/usr/bin/env bash
# History policies (issue 21): --history errors at enqueue (CLI, JSONL,
# SQL, a cronq_user's own jobs) and on a schedule (its jobs, a backfill
# of it): a succeeded attempt with no output leaves no job_runs row,
# through both outcome statements (record_plain.sql for a batch of plain
# successes, record.sql otherwise); a success with output and a failure
# keep their full row; the default keeps every row. --keep N on a
# schedule: cronq purge and the purge task keep its newest N finished
# jobs whatever their age, delete the rest of them whatever their age,
# never an unfinished one. Bad values are refused with nothing written.
. "$(dirname "$0")/lib.sh"
migrate
q "update cronq.schedules set enabled = false" >/dev/null

exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"
chmod 755 "$T_DIR" "$exec_dir"
printf '#!/bin/sh\nexit 0\n' >"$exec_dir/quiet"
printf '#!/bin/sh\necho "hello"\n' >"$exec_dir/talk"
chmod 755 "$exec_dir/quiet" "$exec_dir/talk"
run() { "$CRONQ" run --exec-dir "$exec_dir" "$@" >/dev/null 2>"$T_DIR/run.err" || fail "cronq run: $(cat "$T_DIR/run.err")"; }
jobs() { q "select count(*) from cronq.jobs"; }
# runs ID…: each job's status, history and number of job_runs rows.
runs() {
    local id out=()
    for id in "$@"; do
        out+=("$(q "select status || ':' || history || ':' || (select count(*) from cronq.job_runs r where r.job_id = j.id)
                    from cronq.jobs j where j.id = $id")")
    done
    (IFS=' '; echo "${out[*]}")
}

# --- help, and bad values: 64 for a flag's or variable's, 65 for data's, nothing written
cronq enqueue --help
match "enqueue --help names --history" "--history POLICY" "$OUT"
cronq schedule --help
match "schedule --help names --history and --keep" "--history POLICY.*--keep N" "$(tr '\n' ' ' <<<"$OUT")"
cronq enqueue noop --history some
expect "--history some" 64 "" 'cronq: error: invalid value "some" for --history: must be all or errors'
cronq enqueue noop --history ''
expect "--history empty" 64 "" 'cronq: error: invalid value "" for --history: must be all or errors'
CRONQ_HISTORY=never cronq enqueue noop
expect "CRONQ_HISTORY=never" 64 "" 'cronq: error: invalid value "never" for CRONQ_HISTORY: must be all or errors'
cronq_in '{"type": "noop"}
{"type": "noop", "history": "none"}' enqueue --jsonl
expect "--jsonl: a bad history names its line" 65 "" 'cronq: error: line 2: invalid history policy "none": must be all or errors'
cronq_in '{"type": "noop", "history": true}' enqueue --jsonl
expect "--jsonl: history must be a string" 65 "" 'cronq: error: line 1: "history" must be a string'
cronq_in '{"type": "noop"}' enqueue --jsonl --history errors
eq "--jsonl with --history: usage" 64 "$RC"
out=$(q "select cronq.enqueue('noop', history => 'nope')" 2>&1)
match "SQL enqueue refuses a bad policy" 'invalid history policy "nope": must be all or errors' "$out"
out=$(q "select * from cronq.enqueue_job('noop', history => 'Errors')" 2>&1)
match "SQL enqueue_job refuses a bad policy" 'invalid history policy "Errors"' "$out"
out=$(q "insert into cronq.jobs (type, history) values ('noop', 'some')" 2>&1)
match "the table refuses a bad policy" 'jobs_history_check' "$out"
cronq schedule add s1 '* * * * *' noop --history sometimes
expect "schedule add --history sometimes" 64 "" 'cronq: error: invalid value "sometimes" for --history: must be all or errors'
cronq schedule add s1 '* * * * *' noop --keep 0
expect "schedule add --keep 0" 64 "" 'cronq: error: invalid value "0" for --keep: must be an integer from 1 to 10000'
cronq schedule add s1 '* * * * *' noop --keep many
eq "schedule add --keep many: usage" 64 "$RC"
out=$(q "select cronq.schedule('s1', '* * * * *', 'noop', history => 'x')" 2>&1)
match "SQL schedule refuses a bad policy" 'invalid history policy "x"' "$out"
out=$(q "select cronq.schedule('s1', '* * * * *', 'noop', keep => 0)" 2>&1)
match "SQL schedule refuses keep 0" 'invalid keep 0: must be 1 to 10000' "$out"
out=$(q "insert into cronq.schedules (name, cron, type, keep) values ('s1', '* * * * *', 'noop', -1)" 2>&1)
match "the table refuses keep -1" 'schedules_keep_check' "$out"
eq "bad values wrote nothing" "0|1" "$(jobs)|$(q "select count(*) from cronq.schedules")"

# --- a batch of plain successes (record_plain.sql) ----------------------------
cronq enqueue noop --history errors; p1=$OUT
cronq enqueue noop --history errors; p2=$OUT
cronq enqueue noop --history all; p3=$OUT
cronq enqueue noop; p4=$OUT
eq "stored policies" "errors errors all all" \
    "$(q "select string_agg(history, ' ' order by id) from cronq.jobs where id in ($p1, $p2, $p3, $p4)")"
run --batch 10
eq "plain successes: errors leave no row, all one each" \
    "succeeded:errors:0 succeeded:errors:0 succeeded:all:1 succeeded:all:1" "$(runs "$p1" "$p2" "$p3" "$p4")"
cronq show "$p1" --json
eq "show --json carries the policy, and no attempt" "errors|0|succeeded" \
    "$(q "select (j->>'history') || '|' || json_array_length(j->'runs') || '|' || (j->>'status') from (select '$OUT'::json j) x")"
cronq show "$p1"
match "show prints it" "history +errors" "$OUT"

# --- every other outcome (record.sql) -------------------------------------------
cronq enqueue exec '{"command": "quiet"}' --history errors; e1=$OUT
cronq enqueue exec '{"command": "talk"}' --history errors; e2=$OUT
cronq enqueue fail '{"message": "boom"}' --history errors --max-attempts 2; e3=$OUT
cronq enqueue fail '{"message": "gone", "permanent": true}' --history errors; e4=$OUT
cronq enqueue noop --history errors; e5=$OUT
cronq enqueue exec '{"command": "quiet"}'; e6=$OUT
run --batch 10
eq "a quiet exec success leaves no row; output, failures and the default do" \
    "succeeded:errors:0 succeeded:errors:1 failed:errors:1 dead:errors:1 succeeded:errors:0 succeeded:all:1" \
    "$(runs "$e1" "$e2" "$e3" "$e4" "$e5" "$e6")"
eq "the success with output keeps it" "succeeded|hello" \
    "$(q "select outcome || '|' || output from cronq.job_runs where job_id = $e2")"
eq "the failures keep their full rows" "failed|boom|1;failed|gone|1" \
    "$(q "select string_agg(outcome || '|' || error || '|' || attempt, ';' order by job_id) from cronq.job_runs where job_id in ($e3, $e4)")"
# the retry of the failed job fails again: dead, a second row
q "update cronq.jobs set run_at = now() where id = $e3" >/dev/null
run
eq "its second failure has its row too" "dead:errors:2" "$(runs "$e3")"
# a lease that expired is a failure: recorded in full (rescue)
cronq enqueue noop --history errors; e7=$OUT
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'gone', locked_until = now() - interval '1 minute',
   started_at = now() - interval '2 minutes' where id = $e7" >/dev/null
run
eq "a lease expired: its row, then the quiet success none" "succeeded:errors:1" "$(runs "$e7")"
eq "the row is the lease's" "lease_expired" "$(q "select outcome from cronq.job_runs where job_id = $e7")"

# --- JSONL and SQL --------------------------------------------------------------
cronq_in '{"type": "noop", "history": "errors", "key": "j1"}
{"type": "fail", "payload": {"message": "jsonl"}, "history": "errors", "max_attempts": 1, "key": "j2"}
{"type": "noop", "history": "all", "key": "j3"}
{"type": "noop", "key": "j4"}' enqueue --jsonl
eq "--jsonl with history" 0 "$RC"
j=$(q "select string_agg(id::text, ' ' order by idempotency_key) from cronq.jobs where idempotency_key in ('j1', 'j2', 'j3', 'j4')")
run
# shellcheck disable=SC2086
eq "--jsonl: the policies applied" "succeeded:errors:0 dead:errors:1 succeeded:all:1 succeeded:all:1" "$(runs $j)"
s1=$(q "select cronq.enqueue('noop', history => 'errors')")
s2=$(q "select id from cronq.enqueue_job('noop', history => 'errors')")
s3=$(q "select cronq.enqueue('fail', '{\"message\": \"sql\"}', max_attempts => 1, history => 'errors')")
s4=$(q "select cronq.enqueue('noop')")
run
eq "SQL: the policies applied" "succeeded:errors:0 succeeded:errors:0 dead:errors:1 succeeded:all:1" \
    "$(runs "$s1" "$s2" "$s3" "$s4")"
# a cronq_user sets the policy of its own jobs, through SQL and --jsonl
# (its staged copy)
mkrole hist_app
q "grant cronq_user to hist_app" >/dev/null
u1=$(PGUSER=hist_app "$PSQL" -XAtq -c "select cronq.enqueue('noop', history => 'errors')" 2>&1)
printf '{"type": "noop", "history": "errors", "key": "u2"}\n' | PGUSER=hist_app "$CRONQ" enqueue --jsonl 2>"$T_DIR/u2.err"
eq "a cronq_user's --jsonl with history" "0|" "$?|$(cat "$T_DIR/u2.err")"
eq "a cronq_user's jobs carry its policy" "hist_app|errors;hist_app|errors" \
    "$(q "select string_agg(enqueued_by || '|' || history, ';' order by id) from cronq.jobs where id = '$u1' or idempotency_key = 'u2'")"
out=$(PGUSER=hist_app "$PSQL" -XAtq -c "update cronq.jobs set history = 'all' where id = $u1" 2>&1)
match "and cannot change it afterwards" "permission denied" "$out"

# --- schedules --------------------------------------------------------------------
cronq schedule add quiet-minute '* * * * *' noop --history errors --keep 3
eq "schedule add --history --keep" "0|errors|3" "$RC|$(q "select history || '|' || keep from cronq.schedules where name = 'quiet-minute'")"
cronq schedule show quiet-minute --json
eq "schedule show --json carries them" "errors|3" "$(q "select ('$OUT'::json->>'history') || '|' || ('$OUT'::json->>'keep')")"
cronq schedule list --json
eq "schedule list --json too" "all|" \
    "$(q "select string_agg((x->>'history') || '|' || coalesce(x->>'keep', ''), ';') from json_array_elements('$OUT'::json) x where x->>'name' = 'cronq-purge'")"
cronq schedule show quiet-minute
match "schedule show prints them" "history +errors.*keep +3" "$(tr '\n' ' ' <<<"$OUT")"
cronq schedule add quiet-minute '* * * * *' noop --replace
eq "--replace without them: the defaults" "all|" "$(q "select history || '|' || coalesce(keep::text, '') from cronq.schedules where name = 'quiet-minute'")"
cronq schedule add quiet-minute '* * * * *' noop --replace --history errors
q "update cronq.schedules set next_run_at = now() - interval '1 minute' where name = 'quiet-minute'" >/dev/null
run
eq "the schedule's job inherits errors and leaves no row" "succeeded:errors:0" \
    "$(runs "$(q "select max(id) from cronq.jobs where schedule = 'quiet-minute'")")"
cronq backfill --schedule quiet-minute --from 2020-01-01T00:00:00Z --to 2020-01-01T00:02:00Z
eq "backfill --schedule" 0 "$RC"
eq "its jobs inherit it" "3|errors" \
    "$(q "select count(*) || '|' || string_agg(distinct history, ',') from cronq.jobs where schedule = 'quiet-minute' and scheduled_for < '2021-01-01'")"
q "select cronq.schedule('sql-sched', '0 * * * *', 'noop', history => 'errors', keep => 5, enabled => false)" >/dev/null
eq "SQL schedule with history and keep" "errors|5" "$(q "select history || '|' || keep from cronq.schedules where name = 'sql-sched'")"
q "select cronq.schedule('sql-sched', '30 * * * *', 'noop')" >/dev/null
eq "replaced without them: kept" "errors|5" "$(q "select history || '|' || keep from cronq.schedules where name = 'sql-sched'")"
PGUSER=hist_app "$PSQL" -XAtq -c "select cronq.schedule('app-sched', '0 * * * *', 'noop', history => 'errors', keep => 2)" >/dev/null 2>&1
eq "a cronq_user's schedule with them" "hist_app|errors|2" \
    "$(q "select created_by || '|' || history || '|' || keep from cronq.schedules where name = 'app-sched'")"

# --- --keep: purge keeps the newest N finished, never an unfinished one ---------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
cronq schedule add keeper '0 0 * * *' noop --keep 3 --disabled
cronq schedule add ager '0 0 * * *' noop --disabled
# keeper: 6 old finished (100 to 95 days ago: dead and cancelled among
# them), 2 young (minutes), 3 unfinished and old; ager, without a keep:
# an old one and a young one. Each job with a job_runs row.
q "insert into cronq.jobs (type, schedule, status, finished_at, created_at)
   select 'noop', 'keeper', case i when 2 then 'dead' when 4 then 'cancelled' else 'succeeded' end,
          now() - (101 - i) * interval '1 day', now() - interval '200 days'
   from generate_series(1, 6) i;
   insert into cronq.jobs (type, schedule, status, finished_at)
   select 'noop', 'keeper', 'succeeded', now() - i * interval '1 minute' from generate_series(1, 2) i;
   insert into cronq.jobs (type, schedule, status, attempts, locked_by, locked_until, created_at, run_at)
   values ('noop', 'keeper', 'queued', 0, null, null, now() - interval '300 days', now() + interval '1 year'),
          ('noop', 'keeper', 'failed', 1, null, null, now() - interval '300 days', now() + interval '1 year'),
          ('noop', 'keeper', 'running', 1, 'elsewhere', now() + interval '1 hour', now() - interval '300 days', now() - interval '300 days');
   insert into cronq.jobs (type, schedule, status, finished_at)
   values ('noop', 'ager', 'succeeded', now() - interval '100 days'),
          ('noop', 'ager', 'succeeded', now() - interval '1 day');
   insert into cronq.job_runs (job_id, attempt, outcome) select id, 1, 'succeeded' from cronq.jobs" >/dev/null
newest3=$(q "select string_agg(id::text, ',' order by id) from (select id from cronq.jobs where schedule = 'keeper'
             and status in ('succeeded', 'dead', 'cancelled') order by finished_at desc limit 3) x")
unfinished=$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where status in ('queued', 'failed', 'running')")
# A job of that name in another role's name (a removed schedule of
# hist_app's, say), finished 10 days ago: the keep neither counts nor
# deletes it; the age rules do.
foreign=$(q "insert into cronq.jobs (type, schedule, status, finished_at, enqueued_by)
             values ('noop', 'keeper', 'succeeded', now() - interval '10 days', 'hist_app') returning id" | head -n 1)
q "insert into cronq.job_runs (job_id, attempt, outcome) values ($foreign, 1, 'succeeded')" >/dev/null
mine="schedule = 'keeper' and enqueued_by = 'postgres'"
# --status dead: only the dead one beyond the keep goes
cronq purge --status dead -v
eq "purge --status dead: the keep's dead job beyond 3, whatever its age" "0|purged 1 job|10" "$RC|$(told)|$(q "select count(*) from cronq.jobs where $mine")"
cronq purge -v
eq "cronq purge: the keep's 4 beyond, and the other schedule's old one" "0|purged 5 jobs" "$RC|$(told)"
eq "keeper: the newest 3 finished and every unfinished one are left" "$newest3|$unfinished" \
    "$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where $mine and status in ('succeeded', 'dead', 'cancelled')")|$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where $mine and status in ('queued', 'failed', 'running')")"
eq "another role's job of that name: the age rules, not the keep" "1|1" \
    "$(q "select count(*) || '|' || (select count(*) from cronq.job_runs where job_id = $foreign) from cronq.jobs where id = $foreign")"
eq "ager: the age rule, as before" "1" \
    "$(q "select count(*) from cronq.jobs where schedule = 'ager' and finished_at > now() - interval '2 days'")"
eq "the deleted jobs' runs went with them" "0" \
    "$(q "select count(*) from cronq.job_runs r where not exists (select 1 from cronq.jobs j where j.id = r.job_id)")"
cronq purge -v
eq "purge again: nothing more" "0|purged 0 jobs" "$RC|$(told)"

# The purge task (the cronq-purge schedule's payload): young jobs of the
# keep beyond the newest 3 go too.
q "insert into cronq.jobs (type, schedule, status, finished_at)
   select 'noop', 'keeper', 'succeeded', now() - i * interval '1 second' from generate_series(1, 2) i" >/dev/null
newest3=$(q "select string_agg(id::text, ',' order by id) from (select id from cronq.jobs where $mine
             and status in ('succeeded', 'dead', 'cancelled') order by finished_at desc limit 3) x")
cronq enqueue purge "$(q "select payload from cronq.schedules where name = 'cronq-purge'")"; task=$OUT
run
eq "the purge task ran" "succeeded|deleted 2 jobs" \
    "$(q "select j.status || '|' || r.output from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $task")"
eq "and kept the newest 3 finished and every unfinished one" "$newest3|$unfinished|1" \
    "$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where $mine and status in ('succeeded', 'dead', 'cancelled')")|$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where $mine and status in ('queued', 'failed', 'running')")|$(q "select count(*) from cronq.jobs where id = $foreign")"
# a schedule removed: its jobs fall back to the age rules
cronq purge --older-than 0s
eq "the keep holds against any age (the other role's job went by age)" "6|0" \
    "$(q "select count(*) from cronq.jobs where schedule = 'keeper'")|$(q "select count(*) from cronq.jobs where id = $foreign")"
cronq schedule remove keeper
cronq purge --older-than 0s
eq "keep removed: the age rule again, the unfinished left" "$unfinished" \
    "$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where schedule = 'keeper'")"

done_testing
