#!/usr/bin/env bash
# Composition (issue 22): hooks and dependencies. Each hook event enqueues
# its job exactly once, in the transaction that records the outcome: under
# 4 runners at once, and under kill -9 of runners (the hook exists iff its
# outcome does); on_recover only after a failure; a hook is its job's
# author's, with the author's rights, and {error} in an sql hook is a
# quoted literal whatever it holds. Dependencies: a chain and a diamond run
# in order, a dead or cancelled parent cancels its dependants down the
# chain, a retried dependant waits again, backfill --then runs once after
# the last backfilled job. Bad specs are refused (65) with nothing written.
# Judged by rows.
. "$(dirname "$0")/lib.sh"

team_cluster app app2 boss
q "grant cronq_user to app, app2; grant cronq_admin to boss" >/dev/null

as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
# en ROLE ARG…: cronq enqueue as ROLE, printing the id
en() { local r=$1; shift; PGUSER=$r "$CRONQ" enqueue "$@"; }
run() { PGUSER=cronq_runner "$CRONQ" run "$@" >/dev/null 2>>"$T_DIR/run.err"; }
# runs until nothing is queued, blocked or failed (failed ones made due at
# once), 4 runners at a time
drain() {
    local i
    for i in $(seq 1 30); do
        run --batch 3 & run --batch 3 & run --batch 3 & run --batch 3 & wait
        q "update cronq.jobs set run_at = now() where status = 'failed'" >/dev/null
        [ "$(q "select count(*) from cronq.jobs where status in ('queued', 'failed', 'blocked', 'running')")" = 0 ] \
            && return 0
    done
    fail "drain: jobs left: $(q "select string_agg(id || ' ' || status || ' ' || type || ' ' || run_at || ' ' || enqueued_by || ' ' || coalesce(depends_on::text, '') || ' ' || coalesce(waiting_for, -1), ', ') from cronq.jobs
                                 where status in ('queued', 'failed', 'blocked', 'running')")"
}
jobs() { q "select count(*) from cronq.jobs"; }
# hooks ID: the events hooks of job ID made, "event:count" sorted
hooks() { q "select coalesce(string_agg(e || ':' || n, ',' order by e), '')
             from (select split_part(idempotency_key, ':', 4) e, count(*) n from cronq.jobs
                   where idempotency_key like 'notify:$1:%' group by 1) x"; }

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null
q "create table public.hooklog (job text, what text, who text default current_user);
   grant select, insert on public.hooklog to app, app2;
   create table public.ctl (v int); insert into public.ctl values (0);
   grant select on public.ctl to app" >/dev/null

# --- bad specs: 65 (78 for a missing grant), nothing written -----------------
n0=$(jobs)
as app enqueue noop --on-dead '{"type": "nope"}'
expect "a hook of an unknown task" 65 "" 'cronq: error: on_dead: unrecognized task type "nope"'
as app enqueue noop --on-success '{"type": "noop", "key": "k"}'
eq "a hook with a field it may not set" 65 "$RC"
as app enqueue noop --on-failure '{"type": '
match "a hook of bad JSON" 'invalid value for --on-failure: on_failure: malformed JSON' "$ERR"
eq "... 65" 65 "$RC"
as app enqueue noop --on-failure '{"type": "sql", "payload": {"sql": "vacuum {type}", "transaction": false}}'
expect "an sql hook with placeholders outside a transaction (it could never run)" 65 "" \
    'cronq: error: on_failure: an sql hook with placeholders must run in a transaction: its values are set by a statement before the SQL, and "transaction": false runs one statement'
eq "... refused by the database too" "refused|on_failure: an sql hook with placeholders must run in a transaction" \
    "$(PGUSER=app "$PSQL" -XAtq -c "select cronq.enqueue('noop', hooks => '{\"on_failure\": {\"type\": \"sql\", \"payload\": {\"sql\": \"vacuum {type}\", \"transaction\": false}}}')" 2>&1 \
       | sed -nE 's/^ERROR:  (on_failure: an sql hook with placeholders must run in a transaction).*/refused|\1/p')"
as app enqueue noop --on-dead '{"type": "exec", "payload": {"command": "page"}}'
eq "an exec hook of a role not in cronq_exec: refused (78)" 78 "$RC"
match "... saying why" 'on_dead: role "app" may not enqueue exec jobs' "$ERR"
out=$(asq app "select cronq.enqueue('noop', hooks => '{\"on_recover\": {\"type\": \"purge\", \"payload\": {\"older_than\": \"30d\"}}}')" 2>&1)
match "SQL: a purge hook of a role that may not purge" 'on_recover: role "app" may not enqueue purge jobs' "$out"
out=$(asq app "select cronq.enqueue('noop', hooks => '{\"on_start\": {\"type\": \"noop\"}}')" 2>&1)
match "SQL: an unknown event" 'unknown hook "on_start"' "$out"
out=$(asq app "select cronq.enqueue('noop', hooks => '{\"on_dead\": {\"type\": \"noop\", \"priority\": 1.0}}')" 2>&1)
match "SQL: a priority that is no integer" 'on_dead: "priority" must be an integer' "$out"
other=$(en app2 noop --in 1h)
as app enqueue noop --after "$other"
expect "a dependency on another role's job" 65 "" \
    "cronq: error: job $other does not exist or belongs to another role: a job depends only on its author's jobs"
as app enqueue noop --after 999999
eq "a dependency on no job" 65 "$RC"
as app enqueue noop --after "$other" --unique-key u1
expect "a unique key and dependencies" 65 "" 'cronq: error: a job with a unique key cannot depend on other jobs'
out=$(asq app2 "select cronq.enqueue('noop', unique_key => 'u1', depends_on => array[$other])" 2>&1)
match "... through SQL too (two blocked holders of a key could not both be unblocked)" \
    'a job with a unique key cannot depend on other jobs' "$out"
as app enqueue noop --after 12x
expect "a dependency that is no id" 65 "" \
    'cronq: error: invalid value for --after: "12x" is not a job id (a positive integer, or several separated by commas)'
cronq_in '{"type": "noop"}
{"type": "noop", "depends_on": ['"$other"']}' enqueue --jsonl
eq "--jsonl: a dependency on another role's job (as app2's neighbour, the owner sees it but it is not its own)" 65 "$RC"
PGUSER=app cronq_in '{"type": "noop", "depends_on": "1"}' enqueue --jsonl
expect "--jsonl: depends_on not an array" 65 "" 'cronq: error: line 1: "depends_on" must be an array of job ids'
out=$(q "insert into cronq.jobs (id, type, enqueued_by, depends_on) values (-5, 'noop', 'app2', array[$other])" 2>&1)
match "a job depending on a later one (what a cycle needs)" "job -5 cannot depend on job $other: a job depends only on jobs enqueued before it \\(no cycles\\)" "$out"
next=$(q "select last_value + 100 from cronq.jobs_id_seq")
out=$(q "insert into cronq.jobs (id, type, depends_on) values ($next, 'noop', array[$next])" 2>&1)
match "a job depending on itself" "job $next does not exist" "$out"
eq "nothing written by any of them" "$((n0 + 1))" "$(jobs)"
as app schedule add s-bad '* * * * *' noop --on-dead '{"type": "nope"}'
eq "schedule add: a hook of an unknown task" 65 "$RC"
out=$(asq app "select cronq.schedule('s-bad', '* * * * *', 'noop', hooks => '{\"on_dead\": {\"type\": \"exec\", \"payload\": {\"command\": \"x\"}}}')" 2>&1)
match "cronq.schedule: an exec hook of a role not in cronq_exec" 'may not enqueue exec jobs' "$out"
eq "no schedule written" 0 "$(q "select count(*) from cronq.schedules where name = 's-bad'")"
as app cancel "$other" >/dev/null 2>&1
q "delete from cronq.jobs" >/dev/null

# --- hooks under 4 runners: once per event ----------------------------------
log_hook() { printf '{"type": "sql", "payload": {"sql": "insert into public.hooklog (job, what) values ({job_id}, {error})"}}'; }
ok=(); bad=(); flaky=()
evil="it's {status} broken\\\\ '); drop table public.hooklog; --"
for i in $(seq 1 8); do
    ok+=("$(en app noop --on-success "$(log_hook)" --on-recover noop --on-failure noop)")
    bad+=("$(en app fail "{\"message\": \"$evil\"}" \
        --max-attempts 2 --on-failure "$(log_hook)" --on-dead noop --on-success noop)")
    q "create sequence if not exists public.flaky_$i; grant usage on public.flaky_$i to app" >/dev/null
    flaky+=("$(en app sql '{"sql": "select 1 / (nextval('"'public.flaky_$i'"') - 1)::int"}' \
        --on-recover "$(log_hook)" --on-failure noop --on-dead noop)")
done
eq "the jobs carry their hooks" '{"on_dead": {"type": "noop"}, "on_failure": {"type": "noop"}, "on_recover": {"type": "sql", "payload": {"sql": "insert into public.hooklog (job, what) values ({job_id}, {error})"}}}' \
    "$(q "select hooks from cronq.jobs where id = ${flaky[0]}")"
drain
per=""
for j in "${ok[@]}"; do per+="$(hooks "$j") "; done
eq "on_success once per success, no recover without a failure" "$(printf 'success:1 %.0s' $(seq 1 8))" "$per"
per=""
for j in "${bad[@]}"; do per+="$(hooks "$j") "; done
eq "on_failure once per failed attempt, on_dead once" "$(printf 'dead:1,failure:2 %.0s' $(seq 1 8))" "$per"
per=""
for j in "${flaky[@]}"; do per+="$(hooks "$j") "; done
eq "a success after a failed attempt: on_recover once" "$(printf 'failure:1,recover:1 %.0s' $(seq 1 8))" "$per"
eq "hook keys name job, attempt and event" "notify:${bad[0]}:1:failure,notify:${bad[0]}:2:dead,notify:${bad[0]}:2:failure" \
    "$(q "select string_agg(idempotency_key, ',' order by idempotency_key) from cronq.jobs where idempotency_key like 'notify:${bad[0]}:%'")"
eq "hook jobs are the author's, and carry no hooks" "app|0" \
    "$(q "select string_agg(distinct enqueued_by, ','), count(*) filter (where hooks is not null)
          from cronq.jobs where idempotency_key like 'notify:%'")"
eq "every sql hook ran as the author" "32|app" \
    "$(q "select count(*), string_agg(distinct who, ',') from public.hooklog")"
eq "{error} reached the sql hook as one literal, quotes and placeholders kept" \
    "2|it's {status} broken\\ '); drop table public.hooklog; --" \
    "$(q "select count(*), min(what) from public.hooklog where job = '${bad[0]}'")"
eq "{job_id} substituted; the recover hook's {error} of a success is NULL" "8|8" \
    "$(q "select count(*), count(*) filter (where what is null) from public.hooklog where job::bigint in ($(IFS=,; echo "${flaky[*]}"))")"

# An operator's retry starts the job's attempts again from 1: its new life's
# events fire again (they had the old life's keys, and fired nothing while
# those hook jobs were kept), numbered on over the lives.
as app retry "${bad[1]}" >/dev/null
eq "a role's retry: the job queued again, its earlier attempts counted" "queued|0|2" \
    "$(q "select status || '|' || attempts || '|' || earlier_attempts from cronq.jobs where id = ${bad[1]}")"
drain
eq "the retried job's second life fires its hooks again, numbered on" \
    "notify:${bad[1]}:1:failure,notify:${bad[1]}:2:dead,notify:${bad[1]}:2:failure,notify:${bad[1]}:3:failure,notify:${bad[1]}:4:dead,notify:${bad[1]}:4:failure" \
    "$(q "select string_agg(idempotency_key, ',' order by idempotency_key) from cronq.jobs where idempotency_key like 'notify:${bad[1]}:%'")"
as app show "${bad[1]}"
match "show: the attempts of its earlier life" $'\nearlier_attempts +2\n' "$OUT"
eq "... each hook job run: the sql hook once per failed attempt of both lives" "dead|4" \
    "$(q "select status from cronq.jobs where id = ${bad[1]}")|$(q "select count(*) from public.hooklog where job = '${bad[1]}'")"
# A job given back (the runner stopped before it began: --max-runtime) was
# not attempted: its life goes on, its keys as if it had never been claimed.
q "delete from public.hooklog" >/dev/null
for i in 1 2 3; do en app noop >/dev/null; done
en app sleep '{"seconds": 1.2}' >/dev/null
gb=$(en app fail '{"message": "x"}' --max-attempts 1 --on-failure noop --on-dead noop)
out=$(PGUSER=cronq_runner "$CRONQ" run -v --batch 10 --max-runtime 300ms 2>&1)
match "the runner gave a job back" 'gave back 1 job not started' "$out"
eq "given back: queued, no attempt counted" "queued|0|0" \
    "$(q "select status || '|' || attempts || '|' || coalesce(earlier_attempts, 0) from cronq.jobs where id = $gb")"
drain
eq "... then dead after its one attempt: the keys of attempt 1" "notify:$gb:1:dead,notify:$gb:1:failure" \
    "$(q "select string_agg(idempotency_key, ',' order by idempotency_key) from cronq.jobs where idempotency_key like 'notify:$gb:%'")"
out=$(asq app "update cronq.jobs set earlier_attempts = 0 where id = ${bad[1]}" 2>&1)
match "a role may not rewrite the count of its job's earlier attempts" 'permission denied for table jobs' "$out"
eq "... the count as it was" 2 "$(q "select earlier_attempts from cronq.jobs where id = ${bad[1]}")"
out=$(q "update cronq.jobs set earlier_attempts = 9223372036854775000 where id = ${bad[1]}" 2>&1)
match "nor may the owner make the keys' arithmetic overflow (the job's outcomes would all fail)" 'jobs_earlier_attempts_check' "$out"
eq "... the count as it was" 2 "$(q "select earlier_attempts from cronq.jobs where id = ${bad[1]}")"
q "delete from cronq.jobs; delete from public.hooklog" >/dev/null

# --- an sql hook's {error} cannot write SQL, even inside the author's quotes -
inj="x\$\$); insert into public.hooklog (job, what) values ('INJECTED', current_user); select (\$\$"
bait=$(en app fail "{\"message\": \"$inj\"}" --max-attempts 1 \
    --on-dead '{"type": "sql", "payload": {"sql": "insert into public.hooklog (job, what) values ({job_id}, $$failed: {error}$$)"}}')
run; run
eq "the hook ran, and what it wrote is the author's text, not the error's SQL" "1|0" \
    "$(q "select count(*) filter (where what like 'failed: %'), count(*) filter (where job = 'INJECTED') from public.hooklog")"
q "delete from cronq.jobs; delete from public.hooklog" >/dev/null

# --- a hook its author may no longer enqueue: the outcome stands ------------
q "grant cronq_exec to app" >/dev/null
gone=$(en app fail --max-attempts 1 --on-dead '{"type": "exec", "payload": {"command": "page", "args": ["{error}"]}}')
q "revoke cronq_exec from app" >/dev/null
run
eq "the outcome is recorded, the hook becomes a fail job saying why" \
    "dead|fail|hook_refused|app|true" \
    "$(q "select j.status || '|' || h.type || '|' || (h.payload ->> 'code') || '|' || h.enqueued_by || '|'
                 || (h.payload ->> 'message' like 'hook on_dead of job $gone could not be enqueued: role \"app\" may not enqueue exec jobs%')
          from cronq.jobs j join cronq.jobs h on h.idempotency_key = 'notify:$gone:1:dead' where j.id = $gone")"
q "delete from cronq.jobs" >/dev/null

# --- kill -9: a hook exists iff its outcome does ----------------------------
for i in $(seq 1 20); do
    as app enqueue sleep '{"seconds": 0.2}' --on-success noop --on-failure noop >/dev/null
done
kills=0
for i in $(seq 1 40); do
    PGUSER=cronq_runner "$CRONQ" run --lease 1s --batch 2 >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 9 + 1))"
    kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
    wait "$pid" 2>/dev/null
    [ "$(q "select count(*) from cronq.jobs where status <> 'succeeded' and idempotency_key is null")" = 0 ] && break
    sleep 1   # the lease of a killed runner's job runs out; the next run rescues it
done
drain
check "runners were killed ($kills)" [ "$kills" -gt 3 ]
eq "every job succeeded, with one success hook each" "20|20" \
    "$(q "select count(*) filter (where status = 'succeeded'),
                 (select count(*) from cronq.jobs h where h.idempotency_key like 'notify:%:success')
          from cronq.jobs where idempotency_key is null")"
eq "one failure hook per failed attempt recorded (lease expired), none without" "0|0" \
    "$(q "select (select count(*) from cronq.job_runs r join cronq.jobs j on j.id = r.job_id
                  where j.idempotency_key is null and r.outcome in ('failed', 'timeout', 'lease_expired')
                    and not exists (select 1 from cronq.jobs h
                                    where h.idempotency_key = 'notify:' || r.job_id || ':' || r.attempt || ':failure')),
                 (select count(*) from cronq.jobs h where h.idempotency_key like 'notify:%:failure'
                    and not exists (select 1 from cronq.job_runs r
                                    where h.idempotency_key = 'notify:' || r.job_id || ':' || r.attempt || ':failure'
                                      and r.outcome in ('failed', 'timeout', 'lease_expired')))")"
q "delete from cronq.jobs" >/dev/null

# --- a schedule's hooks; on_recover after its dead job, once ----------------
as app schedule add rec '0 0 1 1 *' sql '{"sql": "select 1 / (select v from public.ctl)"}' --max-attempts 1 \
    --on-recover "$(log_hook)" --on-dead noop
eq "schedule add --on-recover" 0 "$RC"
eq "the schedule keeps its hooks" '{"on_dead": {"type": "noop"}, "on_recover": {"type": "sql", "payload": {"sql": "insert into public.hooklog (job, what) values ({job_id}, {error})"}}}' \
    "$(q "select hooks from cronq.schedules where name = 'rec'")"
r1=$(PGUSER=app "$CRONQ" schedule run rec); run
q "update public.ctl set v = 1" >/dev/null
sleep 1; r2=$(PGUSER=app "$CRONQ" schedule run rec); run
sleep 1; r3=$(PGUSER=app "$CRONQ" schedule run rec); run
drain
eq "its jobs carry its hooks; dead, then two successes" "dead:true succeeded:true succeeded:true" \
    "$(q "select string_agg(status || ':' || (hooks is not null), ' ' order by id) from cronq.jobs where id in ($r1, $r2, $r3)")"
eq "on_dead for the first, on_recover for the second only" "dead:1|recover:1|" "$(hooks "$r1")|$(hooks "$r2")|$(hooks "$r3")"
eq "the recover hook ran (as app)" "app" "$(q "select who from public.hooklog where job = '$r2'")"
# A retried job of the schedule starts a new life whose keys are new: the
# recovery it already told of is not told again (helper-83), its success is.
as app retry "$r2" >/dev/null
drain
eq "a recovered schedule job retried: on_success again, no second on_recover" "recover:1|succeeded|1" \
    "$(hooks "$r2")|$(q "select status || '|' || earlier_attempts from cronq.jobs where id = $r2")"
out=$(asq app "select cronq.schedule('rec', '0 0 1 1 *', 'noop', hooks => '{}')" 2>&1)
eq "cronq.schedule(hooks => '{}') removes them" "" "$(q "select hooks from cronq.schedules where name = 'rec'")"
q "delete from cronq.jobs; delete from cronq.schedules where name = 'rec'" >/dev/null

# --- dependencies -----------------------------------------------------------
a=$(en app sleep '{"seconds": 0.3}')
b=$(en app sleep '{"seconds": 0.3}' --after "$a")
c=$(en app noop --after "$b")
p2=$(en app sleep '{"seconds": 0.5}')
d=$(en app noop --after "$a,$p2")
eq "dependants wait, blocked, counting their parents" "blocked:1 blocked:1 blocked:2" \
    "$(q "select string_agg(status || ':' || waiting_for, ' ' order by id) from cronq.jobs where id in ($b, $c, $d)")"
as app list --status blocked
match "list: what a blocked job waits for" "$d +blocked +noop .*waiting for $a \\(queued\\), $p2 \\(queued\\)" "$OUT"
as app show "$c"
match "show: waiting_on" "waiting_on +waiting for $b \\(blocked\\)" "$OUT"
as app status
match "status: a BLOCKED column" $'QUEUED +BLOCKED +RUNNING[^\n]*\ndefault +noop +0 +2 ' "$OUT"
drain
eq "a chain runs in order" "t|t" \
    "$(q "select (select finished_at from cronq.jobs where id = $a) <= (select started_at from cronq.jobs where id = $b),
                 (select finished_at from cronq.jobs where id = $b) <= (select started_at from cronq.jobs where id = $c)")"
eq "a diamond's child runs after both parents" "t|succeeded" \
    "$(q "select (select max(finished_at) from cronq.jobs where id in ($a, $p2)) <= started_at, status
          from cronq.jobs where id = $d")"

f1=$(en app fail --max-attempts 1)
f2=$(en app noop --after "$f1")
f3=$(en app noop --after "$f2")
drain
q1=$(en app noop --in 1h)
q2=$(en app noop --after "$q1")
eq "a dead parent cancels its dependants, down the chain" \
    "dead||cancelled|dependency_failed|job $f1, which it depends on, ended dead|cancelled|dependency_failed|job $f2, which it depends on, ended cancelled" \
    "$(q "select string_agg(status || '|' || coalesce(error_code, '') || '|' || coalesce(last_error, ''), '|' order by id)
          from cronq.jobs where id in ($f2, $f3)" | sed "s/^/dead||/")"
eq "... the parent itself dead" dead "$(q "select status from cronq.jobs where id = $f1")"
as app cancel "$q1" >/dev/null
eq "cancelling a parent cancels its blocked dependant" "cancelled|dependency_failed" \
    "$(q "select status || '|' || error_code from cronq.jobs where id = $q2")"
f4=$(en app noop --after "$f1")
eq "a dependant of a job already dead is cancelled at once" "cancelled|dependency_failed" \
    "$(q "select status || '|' || error_code from cronq.jobs where id = $f4")"
as app retry "$f2" >/dev/null
eq "a retried dependant whose parent is dead waits again" "blocked|1" \
    "$(q "select status || '|' || waiting_for from cronq.jobs where id = $f2")"
as app cancel "$f2" >/dev/null
eq "a blocked job is cancelled like a queued one" cancelled "$(q "select status from cronq.jobs where id = $f2")"
out=$(asq app "update cronq.jobs set depends_on = null, waiting_for = 0 where id = $f2" 2>&1)
match "a role may not rewrite its job's dependencies" 'permission denied for table jobs' "$out"
out=$(asq app "update cronq.jobs set hooks = '{\"on_success\": {\"type\": \"noop\"}}' where id = $f2" 2>&1)
match "... nor its hooks" 'permission denied for table jobs' "$out"
out=$(asq boss "update cronq.jobs set hooks = '{\"on_success\": {\"type\": \"sql\", \"payload\": {\"sql\": \"select 1\"}}}' where id = $f2" 2>&1)
match "nor may an admin add a hook to another role's job" "job $f2: its hooks and dependencies are fixed when it is enqueued" "$out"
out=$(asq boss "update cronq.jobs set depends_on = '{}' where id = $f2" 2>&1)
match "... nor change its dependencies" "fixed when it is enqueued" "$out"
eq "... the job as it was" "|{$f1}" "$(q "select coalesce(hooks::text, '') || '|' || depends_on::text from cronq.jobs where id = $f2")"

# SQL and JSONL
s1=$(asq app "select cronq.enqueue('noop', run_at => now() + interval '1 hour')")
s2=$(asq app "select cronq.enqueue('noop', depends_on => array[$s1], hooks => '{\"on_success\": {\"type\": \"noop\"}}')")
printf '{"type": "noop", "depends_on": [%s], "on_dead": {"type": "noop"}}\n' "$s2" | PGUSER=app "$CRONQ" enqueue --jsonl 2>"$T_DIR/jl.err"
eq "SQL and --jsonl: depends_on and hooks" "blocked|{$s1}|{\"on_success\": {\"type\": \"noop\"}} blocked|{$s2}|{\"on_dead\": {\"type\": \"noop\"}}" \
    "$(q "select string_agg(status || '|' || depends_on::text || '|' || hooks::text, ' ' order by id) from cronq.jobs where id > $s1")"
q "delete from cronq.jobs" >/dev/null

# --- backfill --then: once, after the last backfilled job -------------------
as app backfill sleep --from 2026-01-01 --to 2026-01-08 --payload '{"seconds": 0.1}' --then noop -v
eq "backfill --then" 0 "$RC"
then_id=$(q "select id from cronq.jobs where idempotency_key like 'backfill:then:%'")
match "... says which job follows" "then: job $then_id after them" "$(told)"
eq "the then job waits for the 8" "blocked|8" "$(q "select status || '|' || waiting_for from cronq.jobs where id = $then_id")"
as app backfill sleep --from 2026-01-01 --to 2026-01-08 --payload '{"seconds": 0.1}' --then noop -v
match "the same backfill again: the then job exists" "then: job $then_id after them \\(already existed\\)" "$(told)"
drain
eq "it ran once, after the last backfilled job" "1|t" \
    "$(q "select count(*), bool_and(started_at >= (select max(finished_at) from cronq.jobs where type = 'sleep'))
          from cronq.jobs where type = 'noop'")"
as app backfill noop --from 2026-01-01 --to 2026-01-02 --then nope
expect "--then of an unknown task" 65 "" 'cronq: error: --then: unrecognized task type "nope"'

# --- wide fan-out: each parent written once a transaction (schema 34) -------
# 20,000 dependants of one job in one --jsonl, then 5,000 more: each
# transaction writes the parent once, every dependant is in its dependants
# in id order, and its success queues them all. Written row by row, the
# parent took ~1 min for 8,000 (quadratic): past this file's time limit.
q "delete from cronq.jobs" >/dev/null
fp=$(en app noop --in 1h)
other=$(en app2 noop --in 1h)
seq 1 20000 | awk -v p="$fp" '{ print "{\"type\": \"noop\", \"depends_on\": [" p "]}" }' >"$T_DIR/fan.jsonl"
PGUSER=app "$CRONQ" enqueue --jsonl <"$T_DIR/fan.jsonl" >/dev/null
eq "20,000 dependants of one job in one statement" 0 "$?"
seq 1 5000 | awk -v p="$fp" '{ print "{\"type\": \"noop\", \"depends_on\": [" p "]}" }' >"$T_DIR/fan2.jsonl"
eq "5,000 more in one insert: the parent updated once" "5000|1" \
    "$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL
begin;
create temp table l (d jsonb);
\copy l (d) from '$T_DIR/fan2.jsonl'
insert into cronq.jobs (type, payload, depends_on)
    select d->>'type', '{}', array[(d->'depends_on'->>0)::bigint] from l;
set constraints all immediate;
select (select count(*) from l) || '|' || n_tup_upd from pg_stat_xact_user_tables where relid = 'cronq.jobs'::regclass;
commit;
SQL
)"
eq "... every dependant in its dependants once, in id order, blocked on it; no link left" "t|25000|25000|0" \
    "$(q "select dependants = array(select id from cronq.jobs where id > $fp and id <> $other order by id),
                 cardinality(dependants),
                 (select count(*) from cronq.jobs where status = 'blocked' and waiting_for = 1 and depends_on = array[$fp::bigint]),
                 (select count(*) from cronq.plan_links)
          from cronq.jobs where id = $fp")"
printf '{"type": "noop", "depends_on": [%s]}\n{"type": "noop", "depends_on": [%s]}\n' "$fp" "$other" |
    PGUSER=app "$CRONQ" enqueue --jsonl >/dev/null 2>&1
eq "a refused statement (another role's parent) links nothing" "65|25000|0|25002" \
    "$?|$(q "select cardinality(dependants), (select count(*) from cronq.plan_links), (select count(*) from cronq.jobs)
             from cronq.jobs where id = $fp")"
q "update cronq.jobs set run_at = now() where id = $fp" >/dev/null
for _ in $(seq 1 40); do
    run --batch 1000
    [ "$(q "select count(*) from cronq.jobs where status in ('queued', 'blocked', 'running')")" = 0 ] && break
done
eq "the parent's success ran all 25,000" "25001" "$(q "select count(*) from cronq.jobs where status = 'succeeded'")"

# 5,000 calls of cronq.enqueue() in one statement, each a dependant of
# one job: each call is a statement of its own, and the parent is written
# once, at the commit (once a call before: 4,000 took 16 s, quadratic).
# Until then its dependants do not list them.
lp0=$(en app noop --in 1h)
eq "5,000 cronq.enqueue() calls: the parent not written before the commit, then once" "5000|0|-|1" \
    "$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL | tr '\n' '|' | sed 's/|$//'
begin;
select count(cronq.enqueue('noop', depends_on => array[$lp0::bigint])) from generate_series(1, 5000);
select n_tup_upd from pg_stat_xact_user_tables where relid = 'cronq.jobs'::regclass;
select coalesce((select dependants::text from cronq.jobs where id = $lp0), '-');
set constraints all immediate;
select n_tup_upd from pg_stat_xact_user_tables where relid = 'cronq.jobs'::regclass;
commit;
SQL
)"
eq "... every one in its dependants, in id order, blocked on it; nothing left" "t|5000|5000|0|0" \
    "$(q "select dependants = array(select id from cronq.jobs where depends_on = array[$lp0::bigint] order by id),
                 cardinality(dependants),
                 (select count(*) from cronq.jobs where status = 'blocked' and waiting_for = 1 and depends_on = array[$lp0::bigint]),
                 (select count(*) from cronq.plan_links), (select count(*) from cronq.link_commits)
          from cronq.jobs where id = $lp0")"
# A savepoint rolled back takes its links with it; SET CONSTRAINTS ALL
# IMMEDIATE links at each statement's end.
eq "a dependant of a rolled-back savepoint is not linked; one after it is" "1|true" \
    "$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL | tail -n 1
begin;
savepoint a;
select cronq.enqueue('noop', depends_on => array[$lp0::bigint]) is null;
rollback to savepoint a;
select cronq.enqueue('noop', depends_on => array[$lp0::bigint]) as k \\gset
commit;
select cardinality(dependants) - 5000 || '|' || (dependants[5001] = :k) from cronq.jobs where id = $lp0;
SQL
)"
eq "under SET CONSTRAINTS ALL IMMEDIATE, linked at the statement's end" "5002" \
    "$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL | tail -n 1
begin;
set constraints all immediate;
select cronq.enqueue('noop', depends_on => array[$lp0::bigint]) is null;
select cardinality(dependants) from cronq.jobs where id = $lp0;
rollback;
SQL
)"

# A later statement of the transaction that wrote a dependant changes its
# parent before the link is written: the commit counts again what it
# waits for. Retried after its success, the parent is waited for again;
# made succeeded (here by the owner), it is not waited for.
rs=$(en app noop); run --batch 1
rq=$(en app noop --in 1h)
rk=$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL | sed -n 1p
begin;
select cronq.enqueue('noop', depends_on => array[$rs::bigint, $rq::bigint]);
select cronq.retry($rs) is not null;
commit;
SQL
)
eq "a dependant of a job its own transaction then retried after its success waits for both" "queued|blocked|2" \
    "$(q "select (select status from cronq.jobs where id = $rs) || '|' || status || '|' || waiting_for from cronq.jobs where id = $rk")"
ok_rk=$(q "begin;
           insert into cronq.jobs (type, payload, depends_on, enqueued_by) values ('noop', '{}', array[$rq::bigint], 'app') returning id;
           update cronq.jobs set status = 'succeeded', finished_at = now() where id = $rq;
           commit;" | sed -n 1p)
eq "... and one whose parent its transaction then made succeeded is queued" "queued|0" \
    "$(q "select status || '|' || waiting_for from cronq.jobs where id = $ok_rk")"

# A dependant enqueued while a runner records its parent's outcome, in a
# transaction that goes on for a second after it: the parent's row is
# locked from the dependant's count of what it waits for to the commit,
# so the outcome waits, then finds it among the dependants. Repeatable
# read, where the commit's links and count again read the snapshot the
# transaction began with: unlocked, the outcome would commit first, and
# the commit's link of the dependant to its parent would fail (a
# concurrent update); read committed, the count again would catch it.
lp=$(en app sleep '{"seconds": 0.6}')
run --batch 1 &
runner=$!
for _ in $(seq 1 100); do
    [ "$(q "select status from cronq.jobs where id = $lp")" = running ] && break
    sleep 0.05
done
PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "begin isolation level repeatable read" \
    -c "insert into cronq.jobs (type, payload, depends_on)
        select 'noop', (select '{}'::jsonb from pg_sleep(g - 1)), case when g = 1 then array[$lp::bigint] end
        from generate_series(1, 2) g" -c "commit" >/dev/null 2>"$T_DIR/rr.err"
rc=$?
wait "$runner"
eq "a dependant linked while its parent ran: counted running, then settled by its success" "0|succeeded|1|settled" \
    "$rc|$(q "select (select status from cronq.jobs where id = $lp) || '|' || count(*) || '|' ||
                 string_agg(case when status in ('queued', 'succeeded') then 'settled' else status end, ',')
          from cronq.jobs where depends_on = array[$lp::bigint]")"

# A job a conflict kept out (its idempotency key committed by another
# transaction meanwhile: insert ... on conflict do nothing, as concurrent
# runs of a backfill's --then) is not linked to its parents.
kp=$(en app noop --in 1h)
PGUSER=app "$PSQL" -XAtq -c "begin" -c "select cronq.enqueue('noop', key => 'fan:race')" \
    -c "select pg_sleep(1.5)" -c "commit" >/dev/null &
holder=$!
for _ in $(seq 1 100); do
    [ "$(q "select count(*) from pg_stat_activity where usename = 'app' and query like '%pg_sleep(1.5)%'")" = 1 ] && break
    sleep 0.05
done
asq app "insert into cronq.jobs as j (type, payload, idempotency_key, depends_on)
         values ('noop', '{}', 'fan:race', array[$kp::bigint])
         on conflict (idempotency_key) where idempotency_key is not null do nothing" >/dev/null
wait "$holder"
eq "a job kept out by a conflict is not among its parent's dependants" "-|1|0" \
    "$(q "select coalesce(dependants::text, '-'), (select count(*) from cronq.jobs where idempotency_key = 'fan:race'),
                 (select count(*) from cronq.plan_links)
          from cronq.jobs where id = $kp")"

# --- what a statement's author can leave behind (schema 32) -----------------
# A parent cancelled in the statement that writes its dependant (in its
# RETURNING), or in a later one of its transaction, ended before the
# dependant was appended to it: the next wake settles the dependant from
# its parents, as a runner's outcome would have.
cp=$(en app noop --in 1h)
cc=$(asq app "insert into cronq.jobs (type, payload, depends_on) values ('noop', '{}', array[$cp::bigint])
              returning id, cronq.cancel($cp)")
cc=${cc%%|*}
eq "a dependant whose parent its own statement cancelled: blocked until a wake" "cancelled|blocked" \
    "$(q "select (select status from cronq.jobs where id = $cp) || '|' || status from cronq.jobs where id = $cc")"
cp2=$(en app noop --in 1h)
cc2=$(PGUSER=app "$PSQL" -XAtq -v ON_ERROR_STOP=1 <<SQL | sed -n 1p
begin;
select cronq.enqueue('noop', depends_on => array[$cp2::bigint]);
select cronq.cancel($cp2);
commit;
SQL
)
eq "... or a later statement of its transaction" "cancelled|blocked" \
    "$(q "select (select status from cronq.jobs where id = $cp2) || '|' || status from cronq.jobs where id = $cc2")"
run --batch 1
eq "... the next wake cancels it, naming its parent" "cancelled|dependency_failed|job $cp, which it depends on, ended cancelled" \
    "$(q "select status || '|' || error_code || '|' || last_error from cronq.jobs where id = $cc")"
eq "... and the other" "cancelled|dependency_failed|job $cp2, which it depends on, ended cancelled" \
    "$(q "select status || '|' || error_code || '|' || last_error from cronq.jobs where id = $cc2")"
# A dependant of jobs that had already ended is settled as it is written:
# nothing is noted for a wake (a note a parent made each of a job's
# recounts at the wakes: 100,000 parents, 100,000 recounts).
q "update cronq.jobs set status = 'succeeded', finished_at = now() where id = $kp" >/dev/null
qp=$(en app noop --in 1h)
sc=$(en app noop --in 1h --after "$kp,$qp")
dc=$(en app noop --in 1h --after "$cp")
eq "dependants of a succeeded and a queued job, and of a cancelled one: no note for a wake" \
    "blocked|1|cancelled|0" \
    "$(q "select status || '|' || waiting_for || '|' || (select status from cronq.jobs where id = $dc) || '|' ||
                 (select count(*) from cronq.settle_parents) from cronq.jobs where id = $sc")"
# Links a role kept jobs_link from taking (its settings, set by itself):
# its own jobs stay unlinked, and purge (an admin's) deletes the links of
# transactions that ended, not those of one still in progress.
lp2=$(en app noop --in 1h)
asq app "begin; set local cronq.links_taken = '999999999999';
         select cronq.enqueue('noop', depends_on => array[$lp2::bigint]); commit" >/dev/null
asq app "insert into cronq.jobs (type, payload, depends_on) values ('noop', '{}', array[$lp2::bigint])
         returning set_config('cronq.links_left', '', true)" >/dev/null
eq "two links left behind, the job of each not linked" "2|-" \
    "$(q "select count(*) || '|' || coalesce((select dependants::text from cronq.jobs where id = $lp2), '-')
          from cronq.plan_links")"
PGUSER=app "$PSQL" -XAtq -c "begin" -c "set local cronq.links_taken = '999999999999'" \
    -c "select cronq.enqueue('noop', depends_on => array[$lp2::bigint])" -c "select pg_sleep(2)" -c "commit" >/dev/null &
holder=$!
for _ in $(seq 1 100); do
    [ "$(q "select count(*) from pg_stat_activity where usename = 'app' and query like '%pg_sleep(2)%'")" = 1 ] && break
    sleep 0.05
done
as boss purge
eq "an admin's purge sweeps them, while a third is left in a transaction in progress" "0|0" \
    "$RC|$(q "select count(*) from cronq.plan_links")"
wait "$holder"
eq "... which it kept" 1 "$(q "select count(*) from cronq.plan_links")"
as boss purge
eq "... and sweeps once that transaction has ended" "0|0" "$RC|$(q "select count(*) from cronq.plan_links")"

done_testing
