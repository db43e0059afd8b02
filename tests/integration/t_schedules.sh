#!/usr/bin/env bash
# schedules: the CLI, exactly-once materialisation under concurrent runners,
# catchup and overlap policies, and `schedule next` without a database.
. "$(dirname "$0")/lib.sh"

# schedule next needs no database at all.
CRONQ_DATABASE_URL="host=/nonexistent" cronq schedule next '0 2 * * *' --tz America/New_York --from 2026-03-07T12:00:00Z --count 2
expect "next: spring-forward fixed time (spec example)" 0 $'2026-03-08T07:00:00Z\n2026-03-09T06:00:00Z' ""
cronq schedule next '30 1 * * *' --tz America/New_York --from 2026-10-31T12:00:00Z --count 2
expect "next: fall-back fixed time fires once (spec example)" 0 $'2026-11-01T05:30:00Z\n2026-11-02T06:30:00Z' ""
cronq schedule next '0 * * * *' --tz America/New_York --from 2026-11-01T04:30:00Z --count 3
expect "next: hourly fires in both passes (spec example)" 0 $'2026-11-01T05:00:00Z\n2026-11-01T06:00:00Z\n2026-11-01T07:00:00Z' ""
cronq schedule next '30 * * * *' --tz Europe/Paris --from 2026-03-29T00:00:00Z --count 2
expect "next: Paris spring forward skips the missing hour" 0 $'2026-03-29T00:30:00Z\n2026-03-29T01:30:00Z' ""
cronq schedule next '@hourly' --from '2026-01-01 10:15'
expect "next: default count 5, zone-less --from is UTC" 0 $'2026-01-01T11:00:00Z\n2026-01-01T12:00:00Z\n2026-01-01T13:00:00Z\n2026-01-01T14:00:00Z\n2026-01-01T15:00:00Z' ""
cronq schedule next '61 * * * *'
expect "next: bad minute" 65 "" 'cronq: error: invalid cron expression "61 * * * *": minute: 61 is out of range 0-59'
cronq schedule next '* * * *'
expect_rc_err "next: four fields" 65 '^cronq: error: invalid cron expression "\* \* \* \*": '
cronq schedule next '@reboot'
expect_rc_err "next: @reboot" 65 '^cronq: error: invalid cron expression "@reboot": '
cronq schedule next '0 0 * * *' --tz Mars/Olympus_Mons
expect_rc_err "next: unknown zone" 65 'Mars/Olympus_Mons'
# A TIME that is not RFC 3339: read by the database, as every command reads one.
cronq schedule next '0 0 * * *' --from 'Jan 2 2026 10:00' --count 1
expect "next: a PostgreSQL time form (no zone: UTC), read by the database" 0 '2026-01-03T00:00:00Z' ""
cronq schedule next '@every 90m' --anchor 'January 1, 2026 00:20' --from '2026-01-01 01:00+00' --count 1
expect "next: --anchor in a PostgreSQL form" 0 '2026-01-01T01:50:00Z' ""
cronq schedule next '0 0 * * *' --from 'next tuesday-ish'
expect "next: bad --from" 65 "" 'cronq: error: invalid value "next tuesday-ish" for --from: invalid input syntax for type timestamp with time zone: "next tuesday-ish"'
cronq schedule next '0 0 * * *' --from infinity
expect "next: infinite --from" 65 "" 'cronq: error: invalid value "infinity" for --from: time "infinity" is not finite'
CRONQ_DATABASE_URL="host=/nonexistent" cronq schedule next '0 0 * * *' --from yesterday
expect_rc_err "next: a non-RFC 3339 --from and no database" 65 '^cronq: error: invalid value "yesterday" for --from: not RFC 3339 \(such as 2026-03-08T10:00:00Z\), and no database to read it as PostgreSQL.s timestamptz
cronq: detail: could not connect to database: '
cronq schedule next '0 0 30 2 *'
expect "next: never fires" 65 "" 'cronq: error: cron expression "0 0 30 2 *" never fires'
cronq schedule frob
expect "unknown subcommand" 64 "" $'cronq: error: unrecognized subcommand "frob"\nTry "cronq schedule --help" for more information.'
cronq schedule list --catchup all
expect "option of another subcommand" 64 "" $'cronq: error: unrecognized option "--catchup"\nTry "cronq schedule list --help" for more information.'

migrate
count() { q "select count(*) from cronq.schedules where name <> 'cronq-purge'"; }

# add: validated before anything is written.
cronq schedule add 'bad name!' '* * * * *' noop
expect "bad name" 65 "" 'cronq: error: invalid schedule name "bad name!": use 1 to 200 letters, digits and _.:@-'
cronq schedule add s1 '* * * 13 *' noop
expect "bad month" 65 "" 'cronq: error: invalid cron expression "* * * 13 *": month: 13 is out of range 1-12'
cronq schedule add s1 '* * * * *' nop
expect "unknown task" 65 "" 'cronq: error: unrecognized task type "nop"'
cronq schedule add s1 '* * * * *' sleep '{}'
expect "bad payload" 65 "" 'cronq: error: invalid payload for task "sleep": "seconds" is required'
cronq schedule add s1 '* * * * *' noop --tz Nowhere/Land
expect_rc_err "bad zone" 65 'Nowhere/Land'
cronq schedule add s1 '* * * * *' noop --catchup sometimes
expect "bad catchup" 64 "" 'cronq: error: invalid value "sometimes" for --catchup: must be latest, all or skip'
eq "nothing written by bad adds" 0 "$(count)"

# The table's own name rule (schedules_name_check, sql/0028), for a row
# written past the CLI: 1 to 200 of A-Z a-z 0-9 _ . : @ -, characters.
name_ok() {
    "$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, type, created_by) values (\$\$$1\$\$, '0 0 1 1 *', 'noop', 'postgres')" \
        >/dev/null 2>&1 && q "delete from cronq.schedules where name = \$\$$1\$\$" >/dev/null && echo ok || echo refused
}
long200=$(printf 'a%.0s' $(seq 200))
eq "table: a name of 200 characters" ok "$(name_ok "$long200")"
eq "table: a name of 201 characters" refused "$(name_ok "${long200}b")"
eq "table: a name of every allowed character" ok "$(name_ok "Az09_.:@-")"
eq "table: an empty name" refused "$(name_ok "")"
eq "table: a name with a space" refused "$(name_ok "a b")"
eq "table: a name with a newline" refused "$(name_ok $'a\nb')"
eq "table: a name with a non-ASCII letter" refused "$(name_ok "café")"
eq "table: nothing written by the refused names" 0 "$(count)"
out=$("$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, type, payload) values ('x', '* * * * *', 'sleep', '{}')" 2>&1)
match "the database refuses a bad payload too" 'ERROR:  invalid payload for task "sleep"' "$out"

cronq schedule add nightly '30 2 * * *' noop --tz Europe/Paris --queue maint --priority 3 --max-attempts 2 --timeout 5m
expect "add" 0 "" ""
eq "stored with next_run_at in the future" "30 2 * * *|Europe/Paris|maint|3|2|00:05:00|latest|skip|t|t" \
    "$(q "select cron, timezone, queue, priority, max_attempts, timeout, catchup, overlap, enabled, next_run_at > now() from cronq.schedules where name = 'nightly'")"
cronq schedule add nightly '0 3 * * *' noop
expect "add of an existing name" 65 "" $'cronq: error: schedule "nightly" already exists\ncronq: hint: Use --replace to replace it, or "cronq schedule remove nightly" first.'
cronq schedule add nightly '0 3 * * *' noop --replace
eq "--replace replaces" "0 3 * * *|UTC|default" "$(q "select cron, timezone, queue from cronq.schedules where name = 'nightly'")"
cronq schedule list
match "list shows it" 'nightly +0 3 \* \* \* +UTC +noop +default +yes +20[0-9-]+T03:00:00Z +-' "$OUT"
cronq schedule show nightly --json
match "show --json" '"name":"nightly"' "$OUT"
eq "show --json: compact, one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
cronq schedule add j1 '0 4 * * *' noop --timeout '1.5 hours' --start-deadline '90 seconds' --spread 0.5m
expect "add with durations in words and decimals" 0 "" ""
cronq schedule show j1 --json
eq "show --json: durations in seconds, times RFC 3339 UTC" "5400|90|30|t|t" \
    "$(q "select j->>'timeout', j->>'start_deadline', j->>'spread', j->>'next_run_at' ~ '^[0-9-]{10}T[0-9:]{8}Z$', json_typeof(j->'timeout') = 'number' from (select '$OUT'::json j) x")"
cronq schedule show j1
match "show: durations for people" $'timeout +1h30m\nenabled' "$OUT"
cronq schedule list --json
eq "list --json: [, one compact schedule a line, ]" "[|t|]|$(( $(count) + 1 ))" \
    "$(head -1 <<<"$OUT")|$(sed '1d;$d' <<<"$OUT" | grep -vc '^{"name":.*},\?$' | sed 's/^0$/t/')|$(tail -1 <<<"$OUT")|$(sed '1d;$d' <<<"$OUT" | wc -l)"
cronq schedule remove j1
cronq schedule show nope
expect "show of a missing schedule" 65 "" 'cronq: error: schedule "nope" does not exist'
cronq schedule disable nightly
eq "disable" f "$(q "select enabled from cronq.schedules where name = 'nightly'")"
eq "disable: the spell starts" t "$(q "select disabled_from > now() - interval '1 minute' and disabled_until is null from cronq.schedules where name = 'nightly'")"
# disabled three days ago (triggers off: the spell is not written by hand)
q "set session_replication_role = replica;
   update cronq.schedules set next_run_at = now() - interval '3 days', disabled_from = now() - interval '3 days'
   where name = 'nightly'" >/dev/null
cronq schedule enable nightly
eq "enable: the spell ends" "t|t" "$(q "select enabled, disabled_until > now() - interval '1 minute' from cronq.schedules where name = 'nightly'")"
"$CRONQ" run --queue none-such
eq "no catch-up of the disabled spell: its fire times skipped, recorded as disabled" "0|t|3|disabled" \
    "$(q "select count(*) from cronq.jobs where schedule = 'nightly'")|$(q "select next_run_at > now() from cronq.schedules where name = 'nightly'")|$(q "select count(*) || '|' || string_agg(distinct decision, ',') from cronq.occurrences where schedule = 'nightly'")"
cronq schedule remove nightly
eq "remove" 0 "$(count)"
cronq schedule remove nightly
expect "remove of a missing schedule" 65 "" 'cronq: error: schedule "nightly" does not exist'

# 8 runners started at once over 200 due schedules: one job per occurrence.
for i in $(seq 1 200); do echo "{\"name\":\"s$i\"}"; done >/dev/null
clear_of_minute_end 20
q "insert into cronq.schedules (name, cron, type, next_run_at, catchup)
   select 's' || i, '*/5 * * * *', 'noop', date_trunc('minute', now()) - interval '30 minutes', 'all'
   from generate_series(1, 200) i"
expected=$(q "select count(*) from generate_series(date_trunc('minute', now()) - interval '30 minutes', now(), interval '1 minute') t where extract(minute from t)::int % 5 = 0")
for i in $(seq 1 8); do "$CRONQ" run --queue none-such >"$T_DIR/r$i.out" 2>&1 & done
wait
eq "8 runners: quiet" "" "$(cat "$T_DIR"/r*.out)"
eq "8 runners: each schedule got each occurrence once" "$((200 * expected))|$((200 * expected))|200" \
    "$(q "select count(*), count(distinct idempotency_key), count(distinct schedule) from cronq.jobs")"
eq "8 runners: every job carries its schedule and fire time" 0 \
    "$(q "select count(*) from cronq.jobs where schedule is null or scheduled_for is null or idempotency_key <> 'schedule:' || schedule || ':' || to_char(scheduled_for at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")"
eq "8 runners: next_run_at moved to the future" 0 "$(q "select count(*) from cronq.schedules where next_run_at <= now()")"
"$CRONQ" run --queue none-such
eq "a second wave adds nothing" "$((200 * expected))" "$(q "select count(*) from cronq.jobs")"
q "delete from cronq.schedules; delete from cronq.jobs"

# Catch-up after a two-hour outage. The expression fires at minute M of
# every hour, M half an hour from now, so the newest missed occurrence is
# about 30 minutes old (long missed for "skip") and 2 occurrences were missed.
m=$(q "select (extract(minute from now())::int + 30) % 60")
for policy in latest all skip; do
    "$CRONQ" schedule add "c-$policy" "$m * * * *" noop --catchup $policy
done
q "update cronq.schedules set next_run_at = now() - interval '2 hours'"
missed=$(q "select count(*) from generate_series(date_trunc('minute', now() - interval '2 hours') + interval '1 minute', now(), interval '1 minute') t where extract(minute from t) = $m")
"$CRONQ" run --queue none-such
eq "catchup latest enqueues 1" 1 "$(q "select count(*) from cronq.jobs where schedule = 'c-latest'")"
eq "catchup latest: the newest occurrence" t "$(q "select max(scheduled_for) > now() - interval '61 minutes' from cronq.jobs where schedule = 'c-latest'")"
eq "catchup all enqueues every missed occurrence ($missed)" "$missed" "$(q "select count(*) from cronq.jobs where schedule = 'c-all'")"
eq "catchup skip enqueues none" 0 "$(q "select count(*) from cronq.jobs where schedule = 'c-skip'")"
eq "all three moved on" 0 "$(q "select count(*) from cronq.schedules where next_run_at <= now()")"

# catchup all is capped at 100 (the newest).
"$CRONQ" schedule add c-cap '* * * * *' noop --catchup all
q "update cronq.schedules set next_run_at = now() - interval '1 day' where name = 'c-cap'"
"$CRONQ" run --queue none-such
eq "catchup all is capped at 100, the newest" "100|t" "$(q "select count(*), max(scheduled_for) > now() - interval '2 minutes' from cronq.jobs where schedule = 'c-cap'")"

# overlap skip: nothing new while the previous job is unfinished. Each round
# points the schedule at an hourly minute M = now - k×10 minutes, so its
# newest occurrence is a fresh one, k×10 minutes ago.
q "delete from cronq.schedules; delete from cronq.jobs"
"$CRONQ" schedule add busy '* * * * *' sleep '{"seconds": 1}'
"$CRONQ" schedule add free '* * * * *' sleep '{"seconds": 1}' --overlap allow
# (Each round's fire time is older than the last one's: what the wakes
# decided is forgotten, or none would be decided.)
round() {
    q "update cronq.schedules set cron = extract(minute from now() - interval '$1 minutes')::int || ' * * * *', next_run_at = now() - interval '59 minutes', decided_through = null"
}
round 10
"$CRONQ" run --queue none-such
eq "first occurrence enqueued for both" "1|1" "$(q "select count(*) filter (where schedule = 'busy'), count(*) filter (where schedule = 'free') from cronq.jobs")"
round 20
"$CRONQ" run --queue none-such -v 2>"$T_DIR/err"
eq "overlap skip: nothing new while the previous job is queued; allow: a second job" "1|2" \
    "$(q "select count(*) filter (where schedule = 'busy'), count(*) filter (where schedule = 'free') from cronq.jobs")"
match "the skip is logged" 'schedule "busy": previous job still unfinished' "$(cat "$T_DIR/err")"
# Running, and failed awaiting its retry, are unfinished too.
busy_job=$(q "select last_job_id from cronq.schedules where name = 'busy'")
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'elsewhere', locked_until = now() + interval '1 hour' where id = $busy_job"
round 23
"$CRONQ" run --queue none-such
eq "overlap skip: nothing new while the previous job is running" 1 "$(q "select count(*) from cronq.jobs where schedule = 'busy'")"
q "update cronq.jobs set status = 'failed', locked_by = null, locked_until = null, run_at = now() + interval '1 hour' where id = $busy_job"
round 26
"$CRONQ" run --queue none-such
eq "overlap skip: nothing new while the previous job waits for its retry" 1 "$(q "select count(*) from cronq.jobs where schedule = 'busy'")"
q "update cronq.jobs set status = 'queued', attempts = 0, run_at = now() where id = $busy_job"
"$CRONQ" run
round 30
"$CRONQ" run --queue none-such
eq "once the previous job finished, the next occurrence is enqueued" 2 "$(q "select count(*) from cronq.jobs where schedule = 'busy'")"

# An occurrence is enqueued once, however often it is looked at: with its
# schedule rewound (a runner that read an old next_run_at, an operator's
# edit), the fire time decided is not decided again (schema 41), and, with
# that record gone too, the same fire time finds its key taken and adds
# nothing. (Its jobs are finished first, so that the overlap policy does
# not hide the key.)
q "update cronq.jobs set status = 'succeeded', finished_at = now() where status = 'queued'"
ledger=$(q "select count(*) from cronq.occurrences where schedule = 'busy'")
q "update cronq.schedules set next_run_at = now() - interval '59 minutes' where name = 'busy'"
"$CRONQ" run --queue none-such
eq "a rewound schedule decides nothing again" "2|2|$ledger" \
    "$(q "select count(*), count(distinct scheduled_for), (select count(*) from cronq.occurrences where schedule = 'busy') from cronq.jobs where schedule = 'busy'")"
q "update cronq.schedules set next_run_at = now() - interval '59 minutes', decided_through = null where name = 'busy'"
"$CRONQ" run --queue none-such
eq "a rewound schedule does not enqueue the same occurrence twice" "2|2|$((ledger + 1))" \
    "$(q "select count(*), count(distinct scheduled_for), (select count(*) from cronq.occurrences where schedule = 'busy') from cronq.jobs where schedule = 'busy'")"

# A schedule row another runner holds locked (materialising it) is skipped,
# not waited for: the wake materialises the others and ends while the lock
# is still held; the next wake materialises it.
round 40
free_before=$(q "select count(*) from cronq.jobs where schedule = 'free'")
"$PSQL" -XAtq -c "begin; select name from cronq.schedules where name = 'busy' for update; select pg_sleep(60); commit" >/dev/null 2>&1 &
locker=$!
check "another session holds a schedule's row" wait_for "locked" 10 \
    "select count(*) = 1 from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()"
timeout -k 5 30 "$CRONQ" run --queue none-such
eq "the locked schedule was skipped, the other materialised" "2|$((free_before + 1))" \
    "$(q "select count(*) filter (where schedule = 'busy'), count(*) filter (where schedule = 'free') from cronq.jobs")"
check "the wake ended while the schedule was still locked (it never waited)" kill -0 $locker
q "select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()" >/dev/null
wait $locker
"$CRONQ" run --queue none-such
eq "once the lock is gone, the skipped schedule is materialised" 3 "$(q "select count(*) from cronq.jobs where schedule = 'busy'")"

# The same in the first pass, the schedules with no next run (written with
# SQL, or their expression changed): the locked one is skipped, the other
# planned, and the wake ends while the lock is still held.
q "update cronq.schedules set next_run_at = null where name in ('busy', 'free')"
"$PSQL" -XAtq -c "begin; select name from cronq.schedules where name = 'busy' for update; select pg_sleep(60); commit" >/dev/null 2>&1 &
locker=$!
check "another session holds an unplanned schedule's row" wait_for "locked" 10 \
    "select count(*) = 1 from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()"
timeout -k 5 30 "$CRONQ" run --queue none-such
eq "the wake with an unplanned schedule locked ends by itself" 0 "$?"
eq "the locked unplanned schedule was skipped, the other planned" "t|f" \
    "$(q "select bool_and(next_run_at is null) filter (where name = 'busy'), bool_and(next_run_at is null) filter (where name = 'free') from cronq.schedules")"
check "the wake ended while the unplanned schedule was still locked" kill -0 $locker
q "select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()" >/dev/null
wait $locker
"$CRONQ" run --queue none-such
eq "once the lock is gone, it is planned, and nothing enqueued" "f|3" \
    "$(q "select next_run_at is null, (select count(*) from cronq.jobs where schedule = 'busy') from cronq.schedules where name = 'busy'")"

# Jobs of a schedule are enqueued in its author's name, not the runner's.
mkrole sched_bob
q "grant cronq_user to sched_bob; grant insert on cronq.schedules to sched_bob"
PGUSER=sched_bob "$CRONQ" schedule add sched_bobs '* * * * *' noop
eq "the author is the role that added it" sched_bob "$(q "select created_by from cronq.schedules where name = 'sched_bobs'")"
q "update cronq.schedules set cron = extract(minute from now() - interval '10 minutes')::int || ' * * * *', next_run_at = now() - interval '59 minutes' where name = 'sched_bobs'"
"$CRONQ" run --queue none-such
eq "its jobs are enqueued by its author" sched_bob "$(q "select string_agg(distinct enqueued_by, ',') from cronq.jobs where schedule = 'sched_bobs'")"

# Materialisation into a jobs table analysed while empty: the check of the
# occurrences' keys does not scan the table once per job (the trigger's
# per-row lookup was once a sequential scan, cached for the session:
# quadratic in the number of schedules). Since schema 43 the keys are
# checked by one statement a batch.
q "delete from cronq.jobs; delete from cronq.schedules"
q "vacuum analyze cronq.jobs"
q "insert into cronq.schedules (name, cron, type, next_run_at) select 'seq' || i, '* * * * *', 'noop', date_trunc('minute', now()) - interval '1 minute' from generate_series(1, 1000) i"
"$CRONQ" run --queue none-such
eq "1000 schedules materialised, one job each" "1000|1000" "$(q "select count(*), count(distinct schedule) from cronq.jobs")"
# The wake's function, called by the owner for the next 1,000 fire times,
# its sequential scans of cronq.jobs counted (flushed when the backend
# ends: waited for); one a job would be 1,000.
seqscans() { q "select coalesce(seq_scan, 0) from pg_stat_user_tables where relid = 'cronq.jobs'::regclass"; }
q "vacuum analyze cronq.jobs"
q "select pg_stat_force_next_flush()" >/dev/null
before=$(seqscans)
fire=$(q "select date_trunc('minute', now()) + interval '1 hour'")
eq "1000 occurrences written by the owner's call" 1000 \
    "$(q "select count(*) from cronq.enqueue_occurrences(array(select name from cronq.schedules where name like 'seq%'),
                                                            array(select '$fire'::timestamptz from cronq.schedules where name like 'seq%'), true)")"
sleep 1.5
after=$(seqscans)
check "the keys' check read the table once a batch, not once a job: $((after - before)) sequential scans" \
    [ $((after - before)) -lt 10 ]
q "delete from cronq.jobs where scheduled_for = '$fire'"
eq "an occurrence twice in one call: one job, no error (the key's conflict skips it)" 1 \
    "$(q "select count(*) from cronq.enqueue_occurrences(array['seq1', 'seq1'], array['$fire'::timestamptz, '$fire'::timestamptz], true)")"
q "delete from cronq.jobs where scheduled_for = '$fire'"
# The schedules it checked are held until its transaction ends, so that
# none is renamed or changed between its check and its insert (two
# statements; helper-85 swapped an unchecked schedule in by renames).
"$PSQL" -XAtq -c "begin" \
    -c "select count(*) from cronq.enqueue_occurrences(array['seq2'], array['$fire'::timestamptz], true)" \
    -c "select pg_sleep(3)" -c "commit" >/dev/null &
holder=$!
check "the owner's call is under way" wait_for - 5 \
    "select exists (select 1 from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active')"
out=$("$PSQL" -XAtq -c "set lock_timeout = '500ms'" -c "update cronq.schedules set name = 'seq2-renamed' where name = 'seq2'" 2>&1)
match "a rename meanwhile waits for it" 'lock timeout' "$out"
wait "$holder"
eq "... the schedule kept its name, its occurrence written" "1|1" \
    "$(q "select count(*) from cronq.schedules where name = 'seq2'")|$(q "select count(*) from cronq.jobs where schedule = 'seq2' and scheduled_for = '$fire'")"
q "delete from cronq.jobs where scheduled_for = '$fire'"
"$CRONQ" run --queue none-such
eq "a second run adds nothing" 1000 "$(q "select count(*) from cronq.jobs")"
eq "materialisation moves next_run_at but is not a change of the schedule (updated_at kept)" "t|t" \
    "$(q "select bool_and(next_run_at > now()), bool_and(updated_at < last_enqueued_at) from cronq.schedules where name like 'seq%'")"
q "update cronq.schedules set updated_at = now() - interval '1 day' where name = 'seq1'"
"$CRONQ" schedule disable seq1 >/dev/null
eq "disabling is a change (updated_at now)" t "$(q "select updated_at > now() - interval '1 minute' from cronq.schedules where name = 'seq1'")"


# A schedule that cannot become a job (its author lost cronq_exec after
# writing it) holds up nothing: the other schedules are materialised, the
# queue runs, and the broken one is reported on one line and moved on to
# its first occurrence an hour or more later (as a bad expression is
# looked at again in an hour), with nothing enqueued for it.
q "delete from cronq.jobs; delete from cronq.schedules"
lost=sched_lost_exec
q "drop role if exists $lost"
q "create role $lost; grant cronq_exec to $lost"
q "insert into cronq.schedules (name, cron, type, payload, created_by, next_run_at)
   values ('lost-exec', '* * * * *', 'exec', '{\"command\": \"x\"}', '$lost', now() - interval '1 minute'),
          ('still-good', '* * * * *', 'noop', '{}', current_user, now() - interval '1 minute')"
q "revoke cronq_exec from $lost"
noop=$("$CRONQ" enqueue noop)
cronq run
expect "a schedule refused its job: run exits 0, one warning naming it" 0 "" \
    "cronq: warning: schedule \"lost-exec\" cannot run: role \"$lost\" may not enqueue exec jobs: it is not a member of cronq_exec"
eq "the queued noop job ran" succeeded "$(q "select status from cronq.jobs where id = $noop")"
eq "the good schedule's occurrence was enqueued (and run)" "1|succeeded" \
    "$(q "select count(*), string_agg(status, ',') from cronq.jobs where schedule = 'still-good'")"
eq "nothing enqueued for the broken schedule" 0 "$(q "select count(*) from cronq.jobs where schedule = 'lost-exec'")"
eq "the broken schedule moved on an hour, still enabled" "t|t|t" \
    "$(q "select next_run_at >= now() + interval '58 minutes', next_run_at <= now() + interval '61 minutes', enabled from cronq.schedules where name = 'lost-exec'")"
eq "the wake is recorded as a success" 0 "$(q "select exit_status from cronq.wakes order by id desc limit 1")"
cronq run
expect "the next run is quiet until the broken schedule is due again" 0 "" ""

# The same under 4 concurrent runners, the broken schedule among 100 good
# ones with missed occurrences: every good occurrence enqueued once, the
# broken one reported once.
q "delete from cronq.jobs; delete from cronq.schedules"
clear_of_minute_end 20
q "insert into cronq.schedules (name, cron, type, next_run_at, catchup)
   select 'g' || i, '*/5 * * * *', 'noop', date_trunc('minute', now()) - interval '30 minutes', 'all'
   from generate_series(1, 100) i"
q "grant cronq_exec to $lost"
q "insert into cronq.schedules (name, cron, type, payload, created_by, next_run_at)
   values ('lost-exec', '* * * * *', 'exec', '{\"command\": \"x\"}', '$lost', now() - interval '1 minute')"
q "revoke cronq_exec from $lost"
expected=$(q "select count(*) from generate_series(date_trunc('minute', now()) - interval '30 minutes', now(), interval '1 minute') t where extract(minute from t)::int % 5 = 0")
for i in $(seq 1 4); do "$CRONQ" run --queue none-such >"$T_DIR/b$i.out" 2>&1 & done
wait
eq "4 runners and a broken schedule: reported once" \
    "cronq: warning: schedule \"lost-exec\" cannot run: role \"$lost\" may not enqueue exec jobs: it is not a member of cronq_exec" \
    "$(cat "$T_DIR"/b*.out)"
eq "4 runners and a broken schedule: each good occurrence once" "$((100 * expected))|$((100 * expected))|100" \
    "$(q "select count(*), count(distinct idempotency_key), count(distinct schedule) from cronq.jobs")"
eq "4 runners and a broken schedule: every schedule moved on" 0 "$(q "select count(*) from cronq.schedules where next_run_at <= now()")"
q "drop role $lost"

# A stop asked while a wake materialises: the batch under way commits, the
# schedules not reached stay due for the next wake, and the run ends then.
# Each batch's insert of jobs made to sleep 1 s (a test trigger): 8,000 due
# schedules are 8 batches.
q "delete from cronq.schedules; delete from cronq.jobs" >/dev/null
q "create function public.t_slow_batch() returns trigger language plpgsql as \$\$ begin perform pg_sleep(1); return null; end \$\$;
   create trigger t_slow_batch after insert on cronq.jobs for each statement execute function public.t_slow_batch()"
h=$(q "select date_trunc('hour', now())")
q "insert into cronq.schedules (name, cron, type, next_run_at, created_by)
   select 'many-' || i, '0 * * * *', 'noop', timestamptz '$h', current_user from generate_series(1, 8000) i"
"$CRONQ" run --queue none-such --verbose 2>"$T_DIR/stop.err" &
runner=$!
check "the wake is writing the first batch" wait_for "a sleeping batch" 20 \
    "select count(*) > 0 from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()"
t0=$(date +%s%N)
kill -TERM $runner
wait $runner
rc=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
n=$(q "select count(*) from cronq.jobs")
eq "stopped mid-materialisation: exit 0, within 3 s" "0|t" "$rc|$([ "$took" -lt 3000 ] && echo t || echo "f ($took ms)")"
eq "some batches written, not all" "t" "$(q "select $n between 1 and 7000")"
eq "each schedule either moved on with its job or still due" "8000|$n" \
    "$(q "select count(*) filter (where next_run_at > timestamptz '$h') + count(*) filter (where next_run_at = timestamptz '$h')
          from cronq.schedules")|$(q "select count(*) from cronq.schedules where next_run_at > timestamptz '$h'")"
match "the run said why it stopped early" "a stop was asked: the schedules still due are the next wake's" "$(cat "$T_DIR/stop.err")"
q "drop trigger t_slow_batch on cronq.jobs; drop function public.t_slow_batch()"
"$CRONQ" run --queue none-such 2>/dev/null
eq "the next wake writes the rest: one job for each schedule's fire time" "0|8000|8000" \
    "$?|$(q "select count(distinct schedule) from cronq.jobs where scheduled_for = timestamptz '$h'")|$(q "select count(*) from cronq.jobs")"
q "delete from cronq.schedules; delete from cronq.jobs" >/dev/null

# --- a database whose string literals are not standard (a legacy default)
# cron_error, every_error and hook_text read their patterns as written in
# any session (0033); before, under standard_conforming_strings = off,
# every schedule failed with "invalid regular expression".
q "alter database \"$PGDATABASE\" set standard_conforming_strings = off"
eq "the database's sessions read strings the old way" off "$(q "show standard_conforming_strings")"
eq "a cron schedule from SQL there" legacy-cron "$(q "select cronq.schedule('legacy-cron', '*/5 * * * 1-5', 'noop')")"
eq "an @every schedule too" legacy-every "$(q "select cronq.schedule('legacy-every', '@every 90m', 'noop')")"
out=$(q "select cronq.schedule('legacy-bad', '@every 1x5m', 'noop')" 2>&1)
match "a bad duration refused by name" '@every: invalid duration "1x5m"' "$out"
eq "every_error called by itself too" '@every: invalid duration "1x5m"' "$(q "select cronq.every_error('{1x5m}')" 2>&1)"
out=$(q "select cronq.schedule('legacy-bad', '*/5 * * nov-dec *', 'noop')" 2>&1)
eq "month names read whole (no \\v read as v)" legacy-bad "$out"
cronq schedule add legacy-cli '30 2 * * *' noop
eq "and from the CLI" "0|30 2 * * *" "$RC|$(q "select cron from cronq.schedules where name = 'legacy-cli'")"
q "delete from cronq.schedules where name like 'legacy-%'; alter database \"$PGDATABASE\" reset standard_conforming_strings"

done_testing
