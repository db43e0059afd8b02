#!/usr/bin/env bash
# Rolling upgrades: a binary built for schema version B uses a schema at S
# when S = B, or S > B and the schema's migrations declare B compatible
# (cronq.schema_compatible_from() <= B); an older schema is refused (run
# cronq migrate), a newer incompatible one too (upgrade cronq), with exit 78
# (3, UNKNOWN, for check) and nothing written. Building an older binary is
# impractical here, so the test makes the schema newer instead, as a future
# cronq's migrate would leave it: a row in schema_migrations and the two
# constant functions rewritten.
. "$(dirname "$0")/lib.sh"
sql_dir="$(dirname "$0")/../../sql"
nl=$'\n'
B=$(ls "$sql_dir"/[0-9]*.sql | sort | tail -n 1 | xargs basename | sed -E 's/^0*([0-9]+)_.*/\1/')
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
C=$(compat_of "$sql_dir")
N=$((B + 1))
# the migration before B (numbers may skip one while branches are merged)
P=$(ls "$sql_dir"/[0-9]*.sql | sort | tail -n 2 | head -n 1 | xargs basename | sed -E 's/^0*([0-9]+)_.*/\1/')

migrate

# future S C: the schema at version S, declaring binaries from C compatible.
future() {
    q "delete from cronq.schema_migrations where version > $B;
       insert into cronq.schema_migrations (version, name) values ($1, '$(printf %04d "$1")_future.sql');
       create or replace function cronq.schema_version() returns integer language sql immutable parallel safe return $1;
       create or replace function cronq.schema_compatible_from() returns integer language sql immutable parallel safe return $2"
}
# What anything that writes would change: jobs, their history, the wakes.
counts() { q "select (select count(*) from cronq.jobs) || '|' || (select count(*) from cronq.job_runs) || '|' || (select count(*) from cronq.wakes)"; }
fns() { q "select cronq.schema_version() || '|' || cronq.schema_compatible_from() || '|' || (select max(version) from cronq.schema_migrations)"; }
fn_rows() { q "select string_agg(xmin::text, ',' order by proname) from pg_proc where pronamespace = 'cronq'::regnamespace and proname in ('schema_version', 'schema_compatible_from')"; }

eq "migrate writes both functions" "$B|$C|$B" "$(fns)"

# --- A newer schema that declares this binary compatible: everything works.
future $N $B
cronq enqueue noop
eq "compatible: enqueue works" 0 "$RC"
first=$OUT
eq "compatible: the job is written" 1 "$(q "select count(*) from cronq.jobs where id = '$first' and status = 'queued'")"
cronq status
eq "compatible: status works" 0 "$RC"
cronq list
eq "compatible: list works" 0 "$RC"
before=$(q "select count(*) from cronq.wakes")
cronq run
expect "compatible: run works" 0 "" ""
eq "compatible: run ran the job" succeeded "$(q "select status from cronq.jobs where id = '$first'")"
eq "compatible: run recorded its wake" $((before + 1)) "$(q "select count(*) from cronq.wakes")"
cronq check
eq "compatible: check works" "0|CRONQ OK" "$RC|${OUT%% -*}"
# migrate never downgrades: it leaves the newer schema as it is.
rows=$(fn_rows)
cronq migrate
expect "compatible: migrate does nothing" 0 "" "cronq: database schema is at version $N, newer than this cronq (version $B) and compatible with it: nothing to do"
eq "compatible: migrate leaves the version and functions" "$N|$B|$N|$rows" "$(fns)|$(fn_rows)"
cronq migrate --status
eq "compatible: migrate --status says so" "0|database is at version $N, newer than this cronq (version $B) and compatible with it" \
    "$RC|$(tail -n 1 <<<"$OUT")"

# A compatible newer schema that lacks what this binary uses (a migration
# that declared compatibility wrongly): refused, naming the version and
# the upgrade, not "no cronq schema".
q "alter table cronq.wakes rename to wakes_renamed"
cronq run
expect_rc_err "compatible but lacking a table: run refused" 78 "^cronq: error: database schema is at version $N, newer than this cronq \(version $B\): .*wakes.* does not exist${nl}cronq: hint: Upgrade cronq on this host\.$"
q "alter table cronq.wakes_renamed rename to wakes"

# --- A newer schema whose migrations need a newer binary: each command
# refuses with 78 (check: 3) and writes nothing.
cronq enqueue noop
second=$OUT
future $N $N
newer_err="cronq: error: database schema is at version $N, newer than this cronq (version $B) and not compatible with it${nl}cronq: hint: Upgrade cronq on this host: the schema works with a cronq for version $N or later."
before=$(counts)
cronq enqueue noop
expect "incompatible: enqueue refused" 78 "" "$newer_err"
cronq run
expect "incompatible: run refused" 78 "" "$newer_err"
eq "incompatible: the queued job is not run" "queued|0" "$(q "select status || '|' || attempts from cronq.jobs where id = '$second'")"
cronq status
expect "incompatible: status refused" 78 "" "$newer_err"
cronq list
expect "incompatible: list refused" 78 "" "$newer_err"
cronq check
eq "incompatible: check is UNKNOWN" 3 "$RC"
match "incompatible: check says why" "^CRONQ UNKNOWN - .*version $N, newer than this cronq" "$OUT"
rows=$(fn_rows)
cronq migrate
expect "incompatible: migrate refuses" 78 "" "$newer_err"
eq "incompatible: migrate does not downgrade" "$N|$N|$N|$rows" "$(fns)|$(fn_rows)"
eq "incompatible: nothing was written" "$before" "$(counts)"

# A newer schema without the function declares no older binary compatible.
q "drop function cronq.schema_compatible_from()"
cronq status
expect_rc_err "newer, no compatible-from: status refused" 78 "newer than this cronq \(version $B\) and not compatible"
cronq run
expect_rc_err "newer, no compatible-from: run refused" 78 "newer than this cronq \(version $B\) and not compatible"
eq "newer, no compatible-from: nothing was written" "$before" "$(counts)"

# --- An older schema (S = P, the version before B): refused, naming cronq migrate; with the
# function there (the wake's statement decides) and without it (as a schema
# from before 0010: the wake's statement fails and the table is read).
older_err="cronq: error: database schema is at version $P, older than this cronq (version $B)${nl}cronq: hint: Run \"cronq migrate\" to upgrade it."
q "delete from cronq.schema_migrations where version >= $B;
   create or replace function cronq.schema_version() returns integer language sql immutable return $P;
   create or replace function cronq.schema_compatible_from() returns integer language sql immutable return $P"
cronq run
expect "older: run refused" 78 "" "$older_err"
cronq enqueue noop
expect "older: enqueue refused" 78 "" "$older_err"
cronq status
expect "older: status refused" 78 "" "$older_err"
eq "older: nothing was written" "$before" "$(counts)"
q "drop function cronq.schema_compatible_from()"
cronq run
expect "older, before 0010: run refused" 78 "" "$older_err"
eq "older, before 0010: nothing was written" "$before" "$(counts)"
cronq migrate
eq "migrate brings it back" "0|$B|$C|$B" "$RC|$(fns)"
cronq run
expect "and run works again" 0 "" ""
eq "the waiting job ran" succeeded "$(q "select status from cronq.jobs where id = '$second'")"

# A stale or missing compatible-from is rewritten by migrate, as the version is.
q "create or replace function cronq.schema_compatible_from() returns integer language sql immutable return 1"
cronq migrate
eq "a stale compatible-from is rewritten" "0|$B|$C|$B" "$RC|$(fns)"
q "drop function cronq.schema_compatible_from()"
cronq migrate
eq "a missing compatible-from is written" "0|$B|$C|$B" "$RC|$(fns)"
rows=$(fn_rows)
cronq migrate
eq "a migrate with nothing to do rewrites neither" "0|$rows" "$RC|$(fn_rows)"

done_testing
