#!/usr/bin/env bash
# test_fuzz_compiles — the libFuzzer targets (tests/fuzz/, built by
# `make fuzz` with clang) still compile against lib/'s headers, with the
# project's warnings, so that a change of an interface cannot leave them
# behind until someone fuzzes. One check per target.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0; failed=0
for f in tests/fuzz/fuzz_*.c; do
    if out=$(${CC:-cc} -fsyntax-only -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE -Wall -Wextra -Werror \
            -Ilib $(pkg-config --cflags libpq jansson 2>/dev/null) "$f" 2>&1); then
        passed=$((passed + 1))
    else
        echo "not ok $f does not compile: $(head -n 3 <<<"$out" | tr '\n' ' ')"; failed=$((failed + 1))
    fi
done
echo "fuzz_compiles: $passed passed, $failed failed"
[ "$failed" = 0 ]
