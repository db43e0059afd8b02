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

done_testing
