#!/usr/bin/env bash
# Database restarts mid-run (fast and immediate): cronq run exits 75 with a
# one-line message, without hanging, or, when the server is back before the
# worker's one reconnection attempt, goes on and says so in one line; the
# next runs resume and finish.
. "$(dirname "$0")/lib.sh"
migrate
root="$(dirname "$0")/../.."

for mode in fast immediate; do
    q "delete from cronq.jobs; delete from cronq.job_runs"
    for i in 1 2 3; do "$CRONQ" enqueue sleep '{"seconds": 2}' >/dev/null; done
    "$CRONQ" run --lease 2s >"$T_DIR/out" 2>"$T_DIR/err" &
    pid=$!
    check "$mode: a job is running" wait_for "running" 5 "select count(*) > 0 from cronq.jobs where status = 'running'"
    start=$(date +%s)
    "$root/scripts/pg.sh" restart "$PGHOST" $mode
    wait $pid
    rc=$?
    took=$(( $(date +%s) - start ))
    # A worker whose connection fails opens a new one, once: if the server
    # is back by then, the run goes on (0, and says so); if not, it exits 75.
    case $rc in
        75) match "$mode: exit 75, naming the problem" '^cronq: error: (could not [a-z ]+: )?(connection to database lost|terminating connection|server closed the connection)' "$(cat "$T_DIR/err")" ;;
        0) match "$mode: exit 0 after reconnecting, saying so" '^cronq: warning: the connection to the database was lost .*; reconnected' "$(cat "$T_DIR/err")" ;;
        *) fail "$mode: cronq run exits 75 (or 0 after reconnecting), got $rc: $(cat "$T_DIR/err")" ;;
    esac
    eq "$mode: one line on stderr" 1 "$(grep -c . "$T_DIR/err")"
    check "$mode: no hang (${took}s)" [ $took -le 10 ]
    check "$mode: no core dump" [ ! -e core ]
    # The next runs rescue the interrupted job once its lease expires and finish everything.
    sleep 2.2
    for _ in 1 2 3; do "$CRONQ" run --lease 2s 2>/dev/null; done
    eq "$mode: everything finished" "3|0" "$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status <> 'succeeded') from cronq.jobs")"
done

# With lease to spare (a lease longer than a reconnection and stopping the
# job can take: here connect_timeout=2, --kill-grace 1s, and a second
# each), the runner waits for a lost connection while the
# leases last, instead of stopping the jobs it holds. An outage of ~4 s
# (the test's database refuses connections, and its sessions are ended)
# across a heartbeat: a sleep job that needs no session goes on, and is
# recorded once the database is back. Without the wait, exit 75, the job
# stopped, left for the rescue.
outage() {  # outage SECONDS
    PGDATABASE=postgres q "alter database \"$T_NAME\" allow_connections false" >/dev/null
    PGDATABASE=postgres q "select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = '$T_NAME' and application_name = 'cronq'" >/dev/null
    sleep "$1"
    PGDATABASE=postgres q "alter database \"$T_NAME\" allow_connections true" >/dev/null
}
# spare LABEL WHEN DISRUPTION…: a run with lease to spare; once WHEN (a
# query) is true, the disruption (a command); then its exit status is in rc,
# and checks common to every case: one run per job listed in $jobs, and
# one line on stderr, the reconnection's warning.
spare() {
    local label=$1 when=$2; shift 2
    "$CRONQ" run --db "connect_timeout=2" --lease 12s --kill-grace 1s >"$T_DIR/out" 2>"$T_DIR/err" &
    pid=$!
    check "$label: the job is running" wait_for "running" 5 "$when"
    "$@"
    wait $pid
    rc=$?
    eq "$label: exit 0" 0 $rc
    match "$label: a warning, the reconnection" '^cronq: warning: the connection to the database was lost .*; reconnected' "$(cat "$T_DIR/err")"
    eq "$label: one line on stderr" 1 "$(grep -c . "$T_DIR/err")"
}
# fate ID: status|attempts|outcomes of job ID.
fate() { q "select status, attempts, (select string_agg(outcome, ',' order by id) from cronq.job_runs where job_id = $1) from cronq.jobs where id = $1"; }
q "delete from cronq.jobs; delete from cronq.job_runs"
s=$("$CRONQ" enqueue sleep '{"seconds": 8}' --max-attempts 1)
spare "outage across a heartbeat" "select count(*) = 1 from cronq.jobs where id = $s and status = 'running'" outage 4
eq "outage: the running sleep job rode it out, succeeded on its one attempt, one run" "succeeded|1|succeeded" "$(fate "$s")"

# A job that ends during the outage: its outcome waits for the database,
# is recorded once it is back, and the run goes on; the next job starts
# only then (no job starts, and no claim is sent, while the leases cannot
# be renewed).
q "delete from cronq.jobs; delete from cronq.job_runs"
s=$("$CRONQ" enqueue sleep '{"seconds": 2}' --max-attempts 1 --priority 1)
s2=$("$CRONQ" enqueue sleep '{"seconds": 1}' --max-attempts 1 --priority 2)
spare "a job ending during an outage" "select count(*) = 1 from cronq.jobs where id = $s and status = 'running'" outage 4
eq "outage 2: it succeeded on its one attempt, one run" "succeeded|1|succeeded" "$(fate "$s")"
eq "outage 2: the next job succeeded, started once the database was back" "succeeded|1|t" \
    "$(q "select status, attempts, started_at >= (select finished_at from cronq.jobs where id = $s) + interval '1.5 s' from cronq.jobs where id = $s2")"

# A stop while it waits: the run ends after its grace with 75 and one
# line saying what it left, the job left to the rescue (not finished, not
# lost).
q "delete from cronq.jobs; delete from cronq.job_runs"
s=$("$CRONQ" enqueue sleep '{"seconds": 1}' --max-attempts 1)
"$CRONQ" run --db "connect_timeout=2" --lease 12s --kill-grace 1s --grace 1s >"$T_DIR/out" 2>"$T_DIR/err" &
pid=$!
check "a stop while waiting: the job is running" wait_for "running" 5 "select count(*) = 1 from cronq.jobs where id = $s and status = 'running'"
outage 5 &
sleep 2.5
kill -TERM $pid
wait $pid
rc=$?
wait
eq "a stop while waiting: exit 75" 75 $rc
match "a stop while waiting: one line, what it left" '^cronq: error: stopped while waiting for the database, its jobs left to be rescued: ' "$(cat "$T_DIR/err")"
eq "a stop while waiting: one line on stderr" 1 "$(grep -c . "$T_DIR/err")"
eq "a stop while waiting: the job left running, for the rescue" "running|1|" "$(fate "$s")"

# A sql job whose timeout comes during the wait (its session ended by the
# outage): stopped at its timeout, the outcome waits, recorded once the
# database is back; exit 0.
q "delete from cronq.jobs; delete from cronq.job_runs"
s=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(20)"}' --max-attempts 1 --timeout 3s)
"$CRONQ" run --db "connect_timeout=2" --lease 20s --kill-grace 1s >"$T_DIR/out" 2>"$T_DIR/err" &
pid=$!
check "a timeout while waiting: the sql job is running" wait_for "running" 5 \
    "select count(*) = 1 from pg_stat_activity where query = 'select pg_sleep(20)' and state = 'active'"
outage 5
wait $pid
rc=$?
eq "a timeout while waiting: exit 0" 0 $rc
eq "a timeout while waiting: recorded, one run" "dead|1|timeout" "$(fate "$s")"

# A restart meets a sql job, whose session it ends: given back (not
# counted) once the runner has reconnected, and run again, even when the
# server was still starting when the runner first tried.
for mode in fast immediate; do
    q "delete from cronq.jobs; delete from cronq.job_runs"
    id=$("$CRONQ" enqueue sql '{"sql": "select pg_sleep(3)"}' --max-attempts 1)
    spare "$mode restart, a sql job" "select count(*) = 1 from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active'" \
        "$root/scripts/pg.sh" restart "$PGHOST" $mode
    eq "$mode restart: the sql job given back, then succeeded on its one attempt" "succeeded|1|given_back,succeeded" "$(fate "$id")"
done

# Unreachable from the start: 69, one line.
cronq run --db "host=$PGHOST port=1"
expect_rc_err "unreachable database" 69 '^cronq: error: could not connect to database: '

done_testing
