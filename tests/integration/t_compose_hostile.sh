#!/usr/bin/env bash
# Composition under a hostile cronq_user (review of 0017): what a role's
# hooks and dependencies can do to the statement that records outcomes
# (which every role's jobs share), and who a schedule's hooks run as.
. "$(dirname "$0")/lib.sh"
migrate
mkrole tc_mallory tc_alice tc_admin
q "grant cronq_user to tc_mallory, tc_alice; grant cronq_admin to tc_admin" >/dev/null

# as ROLE SQL: one query as that login role.
as() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
status_of() { q "select status from cronq.jobs where id = $1"; }
refused() { ! as "$@" 2>/dev/null; }
# hold_locked IDS SECONDS WHAT: tc_mallory holds its jobs IDS locked from an
# open transaction for SECONDS, in the background (its pid in locker).
hold_locked() {
    PGUSER=tc_mallory "$PSQL" -XAtq -c "begin" \
        -c "select 1 from cronq.jobs where id in ($1) for update" -c "select pg_sleep($2)" \
        -c "commit" >/dev/null &
    locker=$!
    check "the author holds $3 locked" wait_for - 5 \
        "select exists (select 1 from pg_stat_activity where usename = 'tc_mallory'
                        and state = 'active' and query like '%pg_sleep%')"
}

# tree_of_10200 ROOT: 100 jobs of tc_mallory's under ROOT, 101 under each
# (10,200 blocked in all), the table analysed first.
tree_of_10200() {
    q "analyze cronq.jobs" >/dev/null
    as tc_mallory "do \$\$ declare m bigint; begin
        for i in 1..100 loop
            m := cronq.enqueue('noop', depends_on => array[$1]);
            perform cronq.enqueue('noop', depends_on => array[m]) from generate_series(1, 101);
        end loop; end \$\$"
}
# wide_graph ROOT: below tc_mallory's job ROOT, 50 jobs of 100 dependants
# each, two hubs that each depend on all 5,000, and 1,000 jobs below each
# hub: 7,052 jobs, the hubs an entry of 5,000 parents each.
wide_graph() {
    as tc_mallory "do \$\$ declare m bigint; a bigint[] := '{}'; h bigint; begin
        for i in 1..50 loop
            m := cronq.enqueue('noop', depends_on => array[$1]);
            a := a || array(select cronq.enqueue('noop', depends_on => array[m]) from generate_series(1, 100));
        end loop;
        for i in 1..2 loop
            h := cronq.enqueue('noop', depends_on => a);
            perform cronq.enqueue('noop', depends_on => array[h]) from generate_series(1, 1000);
        end loop; end \$\$"
}
# ended_and_waiting PARENT ENDED N: below tc_mallory's job PARENT, ENDED
# dependants cancelled by their author (still entries of its dependants),
# then N that wait (due in an hour once they may run).
ended_and_waiting() {
    as tc_mallory "select cronq.cancel_jobs(array(select cronq.enqueue('noop', depends_on => array[$1]) from generate_series(1, $2)))" >/dev/null
    as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$1], run_at => now() + interval '1 hour')) from generate_series(1, $3)" >/dev/null
}
# hold_notes SECONDS WHAT [SELECT]: another session (a page, or a change
# counting on a note) holds the notes that SELECT locks (default: every
# note of cronq.settle_later, key share) for SECONDS, in the background
# (its pid in holder).
hold_notes() {
    "$PSQL" -XAtq -c "begin" -c "${3:-select 1 from cronq.settle_later for key share}" \
        -c "select pg_sleep($1)" -c "commit" >/dev/null &
    holder=$!
    check "another transaction holds $2" wait_for "held" 5 \
        "select exists ($(sleepers "$1"))"
}
# page_ms: one settle_step() page; how long it took in ms.
page_ms() {
    local t0=$(date +%s%N)
    q "select * from cronq.settle_step()" >/dev/null
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# parent_of_30: a job of tc_mallory's due in an hour, its id in p, with 30
# blocked dependants.
parent_of_30() {
    p=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
    as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$p])) from generate_series(1, 30)" >/dev/null
}

# --- 1. a long chain of dependants ends cancelled in the recording statement
# A trigger per level used to nest as deep as the chain: a few hundred jobs
# exhausted the stack, and the outcome (then every rescue) failed for all.
head=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1)")
as tc_mallory "do \$\$ declare prev bigint := $head; begin
    for i in 1..1500 loop prev := cronq.enqueue('noop', depends_on => array[prev]); end loop; end \$\$"
victim=$(as tc_alice "select cronq.enqueue('noop')")
cronq run
eq "chain: the run succeeds" 0 "$RC"
eq "chain: the head is dead" dead "$(status_of "$head")"
eq "chain: every dependant cancelled" 1500 \
    "$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_mallory' and status = 'cancelled' and error_code = 'dependency_failed'")"
eq "chain: another role's job ran" succeeded "$(status_of "$victim")"
eq "chain: a dependant names its own parent" "job $((head + 1)), which it depends on, ended cancelled" \
    "$(q "select last_error from cronq.jobs where id = $head + 2")"
q "delete from cronq.jobs" >/dev/null

# --- 1b. a wide graph: many jobs under several parents each ------------------
# The walk went by (job, parent) pairs: a job under several parents was
# walked again from each, so 50 x 100 jobs under two hubs that each depend
# on all 5,000, with 1,000 jobs below each hub, took ~6 s to cancel (30,000
# jobs built so took minutes), past the run's 3 s limit for a statement: the
# outcome failed for every role, and every rescue after it. Now an author's
# own walk takes each job once, and a runner's reads 10,000 entries at most
# (sql/0027).
root=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1, run_at => now() + interval '1 hour')")
wide_graph "$root"
q "update cronq.jobs set run_at = now() where id = $root; analyze cronq.jobs" >/dev/null
victim=$(as tc_alice "select cronq.enqueue('noop')")
cronq run --lease 3s
eq "wide graph: the run succeeds" 0 "$RC"
# The budget counts entries read (sql/0027): each hub is an entry of each
# of its 5,000 parents, so the walk reads 50 + 5,000 + 4,951 of the hubs'
# 10,000 entries and stops. The 5,052 jobs reached are cancelled in the
# outcome's transaction, the hubs' 2,000 dependants at the next wake.
eq "wide graph: the root is dead, 5,052 cancelled in its outcome's transaction, the hubs' 2,000 dependants noted, another role's job ran" \
    "dead|5052|2000|t|succeeded" \
    "$(status_of "$root")|$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_mallory' and status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select exists (select 1 from cronq.settle_parents)")|$(status_of "$victim")"
cronq run
eq "wide graph: the next wake cancels the 2,000, nothing left noted" "0|7052|0|0" \
    "$RC|$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_mallory' and status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select count(*) from cronq.settle_parents")"
eq "wide graph: a job below a hub names the hub, each hub the first of its parents" "1|2" \
    "$(q "select count(distinct last_error) from cronq.jobs where id > (select max(id) - 1000 from cronq.jobs where enqueued_by = 'tc_mallory')")|$(q "select count(*) from cronq.jobs where last_error = format('job %s, which it depends on, ended cancelled', $root + 2) and depends_on[1] = $root + 2 and cardinality(depends_on) = 5000")"
q "delete from cronq.jobs" >/dev/null
# The author's own cancel of the same graph is not budgeted: its walk takes
# each job once (walked again from each parent, the hubs' 1,000 would be
# read 5,000 times each: past a 5 s limit), all 7,052 cancelled inline.
root=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
wide_graph "$root"
as tc_mallory "set statement_timeout = '5s'; select cronq.cancel_jobs(array[$root::bigint])" >/dev/null
eq "wide graph, the author's own cancel: all 7,052 below cancelled at once, nothing noted" "7052|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null

# --- 1c. past the budget: what one outcome's transaction settles is bounded
# (sql/0025) 300,000 blocked jobs under one parent that failed took ~8 s of
# the statement recording every role's outcomes. Now that transaction
# cancels 10,000 at most; the rest are noted and the next wake settles
# them, a page of 500 a transaction.
root=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1, run_at => now() + interval '1 hour')")
tree_of_10200 "$root"
q "update cronq.jobs set run_at = now() where id = $root" >/dev/null
victim=$(as tc_alice "select cronq.enqueue('noop')")
cronq run
eq "budget: the run succeeds" 0 "$RC"
eq "budget: the root dead, 10,000 cancelled in its outcome's transaction, 200 left blocked and noted, another role's job ran" \
    "dead|10000|200|t|succeeded" \
    "$(status_of "$root")|$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_mallory' and status = 'cancelled'")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select exists (select 1 from cronq.settle_parents)")|$(status_of "$victim")"
cronq run
eq "budget: the next wake cancels the rest, each naming its own parent; nothing left noted" \
    "0|10200|0|0|0" \
    "$RC|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed' and last_error = format('job %s, which it depends on, ended %s', depends_on[1], case when depends_on[1] = $root then 'dead' else 'cancelled' end)")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select count(*) from cronq.settle_parents")|$(q "select count(*) from cronq.settle_later")"
q "delete from cronq.jobs" >/dev/null

# A success past the budget (a smaller one, set on the runner's session):
# none of the parent's dependants is counted down in its transaction; the
# next wake settles each from all its parents. Half of them wait for a
# second parent still to run; the author holds one of the others locked
# (noted, settled by a later wake).
p=$(as tc_mallory "select cronq.enqueue('noop')")
q2=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => case when i % 2 = 0 then array[$p, $q2] else array[$p] end,
    run_at => now() + interval '1 hour')) from generate_series(1, 30) i" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "budget 20, 30 dependants: the parent succeeded, none counted down, the parent noted" \
    "succeeded|30|30|1" \
    "$(status_of "$p")|$(q "select count(*) from cronq.jobs where status = 'blocked' and waiting_for = cardinality(depends_on)")|$(q "select count(*) from cronq.jobs where depends_on[1] = $p")|$(q "select count(*) from cronq.settle_parents where job_id = $p")"
q "update cronq.jobs set finished_at = now() - interval '1 hour' where id = $p" >/dev/null
cronq purge --older-than 1s --status succeeded
eq "purge keeps the noted parent (none of its dependants noted one by one)" "0|1|0" \
    "$RC|$(q "select count(*) from cronq.jobs where id = $p")|$(q "select count(*) from cronq.settle_later")"
held=$(q "select min(id) from cronq.jobs where depends_on = array[$p]::bigint[]")
hold_locked "$held" 4 "one dependant"
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "the next wake: 14 queued, 15 blocked for the second parent, the held one still blocked and noted" \
    "0|14|15|1|1|0" \
    "$RC|$(q "select count(*) from cronq.jobs where status = 'queued' and waiting_for = 0 and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.jobs where status = 'blocked' and waiting_for = 1 and depends_on = array[$p, $q2]::bigint[]")|$(q "select count(*) from cronq.jobs where id = $held and status = 'blocked' and waiting_for = 1")|$(q "select count(*) from cronq.settle_later where job_id = $held")|$(q "select count(*) from cronq.settle_parents")"
wait "$locker"
cronq run
eq "a later wake settles the held one" "queued|0" "$(status_of "$held")|$(q "select count(*) from cronq.settle_later")"
# A dead parent stays while a dependant it could not settle is noted:
# purged first, the dependant ran as if it had succeeded (helper-74).
p=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1)")
d=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
hold_locked "$d" 4 "the dependant of a parent about to die"
cronq run
eq "the parent died, its held dependant noted" "dead|blocked|1" \
    "$(status_of "$p")|$(status_of "$d")|$(q "select count(*) from cronq.settle_later where job_id = $d")"
cronq purge --status dead --older-than 0s
eq "purge keeps the dead parent while its dependant is noted" "dead" "$(status_of "$p")"
wait "$locker"
cronq run
eq "the next wake cancels the dependant; then the parent may go" "cancelled|dependency_failed|" \
    "$(q "select status || '|' || error_code from cronq.jobs where id = $d")|$(cronq purge --status dead --older-than 0s; status_of "$p")"
# A dependant retried while its parent ends counts that end: the retry
# locks the parents it counts, so the parent's outcome waits for its
# commit and then finds it blocked (helper-74: the outcome saw it still
# cancelled, and it stayed blocked for ever).
p=$(as tc_mallory "select cronq.enqueue('sleep', '{\"seconds\": 1.5}')")
d=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p], run_at => now() + interval '1 hour')")
as tc_mallory "select cronq.cancel($d)" >/dev/null
"$CRONQ" run >/dev/null 2>&1 &
runner=$!
check "the parent runs" wait_for - 5 "select status = 'running' from cronq.jobs where id = $p"
PGUSER=tc_mallory "$PSQL" -XAtq -c "begin" -c "select cronq.retry($d)" -c "select pg_sleep(2)" -c "commit" >/dev/null &
retrier=$!
wait "$retrier" "$runner"
eq "the parent succeeded beside the retry; the dependant waits for nothing, and no note" "succeeded|t|0|0" \
    "$(status_of "$p")|$(q "select status in ('queued', 'succeeded') from cronq.jobs where id = $d")|$(q "select waiting_for from cronq.jobs where id = $d")|$(q "select count(*) from cronq.settle_later")"
# And one retried under a dead parent waits for it, wakes or not, until
# the parent is retried and succeeds.
p=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1)")
d=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
cronq run
as tc_mallory "select cronq.retry($d)" >/dev/null
cronq run
eq "a dependant retried under a dead parent stays blocked through a wake" "dead|blocked|1" \
    "$(status_of "$p")|$(status_of "$d")|$(q "select waiting_for from cronq.jobs where id = $d")"
q "update cronq.jobs set type = 'noop', payload = '{}' where id = $p" >/dev/null
as tc_mallory "select cronq.retry($p)" >/dev/null
cronq run
cronq run
eq "then the parent retried and run: the dependant runs" "succeeded|succeeded" "$(status_of "$p")|$(status_of "$d")"
# A note of 1,100 dependants is three pages, each applied once.
p=$(as tc_mallory "select cronq.enqueue('noop')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$p], run_at => now() + interval '1 hour'))
               from generate_series(1, 1100)" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "1,100 dependants past the budget: each counted down once, nothing left noted" "1100|0|0" \
    "$(q "select count(*) from cronq.jobs where status = 'queued' and waiting_for = 0 and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_parents")|$(q "select count(*) from cronq.jobs where status = 'blocked' and depends_on = array[$p]::bigint[]")"
q "delete from cronq.jobs" >/dev/null

# The budget counts the entries read, not the jobs settled (sql/0027): a
# job's dependants keep those that ended, and reading them cost a runner's
# statement as much as settling them (helper-55: 140,000 ended entries under
# 21 blocked jobs, ~0.3 s each time their parent ended). Budget 20: a parent
# whose 25 dependants were cancelled by their author and 3 still wait
# succeeds; its 28 entries are past the budget, so none is read or counted
# down there, and the parent is noted. (Counted in jobs, the 3 were queued
# in the outcome's transaction.)
p=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
ended_and_waiting "$p" 25 3
q "update cronq.jobs set run_at = now() where id = $p" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "ended entries count: a parent of 25 ended and 3 waiting dependants succeeds past a budget of 20: none counted down, the parent noted" \
    "0|succeeded|3|1" \
    "$RC|$(status_of "$p")|$(q "select count(*) from cronq.jobs where status = 'blocked' and waiting_for = 1 and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_parents where job_id = $p")"
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "ended entries count: the next wake queues the 3, nothing left noted" "3|0" \
    "$(q "select count(*) from cronq.jobs where status = 'queued' and waiting_for = 0 and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null
# The budget is the transaction's, spent parent by parent: two parents of
# 15 waiting dependants each, recorded in one statement with a budget of
# 20 (a first job ahead of them takes the run's first claim of one): the
# first parent's 15 are counted down there, the second's 15 are past the
# 5 left, and it is noted.
first=$(as tc_mallory "select cronq.enqueue('noop')")
p1=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
p2=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
for x in "$p1" "$p2"; do
    as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$x], run_at => now() + interval '1 hour')) from generate_series(1, 15)" >/dev/null
done
q "update cronq.jobs set run_at = now() - interval '1 minute' where id = $first;
   update cronq.jobs set run_at = now() - interval '1 second' where id in ($p1, $p2)" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "two parents in one statement, budget 20: 15 counted down, the other parent's 15 left waiting, one note" \
    "0|succeeded|succeeded|15|1" \
    "$RC|$(status_of "$p1")|$(status_of "$p2")|$(q "select count(*) from cronq.jobs where status = 'blocked' and waiting_for = 1")|$(q "select count(*) from cronq.settle_parents where job_id in ($p1, $p2)")"
q "delete from cronq.jobs" >/dev/null
# A dead parent's walk: P fails; C waits for P; 25 of C's dependants were
# cancelled, 2 wait. The walk reads C, then 20 of C's entries, and stops:
# C is cancelled in the outcome's transaction and noted (its entries not all
# read), its 2 waiting dependants at the next wake, each naming C.
p=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1, run_at => now() + interval '1 hour')")
c=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
ended_and_waiting "$c" 25 2
q "update cronq.jobs set run_at = now() where id = $p" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "ended entries count: a dead parent's walk past a budget of 20 cancels C, leaves its 2 waiting dependants noted" \
    "0|dead|cancelled|2|1" \
    "$RC|$(status_of "$p")|$(status_of "$c")|$(q "select count(*) from cronq.jobs where status = 'blocked' and depends_on = array[$c]::bigint[]")|$(q "select count(*) from cronq.settle_parents where job_id = $c")"
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "ended entries count: the next wake cancels them, each naming C; nothing left noted" "2|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed' and last_error = 'job $c, which it depends on, ended cancelled'")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null
# Ended entries count across the walk: C1 and C2 wait for P, each with 12
# ended and 1 waiting dependant. The walk reads C1 and C2, C1's 13 entries,
# then 6 of C2's, and stops at 20: C1's waiting one is cancelled there,
# C2's is noted for the next wake. (Counted in blocked jobs, the walk took
# all four, 4 of 20.)
p=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1, run_at => now() + interval '1 hour')")
c1=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
c2=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
ended_and_waiting "$c1" 12 1
ended_and_waiting "$c2" 12 1
q "update cronq.jobs set run_at = now() where id = $p" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "ended entries count across a walk: C1's waiting dependant cancelled, C2's left waiting and C2 noted" \
    "0|cancelled|cancelled|0|1|1" \
    "$RC|$(status_of "$c1")|$(status_of "$c2")|$(q "select count(*) from cronq.jobs where status = 'blocked' and depends_on = array[$c1]::bigint[]")|$(q "select count(*) from cronq.jobs where status = 'blocked' and depends_on = array[$c2]::bigint[]")|$(q "select count(*) from cronq.settle_parents where job_id = $c2")"
q "delete from cronq.jobs; delete from cronq.settle_parents" >/dev/null
# A budgeted walk names each job it cancels from its own rows (sql/0030),
# not by reading the job's parents (helper-59: 100 dependants of 40,001
# parents cost a runner's outcome 0.58 s for a walk charged 100 entries).
# P (dead) -> Q -> A -> X and P -> B -> X, ids P < Q < A < B < X: the walk
# reads Q, B, then A (from Q) and X (from B), then X again (from A). With
# the whole walk read, X names A, the least of its parents; stopped at 4
# entries, it names B, the parent it was reached from (reading X's parents
# would name A).
walk_names() {
    p=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1, run_at => now() + interval '1 hour')")
    wq=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
    wa=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$wq])")
    wb=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
    wx=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$wa, $wb])")
    q "update cronq.jobs set run_at = now() where id = $p" >/dev/null
    PGOPTIONS="-c cronq.settle_left=$1" cronq run
}
named() { q "select last_error from cronq.jobs where id = $1 and status = 'cancelled' and error_code = 'dependency_failed'"; }
walk_names 4
eq "a walk stopped by its budget names X after B, the parent it reached X from; Q, B after P, A after Q; P noted" \
    "0|dead|job $wb, which it depends on, ended cancelled|job $p, which it depends on, ended dead|job $p, which it depends on, ended dead|job $wq, which it depends on, ended cancelled|1" \
    "$RC|$(status_of "$p")|$(named "$wx")|$(named "$wq")|$(named "$wb")|$(named "$wa")|$(q "select count(*) from cronq.settle_parents where job_id = $p")"
q "delete from cronq.jobs; delete from cronq.settle_parents" >/dev/null
walk_names 10000
eq "a walk read whole names X after A, the least of its parents, as an author's own cancel does" \
    "0|job $wa, which it depends on, ended cancelled|0" \
    "$RC|$(named "$wx")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs; delete from cronq.settle_parents" >/dev/null
# The token that tells a walk's nested triggers to return cannot be named by
# a session: an author that sets one and cancels its own parent still
# cancels the whole chain below it.
p=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "do \$\$ declare prev bigint := $p; begin
    for i in 1..5 loop prev := cronq.enqueue('noop', depends_on => array[prev]); end loop; end \$\$"
as tc_mallory "set cronq.settle_covered = 'forged'; select cronq.cancel_jobs(array[$p::bigint])" >/dev/null
eq "a forged covered token: the author's cancel still cancels the 5 below" 5 \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")"
q "delete from cronq.jobs" >/dev/null

# A page recounts each dependant from its parents as they are, so nothing
# is counted twice: D waits for P and Q; P succeeds past the budget; the
# author cancels and retries D (which recounts it: P done, Q not) before
# the wake. A count down applied blindly then made D queued (and run)
# while Q had not run. And P, whose dependants are still to settle, is
# not purged meanwhile (they are found through its row).
p=$(as tc_mallory "select cronq.enqueue('noop')")
qq=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$p], run_at => now() + interval '1 hour'))
               from generate_series(1, 25)" >/dev/null
d=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p, $qq])")
PGOPTIONS="-c cronq.settle_left=20" cronq run
as tc_mallory "select cronq.cancel_jobs(array[$d::bigint]); select cronq.retry_jobs(array[$d::bigint])" >/dev/null
q "update cronq.jobs set finished_at = now() - interval '1 hour' where id = $p" >/dev/null
cronq purge --older-than 1s --status succeeded
eq "noted, recounted by a retry, not purged: D blocked for Q alone, P kept" "blocked|1|1|1" \
    "$(status_of "$d")|$(q "select waiting_for from cronq.jobs where id = $d")|$(q "select count(*) from cronq.settle_parents where job_id = $p")|$(q "select count(*) from cronq.jobs where id = $p")"
PGOPTIONS="-c cronq.settle_left=20" cronq run
eq "the next wake: D still blocked for Q alone, the 25 queued, nothing noted" "blocked|1|25|0" \
    "$(status_of "$d")|$(q "select waiting_for from cronq.jobs where id = $d")|$(q "select count(*) from cronq.jobs where status = 'queued' and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_parents")"
# A recount that changes nothing writes nothing.
q "insert into cronq.settle_later (job_id) values ($d)" >/dev/null
eq "settle_step: an unchanged job is not written" "0|0" \
    "$(q "select settled from cronq.settle_step()")|$(q "select count(*) from cronq.settle_later")"
q "delete from cronq.jobs" >/dev/null

# Only a runner's transaction is budgeted: an author who says it is one, in
# its own session, with a budget of 0, still settles its own graph inline
# (else each of its cancels would leave the runners work for nothing);
# so does a transaction that does not say it (a binary before schema 25,
# which cannot settle notes), even the owner's.
parent_of_30
as tc_mallory "set cronq.settling = on; set cronq.settle_left = 0; select cronq.cancel_jobs(array[$p::bigint])" >/dev/null
eq "an author's cancel settles its 30 dependants inline, whatever its settings; nothing noted" "30|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")"
parent_of_30
PGOPTIONS="-c cronq.settle_left=0" q "update cronq.jobs set status = 'cancelled', finished_at = now() where id = $p" >/dev/null
eq "the owner's own statement, not a runner's: inline too" "60|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null

# A give-back (fair sharing, release.sql) of a job an operator asked to
# cancel is a runner's transaction too: the job ends cancelled there, and
# the settling of its chain is budgeted like an outcome's. A first claim
# takes one job (F, quick: the next takes the batch); S sleeps 1 s first in
# the next batch; X, claimed behind it with its cancel asked (as by an
# operator once claimed), is given back, not started.
f=$(as tc_mallory "select cronq.enqueue('noop', priority => 1)")
s=$(as tc_mallory "select cronq.enqueue('sleep', '{\"seconds\": 1}', priority => 2)")
x=$(as tc_mallory "select cronq.enqueue('noop', priority => 3)")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$x])) from generate_series(1, 30)" >/dev/null
q "update cronq.jobs set cancel_requested = true where id = $x" >/dev/null
PGOPTIONS="-c cronq.settle_left=20" cronq run --batch 2 --concurrency 1
eq "give-back of a job asked to cancel: it ends cancelled, 20 of its 30 dependants in that transaction, the rest noted" \
    "0|succeeded|succeeded|cancelled|cancelled by an operator|20|1" \
    "$RC|$(status_of "$f")|$(status_of "$s")|$(status_of "$x")|$(q "select last_error from cronq.jobs where id = $x")|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents where job_id = $x")"
cronq run
eq "give-back past the budget: the next wake cancels the other 10" "30|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null

# An enqueue of a unique key that another role's late holder holds ends
# the holder first, in the enqueuer's transaction: its chain's settling
# there is budgeted as a runner's is (sql/0026), so one role cannot make
# another's enqueue pay for its whole graph. tc_mallory's holder H of key
# K, past its deadline, with 10,200 jobs below it; tc_alice enqueues K.
h=$(as tc_mallory "select cronq.enqueue('noop', unique_key => 'tc:shared', expires_at => now() + interval '1 hour',
                                        run_at => now() + interval '1 minute')")
tree_of_10200 "$h"
q "update cronq.jobs set expires_at = now() - interval '1 second', run_at = now() - interval '2 seconds' where id = $h" >/dev/null
new_job=$(PGOPTIONS="-c cronq.settle_left=999999" as tc_alice "select cronq.enqueue('noop', unique_key => 'tc:shared')")
eq "another role's late holder ended by an enqueue: expired, 10,000 below it cancelled there, 200 left noted; the new job made" \
    "cancelled|expired|10000|200|t|queued|tc_alice|0" \
    "$(status_of "$h")|$(q "select error_code from cronq.jobs where id = $h")|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select exists (select 1 from cronq.settle_parents)")|$(status_of "$new_job")|$(q "select enqueued_by from cronq.jobs where id = $new_job")|$(q "select count(*) from cronq.settle_grants")"
cronq run
eq "ended holder past the budget: the next wake cancels the other 200" "10200|0|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.jobs where status = 'blocked'")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null
# The window's budget is not the session's: an author that ends its own
# late holder with a budget of 0 in its session (to leave its chain to the
# runners, cycle after cycle) settles it inline all the same, and finds
# its setting as it left it.
h=$(as tc_mallory "select cronq.enqueue('noop', unique_key => 'tc:own', expires_at => now() + interval '1 hour',
                                        run_at => now() + interval '1 minute')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$h])) from generate_series(1, 30)" >/dev/null
q "update cronq.jobs set expires_at = now() - interval '1 second', run_at = now() - interval '2 seconds' where id = $h" >/dev/null
left=$(as tc_mallory "set cronq.settle_left = 0; select cronq.expire_holder('tc:own'); select current_setting('cronq.settle_left')")
eq "an author's own holder ended with a budget of 0: its 30 dependants cancelled inline, nothing noted, its setting kept" \
    "cancelled|30|0|0" \
    "$(status_of "$h")|$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")|$(echo "$left" | tail -n 1)"
q "delete from cronq.jobs" >/dev/null
# A role that names a grant in its own session is not granted anything:
# its own cancel settles inline.
parent_of_30
as tc_mallory "set cronq.settle_grant = 'forged'; set cronq.settle_left = 0; select cronq.cancel_jobs(array[$p::bigint])" >/dev/null
eq "a forged grant: the author's cancel settles its 30 dependants inline; nothing noted" "30|0" \
    "$(q "select count(*) from cronq.jobs where status = 'cancelled' and error_code = 'dependency_failed'")|$(q "select count(*) from cronq.settle_parents")"
check "settle_grants: a cronq_user may not read it" refused tc_mallory "select count(*) from cronq.settle_grants"
check "settle_grants: a cronq_user may not write it" refused tc_mallory "insert into cronq.settle_grants values ('x')"
q "delete from cronq.jobs" >/dev/null

# An author that holds its dependants locked while it ends their parent
# over and over notes each of them in settle_later once, not once a time
# (the table grew without bound, and every wake read it whole); and a
# parent changed again before a wake is noted once.
parent_of_30
hold_locked "$(q "select string_agg(id::text, ',') from cronq.jobs where depends_on = array[$p]::bigint[]")" 8 "30 dependants"
for _ in 1 2 3; do
    as tc_mallory "select cronq.cancel_jobs(array[$p::bigint]); select cronq.retry_jobs(array[$p::bigint])" >/dev/null
done
eq "three cancels of a parent whose 30 dependants are held locked: 30 notes, 30 jobs" "30|30" \
    "$(q "select count(*) from cronq.settle_later")|$(q "select count(distinct job_id) from cronq.settle_later")"
# Notes a page is deleting (locked) do not count: the author's next
# cancel notes the jobs again. And a page deletes only notes it can lock.
hold_notes 2 "the notes, as a page" "select 1 from cronq.settle_later for update"
as tc_mallory "select cronq.cancel_jobs(array[$p::bigint]); select cronq.retry_jobs(array[$p::bigint])" >/dev/null
wait "$holder"
eq "a cancel while a page holds the notes: noted again" 60 "$(q "select count(*) from cronq.settle_later")"
wait "$locker"
hold_notes 3 "the notes"
page_ms
eq "a page leaves the notes another transaction holds, at once" "60|1" \
    "$(q "select count(*) from cronq.settle_later")|$([ "$ms" -lt 2000 ] && echo 1 || echo "$ms ms")"
wait "$holder"
cronq run
eq "once the lock is gone, a wake settles them (the retried parent ran, then they did) and the notes go" "0|30|0" \
    "$RC|$(q "select count(*) from cronq.jobs where status = 'succeeded' and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_later")"
# A page takes only the notes it can lock with their jobs: 500 of the
# author's notes held by an open transaction (key share, as a change that
# counted on them holds them) cost the pages nothing, and another role's
# noted job is settled at the same wake. (A page that took the first 500
# noted jobs whatever held their notes met them again and again, for the
# wake's 5 s at every wake: helper-57.)
q "delete from cronq.jobs; delete from cronq.settle_later" >/dev/null
p=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$p])) from generate_series(1, 500)" >/dev/null
vp=$(as tc_alice "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
vd=$(as tc_alice "select cronq.enqueue('noop', depends_on => array[$vp], run_at => now() + interval '1 hour')")
q "set session_replication_role = replica;
   update cronq.jobs set status = 'succeeded', finished_at = now() where id = $vp;
   insert into cronq.settle_later (job_id) select id from cronq.jobs where depends_on = array[$p]::bigint[] or id = $vd" >/dev/null
# Held for longer than any wake takes, even on a loaded machine (6 s was
# not, once), then cancelled.
hold_notes 60 "the author's 500 notes" "select 1 from cronq.settle_later l join cronq.jobs j on j.id = l.job_id
    where j.enqueued_by = 'tc_mallory' for key share of l"
cronq run
eq "500 notes held elsewhere: the wake settles another role's noted job, the held notes stay" "0|queued|500" \
    "$RC|$(status_of "$vd")|$(q "select count(*) from cronq.settle_later")"
q "select pg_cancel_backend(pid) from ($(sleepers 60)) s" >/dev/null
wait "$holder"
q "delete from cronq.jobs; delete from cronq.settle_later" >/dev/null
# The note of a job no longer blocked is deleted only where a page can
# lock it: one another transaction holds stays, and the page goes on at once.
d=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
q "insert into cronq.settle_later (job_id) values ($d)" >/dev/null
hold_notes 3 "the note"
page_ms
eq "a held note of a job no longer blocked: left, at once" "1|1" \
    "$(q "select count(*) from cronq.settle_later")|$([ "$ms" -lt 2000 ] && echo 1 || echo "$ms ms")"
wait "$holder"
q "delete from cronq.jobs; delete from cronq.settle_later" >/dev/null
# A parent retried after its success makes its waiting dependants wait for
# it again at once, waiting for a row its author holds locked (only an
# author's or an admin's transaction makes that change). Left to a note,
# the count up was lost when another parent's success counted the job down
# first: it was queued while the retried parent had not run (helper-57).
p1=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
p2=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
d=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p1, $p2])")
q "update cronq.jobs set status = 'succeeded', finished_at = now() where id = $p1" >/dev/null
hold_locked "$d" 2 "a dependant of two parents, one succeeded,"
as tc_mallory "select cronq.retry_jobs(array[$p1::bigint])" >/dev/null
wait "$locker"
q "update cronq.jobs set status = 'succeeded', finished_at = now() where id = $p2" >/dev/null
eq "a parent retried after its success while its dependant is held: the dependant waits for it again, not queued when the other succeeds" \
    "blocked|1|0" "$(q "select status || '|' || waiting_for from cronq.jobs where id = $d")|$(q "select count(*) from cronq.settle_later")"
q "delete from cronq.jobs; delete from cronq.settle_later" >/dev/null
parent_of_30
q "begin; select set_config('cronq.settling', 'on', true); set local cronq.settle_left = 0;
   update cronq.jobs set status = 'succeeded', finished_at = now() where id = $p;
   update cronq.jobs set status = 'queued', finished_at = null where id = $p;
   update cronq.jobs set status = 'succeeded', finished_at = now() where id = $p; commit" >/dev/null
eq "a parent changed three times past the budget before a wake: noted once" 1 \
    "$(q "select count(*) from cronq.settle_parents where job_id = $p")"
# A note a page is taking (locked) does not count: the page's recount
# may have read the parent before this change. A second note is made.
hold_notes 3 "the parent's note, as a page" "select 1 from cronq.settle_parents where job_id = $p for update"
q "begin; select set_config('cronq.settling', 'on', true); set local cronq.settle_left = 0;
   update cronq.jobs set status = 'queued', finished_at = null where id = $p;
   update cronq.jobs set status = 'succeeded', finished_at = now() where id = $p; commit" >/dev/null
wait "$holder"
eq "changed again while a page holds its note: noted again" 2 \
    "$(q "select count(*) from cronq.settle_parents where job_id = $p")"
cronq run
eq "the wake settles it: its 30 dependants queued (and run), nothing noted" "30|0" \
    "$(q "select count(*) from cronq.jobs where status = 'succeeded' and depends_on = array[$p]::bigint[]")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null

# What the wake calls: a cronq_admin member may run cronq run, a cronq_user
# may not call it.
eq "settle_step: a cronq_admin may call it" "false|0" "$(as tc_admin "select more || '|' || settled from cronq.settle_step()")"
check "settle_step: a cronq_user may not" refused tc_mallory "select cronq.settle_step()"
q "delete from cronq.jobs" >/dev/null

# A cancel made from a trigger of the author's own (so nested like the
# walk's), with the walk's error code: its dependants are still settled
# (a first cut of the shortcut above trusted the error code, and left them
# blocked for ever).
p=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
c=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$p])")
g=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$c])")
as tc_mallory "create temp table t (x int);
    create function pg_temp.f() returns trigger language plpgsql as \$\$ begin
        update cronq.jobs set status = 'cancelled', error_code = 'dependency_failed', finished_at = now() where id = $p;
        return null; end \$\$;
    create trigger t after insert on t for each row execute function pg_temp.f();
    insert into t values (1)" >/dev/null
eq "a nested cancel with the walk's error code: its dependants cancelled all the same" "cancelled|cancelled|cancelled" \
    "$(status_of "$p")|$(status_of "$c")|$(status_of "$g")"
q "delete from cronq.jobs" >/dev/null

# --- 2. a hook whose placeholders blow up: a fail job, not a stuck record
big=$(as tc_mallory "select cronq.enqueue('fail', jsonb_build_object('message', repeat('E', 2000)),
    max_attempts => 1, hooks => jsonb_build_object('on_failure', jsonb_build_object('type', 'fail',
    'payload', jsonb_build_object('message', repeat('{error}', 149000)))))")
quoted=$(as tc_mallory "select cronq.enqueue('fail', jsonb_build_object('message', 'it''s \\ \$\$'),
    max_attempts => 1, hooks => jsonb_build_object('on_failure', jsonb_build_object('type', 'sql',
    'payload', jsonb_build_object('sql', 'select {error}, {type}, {schedule} /* {job_id} */'))))")
victim=$(as tc_alice "select cronq.enqueue('noop')")
start=$SECONDS
cronq run --lease 10s
eq "blow-up: the run succeeds" 0 "$RC"
check "blow-up: recorded at once" [ $((SECONDS - start)) -lt 8 ]
eq "blow-up: the job is recorded" dead "$(status_of "$big")"
eq "blow-up: its hook is a refusal saying so" "fail hook_refused tc_mallory" \
    "$(q "select type || ' ' || (payload->>'code') || ' ' || enqueued_by from cronq.jobs where idempotency_key = 'notify:$big:1:failure'")"
eq "blow-up: another role's job ran" succeeded "$(status_of "$victim")"
# An sql hook's values never enter its statement: a first statement sets
# them (quoted literals), the author's text reads them from settings.
eq "quoting: the values set by a first statement, as literals" \
    "select pg_catalog.set_config('cronq.hook_job_id', '$quoted', false), pg_catalog.set_config('cronq.hook_type', 'fail', false), pg_catalog.set_config('cronq.hook_schedule', '', false), pg_catalog.set_config('cronq.hook_status', 'dead', false), pg_catalog.set_config('cronq.hook_error', E'it''s \\\\ \$\$', false);" \
    "$(q "select split_part(payload->>'sql', E'\n', 1) from cronq.jobs where idempotency_key = 'notify:$quoted:1:failure'")"
eq "quoting: the author's statement reads them, none spliced in" \
    "select nullif(pg_catalog.current_setting('cronq.hook_error', true), ''), nullif(pg_catalog.current_setting('cronq.hook_type', true), ''), nullif(pg_catalog.current_setting('cronq.hook_schedule', true), '') /* nullif(pg_catalog.current_setting('cronq.hook_job_id', true), '') */" \
    "$(q "select split_part(payload->>'sql', E'\n', 2) from cronq.jobs where idempotency_key = 'notify:$quoted:1:failure'")"
q "delete from cronq.jobs" >/dev/null

# --- 3. a schedule's hooks run as its author, and only its author writes them
as tc_mallory "select cronq.schedule('tc-m', '0 3 * * *', 'sleep', '{\"seconds\": 0}',
    hooks => '{\"on_success\": {\"type\": \"sql\", \"payload\": {\"sql\": \"select 1\"}}}')" >/dev/null
as tc_alice "select cronq.schedule('tc-a', '0 3 * * *', 'noop', hooks => '{\"on_success\": {\"type\": \"noop\"}}')" >/dev/null
# An admin who takes a schedule over (its type or payload) does not inherit
# its author's hooks: they would run with the admin's rights.
as tc_admin "select cronq.schedule('tc-m', '0 3 * * *', 'noop')" >/dev/null
eq "takeover: the admin is the author, without the hooks" "tc_admin|" \
    "$(q "select created_by || '|' || coalesce(hooks::text, '') from cronq.schedules where name = 'tc-m'")"
# Nor may an admin give another role's schedule hooks (they would run as it).
check "an admin may not set another role's hooks" \
    refused tc_admin "update cronq.schedules set hooks = '{\"on_success\": {\"type\": \"sql\", \"payload\": {\"sql\": \"select 1\"}}}' where name = 'tc-a'"
check "nor through cronq.schedule()" \
    refused tc_admin "select cronq.schedule('tc-a', '0 3 * * *', 'noop', hooks => '{\"on_dead\": {\"type\": \"noop\"}}')"
eq "the author's schedule is unchanged" 'tc_alice|{"on_success": {"type": "noop"}}' \
    "$(q "select created_by || '|' || hooks::text from cronq.schedules where name = 'tc-a'")"
# When it runs is still the admin's to change, and the author's hooks stay.
as tc_admin "update cronq.schedules set timezone = 'Europe/Paris' where name = 'tc-a'" >/dev/null
eq "a zone changed by an admin keeps author and hooks" 'tc_alice|Europe/Paris|true' \
    "$(q "select created_by || '|' || timezone || '|' || (hooks is not null) from cronq.schedules where name = 'tc-a'")"
check "the author changes its hooks" \
    as tc_alice "update cronq.schedules set hooks = '{\"on_failure\": {\"type\": \"noop\"}}' where name = 'tc-a'"
q "delete from cronq.schedules where name like 'tc-%'" >/dev/null

# --- 4. a dependant its author holds locked never holds up the runner
# The record (and the rescue) used to wait on it for as long as the role
# kept its transaction open: nobody's outcome was recorded meanwhile.
parent=$(as tc_mallory "select cronq.enqueue('noop')")
child=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$parent])")
dead=$(as tc_mallory "select cronq.enqueue('fail', '{\"permanent\": true}', max_attempts => 1)")
orphan=$(as tc_mallory "select cronq.enqueue('noop', depends_on => array[$dead])")
hold_locked "$child, $orphan" 6 "its dependants"
victim=$(as tc_alice "select cronq.enqueue('noop')")
start=$SECONDS
cronq run --lease 3s
eq "locked: the run succeeds" 0 "$RC"
check "locked: without waiting for the lock" [ $((SECONDS - start)) -lt 3 ]
eq "locked: the parents' outcomes are recorded" "succeeded dead" \
    "$(status_of "$parent") $(status_of "$dead")"
eq "locked: another role's job ran" succeeded "$(status_of "$victim")"
eq "locked: the held dependants wait to be settled" "blocked blocked 2" \
    "$(status_of "$child") $(status_of "$orphan") $(q "select count(*) from cronq.settle_later")"
wait "$locker"
cronq run
eq "settled at the next wake: one runs, one is cancelled" "succeeded cancelled dependency_failed" \
    "$(status_of "$child") $(q "select status || ' ' || error_code from cronq.jobs where id = $orphan")"
eq "settled: nothing left to settle" 0 "$(q "select count(*) from cronq.settle_later")"

# --- 5. on_recover reads the author's own history of a schedule's name
# A name is free again once its author drops the schedule: another role's
# failed job of that name must not fire this role's on_recover.
as tc_alice "select cronq.schedule('tc-shared', '0 3 * * *', 'fail', '{\"permanent\": true}')" >/dev/null
as tc_alice "select cronq.run_schedule('tc-shared')" >/dev/null
cronq run
as tc_alice "select cronq.unschedule('tc-shared')" >/dev/null
as tc_mallory "select cronq.schedule('tc-shared', '0 3 * * *', 'noop', hooks => '{\"on_recover\": {\"type\": \"noop\"}}')" >/dev/null
sleep 1  # a manual run's key has the second
ran=$(as tc_mallory "select cronq.run_schedule('tc-shared')")
cronq run
eq "recover: another role's failure fires nothing" "succeeded 0" \
    "$(status_of "$ran") $(q "select count(*) from cronq.jobs where idempotency_key = 'notify:$ran:1:recover'")"
q "delete from cronq.schedules where name = 'tc-shared'" >/dev/null

# --- 6. hook_of, the mark that lets fire_hooks' rows past jobs_guard, is
# the owner's alone: a cronq_user has no grant on it, and a role granted
# the whole table (an admin, or a DBA's grant) is refused by jobs_guard,
# so that none writes a job unchecked or in another author's name.
mkrole tc_dba
q "grant insert, select on cronq.jobs to tc_dba; grant usage on schema cronq to tc_dba" >/dev/null
before=$(q "select count(*) from cronq.jobs")
alices=$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_alice'")
forge="insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout, run_at, enqueued_by, hook_of)
       values ('noop', '{}', 'default', 0, 10, '1 hour', now(), 'tc_alice', 1)"
refused tc_mallory "$forge"
eq "hook_of: a cronq_user cannot write it" 0 "$?"
refused tc_admin "$forge"
eq "hook_of: a cronq_admin cannot write it" 0 "$?"
refused tc_dba "$forge"
eq "hook_of: nor a role granted the whole table" 0 "$?"
eq "hook_of: no forged row, none in tc_alice's name" "$before|$alices|0" \
    "$(q "select count(*) from cronq.jobs")|$(q "select count(*) from cronq.jobs where enqueued_by = 'tc_alice'")|$(q "select count(*) from cronq.jobs where hook_of is not null")"
# fire_hooks' rows carry it, with the defaults jobs_guard would have given.
p=$(as tc_alice "select cronq.enqueue('noop', hooks => '{\"on_success\": {\"type\": \"noop\", \"queue\": \"h\"}}')")
cronq run
eq "hook_of: a hook's job names its parent, with its author and defaults" "$p|tc_alice|0|10|01:00:00|{}|true" \
    "$(q "select hook_of || '|' || enqueued_by || '|' || priority || '|' || max_attempts || '|' || timeout || '|' || payload || '|' || (run_at <= now()) from cronq.jobs where idempotency_key = 'notify:$p:1:success'")"
cronq show "$(q "select id from cronq.jobs where idempotency_key = 'notify:$p:1:success'")" --json
eq "hook_of: show --json carries it" "$p" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["hook_of"])' <<<"$OUT")"
q "delete from cronq.jobs" >/dev/null

# --- 6b. occurrence_checked, the mark under which the rows that
# enqueue_occurrences checked itself pass jobs_guard (schema 43), counts
# from the owner alone: a role may write it, and its rows are checked all
# the same (an exec job without cronq_exec, in another author's name).
before=$(q "select count(*) from cronq.jobs")
forge="insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout, run_at, enqueued_by, occurrence_checked)
       values ('exec', '{\"command\": \"true\"}', 'default', 0, 10, '1 hour', now(), 'tc_alice', true)"
refused tc_mallory "$forge"
eq "occurrence_checked: a cronq_user's rows are checked" 0 "$?"
refused tc_admin "$forge"
eq "occurrence_checked: a cronq_admin's too" 0 "$?"
refused tc_dba "$forge"
eq "occurrence_checked: and a role granted the whole table's" 0 "$?"
eq "occurrence_checked: no row written" "$before|0" \
    "$(q "select count(*) from cronq.jobs")|$(q "select count(*) from cronq.jobs where type = 'exec'")"
# An owner's function that writes a job for a role (run_schedule's
# trigger) is checked whatever the role set before calling it: the first
# cut's mark was a setting, and so let through an exec job of an author
# who had lost cronq_exec (helper-84).
q "grant cronq_exec to tc_mallory" >/dev/null
as tc_mallory "select cronq.schedule('tc-exec', '0 0 1 1 *', 'exec', '{\"command\": \"true\"}')" >/dev/null
q "revoke cronq_exec from tc_mallory" >/dev/null
refused tc_mallory "select pg_catalog.set_config('cronq.occurrences_checked', 'on', false); select cronq.run_schedule('tc-exec', true)"
eq "run_schedule of an exec schedule whose author lost cronq_exec: refused, whatever it set" "0|0" \
    "$?|$(q "select count(*) from cronq.jobs where schedule = 'tc-exec'")"
q "delete from cronq.schedules where name = 'tc-exec'" >/dev/null

# fire_hooks, which a cronq_admin may call, fires nothing for an outcome
# without an attempt number (its key would be null: no conflict stops it).
p=$(as tc_alice "select cronq.enqueue('noop', hooks => '{\"on_success\": {\"type\": \"noop\", \"queue\": \"h\"}}')")
as tc_admin "select cronq.fire_hooks(array[$p::bigint], array['succeeded'], array[null::int], array[null::text]);
             select cronq.fire_hooks(array[$p::bigint], array['succeeded'], array[null::int], array[null::text])" >/dev/null
eq "fire_hooks: no job for an outcome without an attempt" 0 "$(q "select count(*) from cronq.jobs where hook_of = $p")"
q "delete from cronq.jobs" >/dev/null

# A page of settle_step recounts each job it takes from all its parents:
# it takes jobs while their parents number 10,000 at most, the first
# whatever its count, and leaves the rest noted (sql/0029; helper-59: 60
# noted jobs of 40,000 parents each made a wake's page ~10 s, and enough of
# them failed every wake before its claim). Three jobs of 6,001 parents
# each (a parent of all three, then 6,000 due in an hour), their counts
# made wrong by hand so that a recount shows: one job a page.
top=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "select count(cronq.enqueue('noop', run_at => now() + interval '1 hour')) from generate_series(1, 6000)" >/dev/null
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array(select id from cronq.jobs where id >= $top order by id))) from generate_series(1, 3)" >/dev/null
deps=$(q "select string_agg(id::text, ',' order by id) from cronq.jobs where status = 'blocked' and cardinality(depends_on) = 6001")
wrong_counts() { q "update cronq.jobs set waiting_for = 1 where id in ($deps)" >/dev/null; }
counts() { q "select string_agg(waiting_for::text, ',' order by id) from cronq.jobs where id in ($deps)"; }
wrong_counts
# And another role's noted job of one parent, younger than them: a page
# takes the jobs of fewest parents first (in id order, an author's old
# jobs of many parents, noted again at each of its cycles, kept it waiting).
ap=$(as tc_alice "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
ad=$(as tc_alice "select cronq.enqueue('noop', depends_on => array[$ap::bigint])")
q "update cronq.jobs set waiting_for = 5 where id = $ad" >/dev/null
q "insert into cronq.settle_later (job_id) select unnest('{$deps,$ad}'::bigint[])" >/dev/null
eq "parents read: a page of notes takes the fewest parents first, and leaves the rest noted" "true|2|1|6001,1,1|2" \
    "$(q "select more || '|' || settled from cronq.settle_step()")|$(q "select waiting_for from cronq.jobs where id = $ad")|$(counts)|$(q "select count(*) from cronq.settle_later")"
eq "parents read: the next page the next job" "true|1|6001,6001,1|1" \
    "$(q "select more || '|' || settled from cronq.settle_step()")|$(counts)|$(q "select count(*) from cronq.settle_later")"
eq "parents read: and the last" "false|1|6001,6001,6001|0" \
    "$(q "select more || '|' || settled from cronq.settle_step()")|$(counts)|$(q "select count(*) from cronq.settle_later")"
# Which 500 notes a page takes: the fewest parents first too. 500 noted
# jobs of 2 parents, older than another role's noted job of one: that one
# is in the first page.
q "delete from cronq.settle_later" >/dev/null
p1=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
p2=$(as tc_mallory "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
as tc_mallory "select count(cronq.enqueue('noop', depends_on => array[$p1, $p2]::bigint[])) from generate_series(1, 500)" >/dev/null
ad=$(as tc_alice "select cronq.enqueue('noop', depends_on => array[$ap::bigint])")
q "update cronq.jobs set waiting_for = 5 where id = $ad" >/dev/null
q "insert into cronq.settle_later (job_id) select id from cronq.jobs where depends_on = array[$p1, $p2]::bigint[] or id = $ad" >/dev/null
eq "parents read: the 500 notes a page takes are those of fewest parents" "1|1" \
    "$(q "select * from cronq.settle_step()" >/dev/null; q "select waiting_for from cronq.jobs where id = $ad")|$(q "select count(*) from cronq.settle_later")"
q "delete from cronq.settle_later" >/dev/null
# A page of a noted parent's dependants: the first recounted, the others
# noted for a later page, the parent's note done.
wrong_counts
q "insert into cronq.settle_parents (job_id) values ($top)" >/dev/null
eq "parents read: a parent's page recounts the first dependant and notes the others" "true|1|6001,1,1|2|0" \
    "$(q "select more || '|' || settled from cronq.settle_step()")|$(counts)|$(q "select count(*) from cronq.settle_later")|$(q "select count(*) from cronq.settle_parents")"
cronq run
eq "parents read: the wake settles the rest" "0|6001,6001,6001|0|0" \
    "$RC|$(counts)|$(q "select count(*) from cronq.settle_later")|$(q "select count(*) from cronq.settle_parents")"
q "delete from cronq.jobs" >/dev/null

# A job depends on 100,000 jobs at most (sql/0029): more is refused before
# any parent is read; 100,000 passes that check (and fails the next: those
# jobs do not exist).
n=$(q "select count(*) from cronq.jobs")
refused tc_mallory "select cronq.enqueue('noop', depends_on => array(select generate_series(1, 100001)::bigint))"
eq "depends_on: 100,001 parents refused" 0 "$?"
match "depends_on: said so" "at most 100000 jobs" \
    "$(as tc_mallory "select cronq.enqueue('noop', depends_on => array(select generate_series(1, 100001)::bigint))" 2>&1)"
match "depends_on: 100,000 pass the count" "does not exist" \
    "$(as tc_mallory "select cronq.enqueue('noop', depends_on => array(select generate_series(1, 100000)::bigint))" 2>&1)"
eq "depends_on: nothing written" "$n" "$(q "select count(*) from cronq.jobs")"

done_testing
