#!/usr/bin/env bash
# demo.sh — run cronq for real. With no database configured, starts (or
# reuses) a PostgreSQL cluster kept in .demo/ under the checkout, migrates,
# enqueues a few jobs (some succeed, one fails and retries), runs them, and
# shows the result. `scripts/demo.sh stop` (make demo-stop) stops the cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.demo"
CRONQ=${CRONQ:-$root/bin/cronq}

if [ "${1:-}" = stop ]; then
    "$root/scripts/pg.sh" stop "$dir" && echo "demo cluster stopped (data kept in .demo/; rm -rf .demo to drop it)"
    exit 0
fi

PSQL="$(pg_config --bindir)/psql"
if [ -z "${CRONQ_DATABASE_URL:-}${DATABASE_URL:-}" ]; then
    if [ -f "$dir/env" ] && (. "$dir/env"; "$PSQL" -XAtqc 'select 1' >/dev/null 2>&1); then
        echo "== reusing the demo cluster in .demo/"
    else
        echo "== starting a throwaway PostgreSQL in .demo/"
        "$root/scripts/pg.sh" start "$dir" >"$dir.env.tmp" 2>/dev/null || { mkdir -p "$dir"; "$root/scripts/pg.sh" start "$dir" >"$dir.env.tmp"; }
        mv "$dir.env.tmp" "$dir/env"
    fi
    . "$dir/env"
    export CRONQ_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=postgres"
fi

# Show each command as one would type it, then run it.
run() {
    local a out='$ cronq'
    for a in "$@"; do
        if [[ "$a" =~ ^[A-Za-z0-9_./:=@,+-]+$ ]]; then out="$out $a"; else out="$out '${a//\'/\'\\\'\'}'"; fi
    done
    echo "$out"
    "$CRONQ" "$@"
}
echo "== migrate"
run migrate --verbose
echo "== enqueue"
run enqueue noop
run enqueue sleep '{"seconds": 0.5}' --queue reports
run enqueue fail '{"message": "the printer is on fire", "code": "printer"}' --max-attempts 3
run enqueue noop --key "demo:$(date -u +%F)"
run enqueue noop --key "demo:$(date -u +%F)" || true
printf '{"type":"noop","priority":-1}\n{"type":"sleep","payload":{"seconds":0.2},"queue":"reports"}\n' >"${TMPDIR:-/tmp}/cronq-demo.jsonl"
echo "\$ cronq enqueue --jsonl < jobs.jsonl"
"$CRONQ" enqueue --jsonl --verbose <"${TMPDIR:-/tmp}/cronq-demo.jsonl"
echo "== a schedule (every 5 minutes, Paris time; every cronq run enqueues what is due)"
run schedule add demo-report '*/5 * * * *' sleep '{"seconds": 0.1}' --tz Europe/Paris --replace
run schedule next '*/5 * * * *' --tz Europe/Paris --count 3
echo "== run (what cron does every minute; --verbose shows each outcome)"
run run --verbose --concurrency 2
echo "== the jobs"
"$PSQL" -X -d "$CRONQ_DATABASE_URL" -c "select id, type, queue, status, attempts, run_at - now() as retry_in, last_error from cronq.jobs order by id"
echo "== their attempts"
"$PSQL" -X -d "$CRONQ_DATABASE_URL" -c "select job_id, attempt, outcome, error_code, duration from cronq.job_runs order by id"
echo "== status"
run status
cat <<MSG
The fail job retries with backoff: run "cronq run" again once retry_in has passed.
Connect:   $PSQL "$CRONQ_DATABASE_URL"
Run again: CRONQ_DATABASE_URL="$CRONQ_DATABASE_URL" $CRONQ run --verbose
Stop:      make demo-stop
MSG
