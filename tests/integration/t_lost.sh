#!/usr/bin/env bash
# No job a runner ran or took is lost to a statement that fails on a live
# connection or to an answer lost with its connection:
# - a statement_timeout of the runner's role does not reach its own
#   statements (cronq's answer limit bounds them): 3,000 noops of one
#   attempt each all succeed (before, the outcome statements timed out and
#   the jobs they had run ended dead at the rescue);
# - an outcome statement cancelled (SQLSTATE 57014, as pg_cancel_backend
#   gives; a trigger raises it once): the outcomes are recorded again at
#   once;
# - a heartbeat cancelled the same way: the running job goes on;
# - the claim's answer lost with its connection after its commit (a proxy
#   cuts it; a worker's first claim takes one job): the job it took is given
#   back at once, no attempt counted, not left running until the rescue
#   counted an attempt;
# - the runner's own job's row held locked by an admin past the outcome
#   statement's waits: that job is left to the rescue, the run goes on
#   (before, the run ended with 75, its outcomes dropped);
# - a runner killed (-9) while a "transaction": false SQL job runs: the
#   server ends the job's statement within about a second (its session's
#   client_connection_check_interval), so the rescue cannot start it again
#   beside a run still going; before, it ran on to its end and committed.
. "$(dirname "$0")/lib.sh"
migrate
q "create role cq_runner login superuser" >/dev/null
runner() { PGUSER=cq_runner timeout 60 "$CRONQ" run "$@"; }
state() { q "select coalesce(string_agg(status || ':' || n, ',' order by status), '')
             from (select status, count(*) n from cronq.jobs where queue = '$1' group by status) s"; }
enqueue_noops() {  # N QUEUE
    for _ in $(seq "$1"); do echo "{\"type\":\"noop\",\"queue\":\"$2\",\"max_attempts\":1}"; done |
        "$CRONQ" enqueue --jsonl >/dev/null
}

# --- a role's statement_timeout ----------------------------------------------
enqueue_noops 3000 timeout
q "alter role cq_runner set statement_timeout = '5ms'"
runner --queue timeout --batch 1000 --lease 10s 2>"$T_DIR/timeout.err"
eq "statement_timeout on the runner's role: the run ends well" 0 "$?"
q "alter role cq_runner reset statement_timeout"
eq "every job recorded as it ran: succeeded, none running or dead" "succeeded:3000" "$(state timeout)"

# --- a statement cancelled, once ----------------------------------------------
q "create sequence public.outcome_once; create sequence public.beat_once;
   create function public.cancel_once() returns trigger language plpgsql as \$\$
   begin
       if nextval(tg_argv[0]) = 1 then
           raise exception 'canceling statement due to user request (simulated)' using errcode = '57014';
       end if;
       return new;
   end \$\$;
   create trigger cancel_outcome before update on cronq.jobs for each row
       when (old.status = 'running' and new.status = 'succeeded' and new.queue = 'cancelled')
       execute function public.cancel_once('public.outcome_once');
   create trigger cancel_beat before update on cronq.jobs for each row
       when (old.status = 'running' and new.status = 'running' and new.queue = 'beat')
       execute function public.cancel_once('public.beat_once')" >/dev/null
enqueue_noops 200 cancelled
runner --queue cancelled --batch 50 --lease 30s 2>"$T_DIR/cancelled.err"
eq "an outcome statement cancelled: the run ends well" 0 "$?"
check "an outcome statement was cancelled" [ "$(q "select nextval('public.outcome_once')")" -gt 2 ]
eq "the outcomes recorded again: all succeeded, one run each" "succeeded:200|200" \
    "$(state cancelled)|$(q "select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.queue = 'cancelled'")"

id=$("$CRONQ" enqueue sleep '{"seconds": 3}' --queue beat --max-attempts 1)
runner --queue beat --lease 2s 2>"$T_DIR/beat.err"
eq "a heartbeat cancelled: the run ends well" 0 "$?"
check "a heartbeat was cancelled" [ "$(q "select nextval('public.beat_once')")" -gt 2 ]
eq "the job ran to its end: succeeded, one attempt, one run" "succeeded|1|succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome, ',') from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# --- the claim's answer lost after its commit ---------------------------------
enqueue_noops 5 cut
for _ in $(seq 1 50); do
    lp=$(( 20000 + RANDOM % 30000 ))
    ss -ltn | grep -q ":$lp " || break
done
python3 "$(dirname "$0")/proxy_cut_after.py" "$lp" "$PGPORT" "attempts = j.attempts + 1" >"$T_DIR/proxy.out" 2>&1 &
px=$!
poll 10 sh -c "ss -ltn | grep -q \"127.0.0.1:$lp \"" || fail "the proxy did not start"
runner --queue cut --lease 60s --db "host=127.0.0.1 port=$lp dbname=$PGDATABASE user=cq_runner" 2>"$T_DIR/cut.err"
rc=$?
kill $px 2>/dev/null
match "the proxy cut the connection after the claim committed" "cutting" "$(cat "$T_DIR/proxy.out")"
eq "the run ends with the lost connection's 75" 75 "$rc"
match "saying it gave the job back" "gave back 1 job that a claim whose answer was lost had taken" "$(cat "$T_DIR/cut.err")"
eq "the jobs are queued, the one taken given back: no attempt counted, no history" "queued:5|0|0" \
    "$(state cut)|$(q "select sum(attempts) from cronq.jobs where queue = 'cut'")|$(q "select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id where j.queue = 'cut'")"
runner --queue cut 2>/dev/null
eq "the next run runs them: all succeeded" "succeeded:5" "$(state cut)"

# A job the worker ran, whose outcome was left unrecorded (its row held
# locked by another session: left to the rescue), is not the lost claim's:
# not given back (it would run again, its attempt not counted).
ran=$("$CRONQ" enqueue sleep '{"seconds": 1}' --queue kept --max-attempts 1)
python3 "$(dirname "$0")/proxy_cut_after.py" "$lp" "$PGPORT" "attempts = j.attempts + 1" "$T_DIR/arm" \
    >"$T_DIR/proxy2.out" 2>&1 &
px=$!
poll 10 sh -c "ss -ltn | grep -q \"127.0.0.1:$lp \"" || fail "the proxy did not start again"
runner --queue kept --lease 60s --linger 20s --poll 300ms \
    --db "host=127.0.0.1 port=$lp dbname=$PGDATABASE user=cq_runner" 2>"$T_DIR/kept.err" &
r=$!
check "the job runs" wait_for "the job runs" 10 "select status = 'running' from cronq.jobs where id = $ran"
"$PSQL" -Xq -c "begin" -c "select id from cronq.jobs where id = $ran for update" \
    -c "select pg_sleep(4) as held_ran" -c "commit" >/dev/null 2>&1 &
locker=$!
check "its outcome is left unrecorded, the row held" \
    poll 15 sh -c "grep -q \"job $ran's row is held locked\" \"$T_DIR/kept.err\""
wait $locker
touch "$T_DIR/arm"
wait $r
kill $px 2>/dev/null
match "the next claim's answer was cut off" "cutting" "$(cat "$T_DIR/proxy2.out")"
eq "the job it ran is not given back: still running, one attempt, for the rescue" "running|1" \
    "$(q "select status || '|' || attempts from cronq.jobs where id = $ran")"
check "nothing given back" [ "$(grep -c 'gave back' "$T_DIR/kept.err")" = 0 ]

# --- the runner's own job locked by an admin --------------------------------
q "do \$\$ begin create role cronq_admin nologin; exception when duplicate_object then null; end \$\$;
   create role cq_lost_admin login in role cronq_admin" >/dev/null
migrate
own=$(PGUSER=cq_runner "$CRONQ" enqueue sleep '{"seconds": 3}' --queue adminlock --max-attempts 1)
runner --queue adminlock --lease 30s 2>"$T_DIR/adminlock.err" &
r=$!
check "the runner's own job runs" wait_for "the runner's own job runs" 10 "select status = 'running' from cronq.jobs where id = $own"
PGUSER=cq_lost_admin "$PSQL" -Xq -c "begin" -c "select id from cronq.jobs where id = $own for update" \
    -c "select pg_sleep(7) as admin_holds" -c "commit" >/dev/null 2>&1 &
holder=$!
wait $r
eq "an admin holding the runner's own job's row: the run ends well" 0 "$?"
match "saying the job's row is held, left to the rescue" "job $own's row is held locked by another transaction" \
    "$(cat "$T_DIR/adminlock.err")"
eq "the job is left running for the rescue, not recorded over the lock" "running" \
    "$(q "select status from cronq.jobs where id = $own")"
wait $holder

# --- a runner killed while a job's SQL runs -----------------------------------
q "create table public.orphan_side (at timestamptz)" >/dev/null
id=$("$CRONQ" enqueue sql '{"transaction": false, "sql": "insert into public.orphan_side select clock_timestamp() from pg_sleep(10)"}' \
     --queue orphan --max-attempts 3)
PGUSER=cq_runner "$CRONQ" run --queue orphan --lease 30s 2>/dev/null &
r=$!
check "the job's SQL runs" wait_for "the job's SQL runs" 10 \
    "select exists (select 1 from pg_stat_activity where query like '%from pg_sleep(10)%' and state = 'active' and pid <> pg_backend_pid())"
kill -9 $r; wait $r 2>/dev/null
check "the server ends the job's statement once its client is gone" wait_for "the server ends the job's statement once its client is gone" 5 \
    "select not exists (select 1 from pg_stat_activity where query like '%from pg_sleep(10)%' and state = 'active' and pid <> pg_backend_pid())"
# past the statement's own end (10 s after it began): still nothing
poll 12 sh -c "[ \"\$(\"$PSQL\" -XAtq -c \"select count(*) from pg_stat_activity where query like '%from pg_sleep(10)%' and pid <> pg_backend_pid()\")\" = 0 ]"
sleep 1
eq "nothing of it committed" 0 "$(q "select count(*) from public.orphan_side")"
"$CRONQ" cancel "$id" >/dev/null

# A connection service's options reach the job's session as before (the
# check is not added there: it would override them).
printf '[lostsvc]\nhost=%s\nport=%s\ndbname=%s\noptions=-c work_mem=11MB\n' "$PGHOST" "$PGPORT" "$PGDATABASE" >"$T_DIR/pg_service.conf"
id=$("$CRONQ" enqueue sql '{"sql": "select current_setting($$work_mem$$) as w, current_setting($$client_connection_check_interval$$) as c"}' --queue svc)
PGSERVICEFILE="$T_DIR/pg_service.conf" PGUSER=cq_runner timeout 60 "$CRONQ" run --queue svc --db "service=lostsvc user=cq_runner" 2>/dev/null
eq "a service's options reach the job's session" "11MB|0" "$(q "select (result->'row'->>'w') || '|' || (result->'row'->>'c') from cronq.jobs where id = $id")"
id=$("$CRONQ" enqueue sql '{"sql": "select current_setting($$work_mem$$) as w, current_setting($$client_connection_check_interval$$) as c"}' --queue svc)
PGUSER=cq_runner timeout 60 "$CRONQ" run --queue svc --db "dbname=$PGDATABASE user=cq_runner options='-c work_mem=12MB'" 2>/dev/null
eq "the conninfo's options too, with the check after them" "12MB|1s" "$(q "select (result->'row'->>'w') || '|' || (result->'row'->>'c') from cronq.jobs where id = $id")"

done_testing
