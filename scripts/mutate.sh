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
#   MUTATE_CATALOGUE  another catalogue than tests/mutations (the lint's test)
# mutate.sh --lint checks every entry without building or testing (the
# unit test test_mutations runs it): its substitution must change its file,
# and an entry on a migration must not change a function or a trigger that
# a later migration defines again — the database would run the later
# definition, and no test could ever kill the mutant.
set -uo pipefail
export TEST_TIMEOUT=${TEST_TIMEOUT:-180}

root=$(cd "$(dirname "$0")/.." && pwd)
catalogue=${MUTATE_CATALOGUE:-$root/tests/mutations}

# mutant FILE PERL: FILE's text with the substitution applied, on stdout.
mutant() {
    MUTATION=$2 perl -0p -e 'eval $ENV{MUTATION}; die $@ if $@' "$1"
}
# superseded FILE MUTANT: for a migration sql/NNNN_*.sql, when MUTANT's first
# changed line lies in a function (or a trigger's statement) that a later
# migration creates again, "cronq.NAME, defined again by NNNN_….sql" ("trigger
# NAME, …"); otherwise nothing. A function's (trigger's) text runs from its
# "create [or replace] function" ("create trigger") to the next statement
# that begins a line (create, drop, alter, comment, grant, revoke, do,
# insert, update, delete, select).
superseded() {
    local file=$1 mutated=$2 dir
    [[ "$file" =~ (^|/)sql/[0-9]{4}_[^/]*\.sql$ ]] || return 0
    dir=$(dirname "$file")
    perl -e '
        my ($file, $mutated, $dir) = @ARGV;
        open my $a, "<", $file or die; my @a = <$a>;
        open my $b, "<", $mutated or die; my @b = <$b>;
        my $n = 0; $n++ while $n < @a && $n < @b && $a[$n] eq $b[$n];
        my ($fn, $again);
        for my $i (0 .. $n) {
            last if $i > $#a;
            if ($a[$i] =~ /^create\s+(?:or\s+replace\s+)?function\s+(cronq\.\w+)\s*\(/i) {
                $fn = $1; $again = qr/^create\s+(?:or\s+replace\s+)?function\s+\Q$fn\E\s*\(/mi;
            } elsif ($a[$i] =~ /^create\s+(?:constraint\s+)?trigger\s+(\w+)\b/i) {
                $fn = "trigger $1"; $again = qr/^create\s+(?:constraint\s+)?trigger\s+\Q$1\E\b/mi;
            } elsif ($a[$i] =~ /^(?:create|drop|alter|comment|grant|revoke|do|insert|update|delete|select)\b/i) { undef $fn }
        }
        exit 0 unless defined $fn;
        my ($num) = $file =~ m{(\d{4})_[^/]*\.sql$};
        for my $later (sort glob("$dir/[0-9][0-9][0-9][0-9]_*.sql")) {
            my ($m) = $later =~ m{(\d{4})_[^/]*\.sql$};
            next unless $m > $num;
            open my $l, "<", $later or die;
            local $/; my $text = <$l>;
            if ($text =~ $again) {
                (my $base = $later) =~ s{.*/}{};
                print "$fn, defined again by $base\n";
                exit 0;
            }
        }' "$file" "$mutated" "$dir"
}
# check_entry NAME FILE PERL: what makes the entry unusable, or nothing.
check_entry() {
    local out why
    out=$(mktemp)
    if ! mutant "$2" "$3" >"$out" 2>/dev/null; then
        echo "the substitution fails on $2"
    elif cmp -s "$2" "$out"; then
        echo "the substitution matched nothing in $2"
    elif why=$(superseded "$2" "$out") && [ -n "$why" ]; then
        echo "it changes $why: the database runs that one"
    fi
    rm -f "$out"
}

if [ "${1:-}" = --lint ]; then
    cd "$root" || exit 1
    ok=0; bad=0
    while IFS=$'\t' read -r -u 3 name file tests perl; do
        case $name in ''|'#'*) continue ;; esac
        why=$(check_entry "$name" "$file" "$perl")
        if [ -n "$why" ]; then echo "broken $name: $why"; bad=$((bad + 1)); else ok=$((ok + 1)); fi
    done 3<"$catalogue"
    echo "$ok entries apply, $bad broken"
    [ $bad = 0 ]
    exit
fi
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
    why=$(check_entry "$name" "$file" "$perl")
    if [ -n "$why" ]; then
        echo "broken $name: $why"
        broken=$((broken + 1))
        continue
    fi
    cp "$file" "$file.orig"
    MUTATION=$perl perl -0pi -e 'eval $ENV{MUTATION}; die $@ if $@' "$file"
    if ! make -j2 bin/cronq unit-bins >build.log 2>&1; then
        echo "broken $name: the mutant does not build"
        broken=$((broken + 1))
    elif CRONQ_MUTANT=$name TESTS="$tests" make test >"test-$name.log" 2>&1 </dev/null; then
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
