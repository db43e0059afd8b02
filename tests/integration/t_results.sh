#!/usr/bin/env bash
# Results (issue 22): a sql job keeps its last statement's command tag and
# first row as JSON (types, last statement wins, "transaction": false, the
# 64 KiB cap); an exec program's stdout and stderr are kept apart and the
# JSON it writes to descriptor 3 is its result (invalid: bad_result, over
# 1 MiB: result_too_large, none: null); a background child holding
# descriptor 3 open delays nothing; cronq.jobs.result follows the latest
# attempt; show, show --json and list --json carry it all.
. "$(dirname "$0")/lib.sh"
migrate
q "update cronq.schedules set enabled = false" >/dev/null

exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"
chmod 755 "$T_DIR" "$exec_dir"
prog() {  # prog NAME BODY: a shell script in the exec directory
    printf '#!/bin/sh\n%s\n' "$2" >"$exec_dir/$1"
    chmod 755 "$exec_dir/$1"
}
prog res 'echo out; echo err >&2; printf '"'"'{"n": 1.10, "big": 12345678901234567890}'"'"' >&3'
prog word 'printf '"'"'"done"\n'"'"' >&3'
prog bad 'printf '"'"'{"n": '"'"' >&3'
prog nul 'printf '"'"'"a\\u0000b"'"'"' >&3'
prog huge 'head -c 1100000 /dev/zero | tr "\0" 1 >&3'
prog none 'echo hi'
prog failing 'printf '"'"'{"partial": true}'"'"' >&3; exit 3'
prog bgchild 'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"$CRONQ_PIDFILE"; printf "[1]" >&3'
prog lingering '(sleep 300) & printf "[2]" >&3; sleep 300'
run() { "$CRONQ" run --exec-dir "$exec_dir" --kill-grace 1s "$@" >/dev/null 2>"$T_DIR/run.err"; }
result_of() { q "select coalesce(result::text, 'null') from cronq.jobs where id = $1"; }
run_result_of() { q "select coalesce(result::text, 'null') from cronq.job_runs where job_id = $1 order by id desc limit 1"; }
status_of() { q "select status || '|' || coalesce(error_code, '') from cronq.jobs where id = $1"; }
sql_job() { "$CRONQ" enqueue sql "$1"; }
# jget JSON EXPR: EXPR applied to JSON (as jsonb) by the database.
jget() { "$PSQL" -XAtq -v j="$1" <<<"select (:'j'::jsonb)$2"; }

# --- sql: the command tag and first row --------------------------------------
s1=$(sql_job '{"sql": "select 1 as n, '"'"'x'"'"' as s, true as b, false as f0, null::int as z, 1.50::numeric as num, 0.1::float8 as f, 9007199254740993::int8 as i8, '"'"'{\"a\": [1]}'"'"'::jsonb as j, '"'"'{\"k\": 1}'"'"'::json as js, '"'"'NaN'"'"'::float8 as nan, '"'"'infinity'"'"'::numeric as inf, now()::date - now()::date as d0, '"'"'tab\there'"'"' as t"}')
s2=$(sql_job '{"sql": "create temp table t (a int); insert into t values (1), (2); delete from t"}')
s3=$(sql_job '{"sql": "select 1 as a; select 2 as b, 3 as c"}')
s4=$(sql_job '{"sql": "create temp table u (id int); insert into u values (41) returning id + 1 as next"}')
s5=$(sql_job '{"sql": "select g from generate_series(1, 0) g"}')
s6=$(sql_job '{"sql": "vacuum cronq.wakes", "transaction": false}')
s7=$(sql_job '{"sql": "select g as n from generate_series(7, 9) g", "transaction": false}')
s8=$(sql_job '{"sql": "select repeat('"'"'x'"'"', 70000) as big"}')
s9=$(sql_job '{"sql": "select '"'"'\"a\\u0000b\"'"'"'::json as j, '"'"'{\"q\": 1}'"'"'::json as ok"}')
s10=$(sql_job '{"sql": "update cronq.wakes set worker = worker where false"}')
run
eq "sql runs succeeded" "10" "$(q "select count(*) from cronq.jobs where id between $s1 and $s10 and status = 'succeeded'")"
eq "sql: every type as JSON" 't' "$(q "select result = '{\"tag\": \"SELECT 1\", \"row\": {\"n\": 1, \"s\": \"x\", \"b\": true, \"f0\": false, \"z\": null, \"num\": 1.50, \"f\": 0.1, \"i8\": 9007199254740993, \"j\": {\"a\": [1]}, \"js\": {\"k\": 1}, \"nan\": \"NaN\", \"inf\": \"Infinity\", \"d0\": 0, \"t\": \"tab\\there\"}}'::jsonb from cronq.jobs where id = $s1")"
eq "sql: numeric keeps its digits" "1.50|9007199254740993" "$(q "select (result->'row'->>'num') || '|' || (result->'row'->>'i8') from cronq.jobs where id = $s1")"
eq "sql: the last statement's tag, no row" '{"row": null, "tag": "DELETE 2"}' "$(result_of $s2)"
eq "sql: the last statement wins" '{"row": {"b": 2, "c": 3}, "tag": "SELECT 1"}' "$(result_of $s3)"
eq "sql: INSERT's tag as psql prints it, RETURNING's row" '{"row": {"next": 42}, "tag": "INSERT 0 1"}' "$(result_of $s4)"
eq "sql: no row" '{"row": null, "tag": "SELECT 0"}' "$(result_of $s5)"
eq "sql: transaction false, a utility statement" '{"row": null, "tag": "VACUUM"}' "$(result_of $s6)"
eq "sql: transaction false, the first row" '{"row": {"n": 7}, "tag": "SELECT 3"}' "$(result_of $s7)"
eq "sql: a row over 64 KiB is left out, marked" '{"row": null, "tag": "SELECT 1", "row_too_large": true}' "$(result_of $s8)"
eq "sql: json that jsonb cannot hold kept as text" '{"j": "\"a\\u0000b\"", "ok": {"q": 1}}' "$(q "select result->'row' from cronq.jobs where id = $s9")"
eq "sql: UPDATE 0" '{"row": null, "tag": "UPDATE 0"}' "$(result_of $s10)"
eq "sql: the run's row has the same result, rows: N output" "true|rows: 2" "$(q "select (r.result = j.result)::text || '|' || r.output from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.id = $s2")"

# A job that sets its session's client_encoding: the server then sends its
# row in that encoding, not UTF-8. Its outcome is recorded with the batch's
# (the noop's) in one statement, which bytes that are not UTF-8 would fail.
latin() { sql_job '{"sql": "set client_encoding to '"'"'LATIN1'"'"'; '"$1"'"}'; }
l_jsonb=$(latin 'select jsonb_build_object('"'"'a'"'"', '"'"'é'"'"') as r, '"'"'{\"b\": 1}'"'"'::jsonb as ok')
l_json=$(latin 'select json_build_object('"'"'a'"'"', '"'"'é'"'"') as r')
l_name=$(latin 'select 1 as \"é\"')
l_text=$(latin 'select '"'"'é'"'"' as t')
l_noop=$("$CRONQ" enqueue noop)
run
eq "LATIN1: every job of the batch has its outcome" "succeeded|succeeded|succeeded|succeeded|succeeded" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($l_jsonb, $l_json, $l_name, $l_text, $l_noop)")"
eq "LATIN1: jsonb that is not UTF-8 is kept as text, as json is" '{"r": "{\"a\": \"�\"}", "ok": {"b": 1}}' "$(q "select result->'row' from cronq.jobs where id = $l_jsonb")"
eq "LATIN1: json too" '{"r": "{\"a\" : \"�\"}"}' "$(q "select result->'row' from cronq.jobs where id = $l_json")"
eq "LATIN1: a column name's bytes become U+FFFD" '{"row": {"�": 1}, "tag": "SELECT 1"}' "$(result_of $l_name)"
eq "LATIN1: a text value's too" '{"t": "�"}' "$(q "select result->'row' from cronq.jobs where id = $l_text")"

# --- exec: stdout, stderr, descriptor 3 --------------------------------------
e_res=$("$CRONQ" enqueue exec '{"command": "res"}')
e_word=$("$CRONQ" enqueue exec '{"command": "word"}')
e_bad=$("$CRONQ" enqueue exec '{"command": "bad"}')
e_nul=$("$CRONQ" enqueue exec '{"command": "nul"}')
e_huge=$("$CRONQ" enqueue exec '{"command": "huge"}')
e_none=$("$CRONQ" enqueue exec '{"command": "none"}')
e_fail=$("$CRONQ" enqueue exec '{"command": "failing"}')
run
eq "exec: succeeded with a result" "succeeded|" "$(status_of $e_res)"
eq "exec: stdout and stderr apart" $'out\n|err' "$(q "select output || '|' || stderr from cronq.job_runs where job_id = $e_res")"
eq "exec: the result as written (digits kept)" '{"n": 1.10, "big": 12345678901234567890}' "$(result_of $e_res)"
eq "exec: the run's result too" '{"n": 1.10, "big": 12345678901234567890}' "$(run_result_of $e_res)"
eq "exec: any JSON value" '"done"' "$(result_of $e_word)"
eq "exec: invalid JSON is dead, bad_result" "dead|bad_result" "$(status_of $e_bad)"
eq "exec: bad_result's message" "bad wrote a result that is not JSON to descriptor 3: unexpected token near end of file (at byte 6)" \
    "$(q "select last_error from cronq.jobs where id = $e_bad")"
eq "exec: \\u0000 is bad_result (jsonb cannot hold it)" "dead|bad_result" "$(status_of $e_nul)"
eq "exec: over 1 MiB is dead, result_too_large" "dead|result_too_large|huge wrote more than 1048576 bytes to descriptor 3 (its result)" \
    "$(status_of $e_huge)|$(q "select last_error from cronq.jobs where id = $e_huge")"
eq "exec: nothing on descriptor 3, no result" "succeeded||null|hi" "$(status_of $e_none)|$(result_of $e_none)|$(q "select output from cronq.job_runs where job_id = $e_none")"
eq "exec: a failed program keeps its error and its valid result" 'dead|exit_status|{"partial": true}' "$(status_of $e_fail)|$(result_of $e_fail)"

# A background child that keeps descriptor 3 open: killed when the program
# ends, nothing waits for it.
export CRONQ_PIDFILE="$T_DIR/bg.pid"
prog bgchild "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo \$! >$T_DIR/bg.pid; printf '[1]' >&3"
e_bg=$("$CRONQ" enqueue exec '{"command": "bgchild"}')
start=$(date +%s)
run
took=$(( $(date +%s) - start ))
eq "exec: a setsid child holding descriptor 3 delays nothing" "succeeded||[1]" "$(status_of $e_bg)|$(result_of $e_bg)"
check "and the run took under 5 s (took ${took}s)" [ "$took" -lt 5 ]
gone() { ! kill -0 "$1" 2>/dev/null; }
check "the child is gone" poll 5 gone "$(cat "$T_DIR/bg.pid")"
# A program that outlives its timeout with a child holding descriptor 3.
e_linger=$("$CRONQ" enqueue exec '{"command": "lingering"}' --timeout 2s)
start=$(date +%s)
run
took=$(( $(date +%s) - start ))
eq "exec: timed out, the child's descriptor 3 no matter" "failed|timeout" "$(status_of $e_linger)"
check "and the run ended within timeout + kill grace + slack (took ${took}s)" [ "$took" -lt 8 ]

# --- cronq.jobs.result follows the latest attempt ----------------------------
q "update cronq.jobs set result = '{\"old\": 1}' where id = $e_none" >/dev/null
cronq retry $e_none
run
eq "a new attempt without a result clears the job's" "succeeded||null" "$(status_of $e_none)|$(result_of $e_none)"
n1=$("$CRONQ" enqueue noop)
q "update cronq.jobs set result = '{\"old\": 1}' where id = $n1" >/dev/null
run
eq "a plain success (record_plain) clears it too" "null" "$(result_of $n1)"

sl=$("$CRONQ" enqueue sleep '{"seconds": 30}')
q "update cronq.jobs set result = '{\"old\": 1}' where id = $sl" >/dev/null
"$CRONQ" run --grace 100ms >/dev/null 2>&1 &
runner=$!
wait_for "the sleep job runs" 10 "select status = 'running' from cronq.jobs where id = $sl" || fail "the sleep job never ran"
kill -TERM $runner
wait $runner
eq "an attempt given back leaves the job's result" 'queued|{"old": 1}' "$(q "select status from cronq.jobs where id = $sl")|$(result_of $sl)"
q "update cronq.jobs set status = 'cancelled', finished_at = now() where id = $sl" >/dev/null

# --- history=errors: a success with a result or stderr keeps its row ---------
prog quietres 'printf 1 >&3'
prog quieterr 'echo oops >&2'
h1=$("$CRONQ" enqueue exec '{"command": "quietres"}' --history errors)
h2=$("$CRONQ" enqueue exec '{"command": "quieterr"}' --history errors)
h3=$("$CRONQ" enqueue noop --history errors)
run
eq "history errors: a result keeps the row, stderr keeps the row, a quiet noop none" "1|1|0" \
    "$(q "select count(*) from cronq.job_runs where job_id = $h1")|$(q "select count(*) from cronq.job_runs where job_id = $h2")|$(q "select count(*) from cronq.job_runs where job_id = $h3")"
eq "history errors: the job keeps its result" "1" "$(result_of $h1)"

# --- show, show --json, list --json -------------------------------------------
cronq show $e_res
eq "show exits 0" 0 "$RC"
match "show: the job's result line" $'\nresult +\\{"n": 1.10, "big": 12345678901234567890\\}\n' "$OUT"
match "show: output and stderr apart, the run's result" $'    output:\n    out\n    stderr:\n    err\n    result: \\{"n": 1.10, "big": 12345678901234567890\\}' "$OUT"
cronq show $e_res --json
eq "show --json: result" '{"n": 1.10, "big": 12345678901234567890}' "$(jget "$OUT" "->'result'")"
eq "show --json: the run's stderr and result" $'err|{"n": 1.10, "big": 12345678901234567890}' "$(jget "$OUT" "->'runs'->0->>'stderr'")|$(jget "$OUT" "->'runs'->0->'result'")"
cronq show $s3 --json
eq "show --json: a sql job's result" '{"row": {"b": 2, "c": 3}, "tag": "SELECT 1"}' "$(jget "$OUT" "->'result'")"
cronq list --json --type exec --limit 1000
eq "list --json: each job's result" '{"n": 1.10, "big": 12345678901234567890}' \
    "$("$PSQL" -XAtq -v j="$OUT" <<<"select e->'result' from jsonb_array_elements(:'j'::jsonb) e where (e->>'id')::bigint = $e_res")"
cronq list --type exec --limit 1000
eq "list (text) works with results jansson cannot hold" 0 "$RC"
cronq show $e_word
match "show: a string result shows as JSON" $'\nresult +"done"\n' "$OUT"
cronq show $e_bad
match "show: no result, an empty line" $'\nresult +\n' "$OUT"

done_testing
