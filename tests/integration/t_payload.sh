#!/usr/bin/env bash
# payload: the database's payload rules (cronq.payload_error(), run by every
# insert into cronq.jobs) against tests/payload_cases.tsv, the cases the C
# rules pass too (tests/unit/test_payload.c): the same message for each, or
# both accept. One check per case, named by its line.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cases="$root/tests/payload_cases.tsv"

migrate

# The cases as rows: line number, type, payload, expected, scope (both
# or c-only). The text
# is loaded untouched (CSV with a quote character no case holds: no escapes).
awk -F'\t' -v OFS='\t' '!/^#/ && NF { print NR, $1, $2, $3, ($4 == "" ? "both" : $4) }' "$cases" \
    >"$T_DIR/cases.tsv"
n=$(grep -c . "$T_DIR/cases.tsv")
check "at least 40 cases" [ "$n" -ge 40 ]
# run_cases DB: each case's row (line, scope, expected, what DB's
# cronq.payload_error() says: "ok" for accepted, nothing for a c-only case).
run_cases() {
    PGDATABASE=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -F $'\t' 2>&1 <<SQL
create temp table cases (line int, type text, payload text, expected text, scope text);
\copy cases from '$T_DIR/cases.tsv' with (format csv, delimiter E'\t', quote E'\x01', force_not_null (type, payload, expected, scope))
select line, scope, expected,
       case when scope = 'c-only' then null
            else coalesce(cronq.payload_error(type, (case when payload = '-' then '{}' else payload end)::jsonb), 'ok') end
from cases order by line;
SQL
}

# check_cases DESC DB: one check per case (c-only ones left out).
check_cases() {
    local results rc ran=0 line scope expected got
    results=$(run_cases "$2")
    rc=$?
    eq "$1: the cases load and run: ${results:0:300}" 0 "$rc"
    eq "$1: every case of the file is a row" "$n" "$(grep -c . <<<"$results")"
    while IFS=$'\t' read -r line scope expected got; do
        [ "$scope" = c-only ] && continue
        ran=$((ran + 1))
        eq "$1: payload_cases.tsv:$line" "$expected" "$got"
    done <<<"$results"
    check "$1: at least 40 cases ran against the database" [ "$ran" -ge 40 ]
}

check_cases "$T_NAME" "$T_NAME"

# The same in a database whose collation is not "C" (ICU's English: "b"
# sorts before "B"): the rules do not depend on it.
icu_db="${T_NAME}_icu"
"$PSQL" -XAtq -d postgres -c "drop database if exists $icu_db" >/dev/null
if "$PSQL" -XAtq -d postgres -c "create database $icu_db template template0 locale_provider icu icu_locale 'en' locale 'C.UTF-8'" \
    >/dev/null 2>"$T_DIR/icu.err"; then
    PGDATABASE=$icu_db "$CRONQ" migrate >/dev/null || fail "cronq migrate of $icu_db failed"
    check_cases "ICU collation" "$icu_db"
    "$PSQL" -XAtq -d postgres -c "drop database $icu_db" >/dev/null
else
    echo "# $T_NAME: no ICU database ($(cat "$T_DIR/icu.err")): the collation cases skipped"
fi

done_testing
