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
results=$("$PSQL" -XAtq -v ON_ERROR_STOP=1 -F $'\t' 2>&1 <<SQL
create temp table cases (line int, type text, payload text, expected text, scope text);
\copy cases from '$T_DIR/cases.tsv' with (format csv, delimiter E'\t', quote E'\x01', force_not_null (type, payload, expected, scope))
select line, scope, expected,
       case when scope = 'c-only' then null
            else coalesce(cronq.payload_error(type, (case when payload = '-' then '{}' else payload end)::jsonb), 'ok') end
from cases order by line;
SQL
)
rc=$?
eq "the cases load and run: ${results:0:300}" 0 "$rc"
eq "every case of the file is a row" "$n" "$(grep -c . <<<"$results")"
ran=0
while IFS=$'\t' read -r line scope expected got; do
    [ "$scope" = c-only ] && continue
    ran=$((ran + 1))
    eq "payload_cases.tsv:$line" "$expected" "$got"
done <<<"$results"
check "at least 40 cases ran against the database" [ "$ran" -ge 40 ]

done_testing
