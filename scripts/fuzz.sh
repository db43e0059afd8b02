#!/usr/bin/env bash
# fuzz.sh SECONDS FILE… — build each libFuzzer target (tests/fuzz/fuzz_NAME.c)
# with clang against the library sources, and run it for SECONDS over a
# scratch copy of its seed corpus tests/fuzz/corpus/NAME. Crashes are kept in
# tests/fuzz/crashes/ (ignored by git) and fail the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=$1; shift
command -v clang >/dev/null || CRONQ_EXTRA_DEPS=clang "$root/scripts/deps.sh"
out="$root/build/fuzz"; mkdir -p "$out" "$root/tests/fuzz/crashes"
libs=$(find "$root/lib" -name '*.c' | sort)
status=0
for src in "$@"; do
    name=$(basename "$src" .c); short=${name#fuzz_}
    clang -g -O1 -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
        -I"$root/lib" -I"$root/build/release" $(pkg-config --cflags libpq jansson) \
        "$src" $libs "$root/build/release/sql_embed.c" -o "$out/$name" $(pkg-config --libs libpq jansson) -lpthread -lm
    corpus=$(mktemp -d); cp -r "$root/tests/fuzz/corpus/$short/." "$corpus/" 2>/dev/null || true
    echo "== $name for ${secs}s"
    if ! "$out/$name" -max_total_time="$secs" -print_final_stats=1 \
            -artifact_prefix="$root/tests/fuzz/crashes/$short-" "$corpus" 2>"$out/$name.log"; then
        status=1; tail -n 30 "$out/$name.log"
    fi
    grep -E 'stat::number_of_executed_units|Done' "$out/$name.log" | tail -n 2
    rm -rf "$corpus"
done
exit $status
