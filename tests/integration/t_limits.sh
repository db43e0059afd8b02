#!/usr/bin/env bash
# Limits (flow control): --max-running caps a key's running jobs across
# runner processes, also when runners are killed mid-way (the count
# recovers through the rescue, nothing is lost); --rate caps the starts of
# any window; a job's own limit key is held like its queue and type (limits
# and pauses); the walk passes the jobs of a full key (no head-of-line
# block); a runner whose claim finds only jobs waiting for room waits for
# them, until --max-runtime. Who may: cronq_admin and the runner set
# limits, a cronq_user reads them and can neither set them nor hold the
# claims back by locking them. Bad input is refused with nothing written.
# Judged by rows (job_runs intervals, samples of the running count), not
# by messages.
. "$(dirname "$0")/lib.sh"

team_cluster app oncall
q "grant cronq_user to app; grant cronq_admin to oncall" >/dev/null

as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2" 2>&1; }
run() { PGUSER=cronq_runner "$CRONQ" run "$@"; }
rq() { PGUSER=cronq_runner q "$1"; }
limits() { q "select coalesce(string_agg(concat_ws('|', key, max_running, rate, per), ',' order by key), '')
              from cronq.limits"; }
# enqueue_n N JSON: N jobs from the same JSONL line, as the runner.
enqueue_n() {
    local i
    for i in $(seq 1 "$1"); do printf '%s\n' "$2"; done | PGUSER=cronq_runner "$CRONQ" enqueue --jsonl >/dev/null \
        || fail "enqueue $1 jobs"
}
# sampler FILE: the most jobs running at once of type sleep, sampled every
# 20 ms into FILE until killed.
sampler() {
    local max=0 n
    while :; do
        n=$(rq "select count(*) from cronq.jobs where status = 'running' and type = 'sleep'")
        [ "$n" -gt "$max" ] && { max=$n; echo "$max" >"$1"; }
        sleep 0.02
    done
}
# overlap [WHERE]: the most job_runs intervals (of the jobs WHERE says)
# that cover one instant. The times are the database's clock at the claim
# plus the worker's own count from the claim's answer: never later than
# the moments they stand for, a start never before its claim.
overlap() {
    rq "select coalesce(max(n), 0) from (select (select count(*) from cronq.job_runs b
            where b.outcome <> 'given_back' ${1:+and b.job_id in (select id from cronq.jobs where $1)}
              and b.started_at <= a.started_at and b.finished_at > a.started_at) n
        from cronq.job_runs a where a.outcome <> 'given_back'
        ${1:+and a.job_id in (select id from cronq.jobs where $1)}) x"
}

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null

# --- bad input: refused, nothing written ----------------------------------
as cronq_runner limit type:sleep --max-running 0
expect_rc_err "--max-running 0" 64 'invalid value "0" for --max-running'
as cronq_runner limit type:sleep --max-running -3
expect_rc_err "a negative limit" 64 'invalid value "-3" for --max-running'
as cronq_runner limit type:sleep --rate 0/1s
expect_rc_err "--rate 0/1s" 64 'invalid value "0" for --rate'
as cronq_runner limit type:sleep --rate 5/0s
expect_rc_err "--rate 5/0s" 64 'the window is a whole number of seconds from 1s to 1d'
n=$(q "select count(*) from cronq.limits")
as cronq_runner limit type:sleep --rate 5/1500ms
expect_rc_err "--rate 5/1500ms: not whole seconds (it would be shown as 5/2s)" 64 'the window is a whole number of seconds'
out=$(q "select cronq.set_limit('type:sleep', rate => 5, per => interval '1.5 seconds')" 2>&1)
eq "SQL: a window of 1.5 s refused too, nothing written" "$n|t" \
    "$(q "select count(*) from cronq.limits")|$(case $out in *limits_per_whole_seconds*) echo t;; *) echo "f: $out";; esac)"
as cronq_runner limit type:sleep --rate 5
expect_rc_err "--rate without a window" 64 'a rate is N/DURATION'
as cronq_runner limit sleep --max-running 2
expect_rc_err "a key without a kind" 64 'sleep is not a key'
as cronq_runner limit type: --max-running 2
expect_rc_err "a key naming nothing" 64 'type: names nothing'
as cronq_runner limit type:sleep --max-running 2 --clear
expect_rc_err "--clear with a limit" 64 '--clear cannot be used with --max-running or --rate'
eq "nothing written by the refused commands" "" "$(limits)"
as cronq_runner enqueue noop --limit-key queue:default
expect_rc_err "a limit key that is a queue's" 65 'cannot be a limit key'
as cronq_runner enqueue noop --limit-key tenant
expect_rc_err "a limit key without a prefix" 65 'tenant is not a key'
cronq_in '{"type":"noop"}
{"type":"noop","limit_key":"type:x"}
' enqueue --jsonl
eq "JSONL: a bad limit key refuses the whole input" "65|0" "$RC|$(q "select count(*) from cronq.jobs")"
eq "SQL: a bad limit key is refused by cronq.enqueue" "22023|0" \
    "$(asq app "select cronq.enqueue('noop', limit_key => 'type:x')" | grep -o 'limit key: type:x cannot' >/dev/null && echo 22023)|$(q "select count(*) from cronq.jobs")"

# --- who may -----------------------------------------------------------------
as app limit type:sleep --max-running 1
eq "a cronq_user may not set a limit (78), nothing written" "78|" "$RC|$(limits)"
as oncall limit type:sleep --max-running 2
eq "cronq_admin sets one" "0|type:sleep|2" "$RC|$(limits)"
as oncall limit type:sleep --rate 100/1m
eq "a second option keeps the first" "type:sleep|2|100|00:01:00" "$(limits)"
as app limit list
match "a cronq_user reads the limits" 'type:sleep +2 +0 +100/1m +0 +2 +oncall' "$OUT"
as app limit type:sleep --clear
eq "a cronq_user may not clear one (78), the row stays" "78|type:sleep|2|100|00:01:00" "$RC|$(limits)"
asq app "update cronq.limits set max_running = 1000" >/dev/null
asq app "delete from cronq.limits" >/dev/null
asq app "insert into cronq.limits (key, max_running) values ('queue:x', 5)" >/dev/null
eq "nor by writing the table" "type:sleep|2|100|00:01:00" "$(limits)"
# Holding the limit's row locked would hold back every claim of the key: a
# cronq_user cannot (an advisory lock would be anyone's to take). Its
# session tries every way, then stays open; the runner's claim of the
# limited key goes on meanwhile.
as cronq_runner enqueue sleep '{"seconds": 0}'
PGUSER=app "$PSQL" -Xq >"$T_DIR/lockers.out" 2>&1 <<'EOF' &
begin;
select key from cronq.limits for no key update;
rollback;
begin;
select key from cronq.limits for key share;
rollback;
begin;
select * from cronq.limit_room(null, true);
rollback;
begin;
select * from cronq.limit_room('{type:sleep}', true);
select pg_sleep(4);
commit;
EOF
locker=$!
sleep 1
start=$(date +%s%3N)
run 2>"$T_DIR/locked.err"
took=$(( $(date +%s%3N) - start ))
eq "the runner claims the limited key meanwhile" "1" "$(q "select count(*) from cronq.jobs where status = 'succeeded'")"
check "without waiting for the cronq_user's session (${took} ms)" [ "$took" -lt 2000 ]
wait $locker
eq "each of its locking attempts was refused" "4" "$(grep -c 'permission denied' "$T_DIR/lockers.out")"
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as oncall limit type:sleep --rate 100/1m
as cronq_runner limit type:sleep --clear -v
eq "the runner (the tables' owner) clears" "0|type:sleep limits cleared|" "$RC|$(told)|$(limits)"

# --- max-running across 4 processes x 4 workers -------------------------------
as cronq_runner limit type:sleep --max-running 2
enqueue_n 200 '{"type":"sleep","payload":{"seconds":0.05}}'
sampler "$T_DIR/max1" &
sampler_pid=$!
pids=()
for i in 1 2 3 4; do run --concurrency 4 2>"$T_DIR/run$i.err" & pids+=($!); done
rcs=""
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
kill $sampler_pid; wait $sampler_pid 2>/dev/null
eq "4 runners x 4 workers end 0" "0000" "$rcs"
eq "all 200 done, once each" "200|200" \
    "$(q "select count(*) filter (where status = 'succeeded'), (select count(*) from cronq.job_runs) from cronq.jobs")"
eq "never more than 2 running (sampled)" "2" "$(cat "$T_DIR/max1" 2>/dev/null || echo 0)"
eq "never more than 2 running (job_runs intervals)" "2" "$(overlap)"

# --- the same with runners killed mid-way: the rescue recovers the count -------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
enqueue_n 60 '{"type":"sleep","payload":{"seconds":0.1}}'
rm -f "$T_DIR/max2"
sampler "$T_DIR/max2" &
sampler_pid=$!
pids=()
# (the binary itself in the background, so that $! is the runner's pid)
for i in 1 2 3 4; do
    PGUSER=cronq_runner "$CRONQ" run --concurrency 4 --lease 2s 2>"$T_DIR/kill$i.err" & pids+=($!)
done
ten_done() { [ "$(q "select count(*) >= 10 from cronq.jobs where status = 'succeeded'")" = t ]; }
check "the drain is under way" poll 20 ten_done
kill -9 "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
stranded=$(q "select count(*) from cronq.jobs where status = 'running'")
# Runners of the next minutes: the stranded jobs count until their lease
# is rescued, then run again.
pids=()
for i in 1 2; do run --concurrency 4 --lease 2s 2>"$T_DIR/after$i.err" & pids+=($!); done
sleep 2.5
run --concurrency 4 --lease 2s 2>"$T_DIR/after3.err" & pids+=($!)
rcs=""
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
rescued_all() { [ "$(q "select count(*) from cronq.jobs where status <> 'succeeded'")" = 0 ]; }
poll 20 rescued_all || run --concurrency 4 --lease 2s 2>/dev/null
kill $sampler_pid; wait $sampler_pid 2>/dev/null
check "some jobs were stranded running by the kill ($stranded)" [ "$stranded" -gt 0 ]
eq "after kill -9 and rescue: all 60 succeeded, nothing lost" "60|0" \
    "$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status <> 'succeeded') from cronq.jobs")"
check "the stranded ones were rescued (lease_expired rows)" \
    [ "$(q "select count(*) from cronq.job_runs where outcome = 'lease_expired'")" -gt 0 ]
max2=$(cat "$T_DIR/max2" 2>/dev/null || echo 0)
check "never more than 2 running, killed runners' jobs included (sampled: $max2)" [ "$max2" -le 2 ]
eq "never more than 2 running (intervals of the finished attempts)" "t" "$(q "select $(overlap "true") <= 2")"
as cronq_runner limit type:sleep --clear

# --- rate: 10 per 2 s over 60 quick jobs --------------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit type:noop --rate 10/2s
enqueue_n 60 '{"type":"noop"}'
start=$(date +%s%3N)
pids=()
for i in 1 2; do run --concurrency 2 2>"$T_DIR/rate$i.err" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
took=$(( $(date +%s%3N) - start ))
eq "all 60 done" "60" "$(q "select count(*) from cronq.jobs where status = 'succeeded'")"
eq "starts in any 2 s window: never above 10" "t" \
    "$(q "select max(n) <= 10 from (select (select count(*) from cronq.job_runs b
          where b.started_at >= a.started_at and b.started_at < a.started_at + interval '2 seconds') n
          from cronq.job_runs a) x")"
check "the runners waited for room rather than ending (took ${took} ms, at least 10 s)" \
    [ "$took" -ge 10000 ]
as cronq_runner limit type:noop --clear

# --- a start is stamped after the wait for the limit's lock -----------------
# (the rate's log and started_at are the clock after the lock, not the
# claim's transaction start: a claim that waited would date its starts back
# into a window that was already full)
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit type:sleep --max-running 5
enqueue_n 1 '{"type":"sleep","payload":{"seconds":2}}'
"$PSQL" -XAtq -c "begin" -c "select 1 from cronq.limits where key = 'type:sleep' for update" \
    -c "select pg_sleep(1.5)" -c "select clock_timestamp()" -c "commit" >"$T_DIR/lock.out" 2>&1 &
locker=$!
check "the limit's row is locked" wait_for "the limit's row is locked" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%pg_sleep(1.5)%' and pid <> pg_backend_pid())"
run --concurrency 1 2>"$T_DIR/stamp.err" &
runner=$!
wait $locker
check "the job runs" wait_for "the job runs" 10 "select status = 'running' from cronq.jobs"
eq "started_at is after the lock's release" t \
    "$(q "select started_at >= '$(tail -n 1 "$T_DIR/lock.out")' from cronq.jobs")"
wait $runner
as cronq_runner limit type:sleep --clear

# --- a job's own limit key; the walk passes a full key ------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit tenant:1 --max-running 1
enqueue_n 30 '{"type":"sleep","payload":{"seconds":0.1},"limit_key":"tenant:1","priority":-1}'
enqueue_n 6 '{"type":"sleep","payload":{"seconds":0.3},"limit_key":"tenant:2"}'
run --concurrency 6 --batch 5 2>"$T_DIR/tenant.err"
eq "the tenants' run ends 0 with every job done" "0|36" "$?|$(q "select count(*) from cronq.jobs where status = 'succeeded'")"
eq "tenant:1's jobs never overlap" "1" "$(overlap "limit_key = 'tenant:1'")"
check "tenant:2's ran side by side meanwhile" [ "$(overlap "limit_key = 'tenant:2'")" -ge 3 ]
eq "not behind tenant:1's backlog (first in order, longer than a batch): done before its 10th started" "t" \
    "$(q "select (select max(r.finished_at) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id
                  where j.limit_key = 'tenant:2')
                 < (select r.started_at from cronq.job_runs r join cronq.jobs j on j.id = r.job_id
                    where j.limit_key = 'tenant:1' order by r.started_at offset 9 limit 1)")"
as cronq_runner limit tenant:1 --clear

# --- a pause of a limit key ---------------------------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner enqueue noop --limit-key tenant:42
as cronq_runner enqueue noop --limit-key tenant:43
as oncall pause tenant:42 -v
eq "pause a limit key" "0|tenant:42 paused" "$RC|$(told)"
run
eq "its job is held, the other runs" "tenant:42|queued,tenant:43|succeeded" \
    "$(q "select string_agg(limit_key || '|' || status, ',' order by limit_key) from cronq.jobs")"
as oncall resume tenant:42
run
eq "resumed, it runs" "0" "$(q "select count(*) from cronq.jobs where status <> 'succeeded'")"
asq app "select cronq.enqueue('noop', limit_key => 'tenant:app')" >/dev/null
eq "cronq.enqueue takes a limit key" "1" "$(q "select count(*) from cronq.jobs where limit_key = 'tenant:app'")"

# --- a waiting runner rescues a dead runner's lease ---------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit tenant:s --max-running 1
as cronq_runner enqueue sleep '{"seconds": 30}' --limit-key tenant:s --max-attempts 1
as cronq_runner enqueue noop --limit-key tenant:s
PGUSER=cronq_runner "$CRONQ" run --lease 2s 2>"$T_DIR/dead.err" &
dead=$!
sleeping() { [ "$(q "select count(*) from cronq.jobs where status = 'running'")" = 1 ]; }
check "the first runner runs the long job" poll 10 sleeping
kill -9 $dead; wait $dead 2>/dev/null
start=$(date +%s%3N)
run --lease 2s --max-runtime 20s 2>"$T_DIR/waiter.err"
took=$(( $(date +%s%3N) - start ))
eq "the waiting runner rescued the dead one's job and ran the other" "dead|succeeded" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs")"
check "as soon as the lease ran out, not at --max-runtime (${took} ms)" [ "$took" -lt 10000 ]
as cronq_runner limit tenant:s --clear

# --- the rate's starts outlive a purge of the history -------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit type:noop --rate 2/1h
enqueue_n 4 '{"type":"noop"}'
run --max-runtime 1s 2>/dev/null
as cronq_runner purge --older-than 0s --status succeeded
eq "two ran, then the history was purged" "0|2" "$RC|$(q "select count(*) from cronq.jobs")"
run --max-runtime 1s 2>/dev/null
eq "no more start within the hour: the limit's log remembers" "0|2" \
    "$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'queued') from cronq.jobs")"
as cronq_runner limit type:noop --clear

# --- waiting for room ends at --max-runtime -----------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner limit type:noop --rate 1/1d
enqueue_n 3 '{"type":"noop"}'
start=$(date +%s%3N)
run --max-runtime 2s 2>"$T_DIR/held.err"
rc=$?
took=$(( $(date +%s%3N) - start ))
eq "a held backlog: the run ends 0, one job run" "0|1" "$rc|$(q "select count(*) from cronq.jobs where status = 'succeeded'")"
check "it waited for room until --max-runtime, not longer (${took} ms)" \
    [ "$took" -ge 1800 -a "$took" -lt 6000 ]

# --- status, check and Prometheus show a full limit ---------------------------
as cronq_runner status --json
eq "status: the limit, full, its starts" "type:noop|1|true|0" \
    "$(q "select l->>'key', l->>'started', l->>'full', l->>'room' from json_array_elements('$OUT'::json->'limits') l")"
as cronq_runner check
match "check names the full limit" '1 limit full \(type:noop\).*limits_full=1' "$OUT"
as cronq_runner status --prometheus
match "prometheus: cronq_limit_room is 0" 'cronq_limit_room\{key="type:noop"\} 0' "$OUT"
as cronq_runner status
match "status text: the limit's line" 'Limits: +type:noop 1/1 started in 1d \(full\)' "$OUT"
as cronq_runner limit type:noop --clear

# --- a limit made mid-drain: the claims after it obey it ----------------------
# While no limit or pause is in effect a worker's claims leave out the
# flow-control steps (claim_plain.sql); their guard must see a limit made
# meanwhile and hand over to the full claim, which obeys it.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
eq "no limit, no pause in effect before" "0|0" "$(q "select (select count(*) from cronq.limits), (select count(*) from cronq.pauses)")"
enqueue_n 30 '{"type":"sleep","payload":{"seconds":0.15}}'
enqueue_n 10 '{"type":"noop"}'
# (--max-runtime: the sleeps the rate holds would keep it waiting for room)
run --max-runtime 4s 2>"$T_DIR/midlimit.err" &
runner=$!
three_done() { [ "$(q "select count(*) >= 3 from cronq.jobs where status = 'succeeded'")" = t ]; }
check "the drain is under way, no limit in effect" poll 20 three_done
as cronq_runner limit type:sleep --rate 1/1h
# a job claimed before the limit committed may still start (within 0.15 s)
limited_at=$(q "select now() + interval '0.5 seconds'")
wait $runner
eq "the run ends 0" 0 $?
# (the plain claim that met the limit came back empty: the full claim
# after it, in the same run, took the jobs the limit does not hold)
eq "the same run went on with the jobs of other types" "10" \
    "$(q "select count(*) from cronq.jobs where type = 'noop' and status = 'succeeded'")"
eq "after the limit: one start at most, the rate's one" "t" \
    "$(q "select count(*) <= 1 from cronq.job_runs r join cronq.jobs j on j.id = r.job_id
          where j.type = 'sleep' and r.started_at > '$limited_at'")"
check "the rest wait, queued ($(q "select count(*) from cronq.jobs where status = 'queued'"))" \
    [ "$(q "select count(*) from cronq.jobs where status = 'queued'")" -ge 15 ]
as cronq_runner limit type:sleep --clear
# A limit that comes while a wake without limits runs, full with a job
# another runner holds: this wake's claims come back empty, and it waits
# for room (as it does for a limit it saw when it began) rather than end
# with jobs due; they run in this wake, one at a time, after the other's.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
PGUSER=cronq_runner "$CRONQ" enqueue --queue long sleep '{"seconds": 3}' >/dev/null
enqueue_n 3 '{"type":"sleep","queue":"q","payload":{"seconds":1}}'
run --queue long 2>"$T_DIR/long.err" &
other=$!
check "another runner runs the long job" wait_for "long" 20 "select status = 'running' from cronq.jobs where queue = 'long'"
run --queue q 2>"$T_DIR/waitroom.err" &
runner=$!
check "this wake runs its first job, no limit in effect" wait_for "first" 20 \
    "select count(*) = 1 from cronq.jobs where queue = 'q' and status = 'running'"
as cronq_runner limit type:sleep --max-running 1
wait $runner
eq "the run ends 0" 0 $?
wait $other
eq "every job of its queue ran in that wake (it waited for room)" "3|3" \
    "$(q "select count(*) filter (where status = 'succeeded'), (select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.queue = 'q') from cronq.jobs where queue = 'q'")"
eq "the last two started after the long one ended" "2" \
    "$(q "select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id, cronq.jobs l
          where j.queue = 'q' and l.queue = 'long' and r.started_at >= l.finished_at")"
as cronq_runner limit type:sleep --clear
# A limit being added holds every claim back until it commits, the plain
# ones too (their guard reads cronq.limits under ROW SHARE): none may take
# jobs, unaware of the limit, while claims that see it count the running.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
enqueue_n 60 '{"type":"sleep","payload":{"seconds":0.2}}'
run --concurrency 4 2>"$T_DIR/addlimit.err" &
runner=$!
eight_done() { [ "$(q "select count(*) >= 8 from cronq.jobs where status = 'succeeded'")" = t ]; }
check "the drain of 4 workers is under way" poll 20 eight_done
PGUSER=cronq_runner "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin" \
    -c "insert into cronq.limits (key, max_running) values ('type:sleep', 1)" -c "select pg_sleep(1.5)" \
    -c "commit" >/dev/null &
adder=$!
wait $adder
eq "the limit was added" "1" "$(q "select count(*) from cronq.limits where key = 'type:sleep'")"
wait $runner
eq "the run ends 0" 0 $?
# set_at is the adding transaction's start; a job claimed before it may
# start up to 0.2 s later
eq "no job started while the limit was being added" "0" \
    "$(q "select count(*) from cronq.job_runs r, cronq.limits l where l.key = 'type:sleep'
          and r.started_at > l.set_at + interval '0.3 seconds' and r.started_at < l.set_at + interval '1.5 seconds'")"
eq "after it, one at a time" "t" "$(q "select $(overlap "id in (select job_id from cronq.job_runs r, cronq.limits l
    where l.key = 'type:sleep' and r.started_at >= l.set_at + interval '1.5 seconds')") <= 1")"
as cronq_runner limit type:sleep --clear

# The outcomes sent with a plain claim that comes back empty are recorded
# with it, in its transaction; the claim.sql that follows is a transaction
# of its own. Here that claim.sql waits for a lock and its session is
# ended: the run fails, and the outcomes stay recorded once (no lease_lost
# row from recording them again, no success lost).
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
long=$(PGUSER=cronq_runner "$CRONQ" enqueue sleep '{"seconds": 1}')
short=$(PGUSER=cronq_runner "$CRONQ" enqueue --priority 1 sleep '{"seconds": 0.01}')
run 2>"$T_DIR/fallback.err" &
runner=$!
check "the first job runs" wait_for "running" 10 "select status = 'running' from cronq.jobs where id = $long"
"$PSQL" -XAtq -c "begin; lock table cronq.limits in share mode; select pg_sleep(60); commit" >/dev/null 2>&1 &
locker=$!
check "the claim after the empty plain one waits for the lock" wait_for "waiting" 20 \
    "select count(*) = 1 from pg_locks where relation = 'cronq.limits'::regclass and not granted"
q "select pg_terminate_backend(pid) from pg_locks where relation = 'cronq.limits'::regclass and not granted" >/dev/null
wait $runner
rc=$?
q "select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()" >/dev/null
wait $locker 2>/dev/null
check "the run fails, its session lost (rc $rc)" [ "$rc" -ne 0 ]
eq "both jobs succeeded, one history row each, no lease_lost" "$long|succeeded|succeeded;$short|succeeded|succeeded" \
    "$(q "select string_agg(j.id || '|' || j.status || '|' || r.outcomes, ';' order by j.id) from cronq.jobs j,
          lateral (select string_agg(outcome, ',') outcomes from cronq.job_runs where job_id = j.id) r")"

done_testing
