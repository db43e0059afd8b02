#!/usr/bin/env bash
# A member of cronq_user cannot hold the runners back with locks. It may
# read cronq's tables and write some of their columns: PostgreSQL then
# lets it LOCK TABLE in ACCESS SHARE only (a stronger mode needs UPDATE,
# DELETE or TRUNCATE on the whole table), and lock rows of its own. Every
# mode is tried on every table and view of the schema, and judged by
# pg_locks. Then the attack: holding, in an open transaction, all it can
# (every lock it gets, FOR UPDATE on each of its rows, writes not
# committed), it watches another author's due schedule and job go through
# a run, and that author and an admin manage schedules and pauses meanwhile.
# Judged by job states, row counts and pg_stat_activity. Every login by
# password.
. "$(dirname "$0")/lib.sh"

team_cluster mallory app oncall
q "grant cronq_user to mallory, app; grant cronq_admin to oncall" >/dev/null
as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null

# Every mode on every relation, NOWAIT (nothing else runs), in one
# transaction; what was granted is still held when pg_locks is read.
take_all=$(cat <<'SQL'
do $$
declare
    r regclass;
    m text;
begin
    for r in select c.oid from pg_catalog.pg_class c
             where c.relnamespace = 'cronq'::regnamespace and c.relkind in ('r', 'p', 'v', 'm') loop
        foreach m in array array['access exclusive', 'exclusive', 'share row exclusive', 'share',
                                 'share update exclusive', 'row exclusive', 'row share', 'access share'] loop
            begin
                execute pg_catalog.format('lock table %s in %s mode nowait', r, m);
            exception when insufficient_privilege then
                null;
            end;
        end loop;
    end loop;
end
$$;
SQL
)
held_modes="select coalesce(string_agg(distinct l.mode, ','), '') from pg_catalog.pg_locks l
            join pg_catalog.pg_class c on c.oid = l.relation
            where l.pid = pg_backend_pid() and c.relnamespace = 'cronq'::regnamespace"
held_on="select count(distinct l.relation) from pg_catalog.pg_locks l
         join pg_catalog.pg_class c on c.oid = l.relation
         where l.pid = pg_backend_pid() and c.relnamespace = 'cronq'::regnamespace and c.relkind = 'r'"
eq "a cronq_user locks cronq's tables in ACCESS SHARE only" "AccessShareLock" \
    "$(asq mallory "begin; $take_all $held_modes; rollback" 2>&1)"
# The attempts did lock: every table it may read, in that mode.
eq "... which it got on each table it reads" \
    "$(asq mallory "select count(*) from pg_catalog.pg_class c where c.relnamespace = 'cronq'::regnamespace
                    and c.relkind = 'r' and has_table_privilege(c.oid, 'select')")" \
    "$(asq mallory "begin; $take_all $held_on; rollback" 2>&1)"
eq "an admin still locks as its grants allow (the attempts are real)" t \
    "$(asq oncall "begin; $take_all select bool_or(l.mode = 'AccessExclusiveLock') from pg_catalog.pg_locks l
                   where l.pid = pg_backend_pid() and l.relation = 'cronq.jobs'::regclass; rollback" 2>&1)"

# --- the attack: hold everything, while others work ----------------------
as mallory schedule add m-hourly '0 * * * *' noop
as mallory schedule add m-due '* * * * *' noop
as mallory enqueue noop
as app schedule add app-due '* * * * *' noop
as app schedule add app-other '0 4 * * *' noop
as app enqueue noop
eq "the rows are in place" "4|2" \
    "$(q "select (select count(*) from cronq.schedules where name like 'm-%' or name like 'app-%') || '|' || count(*) from cronq.jobs")"
q "update cronq.schedules set enabled = true, next_run_at = date_trunc('minute', now())
   where name in ('m-due', 'app-due')" >/dev/null

asq mallory "begin;
    $take_all
    select from cronq.jobs for update;
    select from cronq.schedules for update;
    select cronq.pause('schedule:m-hourly');
    select from cronq.pauses for update;
    insert into cronq.jobs (type, payload) values ('noop', '{}');
    insert into cronq.schedules (name, cron, type) values ('m-new', '* * * * *', 'noop');
    update cronq.schedules set priority = 5 where name = 'm-hourly';
    select pg_sleep(60);
    commit" >"$T_DIR/holder.out" 2>&1 &
holder=$!
# (pg_stat_activity keeps the first 1 kB of a query: the sleep is told by its wait)
sleeping="from pg_stat_activity where usename = 'mallory' and state = 'active' and wait_event = 'PgSleep'"
holding="select exists (select $sleeping)"
wait_for "holder" 20 "$holding" && pass || fail "mallory holds its locks, rows and writes: $(cat "$T_DIR/holder.out")"
since=$(q "select xact_start $sleeping")

started=$(date +%s)
OUT=$(PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>"$T_DIR/run.err"); RC=$?
eq "the run ends 0 while mallory holds on (stderr: $(head -c 300 "$T_DIR/run.err"))" 0 "$RC"
eq "app's job and app's schedule's job ran" "succeeded,succeeded" \
    "$(q "select string_agg(status, ',' order by id) from cronq.jobs where enqueued_by = 'app'")"
eq "app's fire time is in the ledger as enqueued" "1" \
    "$(q "select count(*) from cronq.occurrences where schedule = 'app-due' and decision = 'enqueued'")"
as app schedule remove app-other
eq "app removes a schedule of its own meanwhile" "0|0" \
    "$RC|$(q "select count(*) from cronq.schedules where name = 'app-other'")"
as app pause schedule:app-due
eq "app pauses its schedule meanwhile" "0|1" "$RC|$(q "select count(*) from cronq.pauses where key = 'schedule:app-due'")"
as app resume schedule:app-due
eq "... and resumes it" "0|0" "$RC|$(q "select count(*) from cronq.pauses where key = 'schedule:app-due'")"
as oncall pause queue:reports
as oncall resume queue:reports
eq "an admin pauses and resumes a queue meanwhile" "0|0" \
    "$RC|$(q "select count(*) from cronq.pauses where key = 'queue:reports'")"
eq "all of it while mallory's transaction was still open" "1" \
    "$(q "select count(*) $sleeping and xact_start = '$since'")"
check "all of it well inside mallory's hold ($(( $(date +%s) - started )) s)" [ $(( $(date +%s) - started )) -lt 40 ]
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'mallory'" >/dev/null
wait "$holder"
eq "mallory's uncommitted writes are gone with it" "0|0|1" \
    "$(q "select (select count(*) from cronq.schedules where name = 'm-new') || '|' ||
                 (select count(*) from cronq.pauses where key = 'schedule:m-hourly') || '|' ||
                 (select count(*) from cronq.jobs where enqueued_by = 'mallory')")"

# --- a row lock on its own running job holds back no one but itself -------
# (FOR UPDATE takes an UPDATE on any column, which cancel needs.) The
# outcomes wait for it 2 s at most, then are recorded without it: the job
# stays running, its lease runs out, and the rescue runs it again; every
# other job goes on.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
# a quiet success (record_plain.sql) and one with a result (record.sql)
as mallory enqueue sleep '{"seconds": 1}'
mj=$OUT
as mallory enqueue sql '{"sql": "select pg_sleep(1)"}'
mj2=$OUT
as app enqueue noop
aj=$OUT
PGUSER=cronq_runner timeout 30 "$CRONQ" run --concurrency 2 2>"$T_DIR/rowlock.err" &
runner=$!
check "mallory's jobs run first" wait_for "running" 20 \
    "select count(*) = 2 from cronq.jobs where id in ($mj, $mj2) and status = 'running'"
asq mallory "begin; select from cronq.jobs where id in ($mj, $mj2) for update; select pg_sleep(60); commit" \
    >"$T_DIR/holder2.out" 2>&1 &
holder=$!
check "mallory holds her running jobs' rows" wait_for "holder" 20 "$holding"
since=$(q "select xact_start $sleeping")
wait $runner
eq "the run ends 0 (not after mallory's 60 s)" 0 $?
eq "app's job ran; mallory's stay running, unrecorded, no history row" "$aj|succeeded|1;$mj|running|0;$mj2|running|0" \
    "$(q "select string_agg(j.id || '|' || j.status || '|' || (select count(*) from cronq.job_runs r where r.job_id = j.id), ';'
                            order by j.id <> $aj, j.id)
          from cronq.jobs j where j.id in ($mj, $mj2, $aj)")"
eq "all of it while mallory's transaction was still open" "1" "$(q "select count(*) $sleeping and xact_start = '$since'")"
match "the run says so" "job $mj2's row is held locked by another transaction; its outcome \\(succeeded\\) was not recorded" \
    "$(cat "$T_DIR/rowlock.err")"
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'mallory'" >/dev/null
wait "$holder"
q "update cronq.jobs set locked_until = now() - interval '1 second' where id in ($mj, $mj2)" >/dev/null
PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>/dev/null
eq "their leases run out, the rescue runs them again: none lost" \
    "succeeded|2|lease_expired,succeeded;succeeded|2|lease_expired,succeeded" \
    "$(q "select string_agg(status || '|' || attempts || '|' || (select string_agg(outcome, ',' order by attempt)
                                                              from cronq.job_runs where job_id = j.id), ';')
          from cronq.jobs j where id in ($mj, $mj2)")"

# A lock held for less than the wait (as another runner's claim holds a
# row it passed over, for milliseconds) is waited out: the outcome is
# recorded, once, and the job does not run again.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as mallory enqueue sleep '{"seconds": 1}'
mj3=$OUT
PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>"$T_DIR/shortlock.err" &
runner=$!
check "mallory's job runs" wait_for "running" 20 "select status = 'running' from cronq.jobs where id = $mj3"
asq mallory "begin; select from cronq.jobs where id = $mj3 for update; select pg_sleep(1.5); commit" >/dev/null 2>&1 &
wait $runner
eq "a row held 1.5 s: waited for, recorded once" "0|succeeded|1|succeeded" \
    "$?|$(q "select status || '|' || attempts || '|' || (select string_agg(outcome, ',') from cronq.job_runs where job_id = $mj3)
            from cronq.jobs where id = $mj3")"
wait

# A blocked job of its own held locked, and a note that it needs settling
# written and not committed (its own parent cancelled in a transaction
# left open): the outcome of its other parent, whose dependants are
# settled in the same statement, does not wait for that note.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as mallory enqueue --in 1h noop
mp=$OUT
as mallory enqueue noop
mp2=$OUT
as mallory enqueue --after "$mp,$mp2" noop
md=$OUT
as app enqueue noop
aj=$OUT
asq mallory "begin; select from cronq.jobs where id = $md for update; select pg_sleep(60); commit" >/dev/null 2>&1 &
h1=$!
# (the lock first: a cancel before it would settle the dependant itself)
wait_for "holder" 20 "select exists (select from pg_stat_activity where usename = 'mallory' and wait_event = 'PgSleep')" \
    || fail "mallory holds the dependant"
asq mallory "begin; select cronq.cancel($mp); select pg_sleep(60); commit" >/dev/null 2>&1 &
h2=$!
check "mallory holds the dependant and an open cancel of its parent" wait_for "holders" 20 \
    "select count(*) = 2 from pg_stat_activity where usename = 'mallory' and wait_event = 'PgSleep'"
PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>"$T_DIR/settle.err"
rc=$?
eq "the run ends 0, both due jobs recorded (stderr: $(head -c 200 "$T_DIR/settle.err"))" "0|$mp2|succeeded;$aj|succeeded" \
    "$rc|$(q "select string_agg(id || '|' || status, ';' order by id) from cronq.jobs where id in ($mp2, $aj)")"
eq "... while mallory's transactions were still open" "2" \
    "$(q "select count(*) from pg_stat_activity where usename = 'mallory' and wait_event = 'PgSleep'")"
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'mallory'" >/dev/null
wait $h1 $h2
PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>/dev/null
eq "the dependant is settled by a later wake (one parent done, one queued)" "blocked|1" \
    "$(q "select status || '|' || waiting_for from cronq.jobs where id = $md")"

# --- occurrence keys written and not committed hold back its schedules only
# An author may write its schedules' occurrence jobs itself (backfill
# --schedule does); doing so locks each schedule's row until it commits,
# so that a wake passes over those schedules instead of waiting on their
# keys. Judged by the ledger: nothing refused, app's schedule enqueued.
q "truncate cronq.jobs, cronq.job_runs, cronq.occurrences" >/dev/null
for i in 1 2 3 4 5; do as mallory schedule add "m-p$i" '* * * * *' noop; done
q "update cronq.schedules set enabled = true, next_run_at = date_trunc('minute', now()) - interval '1 minute'
   where name like 'm-p%' or name = 'app-due'; update cronq.schedules set decided_through = null where name = 'app-due'" >/dev/null
asq mallory "begin;
    insert into cronq.jobs (type, payload, idempotency_key, schedule, scheduled_for)
    select 'noop', '{}', 'schedule:' || s.name || ':' || to_char(f at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
           s.name, f
    from cronq.schedules s, generate_series(date_trunc('minute', now()) - interval '2 minutes',
                                            date_trunc('minute', now()), interval '1 minute') f
    where s.name like 'm-p%';
    select pg_sleep(60);
    commit" >"$T_DIR/holder3.out" 2>&1 &
holder=$!
wait_for "holder" 20 "$holding" && pass || fail "mallory holds occurrence keys: $(cat "$T_DIR/holder3.out")"
since=$(q "select xact_start $sleeping")
OUT=$(PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>"$T_DIR/keys.err"); RC=$?
eq "the run ends 0" 0 "$RC"
eq "app's schedule enqueued; mallory's passed over (no decision, none refused)" "1|0" \
    "$(q "select (select count(*) from cronq.occurrences where schedule = 'app-due' and decision = 'enqueued')
          || '|' || (select count(*) from cronq.occurrences where schedule like 'm-p%')")"
eq "... while mallory's transaction was still open" "1" "$(q "select count(*) $sleeping and xact_start = '$since'")"
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'mallory'" >/dev/null
wait "$holder"
PGUSER=cronq_runner timeout 30 "$CRONQ" run 2>/dev/null
eq "once it is gone, the next wake enqueues them" "5" \
    "$(q "select count(distinct schedule) from cronq.occurrences where schedule like 'm-p%' and decision = 'enqueued'")"
for i in 1 2 3 4 5; do as mallory schedule remove "m-p$i"; done

# --- removal is the rows' policies' decision, as DELETE was ----------------
as app schedule add app-keep '0 5 * * *' noop
as mallory pause schedule:m-hourly
as mallory schedule remove app-keep
eq "mallory cannot remove app's schedule (schedule remove)" "65|1" \
    "$RC|$(q "select count(*) from cronq.schedules where name = 'app-keep'")"
asq mallory "update cronq.schedules set removed = true; update cronq.pauses set removed = true" >/dev/null 2>&1
asq mallory "select cronq.unschedule('app-keep')" >/dev/null 2>&1
eq "... nor by its column, nor by unschedule: app's rows stay, mallory's own went" "1|0|0" \
    "$(q "select (select count(*) from cronq.schedules where name = 'app-keep') || '|' ||
                 (select count(*) from cronq.schedules where created_by = 'mallory') || '|' ||
                 (select count(*) from cronq.pauses)")"
asq mallory "delete from cronq.schedules; delete from cronq.pauses" >/dev/null 2>&1
eq "a cronq_user's DELETE is refused outright" "1" "$(q "select count(*) from cronq.schedules where name = 'app-keep'")"
as app pause schedule:app-keep
asq app "select cronq.resume('schedule:app-keep')" >/dev/null
asq app "select cronq.unschedule('app-keep')" >/dev/null
eq "app resumes and removes through the SQL API" "0|0" \
    "$(q "select (select count(*) from cronq.schedules where name = 'app-keep') || '|' || (select count(*) from cronq.pauses)")"
asq oncall "insert into cronq.pauses (key, paused_by, paused_at, removed) values ('queue:zz', 'app', '2000-01-01', true)" >/dev/null
asq oncall "insert into cronq.schedules (name, cron, type, removed) values ('zz', '* * * * *', 'noop', true)" >/dev/null
eq "a row inserted with removed set is gone at once (an admin may write the column)" "0|0" \
    "$(q "select (select count(*) from cronq.pauses where key = 'queue:zz') || '|' || (select count(*) from cronq.schedules where name = 'zz')")"
eq "no row is left with removed set" "0" \
    "$(q "select (select count(*) from cronq.schedules where removed) + (select count(*) from cronq.pauses where removed)")"

# --- a backfill holds its schedule from the wakes, whoever writes it
# The owner's backfill (no row-level security: jobs_occurrence_lock does
# not fire) wrote an occurrence's key the wake then met uncommitted: the
# wake took it for the schedule's fault, refused the occurrence and moved
# the schedule an hour on (helper-74). Now backfill locks the row first
# and the wake passes over the schedule until it commits.
clear_of_minute_end 15
q "truncate cronq.occurrences" >/dev/null
as cronq_runner schedule add bf-lock '* * * * *' noop
fire=$(q "select date_trunc('minute', now())")
q "update cronq.schedules set next_run_at = '$fire' where name = 'bf-lock'" >/dev/null
q "create function public.t_slow_insert() returns trigger language plpgsql as \$\$ begin perform pg_sleep(3); return null; end \$\$;
   create trigger t_slow_insert after insert on cronq.jobs for each row
       when (new.schedule = 'bf-lock' and new.scheduled_for = '$fire') execute function public.t_slow_insert()" >/dev/null
PGUSER=cronq_runner "$CRONQ" backfill --schedule bf-lock --from "$(q "select '$fire'::timestamptz - interval '2 minutes'")" --to "$fire" \
    -v >"$T_DIR/bf-lock.out" 2>&1 &
backfiller=$!
check "the backfill is writing the occurrence" wait_for - 5 \
    "select exists (select 1 from pg_stat_activity where usename = 'cronq_runner' and wait_event = 'PgSleep')"
PGUSER=cronq_runner "$CRONQ" run --queue none-such 2>"$T_DIR/bf-lock.err"
eq "the wake beside it ends 0, passing over the schedule (no decision, next run unchanged)" "0|0|t" \
    "$?|$(q "select count(*) from cronq.occurrences where schedule = 'bf-lock'")|$(q "select next_run_at = '$fire' from cronq.schedules where name = 'bf-lock'")"
wait "$backfiller"
eq "the backfill enqueued its three" "0|cronq: info: enqueued 3 jobs (0 already existed)" "$?|$(grep 'enqueued' "$T_DIR/bf-lock.out")"
q "drop trigger t_slow_insert on cronq.jobs; drop function public.t_slow_insert()" >/dev/null
PGUSER=cronq_runner "$CRONQ" run --queue none-such 2>/dev/null
eq "the next wake finds the occurrence enqueued by the backfill, and goes on a minute" "enqueued|t" \
    "$(q "select string_agg(decision, ',') from cronq.occurrences where schedule = 'bf-lock'")|$(q "select next_run_at = '$fire'::timestamptz + interval '1 minute' from cronq.schedules where name = 'bf-lock'")"

done_testing
