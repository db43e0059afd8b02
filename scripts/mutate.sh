#!/usr/bin/env bash
# mutate.sh — break cronq's guarantees on purpose, one at a time, and check
# that a test fails. Each entry of tests/mutations (see its header) is
# applied to a scratch copy of the working tree, built, and run against the
# test files that concern it: "killed" when they fail, "survived" when
# they pass (a guarantee no test defends). Ends with "N killed, N
# survived". Not part of `make test`: it takes minutes.
#   MUTATE_ONLY   optional: only entries whose name contains one of these
#                 space-separated words
#   TEST_TIMEOUT  seconds per test file (default here 180: a mutant that
#                 hangs a test fails it, with its name, without costing ten
#                 minutes)
set -uo pipefail
export TEST_TIMEOUT=${TEST_TIMEOUT:-180}

root=$(cd "$(dirname "$0")/.." && pwd)
catalogue="$root/tests/mutations"
scratch=$(mktemp -d /tmp/cronq-mutate.XXXXXX)
chmod 755 "$scratch"
trap 'rm -rf "$scratch"' EXIT INT TERM

# The tracked files as they are now (uncommitted changes included).
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$scratch")
cd "$scratch" || exit 1
# The copy has no .git: keep -Werror, so a mutant that warns is "broken" as
# it would be in a checkout.
export WERROR=1
make -j2 bin/cronq unit-bins >build.log 2>&1 || { echo "mutate: the unmutated tree does not build"; exit 1; }

killed=0; survived=0; broken=0
while IFS=$'\t' read -r -u 3 name file tests perl; do
    case $name in ''|'#'*) continue ;; esac
    if [ -n "${MUTATE_ONLY:-}" ]; then
        wanted=0
        for w in $MUTATE_ONLY; do [[ "$name" == *"$w"* ]] && wanted=1; done
        [ $wanted = 1 ] || continue
    fi
    cp "$file" "$file.orig"
    MUTATION=$perl perl -0pi -e 'eval $ENV{MUTATION}; die $@ if $@' "$file"
    if cmp -s "$file" "$file.orig"; then
        echo "broken $name: the substitution matched nothing in $file"
        broken=$((broken + 1))
    elif ! make -j2 bin/cronq unit-bins >build.log 2>&1; then
        echo "broken $name: the mutant does not build"
        broken=$((broken + 1))
    elif TESTS="$tests" make test >"test-$name.log" 2>&1 </dev/null; then
        echo "survived $name ($tests)"
        survived=$((survived + 1))
    else
        echo "killed $name ($(grep -m1 '^not ok' "test-$name.log" | cut -c1-100))"
        killed=$((killed + 1))
    fi
    mv "$file.orig" "$file"
    touch "$file"
done 3<"$catalogue"  # fd 3: nothing a test runs may read the catalogue
[ $broken = 0 ] || echo "$broken entries could not be applied"
echo "$killed killed, $survived survived"
[ $survived = 0 ] && [ $broken = 0 ]
