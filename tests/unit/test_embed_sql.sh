#!/usr/bin/env bash
# test_embed_sql — scripts/embed-sql.sh reads a migration's
# "-- compatible-from: N" header line into the binary's migration table:
# without one, the migration's own version; a value from 1 to the version;
# anything else, or a second such line, fails the build.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# entry HEADER: the migration table's line for 0012_x.sql with that header.
entry() {
    printf '%s\nselect 1;\n' "$1" > "$tmp/0012_x.sql"
    scripts/embed-sql.sh "$tmp/0012_x.sql" 2>"$tmp/err" | grep -F '"0012_x.sql"' || cat "$tmp/err"
}
is() {
    if [ "$2" == "$3" ]; then passed=$((passed + 1)); else
        echo "not ok $1: expected [$2], got [$3]"; failed=$((failed + 1))
    fi
}
is "no header: its own version" $'\t{12, 12, "0012_x.sql",' "$(entry '-- 0012_x.sql — nothing declared')"
is "declared" $'\t{12, 10, "0012_x.sql",' "$(entry '-- compatible-from: 10')"
is "declared, spaces and zeros" $'\t{12, 9, "0012_x.sql",' "$(entry '--   compatible-from:  0009 ')"
is "its own version" $'\t{12, 12, "0012_x.sql",' "$(entry '-- compatible-from: 12')"
is "mentioned inside a line is no declaration" $'\t{12, 12, "0012_x.sql",' "$(entry '-- says -- compatible-from: 3')"
bad="embed-sql.sh: 0012_x.sql: compatible-from must be a version from 1 to 12"
is "newer than the migration" "$bad" "$(entry '-- compatible-from: 13')"
is "zero" "$bad" "$(entry '-- compatible-from: 0')"
is "not a number" "$bad" "$(entry '-- compatible-from: ten')"
is "empty" "$bad" "$(entry '-- compatible-from:')"
is "twice" "embed-sql.sh: 0012_x.sql declares compatible-from more than once" \
    "$(entry $'-- compatible-from: 10\n-- compatible-from: 10')"
echo "embed_sql: $passed passed, $failed failed"
[ "$failed" = 0 ]
