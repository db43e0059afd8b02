#!/usr/bin/env bash
# test_mutations — the catalogue of make mutate (tests/mutations) stays
# usable: scripts/mutate.sh --lint finds every entry's substitution
# changing its file and no entry on a migration changing a function or a
# trigger that a later migration defines again (the database runs the later one: such a
# mutant can never be killed, and the guarantee would look defended). Then
# the lint itself, on a catalogue of known cases. Under make mutate
# (CRONQ_MUTANT set) the tree is a mutant, which the entries no longer
# match: nothing to check there, and no mutant is killed by this file.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${CRONQ_MUTANT:-}" ]; then echo "mutations: 0 passed, 0 failed"; exit 0; fi
passed=0; failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
is() {
    if [ "$2" == "$3" ]; then passed=$((passed + 1)); else
        echo "not ok $1: expected [$2], got [$3]"; failed=$((failed + 1))
    fi
}

entries=$(grep -cvE '^(#|$)' tests/mutations)
out=$(scripts/mutate.sh --lint); rc=$?
is "the catalogue: every entry usable" "0 $entries entries apply, 0 broken" "$rc $(tail -n 1 <<<"$out")"
[ "$rc" = 0 ] || sed -n '/^broken/p' <<<"$out"

# lint NAME FILE PERL: the lint's verdict on a catalogue of that one entry.
lint() {
    printf '%s\t%s\tt_x\t%s\n' "$1" "$2" "$3" >"$tmp/catalogue"
    MUTATE_CATALOGUE="$tmp/catalogue" scripts/mutate.sh --lint | head -n 1
}
hook='s/when '"'"'dead'"'"' then array\['"'"'failure'"'"', '"'"'dead'"'"'\]/when '"'"'dead'"'"' then array['"'"'failure'"'"']/'
is "a function a later migration defines again" \
    "broken old: it changes cronq.fire_hooks, defined again by 0022_bounded_settle.sql: the database runs that one" \
    "$(lint old sql/0020_names_every.sql "$hook")"
is "the same change on the last definition" "1 entries apply, 0 broken" \
    "$(lint last sql/0042_hook_lives.sql "$hook" >/dev/null; MUTATE_CATALOGUE="$tmp/catalogue" scripts/mutate.sh --lint)"
is "a statement after a function, not in it" "1 entries apply, 0 broken" \
    "$(lint grant sql/0020_names_every.sql 's/\nrevoke execute on function cronq.fire_hooks\(bigint\[\], text\[\], integer\[\], text\[\]\) from public;//' >/dev/null
       MUTATE_CATALOGUE="$tmp/catalogue" scripts/mutate.sh --lint)"
is "a trigger a later migration creates again" \
    "broken trig: it changes trigger jobs_times, defined again by 0037_finite_schedule_times.sql: the database runs that one" \
    "$(lint trig sql/0024_finite_times.sql 's/    when \(not \(new.run_at >= /    when (false and not (new.run_at >= /')"
is "a substitution that matches nothing" "broken none: the substitution matched nothing in lib/queue/claim.sql" \
    "$(lint none lib/queue/claim.sql 's/no such text anywhere//')"
is "a substitution that does not compile" "broken bad: the substitution fails on lib/queue/claim.sql" \
    "$(lint bad lib/queue/claim.sql 's/(/')"

echo "mutations: $passed passed, $failed failed"
[ "$failed" = 0 ]
