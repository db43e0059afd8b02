#!/usr/bin/env bash
# Bad input refused by the client with its documented exit code, one line
# naming the problem, and nothing written: malformed connection strings
# (64), multi-level flag values, impossible dates, duplicate JSON keys (65),
# invalid UTF-8 and invisible reordering characters in names (64).
. "$(dirname "$0")/lib.sh"
migrate
counts() { q "select (select count(*) from cronq.jobs) || '/' || (select count(*) from cronq.schedules) || '/' || (select count(*) from cronq.limits)"; }
before=$(counts)

# check's limits: CRIT or WARN,CRIT, and a message names what the user gave.
cronq check --max-dead 1,2,3
expect "check: three levels named whole" 3 'CRONQ UNKNOWN - invalid value "1,2,3" for --max-dead: must be CRIT or WARN,CRIT (one or two levels)' ""
cronq check --max-overdue 1m,2m,3m
expect "check: three durations named whole" 3 'CRONQ UNKNOWN - invalid value "1m,2m,3m" for --max-overdue: must be CRIT or WARN,CRIT (one or two levels)' ""
cronq check --max-stuck 1,x
expect "check: the bad level is said" 3 'CRONQ UNKNOWN - invalid value "x" for the critical level of --max-stuck: must be an integer from 0 to 9223372036854775807' ""

# Well-formed times that name no instant: not "not RFC 3339", and no
# database is asked to read them.
PGPORT=1 cronq schedule next '0 * * * *' --from 2026-02-30
expect "next --from: February 30" 65 "" 'cronq: error: invalid value "2026-02-30" for --from: "2026-02-30" is not a valid date: February 2026 has 28 days'
PGPORT=1 cronq schedule next '@every 1h' --anchor 2028-02-30T00:00:00Z
expect "next --anchor: a leap year's February 30" 65 "" 'cronq: error: invalid value "2028-02-30T00:00:00Z" for --anchor: "2028-02-30T00:00:00Z" is not a valid date: February 2028 has 29 days'
PGPORT=1 cronq schedule next '0 * * * *' --from 2026-01-01T24:30:00Z
expect "next --from: hour 24" 65 "" 'cronq: error: invalid value "2026-01-01T24:30:00Z" for --from: "2026-01-01T24:30:00Z" is not a valid time of day'
cronq enqueue noop --run-at 2026-04-31T00:00:00Z
expect "enqueue --run-at: April 31" 65 "" 'cronq: error: invalid run time: "2026-04-31T00:00:00Z" is not a valid date: April 2026 has 30 days'
cronq enqueue noop --expires-at 2026-13-01
expect "enqueue --expires-at: month 13" 65 "" 'cronq: error: invalid start deadline: "2026-13-01" is not a valid date'
cronq_in '{"type":"noop"}
{"type":"noop","run_at":"2027-02-29"}
' enqueue --jsonl
expect "jsonl run_at: February 29 of a common year" 65 "" 'cronq: error: line 2: invalid run time: "2027-02-29" is not a valid date: February 2027 has 28 days'
# Times the database reads (PostgreSQL's syntax is accepted there): one it
# cannot read is named with its flag, 65, and nothing is paused.
cronq pause queue:reports --until 2026-02-30
expect "pause --until: February 30, the flag named" 65 "" 'cronq: error: invalid value "2026-02-30" for --until: date/time field value out of range: "2026-02-30"'
cronq pause queue:reports --until soon
expect "pause --until: not a time, the flag named" 65 "" 'cronq: error: invalid value "soon" for --until: invalid input syntax for type timestamp with time zone: "soon"'
eq "a pause with a bad --until wrote nothing" 0 "$(q "select count(*) from cronq.pauses")"
cronq why nightly --at 2026-02-30T00:00:00Z
expect "why --at: February 30, the flag named" 65 "" 'cronq: error: invalid value "2026-02-30T00:00:00Z" for --at: date/time field value out of range: "2026-02-30T00:00:00Z"'
eq "impossible dates wrote nothing" "$before" "$(counts)"

# The same key twice in a JSON object: refused, the key named, not the last
# one silently kept.
cronq enqueue noop '{"a": 1, "a": 2}'
expect "payload: a duplicate key" 65 "" "cronq: error: invalid payload: malformed JSON at line 1, column 12: duplicate object key near '\"a\"'"
cronq_in '{"type":"noop","type":"sql"}' enqueue --jsonl
expect "jsonl: a duplicate field" 65 "" "cronq: error: line 1: malformed JSON at column 21: duplicate object key near '\"type\"'"
cronq_in '{"type":"noop","payload":{"x":{"y":1,"y":2}}}' enqueue --jsonl
expect "jsonl: a duplicate key deep in the payload" 65 "" "cronq: error: line 1: malformed JSON at column 40: duplicate object key near '\"y\"'"
cronq schedule add dup '0 * * * *' noop '{"k": 1, "k": 1}'
expect "schedule add: a duplicate payload key" 65 "" "cronq: error: invalid payload: malformed JSON at line 1, column 12: duplicate object key near '\"k\"'"
eq "duplicate keys wrote nothing" "$before" "$(counts)"

# JSONL's timeout is a duration or a number of seconds, fractions too,
# as --timeout takes "3.5s".
cronq_in '{"type":"noop","timeout":3.5,"key":"t-frac"}
{"type":"noop","timeout":"3.5s","key":"t-text"}
{"type":"noop","timeout":2,"key":"t-int"}
' enqueue --jsonl
eq "jsonl: fractional seconds accepted" 0 "$RC"
eq "jsonl: 3.5 is 3.5 s, as \"3.5s\" is" "t-frac|3.5
t-int|2
t-text|3.5" "$(q "select idempotency_key, extract(epoch from timeout)::float8 from cronq.jobs where idempotency_key like 't-%' order by 1")"
q "delete from cronq.jobs where idempotency_key like 't-%'" >/dev/null
cronq_in '{"type":"noop","timeout":-0.5}' enqueue --jsonl
expect "jsonl: a negative number of seconds" 65 "" 'cronq: error: line 1: "timeout" must be a positive duration such as "90s" or a number of seconds'
eq "timeouts wrote nothing more" "$before" "$(counts)"

# Invalid UTF-8 never reaches the server: the flag (or argument) is named.
cronq enqueue noop --queue $'\xff'
expect "--queue not UTF-8" 64 "" 'cronq: error: --queue is not valid UTF-8'
CRONQ_QUEUE=$'q\xc3' cronq enqueue noop
expect "CRONQ_QUEUE not UTF-8" 64 "" 'cronq: error: CRONQ_QUEUE is not valid UTF-8'
cronq run --worker-id $'w\xed\xa0\x80'
expect "--worker-id: a surrogate is not UTF-8" 64 "" 'cronq: error: --worker-id is not valid UTF-8'
cronq schedule show $'nightly\xc0\xaf'
expect "schedule name: an overlong form is not UTF-8" 64 "" 'cronq: error: argument 1 is not valid UTF-8'
cronq list --type $'\xfe'
expect "list --type not UTF-8" 64 "" 'cronq: error: --type is not valid UTF-8'
cronq enqueue noop --queue 'café'
eq "UTF-8 itself is fine" 0 "$RC"
q "delete from cronq.jobs where queue = 'café'" >/dev/null

# Bidirectional overrides and zero-width characters in names cronq prints
# are refused where control characters are.
for c in $'\u202e' $'\u202a' $'\u2066' $'\u2069' $'\u200b' $'\u200f'; do
    cronq enqueue noop --queue "evil${c}txt"
    expect "queue name with U+$(printf '%s' "$c" | iconv -f UTF-8 -t UTF-32BE | od -An -tx1 | tr -d ' \n' | sed 's/^0*//')" 65 "" \
        'cronq: error: queue name must be printable text without control characters'
done
cronq run --worker-id $'host\u202e1'
expect "worker id with a right-to-left override" 64 "" 'cronq: error: invalid value for --worker-id: must be 1 to 200 bytes of printable text without control characters'
cronq_in '{"type":"noop","queue":"a\u2067b"}' enqueue --jsonl
expect "jsonl queue with an isolate" 65 "" 'cronq: error: line 1: queue name must be printable text without control characters'
cronq enqueue noop --unique-key $'k\u200d'
expect "unique key with a zero-width joiner" 65 "" 'cronq: error: unique key may not contain control characters'
cronq limit $'tenant:\u202e42' --max-running 1
expect "limit key with an override" 64 "" $'cronq: error: a key may not contain control characters\nTry "cronq limit --help" for more information.'
cronq enqueue noop --queue $'arabic\u0627\u200c'
eq "a zero-width non-joiner (U+200C) is refused" 65 "$RC"
cronq enqueue noop --queue $'\u2010dash'
eq "U+2010, next to the range, is fine" 0 "$RC"
q "delete from cronq.jobs where queue like '%dash'" >/dev/null
eq "invisible characters wrote nothing" "$before" "$(counts)"

# A connection string libpq refuses before it tries a server is a usage
# error naming where it came from; a server that cannot be reached stays 69.
cronq list --db "port=abc"
expect "--db port=abc" 64 "" 'cronq: error: invalid connection string in --db: invalid integer value "abc" for connection option "port"'
CRONQ_DATABASE_URL="port=abc" cronq status
expect "CRONQ_DATABASE_URL port=abc" 64 "" 'cronq: error: invalid connection string in CRONQ_DATABASE_URL: invalid integer value "abc" for connection option "port"'
CRONQ_DB="port=abc" cronq list
expect "CRONQ_DB port=abc" 64 "" 'cronq: error: invalid connection string in CRONQ_DB: invalid integer value "abc" for connection option "port"'
cronq enqueue noop --db "host=$PGHOST port=$PGPORT sslmode=foo"
expect "--db sslmode=foo" 64 "" 'cronq: error: invalid connection string in --db: invalid sslmode value: "foo"'
cronq run --db 'postgresql://localhost:99999/x'
expect "run --db: a port out of range" 64 "" 'cronq: error: invalid connection string in --db: invalid port number: "99999"'
cronq migrate --db "host=$PGHOST port=$PGPORT,5432"
expect "migrate --db: ports and hosts that do not pair" 64 "" 'cronq: error: invalid connection string in --db: could not match 2 port numbers to 1 hosts'
cronq check --db "port=abc"
expect "check --db port=abc: UNKNOWN" 3 'CRONQ UNKNOWN - invalid connection string in --db: invalid integer value "abc" for connection option "port"' ""
cronq list --db "bogus=1"
expect "--db: an unknown keyword" 64 "" 'cronq: error: invalid connection string in --db: invalid connection option "bogus"'
cronq list --db "host=$T_DIR port=$PGPORT"
expect_rc_err "no server there: still unreachable" 69 '^cronq: error: could not connect to database: connection to server on socket'

done_testing
