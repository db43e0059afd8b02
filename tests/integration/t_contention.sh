#!/usr/bin/env bash
# Contention: 8 runners with --concurrency 2 drain N sql jobs, each writing
# its number into an effects table with a unique constraint: no duplicate
# effect, no job lost, exactly one successful attempt each. Then the same
# through PgBouncer in transaction-pooling mode. N is 3,000 here and 50,000
# under `make soak` (SOAK=1).
. "$(dirname "$0")/lib.sh"
migrate
N=${CONTENTION_JOBS:-3000}
[ -n "${SOAK:-}" ] && N=50000

drain() {  # LABEL CONNINFO
    local label=$1 db=$2 start secs
    q "delete from cronq.jobs; delete from cronq.job_runs; drop table if exists effects; create table effects (n int primary key)"
    seq 1 "$N" | awk '{ printf "{\"type\":\"sql\",\"payload\":{\"sql\":\"insert into effects values (%d)\"}}\n", $1 }' \
        | "$CRONQ" enqueue --jsonl --db "$db"
    start=$(date +%s%N)
    for i in $(seq 1 8); do
        "$CRONQ" run --db "$db" --concurrency 2 --batch 20 >"$T_DIR/$label-$i.out" 2>&1 &
    done
    wait
    secs=$(awk -v d=$(( $(date +%s%N) - start )) 'BEGIN { printf "%.1f", d / 1e9 }')
    echo "  $label: $N jobs, 8 runners x 2 workers, ${secs}s, $(awk -v n=$N -v s=$secs 'BEGIN { printf "%.0f", n / s }') jobs/s"
    eq "$label: every effect once" "$N|$N|1|$N" "$(q "select count(*), count(distinct n), min(n), max(n) from effects")"
    eq "$label: no job lost, each succeeded" "$N|$N" "$(q "select count(*), count(*) filter (where status = 'succeeded') from cronq.jobs")"
    eq "$label: exactly one attempt each" "$N|1|1" "$(q "select count(*), min(attempts), max(attempts) from cronq.jobs")"
    eq "$label: one run each, all succeeded" "$N|$N" "$(q "select count(*), count(distinct job_id) from cronq.job_runs where outcome = 'succeeded'")"
    eq "$label: nothing else in the history" 0 "$(q "select count(*) from cronq.job_runs where outcome <> 'succeeded'")"
    eq "$label: runners silent" "" "$(cat "$T_DIR/$label"-*.out)"
    check "$label: the work was shared" [ "$(q "select count(distinct worker) from cronq.job_runs")" -ge 8 ]
}

drain direct "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=postgres"

# A database whose transactions default to SERIALIZABLE (a DBA's choice):
# cronq's own sessions stay READ COMMITTED, what its claims are written
# for. Before, runners side by side failed each other's claims (40001)
# and exited 75. noop jobs: an sql job's session is its author's, and
# runs under the author's settings.
q "alter database \"$PGDATABASE\" set default_transaction_isolation = 'serializable'"
q "delete from cronq.jobs; delete from cronq.job_runs"
seq 1 "$N" | awk '{ print "{\"type\":\"noop\"}" }' | "$CRONQ" enqueue --jsonl >/dev/null
for i in $(seq 1 8); do
    "$CRONQ" run --concurrency 2 --batch 20 >"$T_DIR/serializable-$i.out" 2>&1 &
done
wait
eq "serializable by default: every job succeeded, once" "$N|$N|1" \
    "$(q "select count(*), count(*) filter (where status = 'succeeded'), max(attempts) from cronq.jobs")"
eq "serializable by default: runners silent" "" "$(cat "$T_DIR"/serializable-*.out)"
q "alter database \"$PGDATABASE\" reset default_transaction_isolation"

# PgBouncer in transaction-pooling mode, on 127.0.0.1, started here.
if ! command -v pgbouncer >/dev/null; then
    echo "  pgbouncer: not installed (scripts/deps.sh installs it)"; fail "pgbouncer missing"
else
    pgbouncer_start transaction '"postgres" ""'
    drain pgbouncer "host=127.0.0.1 port=$bport dbname=$PGDATABASE user=postgres"
    # Schedules and migrate work through the pooler too.
    "$CRONQ" migrate --db "host=127.0.0.1 port=$bport dbname=$PGDATABASE user=postgres"
    eq "pgbouncer: migrate" 0 $?
    pgbouncer_stop
fi

# 400 quick exec jobs, 4 runners x 2 workers: every supervisor's report is
# read, even when it reports and exits between two polls of the runner (1
# job in ~200 failed "ended without a report" before: a race, so a run of
# 400 catches it most of the time, never falsely).
exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"; chmod 755 "$T_DIR" "$exec_dir"
printf '#!/bin/sh\nexit 0\n' >"$exec_dir/quick"; chmod 755 "$exec_dir/quick"
q "grant cronq_exec to postgres" 2>/dev/null
q "delete from cronq.jobs; delete from cronq.job_runs"
seq 1 400 | awk '{ print "{\"type\":\"exec\",\"payload\":{\"command\":\"quick\"}}" }' | "$CRONQ" enqueue --jsonl
for i in 1 2 3 4; do "$CRONQ" run --concurrency 2 --exec-dir "$exec_dir" >"$T_DIR/exec-$i.out" 2>&1 & done
wait
eq "400 exec jobs: each succeeded at its first attempt" "400|400|1" \
    "$(q "select count(*), count(*) filter (where status = 'succeeded'), max(attempts) from cronq.jobs")"
eq "400 exec jobs: no failed attempt" "" "$(q "select string_agg(distinct coalesce(error, outcome), '; ') from cronq.job_runs where outcome <> 'succeeded'")"

done_testing
