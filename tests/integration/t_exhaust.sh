#!/usr/bin/env bash
# The runner's own faults are not the job's: when the server has no
# connection slot left for a session the runner needs (a worker's own, a
# sql job's author's, the runner's task session), the job is given back
# (queued, its attempt not counted, a given_back history row), nothing more
# is claimed, nothing is left running, and `cronq run` exits 75 with one
# line naming the problem. A later run with free slots does the work.
#
# Its own cluster with few slots: max_connections 8, of which 2 are kept
# for superusers. The runner logs in as the superuser postgres (trust: the
# credentials are not what is tested here), its authors as plain roles,
# who find no slot once 6 sessions are open.
. "$(dirname "$0")/lib.sh"

sdir="$T_DIR/pg"
rm -rf "$sdir"
env_line=$(PG_OPTS="-c max_connections=8 -c superuser_reserved_connections=2" \
    "$(dirname "$0")/../../scripts/pg.sh" start "$sdir" fast) \
    || { fail "could not start a cluster with max_connections 8"; done_testing; exit 1; }
eval "$env_line"
holders=()
cleanup() {
    rm -f "$T_DIR/holding"
    for p in "${holders[@]}"; do kill "$p" 2>/dev/null; done
    "$(dirname "$0")/../../scripts/pg.sh" stop "$sdir" >/dev/null 2>&1
}
trap cleanup EXIT
export PGDATABASE=ex
"$PSQL" -XAtq -d postgres -c "create database ex" >/dev/null || fail "create database ex"
migrate
eq "the cluster has 8 slots" 8 "$(q "show max_connections")"
q "create role ex_a login; create role ex_b login; create role ex_c login; create role ex_d login"
q "grant cronq_user to ex_a, ex_b, ex_c, ex_d; create table hits (who text, job bigint);
   grant insert on hits to ex_a, ex_b, ex_c, ex_d"

# enq ROLE N: N sql jobs by that author, one attempt each (a counted
# failure would make them dead at once).
enq() {
    q "set role $1; select count(cronq.enqueue('sql',
         jsonb_build_object('sql', 'select pg_sleep(0.05); insert into hits values (session_user, ' || i || ')'),
         max_attempts => 1)) from generate_series(1, $2) i" >/dev/null
}
# run ARGS…: cronq run within 60 s, leaving RC and ERR.
run() {
    OUT=$(timeout -s KILL 60 "$CRONQ" run "$@" 2>"$T_DIR/stderr"); RC=$?
    ERR=$(cat "$T_DIR/stderr")
}
# hold N: N sessions kept open until release, as the superuser, whom no
# reserved slot keeps out (each tries again while the backend of an
# earlier check still takes a slot); then a moment for the backend of the
# last check to end.
hold() {
    local i
    touch "$T_DIR/holding"
    for i in $(seq 1 "$1"); do
        ( while [ -e "$T_DIR/holding" ]; do
              "$PSQL" -XAtq -d postgres -c "select pg_sleep(60)" >/dev/null 2>&1; sleep 0.1
          done ) &
        holders+=($!)
    done
    wait_for "$1 sessions" 10 "select count(*) = $1 from pg_stat_activity where query = 'select pg_sleep(60)'" \
        || fail "the $1 sessions did not start"
    sleep 0.5
}
release() {
    rm -f "$T_DIR/holding"
    q "select pg_terminate_backend(pid) from pg_stat_activity where query = 'select pg_sleep(60)'" >/dev/null
    for p in "${holders[@]}"; do wait "$p" 2>/dev/null; done
    holders=()
    wait_for "slots free" 10 "select count(*) = 1 from pg_stat_activity where backend_type = 'client backend'" \
        || fail "the held sessions did not end"
}
# The invariants of every run here: nothing dead, failed or running; a
# queued job has no attempt counted; every history row is a success or a
# give-back; a given-back job is back with its attempt not counted.
invariants() {
    eq "$1: nothing dead, failed or running" 0 \
        "$(q "select count(*) from cronq.jobs where status in ('dead', 'failed', 'running')")"
    eq "$1: queued jobs have no attempt counted" 0 \
        "$(q "select count(*) from cronq.jobs where status = 'queued' and attempts <> 0")"
    eq "$1: history holds successes and give-backs only" 0 \
        "$(q "select count(*) from cronq.job_runs where outcome not in ('succeeded', 'given_back')")"
    eq "$1: attempts count the successes only" 0 \
        "$(q "select count(*) from cronq.jobs j where attempts <> (select count(*) from cronq.job_runs r
              where r.job_id = j.id and r.outcome = 'succeeded')")"
}
one_line() {  # one_line DESC: rc 75, one stderr line naming the exhaustion
    eq "$1: exit 75" 75 "$RC"
    eq "$1: one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
    match "$1: the line names the problem" \
        '^cronq: error: the runner could not open a database session, so it claimed no more jobs and gave back [0-9]+ \(their attempts not counted\): .*(too many clients|connection slots are reserved)' "$ERR"
}

# --- 1. slots held: the author's session cannot open ---------------------
# 7 held and the runner's: none left.
hold 7
id=$(q "set role ex_a; select cronq.enqueue('sql', '{\"sql\": \"insert into hits values (session_user, 0)\"}', max_attempts => 1)")
run
release
one_line "a full server, sql job"
match "the line says too many clients" 'too many clients' "$ERR"
eq "the job is given back, its attempt not counted" "queued|0|" \
    "$(q "select status || '|' || attempts || '|' || coalesce(last_error, '') from cronq.jobs where id = $id")"
eq "its history row says given_back and why" "given_back|true" \
    "$(q "select outcome || '|' || (error ~ '^given back: .*too many clients') from cronq.job_runs where job_id = $id")"
eq "its SQL did not run" 0 "$(q "select count(*) from hits")"
eq "the wake records exit 75" 75 "$(q "select exit_status from cronq.wakes order by id desc limit 1")"

# 6 held and the runner's: the 2 left are the superusers', not the author's.
hold 6
run --batch 5
release
one_line "reserved slots, sql job"
match "the line says the slots are reserved" 'connection slots are reserved' "$ERR"
eq "still given back, still no attempt counted" "queued|0|2" \
    "$(q "select status || '|' || attempts || '|' || (select count(*) from cronq.job_runs where job_id = $id and outcome = 'given_back') from cronq.jobs where id = $id")"

# The runner's task session (purge) is the runner's too.
pid=$(q "select cronq.enqueue('purge', '{\"older_than\": \"30d\"}', max_attempts => 1)")
hold 7
run --type purge
release
one_line "a full server, purge job"
eq "the purge job is given back" "queued|0|given_back" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome, ',') from cronq.job_runs where job_id = $pid) from cronq.jobs where id = $pid")"
invariants "held slots"
run
eq "slots free: the given-back jobs run" "0||succeeded|succeeded|1" \
    "$RC|$ERR|$(q "select (select status from cronq.jobs where id = $id), (select status from cronq.jobs where id = $pid), (select count(*) from hits)")"

# The author's own CONNECTION LIMIT is the author's: a failed attempt,
# retried, and the other authors' jobs run.
q "alter role ex_d connection limit 0"
lid=$(q "set role ex_d; select cronq.enqueue('sql', '{\"sql\": \"select 1\"}', max_attempts => 2, priority => -1)")
oid=$(q "set role ex_a; select cronq.enqueue('sql', '{\"sql\": \"select 1\"}')")
run
q "alter role ex_d connection limit -1"
eq "the author's connection limit: exit 0, silent" "0|" "$RC|$ERR"
eq "the author's connection limit: a failed attempt" "failed|1|connection|true" \
    "$(q "select status || '|' || attempts || '|' || error_code || '|' || (last_error ~ 'too many connections for role') from cronq.jobs where id = $lid")"
eq "the other author's job ran" succeeded "$(q "select status from cronq.jobs where id = $oid")"

# --- 2. the runner exhausts the slots itself ----------------------------
# 7 workers all find a slot (superuser), then every author session is
# refused a slot: claimed jobs come back, the unstarted ones too.
q "delete from cronq.jobs; delete from cronq.job_runs; delete from hits"
for r in ex_a ex_b ex_c ex_d; do enq $r 10; done
run --concurrency 7 --batch 2
one_line "--concurrency 7"
invariants "--concurrency 7"
check "--concurrency 7: jobs were given back" [ "$(q "select count(*) from cronq.job_runs where outcome = 'given_back'")" -ge 1 ]
eq "--concurrency 7: only succeeded jobs ran their SQL" \
    "$(q "select count(*) from cronq.jobs where status = 'succeeded'")" "$(q "select count(*) from hits")"

# 16 workers: some cannot even open their own connection (noop jobs need
# no other session), and the others stop claiming.
q "select count(cronq.enqueue('noop', max_attempts => 1)) from generate_series(1, 1000)" >/dev/null
run --concurrency 16 --batch 2 --type noop
one_line "--concurrency 16, noop"
match "--concurrency 16, noop: too many clients" 'too many clients' "$ERR"
invariants "--concurrency 16, noop"
check "--concurrency 16, noop: not all noop jobs ran" \
    [ "$(q "select count(*) from cronq.jobs where type = 'noop' and status = 'queued'")" -ge 1 ]
run --concurrency 16 --batch 2
one_line "--concurrency 16"
invariants "--concurrency 16"

# --- 3. with slots free, a later run does the work ----------------------
run --concurrency 2
eq "a later run: exit 0, silent" "0|" "$RC|$ERR"
eq "every job succeeded, once, sql jobs as their author" "1040|1040|40|40" \
    "$(q "select count(*), count(*) filter (where status = 'succeeded' and attempts = 1),
          (select count(*) from hits), (select count(distinct (who, job)) from hits) from cronq.jobs")"
invariants "later run"

done_testing
