#!/usr/bin/env bash
# Roles that fit a team: two applications (app, app2) that hold only
# cronq_user, an on-call admin (oncall, cronq_admin), and the runner
# (cronq_runner: owns the schema, may not create roles), every login by
# password. Each author sees, cancels, retries and (un)schedules only its
# own; the admin sees all; squatting keys, tampering with schedules and
# replaying them are refused with nothing written; migrate keeps the grants
# right when roles come late. Judged by row counts and owners, not by
# error text.
. "$(dirname "$0")/lib.sh"

root="$(dirname "$0")/../.."
password_cluster teamdb cronq_runner app app2 oncall deploy

check "the cluster refuses a login without a password" \
    bash -c '! PGPASSFILE=/dev/null "$0" -XAtq -w -d postgres -c "select 1" 2>/dev/null' "$PSQL"
"$PSQL" -XAtq -d postgres -c "create role cronq_runner login password 'cronq_runner-pw'" \
    -c "create database teamdb owner cronq_runner" >/dev/null || fail "create the runner and its database"
for r in app app2 oncall deploy; do q "create role $r login password '$r-pw'"; done

# as ROLE ARGS…: cronq as that role; asq ROLE SQL: one statement as that
# role; tag ROLE SQL: its command tag (UPDATE 0) or error.
as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
tag() { PGUSER=$1 "$PSQL" -X -c "$2" 2>&1; }
count() { q "select count(*) from $1"; }
run() { PGUSER=cronq_runner "$CRONQ" run "$@"; }

# --- 1. migrate by a role that may not create roles -----------------------
as cronq_runner migrate
eq "migrate succeeds without the roles" 0 "$RC"
purge_aside
match "and says what a superuser must run" \
    'roles cronq_user, cronq_exec, cronq_admin do not exist.*CREATE ROLE cronq_user NOLOGIN; CREATE ROLE cronq_exec NOLOGIN; CREATE ROLE cronq_admin NOLOGIN;.*cronq migrate' "$ERR"
eq "no role was created" 0 "$(q "select count(*) from pg_roles where rolname like 'cronq\\_%' and rolname <> 'cronq_runner'")"
as app enqueue noop
eq "an application without a role cannot enqueue" "78|0" "$RC|$(count cronq.jobs)"

# --- 2. the README's role section, as a DBA runs it, then migrate again ---
sed -n '/^<!-- roles.sql -->$/,/^<!-- end roles.sql -->$/p' "$root/README.md" | sed '1,2d;$d' | sed '$d' >"$T_DIR/roles.sql"
check "the README has the role script" grep -q 'GRANT cronq_user TO app' "$T_DIR/roles.sql"
"$PSQL" -XAtq -v ON_ERROR_STOP=1 -f "$T_DIR/roles.sql" >/dev/null || fail "the README's role script fails"
as cronq_runner migrate -v
eq "migrate after the roles came" 0 "$RC"
match "says it granted them their privileges" 'granted cronq_user, cronq_exec, cronq_admin' "$ERR"
as cronq_runner migrate -v
eq "a second migrate grants nothing new" "0|" "$RC|$(grep granted <<<"$ERR")"
q "grant cronq_user to app2"

# --- 3. each author its own jobs -----------------------------------------
a1=$(PGUSER=app "$CRONQ" enqueue noop --queue apps)
a2=$(PGUSER=app "$CRONQ" enqueue fail '{"message": "boom", "permanent": true}' --queue apps)
b1=$(PGUSER=app2 "$CRONQ" enqueue noop --queue apps --in 1h)
b2=$(PGUSER=app2 "$CRONQ" enqueue fail '{"message": "b-boom", "permanent": true}' --queue apps)
eq "the jobs are their authors'" "app,app,app2,app2" "$(q "select string_agg(enqueued_by, ',' order by id) from cronq.jobs where id in ($a1, $a2, $b1, $b2)")"
eq "app sees its own two" "$a1,$a2" "$(asq app "select string_agg(id::text, ',' order by id) from cronq.jobs")"
eq "app2 sees its own two" "$b1,$b2" "$(asq app2 "select string_agg(id::text, ',' order by id) from cronq.jobs")"
eq "oncall (admin) sees all four" 4 "$(asq oncall "select count(*) from cronq.jobs where id in ($a1, $a2, $b1, $b2)")"
as app list --json
eq "cronq list shows app only its jobs" "$a1 $a2" "$(grep -oE '"id":[ ]*[0-9]+' <<<"$OUT" | grep -oE '[0-9]+' | sort -n | xargs)"
as app show "$b1"
eq "cronq show of another's job: not found" 65 "$RC"
run
eq "the runner ran everyone's due jobs" "succeeded,dead,queued,dead" \
    "$(q "select string_agg(status, ',' order by id) from cronq.jobs where id in ($a1, $a2, $b1, $b2)")"
eq "app sees only its own runs" "$a1,$a2" "$(asq app "select string_agg(distinct job_id::text, ',') from cronq.job_runs")"
eq "oncall sees every run" 3 "$(asq oncall "select count(distinct job_id) from cronq.job_runs where job_id in ($a1, $a2, $b1, $b2)")"
as app status --json
eq "status counts only app's jobs" "2|1" "$(q "select j#>>'{jobs,total}' || '|' || (j#>>'{jobs,dead}') from (select \$j\$$OUT\$j\$::jsonb as j) x")"

# --- 4. cancel and retry: one's own only ----------------------------------
out=$(asq app "select cronq.cancel($b1)" 2>&1)
match "app cannot cancel app2's job with SQL" 'does not exist' "$out"
as app cancel "$b1"
as app retry "$b2"
eq "nor with the CLI: app2's jobs untouched" "queued,dead" "$(q "select string_agg(status, ',' order by id) from cronq.jobs where id in ($b1, $b2)")"
eq "nor through the table" "UPDATE 0|queued" "$(tag app "update cronq.jobs set status = 'cancelled' where id = $b1")|$(q "select status from cronq.jobs where id = $b1")"
eq "app retries its dead job with SQL" "t|queued|0" "$(asq app "select cronq.retry($a2)")|$(q "select status || '|' || attempts from cronq.jobs where id = $a2")"
eq "cancels it again (nothing left to cancel then)" "t|f|cancelled" "$(asq app "select cronq.cancel($a2)")|$(asq app "select cronq.cancel($a2)")|$(q "select status from cronq.jobs where id = $a2")"
as app retry --dead
eq "retry --dead by app leaves app2's dead job dead" "dead" "$(q "select status from cronq.jobs where id = $b2")"
out=$(asq app "update cronq.jobs set status = 'succeeded' where id = $a2" 2>&1)
match "an author cannot mark its own job succeeded" 'changed only by cancelling or retrying' "$out"
as oncall cancel "$b1"
eq "oncall cancels app2's job" "0|cancelled" "$RC|$(q "select status from cronq.jobs where id = $b1")"
as oncall retry "$b2"
eq "and retries app2's dead one" "0|queued" "$RC|$(q "select status from cronq.jobs where id = $b2")"

# --- 5. schedules: one's own only -----------------------------------------
eq "app schedules from SQL" "a-nightly" "$(asq app "select cronq.schedule('a-nightly', '0 3 * * *', 'noop', timezone => 'Europe/Paris')")"
eq "stored as app's, to be planned at the next wake" "app|Europe/Paris|true" \
    "$(q "select created_by || '|' || timezone || '|' || (next_run_at is null) from cronq.schedules where name = 'a-nightly'")"
n=$(count cronq.schedules)
out=$(asq app "select cronq.schedule('a-bad', '0 3 * *', 'noop')" 2>&1)
match "a 4-field expression is refused at once" 'expected 5 fields, got 4' "$out"
out=$(asq app "select cronq.schedule('a-bad', '0 3 * * *', 'noop', timezone => 'Mars/Olympus')" 2>&1)
match "an unknown zone too" 'unrecognized time zone' "$out"
out=$(asq app "insert into cronq.schedules (name, cron, type) values ('a-bad', '61 * * * *', 'noop')" 2>&1)
match "and the same through the table" 'out of range' "$out"
eq "nothing was written" "$n" "$(count cronq.schedules)"
eq "app2 does not see app's schedule" 0 "$(asq app2 "select count(*) from cronq.schedules")"
out=$(asq app2 "select cronq.schedule('a-nightly', '* * * * *', 'sql', '{\"sql\": \"select 1\"}')" 2>&1)
match "app2 cannot replace app's schedule" 'belongs to another role' "$out"
as app2 schedule add a-nightly '* * * * *' noop --replace
eq "nor with the CLI" 65 "$RC"
eq "nor rewind, disable or remove it (a DELETE it may not even try)" "UPDATE 0|UPDATE 0|UPDATE 0" \
    "$(tag app2 "update cronq.schedules set next_run_at = '2000-01-01' where name = 'a-nightly'")|$(tag app2 "update cronq.schedules set enabled = false")|$(tag app2 "update cronq.schedules set removed = true")"
asq app2 "delete from cronq.schedules" >/dev/null 2>&1
out=$(asq app2 "select cronq.unschedule('a-nightly')" 2>&1)
match "cronq.unschedule of another's: does not exist" 'does not exist' "$out"
eq "app's schedule is as app wrote it" "0 3 * * *|app|true" "$(q "select cron || '|' || created_by || '|' || enabled from cronq.schedules where name = 'a-nightly'")"
eq "cronq-purge is out of every author's reach" "UPDATE 0|t" \
    "$(tag app "update cronq.schedules set enabled = false where name = 'cronq-purge'")|$(q "select enabled from cronq.schedules where name = 'cronq-purge'")"
as app2 schedule disable cronq-purge
eq "even with the CLI" "65|t" "$RC|$(q "select enabled from cronq.schedules where name = 'cronq-purge'")"

# A row written with plain SQL (no next_run_at) is planned at the next
# wake, and its occurrences run as its author.
asq app "insert into cronq.schedules (name, cron, type, payload) values ('a-sql', '* * * * *', 'sql', '{\"sql\": \"select 1\"}')" >/dev/null
run
eq "the next wake planned it" t "$(q "select next_run_at > now() and next_run_at <= now() + interval '1 minute' from cronq.schedules where name = 'a-sql'")"
eq "enqueueing nothing for the past" 0 "$(q "select count(*) from cronq.jobs where schedule = 'a-sql'")"
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '1 minute' where name = 'a-sql'"
run
eq "its occurrence ran as app" "app|succeeded" "$(q "select enqueued_by || '|' || status from cronq.jobs where schedule = 'a-sql'")"
eq "app's change of its expression replans it" t \
    "$(asq app "update cronq.schedules set cron = '*/5 * * * *' where name = 'a-sql'" >/dev/null; q "select next_run_at is null from cronq.schedules where name = 'a-sql'")"
eq "app unschedules its own" "t|0" "$(asq app "select cronq.unschedule('a-sql')")|$(q "select count(*) from cronq.schedules where name = 'a-sql'")"
as app schedule add a-cli '*/10 * * * *' noop
eq "the CLI's schedule add works with cronq_user" "0|app" "$RC|$(q "select created_by from cronq.schedules where name = 'a-cli'")"
as app schedule remove a-cli
eq "and remove" "0|0" "$RC|$(q "select count(*) from cronq.schedules where name = 'a-cli'")"
eq "oncall sees every schedule" 2 "$(asq oncall "select count(*) from cronq.schedules where name in ('a-nightly', 'cronq-purge')")"

# --- 6. keys: no squatting ------------------------------------------------
n=$(count cronq.jobs)
for key in 'schedule:a-nightly:2030-01-01T02:00:00Z' 'schedule:cronq-purge:2030-01-01T03:17:00Z' 'notify:1:1:dead'; do
    out=$(asq app2 "select cronq.enqueue('noop', key => '$key')" 2>&1)
    match "app2 may not take the reserved key $key" 'reserved' "$out"
done
out=$(asq app2 "insert into cronq.jobs (type, payload, schedule) values ('noop', '{}', 'a-nightly')" 2>&1)
match "nor enqueue a job of app's schedule" 'not its author' "$out"
as app2 backfill --schedule a-nightly --from 2025-01-01 --to 2025-01-03
eq "nor backfill it" 65 "$RC"
k=$(PGUSER=app "$CRONQ" enqueue noop --key report-2030 --in 1d)
out=$(asq app2 "select cronq.enqueue('noop', key => 'report-2030')" 2>&1)
match "a key app holds is refused to app2, aloud" 'held by another role' "$out"
printf '{"type": "noop"}\n{"type": "noop", "key": "report-2030"}\n' | PGUSER=app2 "$CRONQ" enqueue --jsonl 2>"$T_DIR/err"
eq "in bulk too, all or nothing" "65|$n" "$?|$(( $(count cronq.jobs) - 1 ))"
match "saying so (not a bare unique violation)" 'held by another role' "$(cat "$T_DIR/err")"
eq "nothing was written by any attempt" "$((n + 1))" "$(count cronq.jobs)"
eq "app enqueueing its key again gets its job" "$k" "$(PGUSER=app "$CRONQ" enqueue noop --key report-2030 2>/dev/null)"
printf '{"type": "noop", "queue": "bulk"}\n{"type": "noop", "queue": "bulk"}\n' | PGUSER=app2 "$CRONQ" enqueue --jsonl
eq "cronq_user enqueues in bulk (no COPY under row-level security)" "0|2|app2" \
    "$?|$(q "select count(*) || '|' || min(enqueued_by) from cronq.jobs where queue = 'bulk'")"
as app backfill --schedule a-nightly --from 2025-01-01 --to 2025-01-04
eq "app backfills its own schedule, in its name" "0|3|app" \
    "$RC|$(q "select count(*) || '|' || min(enqueued_by) from cronq.jobs where schedule = 'a-nightly' and idempotency_key like 'schedule:a-nightly:2025-%'")"
# But not ahead of time: an occurrence not due yet is the schedule's to
# enqueue. A job holding its key would outlive its author's hold on the
# name, and refuse that occurrence to whoever takes the name next.
n=$(count cronq.jobs)
out=$(asq app "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key)
    values ('noop', 'a-nightly', '2030-01-01T02:00:00Z', 'schedule:a-nightly:2030-01-01T02:00:00Z')" 2>&1)
match "app may not write its own schedule's occurrence of 2030" 'not due yet' "$out"
out=$(asq app "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key)
    values ('noop', 'a-nightly', now() + interval '1 minute', 'schedule:a-nightly:manual:' || to_char((now() + interval '1 minute') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))" 2>&1)
match "nor the key of a run by hand a minute from now" 'not due yet' "$out"
out=$(asq app "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key, run_at)
    values ('noop', 'a-nightly', '2030-01-01 02:00:00+00 BC', 'schedule:a-nightly:2030-01-01T02:00:00Z', '9999-12-31')" 2>&1)
match "nor through a fire time BC (whose key reads as the same date AD)" 'not due yet' "$out"
out=$(asq app "insert into cronq.jobs (type, scheduled_for) values ('noop', '-infinity')" 2>&1)
match "a job's scheduled_for is a time of years 1 to 9999" 'invalid scheduled_for: .* is not a time of years 1 to 9999' "$out"
as app backfill --schedule a-nightly --from 2025-01-05 --to 2030-01-01
eq "nor backfill past now (the CLI refuses the range whole)" 64 "$RC"
first=$(sed -n 's/.*occurrences not due yet (the first at \([^;]*\);.*/\1/p' <<<"$ERR")
eq "saying which occurrence is not due: the next" t \
    "$(q "select '${first:-none}'::text ~ '^[0-9]' and '${first:-2000-01-01}'::timestamptz > now() and '${first:-2000-01-01}'::timestamptz <= now() + interval '1 day'")"
as app backfill --schedule a-nightly --from 2030-01-01 --to 2030-01-04 --dry-run
eq "a dry run too" 64 "$RC"
eq "nothing was written by any attempt" "$n|0" \
    "$(count cronq.jobs)|$(q "select count(*) from cronq.jobs where schedule = 'a-nightly' and scheduled_for > now()")"

# A schedule whose name ends where a victim's key goes on ("a-nightly:" and
# a fire time's first digits) does not own the victim's keys: a key must be
# exactly its schedule's and fire time's.
asq app2 "select cronq.schedule('a-nightly:2025-01-05T02', '0 0 1 1 *', 'noop', enabled => false)" >/dev/null
n=$(count cronq.jobs)
out=$(asq app2 "insert into cronq.jobs (type, schedule, scheduled_for, idempotency_key, run_at)
    values ('noop', 'a-nightly:2025-01-05T02', '2025-01-05T02:00:00Z', 'schedule:a-nightly:2025-01-05T02:00:00Z', 'infinity')" 2>&1)
match "a schedule named like a prefix of another's key cannot take it" 'reserved' "$out"
eq "nothing was written" "$n" "$(count cronq.jobs)"

# Changing only when an author's schedule runs (an admin fixing its zone)
# does not make its SQL run as the editor.
asq app "select cronq.schedule('a-report', '0 4 * * *', 'sql', '{\"sql\": \"select 1\"}')" >/dev/null
asq oncall "update cronq.schedules set timezone = 'Europe/Berlin' where name = 'a-report'" >/dev/null
eq "an admin's change of zone leaves app the author" "app|Europe/Berlin" \
    "$(q "select created_by || '|' || timezone from cronq.schedules where name = 'a-report'")"

# A job of one's own changes only as cancel and retry change it: nothing
# that could stall every runner's claim or rescue.
v=$(PGUSER=app "$CRONQ" enqueue noop --queue victims)
mine=$(PGUSER=app2 "$CRONQ" enqueue noop --priority -1000 --in 1h)
before=$(q "select row(status, attempts, locked_by, locked_until, run_at)::text from cronq.jobs where id = $mine")
for set in "attempts = 2147483647" "status = 'running', cancel_requested = true" \
           "status = 'running', cancel_requested = true, locked_by = null, locked_until = '-infinity'" \
           "locked_until = 'infinity'" "status = 'queued', attempts = 5"; do
    out=$(asq app2 "update cronq.jobs set $set where id = $mine" 2>&1)
    match "app2 may not set $set" 'changed only by cancelling or retrying' "$out"
done
eq "its job is as it was" "$before" "$(q "select row(status, attempts, locked_by, locked_until, run_at)::text from cronq.jobs where id = $mine")"
run
eq "and every runner still claims: app's job ran" succeeded "$(q "select status from cronq.jobs where id = $v")"
# Nor a time no wake can read: a schedule's next run, a pause's end, a
# cancel's end (an infinite one stopped every runner's wake before it
# claimed, and status and check for everyone).
v=$(PGUSER=app "$CRONQ" enqueue noop --queue victims)
asq app2 "select cronq.schedule('a2-due', '* * * * *', 'noop')" >/dev/null
n=$(count cronq.schedules)
for t in '-infinity' 'infinity' '4713-01-01 00:00:00+00 BC' '10000-01-01 00:00:00+00'; do
    out=$(asq app2 "update cronq.schedules set next_run_at = '$t' where name = 'a2-due'" 2>&1)
    match "app2 may not set its schedule's next run to $t" 'invalid next_run_at: .* is not a time of years 1 to 9999' "$out"
    out=$(asq app2 "insert into cronq.schedules (name, cron, type, next_run_at) values ('a2-inf', '* * * * *', 'noop', '$t')" 2>&1)
    match "nor write a schedule that runs next at $t" 'invalid next_run_at' "$out"
done
eq "nothing was written" "$n|t" "$(count cronq.schedules)|$(q "select next_run_at is null from cronq.schedules where name = 'a2-due'")"
asq app2 "update cronq.schedules set next_run_at = '9999-12-31 23:59:59+00' where name = 'a2-due'" >/dev/null
out=$(asq app2 "update cronq.schedules set spread = '1 day' where name = 'a2-due'" 2>&1)
match "nor past 9999 by a spread that moves it" 'invalid next_run_at' "$out"
eq "the schedule is as it was" "9999-12-31 23:59:59+00|" \
    "$(q "select next_run_at at time zone 'UTC' || '+00|' || coalesce(spread::text, '') from cronq.schedules where name = 'a2-due'")"
asq app2 "update cronq.schedules set next_run_at = null where name = 'a2-due'" >/dev/null
# Nor a next run long past (overdue for days in every admin's check), nor a
# job due since year 1 (lag of 740,000 days): schema 40, and check's lag
# counted from the enqueue.
out=$(asq app2 "update cronq.schedules set next_run_at = now() - interval '3 days' where name = 'a2-due'" 2>&1)
match "app2 may not set its schedule's next run days back" 'next_run_at .* is in the past' "$out"
out=$(asq app2 "insert into cronq.schedules (name, cron, type, next_run_at) values ('a2-past', '* * * * *', 'noop', now() - interval '3 days')" 2>&1)
match "nor write a schedule due days ago" 'next_run_at .* is in the past' "$out"
eq "nothing was written" "$n|t" "$(count cronq.schedules)|$(q "select next_run_at is null from cronq.schedules where name = 'a2-due'")"
asq app2 "update cronq.schedules set next_run_at = now() - interval '30 seconds' where name = 'a2-due'" >/dev/null
eq "a next run just past (a minute's grace) is written" t "$(q "select next_run_at < now() from cronq.schedules where name = 'a2-due'")"
asq oncall "update cronq.schedules set next_run_at = now() - interval '3 days' where name = 'a2-due'" >/dev/null
eq "an admin may still rewind it by hand" t "$(q "select next_run_at < now() - interval '2 days' from cronq.schedules where name = 'a2-due'")"
asq app2 "update cronq.schedules set payload = '{}' where name = 'a2-due'" >/dev/null
eq "and its author may change the rest, the next run left as it is" t "$(q "select next_run_at < now() - interval '2 days' from cronq.schedules where name = 'a2-due'")"
asq app2 "update cronq.schedules set next_run_at = now() - interval '1 day' where name = 'a2-due'" >/dev/null
eq "and move it on, even to a time still past (a pause's end on resume)" t \
    "$(q "select next_run_at between now() - interval '25 hours' and now() - interval '23 hours' from cronq.schedules where name = 'a2-due'")"
out=$(asq app2 "update cronq.schedules set next_run_at = next_run_at - interval '1 hour' where name = 'a2-due'" 2>&1)
match "but not back" 'next_run_at .* is in the past' "$out"
# A change of spread moves the next run back by the offsets' difference (up
# to a day): lateness counts from the change, so check does not read it as
# overdue (helper-79: a spread set then removed made check CRITICAL).
asq app2 "update cronq.schedules set next_run_at = now() + interval '1 minute' where name = 'a2-due'" >/dev/null
asq app2 "update cronq.schedules set spread = '1 day' where name = 'a2-due'" >/dev/null
asq app2 "update cronq.schedules set spread = null where name = 'a2-due'" >/dev/null
q "update cronq.schedules set next_run_at = least(next_run_at, now() - interval '3 hours') where name = 'a2-due'" >/dev/null
as oncall check --max-overdue 1h
match "a spread moved back is not overdue for check" '^CRONQ (OK|WARNING)' "$OUT"
as oncall status --json
eq "nor for status" "False|0" "$(python3 -c 'import json, sys; j = json.load(sys.stdin); s = [x for x in j["schedules"] if x["name"] == "a2-due"][0]; print(s["overdue"], s["overdue_seconds"] > 60 and 1 or 0, sep="|")' <<<"$OUT")"
asq app2 "update cronq.schedules set next_run_at = null where name = 'a2-due'" >/dev/null
PGUSER=app2 "$CRONQ" enqueue noop --queue nobody --run-at 0001-01-01T00:00:00Z >/dev/null
as oncall check --max-lag 10m
match "a job its author made due since year 1 is late from its enqueue" '^CRONQ OK' "$OUT"
as oncall status --json
eq "status too" "True|True" "$(python3 -c 'import json, sys; j = json.load(sys.stdin); q = [x for x in j["queues"] if x["queue"] == "nobody"][0]; print(j["lag_seconds"] < 60, q["lag_seconds"] < 60, sep="|")' <<<"$OUT")"
q "delete from cronq.jobs where queue = 'nobody'" >/dev/null
as app2 pause schedule:a2-due --until infinity
eq "a pause until infinity is a pause until resumed" "0|t" "$RC|$(q "select until is null from cronq.pauses where key = 'schedule:a2-due'")"
for t in '-infinity' '20000-01-01 00:00:00+00'; do
    out=$(asq app2 "update cronq.pauses set until = '$t' where key = 'schedule:a2-due'" 2>&1)
    match "a pause's end may not be $t" 'invalid until: .* is not a time of years 1 to 9999' "$out"
done
eq "the pause is as it was" t "$(q "select until is null from cronq.pauses where key = 'schedule:a2-due'")"
mine=$(PGUSER=app2 "$CRONQ" enqueue noop --in 1d)
eq "a cancel's end and a change's time are the database's clock" "UPDATE 1|t" \
    "$(tag app2 "update cronq.jobs set status = 'cancelled', finished_at = 'infinity', updated_at = '-infinity' where id = $mine" | head -n 1)|$(q "select finished_at = updated_at and updated_at between now() - interval '1 minute' and now() from cronq.jobs where id = $mine")"
run
eq "every runner still claims: app's job ran" succeeded "$(q "select status from cronq.jobs where id = $v")"
for report in "status" "status --html" "status --prometheus" "check"; do
    as oncall $report
    eq "and $report still answers" 0 "$RC"
done
asq app2 "select cronq.resume('schedule:a2-due'), cronq.unschedule('a2-due')" >/dev/null
# And were such a row there (a superuser's, written with the triggers off),
# the wake says so and exits 70, but claims every role's jobs all the same.
asq app "select cronq.schedule('a-broken', '* * * * *', 'noop')" >/dev/null
q "set session_replication_role = replica; update cronq.schedules set next_run_at = '-infinity' where name = 'a-broken'" >/dev/null
v=$(PGUSER=app "$CRONQ" enqueue noop --queue victims)
PGUSER=cronq_runner "$CRONQ" run >/dev/null 2>"$T_DIR/broken.err"
eq "a wake whose schedules fail: 70, app's job run all the same" "70|succeeded" "$?|$(q "select status from cronq.jobs where id = $v")"
match "saying why" 'could not enqueue the due schedules: .*infinity' "$(tail -n 1 "$T_DIR/broken.err")"
asq app "select cronq.unschedule('a-broken')" >/dev/null
# Rows no worker can be fenced on (written by a superuser: no author can)
# do not keep the rescue going round.
q "insert into cronq.jobs (type, queue, status, locked_by, locked_until, enqueued_by)
   select 'noop', 'wreck', 'running', null, now() - interval '1 hour', 'app' from generate_series(1, 600)"
timeout -k 5 60 "$CRONQ" run >/dev/null 2>&1
eq "a rescue pass that records nothing ends the rescue" 0 "$?"
q "delete from cronq.jobs where queue = 'wreck'"

# --- 7. grants that migrate keeps right ------------------------------------
q "grant delete, truncate on cronq.jobs to cronq_user; grant usage on all sequences in schema cronq to cronq_user"
as cronq_runner migrate
eq "migrate takes back what a hand-written GRANT gave beyond the list" "false|false" \
    "$(q "select has_table_privilege('cronq_user', 'cronq.jobs', 'DELETE') || '|' || has_table_privilege('cronq_user', 'cronq.jobs', 'TRUNCATE')")"
eq "and on sequences" f "$(q "select has_sequence_privilege('cronq_user', 'cronq.jobs_id_seq', 'USAGE')")"
eq "and keeps what each role needs" "true|true|true" \
    "$(q "select has_function_privilege('cronq_user', 'cronq.cancel(bigint)', 'EXECUTE') || '|' || has_table_privilege('cronq_admin', 'cronq.jobs', 'DELETE') || '|' || has_column_privilege('cronq_user', 'cronq.schedules', 'cron', 'UPDATE')")"
as oncall purge --older-than 0s --status dead
eq "oncall may purge" 0 "$RC"

# A purge job is checked again when it runs: an admin who lost cronq_admin
# cannot get one it enqueued back to work (cancelled, then retried after
# the revoke), and nothing is deleted.
as app enqueue noop
victim=$OUT
as cronq_runner run
as oncall enqueue purge '{"older_than": "0s", "statuses": ["succeeded"]}' --in 1h
purge=$OUT
as oncall cancel "$purge"
q "grant cronq_user to oncall; revoke cronq_admin from oncall"
eq "the former admin retries its purge" t "$(asq oncall "select cronq.retry($purge)")"
as cronq_runner run
eq "the purge is refused when it runs: dead, permission_denied; the job it would delete remains" "dead|permission_denied|1" \
    "$(q "select status, error_code, (select count(*) from cronq.jobs where id = $victim) from cronq.jobs where id = $purge")"
q "revoke cronq_user from oncall; grant cronq_admin to oncall"

# --- 8. the database's cron rules are the binary's -------------------------
# cronq.cron_error() checks what the schedules_guard trigger stores; it
# must accept exactly what the parser in lib/time/cron.c accepts.
corpus=('* * * * *' '0 0 1 1 *' '*/15 9-17 * * mon-fri' '0 0 */2 * 1' '30 2 * * 7' '5,10-20/5 0 1-31 JAN-DEC SUN-SAT'
        '@daily' '@HOURLY' '@yearly x' '@reboot' '@every 5m' '0 0 30 2 *' '0 0 31 4 *' '0 0 31 4 1' '0 0 29 2 *'
        '60 * * * *' '* 24 * * *' '* * 0 * *' '* * * 13 *' '* * * * 8' '5-1 * * * *' '*/0 * * * *' '*/61 * * * *'
        '*/60 * * * *' '1/5 * * * *' '* * * * 1/8' '* * * * *,' ',* * * * *' '* * * *' '* * * * * *'
        '~ * * * *' '0~30 * * * *' '0 0 L * *' '0 0 15W * *' '0 0 * * 1#2' '0 0 ? * *' '*5 * * * *' '* * * jan-foo *'
        '0099 * * * *' '00000000000000000007 * * * *' '1-5/2,7 * * * *' 'a * * * *' '-5 * * * *' '5- * * * *'
        '@every 90m' '@EVERY 1h30m' '@every 61' '@every 60000ms' '@every 1w' '@every 30s' '@every 59s' '@every'
        '@every 0m' '@every 5x' '@every 60500ms' '@every 30m1h' '@every 5m x' '@every -5m' '@every 1h30'
        '0 0 1 nov *' '0 0 * nov-dec *')
agree=0
for c in "${corpus[@]}"; do
    "$CRONQ" schedule next --count 1 -- "$c" >/dev/null 2>&1; c_rc=$?
    s_ok=$(q "select cronq.cron_error(\$c\$$c\$c\$) is null")
    if { [ $c_rc = 0 ] && [ "$s_ok" = t ]; } || { [ $c_rc = 65 ] && [ "$s_ok" = f ]; }; then
        agree=$((agree + 1))
    else fail "cron rules differ on [$c]: cronq schedule next exits $c_rc, cronq.cron_error() is null: $s_ok"; fi
done
eq "the SQL and C cron rules agree on the whole corpus" "${#corpus[@]}" "$agree"

# --- 9. a stored schedule the runner cannot plan is reported ---------------
q "alter table cronq.schedules disable trigger schedules_guard;
   insert into cronq.schedules (name, cron, type, created_by) values ('a-legacy', '0 3 * *', 'noop', 'app');
   alter table cronq.schedules enable trigger schedules_guard"
as app status
match "status names the schedule that cannot run" 'schedule a-legacy cannot run: expected 5 fields, got 4' "$OUT"
as app status --json
match "and counts it" '"unplannable_schedules": *1' "$OUT"
run 2>"$T_DIR/run.err"
match "the runner warns about it" 'schedule "a-legacy" cannot run' "$(cat "$T_DIR/run.err")"
as oncall check
eq "check is CRITICAL with no limits given" 2 "$RC"
match "and names it" '^CRONQ CRITICAL - .*1 schedule cannot run \(a-legacy: expected 5 fields, got 4\) \|.* unplannable=1$' "$OUT"
q "delete from cronq.schedules where name = 'a-legacy'"
as oncall check
eq "and OK once it is gone" "0|CRONQ OK" "$RC|${OUT%% -*}"

# --- 10. INSERT ... ON CONFLICT DO UPDATE reaches no other role's row ------
# PostgreSQL locks the conflicting row and evaluates the WHERE on it before
# row-level security refuses the update: a role naming another role's
# schedule could read its columns a bit at a time and hold it locked.
asq app "select cronq.schedule('a-secret', '0 5 * * *', 'sql', '{\"sql\": \"select 42 /* hunter2 */\"}')" >/dev/null
before=$(q "select md5(s::text) from cronq.schedules s where name = 'a-secret'")
upsert="insert into cronq.schedules as s (name, cron, type) values ('a-secret', '* * * * *', 'noop')
        on conflict (name) do update set enabled = true where"
asq app2 "$upsert s.payload->>'sql' like '%hunter2%'" >/dev/null 2>&1; rc_true=$?
asq app2 "$upsert s.payload->>'sql' like '%hunter3%'" >/dev/null 2>&1; rc_false=$?
eq "a true and a false condition on app's schedule answer alike: both refused" "1|1" "$rc_true|$rc_false"
out=$(asq app2 "$upsert false" 2>&1)
match "saying the name is another role's" 'schedule "a-secret" belongs to another role' "$out"
# app2's transaction stays open after the refusal (psql's ON_ERROR_ROLLBACK)
PGUSER=app2 "$PSQL" -Xq -v ON_ERROR_ROLLBACK=on -c "begin" -c "$upsert false" \
    -c "select pg_sleep(3) as held_open" -c "commit" >/dev/null 2>&1 &
holder=$!
check "app2's transaction is open" wait_for "app2's transaction is open" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(3) as held_open%' and pid <> pg_backend_pid())"
eq "no lock is left on app's schedule: the runner's lock is granted at once" "1" \
    "$(q "select 1 from cronq.schedules where name = 'a-secret' for update nowait" 2>&1)"
wait $holder
eq "app's schedule is unchanged" "$before" "$(q "select md5(s::text) from cronq.schedules s where name = 'a-secret'")"
asq app "select cronq.schedule('a-secret', '0 6 * * *', 'sql', '{\"sql\": \"select 42\"}')" >/dev/null
eq "its author still replaces it (the same statement's conflict, its own row)" "0 6 * * *|app" \
    "$(q "select cron || '|' || created_by from cronq.schedules where name = 'a-secret'")"
as app2 schedule add a-secret '* * * * *' noop --replace
eq "the CLI's --replace on another role's name: 65, saying so" "65|1" "$RC|$(grep -c 'belongs to another role' <<<"$ERR")"
asq oncall "insert into cronq.schedules as s (name, cron, type) values ('a-secret', '0 7 * * *', 'noop')
            on conflict (name) do update set cron = excluded.cron" >/dev/null
eq "an admin's upsert still changes any schedule" "0 7 * * *" "$(q "select cron from cronq.schedules where name = 'a-secret'")"

# A late holder of a unique key that another transaction keeps locked
# (cronq.expire_holder, granted to every cronq_user, locks it): the enqueue
# fails, where it used to answer "already queued" with a job that can
# never run, and wrote nothing.
late=$(asq app "select cronq.enqueue('noop', unique_key => 'a-late', expires_at => now() + interval '1 second')")
sleep 1.5
PGUSER=app2 "$PSQL" -Xq -c "begin" -c "select cronq.expire_holder('a-late')" \
    -c "select pg_sleep(4) as late_held" -c "commit" >/dev/null 2>&1 &
holder=$!
check "app2 holds the late job" wait_for "app2 holds the late job" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(4) as late_held%' and pid <> pg_backend_pid())"
out=$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose \
      -c "select id || '|' || created from cronq.enqueue_job('noop', unique_key => 'a-late')" 2>&1); rc=$?
eq "the enqueue fails (55P03), naming the late job; nothing written" "1|1|1" \
    "$rc|$(grep -c "55P03.*held by job $late, past its deadline" <<<"$out")|$(q "select count(*) from cronq.jobs where unique_key = 'a-late'")"
wait $holder
asq app "select cronq.enqueue_job('noop', unique_key => 'a-late')" >/dev/null
eq "once that transaction ends, the late job is ended and a new one holds the key" "cancelled|1|2" \
    "$(q "select status from cronq.jobs where id = $late")|$(q "select count(*) from cronq.jobs where unique_key = 'a-late' and status = 'queued'")|$(q "select count(*) from cronq.jobs where unique_key = 'a-late'")"

# A replace that lowers the spread of an overdue schedule is no move of
# its next fire time back (helper-82: the CLI writes next_run_at, the guard
# moved it by the offsets' difference, and the role's write was refused).
as app schedule add a-rep '*/5 * * * *' noop --spread 4m
q "update cronq.schedules set next_run_at = now() - interval '10 minutes' where name = 'a-rep'"
was=$(q "select next_run_at - make_interval(secs => cronq.fire_offset(name, spread)) from cronq.schedules where name = 'a-rep'")
as app schedule add a-rep '*/5 * * * *' noop --spread 10s --replace
eq "app's --replace with a smaller spread of its overdue schedule: done, the same fire time" "0|t" \
    "$RC|$(q "select next_run_at - make_interval(secs => cronq.fire_offset(name, spread)) = '$was' from cronq.schedules where name = 'a-rep'")"
out=$(asq app "update cronq.schedules set next_run_at = now() - interval '1 hour', spread = '20 seconds' where name = 'a-rep'" 2>&1)
match "but a next fire time moved back by the role is still refused" 'is in the past' "$out"

done_testing
