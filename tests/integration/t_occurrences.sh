#!/usr/bin/env bash
# Schedules that explain themselves: the occurrence ledger (one row per
# fire time decided, with its reason, under 8 runners at once), `cronq why`
# for each reason, `cronq schedule run` with and without --force and who
# may, the ledger's row-level security, purge bounding it, and the idle
# wake writing nothing. Judged by rows, not by messages, where rows say it.
. "$(dirname "$0")/lib.sh"

team_cluster app app2 oncall
q "grant cronq_user to app, app2; grant cronq_admin to oncall" >/dev/null

as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
run() { PGUSER=cronq_runner "$CRONQ" run "$@"; }
ledger() { q "select coalesce(string_agg(decision || ':' || n, ',' order by decision), '')
              from (select decision, count(*) n from cronq.occurrences where schedule like '$1' group by decision) x"; }

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null

# --- 50 due schedules, 8 runners: one row per occurrence, with its reason ---
clear_of_minute_end 25
T=$(q "select date_trunc('minute', now())")
mins() { q "select '$T'::timestamptz + interval '$1 minutes'"; }
q "insert into cronq.schedules (name, cron, type, catchup, overlap, next_run_at)
   select g || i, '* * * * *', 'noop', case when g = 'l' then 'latest' else 'all' end,
          'skip', '$T'::timestamptz - case when g in ('s', 'l') then interval '5 minutes'
                                         when g = 'd' then interval '3 minutes'
                                         else interval '2 minutes' end
   from unnest(array['s', 'l', 'o', 'p', 'd']) g, generate_series(1, 10) i" >/dev/null
# o*: the last job still running
q "with j as (insert into cronq.jobs (type, status, locked_by, locked_until, started_at, attempts)
              select 'noop', 'running', 'elsewhere', now() + interval '1 hour', now() - interval '5 minutes', 1
              from generate_series(1, 10) returning id),
        n as (select id, row_number() over (order by id) i from j)
   update cronq.schedules s set last_job_id = n.id from n where s.name = 'o' || n.i" >/dev/null
# p*: paused; d*: disabled from 150 s before this minute to 10 s before it
as cronq_runner pause $(for i in $(seq 1 10); do printf 'schedule:p%s ' $i; done)
q "update cronq.schedules set enabled = false where name like 'd%'" >/dev/null
q "set session_replication_role = replica;
   update cronq.schedules set enabled = true, disabled_from = '$T'::timestamptz - interval '150 seconds',
       disabled_until = '$T'::timestamptz - interval '10 seconds' where name like 'd%'" >/dev/null
for i in $(seq 1 8); do run --queue none-such >"$T_DIR/r$i.out" 2>&1 & done
wait
eq "8 runners: quiet" "" "$(cat "$T_DIR"/r*.out)"
eq "catchup all: every occurrence enqueued, once" "enqueued:60" "$(ledger 's%')"
eq "catchup latest: the newest enqueued, the missed ones skipped by catch-up" "catchup:50,enqueued:10" "$(ledger 'l%')"
eq "catch-up keeps the newest" 10 \
    "$(q "select count(*) from cronq.occurrences where schedule like 'l%' and decision = 'enqueued' and fire_at = '$T'")"
eq "overlap skip: each occurrence skipped, naming the job still running" "overlap:30|30" \
    "$(ledger 'o%')|$(q "select count(*) from cronq.occurrences o join cronq.schedules s on s.name = o.schedule
                          where o.schedule like 'o%' and o.job_id = s.last_job_id")"
eq "paused: each occurrence skipped" "paused:30" "$(ledger 'p%')"
eq "a disabled spell: its occurrences skipped, those around it enqueued" "disabled:20,enqueued:20|t" \
    "$(ledger 'd%')|$(q "select bool_and(fire_at in ('$(mins -2)', '$(mins -1)')) from cronq.occurrences
                          where schedule like 'd%' and decision = 'disabled'")"
eq "one row per fire time since each schedule's next run (the lock's doing: no unique index)" "220|220" \
    "$(q "select count(*), count(distinct (schedule, fire_at)) from cronq.occurrences")"
eq "every enqueued row names its own job, by key and fire time" "0|90" \
    "$(q "select count(*) filter (where j.id is null or j.scheduled_for <> o.fire_at
                                  or j.idempotency_key <> 'schedule:' || o.schedule || ':' || to_char(o.fire_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')),
                 count(*)
          from cronq.occurrences o left join cronq.jobs j on j.id = o.job_id where o.decision = 'enqueued'")"
eq "no job without its ledger row" 0 \
    "$(q "select count(*) from cronq.jobs j where j.schedule is not null
          and not exists (select 1 from cronq.occurrences o where o.job_id = j.id and o.decision = 'enqueued')")"
n=$(q "select count(*) from cronq.occurrences")
run --queue none-such
eq "a wake with nothing due writes no ledger row" "$n" "$(q "select count(*) from cronq.occurrences")"

# --- why: each reason ----------------------------------------------------------
as cronq_runner why s1 --at "$(mins -3)" --json
eq "why: enqueued, not yet run" "enqueued|queued|true" \
    "$(q "select j->>'decision' || '|' || (j->>'job_status') || '|' || ((j->>'job_id')::bigint = (select job_id from cronq.occurrences where schedule = 's1' and fire_at = '$(mins -3)'))
          from (select '$OUT'::json j) x")"
run --queue default >/dev/null 2>&1
as cronq_runner why s1 --at "$(mins -3)"
match "why: ran" "^s1 .*: ran: job [0-9]+ succeeded at " "$OUT"
as cronq_runner why l1 --at "$(q "select '$T'::timestamptz - interval '3 minutes' + interval '20 seconds'")" --json
eq "why --at between fire times: the one before, skipped by catch-up" "$(q "select to_char('$(mins -3)'::timestamptz at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")|catchup" \
    "$(q "select j->>'fire_at' || '|' || (j->>'decision') from (select '$OUT'::json j) x")"
job=$(q "select last_job_id from cronq.schedules where name = 'o1'")
as cronq_runner why o1 --at "$(mins 0)"
match "why: overlap names the job still running" "skipped: job $job was still running \(overlap skip\)" "$OUT"
eq "the ledger keeps the blocking job's status then" "running:30" \
    "$(q "select string_agg(distinct detail, ',') || ':' || count(*) from cronq.occurrences where schedule like 'o%' and decision = 'overlap'")"
# A job waiting to be retried blocks too, and is not called running.
q "update cronq.jobs set status = 'failed', locked_by = null, locked_until = null, run_at = now() + interval '1 hour'
   where id = $job" >/dev/null
# (the same fire time again: what the wake decided of it forgotten)
q "update cronq.schedules set next_run_at = '$(mins 0)', decided_through = null where name = 'o1'" >/dev/null
run --queue none-such >/dev/null 2>&1
as cronq_runner why o1 --at "$(mins 0)"
match "why: overlap with a job waiting to be retried" "skipped: job $job was still waiting to be retried \(overlap skip\)" "$OUT"
as cronq_runner why p1 --at "$(mins 0)"
match "why: paused" "skipped: the schedule was paused" "$OUT"
as cronq_runner why d1 --at "$(mins -1)"
match "why: disabled, with the spell" "skipped: the schedule was disabled from .* to " "$OUT"
spell="$(q "select to_char(disabled_from at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') || ' to ' || to_char(disabled_until at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from cronq.schedules where name = 'd1'")"
q "set session_replication_role = replica;
   update cronq.schedules set disabled_from = now(), disabled_until = now() + interval '1 second' where name = 'd1'" >/dev/null
as cronq_runner why d1 --at "$(mins -1)"
match "why: disabled, the spell it was decided in, not the schedule's latest" "skipped: the schedule was disabled from $spell\$" "$OUT"
# Skipped by catch-up, enqueued since by a backfill: both said.
as cronq_runner backfill --schedule l1 --from "$(mins -3)" --to "$(mins -3)"
as cronq_runner why l1 --at "$(mins -3)" --json
eq "why: skipped by catch-up, then backfilled" "catchup|true|queued" \
    "$(q "select j->>'decision' || '|' || (j->>'reason' like 'skipped by catch-up%; enqueued since by a backfill: enqueued: job %') || '|' || (j->>'job_status') from (select '$OUT'::json j) x")"
# A job with the occurrence's key left by a former schedule of that name
# (written before this one was made) is not the schedule's: why does not
# present it as its backfill. One written since is, whoever the schedule's
# author has become since (an admin's edit makes the admin its author).
q "insert into cronq.jobs (type, enqueued_by, schedule, idempotency_key, run_at)
   values ('noop', 'app2', 'l1', 'schedule:l1:' || to_char(timestamptz '$(mins -4)' at time zone 'UTC',
           'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), now() + interval '1 year')" >/dev/null
q "set session_replication_role = replica;
   update cronq.jobs set created_at = (select created_at from cronq.schedules where name = 'l1') - interval '1 hour'
   where enqueued_by = 'app2' and idempotency_key like 'schedule:l1:%'" >/dev/null
eq "a former schedule's job holds the key of l1's occurrence" 1 \
    "$(q "select count(*) from cronq.jobs j join cronq.schedules s on s.name = 'l1' where j.enqueued_by = 'app2' and j.idempotency_key like 'schedule:l1:%' and j.created_at < s.created_at")"
as cronq_runner why l1 --at "$(mins -4)" --json
eq "why: a former schedule's job with the key is not the schedule's backfill" "catchup|false|" \
    "$(q "select j->>'decision' || '|' || (j->>'reason' like '%enqueued since%') || '|' || coalesce(j->>'job_status', '') from (select '$OUT'::json j) x")"
author=$(q "select created_by from cronq.schedules where name = 'l1'")
q "update cronq.schedules set created_by = 'oncall' where name = 'l1'" >/dev/null
as cronq_runner why l1 --at "$(mins -3)" --json
eq "why: the backfill is still found once the schedule's author changed" "catchup|true|queued" \
    "$(q "select j->>'decision' || '|' || (j->>'reason' like 'skipped by catch-up%; enqueued since by a backfill: enqueued: job %') || '|' || (j->>'job_status') from (select '$OUT'::json j) x")"
q "update cronq.schedules set created_by = '$author' where name = 'l1'" >/dev/null
as cronq_runner why s1 --at 2001-01-01
match "why: before the schedule existed" "the schedule did not exist yet" "$OUT"
# a backfill's occurrence: not a wake's decision, found by its key
as cronq_runner backfill --schedule s2 --from "$(mins -60)" --to "$(mins -58)"
as cronq_runner why s2 --at "$(mins -59)" --json
eq "why: a backfill's occurrence" "backfill|queued" \
    "$(q "select j->>'decision' || '|' || (j->>'job_status') from (select '$OUT'::json j) x")"
# disabled now
as cronq_runner schedule disable s3
q "update cronq.schedules set disabled_from = '$(mins -30)' where name = 's3'" >/dev/null
eq "disabled_from is not written by hand" t "$(q "select disabled_from > '$(mins -30)' from cronq.schedules where name = 's3'")"
q "set session_replication_role = replica; update cronq.schedules set disabled_from = '$(mins -30)', next_run_at = '$(mins -20)', created_at = '$(mins -60)' where name = 's3'" >/dev/null
as cronq_runner why s3 --at "$(mins -10)" --json
eq "why: disabled since" "disabled" "$(q "select '$OUT'::json->>'decision'")"
# no runner woke: a schedule due since 3 minutes, the last wake 10 minutes ago
as cronq_runner schedule add nobody '* * * * *' noop
q "set session_replication_role = replica;
   update cronq.schedules set next_run_at = '$(mins -3)', created_at = '$(mins -60)' where name = 'nobody';
   delete from cronq.wakes; insert into cronq.wakes (worker, host, started_at) values ('w', 'h', '$(mins -10)')" >/dev/null
as cronq_runner why nobody --at "$(mins -2)"
match "why: no runner woke" "not run: no runner woke between .* and now" "$OUT"
eq "why exits 0 with an answer" 0 "$RC"
# paused after an outage: the missed fire times are decided paused, and
# why says no runner woke when they were due, not only that it was paused
as cronq_runner schedule add late-pause '* * * * *' noop --catchup all
q "set session_replication_role = replica;
   update cronq.schedules set next_run_at = '$(mins -4)', created_at = '$(mins -60)' where name = 'late-pause';
   delete from cronq.wakes; insert into cronq.wakes (worker, host, started_at) values ('w', 'h', '$(mins -10)')" >/dev/null
as cronq_runner pause schedule:late-pause
run --queue none-such >/dev/null 2>&1
eq "paused after an outage: decided paused" paused \
    "$(q "select decision from cronq.occurrences where schedule = 'late-pause' and fire_at = '$(mins -3)'")"
as cronq_runner why late-pause --at "$(mins -3)"
match "why: paused after an outage says the gap too" "skipped: the schedule was paused; no runner woke between .* and " "$OUT"
as cronq_runner resume schedule:late-pause
# refused: the author lost the right to its jobs
q "grant cronq_exec to app2" >/dev/null
q "insert into cronq.schedules (name, cron, type, payload, created_by, next_run_at)
   values ('lost-exec', '* * * * *', 'exec', '{\"command\": \"true\"}', 'app2', '$(mins -1)')" >/dev/null
q "revoke cronq_exec from app2" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "refused: in the ledger, with why" "refused|true" \
    "$(q "select decision || '|' || (detail like '%may not enqueue exec jobs%') from cronq.occurrences where schedule = 'lost-exec' order by fire_at desc limit 1")"
as cronq_runner why lost-exec --at "$(q "select max(fire_at) from cronq.occurrences where schedule = 'lost-exec'")"
match "why: refused" "refused: its job could not be written: .*exec" "$OUT"
# The fire times after a refusal, until the wakes try again an hour later,
# are not decided: why says the jobs were refused (not a gap in the
# wakes). The refusal moved two minutes back, so that the fire time after
# it has passed.
q "update cronq.occurrences set fire_at = fire_at - interval '2 minutes' where schedule = 'lost-exec'" >/dev/null
q "update cronq.schedules set created_at = created_at - interval '1 hour' where name = 'lost-exec'" >/dev/null
after=$(q "select max(fire_at) + interval '1 minute' from cronq.occurrences where schedule = 'lost-exec'")
as cronq_runner why lost-exec --at "$after" --json
match "why: a fire time after a refusal" '"decision":"refused","reason":"not run: the schedule.s jobs were refused at .*may not enqueue exec jobs.*; the wakes try again at [0-9T:-]+Z"' "$OUT"
# A schedule whose jobs are refused never runs: status and check say so
# (critical), until a job of it is written again.
as cronq_runner check
eq "check: a refused schedule is critical" 2 "$RC"
match "check: names it and why" "1 schedule's jobs are refused \(lost-exec: .*may not enqueue exec jobs" "$OUT"
match "check: its perfdata" " refused=1" "$OUT"
as cronq_runner status --json
eq "status: refused_schedules, and the schedule's error" "1|true" \
    "$(q "select (d->>'refused_schedules') || '|' || exists (select 1 from json_array_elements(d->'schedules') x
                where x->>'name' = 'lost-exec' and x->>'error' like 'its jobs are refused: %may not enqueue exec jobs%')
          from (select \$j\$$OUT\$j\$::json d) t")"
as cronq_runner status --prometheus
match "status --prometheus: the refused schedule counted" "cronq_refused_schedules 1" "$OUT"
q "grant cronq_exec to app2" >/dev/null
q "update cronq.schedules set next_run_at = date_trunc('minute', now()), decided_through = null where name = 'lost-exec'" >/dev/null
run --queue none-such >/dev/null 2>&1
as cronq_runner check
eq "check: a job written again, no longer refused" 0 "$(grep -c refused <<<"$OUT")"
q "revoke cronq_exec from app2" >/dev/null
# expired: the occurrence's job not started by its deadline
as cronq_runner schedule add late '* * * * *' noop --start-deadline 30s --catchup all
q "update cronq.schedules set next_run_at = '$(mins -3)' where name = 'late'" >/dev/null
run --queue none-such >/dev/null 2>&1
run --queue none-such >/dev/null 2>&1
eq "expired: the ledger says so for the jobs swept" "t" \
    "$(q "select count(*) >= 2 and bool_and(j.status = 'cancelled' and j.error_code = 'expired')
          from cronq.occurrences o join cronq.jobs j on j.id = o.job_id where o.schedule = 'late' and o.decision = 'expired'")"
as cronq_runner why late --at "$(mins -3)"
match "why: expired" "expired before it started: job [0-9]+ was not started by its deadline" "$OUT"
# bad input
as cronq_runner why no-such
eq "why: no such schedule" "65|cronq: error: schedule \"no-such\" does not exist" "$RC|$ERR"
as cronq_runner why s1 --at yesterday-ish
eq "why: a bad time" 65 "$RC"
as cronq_runner why s1 --at infinity
eq "why: an infinite time" "65|cronq: error: invalid --at \"infinity\": not a finite time" "$RC|$ERR"
as cronq_runner why
eq "why: no name" 64 "$RC"

# --- who sees the ledger -------------------------------------------------------
as app schedule add mine '0 0 1 1 *' noop
q "update cronq.schedules set next_run_at = '$(mins -1)', cron = '* * * * *' where name = 'mine'" >/dev/null
q "update cronq.schedules set next_run_at = '$(mins -1)' where name = 'mine'" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "an owner sees its schedules' rows, only those" "t|t" \
    "$(asq app "select count(*) > 0 and bool_and(schedule = 'mine') from cronq.occurrences")|$(asq app2 "select count(*) > 0 and bool_and(schedule = 'lost-exec') from cronq.occurrences")"
out=$(asq app "delete from cronq.occurrences" 2>&1)
eq "an owner does not delete its ledger" "t" "$(q "select count(*) > 0 from cronq.occurrences where schedule = 'mine'")"
as app2 why mine
eq "why: another role's schedule does not exist for it" 65 "$RC"
as app why mine
eq "why: the owner asks" 0 "$RC"

# --- schedule run ----------------------------------------------------------------
q "update cronq.schedules set overlap = 'skip', cron = '0 0 1 1 *', next_run_at = now() + interval '1 year' where name = 'mine'" >/dev/null
q "update cronq.jobs set status = 'succeeded', finished_at = now() where schedule = 'mine'" >/dev/null
as app schedule run mine
id=$OUT
eq "schedule run: a job now, the owner's, with the manual key, the schedule's last job" "0|app|mine|true|$id" \
    "$RC|$(q "select enqueued_by || '|' || schedule || '|' || (idempotency_key = 'schedule:mine:manual:' || to_char(scheduled_for at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))
              from cronq.jobs where id = $id")|$(q "select last_job_id from cronq.schedules where name = 'mine'")"
n=$(q "select count(*) from cronq.jobs")
as app schedule run mine
eq "schedule run: overlap skip refuses while its job is unfinished, nothing written" "75|$n" "$RC|$(q "select count(*) from cronq.jobs")"
match "schedule run: says which job" "job $id is still unfinished \(overlap skip\)" "$ERR"
sleep 1
as app schedule run mine --force -v
eq "schedule run --force: one more job" "0|$((n + 1))" "$RC|$(q "select count(*) from cronq.jobs")"
match "schedule run -v: says it enqueued it" "enqueued job $OUT of schedule mine" "$ERR"
# A run in a second whose manual key a job already holds gets that job,
# and a person is told so. The keys of the next 30 seconds are taken
# first, as runs by hand of those seconds would have (by a superuser: a
# role may not write the key of a second not yet come), so that the run
# meets one however slow the build.
n=$(q "select count(*) from cronq.jobs"); top=$(q "select max(id) from cronq.jobs")
q "insert into cronq.jobs (type, idempotency_key, schedule, scheduled_for, enqueued_by)
         select 'noop', 'schedule:mine:manual:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'mine', t, 'app'
         from generate_series(date_trunc('second', now()), date_trunc('second', now()) + interval '30 seconds',
                              interval '1 second') t" >/dev/null
m=$(q "select count(*) from cronq.jobs")
as app schedule run mine --force
eq "schedule run --force in a second already run: that second's job, no more" "0|$m|schedule:mine:manual:" \
    "$RC|$(q "select count(*) from cronq.jobs")|$(q "select left(idempotency_key, 21) from cronq.jobs where id = ${OUT:-0}")"
match "schedule run: warns that the job is the earlier run's (not run -v only)" "^cronq: warning: job $OUT of schedule mine was enqueued by a run in this same second" "$ERR"
q "delete from cronq.jobs where id > $top" >/dev/null
eq "(those keys given back)" "$n" "$(q "select count(*) from cronq.jobs")"
n=$((n - 1))
as app2 schedule run mine --force
eq "schedule run: another role's schedule does not exist for it, nothing written" "65|$((n + 1))" "$RC|$(q "select count(*) from cronq.jobs")"
sleep 1
as oncall schedule run mine --force
eq "schedule run by an admin: the job is the author's" "0|app" "$RC|$(q "select enqueued_by from cronq.jobs where id = ${OUT:-0}")"
q "set role app2; select cronq.run_schedule('mine', true)" >/dev/null 2>&1
eq "cronq.run_schedule() under SET ROLE to another role: refused" "$((n + 2))" "$(q "select count(*) from cronq.jobs")"
# Who calls is current_user, also inside another role's SECURITY DEFINER
# function that an admin's session runs (schema 39: the session's role was
# read, and app2's function ran app's schedule as the admin).
q "create schema app2_s authorization app2" >/dev/null
asq app2 "create function app2_s.runs(s text) returns bigint language sql security definer
          set search_path = pg_catalog as \$\$ select cronq.run_schedule(s, true) \$\$;
          grant usage on schema app2_s to oncall; grant execute on function app2_s.runs(text) to oncall" >/dev/null
out=$(asq oncall "select app2_s.runs('mine')" 2>&1)
eq "another role's SECURITY DEFINER function run by an admin: refused as that role, nothing written" "$((n + 2))|t" \
    "$(q "select count(*) from cronq.jobs")|$([[ $out == *'schedule "mine" does not exist'* ]] && echo t || echo "f: $out")"
asq app2 "update cronq.schedules set run_now = 'force' where name = 'mine'" >/dev/null 2>&1
eq "run_now of another role's schedule: no row, nothing written" "$((n + 2))" "$(q "select count(*) from cronq.jobs")"
out=$(asq app "update cronq.schedules set run_now = 'twice' where name = 'mine'" 2>&1)
eq "run_now other than run or force: refused, nothing written" "$((n + 2))|t" \
    "$(q "select count(*) from cronq.jobs")|$([[ $out == *'run_now must be run or force'* ]] && echo t || echo "f: $out")"
sleep 1
asq app "update cronq.schedules set run_now = 'force' where name = 'mine'" >/dev/null
eq "run_now by the author: its job, and run_now is never stored" "$((n + 3))|0|app" \
    "$(q "select count(*) from cronq.jobs")|$(q "select count(*) from cronq.schedules where run_now is not null")|$(q "select enqueued_by from cronq.jobs where id = (select last_job_id from cronq.schedules where name = 'mine')")"
n=$((n + 1))
# the manual key is the author's alone
out=$(asq app2 "insert into cronq.jobs (type, idempotency_key, schedule, scheduled_for)
                values ('noop', 'schedule:mine:manual:2030-01-01T00:00:00Z', 'mine', '2030-01-01T00:00:00Z')" 2>&1)
eq "another role cannot write a schedule's manual key" "$((n + 2))" "$(q "select count(*) from cronq.jobs")"
eq "cronq.run_schedule() from SQL, as the owner" "app" \
    "$(q "select enqueued_by from cronq.jobs where id = $(asq app "select cronq.run_schedule('mine', true)")")"
as app schedule run
eq "schedule run: no name" 64 "$RC"

# no schedule name ends in ":manual": its keys would be another's runs by hand
n=$(q "select count(*) from cronq.schedules")
as app2 schedule add mine:manual '* * * * *' noop
eq "a name ending in :manual is refused (CLI), nothing written" "65|$n" "$RC|$(q "select count(*) from cronq.schedules")"
asq app2 "insert into cronq.schedules (name, cron, type) values ('mine:manual', '* * * * *', 'noop')" >/dev/null 2>&1
asq app2 "select cronq.schedule('mine:manual', '* * * * *', 'noop')" >/dev/null 2>&1
eq "a name ending in :manual is refused (SQL), nothing written" "$n" "$(q "select count(*) from cronq.schedules")"
# a refused run_schedule locks nothing: another role's call must not hold the
# schedule from the wakes
(printf '%s\n' "begin;" "select cronq.run_schedule('mine', true);" "select pg_sleep(4);" "rollback;" \
    | PGUSER=app2 "$PSQL" -XAtq >/dev/null 2>&1 7>&- &)
sleep 1.5
eq "another role's refused run leaves the schedule unlocked" 1 \
    "$(q "select count(*) from (select 1 from cronq.schedules where name = 'mine' for update skip locked) x")"
# only a job's author changes what it runs
jid=$(PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 1}' --in 1h)
asq oncall "update cronq.jobs set payload = '{\"seconds\": 2}' where id = $jid" >/dev/null 2>&1
asq oncall "update cronq.jobs set type = 'noop', payload = '{}' where id = $jid" >/dev/null 2>&1
eq "an admin cannot rewrite another role's job" '{"seconds": 1}|sleep|app' \
    "$(q "select payload::text || '|' || type || '|' || enqueued_by from cronq.jobs where id = $jid")"
PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 1}' --in 1h --unique-key "mine-$jid" >/dev/null
uj=$(q "select id from cronq.jobs where unique_key = 'mine-$jid'")
PGUSER=app "$CRONQ" enqueue sleep '{"seconds": 2}' --in 1h --unique-key "mine-$jid" --replace >/dev/null 2>&1
eq "its author can (enqueue --replace)" '{"seconds": 2}' "$(q "select payload::text from cronq.jobs where id = $uj")"

# an occurrence whose key a job already held (a backfill's): recorded, with that job
as cronq_runner schedule add bf '* * * * *' noop --catchup all
f=$(q "select date_trunc('minute', now()) - interval '1 minute'")
as cronq_runner backfill --schedule bf --from "$f" --to "$f"
bj=$(q "select id from cronq.jobs where schedule = 'bf'")
q "update cronq.schedules set next_run_at = '$f' where name = 'bf'" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "a held key's occurrence: enqueued, naming the job that holds it" "enqueued|$bj|already enqueued" \
    "$(q "select decision || '|' || job_id || '|' || detail from cronq.occurrences where schedule = 'bf' and fire_at = '$f'")"
# a key held by another role's job, written for a schedule of that name
# since removed: refused, and nothing of that job shown
f2=$(q "select date_trunc('minute', now()) - interval '2 minutes'")
asq app2 "select cronq.schedule('reused', '* * * * *', 'noop')" >/dev/null
asq app2 "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key, run_at)
          values ('noop', 'reused', '$f2', 'schedule:reused:' || to_char('$f2'::timestamptz at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), now() + interval '1 day')" >/dev/null
asq app2 "select cronq.unschedule('reused')" >/dev/null
asq app "select cronq.schedule('reused', '* * * * *', 'noop', catchup => 'all')" >/dev/null
q "update cronq.schedules set next_run_at = '$f2' where name = 'reused'" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "another role's job holding the key: refused, its id not shown" "refused||true" \
    "$(asq app "select decision || '|' || coalesce(job_id::text, '') || '|' || (detail like '%not this schedule''s%') from cronq.occurrences where schedule = 'reused' and fire_at = '$f2'")"
# keep has a bound; an @every the runner could not read is refused at once
as app schedule add hoard '* * * * *' noop --keep 10001
eq "--keep above 10,000 refused" 64 "$RC"
asq app "select cronq.schedule('hoard', '* * * * *', 'noop', keep => 10001)" >/dev/null 2>&1
asq app "select cronq.schedule('longevery', '@every ' || repeat('0', 70) || '5m', 'noop')" >/dev/null 2>&1
eq "keep => 10001 and a 72-character @every duration refused by SQL" 0 \
    "$(q "select count(*) from cronq.schedules where name in ('hoard', 'longevery')")"

# an author's transaction writing its schedule's next occurrence key, not
# committed, holds that schedule's row (sql/0021): the wake passes over it
# (decides nothing, says nothing) and enqueues the others; once that
# transaction is gone the next wake enqueues it
f3=$(q "select date_trunc('minute', now()) - interval '1 minute'")
asq app "select cronq.schedule('stall', '* * * * *', 'noop', catchup => 'all')" >/dev/null
as cronq_runner schedule add bystander '* * * * *' noop --catchup all
q "update cronq.schedules set next_run_at = '$f3' where name in ('stall', 'bystander')" >/dev/null
hold_key() {   # ROLE SCHEDULE: that role writes the schedule's key at $f3 and holds it 20 s
    (printf '%s\n' "begin;" "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key)
       values ('noop', '$2', '$f3', 'schedule:$2:' || to_char('$f3'::timestamptz at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'));" \
        "select pg_sleep(20);" "rollback;" | PGUSER=$1 "$PSQL" -XAtq >/dev/null 2>&1 7>&- &)
    wait_for "holder" 10 "select exists (select from pg_stat_activity where usename = '$1' and wait_event = 'PgSleep')" \
        || fail "$1 holds a key of $2"
}
hold_key app stall
run --queue none-such >"$T_DIR/stall.out" 2>&1
eq "an author's uncommitted key: the wake ends 0" 0 "$?"
eq "the bystander enqueued, the held one passed over, said nothing" "t||t|0" \
    "$(q "select count(*) >= 1 from cronq.jobs where schedule = 'bystander'")|$(q "select string_agg(distinct decision, ',') from cronq.occurrences where schedule = 'stall'")|$(q "select next_run_at = '$f3' from cronq.schedules where name = 'stall'")|$(grep -c 'stall' "$T_DIR/stall.out")"
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'app' and wait_event = 'PgSleep'" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "its transaction gone, the next wake enqueues it" "enqueued" \
    "$(q "select string_agg(distinct decision, ',') from cronq.occurrences where schedule = 'stall' and fire_at = '$f3'")"
# the owner's (no row-level security, no lock of the schedule) holds only
# that schedule back too: the others are enqueued, the wake ends in
# seconds, that schedule refused (and looked at an hour on)
as cronq_runner schedule add stall2 '* * * * *' noop --catchup all
q "update cronq.schedules set next_run_at = '$f3' where name in ('stall2', 'bystander')" >/dev/null
hold_key cronq_runner stall2
t0=$(date +%s)
run --queue none-such >"$T_DIR/stall.out" 2>&1
eq "a stalled schedule: the wake ends 0 within seconds" "0|1" "$?|$(( $(date +%s) - t0 < 15 ))"
eq "the bystander enqueued, the stalled one refused, said once" "t|refused|t|1" \
    "$(q "select count(*) >= 1 from cronq.jobs where schedule = 'bystander'")|$(q "select string_agg(distinct decision, ',') from cronq.occurrences where schedule = 'stall2'")|$(q "select next_run_at > now() + interval '50 minutes' from cronq.schedules where name = 'stall2'")|$(grep -c 'schedule "stall2" cannot run: a job with one of its occurrence keys is being written' "$T_DIR/stall.out")"
q "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'cronq_runner' and wait_event = 'PgSleep'" >/dev/null

# a second disable before a wake: one spell, from the first
as cronq_runner schedule disable bf
from=$(q "select disabled_from from cronq.schedules where name = 'bf'")
q "set session_replication_role = replica; update cronq.schedules set next_run_at = now() - interval '1 minute' where name = 'bf'" >/dev/null
as cronq_runner schedule enable bf
as cronq_runner schedule disable bf
eq "disabled again before a wake: the spell goes on from its start" "t|t" \
    "$(q "select disabled_from = '$from', disabled_until is null from cronq.schedules where name = 'bf'")"

# --- a schedule written with SQL is planned from that write, not the wake ------
# Its updated_at set back (as if the write were 2.5 minutes before the wake):
# the fire times after the write are decided at the next wake, none before it.
asq app "select cronq.schedule('sqlmade', '* * * * *', 'noop', catchup => 'all')" >/dev/null
asq app "select cronq.schedule('sqllate', '* * * * *', 'noop')" >/dev/null
m=$(q "select date_trunc('minute', now())")
q "set session_replication_role = replica; update cronq.schedules set updated_at = timestamptz '$m' - interval '150 seconds'
   where name in ('sqlmade', 'sqllate')" >/dev/null
run --queue none-such >/dev/null 2>&1
utc() { q "select to_char((timestamptz '$m' + interval '$1 seconds') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"; }
eq "catchup all: each fire time since the write enqueued, none before it" "3|0" \
    "$(q "select count(*) from cronq.jobs where schedule = 'sqlmade'
          and idempotency_key in ('schedule:sqlmade:$(utc -120)', 'schedule:sqlmade:$(utc -60)', 'schedule:sqlmade:$(utc 0)')")|$(q "select count(*) from cronq.jobs where schedule = 'sqlmade' and scheduled_for < timestamptz '$m' - interval '150 seconds'")"
eq "catchup latest: the newest enqueued, the two before it skipped by catch-up" "1|2" \
    "$(q "select count(*) from cronq.jobs where schedule = 'sqllate' and scheduled_for >= timestamptz '$m'")|$(q "select count(*) from cronq.occurrences where schedule = 'sqllate' and decision = 'catchup'
          and fire_at in (timestamptz '$m' - interval '120 seconds', timestamptz '$m' - interval '60 seconds')")"

# A next run set to null plans from that write (schema 40 stamps updated_at;
# helper-79: the row kept an old updated_at and the wake replayed the fire
# times decided long before), and never from before the last enqueue.
asq app "select cronq.schedule('nulled', '* * * * *', 'noop', catchup => 'all')" >/dev/null
q "set session_replication_role = replica; update cronq.schedules set updated_at = now() - interval '30 minutes',
   next_run_at = date_trunc('minute', now()) + interval '1 minute' where name = 'nulled'" >/dev/null
asq app "update cronq.schedules set next_run_at = null where name = 'nulled'" >/dev/null
eq "next_run_at set to null stamps updated_at with the clock" t \
    "$(q "select updated_at > now() - interval '1 minute' from cronq.schedules where name = 'nulled'")"
run --queue none-such >/dev/null 2>&1
eq "the wake replays nothing before that write" 0 \
    "$(q "select count(*) from cronq.jobs where schedule = 'nulled' and scheduled_for < now() - interval '2 minutes'")"
# A run by hand of an unplanned schedule keeps the moment it was left so
# (helper-80: the run restamped it, and the fire time before it was lost).
asq app "select cronq.schedule('byhand', '* * * * *', 'noop')" >/dev/null
q "set session_replication_role = replica; update cronq.schedules set updated_at = now() - interval '10 minutes' where name = 'byhand'" >/dev/null
before=$(q "select updated_at from cronq.schedules where name = 'byhand'")
asq app "select cronq.run_schedule('byhand')" >/dev/null
eq "a run by hand leaves an unplanned schedule's updated_at" t "$(q "select updated_at = '$before' from cronq.schedules where name = 'byhand'")"
asq app "update cronq.schedules set payload = '{}' where name = 'byhand'" >/dev/null
eq "a change of it stamps it" t "$(q "select updated_at > now() - interval '1 minute' from cronq.schedules where name = 'byhand'")"
asq app "select cronq.schedule('enq-bound', '* * * * *', 'noop', catchup => 'all')" >/dev/null
q "set session_replication_role = replica; update cronq.schedules set updated_at = now() - interval '30 minutes',
   last_enqueued_at = now() - interval '150 seconds', next_run_at = null where name = 'enq-bound'" >/dev/null
run --queue none-such >/dev/null 2>&1
eq "an unplanned schedule is planned no earlier than its last enqueue" "0|t" \
    "$(q "select count(*) from cronq.jobs where schedule = 'enq-bound' and scheduled_for < now() - interval '151 seconds'")|$(q "select count(*) between 2 and 3 from cronq.jobs where schedule = 'enq-bound'")"

# --- purge bounds the ledger ------------------------------------------------------
q "update cronq.occurrences set fire_at = fire_at - interval '30 days' where schedule in ('l1', 's4')" >/dev/null
q "update cronq.jobs set status = 'succeeded', finished_at = now() - interval '30 days', started_at = now() - interval '30 days'
   where schedule = 'l1'" >/dev/null
before=$(q "select count(*) from cronq.occurrences where schedule = 's4'")
as cronq_runner purge --older-than 14d
eq "purge: the old rows whose job is gone go (catch-up skips and the purged job's)" "0" \
    "$(q "select count(*) from cronq.occurrences where schedule = 'l1'")"
eq "purge: an old row whose job is still there stays" "$before" "$(q "select count(*) from cronq.occurrences where schedule = 's4'")"
eq "purge: young rows stay" "t" "$(q "select count(*) > 0 from cronq.occurrences where schedule = 'l2'")"
as cronq_runner schedule remove l2
eq "a schedule removed takes its ledger with it" 0 "$(q "select count(*) from cronq.occurrences where schedule = 'l2'")"

# --- why prints its author's words, not its control characters ---------------
asq app "select cronq.schedule('loud', '* * * * *', 'fail',
    jsonb_build_object('message', E'boom \\u001b]0;PWNED\\u0007\\u001b[2J', 'permanent', true))" >/dev/null
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) where name = 'loud'" >/dev/null
run --queue default >/dev/null 2>&1
as cronq_runner why loud
eq "why: the job's error shown with its control characters escaped" "0|0|1" \
    "$RC|$(printf '%s' "$OUT" | tr -d -c '\033\007' | wc -c)|$(grep -c 'boom \\x1b\]0;PWNED\\x07\\x1b\[2J' <<<"$OUT")"
done_testing
