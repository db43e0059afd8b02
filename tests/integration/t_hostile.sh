#!/usr/bin/env bash
# Hostile input: every case gets its documented exit code, nothing on
# stdout, one line on stderr (plus at most a "Try"/hint line), and writes
# nothing (row counts of every table before and after). Then the SQL API
# with the same kind of inputs.
. "$(dirname "$0")/lib.sh"
migrate
q "grant cronq_exec to postgres" >/dev/null 2>&1
counts() { q "select (select count(*) from cronq.jobs) || '/' || (select count(*) from cronq.job_runs) || '/' || (select count(*) from cronq.schedules)"; }
before=$(counts)
n_cases=0

# bad CODE DESC ARGS…: run cronq with ARGS and no input.
bad() {
    local code=$1 desc=$2; shift 2
    n_cases=$((n_cases + 1))
    OUT=$("$CRONQ" "$@" </dev/null 2>"$T_DIR/stderr"); RC=$?
    check_case "$code" "$desc"
}
# bad_in CODE DESC FILE ARGS…: the same with FILE on standard input.
bad_in() {
    local code=$1 desc=$2 file=$3; shift 3
    n_cases=$((n_cases + 1))
    OUT=$("$CRONQ" "$@" <"$file" 2>"$T_DIR/stderr"); RC=$?
    check_case "$code" "$desc"
}
# bad_check DESC ARGS…: cronq check reports a bad command line as a
# monitoring plugin does: one "CRONQ UNKNOWN - …" line, exit 3, no stderr.
bad_check() {
    local desc=$1; shift
    n_cases=$((n_cases + 1))
    OUT=$("$CRONQ" "$@" </dev/null 2>"$T_DIR/stderr"); RC=$?
    ERR=$(cat "$T_DIR/stderr")
    if [ "$RC" = 3 ] && [[ "$OUT" == "CRONQ UNKNOWN - "* ]] && [ "$(grep -c . <<<"$OUT")" = 1 ] && [ -z "$ERR" ]; then
        pass
    else
        fail "$desc: expected exit 3 and one UNKNOWN line, got rc=$RC out=[${OUT:0:200}] err=[${ERR:0:300}]"
    fi
}
check_case() {
    local lines first
    ERR=$(cat "$T_DIR/stderr")
    lines=$(grep -c . "$T_DIR/stderr")
    first=$(head -n 1 "$T_DIR/stderr")
    if [ "$RC" = "$1" ] && [ -z "$OUT" ] && [ "$lines" -ge 1 ] && [ "$lines" -le 2 ] \
        && [[ "$first" == "cronq: error: "* ]] && [ ${#first} -lt 2000 ]; then
        pass
    else
        fail "$2: expected exit $1 and one error line, got rc=$RC out=[${OUT:0:200}] err=[${ERR:0:300}]"
    fi
}

# Malformed, deep, huge and odd JSON payloads.
for p in '{' '}' '{"a":}' '{"a" 1}' "{'a': 1}" '{"a": 1,}' '[1' '{"a": [1, 2}' 'nul' 'tru' '1e999999' \
         '{"a": "\u0000"}' '{"a": "\ud800"}' '"just a string"' '[]' '42' 'null' 'true' \
         '{"a": 1} trailing' '{"a": NaN}' '{"a": Infinity}' '{"a": 0x10}' '{"a": .5}' '{"a": 01}'; do
    bad 65 "payload $p" enqueue noop "$p"
done
deep=$(printf '%0.s[' $(seq 1 100))$(printf '%0.s]' $(seq 1 100))
bad 65 "payload nested 100 deep" enqueue noop "{\"a\": $deep}"
deep=$(printf '%0.s{"a":' $(seq 1 70))1$(printf '%0.s}' $(seq 1 70))
bad 65 "objects nested 70 deep" enqueue noop "$deep"
head -c 10485760 /dev/zero | tr '\0' 'a' | sed 's/^/{"s": "/; s/$/"}/' >"$T_DIR/10mb.json"
bad_in 65 "10 MB payload on stdin" "$T_DIR/10mb.json" enqueue noop -
printf '{"a": "\xff\xfe"}' >"$T_DIR/badutf8.json"
bad_in 65 "invalid UTF-8 payload" "$T_DIR/badutf8.json" enqueue noop -
printf '{"a": "x\0y"}' >"$T_DIR/nul.json"
bad_in 65 "NUL byte in a payload" "$T_DIR/nul.json" enqueue noop -
bad 65 "payload with a bad key for sleep" enqueue sleep '{"seconds": 1, "x": 1}'
bad 65 "sleep seconds too big" enqueue sleep '{"seconds": 1e12}'
bad 65 "sleep seconds negative" enqueue sleep '{"seconds": -1}'
bad 65 "sql empty" enqueue sql '{"sql": "   "}'
bad 65 "sql not a string" enqueue sql '{"sql": 1}'
bad 65 "sql transaction not boolean" enqueue sql '{"sql": "select 1", "transaction": "no"}'
for c in '../x' '/bin/sh' 'a/b' '.hidden' '' 'x y' 'x;y' '$(id)' '`id`' '..'; do
    bad 65 "exec command [$c]" enqueue exec "{\"command\": \"$c\"}"
done
bad 65 "exec args not strings" enqueue exec '{"command": "x", "args": [1]}'
bad 65 "exec env not strings" enqueue exec '{"command": "x", "env": {"A": 1}}'
bad 65 "exec env bad name" enqueue exec '{"command": "x", "env": {"1A": "b"}}'
bad 65 "exec env CRONQ_" enqueue exec '{"command": "x", "env": {"CRONQ_JOB_ID": "b"}}'
bad 65 "purge without older_than" enqueue purge '{}'
bad 65 "purge older_than bad" enqueue purge '{"older_than": "forever"}'
bad 65 "purge statuses bad" enqueue purge '{"older_than": "1d", "statuses": ["running"]}'

# Unknown tasks, SQL-looking names and keys.
for t in nop NOOP 'noop ' '' "noop'; drop table cronq.jobs; --" 'x"y' '../etc' "$(printf 'n\001o')" 'sleep\n'; do
    bad 65 "task type [$t]" enqueue "$t"
done
bad 65 "queue name empty" enqueue noop --queue ''
bad 65 "queue name too long" enqueue noop --queue "$(head -c 300 /dev/zero | tr '\0' q)"
bad 65 "key empty" enqueue noop --key ''
bad 65 "key too long" enqueue noop --key "$(head -c 2000 /dev/zero | tr '\0' k)"

# Huge and negative numbers, bad times and durations.
for v in -1 0 1001 99999999999999999999 1e3 abc '' ' 5' 5.5; do
    bad 64 "max-attempts $v" enqueue noop --max-attempts "$v"
done
for v in 99999999999999999999 1e3 abc '' 1000001 -1000001; do
    bad 64 "priority $v" enqueue noop --priority "$v"
done
for v in 5x -5s 1.5.h 30m1h '' m '5 fortnights' 99999999999w 'now'; do
    bad 64 "duration $v" enqueue noop --in "$v"
done
for v in 0s 500ms; do bad 64 "timeout below 1s: $v" enqueue noop --timeout "$v"; done
for v in 'not a time' '2026-13-01' '2026-02-30T00:00:00Z' '25:00' 'yesterday-ish' '2026-01-01T00:00:00+99:00' \
         "2026-01-01'; drop table cronq.jobs; --"; do
    bad 65 "run-at [$v]" enqueue noop --run-at "$v"
done

# Unknown flags and arguments on every command.
for cmd in migrate enqueue run cancel "schedule list" "schedule add" "schedule next"; do
    for flag in --nope -Z --db; do
        # shellcheck disable=SC2086
        bad 64 "$cmd $flag" $cmd $flag
    done
done
bad 64 "unknown command" frobnicate
bad 64 "unknown schedule subcommand" schedule frob
bad 64 "run stray argument" run extra
bad 64 "migrate stray argument" migrate extra
for v in 0 -1 10001 abc 1e2; do bad 64 "run --batch $v" run --batch "$v"; done
for v in 0 65 -3 abc; do bad 64 "run --concurrency $v" run --concurrency "$v"; done
for v in 0 -5 abc; do bad 64 "run --max-jobs $v" run --max-jobs "$v"; done
for v in 500ms 0s; do bad 64 "run --lease $v" run --lease "$v"; done
for v in 5q -1s; do bad 64 "run --max-runtime $v" run --max-runtime "$v"; done
bad 64 "run --worker-id empty" run --worker-id ''
bad 64 "run --worker-id with a newline" run --worker-id $'w\nx'
bad 64 "run --worker-id with ESC" run --worker-id $'w\e[2J'
# An empty item of a list in the environment is refused as on the command
# line: dropped, "CRONQ_QUEUE=," would have left no filter (every queue).
CRONQ_QUEUE=, bad 64 "CRONQ_QUEUE=, (no queue named)" run --max-jobs 1
CRONQ_QUEUE=a,,b bad 64 "CRONQ_QUEUE with an empty item" run --max-jobs 1
CRONQ_EXCLUDE_QUEUE=, bad 64 "CRONQ_EXCLUDE_QUEUE=," run --max-jobs 1
# A pause or limit of a type no task has holds back nothing: a typo.
bad 64 "pause type:nosuch" pause type:nosuch
bad 64 "limit type:nosuch" limit type:nosuch --max-running 1
bad 64 "run --log-format xml" run --log-format xml
bad 64 "cancel no id" cancel
for v in abc 0 -1 1.5 99999999999999999999; do bad 64 "cancel id $v" cancel "$v"; done

# Schedules: expressions, zones, names.
for e in '' '*' '* * * *' '* * * * * *' '61 * * * *' '* 24 * * *' '* * 0 * *' '* * 32 * *' '* * * 13 *' '* * * * 8' \
         '5-1 * * * *' '*/0 * * * *' '*/61 * * * *' 'L * * * *' '* * L * *' '* * * * 5L' '* * * * 1#2' '? * * * *' \
         '* * 15W * *' '~ * * * *' '0~30 * * * *' '@reboot' '@often' 'a b c d e' '1,,2 * * * *' '1- * * * *' \
         '* * * jan-foo *' '* * * * mon-foo' "0 0 * * *'; drop table x; --"; do
    bad 65 "schedule next [$e]" schedule next "$e"
    bad 65 "schedule add [$e]" schedule add s1 "$e" noop
done
for z in Mars/Olympus 'Europe/../../etc/passwd' '/etc/localtime' '' 'utc ' 'Europe/Paris;rm'; do
    bad 65 "zone [$z]" schedule next '* * * * *' --tz "$z"
done
bad 65 "schedule name with spaces" schedule add 'a b' '* * * * *' noop
bad 65 "schedule name SQL" schedule add "x'; drop table cronq.jobs; --" '* * * * *' noop
bad 64 "schedule catchup bad" schedule add s1 '* * * * *' noop --catchup sometimes
bad 64 "schedule overlap bad" schedule add s1 '* * * * *' noop --overlap maybe
bad 65 "schedule next --from bad" schedule next '* * * * *' --from 'tomorrowish'
bad 64 "schedule next --count 0" schedule next '* * * * *' --count 0
bad 64 "schedule next --count huge" schedule next '* * * * *' --count 99999999999
bad 65 "schedule show missing" schedule show nope
bad 65 "schedule remove missing" schedule remove nope

# The operator commands.
bad 64 "list --status bogus" list --status bogus
bad 64 "list --limit 0" list --limit 0
bad 64 "list --limit abc" list --limit abc
bad 64 "list stray argument" list extra
bad 64 "show abc" show abc
bad 65 "show a missing job" show 99999999
bad 64 "show without id" show
bad 64 "retry without ids" retry
bad 64 "retry ids with --dead" retry --dead 5
bad 64 "retry --type without --dead" retry --type x
bad 64 "retry abc" retry abc
bad 64 "purge --status running" purge --status running
bad 64 "purge --older-than 5x" purge --older-than 5x
bad 64 "purge --older-than -1d" purge --older-than -1d
bad 65 "backfill bad times" backfill noop --from x --to y
bad 64 "backfill --to before --from" backfill noop --from 2026-02-01 --to 2026-01-01
bad 65 "backfill unknown task" backfill nop --from 2026-01-01 --to 2026-01-02
bad 65 "backfill bad payload" backfill noop --from 2026-01-01 --to 2026-01-02 --payload '{'
bad 65 "backfill unknown placeholder" backfill noop --from 2026-01-01 --to 2026-01-02 --key '{nope}'
bad 64 "backfill --step 0s" backfill noop --from 2026-01-01 --to 2026-01-02 --step 0s
bad 65 "backfill a missing schedule" backfill --schedule missing --from 2026-01-01 --to 2026-01-02
bad 64 "backfill without --from" backfill noop --to 2026-01-02
bad 64 "backfill over 100,000 steps" backfill noop --from 2000-01-01 --to 2026-01-01 --step 1m
bad 64 "status --json --prometheus" status --json --prometheus
bad 64 "status stray argument" status extra
bad_check "check --max-lag 5x" check --max-lag 5x
bad_check "check --max-dead abc" check --max-dead abc
bad_check "check warning above critical" check --max-dead 10,1
bad_check "check stray argument" check extra
bad_check "check --timeout 0" check --timeout 0
bad_check "check --timeout with a line break" check --timeout $'1s\n2s'

# --jsonl: bad lines of every kind, each alone after good lines.
printf '{"type":"noop"}\n' >"$T_DIR/good.jsonl"
i=0
for line in '{' '{"type":"nop"}' '{"type":1}' '{}' '{"type":"noop","payload":[1]}' '{"type":"noop","colour":1}' \
            '{"type":"noop","priority":"high"}' '{"type":"noop","priority":1e3}' '{"type":"noop","max_attempts":0}' \
            '{"type":"noop","timeout":"soon"}' '{"type":"noop","timeout":-5}' '{"type":"noop","run_at":"never"}' \
            '{"type":"noop","queue":""}' '{"type":"noop","key":""}' '[1,2,3]' '"noop"' '{"type":"noop"} {"type":"noop"}' \
            '{"type":"sleep","payload":{"seconds":"1"}}' '{"type":"noop","payload":{"a":"\u0000"}}'; do
    i=$((i + 1))
    { cat "$T_DIR/good.jsonl"; printf '%s\n' "$line"; cat "$T_DIR/good.jsonl"; } >"$T_DIR/bad$i.jsonl"
    bad_in 65 "jsonl line [$line]" "$T_DIR/bad$i.jsonl" enqueue --jsonl
done
printf '{"type":"noop","payload":{"a":"\xff"}}\n' >"$T_DIR/badutf8.jsonl"
bad_in 65 "jsonl invalid UTF-8" "$T_DIR/badutf8.jsonl" enqueue --jsonl

eq "nothing written by $n_cases hostile inputs" "$before" "$(counts)"
check "at least 150 hostile cases ($n_cases)" [ $n_cases -ge 150 ]

# The SQL API refuses the same inputs, and writes nothing either.
sql_cases=0
for call in "cronq.enqueue('nop')" "cronq.enqueue('noop', '[1]')" "cronq.enqueue('noop', '{\"a\": 1}')" \
            "cronq.enqueue('sleep', '{}')" "cronq.enqueue('sleep', '{\"seconds\": \"x\"}')" \
            "cronq.enqueue('exec', '{\"command\": \"../x\"}')" "cronq.enqueue('purge', '{\"older_than\": \"ever\"}')" \
            "cronq.enqueue('noop', max_attempts => 0)" "cronq.enqueue('noop', queue => '')" "cronq.enqueue('noop', key => '')" \
            "cronq.enqueue(null)" "cronq.enqueue('')" "cronq.enqueue('noop', 'null')" "cronq.enqueue('noop', timeout => '-1 hour')" \
            "cronq.enqueue('noop', '{\"a\": $(printf '%0.s[' $(seq 1 70))1$(printf '%0.s]' $(seq 1 70))}')" \
            "cronq.enqueue('noop', run_at => 'not a time')"; do
    sql_cases=$((sql_cases + 1))
    out=$("$PSQL" -XAtq -c "select $call" 2>&1)
    match "SQL API refuses $call" '^(ERROR|psql:.*ERROR)' "$out"
done
eq "nothing written through the SQL API either" "$before" "$(counts)"

done_testing
