#!/usr/bin/env bash
# Crashes: a loop kill -9s a random runner every few hundred milliseconds
# while others drain sleep and sql jobs, for 60 s (10 min under `make soak`).
# Then: every job ends succeeded (or dead), every attempt — the lost ones
# as lease_expired — has its job_runs row, and nothing stays running.
. "$(dirname "$0")/lib.sh"
migrate
DURATION=${CRASH_SECONDS:-60}
[ -n "${SOAK:-}" ] && DURATION=600
JOBS=$(( DURATION * 15 ))

q "create table effects (n int primary key)"
{
    seq 1 "$JOBS" | awk '{ if ($1 % 2) printf "{\"type\":\"sleep\",\"payload\":{\"seconds\":0.%d},\"max_attempts\":50}\n", 1 + $1 % 4;
                           else printf "{\"type\":\"sql\",\"payload\":{\"sql\":\"insert into effects values (%d) on conflict do nothing\"},\"max_attempts\":50}\n", $1 }'
} | "$CRONQ" enqueue --jsonl

pids=()
runner() {  # SLOT: start a runner in that slot
    "$CRONQ" run --lease 2s --batch 2 --linger "${DURATION}s" --poll 200ms >/dev/null 2>>"$T_DIR/runners.err" &
    pids[$1]=$!
}
for i in 0 1 2 3; do runner $i; done
kills=0
end=$(( $(date +%s) + DURATION ))
while [ "$(date +%s)" -lt "$end" ]; do
    sleep "0.$(( 2 + RANDOM % 4 ))"
    victim=$(( RANDOM % ${#pids[@]} ))
    kill -9 "${pids[$victim]}" 2>/dev/null && kills=$((kills + 1))
    wait "${pids[$victim]}" 2>/dev/null
    runner $victim
done
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
wait
# Let the last leases expire, then drain what is left.
sleep 2.5
for _ in 1 2 3 4 5; do
    "$CRONQ" run --batch 50 --concurrency 2 2>>"$T_DIR/runners.err"
    [ "$(q "select count(*) from cronq.jobs where status not in ('succeeded', 'dead')")" = 0 ] && break
    sleep 2.5
done
lost=$(q "select count(*) from cronq.job_runs where outcome = 'lease_expired'")
echo "  crash: $JOBS jobs, ${DURATION}s, $kills runners killed, $lost attempts rescued as lease_expired"
check "runners were killed ($kills)" [ "$kills" -ge $(( DURATION * 2 )) ]
eq "every job ended succeeded" "$JOBS|$JOBS" "$(q "select count(*), count(*) filter (where status = 'succeeded') from cronq.jobs")"
eq "nothing running after the leases expired" 0 "$(q "select count(*) from cronq.jobs where status = 'running'")"
eq "every attempt has its job_runs row (given-back claims excepted)" 0 \
    "$(q "select count(*) from cronq.jobs j where j.attempts <> (select count(*) from cronq.job_runs r where r.job_id = j.id and r.outcome not in ('given_back', 'lease_lost'))")"
eq "each job succeeded exactly once" "$JOBS" "$(q "select count(*) from cronq.job_runs where outcome = 'succeeded'")"
eq "every sql effect happened" "$(( JOBS / 2 ))" "$(q "select count(*) from effects")"
check "some attempts were lost and rescued ($lost)" [ "$lost" -gt 0 ]

done_testing
