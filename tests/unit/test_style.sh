#!/usr/bin/env bash
# test_style — one brace style in every C file: the opening brace of an
# if/for/while/switch/else and of a struct, union or enum ends the line that
# opens it, never on a line of its own (only a function's body opens on the
# line after its parameters). One check per file, naming the lines at fault.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0; failed=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find lib cmd tests -name '*.[ch]'); do
    bad=$(perl -0ne 'while (/^(\t*)((?:if|else if|for|while|switch|else)\b[^\n]*|(?:typedef )?(?:struct|union|enum)\b[^\n;()=]*)\n\1\{\n/mg) { my $l = 1 + (substr($_, 0, $-[0]) =~ tr/\n//); print "$l " }' "$f")
    if [ -z "$bad" ]; then passed=$((passed + 1)); else
        echo "not ok $f: a brace on a line of its own after line(s) $bad"; failed=$((failed + 1))
    fi
done
echo "style: $passed passed, $failed failed"
[ "$failed" = 0 ]
