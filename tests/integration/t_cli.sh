#!/usr/bin/env bash
# --help, --version and bad options for every command; usage errors exit 64
# with the message and a "Try" line, and never touch the database.
. "$(dirname "$0")/lib.sh"

cronq --version
expect "version" 0 "cronq 0.1.0" ""
cronq --help
check "top-level help lists commands" [ "$RC" = 0 -a -n "$(grep -c 'enqueue' <<<"$OUT")" ]
cronq
expect "no command" 64 "" $'cronq: error: no command given\nTry "cronq --help" for more information.'
cronq frobnicate
expect "unknown command" 64 "" $'cronq: error: unrecognized command "frobnicate"\nTry "cronq --help" for more information.'

all_cmds="migrate enqueue run schedule cancel list show retry purge backfill status check"
for cmd in $all_cmds; do
    cronq $cmd --help
    check "$cmd --help exits 0 with Usage" [ "$RC" = 0 ]
    match "$cmd --help shows usage" "Usage:" "$OUT"
    sub=$cmd; [ $cmd = schedule ] && sub="schedule list"
    cronq $sub --no-such-flag
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
expect "bad duration" 65 "" 'cronq: error: invalid value "5x" for --lease: invalid duration "5x": unknown unit "x" (use ms, s, m, h, d or w)'
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

done_testing
