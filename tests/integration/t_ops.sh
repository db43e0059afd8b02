#!/usr/bin/env bash
# Operator commands: list and show (filters, JSON, every attempt), retry (by
# id and --dead), purge, and backfill (steps, templates, idempotency, dry
# runs, schedules). Bad input is refused with one line and writes nothing.
. "$(dirname "$0")/lib.sh"

# qj JSON SQL: SQL may use :'j', the JSON text (psql interpolates it quoted).
qj() { printf '%s' "$2" | "$PSQL" -XAtq -v ON_ERROR_STOP=1 -v j="$1"; }
jobs_count() { q "select count(*) from cronq.jobs"; }
runs_count() { q "select count(*) from cronq.job_runs"; }
# ids_of: the first column of a text list, header dropped, joined by spaces.
ids_of() { tail -n +2 <<<"$1" | awk '{print $1}' | paste -sd' ' -; }
reset() { q "delete from cronq.jobs; delete from cronq.job_runs"; }
nl=$'\n'

# --help, unknown options and stray arguments: no database needed.
src_dir="$(dirname "$0")/../../cmd/cronq"
for cmd in list show retry purge backfill; do
    cronq $cmd --help
    check "$cmd --help exits 0" [ "$RC" = 0 ]
    match "$cmd --help: usage" "Usage:" "$OUT"
    eq "$cmd --help: stderr empty" "" "$ERR"
    src="$src_dir/cmd_$cmd.c"; [ $cmd = show ] && src="$src_dir/cmd_list.c"
    opts=$(grep -oE '^\s*\{"[a-z-]+", (no|required)_argument' "$src" | grep -oE '"[a-z-]+"' | tr -d '"')
    [ $cmd = show ] && opts=json
    for opt in $opts db verbose log-format help; do
        if grep -q -- "--$opt" <<<"$OUT"; then pass; else fail "$cmd --help does not mention --$opt"; fi
    done
    cronq $cmd --x
    expect "$cmd: unknown option" 64 "" "cronq: error: unrecognized option \"--x\"
Try \"cronq $cmd --help\" for more information."
done
cronq list extra
expect "list: stray argument" 64 "" $'cronq: error: too many command-line arguments (first is "extra")\nTry "cronq list --help" for more information.'
cronq show
expect "show: no id" 64 "" $'cronq: error: missing required argument ID\nTry "cronq show --help" for more information.'
cronq show 1 2
expect "show: two ids" 64 "" $'cronq: error: too many command-line arguments (first is "2")\nTry "cronq show --help" for more information.'
cronq show abc
expect "show: bad id" 64 "" 'cronq: error: invalid value "abc" for job id: must be an integer from 1 to 9223372036854775807'
cronq list --status sleeping
expect "list: bad status" 64 "" 'cronq: error: invalid value "sleeping" for --status: must be queued, blocked, running, succeeded, failed, dead or cancelled'
cronq list --limit 0
expect "list: bad limit" 64 "" 'cronq: error: invalid value "0" for --limit: must be an integer from 1 to 1000000'
cronq retry
expect "retry: nothing named" 64 "" $'cronq: error: missing job IDs (or --dead)\nTry "cronq retry --help" for more information.'
cronq retry 1 --dead
expect "retry: ids and --dead" 64 "" $'cronq: error: job IDs and --dead cannot be used together\nTry "cronq retry --help" for more information.'
cronq retry 1 --type fail
expect "retry: --type without --dead" 64 "" $'cronq: error: --type and --queue go with --dead\nTry "cronq retry --help" for more information.'
cronq backfill noop --from 2026-01-01
expect "backfill: no --to" 64 "" $'cronq: error: --from and --to are required\nTry "cronq backfill --help" for more information.'
cronq backfill --from 2026-01-01 --to 2026-01-02
expect "backfill: no type" 64 "" $'cronq: error: missing required argument TYPE\nTry "cronq backfill --help" for more information.'
cronq backfill --schedule s noop --from 2026-01-01 --to 2026-01-02
expect "backfill: --schedule and a type" 64 "" $'cronq: error: too many command-line arguments (first is "noop")\nTry "cronq backfill --help" for more information.'
cronq backfill --schedule s --payload '{}' --from 2026-01-01 --to 2026-01-02
expect "backfill: --schedule and --payload" 64 "" $'cronq: error: --payload cannot be used with --schedule: a schedule\'s jobs take its own settings\nTry "cronq backfill --help" for more information.'
cronq backfill noop --from 2026-01-01 --to 2026-01-02 --step 1500ms
expect "backfill: step not whole seconds" 64 "" 'cronq: error: invalid value "1500ms" for --step: must be a whole number of seconds'
cronq purge --status queued
expect "purge: a status purge cannot take" 64 "" 'cronq: error: invalid value "queued" for --status: must be succeeded, dead or cancelled'

migrate

# ---- list and show
a=$("$CRONQ" enqueue noop --queue qa)
b=$("$CRONQ" enqueue fail '{"permanent": true, "message": "nope"}' --queue qb)
c=$("$CRONQ" enqueue fail '{"message": "again", "code": "flaky"}' --max-attempts 2 --queue qa)
d=$("$CRONQ" enqueue sleep '{"seconds": 0.1}' --queue qb)
"$CRONQ" run 2>/dev/null
q "update cronq.jobs set run_at = now() where id = $c"
"$CRONQ" run 2>/dev/null
e=$("$CRONQ" enqueue noop --in 1h --key later)
eq "setup: statuses" "succeeded dead dead succeeded queued" \
    "$(q "select string_agg(status, ' ' order by id) from cronq.jobs")"

cronq list
eq "list: exit 0, quiet" "0|" "$RC|$ERR"
match "list: header" '^ID +STATUS +TYPE +QUEUE +ATTEMPTS +RUN AT +FINISHED AT +ERROR' "$OUT"
eq "list: every job, newest first" "$e $d $c $b $a" "$(ids_of "$OUT")"
match "list: a dead job's line" "(^|${nl})$c +dead +fail +qa +2/2 +[0-9TZ:-]+ +[0-9TZ:-]+ +flaky: again" "$OUT"
cronq list --status dead
eq "list --status dead" "$c $b" "$(ids_of "$OUT")"
cronq list --status dead --type fail --queue qa
eq "list: filters combine" "$c" "$(ids_of "$OUT")"
cronq list --status succeeded --status queued
eq "list: a repeated filter matches any" "$e $d $a" "$(ids_of "$OUT")"
CRONQ_STATUS=succeeded,queued cronq list
eq "list: CRONQ_STATUS takes a comma list" "$e $d $a" "$(ids_of "$OUT")"
cronq list --type sleep --type noop --queue qa
eq "list: --type and --queue" "$a" "$(ids_of "$OUT")"
cronq list --limit 2
eq "list --limit: the newest" "$e $d" "$(ids_of "$OUT")"
cronq list --queue nowhere
eq "list: nothing matches: the header alone" "0|1" "$RC|$(wc -l <<<"$OUT")"

cronq list --json
eq "list --json: exit 0" 0 "$RC"
eq "list --json parses, newest first" "5|$e|$a" "$(qj "$OUT" "select json_array_length(:'j'::json), :'j'::json -> 0 ->> 'id', :'j'::json -> 4 ->> 'id'")"
keys="id,queue,type,status,payload,priority,attempts,max_attempts,timeout,run_at,expires_at,idempotency_key,unique_key,history,schedule,scheduled_for,enqueued_by,locked_by,locked_until,cancel_requested,error_code,last_error,created_at,updated_at,started_at,finished_at,hooks,depends_on,hook_of,earlier_attempts,waiting_on,result"
eq "list --json: stable keys" "$keys" "$(qj "$OUT" "select string_agg(k, ',') from json_object_keys(:'j'::json -> 0) k")"
eq "list --json: values" "later|queued|3600|0.1" \
    "$(qj "$OUT" "select (:'j'::json -> 0 ->> 'idempotency_key') || '|' || (:'j'::json -> 0 ->> 'status') || '|' || (:'j'::json -> 0 ->> 'timeout') || '|' || (:'j'::json -> 1 -> 'payload' ->> 'seconds')")"
eq "list --json: one job per line" 7 "$(wc -l <<<"$OUT")"
cronq list --json --status cancelled
expect "list --json: none" 0 "[]" ""

cronq show "$c"
eq "show: exit 0" "0|" "$RC|$ERR"
match "show: fields" $'id +'"$c"$'\nqueue +qa\ntype +fail\nstatus +dead\npayload +\\{"code":"flaky","message":"again"\\}' "$OUT"
match "show: timeout as a duration" $'\ntimeout +1h\n' "$OUT"
match "show: every attempt" $'runs \\(2\\):\n  attempt 1: failed, started [0-9TZ:-]+, took [0-9.]+s, worker [^\n]+\n    error: flaky: again\n  attempt 2: failed' "$OUT"
cronq show "$c" --json
eq "show --json: keys" "$keys,runs" "$(qj "$OUT" "select string_agg(k, ',') from json_object_keys(:'j'::json) k")"
eq "show --json: every attempt" "2|1|failed|flaky|again|2" \
    "$(qj "$OUT" "select json_array_length(:'j'::json -> 'runs') || '|' || (:'j'::json -> 'runs' -> 0 ->> 'attempt') || '|' || (:'j'::json -> 'runs' -> 0 ->> 'outcome') || '|' || (:'j'::json -> 'runs' -> 0 ->> 'error_code') || '|' || (:'j'::json -> 'runs' -> 0 ->> 'error') || '|' || (:'j'::json -> 'runs' -> 1 ->> 'attempt')")"
eq "show --json: run keys" "id,attempt,outcome,worker,started_at,finished_at,duration,error_code,error,output,stderr,result" \
    "$(qj "$OUT" "select string_agg(k, ',') from json_object_keys(:'j'::json -> 'runs' -> 0) k")"
cronq show "$e" --json
eq "show --json of a job never run: runs is []" "0|queued" "$(qj "$OUT" "select json_array_length(:'j'::json -> 'runs') || '|' || (:'j'::json ->> 'status')")"
# The tail of a long output: its last 10 lines.
q "insert into cronq.job_runs (job_id, attempt, outcome, output, duration)
   values ($a, 2, 'succeeded', (select string_agg('line' || i, E'\n') from generate_series(1, 12) i), '1.5 s')"
cronq show "$a"
match "show: the output's last lines" $'attempt 2: succeeded, took 1.500s\n    output:\n    \\.\\.\\.\n    line3\n    line4\n(    line[0-9]+\n)+    line12$' "$OUT"
check "show: not the first lines" [ -z "$(grep -x '    line2' <<<"$OUT")" ]
cronq show 999999
expect "show of a missing job" 65 "" 'cronq: error: job 999999 does not exist'

# ---- retry
reset
for i in 1 2 3; do "$CRONQ" enqueue fail '{"permanent": true}' >/dev/null; done
"$CRONQ" enqueue fail '{"permanent": true}' --queue other >/dev/null
n1=$("$CRONQ" enqueue noop); n2=$("$CRONQ" enqueue noop)
f=$("$CRONQ" enqueue fail '{"code": "soon"}' --max-attempts 5)
"$CRONQ" run 2>/dev/null
q "update cronq.jobs set status = 'dead', error_code = 'x', last_error = 'made dead by the test' where id in ($n1, $n2)"
eq "retry setup: dead by type, one failed fail" "fail|4 fail/failed|1 noop|2" \
    "$(q "select string_agg(type || case when status = 'dead' then '|' else '/' || status || '|' end || n, ' ' order by type, status) from (select type, status, count(*) n from cronq.jobs group by 1, 2) x")"
runs_before=$(runs_count)
failed_before=$(q "select status, attempts, run_at, last_error from cronq.jobs where id = $f")

cronq retry --dead --type fail --queue other -v
expect_told "retry --dead --type --queue" 0 "retried 1 job" ""
cronq retry --dead --type fail -v
expect_told "retry --dead --type fail" 0 "retried 3 jobs" ""
eq "the dead fail jobs are queued, due now, reset" "4|queued|0|t|||||f" \
    "$(q "select count(*), string_agg(distinct status, ','), max(attempts), bool_and(run_at <= now()), max(locked_by), max(locked_until::text), max(finished_at::text), max(last_error) || max(error_code), bool_or(cancel_requested) from cronq.jobs where type = 'fail' and id <> $f")"
eq "dead noop jobs untouched" "dead|2" "$(q "select string_agg(distinct status, ','), count(*) from cronq.jobs where type = 'noop'")"
eq "a failed (not dead) fail job untouched" "$failed_before" "$(q "select status, attempts, run_at, last_error from cronq.jobs where id = $f")"
eq "history kept" "$runs_before" "$(runs_count)"
"$CRONQ" run 2>/dev/null
eq "retried jobs run again: a second history row each" "4|2" \
    "$(q "select count(distinct job_id), min(n) from (select job_id, count(*) n from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.type = 'fail' and j.id <> $f group by job_id) x")"
cronq retry --dead -v
expect_told "retry --dead: every dead job" 0 "retried 6 jobs" ""

# By id: dead, failed, succeeded and cancelled are retried; queued and running are not.
reset
s=$("$CRONQ" enqueue noop); "$CRONQ" run
x=$("$CRONQ" enqueue noop); "$CRONQ" cancel "$x" >/dev/null
fl=$("$CRONQ" enqueue fail '{}'); "$CRONQ" run 2>/dev/null
dd=$("$CRONQ" enqueue fail '{"permanent": true}'); "$CRONQ" run 2>/dev/null
qq=$("$CRONQ" enqueue noop --in 1h)
rr=$("$CRONQ" enqueue noop --in 1h)
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'ops-test', locked_until = now() + interval '1 hour' where id = $rr"
eq "retry setup" "succeeded cancelled failed dead queued running" "$(q "select string_agg(status, ' ' order by id) from cronq.jobs")"
cronq retry "$s" "$x" "$fl" "$dd" "$qq" "$rr" -v
expect_told "retry by id" 0 "retried 4 jobs" "cronq: warning: job $qq is queued; not retried
cronq: warning: job $rr is running; not retried"
eq "retried by id: queued, attempts 0, due now; the others as they were" \
    "queued|0|t queued|0|t queued|0|t queued|0|t queued|0|f running|1|f" \
    "$(q "select string_agg(status || '|' || attempts || '|' || case when run_at <= now() then 't' else 'f' end, ' ' order by id) from cronq.jobs")"
eq "running job keeps its lock" "ops-test" "$(q "select locked_by from cronq.jobs where id = $rr")"
cronq retry "$dd" 999999
expect "retry of a missing id" 65 "" "cronq: error: job 999999 does not exist; nothing retried"
q "update cronq.jobs set status = 'dead', finished_at = now() where id = $dd" >/dev/null
cronq retry "$dd" 999999
eq "retry of a dead job and a missing id: all or nothing, the dead job left dead" "65||dead" \
    "$RC|$OUT|$(q "select status from cronq.jobs where id = $dd")"
q "update cronq.jobs set status = 'queued', finished_at = null where id = $dd" >/dev/null
before=$(q "select string_agg(status, ' ' order by id) from cronq.jobs")
cronq retry "$s" x
expect "retry: bad id, nothing done" 64 "" 'cronq: error: invalid value "x" for job id: must be an integer from 1 to 9223372036854775807'
eq "retry: bad id wrote nothing" "$before" "$(q "select string_agg(status, ' ' order by id) from cronq.jobs")"

# ---- purge
reset
for i in 1 2 3 4; do "$CRONQ" enqueue noop >/dev/null; done
"$CRONQ" run
for i in 1 2; do id=$("$CRONQ" enqueue noop --in 1h); "$CRONQ" cancel "$id" >/dev/null; done
for i in 1 2; do "$CRONQ" enqueue fail '{"permanent": true}' >/dev/null; done
"$CRONQ" run 2>/dev/null
fq=$("$CRONQ" enqueue fail '{}'); "$CRONQ" run 2>/dev/null
# A job running its second attempt elsewhere, its first in the history.
rn=$("$CRONQ" enqueue fail '{}'); "$CRONQ" run 2>/dev/null
q "update cronq.jobs set status = 'running', attempts = 2, locked_by = 'elsewhere', locked_until = now() + interval '1 hour' where id = $rn"
"$CRONQ" enqueue noop --in 1h >/dev/null
ids() { q "select string_agg(id::text, ' ' order by id) from cronq.jobs where $1"; }
old_s=$(ids "status = 'succeeded' and id in (select id from cronq.jobs where status = 'succeeded' order by id limit 2)")
old_c=$(ids "status = 'cancelled' and id = (select min(id) from cronq.jobs where status = 'cancelled')")
old_d=$(ids "status = 'dead' and id = (select min(id) from cronq.jobs where status = 'dead')")
# Two days ago: two succeeded, one cancelled, one dead, and the unfinished
# ones (which no purge may touch, however old).
q "update cronq.jobs set finished_at = now() - interval '2 days', created_at = now() - interval '3 days'
   where id in (${old_s// /,}, $old_c, $old_d) or status in ('failed', 'queued', 'running')"
eq "purge setup" "cancelled|2 dead|2 failed|1 queued|1 running|1 succeeded|4" \
    "$(q "select string_agg(status || '|' || n, ' ' order by status) from (select status, count(*) n from cronq.jobs group by 1) x")"
check "purge setup: the old ones have runs" [ "$(q "select count(*) from cronq.job_runs where job_id in (${old_s// /,})")" = 2 ]
keep=$(ids "id not in (${old_s// /,}, $old_c)")
cronq purge --older-than 1d -v
expect_told "purge --older-than 1d: succeeded and cancelled" 0 "purged 3 jobs" ""
eq "exactly the old succeeded and cancelled jobs are gone" "$keep" "$(ids "true")"
eq "their runs are gone, the others' kept" "0|6" \
    "$(q "select count(*) filter (where job_id in (${old_s// /,}, $old_c)), count(*) from cronq.job_runs")"
cronq purge --older-than 1d --status dead -v
expect_told "purge --status dead" 0 "purged 1 job" ""
eq "the old dead job is gone" "" "$(ids "id = $old_d")"
eq "its run too" 0 "$(q "select count(*) from cronq.job_runs where job_id = $old_d")"
cronq purge -v
expect_told "purge: default 14d keeps recent jobs" 0 "purged 0 jobs" ""
unfinished() { q "select string_agg(status, ' ' order by status) from cronq.jobs where status in ('failed', 'queued', 'running')"; }
unfinished_runs() { q "select count(*) from cronq.job_runs where job_id in ($fq, $rn)"; }
eq "failed, queued and running jobs are never purged" "failed queued running" "$(unfinished)"
before=$(jobs_count)
cronq purge --older-than 5x
expect "purge: bad duration" 64 "" 'cronq: error: invalid value "5x" for --older-than: invalid duration "5x": unrecognized unit "x"
cronq: hint: A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, "2 hours 30 minutes".'
cronq purge --older-than 0 --status running
expect_rc_err "purge: bad status" 64 'invalid value "running" for --status'
cronq purge now
expect "purge: stray argument" 64 "" $'cronq: error: too many command-line arguments (first is "now")\nTry "cronq purge --help" for more information.'
eq "bad purges deleted nothing" "$before" "$(jobs_count)"
cronq purge --older-than 0 --status succeeded --status dead --status cancelled -v
expect_told "purge --older-than 0: every finished job" 0 "purged 4 jobs" ""
eq "only unfinished jobs are left" "failed queued running" "$(q "select string_agg(status, ' ' order by status) from cronq.jobs")"
eq "with their history" 2 "$(unfinished_runs)"
# The purge task, with every status and no age, keeps them just the same
# (the failed job's retry put off: this run is the purge's alone).
q "update cronq.jobs set finished_at = now() - interval '2 days', created_at = now() - interval '3 days',
   run_at = case when status = 'failed' then now() + interval '1 day' else run_at end"
p=$("$CRONQ" enqueue purge '{"older_than": "0s", "statuses": ["succeeded", "dead", "cancelled"]}')
"$CRONQ" run
eq "the purge task ran" "succeeded" "$(q "select status from cronq.jobs where id = $p")"
eq "the purge task left the unfinished jobs" "failed queued running" "$(unfinished)"
eq "and their history" 2 "$(unfinished_runs)"

# ---- backfill
reset
cronq backfill noop --from 2026-03-01 --to 2026-03-31 -v
expect_told "backfill 31 days" 0 "enqueued 31 jobs (0 already existed)" ""
cronq backfill noop --from 2026-03-01T00:00:00Z --to '2026-03-31 00:00' -v
expect_told "the same backfill again enqueues nothing" 0 "enqueued 0 jobs (31 already existed)" ""
eq "31 jobs, default keys, due now, no schedule" "31|31|backfill:noop:2026-03-01T00:00:00Z|backfill:noop:2026-03-31T00:00:00Z|t|0" \
    "$(q "select count(*), count(distinct idempotency_key), min(idempotency_key), max(idempotency_key), bool_and(run_at <= now()), count(scheduled_for) + count(schedule) from cronq.jobs")"
eq "ids follow the steps" t "$(q "select bool_and(ok) from (select idempotency_key > lag(idempotency_key) over (order by id) as ok from cronq.jobs) x where ok is not null")"
cronq backfill noop --from 2026-03-30 --to 2026-04-02 -v
expect_told "an overlapping backfill adds only the new steps" 0 "enqueued 2 jobs (2 already existed)" ""

reset
cronq backfill fail --from '2026-03-01 10:00' --to '2026-03-01 12:30' --step 1h \
    --payload '{"message": "hour {ts} of {date}", "code": "c", "permanent": false}' --key 'rep-{{x}-{ts}' \
    --queue bq --priority 3 --max-attempts 2 --timeout 5m -v
expect_told "backfill with templates and job options" 0 "enqueued 3 jobs (0 already existed)" ""
eq "payload and key expanded, options applied" \
    'rep-{x}-2026-03-01T11:00:00Z|{"code": "c", "message": "hour 2026-03-01T11:00:00Z of 2026-03-01", "permanent": false}|bq|3|2|00:05:00' \
    "$(q "select idempotency_key || '|' || payload::text || '|' || queue || '|' || priority || '|' || max_attempts || '|' || timeout from cronq.jobs order by id offset 1 limit 1")"
cronq backfill sleep --from 2026-01-01 --to 2026-01-01 --payload '{"seconds": 0.1}'
eq "numbers reach the database as written" "0.1" "$(q "select payload ->> 'seconds' from cronq.jobs where type = 'sleep'")"

# --dry-run writes nothing and says what would be enqueued.
before=$(jobs_count)
cronq backfill noop --from 2026-04-01 --to 2026-04-03 --dry-run
expect "dry run" 0 $'2026-04-01T00:00:00Z\tbackfill:noop:2026-04-01T00:00:00Z\t{}\n2026-04-02T00:00:00Z\tbackfill:noop:2026-04-02T00:00:00Z\t{}\n2026-04-03T00:00:00Z\tbackfill:noop:2026-04-03T00:00:00Z\t{}\nwould enqueue 3 jobs (0 already exist)' ""
eq "dry run wrote nothing" "$before" "$(jobs_count)"
cronq backfill fail --from '2026-03-01 11:00' --to '2026-03-01 13:00' --step 1h --key 'rep-{{x}-{ts}' --payload '{"message": "{date}"}' --dry-run
expect "dry run: existing keys are left out" 0 $'2026-03-01T13:00:00Z\trep-{x}-2026-03-01T13:00:00Z\t{"message": "2026-03-01"}\nwould enqueue 1 job (2 already exist)' ""
eq "dry run wrote nothing" "$before" "$(jobs_count)"

# Bad ranges, times and templates: one line, nothing written.
cronq backfill noop --from 2026-03-31 --to 2026-03-01
expect "--to before --from" 64 "" 'cronq: error: --to 2026-03-01T00:00:00Z is before --from 2026-03-31T00:00:00Z'
cronq backfill noop --from 2026-03-01 --to 'next tuesday'
expect "bad time" 65 "" 'cronq: error: invalid value "next tuesday" for --to: invalid input syntax for type timestamp with time zone: "next tuesday"'
cronq backfill noop --from 2026-03-01 --to infinity
expect "infinite time" 65 "" 'cronq: error: invalid value "infinity" for --to: "infinity" is not a finite time'
cronq backfill noop --from 2026-01-01 --to 2026-12-31 --step 1m
expect "too many steps" 64 "" $'cronq: error: the range holds 524161 steps; a backfill enqueues at most 100000\ncronq: hint: Use a longer step, or split the range.'
cronq backfill noop --from 2026-03-01 --to 2026-03-02 --key 'k-{day}'
expect "unrecognized placeholder in the key" 65 "" 'cronq: error: invalid key template "k-{day}": unrecognized placeholder "{day}"
cronq: hint: A template may hold {date} (2026-03-08) and {ts} (2026-03-08T10:00:00Z), the time of each step in UTC; {{word} writes {word}.'
cronq backfill fail --from 2026-03-01 --to 2026-03-02 --payload '{"message": "{now}"}'
expect "unrecognized placeholder in the payload" 65 "" 'cronq: error: invalid payload template: unrecognized placeholder "{now}"
cronq: hint: A template may hold {date} (2026-03-08) and {ts} (2026-03-08T10:00:00Z), the time of each step in UTC; {{word} writes {word}.'
cronq backfill noop --from 2026-03-01 --to 2026-03-02 --key 'k-{date}' --step 12h
expect "a key repeating within the range" 65 "" $'cronq: error: key template "k-{date}" gives several steps the same key\ncronq: hint: Put {ts} in the key ({date} repeats at steps under 1d).'
cronq backfill fail --from 2026-03-01 --to 2026-03-02 --payload '{"code": "c-{date}"}'
expect "a payload invalid once expanded" 65 "" 'cronq: error: step 2026-03-01T00:00:00Z: invalid payload for task "fail": "code" must be 1 to 64 characters of a-z, 0-9 and _'
cronq backfill sleep --from 2026-03-01 --to 2026-03-02
expect "a payload the task refuses" 65 "" 'cronq: error: invalid payload for task "sleep": "seconds" is required'
cronq backfill nop --from 2026-03-01 --to 2026-03-02
expect "unknown task" 65 "" 'cronq: error: unrecognized task type "nop"'
cronq backfill noop --from 2026-03-01 --to 2026-03-02 --payload '{"a":'
expect_rc_err "malformed payload" 65 '^cronq: error: invalid payload: malformed JSON'
eq "bad backfills wrote nothing" "$before" "$(jobs_count)"

# ---- backfill --schedule: only the occurrences the live schedule has not enqueued.
reset
"$CRONQ" schedule add bf '0 */6 * * *' sleep '{"seconds": 0}' --queue sq --priority 2 --max-attempts 3 --timeout 2m
q "update cronq.schedules set next_run_at = now() - interval '13 hours', catchup = 'all' where name = 'bf'"
"$CRONQ" run --queue none-such
live=$(q "select count(*) from cronq.jobs where schedule = 'bf'")
check "the live schedule enqueued some occurrences ($live)" [ "$live" -ge 2 ]
sched_before=$(q "select next_run_at, last_job_id, last_enqueued_at from cronq.schedules where name = 'bf'")
from=$(q "select to_char(date_trunc('hour', now() at time zone 'UTC') - interval '3 days', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")
to=$(q "select to_char(now() at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")
total=$(q "select count(*) from generate_series('$from'::timestamptz, '$to'::timestamptz, interval '1 hour') t where extract(hour from t at time zone 'UTC')::int % 6 = 0")
cronq backfill --schedule bf --from "$from" --to "$to" --dry-run
eq "schedule dry run: one line per missing occurrence" "$((total - live))" "$(grep -c $'^[0-9TZ:-]*\tschedule:bf:' <<<"$OUT")"
match "schedule dry run: summary" "would enqueue $((total - live)) jobs \\($live already exist\\)$" "$OUT"
eq "schedule dry run wrote nothing" "$live" "$(jobs_count)"
cronq backfill --schedule bf --from "$from" --to "$to" -v
expect_told "backfill --schedule: only the missing occurrences" 0 "enqueued $((total - live)) jobs ($live already existed)" ""
eq "one job per occurrence, with the schedule's key, settings and times" "$total|$total|0|sq|2|3|00:02:00|postgres" \
    "$(q "select count(*), count(distinct idempotency_key),
              count(*) filter (where idempotency_key <> 'schedule:bf:' || to_char(scheduled_for at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') or run_at <> scheduled_for or extract(hour from scheduled_for at time zone 'UTC')::int % 6 <> 0),
              string_agg(distinct queue, ','), max(priority), max(max_attempts), max(timeout), string_agg(distinct enqueued_by, ',')
       from cronq.jobs where schedule = 'bf'")"
eq "the schedule's next run and last job are untouched" "$sched_before" "$(q "select next_run_at, last_job_id, last_enqueued_at from cronq.schedules where name = 'bf'")"
cronq backfill --schedule bf --from "$from" --to "$to" -v
expect_told "backfill --schedule again: nothing" 0 "enqueued 0 jobs ($total already existed)" ""
"$CRONQ" run --queue none-such
eq "the live schedule does not enqueue a backfilled occurrence again" "$total" "$(q "select count(*) from cronq.jobs where schedule = 'bf'")"
cronq backfill --schedule nope --from "$from" --to "$to"
expect "backfill of a missing schedule" 65 "" 'cronq: error: schedule "nope" does not exist'
cronq backfill --schedule bf --from "$to" --to "$from"
expect_rc_err "backfill --schedule: reversed range" 64 '^cronq: error: --to .* is before --from '
n=$(jobs_count)
cronq backfill --schedule bf --from "$from" --to "$(q "select now() + interval '2 days'")"
expect_rc_err "backfill --schedule: a range past now, refused whole (even to a superuser)" 64 \
    "^cronq: error: the range holds occurrences not due yet \\(the first at [0-9-]*T[0-9][02468]:00:00Z; the database's clock says [0-9TZ:-]*\\)"
first=$(sed -n 's/.*the first at \([^;]*\);.*/\1/p' <<<"$ERR")
eq "the first not due is the next occurrence" t "$(q "select '$first'::timestamptz > now() and '$first'::timestamptz <= now() + interval '6 hours'")"
eq "nothing written" "$n" "$(jobs_count)"
q "update cronq.schedules set cron = '* * * * *' where name = 'bf'"
cronq backfill --schedule bf --from 2026-01-01 --to 2026-12-31
expect "backfill --schedule: too many occurrences" 64 "" $'cronq: error: the range holds more than 100000 occurrences; a backfill enqueues at most 100000\ncronq: hint: Split the range.'
# Occurrences are enqueued in the author's name: a role backfills only the
# schedules it wrote (another's it does not even see).
mkrole ops_alice
q "grant cronq_user to ops_alice"
before=$(jobs_count)
PGUSER=ops_alice cronq backfill --schedule bf --from 2020-01-01 --to 2020-01-01T00:10:00Z
expect_rc_err "backfill --schedule of another role's schedule" 65 'schedule "bf" does not exist'
eq "... wrote nothing" "$before" "$(jobs_count)"
PGUSER=ops_alice cronq list --limit 1
eq "cronq_user may list" 0 "$RC"
dead=$(q "select count(*) from cronq.jobs where status = 'dead'")
PGUSER=ops_alice cronq retry --dead -v
expect_told "cronq_user's retry --dead retries only its own jobs" 0 "retried 0 jobs" ""
eq "... and the others' dead jobs stay dead" "$dead" "$(q "select count(*) from cronq.jobs where status = 'dead'")"

done_testing
