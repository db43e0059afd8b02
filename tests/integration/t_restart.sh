#!/usr/bin/env bash
# Database restarts mid-run (fast and immediate): cronq run exits 75 with a
# one-line message, without hanging; the next run resumes and finishes.
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
    eq "$mode: cronq run exits 75" 75 $rc
    eq "$mode: one line on stderr" 1 "$(grep -c . "$T_DIR/err")"
    match "$mode: it names the problem" '^cronq: error: (connection to database lost|terminating connection|server closed the connection)' "$(cat "$T_DIR/err")"
    check "$mode: no hang (${took}s)" [ $took -le 10 ]
    check "$mode: no core dump" [ ! -e core ]
    # The next runs rescue the interrupted job once its lease expires and finish everything.
    sleep 2.2
    for _ in 1 2 3; do "$CRONQ" run --lease 2s 2>/dev/null; done
    eq "$mode: everything finished" "3|0" "$(q "select count(*) filter (where status = 'succeeded'), count(*) filter (where status <> 'succeeded') from cronq.jobs")"
done

# Unreachable from the start: 69, one line.
cronq run --db "host=$PGHOST port=1"
expect_rc_err "unreachable database" 69 '^cronq: error: could not connect to database: '

done_testing
