#!/bin/sh
# schema-dump.sh — sql/schema.sql: the definition of schema cronq after all
# the migrations, as pg_dump --schema-only prints it, for people to read
# (the migrations say how the schema came to be; this says what it is).
#   schema-dump.sh           migrate a database of a throwaway PostgreSQL
#                            with $CRONQ (default bin/cronq) and write
#                            sql/schema.sql (make schema)
#   schema-dump.sh --stdout  print the dump of the database the PG*
#                            variables name, which must be migrated
#                            (t_sql diffs it against sql/schema.sql)
# The dump is normalised to stay the same from one run to the next: no
# version header, no SET lines, no \restrict key, no blank-line runs.
# It is for reading, not for restoring: install with cronq migrate. (pg_dump
# warns of a dependency loop it cannot order: cronq.json_depth() calls
# itself.)
# pg_dump comes from $PGBIN, else the bindir pg.sh uses.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)

# normalise: pg_dump's output without what varies between runs and versions.
normalise() {
    sed -e '/^-- Dumped from database version/d' \
        -e '/^-- Dumped by pg_dump version/d' \
        -e '/^-- Started on/d' -e '/^-- Completed on/d' \
        -e '/^SET /d' \
        -e "/^SELECT pg_catalog.set_config('search_path', '', false);\$/d" \
        -e '/^\\restrict /d' -e '/^\\unrestrict /d' |
        cat -s
}

dump() {
    if [ -z "${PGBIN:-}" ]; then
        PGBIN=$(pg_config --bindir 2>/dev/null || true)
        [ -x "$PGBIN/pg_dump" ] || PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    fi
    "$PGBIN/pg_dump" --schema-only --schema=cronq | normalise
}

if [ "${1:-}" = --stdout ]; then
    dump
    exit 0
fi
[ $# -eq 0 ] || { echo "usage: schema-dump.sh [--stdout]" >&2; exit 64; }

cronq=${CRONQ:-$root/bin/cronq}
[ -x "$cronq" ] || { echo "schema-dump.sh: no $cronq (make it first)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/cronq-schema.XXXXXX)
chmod 755 "$tmp"  # the cluster runs as postgres when we are root
trap '"$root/scripts/pg.sh" stop "$tmp/pg" >/dev/null 2>&1; rm -rf "$tmp"' EXIT INT TERM
eval "$("$root/scripts/pg.sh" start "$tmp/pg" fast)"
unset CRONQ_DATABASE_URL DATABASE_URL
"$cronq" migrate >/dev/null
dump > "$tmp/schema.sql"
mv "$tmp/schema.sql" "$root/sql/schema.sql"
echo "schema-dump.sh: wrote sql/schema.sql"
