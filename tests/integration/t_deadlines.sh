#!/usr/bin/env bash
# Deadlines and unique keys (flow control): a job past its start deadline
# ends cancelled/expired with a job_runs row and never runs (an exec job
# that would leave a file leaves none), whether the wake's sweep or the
# claim meets it first; a schedule's --start-deadline expires missed
# occurrences, a backfill sets none. A unique key holds one active job:
# a second enqueue returns its id, --replace debounces a waiting one and
# leaves a running one alone, a finished one frees the key; 20 racing
# enqueues leave one row; another role can neither see nor replace the
# holder. Bad input is refused with nothing written.
. "$(dirname "$0")/lib.sh"

team_cluster app app2
q "grant cronq_user to app, app2; grant cronq_exec to cronq_runner" >/dev/null

as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
exec_dir="$T_DIR/bin"; marks="$T_DIR/marks"
mkdir -p "$exec_dir" "$marks"
chmod 755 "$T_DIR" "$exec_dir"; chmod 777 "$marks"
cat >"$exec_dir/mark" <<SH
#!/bin/sh
touch "$marks/\$1"
SH
chmod 755 "$exec_dir/mark"
run() { PGUSER=cronq_runner "$CRONQ" run --exec-dir "$exec_dir" "$@"; }
mark() { printf '{"command": "mark", "args": ["%s"]}' "$1"; }
jobs() { q "select count(*) from cronq.jobs"; }

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null

# --- bad input: usage 64, data 65, nothing written --------------------------
as cronq_runner enqueue noop --expires 0s
eq "--expires 0s: usage" 64 "$RC"
as cronq_runner enqueue noop --expires -5m
eq "--expires negative: usage" 64 "$RC"
as cronq_runner enqueue noop --expires 5m --expires-at 2099-01-01
eq "--expires with --expires-at: usage" 64 "$RC"
as cronq_runner enqueue noop --expires-at "$(q "select now() - interval '1 minute'")"
expect_rc_err "--expires-at in the past: data" 65 "expires_at .* is not later than the job's run time"
as cronq_runner enqueue noop --run-at 2099-01-02 --expires-at 2099-01-01
eq "--expires-at before --run-at: data" 65 "$RC"
as cronq_runner enqueue noop --expires-at 'not a time'
eq "--expires-at malformed: data" 65 "$RC"
as cronq_runner enqueue noop --unique-key ''
expect "--unique-key empty: data" 65 "" "cronq: error: unique key must be 1 to 1000 bytes"
as cronq_runner enqueue noop --unique-key "$(printf 'a\tb')"
expect "--unique-key with a control character: data" 65 "" "cronq: error: unique key may not contain control characters"
as cronq_runner enqueue noop --unique-key "$(printf '%01001d' 0)"
eq "--unique-key over 1000 bytes: data" 65 "$RC"
as cronq_runner enqueue noop --replace
expect "--replace without --unique-key: usage" 64 "" $'cronq: error: --replace needs --unique-key\nTry "cronq enqueue --help" for more information.'
as cronq_runner schedule add bad '* * * * *' noop --start-deadline 0s
eq "--start-deadline 0s: usage" 64 "$RC"
cronq_in '{"type": "noop"}
{"type": "noop", "expires_at": "2001-01-01T00:00:00Z"}' enqueue --jsonl
match "--jsonl with a deadline past: line 2, data" "^65\|cronq: error: line 2: expires_at" "$RC|$ERR"
cronq_in '{"type": "noop", "unique_key": ""}' enqueue --jsonl
eq "--jsonl with an empty unique key: data" 65 "$RC"
out=$(asq app "select cronq.enqueue('noop', expires_at => now() - interval '1 second')" 2>&1)
match "SQL: a deadline in the past is refused" "is not later than the job's run time" "$out"
out=$(asq app "select cronq.enqueue('noop', unique_key => E'x\\ny')" 2>&1)
match "SQL: a unique key with a control character is refused" "jobs_unique_key_check" "$out"
eq "bad input wrote nothing" "0|1" "$(jobs)|$(q "select count(*) from cronq.schedules")"

# --- deadlines: the job past its deadline never runs ------------------------
on_time=$(PGUSER=cronq_runner "$CRONQ" enqueue exec "$(mark on-time)" --expires 1h)
late=$(PGUSER=cronq_runner "$CRONQ" enqueue exec "$(mark late)" --in 1s --expires 1s)
retrying=$(PGUSER=cronq_runner "$CRONQ" enqueue exec "$(mark retrying)" --expires 1h)
none=$(PGUSER=cronq_runner "$CRONQ" enqueue exec "$(mark no-deadline)")
eq "--expires counts from the run time" "t|t" \
    "$(q "select expires_at = run_at + interval '1 hour' from cronq.jobs where id = $on_time")|$(q "select expires_at = run_at + interval '1 second' from cronq.jobs where id = $late")"
# a failed job waiting to retry whose deadline passes before its retry
q "update cronq.jobs set status = 'failed', attempts = 1, run_at = now() + interval '1 hour',
   expires_at = now() - interval '1 second' where id = $retrying" >/dev/null
sleep 2.2
run
eq "the run ends 0" 0 $?
eq "the job before its deadline and the one without ran" "succeeded|succeeded" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($on_time, $none)")"
check "their programs ran" test -e "$marks/on-time" -a -e "$marks/no-deadline"
eq "the jobs past their deadline ended cancelled, expired" "cancelled|expired|true;cancelled|expired|true" \
    "$(q "select string_agg(status || '|' || error_code || '|' || (finished_at is not null), ';' order by id)
          from cronq.jobs where id in ($late, $retrying)")"
check "and never ran (no file)" test ! -e "$marks/late" -a ! -e "$marks/retrying"
eq "a job_runs row says so, for the attempt that never started" "$late|1|cancelled|expired|true;$retrying|2|cancelled|expired|true" \
    "$(q "select string_agg(job_id || '|' || attempt || '|' || outcome || '|' || error_code || '|' || (started_at is null), ';' order by job_id)
          from cronq.job_runs where job_id in ($late, $retrying)")"
as cronq_runner show "$late"
match "show prints the deadline" "expires_at +[0-9T:-]+Z" "$OUT"
as cronq_runner list --json --status cancelled
eq "list --json carries expires_at" t \
    "$(q "select bool_and(j->>'expires_at' is not null) from json_array_elements('$OUT'::json) j")"
as cronq_runner retry "$late"
eq "retry clears the deadline: the operator asked for it" "queued|" \
    "$(q "select status || '|' || coalesce(expires_at::text, '') from cronq.jobs where id = $late")"
run
eq "and the retried job runs" succeeded "$(q "select status from cronq.jobs where id = $late")"

# The sweep goes page after page (500 a statement) while pages come back
# full: 1,100 late jobs end in one wake, the other job runs.
q "insert into cronq.jobs (type, payload, run_at, expires_at)
   select 'noop', '{}', now() + interval '1 hour', now() + interval '2 hours' from generate_series(1, 1100)" >/dev/null
q "update cronq.jobs set run_at = now() - interval '2 seconds', expires_at = now() - interval '1 second'
   where status = 'queued' and type = 'noop'" >/dev/null
other=$(q "insert into cronq.jobs (type, payload) values ('noop', '{}') returning id")
run
eq "1,100 late jobs: all expired by one wake's sweep, in three pages; the other ran" "0|1100|succeeded" \
    "$?|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'expired' and type = 'noop'")|$(q "select status from cronq.jobs where id = $other")"
q "delete from cronq.jobs where type = 'noop'" >/dev/null

# The claim itself never takes a job past its deadline: one made due and
# expired while a runner lingers (its wake's sweep long done) stays queued
# and never runs; the next wake expires it.
run --linger 3s --poll 100ms 2>"$T_DIR/linger.err" &
runner=$!
sleep 0.5
lingered=$(q "with j as (insert into cronq.jobs (type, payload, run_at, expires_at)
               values ('exec', '$(mark lingered)', now() + interval '1 hour', now() + interval '2 hours') returning id)
             select id from j")
q "update cronq.jobs set run_at = now() - interval '1 minute', expires_at = now() - interval '1 second'
   where id = $lingered" >/dev/null
wait $runner
eq "the lingering run ends 0" 0 $?
eq "the claim left the expired job alone" "queued|0" \
    "$(q "select status || '|' || (select count(*) from cronq.job_runs where job_id = $lingered) from cronq.jobs where id = $lingered")"
run
eq "the next wake expired it" "cancelled|expired" \
    "$(q "select status || '|' || error_code from cronq.jobs where id = $lingered")"
check "it never ran" test ! -e "$marks/lingered"

# --- a schedule's start deadline --------------------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner schedule add late-report '* * * * *' exec "$(mark sched)" --start-deadline 30s --catchup all
eq "schedule add --start-deadline" "0|00:00:30" "$RC|$(q "select start_deadline from cronq.schedules where name = 'late-report'")"
as cronq_runner schedule show late-report --json
eq "schedule show carries it, in seconds" "30" "$(q "select '$OUT'::json->>'start_deadline'")"
# runners were down for three occurrences: each is enqueued and expires
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '3 minutes'
   where name = 'late-report'" >/dev/null
t0=$(q "select now()")
run
eq "the missed occurrences' jobs expire at fire time + 30s" "true|true" \
    "$(q "select bool_and(expires_at = scheduled_for + interval '30 seconds') || '|' || (count(*) >= 4)
          from cronq.jobs where schedule = 'late-report'")"
# (the current minute's occurrence may still be within its 30 s)
eq "those past it when the runner woke ended expired, with a job_runs row, none ran" "t|0" \
    "$(q "select count(*) >= 3 and bool_and(status = 'cancelled' and error_code = 'expired'
                     and exists (select 1 from cronq.job_runs r where r.job_id = j.id
                                 and r.outcome = 'cancelled' and r.error_code = 'expired')),
                 sum((select count(*) from cronq.job_runs r where r.job_id = j.id and r.outcome <> 'cancelled'))
          from cronq.jobs j where schedule = 'late-report' and expires_at <= '$t0'")"
# a backfill of the schedule is asked for explicitly: no deadline
as cronq_runner backfill --schedule late-report --from "$(q "select date_trunc('minute', now()) - interval '10 minutes'")" \
    --to "$(q "select date_trunc('minute', now()) - interval '8 minutes'")"
eq "backfill --schedule" 0 "$RC"
eq "its jobs have no deadline" "3|0" \
    "$(q "select count(*) || '|' || count(expires_at) from cronq.jobs
          where schedule = 'late-report' and scheduled_for < date_trunc('minute', now()) - interval '5 minutes'")"
asq app "select cronq.schedule('app-sched', '0 * * * *', 'noop', start_deadline => '2 minutes')" >/dev/null
eq "cronq.schedule(..., start_deadline)" "00:02:00" "$(q "select start_deadline from cronq.schedules where name = 'app-sched'")"
q "delete from cronq.schedules where name in ('late-report', 'app-sched')" >/dev/null

# --- unique while active -----------------------------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
first=$(PGUSER=cronq_runner "$CRONQ" enqueue sleep '{"seconds": 0.1}' --unique-key refresh-cache --in 1h)
as cronq_runner enqueue sleep '{"seconds": 0.1}' --unique-key refresh-cache
expect "a second enqueue returns the holder's id" 0 "$first" \
    "cronq: warning: job $first with unique key \"refresh-cache\" is already queued; not enqueued again"
eq "one row" 1 "$(q "select count(*) from cronq.jobs where unique_key = 'refresh-cache'")"
cronq_in '{"type": "sleep", "payload": {"seconds": 1}, "unique_key": "refresh-cache"}
{"type": "noop", "unique_key": "other"}' enqueue --jsonl
eq "--jsonl skips a held unique key" "0|1|1" \
    "$RC|$(q "select count(*) from cronq.jobs where unique_key = 'refresh-cache'")|$(q "select count(*) from cronq.jobs where unique_key = 'other'")"
as cronq_runner enqueue sleep '{"seconds": 0.2}' --unique-key refresh-cache --replace --in 2h
expect "--replace debounces the waiting job" 0 "$first" \
    "cronq: warning: job $first with unique key \"refresh-cache\" was waiting; replaced its payload and run time"
eq "its payload and run time are the new ones" "0.2|t" \
    "$(q "select (payload->>'seconds') || '|' || (run_at > now() + interval '119 minutes')::text::char from cronq.jobs where id = $first")"
as cronq_runner enqueue noop --unique-key refresh-cache --replace
expect_rc_err "a replace keeps the holder's type" 65 'cannot replace job [0-9]+ of type "sleep" with a job of type "noop"'
q "update cronq.jobs set status = 'failed', attempts = 1 where id = $first" >/dev/null
as cronq_runner enqueue sleep '{"seconds": 0.3}' --unique-key refresh-cache
expect "a failed job waiting to retry holds the key" 0 "$first" \
    "cronq: warning: job $first with unique key \"refresh-cache\" is already waiting to retry; not enqueued again"
as cronq_runner enqueue sleep '{"seconds": 0.1}' --unique-key refresh-cache --replace
eq "a failed job waiting to retry holds the key, and is replaced, queued" "0|$first|queued|1|t" \
    "$RC|$OUT|$(q "select status || '|' || attempts || '|' || (run_at <= now())::text::char from cronq.jobs where id = $first")"

# running: left alone
slow=$(PGUSER=cronq_runner "$CRONQ" enqueue sleep '{"seconds": 3}' --unique-key nightly-export)
run --concurrency 2 2>"$T_DIR/slow.err" &
runner=$!
check "the holder runs" wait_for "the holder runs" 10 "select status = 'running' from cronq.jobs where id = $slow"
as cronq_runner enqueue sleep '{"seconds": 0.5}' --unique-key nightly-export --replace
expect "--replace leaves a running holder alone" 0 "$slow" \
    "cronq: warning: job $slow with unique key \"nightly-export\" is already running; left alone, not replaced"
eq "its payload is unchanged, one row" "3|1" \
    "$(q "select (payload->>'seconds') || '|' || (select count(*) from cronq.jobs where unique_key = 'nightly-export') from cronq.jobs where id = $slow")"
wait $runner
eq "the holder finished" succeeded "$(q "select status from cronq.jobs where id = $slow")"
as cronq_runner enqueue noop --unique-key nightly-export
check "a finished holder frees the key: a new job ($OUT)" [ "$RC" = 0 -a -n "$OUT" -a "$OUT" != "$slow" -a -z "$ERR" ]
eq "two rows with the key, one active" "2|1" \
    "$(q "select count(*) || '|' || count(*) filter (where status in ('queued', 'failed', 'running')) from cronq.jobs where unique_key = 'nightly-export'")"

# the index decides, not a look first: an enqueue while the holder's
# transaction is still open waits for it, then returns its id
"$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin" -c "select cronq.enqueue('noop', unique_key => 'held-open')" \
    -c "select pg_sleep(2)" -c "commit" >"$T_DIR/open.out" 2>&1 &
opener=$!
check "the holder is inserted, not committed" wait_for "the holder is inserted, not committed" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(2)%' and pid <> pg_backend_pid())"
as cronq_runner enqueue noop --unique-key held-open
wait $opener
eq "an enqueue racing an open holder: its id, one row" "0|$(head -n 1 "$T_DIR/open.out")|1" \
    "$RC|$OUT|$(q "select count(*) from cronq.jobs where unique_key = 'held-open'")"

# the race: 20 enqueues at once, and 10 SQL calls at once
for i in $(seq 1 20); do
    (PGUSER=cronq_runner "$CRONQ" enqueue noop --unique-key race >"$T_DIR/race.$i.out" 2>"$T_DIR/race.$i.err"; echo $? >"$T_DIR/race.$i.rc") &
done
for i in $(seq 1 10); do
    (asq app "select cronq.enqueue('noop', unique_key => 'sql-race')" >"$T_DIR/sqlrace.$i.out" 2>&1; echo $? >"$T_DIR/sqlrace.$i.rc") &
done
wait
eq "20 racing enqueues: one row" 1 "$(q "select count(*) from cronq.jobs where unique_key = 'race'")"
eq "all exit 0 with its id" "0 $(q "select id from cronq.jobs where unique_key = 'race'") 20" \
    "$(cat "$T_DIR"/race.*.rc | sort -u | tr '\n' ' ')$(cat "$T_DIR"/race.*.out | sort -u) $(cat "$T_DIR"/race.*.out | wc -l)"
eq "10 racing SQL calls: one row" 1 "$(q "select count(*) from cronq.jobs where unique_key = 'sql-race'")"
eq "all return its id" "0 $(q "select id from cronq.jobs where unique_key = 'sql-race'")" \
    "$(cat "$T_DIR"/sqlrace.*.rc | sort -u | tr '\n' ' ')$(cat "$T_DIR"/sqlrace.*.out | sort -u)"

# roles: a cronq_user replaces its own; another role learns nothing and
# changes nothing
mine=$(PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 0.1}' --unique-key tenant-7 --in 1h)
as app enqueue sleep '{"seconds": 0.2}' --unique-key tenant-7 --replace --in 2h
eq "a cronq_user replaces its own waiting job" "0|$mine|0.2" \
    "$RC|$OUT|$(q "select payload->>'seconds' from cronq.jobs where id = $mine")"
as app2 enqueue noop --unique-key tenant-7
expect_rc_err "another role's holder: refused, data" 65 'unique key "tenant-7" is held by another role'"'"'s job'
check "without its id" [ "${ERR/$mine/}" = "$ERR" ]
as app2 enqueue sleep '{"seconds": 9}' --unique-key tenant-7 --replace
eq "nor may it replace it" "65|0.2|1" \
    "$RC|$(q "select payload->>'seconds' from cronq.jobs where id = $mine")|$(q "select count(*) from cronq.jobs where unique_key = 'tenant-7'")"
out=$(asq app2 "select cronq.enqueue('noop', unique_key => 'tenant-7', replace => true)" 2>&1)
match "the SQL API refuses it too" "held by another role's job" "$out"
PGUSER=app2 cronq_in '{"type": "noop", "unique_key": "tenant-7"}' enqueue --jsonl
eq "--jsonl refuses it too" "65|1" "$RC|$(q "select count(*) from cronq.jobs where unique_key = 'tenant-7'")"
eq "app2 cannot reach it by the table" "UPDATE 0|0.2" "$(PGUSER=app2 "$PSQL" -X -c "update cronq.jobs set payload = '{\"seconds\": 9}' where id = $mine" 2>&1)|$(q "select payload->>'seconds' from cronq.jobs where id = $mine")"
plain=$(PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 0.1}' --in 1h)
out=$(asq app "update cronq.jobs set payload = '{\"seconds\": 9}' where id = $plain" 2>&1)
match "a job without a unique key is not replaced by the table" "a job is changed only by cancelling or retrying it" "$out"

# the idempotency key is looked at first
k1=$(PGUSER=cronq_runner "$CRONQ" enqueue noop --key idem-1 --unique-key both --in 1h)
as cronq_runner enqueue sleep '{"seconds": 1}' --key idem-1 --unique-key both --replace
eq "an existing --key wins: nothing replaced" "0|$k1|noop" "$RC|$OUT|$(q "select type from cronq.jobs where id = $k1")"

# --- a late job is finished business --------------------------------------
# A waiting holder past its deadline is expired by the next enqueue with
# its key, whoever's it is (as the sweep would), not left holding the key
# until a wake.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
late=$(PGUSER=app "$CRONQ" enqueue noop --unique-key late-holder --expires 1h)
q "update cronq.jobs set expires_at = now() - interval '1 second' where id = $late" >/dev/null
as app2 enqueue noop --unique-key late-holder
check "a late holder does not hold its key: another role's job ($OUT) is written" \
    [ "$RC" = 0 -a -n "$OUT" -a "$OUT" != "$late" -a -z "$ERR" ]
eq "the late holder ended expired, with its job_runs row" "cancelled|expired|enqueue|1" \
    "$(q "select status || '|' || error_code || '|' || (select worker || '|' || count(*) over ()
          from cronq.job_runs where job_id = $late and outcome = 'cancelled' and error_code = 'expired')
          from cronq.jobs where id = $late")"
late=$(PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 0.1}' --unique-key late-own --expires 1h)
q "update cronq.jobs set expires_at = now() - interval '1 second' where id = $late" >/dev/null
as app enqueue sleep '{"seconds": 0.2}' --unique-key late-own --replace
eq "--replace of a late holder writes a new job, the holder expired" "0|t|cancelled|0.1" \
    "$RC|$([ "$OUT" != "$late" ] && echo t)|$(q "select status || '|' || (payload->>'seconds') from cronq.jobs where id = $late")"

# overlap skip waits for the last job only while it may still run: one
# past its deadline (not yet swept) lets the next occurrence be enqueued
as cronq_runner schedule add late-skip '* * * * *' noop --overlap skip --start-deadline 30s
prev=$(q "insert into cronq.jobs (type, schedule, scheduled_for, run_at, expires_at)
          values ('noop', 'late-skip', now() - interval '2 minutes', now() - interval '2 minutes',
                  now() - interval '1 minute') returning id")
q "update cronq.schedules set last_job_id = $prev, next_run_at = date_trunc('minute', now())
   where name = 'late-skip'" >/dev/null
fire=$(q "select next_run_at from cronq.schedules where name = 'late-skip'")
run
eq "overlap skip: the occurrence after a late last job is enqueued" 1 \
    "$(q "select count(*) from cronq.jobs where schedule = 'late-skip' and scheduled_for = '$fire'")"
q "delete from cronq.schedules where name = 'late-skip'" >/dev/null

# status and check count a late job as neither due nor held
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
late=$(PGUSER=app "$CRONQ" enqueue noop --expires 1h)
q "update cronq.jobs set run_at = now() - interval '10 minutes', expires_at = now() - interval '1 second'
   where id = $late" >/dev/null
as cronq_runner status --json
eq "status: a late job is not due" "0|0|0|0" \
    "$(q "select concat_ws('|', d->'due', d->'lag_seconds', d->'queues'->0->'due', d->'queues'->0->'held')
          from (select '$OUT'::json as d) x")"
as cronq_runner check --max-lag 1m
match "check: no lag from a late job" " lag=0s;" "$OUT"

# retry: one active job per unique key. Of two dead jobs with one key the
# first is retried; one whose key an active job holds stays dead, also
# when the holder is another role's (row-level security hides it)
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
d1=$(PGUSER=app "$CRONQ" enqueue noop --unique-key dup --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $d1" >/dev/null
d2=$(PGUSER=app "$CRONQ" enqueue noop --unique-key dup --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $d2" >/dev/null
d3=$(PGUSER=app "$CRONQ" enqueue noop --unique-key theirs --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $d3" >/dev/null
holder=$(PGUSER=app2 "$CRONQ" enqueue noop --unique-key theirs --in 1h)
d4=$(PGUSER=app "$CRONQ" enqueue noop --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $d4" >/dev/null
as app retry --dead -v
eq "retry --dead: the rest retried, exit 0" "0|retried 2 jobs" "$RC|$(told | tail -n 1)"
match "and it says how many stayed dead" "2 dead jobs not retried: active jobs hold their unique keys" "$ERR"
eq "the first of a key's dead jobs, and the job without a key, queued; the others dead" \
    "queued|dead|dead|queued|queued" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($d1, $d2, $d3, $d4, $holder)")"
as app retry "$d3" -v
eq "retry by id of a job whose key another role's job holds" "0|retried 0 jobs" "$RC|$(told | tail -n 1)"
match "says why" "job $d3 is dead; not retried: an active job holds its unique key" "$ERR"
eq "cronq.retry() says false" "f|dead" \
    "$(asq app "select cronq.retry($d3)")|$(q "select status from cronq.jobs where id = $d3")"

# a late waiting holder holds nothing for a retry either
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
r1=$(PGUSER=app "$CRONQ" enqueue noop --unique-key late-retry --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $r1" >/dev/null
h=$(PGUSER=app2 "$CRONQ" enqueue noop --unique-key late-retry --expires 1h)
q "update cronq.jobs set expires_at = now() - interval '1 second' where id = $h" >/dev/null
as app retry "$r1" -v
eq "retry past another role's late holder: retried, the holder expired" "0|retried 1 job|queued|cancelled|expired" \
    "$RC|$(told | tail -n 1)|$(q "select status from cronq.jobs where id = $r1")|$(q "select status || '|' || error_code from cronq.jobs where id = $h")"

# an enqueue holding the key, not yet committed: the retry waits for it,
# then leaves the job (no error, the rest of the batch retried)
o1=$(PGUSER=app "$CRONQ" enqueue noop --unique-key open-retry --in 1h)
o2=$(PGUSER=app "$CRONQ" enqueue noop --in 1h)
q "update cronq.jobs set status = 'dead', finished_at = now() where id in ($o1, $o2)" >/dev/null
"$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin" -c "select cronq.enqueue('noop', unique_key => 'open-retry')" \
    -c "select pg_sleep(1.5)" -c "commit" >"$T_DIR/open-retry.out" 2>&1 &
opener=$!
check "the holder is inserted, not committed" wait_for "the holder is inserted, not committed" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(1.5)%' and pid <> pg_backend_pid())"
as app retry "$o1" "$o2" -v
wait $opener
eq "retry racing an uncommitted holder: exit 0, the other job retried, one active" "0|retried 1 job|dead|queued|1" \
    "$RC|$(told | tail -n 1)|$(q "select status from cronq.jobs where id = $o1")|$(q "select status from cronq.jobs where id = $o2")|$(q "select count(*) from cronq.jobs where unique_key = 'open-retry' and status in ('queued', 'failed', 'running')")"

# two retries at once of two finished jobs with one key: one is retried
t1=$(PGUSER=app "$CRONQ" enqueue noop --unique-key twin --in 1h)
q "update cronq.jobs set status = 'cancelled', finished_at = now() where id = $t1" >/dev/null
t2=$(PGUSER=app "$CRONQ" enqueue noop --unique-key twin --in 1h)
q "update cronq.jobs set status = 'cancelled', finished_at = now() where id = $t2" >/dev/null
for t in $t1 $t2; do
    (PGUSER=app "$CRONQ" retry "$t" >"$T_DIR/twin.$t.out" 2>&1; echo $? >"$T_DIR/twin.$t.rc") &
done
wait
eq "two retries at once: both exit 0, one job active" "0|1" \
    "$(cat "$T_DIR"/twin.*.rc | sort -u | tr -d '\n')|$(q "select count(*) from cronq.jobs where unique_key = 'twin' and status = 'queued'")"

# a late holder another session holds locked (the sweep, another
# enqueue): the enqueue waits for it, then writes its job
lk=$(PGUSER=app "$CRONQ" enqueue noop --unique-key locked-late --expires 1h)
q "update cronq.jobs set expires_at = now() - interval '1 second' where id = $lk" >/dev/null
"$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin" -c "select 1 from cronq.jobs where id = $lk for no key update" \
    -c "select pg_sleep(1.5)" -c "commit" >/dev/null 2>&1 &
locker=$!
check "the late holder is locked" wait_for "the late holder is locked" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(1.5)%' and pid <> pg_backend_pid())"
as app2 enqueue noop --unique-key locked-late
wait $locker
check "an enqueue behind a locked late holder writes its own job ($OUT), not the holder's id" \
    [ "$RC" = 0 -a -n "$OUT" -a "$OUT" != "$lk" -a -z "$ERR" ]
eq "the holder expired" "cancelled|expired" "$(q "select status || '|' || error_code from cronq.jobs where id = $lk")"

# a late holder its author keeps locked (an open transaction): another
# role's enqueue of the key waits 2 s at most, then finds the key held
lk=$(PGUSER=app "$CRONQ" enqueue noop --unique-key locked-long --expires 1h)
q "update cronq.jobs set expires_at = now() - interval '1 second' where id = $lk" >/dev/null
PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin" -c "select 1 from cronq.jobs where id = $lk for no key update" \
    -c "select pg_sleep(20)" -c "commit" >/dev/null 2>&1 &
locker=$!
check "the late holder is locked by its author" wait_for "the late holder is locked by its author" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(20)%' and pid <> pg_backend_pid())"
as app2 enqueue noop --unique-key locked-long
check "the enqueue ended while the lock was still held" kill -0 $locker
eq "another role's enqueue behind a long-locked late holder: refused, the key held; the holder as it was" "65|queued|1" \
    "$RC|$(q "select status from cronq.jobs where id = $lk")|$(q "select count(*) from cronq.jobs where unique_key = 'locked-long'")"
q "select pg_terminate_backend(pid) from pg_stat_activity where query like '%pg_sleep(20)%' and pid <> pg_backend_pid()" >/dev/null
wait $locker

# A stop asked while a wake expires jobs past their deadline: the page under
# way commits, the rest is the next wake's. Each page's history insert made
# to sleep 1 s (a test trigger): 3,000 jobs are 6 pages of 500.
q "delete from cronq.job_runs; delete from cronq.jobs" >/dev/null
q "insert into cronq.jobs (type, expires_at) select 'noop', now() + interval '1 hour' from generate_series(1, 3000)" >/dev/null
q "update cronq.jobs set expires_at = now() - interval '1 second'" >/dev/null
q "create function public.t_slow_page() returns trigger language plpgsql as \$\$ begin perform pg_sleep(1); return null; end \$\$;
   create trigger t_slow_page after insert on cronq.job_runs for each statement execute function public.t_slow_page()"
"$CRONQ" run --queue none-such --verbose 2>"$T_DIR/stop.err" &
runner=$!
check "the wake is expiring the first page" wait_for "a sleeping page" 20 \
    "select count(*) > 0 from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()"
kill -TERM $runner
wait $runner
eq "stopped mid-expiry: exit 0, some pages done, not all" "0|t" \
    "$?|$(q "select count(*) filter (where error_code = 'expired') between 500 and 2500 from cronq.jobs")"
match "the run said the rest is the next wake's" "expiring goes on at the next wake: a stop was asked" "$(cat "$T_DIR/stop.err")"
q "drop trigger t_slow_page on cronq.job_runs; drop function public.t_slow_page()"
"$CRONQ" run --queue none-such 2>/dev/null
eq "the next wake expires the rest, each once" "0|3000|3000" \
    "$?|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'expired'")|$(q "select count(*) from cronq.job_runs")"

done_testing
