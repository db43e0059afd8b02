#!/usr/bin/env bash
# --help, --version and bad options for every command; usage errors exit 64
# with the message and a "Try" line (check: 3 and an UNKNOWN line), and never
# touch the database. Then, on a migrated database, what every command
# shares: one JSON style, durations and times read the same way, plurals,
# log lines that say things once.
. "$(dirname "$0")/lib.sh"

cronq --version
expect "version" 0 "cronq 0.1.0" ""
cronq --version extra
expect_rc_err "version with an argument: a usage error" 64 '^cronq: error: too many command-line arguments \(first is "extra"\)'
cronq --help
check "top-level help lists commands" [ "$RC" = 0 -a -n "$(grep -c 'enqueue' <<<"$OUT")" ]
cronq
expect "no command" 64 "" $'cronq: error: no command given\nTry "cronq --help" for more information.'
cronq frobnicate
expect "unknown command" 64 "" $'cronq: error: unrecognized command "frobnicate"\nTry "cronq --help" for more information.'
cronq --db x list
expect "an option before the command: where options go" 64 "" $'cronq: error: unrecognized option "--db" before the command: a command\'s options go after it (cronq COMMAND --db ...)\nTry "cronq --help" for more information.'

all_cmds="migrate enqueue run schedule cancel list show wait retry purge backfill status check"
for cmd in $all_cmds; do
    cronq $cmd --help
    check "$cmd --help exits 0 with Usage" [ "$RC" = 0 ]
    match "$cmd --help shows usage" "Usage:" "$OUT"
    sub=$cmd; [ $cmd = schedule ] && sub="schedule list"
    cronq $sub --no-such-flag
    if [ $cmd = check ]; then   # a monitoring plugin: one UNKNOWN line, exit 3
        expect "$cmd bad option" 3 'CRONQ UNKNOWN - unrecognized option "--no-such-flag"' ""
        continue
    fi
    expect "$cmd bad option" 64 "" "cronq: error: unrecognized option \"--no-such-flag\"
Try \"cronq $sub --help\" for more information."
done

# Every option of every command (its table in cmd/cronq/cmd_NAME.c, and the
# shared CLI_*_OPTIONS) appears in its --help and in the man page.
options_of() {
    local src="$(dirname "$0")/../../cmd/cronq/cmd_$1.c"
    # show shares cmd_list.c with list, and takes only --json of its own.
    [ "$1" = show ] && { echo json db verbose log-format help; return; }
    [ -f "$src" ] || { fail "no source for $1"; return; }
    grep -oE '^\s*\{"[a-z-]+", (no|required)_argument' "$src" | grep -oE '"[a-z-]+"' | tr -d '"'
    grep -q CLI_JOB_OPTIONS "$src" && echo queue priority max-attempts timeout
    echo db verbose log-format help
}
for cmd in $all_cmds; do
    for opt in $(options_of $cmd); do
        if "$CRONQ" $cmd --help | grep -q -- "--$opt"; then pass; else fail "$cmd --help does not mention --$opt"; fi
        if sed 's/\\-/-/g' "$(dirname "$0")/../../cronq.1" | grep -q -- "--$opt"; then pass; else fail "cronq.1 does not mention --$opt"; fi
    done
done

cronq run extra
expect "stray argument" 64 "" $'cronq: error: too many command-line arguments (first is "extra")\nTry "cronq run --help" for more information.'
cronq run --batch 0
expect "batch out of range" 64 "" 'cronq: error: invalid value "0" for --batch: must be an integer from 1 to 10000'
cronq run --batch
expect "missing value" 64 "" $'cronq: error: option "--batch" requires a value\nTry "cronq run --help" for more information.'
cronq run --lease 5x
expect "bad duration" 64 "" 'cronq: error: invalid value "5x" for --lease: invalid duration "5x": unrecognized unit "x"
cronq: hint: A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, "2 hours 30 minutes".'
CRONQ_BATCH=abc cronq run
expect "bad value from the environment names the variable" 64 "" 'cronq: error: invalid value "abc" for CRONQ_BATCH: must be an integer from 1 to 10000'
cronq run --log-format xml
expect "bad log format" 64 "" 'cronq: error: invalid value "xml" for --log-format: must be "text" or "json"'
cronq enqueue
expect "enqueue without type" 64 "" $'cronq: error: missing required argument TYPE\nTry "cronq enqueue --help" for more information.'
cronq schedule add nightly
expect "schedule add: the first argument missing is named" 64 "" $'cronq: error: missing required argument EXPR\nTry "cronq schedule add --help" for more information.'
cronq schedule add nightly '0 3 * * *'
expect "schedule add without type" 64 "" $'cronq: error: missing required argument TYPE\nTry "cronq schedule add --help" for more information.'
cronq enqueue noop '{}' extra
expect "enqueue too many args" 64 "" $'cronq: error: too many command-line arguments (first is "extra")\nTry "cronq enqueue --help" for more information.'
cronq enqueue --jsonl --queue x
expect "jsonl with per-job options" 64 "" $'cronq: error: --jsonl takes every job\'s fields from its line, not from options\nTry "cronq enqueue --help" for more information.'
cronq enqueue noop --run-at now --in 5m
expect "run-at with in" 64 "" $'cronq: error: --run-at and --in cannot be used together\nTry "cronq enqueue --help" for more information.'

# An unknown short option is named by itself, not by the argument before it;
# a cron expression cannot start with "-", so schedule next's error is right.
cronq list -xy
expect "unknown short option in a cluster" 64 "" $'cronq: error: invalid option "-x"\nTry "cronq list --help" for more information.'
cronq list -vx
expect "unknown short option after a known one" 64 "" $'cronq: error: invalid option "-x"\nTry "cronq list --help" for more information.'
cronq schedule next '-1 * * * *'
expect "schedule next: an expression starting with -" 64 "" $'cronq: error: invalid option "-1"\nTry "cronq schedule next --help" for more information.'
cronq run -vd
expect "short option missing its value in a cluster" 64 "" $'cronq: error: option "-d" requires a value\nTry "cronq run --help" for more information.'

# Flags win over CRONQ_<FLAG>: a variable for an option the command line
# gives, or for one it excludes, is not even parsed.
CRONQ_BATCH=abc cronq run --batch 0
expect "flag wins over a bad variable" 64 "" 'cronq: error: invalid value "0" for --batch: must be an integer from 1 to 10000'
CRONQ_BATCH=abc cronq run --help
check "--help whatever the environment holds" [ "$RC" = 0 -a -z "$ERR" ]
CRONQ_RUN_AT=2026-01-01 cronq enqueue nop --in 5m
expect "--in on the command line: CRONQ_RUN_AT unused" 65 "" 'cronq: error: unrecognized task type "nop"'
CRONQ_IN=abc cronq enqueue nop --run-at now
expect "--run-at on the command line: a bad CRONQ_IN unused" 65 "" 'cronq: error: unrecognized task type "nop"'
CRONQ_JSON=1 cronq status --prometheus --output ''
expect "--prometheus on the command line: CRONQ_JSON unused" 64 "" $'cronq: error: --output needs a file name\nTry "cronq status --help" for more information.'
CRONQ_PROMETHEUS=1 cronq status --json --output ''
expect "--json on the command line: CRONQ_PROMETHEUS unused" 64 "" $'cronq: error: --output needs a file name\nTry "cronq status --help" for more information.'
CRONQ_STEP=abc cronq backfill --schedule nightly
expect "--schedule on the command line: a bad CRONQ_STEP unused" 64 "" $'cronq: error: --from and --to are required\nTry "cronq backfill --help" for more information.'
CRONQ_SCHEDULE=nightly cronq backfill noop --queue q
expect "--queue on the command line: CRONQ_SCHEDULE unused" 64 "" $'cronq: error: --from and --to are required\nTry "cronq backfill --help" for more information.'
CRONQ_IN=abc cronq enqueue nop
expect "without the flag the variable is used" 64 "" 'cronq: error: invalid value "abc" for CRONQ_IN: invalid duration "abc": expected a number at "abc"
cronq: hint: A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, "2 hours 30 minutes".'

# run --type takes only a built-in task: a typo would run nothing, silently.
cronq run --type nosuch
expect "run --type: unknown task" 64 "" 'cronq: error: invalid value "nosuch" for --type: unrecognized task type (known tasks: noop, sleep, fail, sql, exec, purge)'
CRONQ_TYPE=noop,nosuch cronq run
expect "run: unknown task in CRONQ_TYPE" 64 "" 'cronq: error: invalid value "nosuch" for CRONQ_TYPE: unrecognized task type (known tasks: noop, sleep, fail, sql, exec, purge)'

# run --exclude-queue: a name is required and not empty, like --queue's;
# at most 64 of them. Refused before connecting.
cronq run --exclude-queue ''
expect "run --exclude-queue: empty name" 64 "" 'cronq: error: invalid value "" for --exclude-queue: must not be empty'
cronq run --queue a --exclude-queue b --exclude-queue ''
expect "run --exclude-queue: an empty name among others" 64 "" 'cronq: error: invalid value "" for --exclude-queue: must not be empty'
cronq run --exclude-queue
expect "run --exclude-queue: missing name" 64 "" $'cronq: error: option "--exclude-queue" requires a value\nTry "cronq run --help" for more information.'
cronq run $(for i in $(seq 1 65); do echo "--exclude-queue q$i"; done)
expect "run --exclude-queue: at most 64" 64 "" 'cronq: error: too many values for --exclude-queue (at most 64)'
CRONQ_EXCLUDE_QUEUE=$(seq -s, 1 65) cronq run
expect "run: at most 64 in CRONQ_EXCLUDE_QUEUE" 64 "" 'cronq: error: too many values for CRONQ_EXCLUDE_QUEUE (at most 64)'

# What --help promises is what is accepted.
cronq enqueue --help
eq "enqueue --help lists every task" "Tasks: noop, sleep, fail, sql, exec, purge (their payloads: man cronq, TASKS)." "$(tail -n 1 <<<"$OUT")"
cronq schedule next '0 3 * * *' --from 2026-01-01T00:00:00Z --count 1 --verbose --db 'host=/nonexistent' --log-format json
expect "schedule next takes the common options" 0 "2026-01-01T03:00:00Z" ""
CRONQ_DB='host=/nonexistent' cronq schedule next '0 3 * * *' --from 2026-01-01T00:00:00Z --count 1 -v
expect "schedule next: -v and CRONQ_DB" 0 "2026-01-01T03:00:00Z" ""

# --- what every command shares (a database from here on) ------------------
migrate

# Durations: every form on the flags of enqueue; the same seconds stored.
for d in 90s 5m 2h 1d 1h30m 1.5h 0.5d '1 hour' '2 hours 30 minutes' '90 seconds'; do
    cronq enqueue noop --in "$d" --timeout "$d"
    check "enqueue --in/--timeout [$d]" [ "$RC" = 0 -a -z "$ERR" ]
done
eq "durations: one meaning whatever the form" "90 300 7200 86400 5400 5400 43200 3600 9000 90" \
    "$(q "select string_agg(extract(epoch from timeout)::bigint::text, ' ' order by id) from cronq.jobs")"
eq "durations: --in too" 10 "$(q "select count(*) from cronq.jobs where abs(extract(epoch from run_at - created_at) - extract(epoch from timeout)) < 5")"
for d in 1.5.h -1h '1 hour 30' 99999999999w '1 fortnight' '1.h'; do
    cronq enqueue noop --in "$d"
    expect_rc_err "durations: [$d] refused" 64 "^cronq: error: invalid value \"$d\" for --in: "
done
cronq limit queue:dur --rate '10/1.5 minutes'
eq "limit --rate takes the same durations" "0|90" "$RC|$(q "select extract(epoch from per)::int from cronq.limits where key = 'queue:dur'")"
cronq limit queue:dur --clear

# Times: the same inputs on every command that takes a TIME; no zone is UTC.
q "truncate cronq.jobs cascade" >/dev/null
for t in '2030-01-02T03:04:05Z' '2030-01-02 03:04:05' 'Jan 2 2030 03:04:05' '2030-01-02 04:04:05+01'; do
    want=2030-01-02T03:04:05Z
    utc() { q "select to_char($1 at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from $2"; }
    id=$("$CRONQ" enqueue noop --run-at "$t")
    id2=$("$CRONQ" enqueue noop --expires-at "$t")
    eq "enqueue --run-at/--expires-at [$t]" "$want|$want" "$(utc run_at "cronq.jobs where id = $id")|$(utc expires_at "cronq.jobs where id = $id2")"
    cronq pause queue:times --until "$t"
    eq "pause --until [$t]" "0|$want" "$RC|$(utc until "cronq.pauses where key = 'queue:times'")"
    "$CRONQ" resume queue:times >/dev/null
    cronq schedule next '@hourly' --from "$t" --count 1
    expect "schedule next --from [$t]" 0 "2030-01-02T04:00:00Z" ""
    cronq schedule add times '@every 1h' noop --anchor "$t" --replace
    eq "schedule add --anchor [$t]" "0|$want" "$RC|$(utc anchor "cronq.schedules where name = 'times'")"
    cronq backfill noop --from "$t" --to "$t" --key "bf:{ts}:" -v
    match "backfill --from/--to [$t]: one job, for that time" "^enqueued 1 job \(0 already existed\)$" "$(told)"
    eq "backfill --from/--to [$t]: its key names that time" 1 "$(q "select count(*) from cronq.jobs where idempotency_key like 'bf:$want:%'")"
    q "delete from cronq.jobs where idempotency_key like 'bf:%'" >/dev/null
    cronq why times --at "$t" --json
    eq "why --at [$t]" "0|$want" "$RC|$(q "select '$OUT'::json->>'fire_at'")"
done

# One JSON style: compact, one object a line (arrays of objects one a line
# between "[" and "]"), durations in seconds, times RFC 3339 UTC.
"$CRONQ" limit queue:default --max-running 2 --rate 10/1m >/dev/null
"$CRONQ" schedule add nightly '0 3 * * *' noop --timeout 5m --start-deadline 90s --spread 30s >/dev/null
"$CRONQ" run >/dev/null 2>&1
id=$(q "select max(id) from cronq.jobs")
# json_style NAME: $OUT is one compact object, or "[", compact objects, "]".
json_style() {
    local body bad
    if [ "$(head -c1 <<<"$OUT")" = "[" ] && [ "$(printf '%s\n' "$OUT" | wc -l)" -gt 1 ]; then
        body=$(sed '1d;$d' <<<"$OUT"); eq "$1: [ and ] lines" "[|]" "$(head -1 <<<"$OUT")|$(tail -1 <<<"$OUT")"
    else
        body=$OUT; eq "$1: one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
    fi
    bad=$(grep -vE '^[[{].*[]}],?$' <<<"$body")
    eq "$1: every line a whole value" "" "$bad"
    bad=$(grep -oE '"[a-z_]+":"[0-9]{4}-[0-9]{2}-[0-9]{2}[^"]*"' <<<"$OUT" | grep -vE '^"(local|fire_local)":' |
          grep -vE ':"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"$')
    eq "$1: every time RFC 3339 UTC" "" "$bad"
    bad=$(grep -oE '"(timeout|start_deadline|spread|[a-z_]*seconds)":[^,}]*' <<<"$OUT" | grep -vE ':(null|-?[0-9.]+)$')
    eq "$1: every duration a number of seconds" "" "$bad"
}
for c in "status --json" "list --json" "show $id --json" "schedule list --json" "schedule show nightly --json" \
         "why nightly --json" "limit list --json" "wait $id --json"; do
    cronq $c
    check "$c: exit 0" [ "$RC" = 0 ]
    json_style "$c"
done

# Plurals, and log lines that say things once (fields the message says are
# left out of a text line; the JSON line keeps them all).
q "truncate cronq.jobs cascade" >/dev/null
id=$("$CRONQ" enqueue fail '{"message": "boom"}' --max-attempts 1)
cronq run -v
match "claimed 1 job, not 1 jobs" '(^|
)cronq: info: claimed 1 job worker=' "$ERR"
match "run finished: 1 job" 'run finished: 1 job, 0 succeeded, 1 failed, 0 given back, 0 leases rescued, 0 expired' "$ERR"
match "the dead job's line says each thing once" "(^|
)cronq: warning: job $id \\(fail\\) is dead after attempt 1: \"boom\" queue=default duration_ms=[0-9]+ outcome=failed(
|$)" "$ERR"
id=$("$CRONQ" enqueue fail '{"message": "boom"}' --max-attempts 1)
cronq run --log-format json
match "JSON log lines keep every field" "\"msg\":\"job $id \\(fail\\) is dead after attempt 1: \\\\\"boom\\\\\"\",\"job\":$id,\"type\":\"fail\",\"queue\":\"default\",\"attempt\":1," "$ERR"

done_testing
