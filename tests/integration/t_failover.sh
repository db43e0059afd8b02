#!/usr/bin/env bash
# Failover: two clusters of its own, A and B, one the primary and the other
# its streaming standby (pg_basebackup, a replication slot, synchronous
# replication), reached through one multi-host conninfo
# (host=A,B target_session_attrs=read-write). Four runners, each waking
# again as soon as its last wake ended (cron, sped up), drain exec jobs
# that log each execution (job, attempt, start, end) to a file, outside the
# database, and sql jobs. A quarter into the drain the standby is promoted
# and the old primary stopped. Twice: A fails over to B (the primary
# listed first), then, A rebuilt as B's standby, B fails back to A (the
# standby listed first: without target_session_attrs the runners would
# log in to it).
# Proved each time: every runner's wake in progress at the switch ends (0,
# its workers having reconnected, or 75) and the next one works on the new
# primary (reconnected within one wake); no job lost (all succeeded on the
# new primary, nothing pending); no attempt ran twice (synchronous
# replication: a claim the old primary acknowledged is on the new one); no
# job ran twice at the same time; a job that ran again did so as a new
# attempt (at-least-once); no job failed an attempt because the server
# that ended its session was gone. The second time, every reconnection
# reaches the new primary (listed first), so no outcome is lost and no job
# runs again; the first time one may reach the old primary as it shuts
# down (libpq tries the next host only when one does not answer or is
# read-only), and that worker's unrecorded outcomes are rescued. Last, a
# claim whose commit fails after the server sent its rows (what a primary
# stopped while its commit waits for the standby does), held and failed
# on purpose: the runner does not act on it.
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
N=${FAILOVER_JOBS:-200}
N_EXEC=$(( N - N / 5 ))
RUNNERS=4

fo="$T_DIR/fo"
rm -rf "$fo"; mkdir -p "$fo/a" "$fo/b" "$fo/exec"
chmod 755 "$T_DIR" "$fo"
as_pg() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
[ "$(id -u)" -eq 0 ] && chown postgres "$fo/a" "$fo/b"
runner_pids=()
cleanup() {
    touch "$fo/stop"
    for p in "${runner_pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    "$root/scripts/pg.sh" stop "$fo/a" >/dev/null 2>&1
    "$root/scripts/pg.sh" stop "$fo/b" >/dev/null 2>&1
}
trap cleanup EXIT
ns() { date +%s%N; }
secs() { awk -v d="$1" 'BEGIN { printf "%.1f", d / 1e9 }'; }
port_of() { sed -n 's/.*PGPORT=\([0-9]*\);.*/\1/p' <<<"$1"; }
declare -A port
# qon X SQL: one query on cluster X (a or b) alone.
qon() { "$PSQL" -XAtq -d "host=$fo/$1 port=${port[$1]} user=postgres dbname=postgres" -c "$2"; }

# standby X OF: X, a copy of OF that streams from it through a slot;
# then OF waits for X to confirm every commit (synchronous_standby_names is
# set on OF after the copy: X, once promoted, has no standby to wait for).
standby() {
    local x=$1 of=$2 env
    rm -rf "${fo:?}/$x/data"
    as_pg "$PGBIN/pg_basebackup" -D "$fo/$x/data" -R -X stream -C -S "to_$x" \
        -h "$fo/$of" -p "${port[$of]}" -U postgres >"$fo/basebackup.log" 2>&1 \
        || { cat "$fo/basebackup.log"; return 1; }
    env=$(PG_LISTEN='' PG_PORT=${port[$x]:-} "$root/scripts/pg.sh" start "$fo/$x" fast) || return 1
    port[$x]=$(port_of "$env")
    qon "$of" "alter system set synchronous_standby_names = '*'" >/dev/null
    qon "$of" "select pg_reload_conf()" >/dev/null
    is_sync() { [ "$(qon "$of" "select sync_state from pg_stat_replication")" = sync ]; }
    poll 20 is_sync
}

# The primary, A; B its standby.
env_a=$(PG_LISTEN='' "$root/scripts/pg.sh" start "$fo/a" fast) || { fail "could not start A"; done_testing; exit; }
port[a]=$(port_of "$env_a")
standby b a || { fail "could not make B a standby of A"; done_testing; exit; }
db="host=$fo/a,$fo/b port=${port[a]},${port[b]} user=postgres dbname=postgres target_session_attrs=read-write"
"$CRONQ" migrate --db "$db" >/dev/null || fail "cronq migrate failed"
qon a "update cronq.schedules set next_run_at = next_run_at + interval '1 day'" >/dev/null  # no purge job mid-test

# The job: one line as it starts (S) and one as it ends (E), or as it ends
# stopped by its runner (K), appended to a file, which no failover rolls
# back.
log="$fo/executions"
cat >"$fo/exec/mark" <<EOF
#!/bin/sh
trap 'echo "K \$CRONQ_JOB_ID \$CRONQ_ATTEMPT \$(date +%s%N)" >>"$log"; exit 143' TERM
echo "S \$CRONQ_JOB_ID \$CRONQ_ATTEMPT \$(date +%s%N)" >>"$log"
sleep 0.1
echo "E \$CRONQ_JOB_ID \$CRONQ_ATTEMPT \$(date +%s%N)" >>"$log"
EOF
chmod 755 "$fo/exec" "$fo/exec/mark"

# Runner I of round R wakes again 0.2 s after each wake ends, until
# $fo/stop exists; one line per wake: pid, start, end (ns), exit status.
runner() {
    local r=$1 i=$2 p s rc
    while [ ! -e "$fo/stop" ]; do
        s=$(ns)
        "$CRONQ" run --db "$db" --exec-dir "$fo/exec" --concurrency 2 --batch 5 --lease 5s \
            --linger 3s --poll 200ms 2>>"$fo/$r-r$i.err" &
        p=$!
        wait $p; rc=$?
        echo "$p $s $(ns) $rc" >>"$fo/$r-r$i.wakes"
        sleep 0.2
    done
}

# failover R OLD NEW [strict]: N jobs, the runners, and mid-drain NEW
# promoted and OLD stopped; then the checks (strict: no job ran again).
failover() {
    local r=$1 old=$2 new=$3 strict=${4:-} before t_switch t_down t_drained i j rcs ok_pid first_ok overlaps runs values lost twice
    qn() { qon "$new" "$1"; }
    qo() { qon "$old" "$1"; }
    eq "$r: $new streams from $old, synchronously" "sync|t" \
        "$(qo "select sync_state from pg_stat_replication")|$(qn "select pg_is_in_recovery()")"
    qo "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
    : >"$log"; rm -f "$fo/stop"
    # One job in five is sql, run on its author's session, kept between
    # jobs as the runner's is.
    seq 1 "$N" | awk '{ if ($1 % 5) print "{\"type\":\"exec\",\"payload\":{\"command\":\"mark\"},\"max_attempts\":20}"
                        else print "{\"type\":\"sql\",\"payload\":{\"sql\":\"select 1\"},\"max_attempts\":20}" }' \
        | "$CRONQ" enqueue --jsonl --db "$db" || fail "$r: enqueue failed"
    eq "$r: $N jobs queued on $old, and on $new already" "$N|$N" \
        "$(qo "select count(*) from cronq.jobs where status = 'queued'")|$(qn "select count(*) from cronq.jobs where status = 'queued'")"

    runner_pids=()
    for i in $(seq 1 $RUNNERS); do runner "$r" "$i" & runner_pids+=($!); done
    quarter_done() { [ "$(qo "select count(*) >= $N / 4 from cronq.jobs where status = 'succeeded'")" = t ]; }
    poll 30 quarter_done
    before=$(qo "select count(*) filter (where status = 'succeeded') || '|' || count(*) filter (where status in ('queued', 'running')) from cronq.jobs")
    match "$r: the runners drain $old when it fails" '^[1-9][0-9]*\|[1-9][0-9]*$' "$before"
    t_switch=$(ns)
    as_pg "$PGBIN/pg_ctl" -D "$fo/$new/data" promote -w -t 30 >/dev/null || fail "$r: pg_ctl promote failed"
    # The old primary lingers a second (fencing it takes time): its
    # commits wait for a standby that is gone, and end with it unconfirmed.
    sleep 1
    as_pg "$PGBIN/pg_ctl" -D "$fo/$old/data" stop -m fast -w -t 30 >/dev/null || fail "$r: stopping $old failed"
    t_down=$(ns)
    echo "  $r: failover at $before (succeeded|pending): $new promoted and $old stopped in $(secs $((t_down - t_switch)))s"
    eq "$r: $new is the primary, $old is down" "f|" "$(qn "select pg_is_in_recovery()")|$(qo "select 1" 2>/dev/null)"

    drained() { [ "$(qn "select count(*) from cronq.jobs where status = 'succeeded'")" = "$N" ]; }
    poll 60 drained
    t_drained=$(ns)
    # Every runner gets the wake after the one at the switch before the
    # runners stop: one whose wake ended 75 as the others drained the rest
    # may not have started its next yet.
    woke_after() { local i; for i in $(seq 1 $RUNNERS); do
        awk -v t="$t_switch" '$3 >= t && $4 == 0 { ok = 1 } END { exit !ok }' "$fo/$r-r$i.wakes" 2>/dev/null || return 1
    done; }
    poll 30 woke_after
    touch "$fo/stop"
    for p in "${runner_pids[@]}"; do wait "$p"; done
    runner_pids=()
    first_ok=$(qn "select extract(epoch from min(finished_at) - to_timestamp($t_down / 1e9))::numeric(6, 1) from cronq.job_runs where outcome = 'succeeded' and finished_at > to_timestamp($t_down / 1e9)")
    echo "  $r: first job recorded on $new ${first_ok}s after $old went down; drained $(secs $((t_drained - t_switch)))s after the switch"
    echo "  $r: attempts on $new: $(qn "select string_agg(n || ' ' || outcome || coalesce(' ' || error_code, ''), ', ' order by n desc) from (select outcome, error_code, count(*) n from cronq.job_runs group by 1, 2) r")"
    cat "$fo/$r"-r*.err | tr -s ' \t' ' ' | sed -E 's/(worker=|socket ")[^ ]*/\1…/; s/gave back [0-9]+/gave back N/' \
        | sort | uniq -c | sed "s/^/  $r: stderr: /"

    # Reconnected within one wake: for each runner, the wake in progress at
    # the switch (the first to end after it) ends 0 (its workers
    # reconnected) or 75 (a connection lost where cronq does not try
    # again: a claim, a new session that reached the old primary as it
    # shut down); every later wake exits 0; and the first wake to end 0,
    # that one or the next, ended on the new primary.
    for i in $(seq 1 $RUNNERS); do
        awk -v t="$t_switch" '$3 >= t' "$fo/$r-r$i.wakes" >"$fo/$r-r$i.after"
        rcs=$(awk '{ printf "%s ", $4 }' "$fo/$r-r$i.after")
        ok_pid=$(awk '$4 == 0 { print $1; exit }' "$fo/$r-r$i.after")
        match "$r: runner $i: the wake at the switch ends 0 or 75, then only 0 ($rcs)" '^(0|75)( 0)* $' "$rcs"
        match "$r: runner $i: the first or second wake after the switch works ($rcs)" '^(0|75 0)( |$)' "$rcs"
        eq "$r: runner $i: that wake ended on $new" 1 \
            "$(qn "select count(*) from cronq.wakes where pid = ${ok_pid:-0} and exit_status = 0 and finished_at > to_timestamp($t_down / 1e9)")"
    done

    # Nothing lost: every job succeeded once on the new primary.
    eq "$r: no job lost: all succeeded on $new" "$N|$N|0" \
        "$(qn "select count(*), count(*) filter (where status = 'succeeded'), count(*) filter (where status <> 'succeeded') from cronq.jobs")"
    eq "$r: one succeeded attempt each in $new's history" "$N|$N" \
        "$(qn "select count(*), count(distinct job_id) from cronq.job_runs where outcome = 'succeeded'")"
    # A failover is no job's fault: none failed an attempt on a session
    # the server had ended (the runner's, kept between exec jobs; an
    # author's, kept between sql jobs).
    eq "$r: no attempt failed on a lost session" "" "$(qn "select string_agg(job_id || ' ' || error_code, ', ') from cronq.job_runs
        where outcome = 'failed' and (error_code = 'connection'
            or error ~ 'server closed the connection|terminating connection|connection to database lost|no connection to the server')")"

    # No claim acted on before its commit was confirmed: no worker found a
    # job it held gone (with synchronous replication, what a runner was
    # told it holds is on the new primary).
    eq "$r: no worker found a job it held gone" "0|0" \
        "$(qn "select count(*) from cronq.job_runs where outcome = 'lease_lost'")|$(cat "$fo/$r"-r*.err | grep -c 'no longer held\|taken over')"

    # The executions, from the file: each job ran to its end; no attempt
    # ran twice; no two executions of a job overlap in time (one without
    # an end, killed, overlaps every later one).
    eq "$r: every exec job ran to its end" "$N_EXEC" "$(awk '$1 == "E" { print $2 }' "$log" | sort -u | wc -l)"
    twice=$(awk '$1 == "S" { print $2, $3 }' "$log" | sort | uniq -d | head -n 5)
    eq "$r: no attempt ran twice" "" "$twice"
    for j in $(cut -d' ' -f1 <<<"$twice"); do
        grep " $j " "$log" | sed "s/^/  $r: job $j ran: /"
        qn "select attempt, outcome, worker, started_at, finished_at, error from cronq.job_runs where job_id = $j order by id" | sed "s/^/  $r: job $j history: /"
    done
    overlaps=$(awk '$1 == "S" { s[$2 " " $3] = $4 } $1 == "E" || $1 == "K" { e[$2 " " $3] = $4 }
        END { for (k in s) { split(k, a, " "); print a[1], s[k], (k in e) ? e[k] : 9e18 } }' "$log" \
        | sort -k1,1n -k2,2n | awk '$1 == id && $2 < end { print $1 } { id = $1; end = $3 }')
    eq "$r: no job ran twice at the same time" "" "$overlaps"
    runs=$(grep -c '^S ' "$log")
    # Per job: its executions against its attempts and its recorded outcomes.
    values=$(awk '$1 == "S" { n[$2]++ } END { for (j in n) printf "%s(%s, %s)", (k++ ? ", " : ""), j, n[j] }' "$log")
    per_job() {  # per_job CONDITION: the jobs whose executions e.n meet it
        qn "select count(*) from (values $values) e(id, n) join cronq.jobs j on j.id = e.id
            where $1"
    }
    lost=$(per_job "e.n > (select count(*) from cronq.job_runs r where r.job_id = e.id and r.outcome in ('succeeded', 'failed', 'timeout'))")
    echo "  $r: $runs executions of $N_EXEC exec jobs; $lost jobs ran again after their outcome was lost"
    # A job that ran again did so as a later attempt, counted: at-least-once.
    eq "$r: each execution is an attempt $new counted" 0 "$(per_job "e.n > j.attempts")"
    # With the new primary first in the list, every reconnection reaches
    # it: no outcome of a job that ran is lost (each execution has its
    # succeeded or failed attempt in the history, none was rescued and run
    # again).
    [ "$strict" = strict ] && eq "$r: no outcome lost, no job run again" 0 "$lost"
}

failover a-to-b a b
# A, rebuilt as B's standby (a new copy, as after a real failover), is
# listed first: target_session_attrs alone keeps the runners off it.
standby a b || fail "could not make A a standby of B"
failover b-to-a b a strict

# A commit never confirmed. A runner's record of one job and claim of the
# next, pipelined, commit at the sync that ends them; the server may send
# their rows and still fail the commit, as a primary stopped while the
# commit waits for its synchronous standby does. Made certain here, on A
# alone (the primary now): a deferred trigger on the claimed job's row
# sends a notice (which sends the rows) and sleeps at the commit, and the
# backend is terminated there, so the claim rolls back. The runner must
# not act on it: no second "claimed" line, the job untouched, exit 75.
one_db="host=$fo/a port=${port[a]} user=postgres dbname=postgres"
qon a "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
qon a "create function public.slow_commit() returns trigger language plpgsql as
       \$\$ begin raise notice 'committing'; perform pg_sleep(30); return null; end \$\$;
       create constraint trigger slow_commit after update on cronq.jobs deferrable initially deferred
       for each row when (new.status = 'running' and new.priority = 5) execute function public.slow_commit()" >/dev/null
"$CRONQ" enqueue noop --db "$one_db" >/dev/null
second=$("$CRONQ" enqueue noop --priority 5 --db "$one_db")
"$CRONQ" run --db "$one_db" --batch 1 --lease 60s --verbose 2>"$fo/unconfirmed.err" &
pid=$!
commit_sleeps() { [ -n "$(qon a "select pid from pg_stat_activity where wait_event = 'PgSleep'")" ]; }
check "unconfirmed claim: the commit waits" poll 10 commit_sleeps
qon a "select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep'" >/dev/null
wait $pid; rc=$?
eq "unconfirmed claim: exit 75, the second batch not taken" "75|1" "$rc|$(grep -c 'claimed [0-9]* jobs\?' "$fo/unconfirmed.err")"
eq "unconfirmed claim: the job untouched" "queued|0|0" \
    "$(qon a "select status || '|' || attempts || '|' || (select count(*) from cronq.job_runs where job_id = $second) from cronq.jobs where id = $second")"
qon a "drop trigger slow_commit on cronq.jobs; drop function public.slow_commit()" >/dev/null
check "no core dump" [ ! -e core ]

done_testing
