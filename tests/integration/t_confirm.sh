#!/usr/bin/env bash
# Confirmation lines (issue 23): on a terminal, a command that changes
# something says so in one line on standard error ("cronq: added schedule
# nightly …"); with its streams redirected (cron, pipes, scripts) its
# output is what it was before, byte for byte. Commands that already print
# what they did (cancel, retry, pause, purge, limit) add nothing. A
# terminal is util-linux script's pseudo-terminal: stdout and stderr both,
# merged.
. "$(dirname "$0")/lib.sh"

# pty ARG…: cronq ARG… on a pseudo-terminal, leaving PTY (its output, \r
# removed), LINES (its lines, a progress line's \r rewrites each a line)
# and PRC. pty_in FILE ARG…: the same with FILE on standard input.
pty_in() {
    local input=$1 cmd
    shift
    printf -v cmd '%q ' "$CRONQ" "$@"
    script -qec "$cmd <$(printf %q "$input")" /dev/null </dev/null >"$T_DIR/pty"; PRC=$?
    PTY=$(tr -d '\r' <"$T_DIR/pty")
    LINES=$(tr '\r' '\n' <"$T_DIR/pty" | grep .)
}
pty() { pty_in /dev/null "$@"; }
# expect_pty DESC RC OUTPUT: the last pty call, exactly.
expect_pty() {
    if [ "$PRC" == "$2" ] && [ "$PTY" == "$3" ]; then pass; else
        fail "$1: expected rc=$2 [$3], got rc=$PRC [$PTY]"
    fi
}
version=$(ls "$T_ROOT"/sql/[0-9]*.sql | wc -l)

# --- migrate -----------------------------------------------------------------
pty migrate
eq "migrate on a terminal: the applying lines, then what they came to" \
    "cronq: applied $version migrations; schema is at version $version" "$(grep -v '^cronq: applying ' <<<"$PTY" | grep -v '^cronq: granted ')"
eq "one applying line per migration" "$version" "$(grep -c '^cronq: applying ' <<<"$PTY")"
purge_aside
q "update cronq.schedules set enabled = false" >/dev/null
pty migrate
expect_pty "migrate again on a terminal" 0 "cronq: schema is up to date (version $version); nothing applied"
pty migrate -v
expect_pty "migrate -v on a terminal: the info line instead" 0 "cronq: info: applied 0 migrations; schema is at version $version"
cronq migrate
expect "migrate again, redirected: silent" 0 "" ""
cronq migrate -v
expect "migrate -v, redirected: the info line as before" 0 "" "cronq: info: applied 0 migrations; schema is at version $version"

# --- enqueue -----------------------------------------------------------------
pty enqueue noop
id=${PTY%%$'\n'*}
expect_pty "enqueue on a terminal: the id, then one line" 0 "$id
cronq: enqueued job $id (noop, queue default)"
eq "it is enqueued" "noop|default|queued" "$(q "select type, queue, status from cronq.jobs where id = $id")"
pty enqueue noop --queue mail --key k1
id=${PTY%%$'\n'*}
expect_pty "enqueue --queue on a terminal" 0 "$id
cronq: enqueued job $id (noop, queue mail)"
pty enqueue noop --queue mail --key k1
expect_pty "an existing key: its warning, no confirmation" 0 "$id
cronq: warning: job $id already exists with key \"k1\"; nothing enqueued"
eq "no second job with the key" 1 "$(q "select count(*) from cronq.jobs where idempotency_key = 'k1'")"
pty enqueue noop --log-format json
match "--log-format json on a terminal: the id alone" '^[0-9]+$' "$PTY"
cronq enqueue noop
expect "enqueue redirected: the id alone, stderr empty" 0 "$(q "select max(id) from cronq.jobs")" ""
cronq enqueue noop --key k1
expect "an existing key redirected: as before" 0 "$id" "cronq: warning: job $id already exists with key \"k1\"; nothing enqueued"

printf '%s\n' '{"type": "noop", "key": "j1"}' '{"type": "noop", "key": "j2"}' '{"type": "noop", "key": "j3"}' >"$T_DIR/jobs.jsonl"
pty_in "$T_DIR/jobs.jsonl" enqueue --jsonl
eq "--jsonl on a terminal: one summary line" "cronq: enqueued 3 jobs (0 already existed)" "$(grep '^cronq: enqueued' <<<"$PTY")"
eq "  and no other but progress" "" "$(grep -v '^cronq: enqueue: [0-9]* lines\? read$' | grep -v '^cronq: enqueued 3 jobs' | grep .)"
eq "  the jobs are there" 3 "$(q "select count(*) from cronq.jobs where idempotency_key like 'j_'")"
pty_in "$T_DIR/jobs.jsonl" enqueue --jsonl
eq "--jsonl again: nothing enqueued, said so" "cronq: enqueued 0 jobs (3 already existed)" "$(grep '^cronq: enqueued' <<<"$PTY")"
pty_in "$T_DIR/jobs.jsonl" enqueue --jsonl -v
eq "--jsonl -v on a terminal: the info line instead" "cronq: info: enqueued 0 jobs (3 already existed)" \
    "$(grep -v '^cronq: enqueue: [0-9]* lines\? read$' <<<"$LINES")"
printf '%s\n' '{"type": "noop", "key": "j4"}' >"$T_DIR/one.jsonl"
pty_in "$T_DIR/one.jsonl" enqueue --jsonl
eq "--jsonl: 1 job, singular" "cronq: enqueued 1 job (0 already existed)" "$(grep '^cronq: enqueued' <<<"$PTY")"
OUT=$("$CRONQ" enqueue --jsonl <"$T_DIR/jobs.jsonl" 2>"$T_DIR/stderr"); RC=$?; ERR=$(cat "$T_DIR/stderr")
expect "--jsonl redirected: silent" 0 "" ""

# --- schedules ----------------------------------------------------------------
pty schedule add nightly '0 3 * * *' noop --tz Europe/Paris
cronq schedule next nightly --count 1
expect_pty "schedule add on a terminal: expression, zone, next run" 0 \
    "cronq: added schedule nightly (0 3 * * *, Europe/Paris); next run $OUT"
eq "it is stored" "0 3 * * *|Europe/Paris|t" "$(q "select cron, timezone, enabled from cronq.schedules where name = 'nightly'")"
pty schedule add nightly '0 4 * * *' noop --tz Europe/Paris --replace
cronq schedule next nightly --count 1
expect_pty "--replace of an existing one: replaced" 0 \
    "cronq: replaced schedule nightly (0 4 * * *, Europe/Paris); next run $OUT"
eq "replaced in the table" "0 4 * * *" "$(q "select cron from cronq.schedules where name = 'nightly'")"
pty schedule add fresh '@hourly' noop --replace
cronq schedule next fresh --count 1
expect_pty "--replace of none: added, zone UTC" 0 "cronq: added schedule fresh (@hourly, UTC); next run $OUT"
pty schedule add sleepy '*/5 * * * *' noop --disabled
expect_pty "--disabled: said, no next run" 0 "cronq: added schedule sleepy (*/5 * * * *, UTC), disabled"
pty schedule add nightly '0 3 * * *' noop
expect_pty "an existing name: the error alone" 65 'cronq: error: schedule "nightly" already exists
cronq: hint: Use --replace to replace it, or "cronq schedule remove nightly" first.'
cronq schedule add quiet '0 3 * * *' noop
expect "schedule add redirected: silent" 0 "" ""
cronq schedule add quiet '0 3 * * *' noop --replace
expect "schedule add --replace redirected: silent" 0 "" ""

pty schedule disable nightly
expect_pty "disable on a terminal" 0 "cronq: disabled schedule nightly"
eq "disabled in the table" f "$(q "select enabled from cronq.schedules where name = 'nightly'")"
pty schedule disable nightly
expect_pty "disable again: nothing changed, said so" 0 "cronq: schedule nightly was already disabled; nothing changed"
pty schedule enable nightly
cronq schedule next nightly --count 1
expect_pty "enable on a terminal: its next run" 0 "cronq: enabled schedule nightly; next run $OUT"
eq "enabled in the table" t "$(q "select enabled from cronq.schedules where name = 'nightly'")"
pty schedule enable nightly
expect_pty "enable again: nothing changed" 0 "cronq: schedule nightly was already enabled; nothing changed"
"$CRONQ" pause schedule:nightly >/dev/null
"$CRONQ" schedule disable nightly
pty schedule enable nightly
expect_pty "enabled again while paused: no run planned" 0 "cronq: enabled schedule nightly; no run planned"
"$CRONQ" resume schedule:nightly >/dev/null
cronq schedule disable quiet
expect "disable redirected: silent" 0 "" ""
cronq schedule disable quiet
expect "disable again redirected: silent" 0 "" ""
cronq schedule enable quiet
expect "enable redirected: silent" 0 "" ""

pty schedule run nightly
id=${PTY%%$'\n'*}
expect_pty "schedule run on a terminal: the id, then one line" 0 "$id
cronq: enqueued job $id of schedule nightly"
eq "its job is there" "noop|nightly" "$(q "select type, schedule from cronq.jobs where id = $id")"
cronq schedule run quiet
expect "schedule run redirected: the id alone" 0 "$(q "select max(id) from cronq.jobs")" ""

pty schedule remove fresh
expect_pty "remove on a terminal" 0 "cronq: removed schedule fresh"
eq "removed from the table" 0 "$(q "select count(*) from cronq.schedules where name = 'fresh'")"
pty schedule remove fresh
expect_pty "remove of none: the error alone" 65 'cronq: error: schedule "fresh" does not exist'
cronq schedule remove quiet
expect "remove redirected: silent" 0 "" ""

# --- run ----------------------------------------------------------------------
due=$(q "select count(*) from cronq.jobs where status = 'queued'")
pty run
expect_pty "run on a terminal: what it came to" 0 "cronq: ran $due jobs: $due succeeded, 0 failed, 0 given back"
eq "they ran" 0 "$(q "select count(*) from cronq.jobs where status = 'queued'")"
fid=$("$CRONQ" enqueue fail '{"message": "no", "permanent": true}')
pty run
match "run of 1 job: its warning first" "^0\|cronq: warning: job $fid \(fail\) is dead after attempt 1: \"no\" " "$PRC|$PTY"
eq "  then what it came to (singular)" "cronq: ran 1 job: 0 succeeded, 1 failed, 0 given back" "$(tail -n 1 <<<"$PTY")"
eq "  two in all" 2 "$(wc -l <<<"$PTY")"
"$CRONQ" enqueue noop >/dev/null
pty run -v
eq "run -v on a terminal: the info line, no second one" "" "$(grep -v '^cronq: info: ' <<<"$PTY" | grep .)"
check "  which is there" grep -q '^cronq: info: run finished: 1 job, 1 succeeded' <<<"$PTY"
"$CRONQ" enqueue noop >/dev/null
cronq run
expect "run redirected: silent" 0 "" ""

# --- cancel, retry, pause, resume, purge, limit, backfill: a confirmation
# line on a terminal, nothing under cron (SPEC 12: they printed their line
# on standard output whatever it was, and a crontab's purge mailed daily) ---
cancel_id=$("$CRONQ" enqueue noop --in 1h)
pty cancel "$cancel_id"
expect_pty "cancel on a terminal: its line" 0 "cronq: $cancel_id cancelled"
pty retry "$cancel_id"
expect_pty "retry on a terminal: its line" 0 "cronq: retried 1 job"
pty pause queue:mail
expect_pty "pause on a terminal: its line" 0 "cronq: queue:mail paused"
pty resume queue:mail
expect_pty "resume on a terminal: its line" 0 "cronq: queue:mail resumed"
purged=$(q "select count(*) from cronq.jobs where status in ('succeeded', 'cancelled')")
pty purge --older-than 0s
eq "purge on a terminal: progress, then its line" "cronq: purged $purged jobs" "$(grep -v '^cronq: purge: [0-9]* jobs\? deleted$' <<<"$LINES")"
eq "  they are gone" 0 "$(q "select count(*) from cronq.jobs where status in ('succeeded', 'cancelled')")"
pty limit queue:mail --clear
expect_pty "limit --clear on a terminal: its line" 0 "cronq: queue:mail had no limits"
pty limit queue:mail --max-running 3
expect_pty "limit set on a terminal: its line" 0 "cronq: queue:mail limited: at most 3 running"
pty backfill noop --from 2026-01-01T00:00:00Z --to 2026-01-01T00:00:00Z
eq "backfill on a terminal: progress, then its line" "0|cronq: enqueued 1 job (0 already existed)" \
    "$PRC|$(grep -v '^cronq: backfill: [0-9]* of [0-9]* jobs\?$' <<<"$LINES")"
# Under cron (no terminal): nothing at all, on either stream.
c2=$("$CRONQ" enqueue noop --in 1h)
for args in "cancel $c2" "retry $c2" "pause queue:mail" "resume queue:mail" "purge --older-than 0s" \
            "limit queue:mail --max-running 2" "limit queue:mail --clear" \
            "backfill noop --from 2026-01-02T00:00:00Z --to 2026-01-02T00:00:00Z"; do
    cronq $args
    expect "$args under cron: silent" 0 "" ""
done
eq "  and each did its work" "2|0|t" "$(q "select count(*) from cronq.jobs where type = 'noop' and idempotency_key like 'backfill:noop:%'")|$(q "select count(*) from cronq.limits")|$(q "select status = 'queued' from cronq.jobs where id = $c2")"

done_testing
