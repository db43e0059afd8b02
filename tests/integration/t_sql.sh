#!/usr/bin/env bash
# sql: the SQL a DBA reads. Every statement file of lib/ (lib/queue/claim.sql…)
# pastes into psql as its header says: PREPARE NAME AS <the file>, then the
# header's EXPLAIN EXECUTE examples run against the migrated schema. And
# sql/schema.sql is the schema the migrations make, exactly (regenerate it
# with "make schema").
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

migrate

# The statements: one check per file, and one per example it gives.
files=$(cd "$root" && find lib -name '*.sql' | sort)
check "there are statement files" [ -n "$files" ]
for f in $files; do
    name=$(basename "$f" .sql)
    check "$f starts with a comment naming it" grep -q "^-- $name: " <(head -n 1 "$root/$f")
    check "$f says how to prepare it" grep -qx -- "--   PREPARE $name AS" "$root/$f"
    # The header's examples: from "--   EXPLAIN EXECUTE" to the line ending in ";".
    examples=$(awk '/^--   EXPLAIN EXECUTE / { on = 1 } on && /^--/ { print substr($0, 3) } !/^--/ || /;$/ { on = 0 }' "$root/$f")
    check "$f gives an EXPLAIN EXECUTE example" [ -n "$examples" ]
    { echo "PREPARE $name AS"; cat "$root/$f"; echo "$examples"; } |
        "$PSQL" -X -q -v ON_ERROR_STOP=1 >"$T_DIR/$name.out" 2>"$T_DIR/$name.err"
    rc=$?
    eq "$f prepares and its examples explain" "0|" "$rc|$(cat "$T_DIR/$name.err")"
done

# claim_plain.sql is claim.sql without the flow-control steps: the walk's
# conditions, the update and the columns stay claim.sql's, word for word.
# part FILE FROM TO: the lines of FILE from the one containing FROM to the
# one containing TO.
part() { awk -v a="$2" -v b="$3" 'index($0, a) { on = 1 } on { print } on && index($0, b) { exit }' "$root/$1"; }
walk_from="where status in ('queued', 'failed')"; walk_to="or queue <> all(\$6::text[]))"
update_from="update cronq.jobs j set status = 'running'"; update_to="(select clock_timestamp()),"
check "claim.sql has the walk and update that claim_plain.sql is compared with" \
    [ "$(part lib/queue/claim.sql "$walk_from" "$walk_to" | wc -l)" -ge 5 -a \
      "$(part lib/queue/claim.sql "$update_from" "$update_to" | wc -l)" -ge 8 ]
eq "claim_plain.sql walks as claim.sql does" "$(part lib/queue/claim.sql "$walk_from" "$walk_to")" \
    "$(part lib/queue/claim_plain.sql "$walk_from" "$walk_to")"
eq "claim_plain.sql updates and returns as claim.sql does" "$(part lib/queue/claim.sql "$update_from" "$update_to")" \
    "$(part lib/queue/claim_plain.sql "$update_from" "$update_to")"

# Each is one statement, as embedded: nothing after its final semicolon.
for f in $files; do
    eq "$f ends with its statement's semicolon" ";" "$(grep -v '^[[:space:]]*--' "$root/$f" | grep . | tail -n 1 | grep -o ';$')"
done

# The schema dump: what a fresh migrate makes is what sql/schema.sql says.
"$root/scripts/schema-dump.sh" --stdout >"$T_DIR/schema.sql" 2>"$T_DIR/schema.err"
eq "schema-dump.sh --stdout succeeds: $(cat "$T_DIR/schema.err")" 0 "$?"
if d=$(diff -u "$root/sql/schema.sql" "$T_DIR/schema.sql"); then pass; else
    # Indented, so that run-tests.sh shows the diff with the failure.
    fail "sql/schema.sql differs from a fresh migrate's schema (run make schema):"$'\n'"$(sed 's/^/  /' <<<"$d")"
fi
check "the dump defines the jobs table" grep -q '^CREATE TABLE cronq.jobs ' "$root/sql/schema.sql"
if grep -Eq '^(SET |-- Dumped|\\restrict)' "$root/sql/schema.sql"; then
    fail "sql/schema.sql keeps a line that varies (SET, -- Dumped, \\restrict)"
else pass; fi

# sql/schema.sql is no migration: migrate does not list or apply it.
cronq migrate --status
eq "migrate --status succeeds" 0 "$RC"
if [[ "$OUT" == *schema.sql* ]]; then fail "migrate --status lists schema.sql: $OUT"; else pass; fi
eq "as many migrations applied as sql/ has" "$(ls "$root"/sql/[0-9]*.sql | wc -l)" \
    "$(q 'select count(*) from cronq.schema_migrations')"

done_testing
