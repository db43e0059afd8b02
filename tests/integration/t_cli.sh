#!/usr/bin/env bash
# --help, --version and bad options for every command; usage errors exit 64
# with the message and a "Try" line (check: 3 and an UNKNOWN line), and never
# touch the database.
. "$(dirname "$0")/lib.sh"

cronq --version
expect "version" 0 "cronq 0.1.0" ""
cronq --help
check "top-level help lists commands" [ "$RC" = 0 -a -n "$(grep -c 'enqueue' <<<"$OUT")" ]
cronq
expect "no command" 64 "" $'cronq: error: no command given\nTry "cronq --help" for more information.'
cronq frobnicate
expect "unknown command" 64 "" $'cronq: error: unrecognized command "frobnicate"\nTry "cronq --help" for more information.'

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
cronq: hint: A duration is numbers with units ms, s, m, h, d or w, largest first: 90s, 1h30m, 250ms.'
CRONQ_BATCH=abc cronq run
expect "bad value from the environment names the variable" 64 "" 'cronq: error: invalid value "abc" for CRONQ_BATCH: must be an integer from 1 to 10000'
cronq run --log-format xml
expect "bad log format" 64 "" 'cronq: error: invalid value "xml" for --log-format: must be "text" or "json"'
cronq enqueue
expect "enqueue without type" 64 "" $'cronq: error: missing required argument\nTry "cronq enqueue --help" for more information.'
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
cronq: hint: A duration is numbers with units ms, s, m, h, d or w, largest first: 90s, 1h30m, 250ms.'

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

done_testing
