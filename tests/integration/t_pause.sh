#!/usr/bin/env bash
# Pause and resume (flow control): a paused queue's or type's jobs are not
# claimed, mid-drain too (running ones finish); --until resumes by itself;
# a paused schedule enqueues nothing and its fire times pass; all keys of a
# command or none; bad keys and times refused with nothing written. Who
# may: the runner and cronq_admin any key, a cronq_user only its own
# schedules, every login by password. Judged by rows, not by messages.
. "$(dirname "$0")/lib.sh"

team_cluster app app2 oncall
q "grant cronq_user to app, app2; grant cronq_admin to oncall" >/dev/null

as() { local r=$1; shift; PGUSER=$r cronq "$@"; }
asq() { PGUSER=$1 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$2"; }
run() { PGUSER=cronq_runner "$CRONQ" run "$@"; }
pauses() { q "select coalesce(string_agg(key || '|' || coalesce(until::text, ''), ',' order by key), '') from cronq.pauses"; }

as cronq_runner migrate
eq "migrate" 0 "$RC"
q "update cronq.schedules set enabled = false" >/dev/null

# --- a paused queue and a paused type --------------------------------------
for i in 1 2 3; do as cronq_runner enqueue --queue reports noop; as cronq_runner enqueue noop; done
as cronq_runner enqueue sleep '{"seconds": 0.1}'
as cronq_runner pause queue:reports type:sleep -v
eq "pause two keys" "0|queue:reports paused;type:sleep paused" "$RC|$(told | paste -sd ';')"
eq "both are in cronq.pauses, until resumed" "queue:reports|,type:sleep|" "$(pauses)"
run
eq "the run ends 0" 0 $?
eq "only the jobs of keys not paused ran" "default|noop|succeeded|3;default|sleep|queued|1;reports|noop|queued|3" \
    "$(q "select string_agg(queue || '|' || type || '|' || status || '|' || n, ';' order by queue, type) from
          (select queue, type, status, count(*) n from cronq.jobs group by 1, 2, 3) s")"
# held jobs are neither due nor late: check does not page for a pause
q "update cronq.jobs set run_at = now() - interval '10 minutes' where status = 'queued'" >/dev/null
as cronq_runner check --max-lag 1m,5m
eq "check: jobs held by a pause are not late (exit 0)" 0 "$RC"
match "check: it names the keys paused" '2 keys paused \(queue:reports, \.\.\.\).*paused=2' "$OUT"
as cronq_runner status --json
eq "status: due 0, 4 held, both keys listed" "0|4|queue:reports,type:sleep" \
    "$(q "select j->>'due', j->>'held', (select string_agg(p->>'key', ',') from json_array_elements(j->'paused') p)
          from (select '$OUT'::json j) x")"
as cronq_runner pause queue:reports -v
eq "pausing a paused key again says so" "0|queue:reports still paused, now until resumed" "$RC|$(told)"
as cronq_runner resume queue:reports type:sleep queue:never -v
eq "resume" "0|queue:reports resumed;type:sleep resumed;queue:never was not paused" "$RC|$(told | paste -sd ';')"
eq "cronq.pauses is empty" "" "$(pauses)"
run
eq "after resume every job ran" "7|7" "$(q "select count(*), count(*) filter (where status = 'succeeded') from cronq.jobs")"

# --- mid-drain: nothing more starts; running ones finish ------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
for i in $(seq 1 20); do as cronq_runner enqueue --queue slow sleep '{"seconds": 0.3}'; done
run --concurrency 2 --linger 20s --poll 100ms 2>"$T_DIR/drain.err" &
runner=$!
three_done() { [ "$(q "select count(*) >= 3 from cronq.jobs where status = 'succeeded'")" = t ]; }
check "the drain is under way" poll 20 three_done
as cronq_runner pause queue:slow
# a claim under way as the pause commits may still start what it took (the
# give-back returns what does not start within 250 ms)
paused_at=$(q "select now() + interval '0.5 seconds'")
sleep 1.5
eq "paused mid-drain: no job started after the pause" "0" \
    "$(q "select count(*) from cronq.job_runs where started_at > '$paused_at'")"
eq "paused mid-drain: the running ones finished, none left running" "0" \
    "$(q "select count(*) from cronq.jobs where status = 'running'")"
left=$(q "select count(*) from cronq.jobs where status = 'queued'")
check "paused mid-drain: jobs wait, queued ($left)" [ "$left" -gt 0 ]
# --until: resumed by itself, without a command, by the runner still
# lingering (while another key stays paused)
as cronq_runner pause queue:elsewhere
as cronq_runner pause queue:slow --until "$(q "select now() + interval '2 seconds'")"
eq "--until on a paused key" 0 "$RC"
wait $runner
eq "the lingering run ends 0" 0 $?
eq "resumed by itself at --until: every job done, each once" "20|20|20" \
    "$(q "select count(*), count(*) filter (where status = 'succeeded'), (select count(*) from cronq.job_runs) from cronq.jobs")"
as cronq_runner resume queue:elsewhere queue:slow -v
eq "resume after --until: the one ended by itself was not paused" "queue:elsewhere resumed;queue:slow was not paused" "$(told | paste -sd ';')"

# --- a paused schedule ------------------------------------------------------
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
as cronq_runner schedule add every-minute '* * * * *' noop
# The minute before made due again, as if a minute had passed (what a wake
# decided of it is forgotten: it would decide nothing again).
due() { q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '1 minute', decided_through = null where name = 'every-minute'" >/dev/null; }
due
as cronq_runner pause schedule:every-minute
as cronq_runner status --json
eq "status marks the schedule paused" "true" \
    "$(q "select s->>'paused' from json_array_elements('$OUT'::json->'schedules') s where s->>'name' = 'every-minute'")"
run
eq "a paused schedule enqueues nothing" 0 "$(q "select count(*) from cronq.jobs")"
eq "its fire time passed: next_run_at moved on" t \
    "$(q "select next_run_at > now() from cronq.schedules where name = 'every-minute'")"
as cronq_runner resume schedule:every-minute
due
run
eq "resumed, it enqueues again (and the job ran)" "1|succeeded" \
    "$(q "select count(*) || '|' || string_agg(status, ',') from cronq.jobs")"
as cronq_runner pause schedule:every-minute
out=$(q "update cronq.schedules set name = 'renamed' where name = 'every-minute'" 2>&1)
eq "a paused schedule is not renamed (its pause would stay behind)" "every-minute|schedule:every-minute|" \
    "$(q "select string_agg(name, ',') from cronq.schedules where name <> 'cronq-purge'")|$(pauses)"
q "delete from cronq.schedules where name = 'every-minute'" >/dev/null
eq "a schedule removed takes its pause with it" "" "$(pauses)"

# catchup all: the fire times that came while paused stay skipped, whether
# a wake saw them during the pause or not (runners down), after resume and
# after a pause that ended by itself; those before the pause are not.
q "truncate cronq.jobs, cronq.job_runs" >/dev/null
clear_of_minute_end 20
as cronq_runner schedule add all-of-them '* * * * *' noop --catchup all
as cronq_runner pause schedule:all-of-them
q "update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' where name = 'all-of-them'" >/dev/null
as cronq_runner resume schedule:all-of-them
eq "resumed, it runs from the resume's next second (a fire time before the next wake is not lost)" t \
    "$(q "select next_run_at = date_trunc('second', next_run_at) and next_run_at between now() - interval '3 seconds' and now() + interval '1 second' from cronq.schedules where name = 'all-of-them'")"
run
# (its next run: the resume's second, or, once a wake passed it, the next
# fire time; a wake within that second leaves it, and it is past by now)
eq "resumed after runners were down through the pause: nothing missed is enqueued" "0|true" \
    "$(q "select (select count(*) from cronq.jobs) || '|' || (next_run_at > now() - interval '10 seconds') from cronq.schedules where name = 'all-of-them'")"
# A next run a wake already planned past the resume is kept: a fire time,
# not the resume's second.
as cronq_runner pause schedule:all-of-them
planned=$(q "select date_trunc('minute', now()) + interval '30 minutes'")
q "update cronq.schedules set next_run_at = '$planned' where name = 'all-of-them'" >/dev/null
as cronq_runner resume schedule:all-of-them
eq "resumed before a next run a wake planned: that next run kept" t \
    "$(q "select next_run_at = '$planned' from cronq.schedules where name = 'all-of-them'")"
as cronq_runner pause schedule:all-of-them --until "$(q "select now() + interval '1 hour'")"
# the pause began 150 s before this minute and ended 10 s before it (as if
# no wake came through it): of the six fire times missed, the three before
# the pause and the one after it are enqueued, the two during it skipped
# (its end is fixed to the minute: a run in the minute's first seconds
# decides the same)
q "set session_replication_role = replica;
   update cronq.pauses set paused_at = date_trunc('minute', now()) - interval '150 seconds',
       until = date_trunc('minute', now()) - interval '10 seconds' where key = 'schedule:all-of-them';
   update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' where name = 'all-of-them'" >/dev/null
run
eq "a pause that ended: the fire times before and after it enqueued, those during it skipped" "3|0|1" \
    "$(q "select count(*) filter (where scheduled_for < p.paused_at) || '|'
                 || count(*) filter (where scheduled_for >= p.paused_at and scheduled_for < p.until) || '|'
                 || count(*) filter (where scheduled_for >= p.until)
          from cronq.jobs, cronq.pauses p where p.key = 'schedule:all-of-them'")"
q "delete from cronq.schedules where name = 'all-of-them'" >/dev/null

# --- bad input: refused, nothing written; all keys or none ---------------
for bad in bogus queue: "type:" "schedule:" "queue:a$(printf '\t')b" "queue:a$(printf '\302\205')b" "tenant" ":42" "tenant 1:42" \
           "queue:$(printf 'x%.0s' $(seq 1 250))"; do
    as cronq_runner pause "$bad"
    eq "pause \"$bad\": usage error, nothing written" "64|" "$RC|$(pauses)"
done
long="queue:$(printf 'é%.0s' $(seq 1 200))"
as cronq_runner pause "$long"
eq "a key of 206 characters (406 bytes) is a key" "0|$long|" "$RC|$(pauses)"
as cronq_runner resume "$long"
as cronq_runner pause queue:x --until "2020-01-01 00:00:00+00"
eq "--until in the past: 65, nothing written" "65|" "$RC|$(pauses)"
as cronq_runner pause queue:x --until "not a time"
eq "--until not a time: 65, nothing written" "65|" "$RC|$(pauses)"
as cronq_runner pause queue:x schedule:nope
eq "a schedule that does not exist: 65, and queue:x not paused either" "65|" "$RC|$(pauses)"
out=$(asq cronq_runner "select cronq.pause('nope')" 2>&1)
eq "cronq.pause() refuses a malformed key too" "" "$(pauses)"
match "and says why" "is not a key" "$out"

# --- who may --------------------------------------------------------------
asq app "select cronq.schedule('app-nightly', '0 3 * * *', 'noop')" >/dev/null
asq app2 "select cronq.schedule('app2-nightly', '0 3 * * *', 'noop')" >/dev/null
as app pause schedule:app-nightly
eq "an owner pauses its own schedule" "0|schedule:app-nightly|" "$RC|$(pauses)"
eq "and sees that pause" "schedule:app-nightly" "$(asq app "select string_agg(key, ',') from cronq.pauses")"
as app2 pause schedule:app-nightly
eq "another cronq_user may not: it has no such schedule (65)" "65|schedule:app-nightly|" "$RC|$(pauses)"
eq "nor sees the pause" "" "$(asq app2 "select string_agg(key, ',') from cronq.pauses")"
as app2 resume schedule:app-nightly
eq "nor resumes it" "schedule:app-nightly|" "$(pauses)"
as app pause queue:default
eq "a cronq_user may not pause a queue (78)" "78|schedule:app-nightly|" "$RC|$(pauses)"
as app pause type:noop
eq "nor a type" "78|schedule:app-nightly|" "$RC|$(pauses)"
out=$(asq app "insert into cronq.pauses (key) values ('queue:default')" 2>&1)
eq "nor write the table itself" "schedule:app-nightly|" "$(pauses)"
out=$(asq app "update cronq.pauses set key = 'queue:default'" 2>&1)
eq "nor turn its pause into another key's" "schedule:app-nightly|" "$(pauses)"
as oncall pause queue:default
eq "cronq_admin pauses a queue" "0|queue:default|,schedule:app-nightly|" "$RC|$(pauses)"
eq "a cronq_user sees the pause of a queue (and of its own schedules)" "queue:default,schedule:app-nightly" \
    "$(asq app "select string_agg(key, ',' order by key) from cronq.pauses")"
eq "another, the queue's alone" "queue:default" "$(asq app2 "select string_agg(key, ',' order by key) from cronq.pauses")"
as app resume queue:default
eq "a cronq_user may not resume it (78)" "78|queue:default|,schedule:app-nightly|" "$RC|$(pauses)"
as oncall resume queue:default schedule:app-nightly
eq "cronq_admin resumes any key" "0|" "$RC|$(pauses)"
asq app "insert into cronq.pauses (key, schedule, paused_by, paused_at)
          values ('schedule:app-nightly', 'app-nightly', 'oncall', '2000-01-01')" >/dev/null 2>&1
eq "a cronq_user writes no paused_by (no grant on the column)" "" "$(pauses)"
asq oncall "insert into cronq.pauses (key, schedule, paused_by, paused_at)
          values ('schedule:app-nightly', 'app-nightly', 'app', '2000-01-01')" >/dev/null
eq "who paused and when is the database's word" "oncall|true" \
    "$(q "select paused_by || '|' || (paused_at > now() - interval '1 minute') from cronq.pauses where key = 'schedule:app-nightly'")"
asq app "select cronq.unschedule('app-nightly')" >/dev/null
eq "a schedule removed takes its pause with it" "" "$(pauses)"

# Resuming a pause that ended by itself reads back when it began: the fire
# time planned inside it (no wake came since) moves to its end. (The pause
# is dated back by hand, past the trigger that stamps it.)
as cronq_runner schedule add ended-pause '0 4 * * *' noop
as cronq_runner pause schedule:ended-pause --until "$(q "select now() + interval '1 hour'")"
q "begin; alter table cronq.pauses disable trigger pauses_stamp;
   update cronq.pauses set paused_at = now() - interval '10 minutes', until = now() - interval '1 minute'
   where key = 'schedule:ended-pause';
   alter table cronq.pauses enable trigger pauses_stamp; commit" >/dev/null
q "update cronq.schedules set next_run_at = now() - interval '5 minutes' where name = 'ended-pause'" >/dev/null
ended=$(q "select until from cronq.pauses where key = 'schedule:ended-pause'")
as cronq_runner resume schedule:ended-pause -v
eq "resumed after it ended: not paused, its fire time moved to the pause's end" \
    "0|schedule:ended-pause was not paused|t|0" \
    "$RC|$(told)|$(q "select next_run_at = '$ended' from cronq.schedules where name = 'ended-pause'")|$(q "select count(*) from cronq.pauses")"

done_testing
