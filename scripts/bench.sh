#!/usr/bin/env bash
# bench.sh — cronq against reference commands, in one run on one throwaway
# PostgreSQL (PostgreSQL's default durability settings). Prints each figure
# next to its reference and their ratio. Timings on these shared machines
# are noisy: compare ratios within one run, never absolute numbers.
#   CRONQ    the binary (absolute path)
#   REPS     repetitions of short timings (default 15; the median is shown)
#   DRAIN_N  jobs drained (default 20000), ENQ_N jobs enqueued (default 100000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${CRONQ:?set CRONQ to the cronq binary}"
REPS=${REPS:-15}; DRAIN_N=${DRAIN_N:-20000}; ENQ_N=${ENQ_N:-100000}

tmp=$(mktemp -d /tmp/cronq-bench.XXXXXX); chmod 755 "$tmp"
trap '"$root/scripts/pg.sh" stop "$tmp/pg" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
eval "$("$root/scripts/pg.sh" start "$tmp/pg")"
PSQL="$PGBIN/psql"   # the real psql, not Debian's Perl wrapper
export CRONQ_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=postgres"
q() { "$PSQL" -XAtq -d "$CRONQ_DATABASE_URL" -c "$1"; }
"$CRONQ" migrate

now_ns() { date +%s%N; }
# time_ms CMD…: wall time of one run in ms (fractional).
time_ms() { local s e; s=$(now_ns); "$@" >/dev/null; e=$(now_ns); awk -v d=$((e - s)) 'BEGIN { printf "%.2f", d / 1e6 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# peak_rss_kb CMD…: the command's peak resident set, in KiB.
peak_rss_kb() { /usr/bin/time -f '%M' -o "$tmp/rss" "$@" >/dev/null 2>&1; cat "$tmp/rss"; }

printf '%-46s %14s %14s %8s\n' "benchmark" "cronq" "reference" "ratio"
line() { printf '%-46s %14s %14s %8s\n' "$@"; }

# (a) Wake cost: cronq run on an empty queue vs psql -c 'select 1'.
for _ in 1 2 3; do "$CRONQ" run; "$PSQL" -X -d "$CRONQ_DATABASE_URL" -c 'select 1' >/dev/null; done
a=(); b=()
for _ in $(seq "$REPS"); do
    a+=("$(time_ms "$CRONQ" run)")
    b+=("$(time_ms "$PSQL" -X -d "$CRONQ_DATABASE_URL" -c 'select 1')")
done
wa=$(printf '%s\n' "${a[@]}" | median); wb=$(printf '%s\n' "${b[@]}" | median)
line "wake, empty queue (median ms; ref psql)" "$wa" "$wb" "$(ratio "$wa" "$wb")"

# (b) Drain: one cronq run --batch 1000 over DRAIN_N noop jobs vs plain SQL
# in psql claiming 1000 rows with SKIP LOCKED and marking them done, per loop.
q "create schema ref; create table ref.jobs (id bigserial primary key, priority int not null default 0, run_at timestamptz not null default now(), status text not null default 'queued')"
q "create index on ref.jobs (priority, run_at, id) where status = 'queued'"; q "create index on ref.jobs (id) where status = 'running'"
drain_cronq() {
    q "truncate cronq.jobs, cronq.job_runs"
    seq 1 "$DRAIN_N" | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl
    q "vacuum analyze cronq.jobs"
    time_ms "$CRONQ" run --batch 1000
}
drain_ref() {
    q "truncate ref.jobs"; q "insert into ref.jobs (priority) select 0 from generate_series(1, $DRAIN_N)"; q "vacuum analyze ref.jobs"
    # Per loop, what any queue must do: claim (mark running) 1000 due rows,
    # then mark them done. No history, no fencing, no leases.
    for _ in $(seq $(( DRAIN_N / 1000 + 1 ))); do
        echo "with c as (select id from ref.jobs where status = 'queued' and run_at <= now() order by priority, run_at, id limit 1000 for update skip locked) update ref.jobs j set status = 'running' where j.id = any(array(select id from c));"
        echo "update ref.jobs set status = 'done' where status = 'running';"
    done >"$tmp/ref.sql"
    time_ms "$PSQL" -X -q -d "$CRONQ_DATABASE_URL" -f "$tmp/ref.sql"
}
a=(); b=()
for _ in 1 2 3; do a+=("$(drain_cronq)"); b+=("$(drain_ref)"); done
da=$(printf '%s\n' "${a[@]}" | median); db=$(printf '%s\n' "${b[@]}" | median)
ra=$(awk -v n="$DRAIN_N" -v t="$da" 'BEGIN { printf "%.0f", n / t * 1000 }')
rb=$(awk -v n="$DRAIN_N" -v t="$db" 'BEGIN { printf "%.0f", n / t * 1000 }')
line "drain $DRAIN_N noop (jobs/s; ref plain SQL)" "$ra" "$rb" "$(ratio "$ra" "$rb")"
eq=$(q "select count(*) from cronq.job_runs")
[ "$eq" = "$DRAIN_N" ] || echo "warning: drain wrote $eq job_runs rows, expected $DRAIN_N"

# (c) Enqueue: cronq enqueue --jsonl vs psql \copy of the same rows.
seq 1 "$ENQ_N" | awk '{ printf "{\"type\":\"noop\",\"queue\":\"q%d\",\"priority\":%d}\n", $1 % 10, $1 % 5 }' >"$tmp/jobs.jsonl"
seq 1 "$ENQ_N" | awk '{ printf "noop\t{}\tq%d\t%d\n", $1 % 10, $1 % 5 }' >"$tmp/jobs.tsv"
a=(); b=()
for _ in 1 2 3; do
    q "truncate cronq.jobs"
    s=$(now_ns); "$CRONQ" enqueue --jsonl <"$tmp/jobs.jsonl"; e=$(now_ns); a+=("$(( (e - s) / 1000000 ))")
    q "truncate cronq.jobs"
    s=$(now_ns); "$PSQL" -X -q -d "$CRONQ_DATABASE_URL" -c "\\copy cronq.jobs (type, payload, queue, priority) from '$tmp/jobs.tsv'"; e=$(now_ns); b+=("$(( (e - s) / 1000000 ))")
done
ea=$(printf '%s\n' "${a[@]}" | median); eb=$(printf '%s\n' "${b[@]}" | median)
ja=$(awk -v n="$ENQ_N" -v t="$ea" 'BEGIN { printf "%.0f", n / t * 1000 }')
jb=$(awk -v n="$ENQ_N" -v t="$eb" 'BEGIN { printf "%.0f", n / t * 1000 }')
line "enqueue --jsonl $ENQ_N (jobs/s; ref \\copy)" "$ja" "$jb" "$(ratio "$ja" "$jb")"

# (d) Peak RSS of a drain, small and large.
rss() {
    q "truncate cronq.jobs, cronq.job_runs"
    seq 1 "$1" | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl
    peak_rss_kb "$CRONQ" run --batch 1000
}
r1=$(rss $((DRAIN_N / 10))); r2=$(rss "$DRAIN_N")
line "peak RSS (KiB): $DRAIN_N jobs vs $((DRAIN_N / 10)) jobs" "$r2" "$r1" "$(ratio "$r2" "$r1")"
# (e) Cron engine: fire times per second from `schedule next` (no database).
for expr in '*/5 * * * *' '0 0 1 1 *'; do
    n=100000; [ "$expr" = '0 0 1 1 *' ] && n=5000
    t=$(time_ms "$CRONQ" schedule next "$expr" --from 2026-01-01T00:00:00Z --count $n)
    line "schedule next '$expr' (fire times/s)" "$(awk -v n=$n -v t="$t" 'BEGIN { printf "%.0f", n / t * 1000 }')" "-" "-"
done

# (f) Idle wake as schedules grow (none due): should stay flat.
q "truncate cronq.jobs, cronq.job_runs"
base=""
for n in 10 100 1000 10000; do
    q "delete from cronq.schedules"
    q "insert into cronq.schedules (name, cron, type, next_run_at) select 's' || i, '0 0 1 1 *', 'noop', now() + interval '30 days' from generate_series(1, $n) i"
    q "vacuum analyze cronq.schedules"
    a=()
    for _ in $(seq "$REPS"); do a+=("$(time_ms "$CRONQ" run)"); done
    w=$(printf '%s\n' "${a[@]}" | median)
    [ -n "$base" ] || base=$w
    line "wake with $n schedules, none due (ms; ref 10)" "$w" "$base" "$(ratio "$w" "$base")"
done

echo "date: $(date -u +%F), $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{ print $3 }')"
