#!/usr/bin/env bash
# test_layers — the include graph against the layer order of
# docs/architecture.md: a module of lib/ includes headers of its own module
# and of modules below it, never of one above it or beside it; lib/ never
# includes cmd/. One check per lib file, named after it.
set -uo pipefail
cd "$(dirname "$0")/../.."

# Lowest first. Modules on one line sit side by side: neither includes the other.
layers=(
    "util"
    "time"
    "pg"
    "schema"
    "queue"
    "tasks"
    "sched"
    "run report"
)
declare -A rank
for i in "${!layers[@]}"; do
    for m in ${layers[$i]}; do rank[$m]=$i; done
done

# allowed MODULE DEP: may a file of MODULE include a header of DEP?
allowed() {
    [ "$1" = "$2" ] || { [ -n "${rank[$2]+x}" ] && [ "${rank[$2]}" -lt "${rank[$1]}" ]; }
}

passed=0; failed=0
for f in $(find lib -name '*.[ch]' | sort); do
    mod=$(cut -d/ -f2 <<<"$f")
    bad=""
    if [ -z "${rank[$mod]+x}" ]; then
        bad=" nothing: module $mod has no layer"
    else
        while read -r inc; do
            dep=${inc%%/*}
            [ "$dep" = "$inc" ] && { bad+=" \"$inc\" (not lib/MODULE/…)"; continue; }
            allowed "$mod" "$dep" || bad+=" \"$inc\" ($dep is not below $mod)"
        done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
    fi
    if [ -z "$bad" ]; then passed=$((passed + 1)); else
        echo "not ok $f includes$bad"; failed=$((failed + 1))
    fi
done
# The checker itself: a module above reaching down passes, reaching up fails.
for pair in "queue:util/buf.h:ok" "util:queue/jobs.h:bad" "run:report/stats.h:bad" "sched:time/cron.h:ok" "queue:nowhere/x.h:bad" "pg:pg/pg.h:ok"; do
    IFS=: read -r mod inc want <<<"$pair"
    got=bad; allowed "$mod" "${inc%%/*}" && got=ok
    if [ "$got" = "$want" ]; then passed=$((passed + 1)); else
        echo "not ok the order says $mod including $inc is $got, expected $want"; failed=$((failed + 1))
    fi
done
echo "layers: $passed passed, $failed failed"
[ "$failed" = 0 ]
