#!/usr/bin/env bash
# status and check: --help and bad options; the counts of a database holding
# jobs in every status, in text, JSON and Prometheus form (the latter read by
# an exposition-format parser written here); check's verdicts and exit codes,
# the dead-man's switch (--max-silence), overdue schedules, what check finds
# wrong with no limits, and check as a monitoring plugin whatever happens:
# a bad command line, a server that never answers, a lock it waits for.
. "$(dirname "$0")/lib.sh"

SRC="$(dirname "$0")/../../cmd/cronq"

# jsql JSON EXPR: EXPR evaluated by PostgreSQL over the document as jsonb j.
jsql() { printf '%s\n' "select $2 from (select :'doc'::jsonb as j) x" | "$PSQL" -XAtq -v doc="$1"; }

# prom_check: reads an exposition-format document on stdin; prints one line
# per fault and fails when there is any. Checks metric and label names,
# label syntax and escapes, numeric values, a HELP and a TYPE line before
# the first sample of each metric, and that a metric's samples are together.
prom_check() {
    awk '
    function fault(msg) { print "line " NR ": " msg ": " $0; bad = 1 }
    BEGIN {
        name_re = "^[a-zA-Z_:][a-zA-Z0-9_:]*$"
        num_re = "^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$"
    }
    /^[ \t]*$/ { next }
    /^#/ {
        if ($2 == "HELP") {
            if ($3 !~ name_re) fault("bad metric name in HELP")
            else if ($3 in help) fault("second HELP")
            help[$3] = 1
        } else if ($2 == "TYPE") {
            if ($3 !~ name_re) fault("bad metric name in TYPE")
            else if ($3 in type) fault("second TYPE")
            else if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/) fault("bad TYPE line")
            type[$3] = $4
        }
        next
    }
    {
        rest = $0
        if (!match(rest, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { fault("bad metric name"); next }
        name = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
        if (substr(rest, 1, 1) == "{") {
            rest = substr(rest, 2); seen = ","
            while (substr(rest, 1, 1) != "}") {
                if (!match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*/)) { fault("bad label name"); next }
                lname = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
                if (index(seen, "," lname ",")) { fault("label " lname " twice"); next }
                seen = seen lname ","
                if (substr(rest, 1, 2) != "=\"") { fault("expected =\" after " lname); next }
                rest = substr(rest, 3); closed = 0
                while (length(rest) > 0) {
                    c = substr(rest, 1, 1)
                    if (c == "\\") {
                        d = substr(rest, 2, 1)
                        if (d != "\\" && d != "\"" && d != "n") { fault("bad escape \\" d); next }
                        rest = substr(rest, 3); continue
                    }
                    rest = substr(rest, 2)
                    if (c == "\"") { closed = 1; break }
                }
                if (!closed) { fault("unterminated label value"); next }
                c = substr(rest, 1, 1)
                if (c == ",") rest = substr(rest, 2)
                else if (c != "}") { fault("expected , or } after a label"); next }
            }
            rest = substr(rest, 2)
        }
        if (!match(rest, /^[ \t]+/)) { fault("no blank before the value"); next }
        rest = substr(rest, RLENGTH + 1)
        n = split(rest, f, /[ \t]+/)
        if (n < 1 || n > 2) { fault("expected a value and an optional timestamp"); next }
        if (f[1] !~ num_re && f[1] !~ /^([-+]?Inf|NaN)$/) fault("value is not a number")
        if (n == 2 && f[2] !~ /^-?[0-9]+$/) fault("bad timestamp")
        fam = name
        if (!(fam in type)) sub(/_(bucket|sum|count)$/, "", fam)
        if (!(fam in help)) fault("sample of " fam " before its HELP")
        if (!(fam in type)) fault("sample of " fam " before its TYPE")
        if (fam != last && (fam in done)) fault("samples of " fam " are not together")
        if (last != "" && fam != last) done[last] = 1
        last = fam; samples++
    }
    END { if (samples == 0) { print "no samples"; bad = 1 } exit bad }'
}

# promtool: Prometheus's own checker (Debian's prometheus package, installed
# by scripts/deps-promtool.sh when missing). promtool_check NAME: runs
# `promtool check metrics` on $OUT, which must pass without a complaint
# (lint included: names, units, HELP); skipped, saying why, only when the
# package cannot be had.
PROMTOOL=1
"$(dirname "$0")/../../scripts/deps-promtool.sh" >"$T_DIR/promtool-install" 2>&1 || PROMTOOL=0
promtool_check() {
    if [ $PROMTOOL = 0 ]; then
        echo "$T_NAME: skipped $1 (promtool could not be installed: $(tail -1 "$T_DIR/promtool-install"))"
        return
    fi
    local perr
    perr=$(promtool check metrics <<<"$OUT" 2>&1)
    eq "$1" "0|" "$?|$perr"
}

# prom SAMPLE: the value of one sample (name and labels exactly as written).
prom() { S=$1 awk 'index($0, ENVIRON["S"] " ") == 1 { print substr($0, length(ENVIRON["S"]) + 2) }' <<<"$OUT"; }

# --help, bad options, usage errors: no database needed.
for cmd in status check; do
    CRONQ_DATABASE_URL="host=/nonexistent" cronq $cmd --help
    check "$cmd --help exits 0 without a database" [ "$RC" = 0 -a -z "$ERR" ]
    match "$cmd --help shows usage" "Usage:" "$OUT"
    help=$OUT
    for opt in $(grep -oE '^\s*\{"[a-z-]+", (no|required)_argument' "$SRC/cmd_$cmd.c" | grep -oE '"[a-z-]+"' | tr -d '"') \
               db verbose log-format help; do
        if grep -q -- "--$opt" <<<"$help"; then pass; else fail "$cmd --help does not mention --$opt"; fi
    done
    [ $cmd = check ] && continue   # its usage errors: below
    cronq $cmd --x
    expect "$cmd: unknown flag" 64 "" "cronq: error: unrecognized option \"--x\"
Try \"cronq $cmd --help\" for more information."
    cronq $cmd extra
    expect "$cmd: stray argument" 64 "" "cronq: error: too many command-line arguments (first is \"extra\")
Try \"cronq $cmd --help\" for more information."
done
cronq status --json --prometheus
expect "status: --json with --prometheus" 64 "" $'cronq: error: --json and --prometheus cannot be used together\nTry "cronq status --help" for more information.'
# check's usage errors are UNKNOWN lines (exit 3, nothing on stderr), as a
# monitoring system expects of a plugin; they need no database.
export CRONQ_DATABASE_URL="host=/nonexistent"
cronq check --x
expect "check: unknown flag" 3 'CRONQ UNKNOWN - unrecognized option "--x"' ""
cronq check -x
expect "check: unknown short option" 3 'CRONQ UNKNOWN - invalid option "-x"' ""
cronq check extra
expect "check: stray argument" 3 'CRONQ UNKNOWN - too many command-line arguments (first is "extra")' ""
cronq check --max-dead
expect "check: missing value" 3 'CRONQ UNKNOWN - option "--max-dead" requires a value' ""
cronq check --max-dead 10,5
expect "check: warning above critical" 3 'CRONQ UNKNOWN - invalid value "10,5" for --max-dead: the warning level must not exceed the critical level' ""
cronq check --max-dead many
expect "check: not a number" 3 'CRONQ UNKNOWN - invalid value "many" for --max-dead: must be an integer from 0 to 9223372036854775807' ""
cronq check --max-stuck 1,2,3
expect "check: three levels" 3 'CRONQ UNKNOWN - invalid value "1,2,3" for --max-stuck: must be CRIT or WARN,CRIT (one or two levels)' ""
CRONQ_MAX_DEAD=1,2,3 cronq check
expect "check: three levels from the environment" 3 'CRONQ UNKNOWN - invalid value "1,2,3" for CRONQ_MAX_DEAD: must be CRIT or WARN,CRIT (one or two levels)' ""
cronq check --max-failed 1,x
expect "check: a bad critical level" 3 'CRONQ UNKNOWN - invalid value "x" for the critical level of --max-failed: must be an integer from 0 to 9223372036854775807' ""
cronq check --max-silence 1x,1h
expect "check: a bad warning level" 3 'CRONQ UNKNOWN - invalid value "1x" for the warning level of --max-silence: invalid duration "1x": unrecognized unit "x"' ""
cronq check --max-lag 5x
expect "check: bad duration" 3 'CRONQ UNKNOWN - invalid value "5x" for --max-lag: invalid duration "5x": unrecognized unit "x"' ""
cronq check --timeout 500ms
expect "check: a timeout under 1s" 3 'CRONQ UNKNOWN - invalid value "500ms" for --timeout: must be at least 1s' ""
CRONQ_MAX_DEAD=many cronq check
expect "check: a bad value from the environment" 3 'CRONQ UNKNOWN - invalid value "many" for CRONQ_MAX_DEAD: must be an integer from 0 to 9223372036854775807' ""
cronq check --log-format xml
expect "check: a bad common option" 3 'CRONQ UNKNOWN - invalid value "xml" for --log-format: must be "text" or "json"' ""
cronq check --max-lag $'1s\n\e[2J'
expect "check: the line stays one line of text" 3 'CRONQ UNKNOWN - invalid value "1s \x1b[2J" for --max-lag: invalid duration "1s \x1b[2J": expected a number at " \x1b[2J"' ""
CRONQ_MAX_DEAD=many cronq check --help
check "check --help: exit 0 whatever else is wrong" [ "$RC" = 0 -a -z "$ERR" ]
unset CRONQ_DATABASE_URL

# The parser itself: it accepts a correct document and names each fault.
OUT=$'# HELP a_b x\n# TYPE a_b gauge\na_b{q="x\\"y\\\\z\\n",r="2"} 1.5e3\na_b 3 1700000000000\n# HELP c x\n# TYPE c counter\nc +Inf'
check "parser: a correct document passes" prom_check <<<"$OUT"
for bad in $'# HELP m x\nm 1' $'# TYPE m gauge\nm 1' $'# HELP 1m x\n# TYPE 1m gauge\n1m 1' \
           $'# HELP m x\n# TYPE m gauge\nm{a="\\q"} 1' $'# HELP m x\n# TYPE m gauge\nm{a="1} 1' \
           $'# HELP m x\n# TYPE m gauge\nm{a="1",a="2"} 1' $'# HELP m x\n# TYPE m gauge\nm{1a="1"} 1' \
           $'# HELP m x\n# TYPE m gauge\nm one' $'# HELP m x\n# TYPE m gauge\nm{a="1"}1' \
           $'# HELP m x\n# TYPE m gauge\n# HELP n x\n# TYPE n gauge\nm 1\nn 1\nm 2'; do
    if prom_check <<<"$bad" >/dev/null; then fail "parser accepts [$bad]"; else pass; fi
done

# Unreachable database: status exits 69, check prints UNKNOWN and exits 3.
cronq check --db "host=127.0.0.1 port=1 connect_timeout=5" --max-dead 1
check "check: database down exits 3" [ "$RC" = 3 ]
match "check: database down is one UNKNOWN line" '^CRONQ UNKNOWN - could not connect to database: [^
]+$' "$OUT"
eq "check: database down, nothing on stderr" "" "$ERR"
cronq status --db "host=127.0.0.1 port=1 connect_timeout=5"
expect_rc_err "status: database down exits 69" 69 '^cronq: error: could not connect to database: '

# No schema: status exits 78, check says UNKNOWN.
cronq status
expect_rc_err "status: schema missing" 78 '^cronq: error: .*migrate'
cronq check
check "check: schema missing exits 3" [ "$RC" = 3 ]
match "check: schema missing is one UNKNOWN line" '^CRONQ UNKNOWN - [^
]+$' "$OUT"

migrate
cronq status --json
eq "empty: no jobs, only the purge schedule, no wake" "0|0|0|1|cronq-purge|null|0" \
    "$(jsql "$OUT" "j#>>'{jobs,total}', j->>'due', j->>'lag_seconds', jsonb_array_length(j->'schedules'), j#>>'{schedules,0,name}', jsonb_typeof(j->'last_wake'), jsonb_array_length(j->'queues')")"
# With no limits, check still finds what is always wrong: no runner ever woke.
cronq check
expect "check, no limits: no runner ever woke is CRITICAL" 2 \
    "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake never, overdue 0s | lag=0s dead=0 failed=0 stuck=0 silence=U overdue=0s" ""
cronq check --max-dead 5 --max-lag 1h
eq "check: no wake is CRITICAL whatever the limits given" "2|last wake never" "$RC|$(grep -o 'last wake never' <<<"$OUT")"

# --timeout bounds the whole check. A server that accepts the connection
# and never answers: connect_timeout would wait 60 s, the check 2 s.
perl -MIO::Socket::INET -e '
    my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 8) or die "listen: $!";
    $| = 1; print $s->sockport, "\n";
    my @held; push @held, $s->accept while 1;' >"$T_DIR/port" &
listener=$!
for i in $(seq 50); do [ -s "$T_DIR/port" ] && break; sleep 0.1; done
port=$(cat "$T_DIR/port")
start=$(date +%s%N)
cronq check --db "host=127.0.0.1 port=$port connect_timeout=60" --timeout 2s
took=$(( ($(date +%s%N) - start) / 1000000 ))
expect "timeout: a server that never answers" 3 "CRONQ UNKNOWN - timed out after 2s connecting to the database" ""
check "timeout: given up after 2 s, not 60 ($took ms)" [ $took -ge 1900 -a $took -lt 10000 ]
CRONQ_TIMEOUT=1s cronq check --db "host=127.0.0.1 port=$port"
expect "timeout: from the environment" 3 "CRONQ UNKNOWN - timed out after 1s connecting to the database" ""
kill $listener; wait $listener 2>/dev/null

# Jobs in every status, each count different, in three queues (one whose
# name needs escaping in a Prometheus label).
q "insert into cronq.jobs (queue, type, status, run_at) select 'default', 'noop', 'queued', now() - interval '90 seconds' from generate_series(1, 3)"
q "insert into cronq.jobs (queue, type, status, attempts, locked_by, locked_until, started_at) values
   ('default', 'noop', 'running', 1, 'gone:1:aa', now() - interval '3 minutes', now() - interval '4 minutes'),
   ('default', 'noop', 'running', 1, 'here:2:bb', now() + interval '5 minutes', now())"
q "insert into cronq.jobs (queue, type, status, finished_at) select 'default', 'noop', 'succeeded', now() from generate_series(1, 4)"
q "insert into cronq.jobs (queue, type, status, attempts, run_at, error_code, last_error) values ('default', 'noop', 'failed', 1, now() - interval '30 seconds', 'fail', 'try again')"
q "insert into cronq.jobs (queue, type, status, attempts, finished_at, error_code, last_error) select 'default', 'noop', 'dead', 10, now(), 'fail', E'it broke\nbadly' from generate_series(1, 5)"
q "insert into cronq.jobs (queue, type, status, finished_at) select 'default', 'noop', 'cancelled', now() from generate_series(1, 6)"
q "insert into cronq.jobs (queue, type, payload, status, run_at) select 'mail', 'sleep', '{\"seconds\": 1}', 'queued', now() + interval '1 hour' from generate_series(1, 2)"
# (enqueued before they came due: a job is late from its run_at, or from its
# enqueue when that came later)
q "update cronq.jobs set created_at = now() - interval '5 minutes' where status in ('queued', 'failed')"
q "insert into cronq.jobs (queue, type, payload, status, finished_at) values ('mail', 'sleep', '{\"seconds\": 1}', 'dead', now())"
q "insert into cronq.jobs (queue, type, status, finished_at) values ('we\"ird\\q', 'noop', 'succeeded', now())"
# History: in queue default, a success 5 hours ago (1.5 s), a failure 2
# hours ago (0.5 s), and a success 25 hours ago (9 s: out of the window).
q "insert into cronq.job_runs (job_id, attempt, outcome, started_at, finished_at, duration)
   select min(id), 1, 'succeeded', now() - interval '5 hours 1.5 second', now() - interval '5 hours', interval '1.5 seconds' from cronq.jobs where status = 'succeeded' and queue = 'default'
   union all
   select min(id), 1, 'failed', now() - interval '2 hours 0.5 second', now() - interval '2 hours', interval '0.5 seconds' from cronq.jobs where status = 'dead' and queue = 'default'
   union all
   select max(id), 1, 'succeeded', now() - interval '25 hours 9 seconds', now() - interval '25 hours', interval '9 seconds' from cronq.jobs where status = 'succeeded' and queue = 'default'"
eq "the jobs are stored as inserted" "cancelled|6 dead|6 failed|1 queued|5 running|2 succeeded|5" \
    "$(q "select string_agg(status || '|' || n, ' ' order by status) from (select status, count(*) n from cronq.jobs group by status) s")"

cronq status --json
eq "json: rc" 0 "$RC"
eq "json: totals by status" "5|2|5|1|6|6|25" \
    "$(jsql "$OUT" "j#>>'{jobs,queued}', j#>>'{jobs,running}', j#>>'{jobs,succeeded}', j#>>'{jobs,failed}', j#>>'{jobs,dead}', j#>>'{jobs,cancelled}', j#>>'{jobs,total}'")"
eq "json: by queue and type, in order" 'default|noop|3|2|4|1|5|6|21 mail|sleep|2|0|0|0|1|0|3 we"ird\q|noop|0|0|1|0|0|0|1' \
    "$(jsql "$OUT" "(select string_agg(concat_ws('|', t->>'queue', t->>'type', t->>'queued', t->>'running', t->>'succeeded', t->>'failed', t->>'dead', t->>'cancelled', t->>'total'), ' ' order by n) from jsonb_array_elements(j->'types') with ordinality e(t, n))")"
eq "json: due jobs and lag per queue" "default|4|t|1 mail|0|t|0 we\"ird\\q|0|t|0" \
    "$(jsql "$OUT" "(select string_agg(concat_ws('|', e->>'queue', e->>'due', (e->>'lag_seconds')::int between (case when e->>'due' = '0' then 0 else 90 end) and (case when e->>'due' = '0' then 0 else 600 end), e->>'expired_leases'), ' ' order by n) from jsonb_array_elements(j->'queues') with ordinality y(e, n))")"
eq "json: lag is the age of the oldest due job" "4|t|t" \
    "$(jsql "$OUT" "j->>'due', (j->>'lag_seconds')::int between 90 and 600, j->>'oldest_due_at' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$'")"
eq "json: the expired lease" "1|1|gone:1:aa|t" \
    "$(jsql "$OUT" "j#>>'{expired_leases,count}', jsonb_array_length(j#>'{expired_leases,jobs}'), j#>>'{expired_leases,jobs,0,locked_by}', (j#>>'{expired_leases,jobs,0,expired_seconds}')::int between 180 and 240")"
eq "json: dead jobs" $'6|6|fail|it broke\nbadly' \
    "$(jsql "$OUT" "j#>>'{dead,count}', jsonb_array_length(j#>'{dead,jobs}'), (select e->>'error_code' || '|' || (e->>'last_error') from jsonb_array_elements(j#>'{dead,jobs}') e where e->>'queue' = 'default' limit 1)")"
eq "json: 24 hours of runs, oldest first" "24|24|1|1|1|1" \
    "$(jsql "$OUT" "jsonb_array_length(j#>'{queues,0,runs_24h,succeeded}'), jsonb_array_length(j#>'{queues,0,runs_24h,failed}'), j#>>'{queues,0,runs_24h,succeeded,18}', j#>>'{queues,0,runs_24h,failed,21}', (select sum(v::int) from jsonb_array_elements_text(j#>'{queues,0,runs_24h,succeeded}') v), (select sum(v::int) from jsonb_array_elements_text(j#>'{queues,0,runs_24h,failed}') v)")"
eq "json: durations of the last 24 hours' attempts, in seconds" '24|default|noop|2|2|1|1.4|1.49' \
    "$(jsql "$OUT" "j#>>'{durations,window_hours}', j#>>'{durations,runs,0,queue}', j#>>'{durations,runs,0,type}', j#>>'{durations,runs,0,count}', (j#>'{durations,runs,0,sum_seconds}')::float8, (j#>'{durations,runs,0,p50_seconds}')::float8, (j#>'{durations,runs,0,p90_seconds}')::float8, (j#>'{durations,runs,0,p99_seconds}')::float8")"
eq "json: the oldest running job, per queue and overall" "t|t|t|0" \
    "$(jsql "$OUT" "(j->>'oldest_running_seconds')::int between 240 and 400, (j#>>'{queues,0,oldest_running_seconds}')::int between 240 and 400, j#>>'{queues,0,oldest_running_at}' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$', j#>>'{queues,1,oldest_running_seconds}'")"
eq "json: compact, one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
eq "json: every documented top-level key" "dead due durations expired_leases generated_at held jobs lag_seconds last_wake limits oldest_due_at oldest_running_seconds overdue_schedules paused paused_omitted queues queues_omitted refused_schedules schedules schedules_omitted types unplannable_schedules" \
    "$(jsql "$OUT" "(select string_agg(k, ' ' order by k) from jsonb_object_keys(j) k)")"

cronq status --prometheus
eq "prometheus: rc" 0 "$RC"
perr=$(prom_check <<<"$OUT")
eq "prometheus: valid exposition format" "" "$perr"
promtool_check "prometheus: promtool check metrics"
for s in queued:3 running:2 succeeded:4 failed:1 dead:5 cancelled:6; do
    eq "prometheus: default/noop ${s%:*}" "${s#*:}" "$(prom "cronq_jobs{queue=\"default\",type=\"noop\",status=\"${s%:*}\"}")"
done
eq "prometheus: every status of every queue and type, summed" "blocked 0 cancelled 6 dead 6 failed 1 queued 5 running 2 succeeded 5 " \
    "$(awk '/^cronq_jobs\{/ { match($0, /status="[a-z]+"/); s = substr($0, RSTART + 8, RLENGTH - 9); n[s] += $NF; k[s]++ }
            END { for (s in n) print s, n[s], k[s] }' <<<"$OUT" | sort | awk '$3 == 3 { printf "%s %s ", $1, $2 }')"
eq "prometheus: label escaping" 1 "$(prom 'cronq_jobs{queue="we\"ird\\q",type="noop",status="succeeded"}')"
eq "prometheus: due, expired leases, dead" "4|1|6" \
    "$(prom 'cronq_due_jobs{queue="default"}')|$(prom cronq_expired_leases)|$(prom cronq_dead_jobs)"
check "prometheus: lag of default is about 90s" [ "$(prom 'cronq_lag_seconds{queue="default"}')" -ge 90 ]
eq "prometheus: runs of the last 24 hours, the window a label" "1|1" \
    "$(prom 'cronq_job_runs_recent{queue="default",outcome="succeeded",window="24h"}')|$(prom 'cronq_job_runs_recent{queue="default",outcome="failed",window="24h"}')"
eq "prometheus: no window in a name, none of the old names" "" "$(grep -E '^cronq_[a-z_]*_[0-9]+[hdm][ {_]|cronq_job_runs_24h' <<<"$OUT")"
eq "prometheus: job durations, a summary per queue and type" "summary|1|1.4|1.49|2|2" \
    "$(grep '^# TYPE cronq_job_duration_seconds ' <<<"$OUT" | cut -d' ' -f4)|$(prom 'cronq_job_duration_seconds{queue="default",type="noop",window="24h",quantile="0.5"}')|$(prom 'cronq_job_duration_seconds{queue="default",type="noop",window="24h",quantile="0.9"}')|$(prom 'cronq_job_duration_seconds{queue="default",type="noop",window="24h",quantile="0.99"}')|$(prom 'cronq_job_duration_seconds_sum{queue="default",type="noop",window="24h"}')|$(prom 'cronq_job_duration_seconds_count{queue="default",type="noop",window="24h"}')"
check "prometheus: the oldest running job of default is about 4 minutes old" \
    [ "$(prom 'cronq_oldest_running_job_age_seconds{queue="default"}')" -ge 240 -a "$(prom 'cronq_oldest_running_job_age_seconds{queue="default"}')" -lt 400 ]
eq "prometheus: no running job in mail is age 0" 0 "$(prom 'cronq_oldest_running_job_age_seconds{queue="mail"}')"
eq "prometheus: a TYPE line for every family, gauges but the summary" "gauge 23 summary 1 " \
    "$(awk '/^# TYPE / { n[$4]++ } END { for (t in n) printf "%s %d ", t, n[t] }' <<<"$OUT" | tr ' ' '\n' | paste -d' ' - - | sort | tr '\n' ' ')"
eq "prometheus: no wake yet is timestamp 0" 0 "$(prom cronq_last_wake_timestamp_seconds)"
eq "prometheus: the purge schedule" 1 "$(prom 'cronq_schedule_enabled{schedule="cronq-purge"}')"
check "prometheus: generated now (database clock)" \
    [ $(( $(prom cronq_status_timestamp_seconds) - $(q "select extract(epoch from now())::bigint") )) -le 5 ]
check "prometheus: every metric is cronq_*" [ -z "$(grep -v '^#' <<<"$OUT" | grep -v '^cronq_')" ]

# --output: written atomically (temp file + rename), nothing else left behind.
mkdir -p "$T_DIR/prom"
echo "old" >"$T_DIR/prom/cronq.prom"
cronq status --prometheus --output "$T_DIR/prom/cronq.prom"
expect "--output: silent" 0 "" ""
OUT=$(cat "$T_DIR/prom/cronq.prom")
perr=$(prom_check <<<"$OUT")
eq "--output: the file is a valid exposition" "" "$perr"
eq "--output: the file holds the counts" 6 "$(prom cronq_dead_jobs)"
eq "--output: only the file is left, readable by the collector" "cronq.prom 644" \
    "$(cd "$T_DIR/prom" && stat -c '%n %a' *)"
cronq status --prometheus --output "$T_DIR/no/such/dir/cronq.prom"
expect "--output: unwritable" 73 "" "cronq: error: could not create a temporary file for \"$T_DIR/no/such/dir/cronq.prom\": No such file or directory"

cronq status
eq "text: rc" 0 "$RC"
match "text: lag" $'Lag: +(1m[3-5][0-9]s|[2-9]m([0-9]+s)?) \\(4 jobs due, the oldest since [0-9T:Z-]+\\)' "$OUT"
match "text: expired leases and dead jobs" $'Expired leases: +1\nDead jobs: +6\n' "$OUT"
match "text: no wake" 'Last wake: +never' "$OUT"
match "text: table by queue, type and status" $'QUEUE +TYPE +QUEUED +BLOCKED +RUNNING +SUCCEEDED +FAILED +DEAD +CANCELLED\ndefault +noop +3 +0 +2 +4 +1 +5 +6\nmail +sleep +2 +0 +0 +0 +0 +1 +0\n' "$OUT"
match "text: the expired lease" $'\n +[0-9]+ +default +noop +1/10 +gone:1:aa +3m[0-9]*s? ago\n' "$OUT"
match "text: dead jobs, first line of the error" 'fail: it broke\.\.\.' "$OUT"
match "text: schedules" 'cronq-purge +17 3 \* \* \* +UTC +yes +20[0-9-]+T03:17:00Z' "$OUT"
check "text: no 24-hour chart when not on a terminal" [ -z "$(grep 'Last 24 hours' <<<"$OUT")" ]
if command -v script >/dev/null; then
    tty_out=$(NO_COLOR=1 script -qec "$CRONQ status" /dev/null </dev/null | tr -d '\r')
    match "terminal: a 24-hour line per queue, oldest hour first" \
        $'Last 24 hours[^\n]*\nQUEUE +-24h +now\ndefault +\\.{18}o\\.\\.x\\.\\.\nmail +\\.{24}\n' "$tty_out"
fi

# check: OK, WARNING and CRITICAL on this data (dead 6, failed 1, stuck 1,
# lag ~90s), once a runner has woken (a wake 5 seconds ago).
q "insert into cronq.wakes (worker, host, pid, started_at, finished_at, exit_status)
   values ('here:1:aa', 'here', 1, now() - interval '5 seconds', now() - interval '5 seconds', 0)"
cronq check
eq "check, no limits: OK once a runner woke, whatever the counts" 0 "$RC"
cronq check --max-dead 10 --max-lag 1h --max-stuck 5
eq "check OK: rc" 0 "$RC"
match "check OK: the line" '^CRONQ OK - lag (1m[3-5][0-9]s|[2-9]m([0-9]+s)?), dead 6, failed 1, stuck 1, last wake [5-9]s ago, overdue 0s \| lag=(9[0-9]|[1-5][0-9][0-9])s;;3600 dead=6;;10 failed=1 stuck=1;;5 silence=[5-9]s overdue=0s$' "$OUT"
eq "check OK: nothing on stderr" "" "$ERR"
cronq check --max-dead 5,10 --max-lag 1h
eq "check WARNING: rc" 1 "$RC"
match "check WARNING: the level exceeded" '^CRONQ WARNING - lag [0-9ms]+, dead 6 > 5, failed 1, .* dead=6;5;10 ' "$OUT"
cronq check --max-dead 2,5 --max-lag 30s,1h
eq "check CRITICAL: rc" 2 "$RC"
match "check CRITICAL: both levels shown" '^CRONQ CRITICAL - lag (1m[3-5][0-9]s|[2-9]m([0-9]+s)?) > 30s, dead 6 > 5, .* lag=(9[0-9]|[1-5][0-9][0-9])s;30;3600 dead=6;2;5 ' "$OUT"
cronq check --max-stuck 0
eq "check: an expired lease is CRITICAL with --max-stuck 0" "2|stuck 1 > 0" "$RC|$(grep -o 'stuck 1 > 0' <<<"$OUT")"
cronq check --max-failed 1
eq "check: failed 1 is within --max-failed 1" 0 "$RC"
cronq check --max-failed 0,3
eq "check: failed 1 over a warning level of 0" 1 "$RC"
CRONQ_MAX_DEAD=3 cronq check
eq "check: thresholds from the environment" 2 "$RC"

# The dead-man's switch.
q "delete from cronq.jobs; delete from cronq.job_runs; delete from cronq.wakes"
cronq check --max-silence 2m
eq "silence: no wake at all is CRITICAL" "2" "$RC"
match "silence: no wake at all" '^CRONQ CRITICAL - .*last wake never,.* silence=U;;120 ' "$OUT"
"$CRONQ" run
cronq check --max-silence 2m
eq "silence: OK right after a run" 0 "$RC"
match "silence: last wake seconds ago" 'last wake [0-9]s ago, .* silence=[0-9]s;;120 ' "$OUT"
q "update cronq.wakes set started_at = started_at - interval '3 minutes', finished_at = finished_at - interval '3 minutes'"
cronq check --max-silence 2m
eq "silence: no wake for 3 minutes is CRITICAL" 2 "$RC"
match "silence: the line says since when" '^CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake 3m[0-9]*s? ago > 2m, overdue 0s \| ' "$OUT"
cronq check --max-silence 1m,5m
eq "silence: within the critical level, over the warning one" 1 "$RC"
cronq status --json
eq "status: the last wake" "t|0|0" \
    "$(jsql "$OUT" "(j#>>'{last_wake,seconds_ago}')::int between 180 and 240, j#>>'{last_wake,jobs_run}', j#>>'{last_wake,exit_status}'")"
"$CRONQ" run
cronq check --max-silence 2m
eq "silence: OK again after a run" 0 "$RC"
cronq status --prometheus
check "status: the last wake's time" [ $(( $(q "select extract(epoch from now())::bigint") - $(prom cronq_last_wake_timestamp_seconds) )) -le 5 ]

# A statement that waits for a lock: the check gives up at --timeout, and the
# server gives up its statement too (statement_timeout), instead of leaving
# it waiting for the lock after the check has gone.
PGAPPNAME=t_status_locker "$PSQL" -XAtq -c "begin; lock table cronq.wakes in access exclusive mode; select pg_sleep(60)" >/dev/null 2>&1 &
locker=$!
wait_for "the lock is held" 10 "select exists (select from pg_locks where relation = 'cronq.wakes'::regclass and mode = 'AccessExclusiveLock' and granted)" \
    || fail "the locking session did not take its lock"
start=$(date +%s%N)
cronq check --timeout 2s
took=$(( ($(date +%s%N) - start) / 1000000 ))
expect "timeout: a query waiting for a lock" 3 "CRONQ UNKNOWN - timed out after 2s waiting for the database" ""
check "timeout: given up after 2 s ($took ms)" [ $took -ge 1900 -a $took -lt 10000 ]
check "timeout: the server gave up the statement too" wait_for "no cronq session waits" 3 \
    "select not exists (select from pg_stat_activity where datname = current_database() and application_name = 'cronq')"
q "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 't_status_locker'" >/dev/null
wait $locker 2>/dev/null
cronq check
eq "timeout: the lock gone, the check is OK again" 0 "$RC"

# Overdue schedules: an occurrence left unenqueued.
# (unchanged for an hour: lateness counts from a schedule's last change too)
"$CRONQ" schedule add late '* * * * *' noop
q "set session_replication_role = replica;
   update cronq.schedules set next_run_at = now() - interval '10 minutes', updated_at = now() - interval '1 hour' where name = 'late'"
cronq check --max-overdue 5m
eq "overdue: 10 minutes late is CRITICAL over 5m" 2 "$RC"
match "overdue: names the schedule" '^CRONQ CRITICAL - .*, overdue 10m[0-9]*s? > 5m \(late\) \| .* overdue=6[0-9][0-9]s;;300$' "$OUT"
cronq check --max-overdue 5m,15m
eq "overdue: WARNING between the levels" 1 "$RC"
cronq check --max-overdue 15m
eq "overdue: OK under the level" 0 "$RC"
cronq status --json
eq "status: the overdue schedule" "1|t|t|f" \
    "$(jsql "$OUT" "j->>'overdue_schedules', (select (s->>'overdue')::bool and (s->>'overdue_seconds')::int between 600 and 660 from jsonb_array_elements(j->'schedules') s where s->>'name' = 'late'), (select (s->>'enabled')::bool from jsonb_array_elements(j->'schedules') s where s->>'name' = 'late'), (select (s->>'overdue')::bool from jsonb_array_elements(j->'schedules') s where s->>'name' = 'cronq-purge')")"
cronq status
match "status: text names the overdue schedule" 'Overdue schedules: +late \(10m[0-9]*s? late\)' "$OUT"
cronq status --prometheus
check "status: overdue seconds in Prometheus" [ "$(prom 'cronq_schedule_overdue_seconds{schedule="late"}')" -ge 600 ]
eq "status: overdue count in Prometheus" 1 "$(prom cronq_overdue_schedules)"
"$CRONQ" run --queue none-such
cronq check --max-overdue 5m
eq "overdue: OK once a run enqueued the occurrence" 0 "$RC"
match "overdue: nothing overdue" ', overdue 0s \| ' "$OUT"
cronq status --prometheus
eq "status: the schedule's last job in Prometheus" 1 "$(prom 'cronq_schedule_last_job_status{schedule="late",status="queued"}')"
perr=$(prom_check <<<"$OUT")
eq "prometheus: still valid with wakes and schedule jobs" "" "$perr"
promtool_check "prometheus: promtool check metrics with wakes and schedule jobs"

# One role's thousands of queue names (helper-78: 20,000 made --html take 45 s
# and 207 MB, and 260,000 Prometheus series): the busiest or troubled queues
# and schedules are listed, at most 200 (--limit), the rest counted; a queue
# in trouble is never among those left out.
q "delete from cronq.jobs; delete from cronq.schedules" >/dev/null
q "insert into cronq.jobs (queue, type, run_at) select 'spam-' || i, 'noop', now() + interval '1 year' from generate_series(1, 3000) i"
q "insert into cronq.jobs (queue, type, status, attempts, finished_at, error_code, last_error) values ('victim', 'noop', 'dead', 1, now(), 'fail', 'x')"
q "insert into cronq.schedules (name, cron, type, created_by) select 'spam-' || i, '0 0 1 1 *', 'noop', 'postgres' from generate_series(1, 1000) i"
# (statistics made current: in two full-suite runs, not alone, --limit 0
# met the 60 s answer limit; stale statistics of the tables as they were
# before the flood are the suspect, not proven)
q "analyze cronq.jobs, cronq.job_runs, cronq.schedules, cronq.occurrences" >/dev/null
# (documents too long for a psql variable: read by python3)
pyj() { python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"; }
cronq status --json
eq "json: 200 queues listed, the one in trouble among them, the rest counted" "200|True|2801|3001|200|800" \
    "$(pyj "len(j['queues']), any(q['queue'] == 'victim' for q in j['queues']), j['queues_omitted'], j['jobs']['total'], len(j['schedules']), j['schedules_omitted'], sep='|'" <<<"$OUT")"
cronq status --json --limit 0
eq "--limit 0: every one" "0|3001|0|1000" \
    "$RC|$([ "$RC" = 0 ] && pyj "len(j['queues']), j['queues_omitted'], len(j['schedules']), sep='|'" <<<"$OUT" || echo "$ERR")"
cronq status --limit 10
match "text: says how many queues are left out" '\(2991 more queues not listed: those in trouble come first; --limit 0 lists all\)' "$OUT"
match "text: and schedules" '\(990 more schedules not listed' "$OUT"
match "text: the queue in trouble is listed" 'victim' "$OUT"
cronq status --html
eq "html: bounded, the queue in trouble there, the rest counted" "0|t|t|t" \
    "$RC|$([ ${#OUT} -lt 10000000 ] && echo t || echo "f (${#OUT} bytes)")|$([[ $OUT == *'data-queue="victim"'* ]] && echo t || echo f)|$([[ $OUT == *'2801 more queues not listed'* ]] && echo t || echo f)"
cronq status --prometheus
eq "prometheus: per-queue series of 200 queues at most, the rest counted" "0|200|2801" \
    "$RC|$(grep '^cronq_jobs{' <<<"$OUT" | grep -o 'queue="[^"]*"' | sort -u | wc -l)|$(sed -n 's/^cronq_omitted_queues //p' <<<"$OUT")"
perr=$(prom_check <<<"$OUT")
eq "prometheus: still valid" "" "$perr"
# The paused keys too (helper-79: 5,000 schedules paused by one role).
q "insert into cronq.pauses (key, schedule) select 'schedule:spam-' || i, 'spam-' || i from generate_series(1, 5) i" >/dev/null
cronq status --json --limit 2
eq "json: paused keys listed up to --limit, the rest counted" "0|2|3" \
    "$RC|$(pyj "len(j['paused']), j['paused_omitted'], sep='|'" <<<"$OUT")"
cronq status --limit 2
match "text: the rest of the paused keys counted" 'Paused: .* and 3 more \(' "$OUT"
cronq status --prometheus --limit 2
eq "prometheus: cronq_paused of 2 keys, the rest counted" "2|3" \
    "$(grep -c '^cronq_paused{' <<<"$OUT")|$(sed -n 's/^cronq_omitted_paused_keys //p' <<<"$OUT")"
q "delete from cronq.pauses" >/dev/null
cronq status --limit -1
eq "--limit -1: a usage error" 64 "$RC"
q "delete from cronq.jobs; delete from cronq.schedules" >/dev/null

done_testing
