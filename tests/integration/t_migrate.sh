#!/usr/bin/env bash
# migrate: applies once, records, is idempotent, serialises concurrent runs;
# other commands refuse an unmigrated, older or newer schema with exit 78.
. "$(dirname "$0")/lib.sh"
sql_dir="$(dirname "$0")/../../sql"
nl=$'\n'
n_migrations=$(ls "$sql_dir"/*.sql | wc -l)
latest=$(ls "$sql_dir"/*.sql | sort | tail -n 1 | xargs basename | sed -E 's/^0*([0-9]+)_.*/\1/')

cronq run
expect "run before migrate" 78 "" $'cronq: error: database has no cronq schema: relation "cronq.schema_migrations" does not exist\ncronq: hint: Run "cronq migrate" to install it.'
cronq enqueue noop
expect "enqueue before migrate" 78 "" $'cronq: error: database has no cronq schema\ncronq: hint: Run "cronq migrate" to install it.'
cronq migrate --status
match "status lists the pending migrations" '^0001_init\.sql +pending' "$OUT"
eq "status lists every migration" "$n_migrations" "$(grep -c pending <<<"$OUT")"

# Four concurrent migrates: the advisory lock serialises them, all succeed.
for i in 1 2 3 4; do "$CRONQ" migrate >/dev/null 2>"$T_DIR/m$i.err" & done
wait
eq "concurrent migrates leave one row per migration" "$n_migrations" "$(q 'select count(*) from cronq.schema_migrations')"
for i in 1 2 3 4; do eq "migrate $i quiet" "" "$(cat "$T_DIR/m$i.err")"; done

cronq migrate
expect "migrate again is a no-op" 0 "" ""
cronq migrate --status
match "status shows applied time" '^0001_init\.sql +[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$OUT"
eq "cronq_user role exists" 1 "$(q "select count(*) from pg_roles where rolname in ('cronq_user')")"
eq "cronq_exec role exists" 1 "$(q "select count(*) from pg_roles where rolname in ('cronq_exec')")"

# The claim's partial index exists and history does not enter it.
eq "due index is partial" t "$(q "select indexdef like '%WHERE%' from pg_indexes where indexname = 'jobs_due'")"

# A newer schema than the binary: refuse and say so.
q "insert into cronq.schema_migrations (version, name) values (999, '0999_future.sql')"
cronq run
expect "newer schema" 78 "" "cronq: error: database schema is at version 999, newer than this cronq (version $latest)$nl"'cronq: hint: Upgrade cronq on this host.'
cronq migrate
expect "migrate refuses a newer schema" 78 "" "cronq: error: database schema is at version 999, newer than this cronq (version $latest)$nl"'cronq: hint: Upgrade cronq on this host.'
q "delete from cronq.schema_migrations where version = 999"

done_testing
