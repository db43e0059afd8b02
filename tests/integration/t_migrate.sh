#!/usr/bin/env bash
# migrate: applies once, records, is idempotent, serialises concurrent runs;
# other commands refuse an unmigrated, older or newer (incompatible)
# schema with exit 78.
. "$(dirname "$0")/lib.sh"
sql_dir="$(dirname "$0")/../../sql"
nl=$'\n'
n_migrations=$(ls "$sql_dir"/[0-9]*.sql | wc -l)
latest=$(ls "$sql_dir"/[0-9]*.sql | sort | tail -n 1 | xargs basename | sed -E 's/^0*([0-9]+)_.*/\1/')
# The compatible-from migrate writes: the highest its migrations declare
# (scripts/embed-sql.sh), a migration without the line declaring its own version.
compat_of() {
    local f v c
    for f in "$1"/[0-9]*.sql; do
        v=$(basename "$f" | sed -E 's/^0*([0-9]+)_.*/\1/')
        c=$(sed -n 's/^--[[:space:]]*compatible-from:[[:space:]]*0*\([1-9][0-9]*\)[[:space:]]*$/\1/p' "$f")
        echo "${c:-$v}"
    done | sort -n | tail -n 1
}
compat=$(compat_of "$sql_dir")
# the one before it (numbers may skip one while branches are merged)
previous=$(ls "$sql_dir"/[0-9]*.sql | sort | tail -n 2 | head -n 1 | xargs basename | sed -E 's/^0*([0-9]+)_.*/\1/')

cronq run
expect "run before migrate" 78 "" $'cronq: error: database has no cronq schema\ncronq: hint: Run "cronq migrate" to install it.'
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

# A wake reads the version from cronq.schema_version(), which migrate
# writes: it is the newest migration's number, as schema_migrations says.
eq "schema_version() is the latest migration" "$latest|$latest" \
    "$(q "select cronq.schema_version(), max(version) from cronq.schema_migrations")"

# A database migrated by an older cronq (before the function): run names
# the version and the command, and migrate brings it up to date.
q "drop function cronq.schema_version(); delete from cronq.schema_migrations where version = $latest"
cronq run
expect "run on an older schema" 78 "" "cronq: error: database schema is at version $previous, older than this cronq (version $latest)$nl"'cronq: hint: Run "cronq migrate" to upgrade it.'
cronq migrate
expect "migrate upgrades it" 0 "" ""
eq "the function is back" "$latest" "$(q "select cronq.schema_version()")"
cronq run
expect "run after the upgrade" 0 "" ""
fn_row() { q "select xmin from pg_proc where oid = 'cronq.schema_version()'::regprocedure"; }
row=$(fn_row)
cronq migrate
eq "a migrate with nothing to do leaves the function as it is" "0|$row" "$RC|$(fn_row)"
q "create or replace function cronq.schema_version() returns integer language sql immutable return 1"
cronq migrate
eq "a stale function is rewritten" "0|$latest" "$RC|$(q "select cronq.schema_version()")"
q "drop function cronq.schema_version()"
cronq run
expect "run without the function" 78 "" $'cronq: error: database has no cronq schema: function cronq.schema_version() does not exist\ncronq: hint: Run "cronq migrate" to install it.'
cronq migrate
eq "a missing function is written" "0|$latest" "$RC|$(q "select cronq.schema_version()")"

# The claim's partial index exists and history does not enter it.
eq "due index is partial" t "$(q "select indexdef like '%WHERE%' from pg_indexes where indexname = 'jobs_due'")"

# A newer schema than the binary (as a newer cronq's migrate leaves it)
# whose migrations declare no older binary compatible: refuse and say so
# (t_upgrade: the rolling upgrade, a compatible newer schema).
q "insert into cronq.schema_migrations (version, name) values (999, '0999_future.sql')"
q "create or replace function cronq.schema_version() returns integer language sql immutable return 999"
q "create or replace function cronq.schema_compatible_from() returns integer language sql immutable return 999"
newer_err="cronq: error: database schema is at version 999, newer than this cronq (version $latest) and not compatible with it$nl"'cronq: hint: Upgrade cronq on this host: the schema works with a cronq for version 999 or later.'
cronq run
expect "newer schema" 78 "" "$newer_err"
cronq migrate
expect "migrate refuses a newer schema" 78 "" "$newer_err"
q "delete from cronq.schema_migrations where version = 999"
cronq migrate
expect "migrate after the newer schema is gone" 0 "" ""
eq "the functions follow" "$latest|$compat" "$(q "select cronq.schema_version(), cronq.schema_compatible_from()")"

# A lock migrate waits for past its lock_timeout (10 s): another session's
# transaction holding the row of a function that migrate rewrites once it
# has applied something. It fails with 75 and a hint, and leaves nothing
# applied (the transaction rolled back: the version is as before).
q "delete from cronq.schema_migrations where version = $latest"
"$PSQL" -XAtq -c "begin" -c "alter function cronq.schema_version() set work_mem = '1MB'" \
    -c "select pg_sleep(30)" -c "rollback" >/dev/null 2>&1 &
holder=$!
wait_for "the holder" 10 "select exists ($(sleepers 30))" ||
    fail "the holder never took the function's row"
cronq migrate
expect "migrate waiting past its lock_timeout" 75 "" "cronq: error: canceling statement due to lock timeout$nl"'cronq: hint: Another session holds a lock on a cronq object (see pg_locks); run "cronq migrate" again.'
eq "the migration it was applying left no trace" "$previous|0" \
    "$(q "select max(version), count(*) filter (where version = $latest) from cronq.schema_migrations")"
q "select pg_cancel_backend(pid) from ($(sleepers 30)) s" >/dev/null
wait "$holder"
cronq migrate
eq "migrate again, once the lock is gone" "0|$latest" "$RC|$(q "select max(version) from cronq.schema_migrations")"

# A database whose string literals are not standard (a legacy default):
# migrate's sessions read them as written, as the SQL-standard bodies it
# creates are parsed then, once: 'LC\_%' stays a prefix, not 'LC_%'.
"$PSQL" -XAtq -d postgres -c "drop database if exists t_migrate_legacy" -c "create database t_migrate_legacy" \
    -c "alter database t_migrate_legacy set standard_conforming_strings = off" >/dev/null
cronq migrate --db "dbname=t_migrate_legacy"
eq "migrate where strings are not standard" 0 "$RC"
eq "a body's literal read as written" "t|f" "$(PGDATABASE=t_migrate_legacy q "select cronq.exec_env_value_refused('LC_ALL', '../x'), cronq.exec_env_value_refused('LCX', '../x')")"
"$PSQL" -XAtq -d postgres -c "drop database t_migrate_legacy" >/dev/null

# A SQL_ASCII database stores text unchecked: one role's queue name that is
# not UTF-8 stopped every runner's claim. migrate refuses it, nothing written.
"$PSQL" -XAtq -d postgres -c "drop database if exists t_migrate_ascii" \
    -c "create database t_migrate_ascii encoding 'SQL_ASCII' lc_collate 'C' lc_ctype 'C' template template0" >/dev/null
cronq migrate --db "dbname=t_migrate_ascii"
expect_rc_err "migrate refuses a SQL_ASCII database" 78 "^cronq: error: the database's encoding is SQL_ASCII, which stores text unchecked"
eq "nothing written there" "" "$(PGDATABASE=t_migrate_ascii q "select nspname from pg_namespace where nspname = 'cronq'")"
"$PSQL" -XAtq -d postgres -c "drop database t_migrate_ascii" >/dev/null

done_testing
