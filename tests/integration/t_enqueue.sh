#!/usr/bin/env bash
# enqueue: ids, options, validation (CLI and database alike), idempotency
# keys through the CLI and the SQL API, and --jsonl all or nothing.
. "$(dirname "$0")/lib.sh"
migrate
count() { q 'select count(*) from cronq.jobs'; }

cronq enqueue noop
match "prints the new id" '^[0-9]+$' "$OUT"
eq "exit 0, quiet" "0/" "$RC/$ERR"
id=$OUT
eq "stored with defaults" "default|noop|{}|0|queued|0|10|01:00:00|postgres" \
    "$(q "select queue, type, payload, priority, status, attempts, max_attempts, timeout, enqueued_by from cronq.jobs where id = $id")"

cronq enqueue sleep '{"seconds": 0.1}' --queue mail --priority -5 --max-attempts 3 --timeout 90s --in 1h
id=$OUT
eq "options stored" 'mail|-5|3|00:01:30|{"seconds": 0.1}|t' \
    "$(q "select queue, priority, max_attempts, timeout, payload, run_at between now() + interval '59 minutes' and now() + interval '61 minutes' from cronq.jobs where id = $id")"
cronq enqueue noop --run-at '2030-01-02 03:04:05'
eq "a time without zone is UTC" "2030-01-02 03:04:05+00" "$(q "select run_at from cronq.jobs where id = $OUT")"
OUT=$(PGTZ=Asia/Kolkata "$CRONQ" enqueue noop --run-at '2030-01-02 03:04:05')
eq "a time without zone is UTC, whatever \$PGTZ says" "2030-01-02 03:04:05+00" "$(q "select run_at from cronq.jobs where id = $OUT")"
cronq enqueue noop --run-at '2030-01-02T03:04:05+02:00'
eq "RFC 3339 with offset" "2030-01-02 01:04:05+00" "$(q "select run_at from cronq.jobs where id = $OUT")"
cronq_in '{"seconds": 1}' enqueue sleep -
eq "payload from stdin" '{"seconds": 1}' "$(q "select payload from cronq.jobs where id = $OUT")"

# The environment: a flag wins over CRONQ_<FLAG>; a single-valued option
# takes the variable whole (commas and all), as the flag would.
CRONQ_QUEUE=x,y cronq enqueue noop
eq "CRONQ_QUEUE=x,y: one queue named x,y" "0|x,y" "$RC|$(q "select queue from cronq.jobs where id = $OUT")"
CRONQ_QUEUE=env cronq enqueue noop --queue flag
eq "--queue wins over CRONQ_QUEUE" "0|flag" "$RC|$(q "select queue from cronq.jobs where id = $OUT")"
CRONQ_RUN_AT='2030-01-01 00:00:00' cronq enqueue noop --in 1h
eq "--in on the command line: CRONQ_RUN_AT unused" "0|t" \
    "$RC|$(q "select run_at between now() + interval '59 minutes' and now() + interval '61 minutes' from cronq.jobs where id = $OUT")"
CRONQ_RUN_AT='2030-01-01 00:00:00' cronq enqueue noop
eq "without a flag, CRONQ_RUN_AT is used" "0|2030-01-01 00:00:00+00" "$RC|$(q "select run_at from cronq.jobs where id = $OUT")"
printf '{"type":"noop","key":"env-jsonl"}\n' | CRONQ_QUEUE=env CRONQ_PRIORITY=3 "$CRONQ" enqueue --jsonl
eq "--jsonl: per-job variables unused, the line's defaults kept" "0|default|0" \
    "$?|$(q "select queue, priority from cronq.jobs where idempotency_key = 'env-jsonl'")"

# Bad input: the documented exit code, one line naming the problem, nothing written.
before=$(count)
cronq enqueue noop '{"a": '
expect_rc_err "malformed JSON" 65 '^cronq: error: invalid payload: malformed JSON at line 1, column 6: '
cronq enqueue noop '[1, 2]'
expect "non-object payload" 65 "" 'cronq: error: invalid payload: must be a JSON object, not array'
cronq enqueue nop
expect "unknown task" 65 "" 'cronq: error: unrecognized task type "nop"'
cronq enqueue sleep '{"secs": 1}'
expect "unknown payload key" 65 "" 'cronq: error: invalid payload for task "sleep": unknown key "secs"'
cronq enqueue sleep '{"seconds": "1"}'
expect "wrong payload type" 65 "" 'cronq: error: invalid payload for task "sleep": "seconds" must be a number'
cronq enqueue sleep
expect "missing required key" 65 "" 'cronq: error: invalid payload for task "sleep": "seconds" is required'
cronq enqueue noop --run-at 'next tuesday-ish'
expect "bad --run-at" 65 "" 'cronq: error: invalid input syntax for type timestamp with time zone: "next tuesday-ish"'
# Times outside years 1 to 9999 (infinite, BC, year 20000) are refused
# wherever they come from: one job due at -infinity made status and check
# fail for everyone.
before=$(count)
for t in -infinity infinity '4713-11-24 00:00:00+00 BC' 20000-01-01; do
    cronq enqueue noop --run-at "$t"
    expect_rc_err "--run-at $t refused" 65 "invalid run_at: \".*\" is not a time of years 1 to 9999"
done
cronq enqueue noop --expires-at infinity
expect_rc_err "--expires-at infinity refused" 65 'invalid expires_at: "infinity" is not a time of years 1 to 9999'
cronq enqueue --jsonl <<<'{"type":"noop"}
{"type":"noop","run_at":"-infinity"}'
expect_rc_err "JSONL: run_at -infinity refused, naming its line" 65 '^cronq: error: line 2: invalid run_at: "-infinity"'
out=$("$PSQL" -XAtq -c "select cronq.enqueue('noop', run_at => '-infinity')" 2>&1)
match "SQL: cronq.enqueue refuses it" 'invalid run_at: "-infinity"' "$out"
eq "nothing written by any of them" "$before" "$(count)"
id=$(q "select cronq.enqueue('noop', run_at => now() + interval '1 day')")
out=$("$PSQL" -XAtq -c "update cronq.jobs set run_at = '-infinity' where id = $id" 2>&1)
eq "SQL: moving a job to -infinity is refused" "t" "$(q "select isfinite(run_at) from cronq.jobs where id = $id")"
cronq status
eq "status still answers" 0 "$RC"
q "delete from cronq.jobs where id = $id" >/dev/null
cronq enqueue noop --run-at '0001-01-01T00:00:00Z'
eq "the first instant of year 1 is a time" 0 "$RC"
q "delete from cronq.jobs where id = $OUT" >/dev/null

# Standard output unwritable: the job is committed, and the error says so,
# with its id (a script retrying on failure would enqueue it twice).
before=$(count)
"$CRONQ" enqueue noop >/dev/full 2>"$T_DIR/full.err"; RC=$?
last=$(q "select max(id) from cronq.jobs")
eq "stdout full: 74, the job written" "74|$((before + 1))" "$RC|$(count)"
eq "... and the one error line names it" "cronq: error: job $last was enqueued, but its id could not be written to standard output" \
    "$(cat "$T_DIR/full.err")"
q "delete from cronq.jobs where id = $last" >/dev/null

# A server that gives up a statement for now: 75 (try again), nothing written.
before=$(count)
OUT=$(PGOPTIONS="-c default_transaction_read_only=on" "$CRONQ" enqueue noop 2>"$T_DIR/ro.err"); RC=$?
eq "a read-only server (a standby): 69 (unavailable until someone acts), nothing written" "69|$before" "$RC|$(count)"
match "... saying why" "read-only transaction" "$(cat "$T_DIR/ro.err")"
q "create table public.hold (x int)" >/dev/null
"$PSQL" -XAtq -c "begin; lock table public.hold; select pg_sleep(5)" >/dev/null 2>&1 &
holder=$!
check "the table is held locked" wait_for "held" 10 \
    "select exists (select from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'hold' and l.mode = 'AccessExclusiveLock' and l.granted)"
q "create or replace function public.slow_guard() returns trigger language plpgsql as \$\$ begin perform from public.hold; return new; end \$\$;
   create trigger slow_guard before insert on cronq.jobs for each row execute function public.slow_guard()" >/dev/null
OUT=$(PGOPTIONS="-c lock_timeout=200ms" "$CRONQ" enqueue noop 2>"$T_DIR/lt.err"); RC=$?
eq "a lock timeout: 75, nothing written" "75|$before" "$RC|$(count)"
q "drop trigger slow_guard on cronq.jobs; drop function public.slow_guard()" >/dev/null
wait $holder
q "drop table public.hold" >/dev/null

cronq enqueue noop {} --in 5 minutes
expect "stray word" 64 "" $'cronq: error: too many command-line arguments (first is "minutes")\nTry "cronq enqueue --help" for more information.'
cronq enqueue noop --in 5y
expect "bad duration" 64 "" 'cronq: error: invalid value "5y" for --in: invalid duration "5y": unrecognized unit "y"
cronq: hint: A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, "2 hours 30 minutes".'
cronq enqueue noop '{"a": "\u0000"}'
expect "NUL in payload" 65 "" 'cronq: error: invalid payload: \u0000 is not allowed in strings (PostgreSQL cannot store it)'
cronq enqueue noop "$(printf '%0.s[' $(seq 1 70))$(printf '%0.s]' $(seq 1 70))"
expect "too deep" 65 "" 'cronq: error: invalid payload: nested deeper than 64 levels'
head -c 1100000 /dev/zero | tr '\0' 'a' | sed 's/^/{"s": "/; s/$/"}/' >"$T_DIR/big.json"
cronq_in "$(cat "$T_DIR/big.json")" enqueue noop -
expect "payload over 1 MiB" 65 "" 'cronq: error: invalid payload: larger than 1 MiB'
cronq enqueue noop --priority 1e3
expect "non-integer priority" 64 "" 'cronq: error: invalid value "1e3" for --priority: must be an integer from -1000000 to 1000000'
cronq enqueue noop --db "host=$PGHOST port=1 dbname=nope connect_timeout=2"
expect_rc_err "unreachable database" 69 '^cronq: error: could not connect to database: '
eq "nothing written by any bad input" "$before" "$(count)"

# The database refuses what the CLI refuses, whatever the path.
for sql in "insert into cronq.jobs (type) values ('nop')" \
           "insert into cronq.jobs (type, payload) values ('sleep', '{\"secs\": 1}')" \
           "insert into cronq.jobs (type, payload) values ('noop', '[1]')" \
           "select cronq.enqueue('fail', '{\"permanent\": \"yes\"}')"; do
    out=$("$PSQL" -XAtq -c "$sql" 2>&1)
    match "database refuses: $sql" 'ERROR: ' "$out"
done
out=$("$PSQL" -XAtq -c "select cronq.enqueue('nop')" 2>&1)
eq "SQL API message matches the CLI's" 'ERROR:  unrecognized task type "nop"' "$(head -n 1 <<<"$out")"
eq "nothing written by SQL either" "$before" "$(count)"

# enqueued_by is the inserting role, whatever a non-superuser claims.
mkrole enq_alice
q "grant cronq_user to enq_alice"
out=$(PGUSER=enq_alice "$PSQL" -XAtq -c "select cronq.enqueue('noop', queue => 'enq_alice')")
eq "cronq_user may enqueue through the SQL API" "enq_alice" "$(q "select enqueued_by from cronq.jobs where id = $out")"
out=$(PGUSER=enq_alice "$CRONQ" enqueue noop --queue enq_alice-cli)
eq "cronq_user may enqueue with the CLI" "enq_alice" "$(q "select enqueued_by from cronq.jobs where id = $out")"
out=$(PGUSER=enq_alice "$PSQL" -XAtq -c "insert into cronq.jobs (type, queue, enqueued_by) values ('noop', 'spoof', 'postgres') returning enqueued_by" 2>&1)
eq "cronq_user may name enqueued_by, and gets its own name" "enq_alice" "$(head -n 1 <<<"$out")"
q "grant insert on cronq.jobs to enq_alice"
out=$(PGUSER=enq_alice "$PSQL" -XAtq -c "insert into cronq.jobs (type, queue, enqueued_by) values ('noop', 'spoof', 'postgres') returning enqueued_by" 2>&1)
eq "even with full INSERT, a spoofed enqueued_by is replaced" "enq_alice" "$(head -n 1 <<<"$out")"
dead=$(q "select count(*) from cronq.jobs where status = 'dead'")
out=$(PGUSER=enq_alice "$PSQL" -XAtq -c "update cronq.jobs set status = 'dead'" 2>&1)
match "cronq_user cannot make its jobs dead" 'changed only by cancelling or retrying' "$out"
eq "... nor anyone's" "$dead" "$(q "select count(*) from cronq.jobs where status = 'dead'")"

# Idempotency keys.
cronq enqueue noop --key nightly-2026-11-22
first=$OUT
n=$(count)
cronq enqueue noop --key nightly-2026-11-22
expect "existing key prints the same id" 0 "$first" "cronq: warning: job $first already exists with key \"nightly-2026-11-22\"; nothing enqueued"
eq "no new row" "$n" "$(count)"
eq "SQL API returns the same id" "$first" "$(q "select cronq.enqueue('noop', key => 'nightly-2026-11-22')")"
eq "still no new row" "$n" "$(count)"
new=$(q "select cronq.enqueue('noop', key => 'from-sql')")
eq "SQL API key then CLI" "$new" "$("$CRONQ" enqueue noop --key from-sql 2>/dev/null)"

# Concurrent enqueues of one key: one job.
for i in $(seq 1 8); do "$CRONQ" enqueue noop --key race >/dev/null 2>&1 & done
wait
eq "8 concurrent enqueues of one key make one job" 1 "$(q "select count(*) from cronq.jobs where idempotency_key = 'race'")"

# --jsonl: 100,000 lines in one go.
q "delete from cronq.jobs"
seq 1 100000 | awk '{ printf "{\"type\":\"noop\",\"queue\":\"bulk\",\"priority\":%d}\n", $1 % 7 }' >"$T_DIR/ok.jsonl"
"$CRONQ" enqueue --jsonl <"$T_DIR/ok.jsonl" >"$T_DIR/out" 2>"$T_DIR/err"
eq "jsonl 100000 exit 0, quiet" "0//" "$?/$(cat "$T_DIR/out")/$(cat "$T_DIR/err")"
eq "jsonl 100000 rows" 100000 "$(q "select count(*) from cronq.jobs where queue = 'bulk'")"
eq "jsonl priorities" "0|14285" "$(q "select min(priority), count(*) filter (where priority = 0) from cronq.jobs")"

# One bad line in the middle: nothing written, the line named.
q "delete from cronq.jobs"
{ head -n 50000 "$T_DIR/ok.jsonl"; echo '{"type":"noop","payload":{"x":1}}'; tail -n 49999 "$T_DIR/ok.jsonl"; } >"$T_DIR/bad.jsonl"
"$CRONQ" enqueue --jsonl <"$T_DIR/bad.jsonl" >"$T_DIR/out" 2>"$T_DIR/err"
eq "bad line exit 65" 65 "$?"
eq "bad line named" 'cronq: error: line 50001: invalid payload for task "noop": unknown key "x"' "$(cat "$T_DIR/err")"
eq "bad line: nothing written" 0 "$(count)"
{ head -n 3 "$T_DIR/ok.jsonl"; echo; echo '{"type":"noop","run_at":"not a time"}'; } >"$T_DIR/badtime.jsonl"
"$CRONQ" enqueue --jsonl <"$T_DIR/badtime.jsonl" 2>"$T_DIR/err"
eq "bad time found by the server, named by input line" 'cronq: error: line 5: invalid input syntax for type timestamp with time zone: "not a time"' "$(cat "$T_DIR/err")"
eq "bad time: nothing written" 0 "$(count)"
printf '{"type":"noop"}\n{"type":"noop",\n' | "$CRONQ" enqueue --jsonl 2>"$T_DIR/err"
match "malformed line" '^cronq: error: line 2: malformed JSON' "$(cat "$T_DIR/err")"
printf '{"type":"noop","colour":"red"}\n' | "$CRONQ" enqueue --jsonl 2>"$T_DIR/err"
eq "unknown field" 'cronq: error: line 1: unrecognized field "colour"' "$(cat "$T_DIR/err")"
eq "still nothing written" 0 "$(count)"

# jsonl with keys: existing keys and in-file duplicates are skipped.
printf '{"type":"noop","key":"k1"}\n{"type":"noop","key":"k2"}\n{"type":"noop","key":"k1"}\n' | "$CRONQ" enqueue --jsonl
eq "in-file duplicate key skipped" 2 "$(count)"
printf '{"type":"noop","key":"k2"}\n{"type":"sleep","payload":{"seconds":0.5},"key":"k3","timeout":"5m","run_at":"2030-01-01T00:00:00Z","max_attempts":2}\n' | "$CRONQ" enqueue --jsonl
eq "existing key skipped, new one added" 3 "$(count)"
eq "jsonl fields stored" '{"seconds": 0.5}|00:05:00|2030-01-01 00:00:00+00|2' "$(q "select payload, timeout, run_at, max_attempts from cronq.jobs where idempotency_key = 'k3'")"

# An error keeps PostgreSQL's detail and hint, each on a line of its own.
q "create function public.refuse() returns trigger language plpgsql as \$\$
   begin raise exception 'refused by a trigger' using detail = 'the queue is frozen', hint = 'thaw it first'; end \$\$;
   create trigger refuse before insert on cronq.jobs for each row execute function public.refuse()"
before=$(count)
"$CRONQ" enqueue noop >"$T_DIR/out" 2>"$T_DIR/err"
eq "an error with detail and hint: exit, the three lines" "70|cronq: error: refused by a trigger
cronq: detail: the queue is frozen
cronq: hint: thaw it first" "$?|$(cat "$T_DIR/err")"
eq "and nothing written" "$before" "$(count)"
q "drop trigger refuse on cronq.jobs; drop function public.refuse()"

# Queue names are printable (issue 23): a control character is refused
# with 65 by every way in, and nothing is written.
before=$(count)
cronq enqueue noop --queue $'mail\nFORGED'
expect "--queue with a newline" 65 "" "cronq: error: queue name must be printable text without control characters"
cronq enqueue noop --queue $'q\xc2\x9b31m'
expect "--queue with a C1 control (CSI)" 65 "" "cronq: error: queue name must be printable text without control characters"
# Refused before any connection, as every bad input is.
CRONQ_DATABASE_URL="host=/nonexistent" cronq enqueue noop --queue $'q\xc2\x9b31m'
expect "a C1 control, no database needed" 65 "" "cronq: error: queue name must be printable text without control characters"
CRONQ_DATABASE_URL="host=/nonexistent" cronq schedule add ctl '* * * * *' noop --queue $'x\ty'
expect "schedule add: a tab, no database needed" 65 "" "cronq: error: queue name must be printable text without control characters"
cronq_in '{"type":"noop"}
{"type":"noop","queue":"a\u001b[2Jb"}' enqueue --jsonl
eq "JSONL with an ESC in a queue: 65, nothing written" "65|$before" "$RC|$(count)"
cronq schedule add ctl '* * * * *' noop --queue $'x\ty'
eq "schedule add --queue with a tab: 65, no schedule" "65|0" "$RC|$(q "select count(*) from cronq.schedules where name = 'ctl'")"
out=$("$PSQL" -XAtq -c "select cronq.enqueue('noop', queue => e'a\\nb')" 2>&1)
match "SQL: cronq.enqueue refuses it" "queue name must be printable text without control characters" "$out"
out=$("$PSQL" -XAtq -c "insert into cronq.schedules (name, cron, type, queue) values ('ctl', '* * * * *', 'noop', e'a\\x07')" 2>&1)
match "SQL: a schedule's insert refuses it" "queue name must be printable text" "$out"
eq "nothing written by any of them" "$before|0" "$(count)|$(q "select count(*) from cronq.schedules where name = 'ctl'")"
id=$(q "select cronq.enqueue('noop', queue => 'plain', run_at => now() + interval '1 day')")
out=$("$PSQL" -XAtq -c "update cronq.jobs set queue = e'p\\x1b' where id = $id" 2>&1)
eq "SQL: renaming a queue into one is refused" "plain" "$(q "select queue from cronq.jobs where id = $id")"
match "with the reason" "queue name must be printable text" "$out"
# A job written before the rule keeps running: its claim and outcome
# update the row without touching the name.
q "alter table cronq.jobs disable trigger jobs_queue_name"
old=$(q "select cronq.enqueue('noop', queue => e'old\\nq')")
q "alter table cronq.jobs enable trigger jobs_queue_name"
"$CRONQ" run --max-jobs 5 2>/dev/null
eq "an old job with such a name is claimed and finished, not lost" succeeded "$(q "select status from cronq.jobs where id = $old")"
q "delete from cronq.jobs where id in ($id, $old)"

# Rows written before schema 24, then 24 applied again: the times that
# broke status get their meaning in range, a sub-second rate window is
# rounded up to what it was shown as (the claim updates the limit's row:
# a row left out of the check failed every claim), and a job whose time
# is still out of range has its outcome recorded (an update checks only
# the times it changes).
q "drop trigger jobs_times on cronq.jobs; drop trigger jobs_times_update on cronq.jobs;
   alter table cronq.limits drop constraint limits_per_whole_seconds" >/dev/null
minus=$(q "select cronq.enqueue('noop', run_at => '-infinity')")
never=$(q "select cronq.enqueue('noop', expires_at => 'infinity')")
far=$(q "select cronq.enqueue('fail', '{\"message\": \"no\"}', max_attempts => 1, expires_at => '20000-01-01')")
q "insert into cronq.limits (key, rate, per) values ('type:noop', 5, '1.5 s')" >/dev/null
q "delete from cronq.schema_migrations where version >= 24" >/dev/null
migrate
eq "24 again: -infinity is due now, an infinite deadline none, the far one kept" "true|true|20000" \
    "$(q "select (select run_at between now() - interval '1 minute' and now() from cronq.jobs where id = $minus)
              || '|' || (select expires_at is null from cronq.jobs where id = $never)
              || '|' || (select extract(year from expires_at) from cronq.jobs where id = $far)")"
eq "... the 1.5 s window is 2 s" "00:00:02" "$(q "select per from cronq.limits where key = 'type:noop'")"
cronq status
eq "status answers" 0 "$RC"
"$CRONQ" run --max-jobs 10 2>"$T_DIR/legacy.err"
eq "the jobs run under the limit, and the far one's failure is recorded" "succeeded|succeeded|dead" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($minus, $never, $far)")"
eq "... quietly" "" "$(grep -v "failed attempt\|is dead after" "$T_DIR/legacy.err")"
q "delete from cronq.jobs where id in ($minus, $never, $far); delete from cronq.limits" >/dev/null

done_testing
