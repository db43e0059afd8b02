#!/usr/bin/env bash
# A server that speaks German (lc_messages = de_DE.UTF-8). Whether a login
# as a job's author was refused is told by the SQLSTATE and the server
# routine that raised it, which are never translated, not by the words of
# the message: an author the runner cannot log in as has its sql job dead
# (permission_denied) and the wake goes on; an author at its CONNECTION
# LIMIT, or whose own defaults keep its sessions from starting, is retried
# later, even when it shapes its failure to look like a server's that gives
# no session (the runner asks the server again); a server full for everyone
# is the runner's trouble, and the job is given back. Statements' errors
# too: a --jsonl line the server refuses is named, another role's schedule
# is told from a missing grant. Its own cluster, SCRAM passwords (under
# trust no login is ever refused), the locale built in this test's
# directory (localedef, LOCPATH): nothing of the machine's is changed.
. "$(dirname "$0")/lib.sh"

loc="$T_DIR/locale"
rm -rf "$loc"
mkdir -p "$loc"
localedef -i de_DE -f UTF-8 "$loc/de_DE.UTF-8" >"$T_DIR/localedef.log" 2>&1
[ -d "$loc/de_DE.UTF-8/LC_MESSAGES" ] ||
    { fail "localedef de_DE.UTF-8 (the locales package): $(tail -n 2 "$T_DIR/localedef.log")"; done_testing; exit 1; }
chmod -R a+rX "$loc"
# 12 sessions, 3 of them the superuser's alone: 9 for everyone else.
export LOCPATH="$loc" PG_OPTS="-c lc_messages=de_DE.UTF-8 -c max_connections=12"
password_cluster locdb de_ok de_lim de_wrong de_lib de_warn de_forge de_ro
unset LOCPATH PG_OPTS
"$PSQL" -XAtq -d postgres -c "create database locdb" >/dev/null || fail "create database locdb"
# Else this file proves nothing.
match "the server speaks German" "Syntaxfehler" "$("$PSQL" -XAtq -c "selec 1" 2>&1)"
migrate
q "create role de_ok login password 'de_ok-pw'; create role de_lim login password 'de_lim-pw' connection limit 1;
   create role de_wrong login password 'not-the-runners'; create role de_nologin nologin;
   create role de_lib login password 'de_lib-pw'; create role de_warn login password 'de_warn-pw';
   create role de_forge login password 'de_forge-pw'; create role de_ro login password 'de_ro-pw';
   grant cronq_user to de_ok, de_lim, de_wrong, de_nologin, de_lib, de_warn, de_forge, de_ro; grant de_nologin to de_ok;
   create table t (who text); grant insert on t to de_ok, de_lim, de_wrong, de_nologin, de_lib, de_warn, de_forge, de_ro" >/dev/null

as() {  # as ROLE PASSWORD SQL
    PGPASSWORD=$2 "$PSQL" -XAtq -v ON_ERROR_STOP=1 -h "$PGHOST" -U "$1" -c "$3"
}
job='{"sql": "insert into t values (session_user)"}'
enq() { as "$1" "$2" "select cronq.enqueue('sql', '$job'::jsonb)"; }
status_of() { q "select status || '|' || coalesce(error_code, '') || '|' || attempts from cronq.jobs where id = $1"; }
holders=()
hold() {  # hold ROLE PASSWORD N [AT_LEAST]: N sessions of ROLE tried, open until release
    local i
    # the sessions of what ran before gone first: a backend still ending
    # takes a slot (under ASan's load, an 8th holder once found none)
    wait_for "the sessions before gone" 10 \
        "select count(*) = 0 from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()" ||
        fail "sessions left before holding: $(q "select string_agg(usename || ':' || state, ' ') from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()")"
    for i in $(seq "$3"); do
        PGPASSWORD=$2 "$PSQL" -XAtq -h "$PGHOST" -U "$1" -c "select pg_sleep(60)" >/dev/null 2>&1 &
        holders+=($!)
    done
    wait_for "$1's sessions" 10 \
        "select count(*) >= ${4:-$3} from pg_stat_activity where usename = '$1' and query like 'select pg_sleep%'" ||
        fail "${4:-$3} sessions of $1 did not open: $(q "select string_agg(usename || ':' || state, ' ') from pg_stat_activity where backend_type = 'client backend'")"
}
release() {
    kill "${holders[@]}" 2>/dev/null
    wait "${holders[@]}" 2>/dev/null
    holders=()
    q "select pg_terminate_backend(pid) from pg_stat_activity where query like 'select pg_sleep%'" >/dev/null
}

# --- refused logins, and an author at its own limit ---------------------
# The refused first: a runner that took them for its own trouble would
# stop there and give back the rest.
wrong=$(enq de_wrong not-the-runners)
nologin=$(as de_ok de_ok-pw "set role de_nologin; select cronq.enqueue('sql', '$job'::jsonb)")
lim=$(enq de_lim de_lim-pw)
ok=$(enq de_ok de_ok-pw)
noop=$(q "select cronq.enqueue('noop', '{}')")
hold de_lim de_lim-pw 1
cronq run
release
eq "the wake ends well" 0 "$RC"
eq "a wrong password in the runner's file: dead, permission_denied" "dead|permission_denied|1" "$(status_of "$wrong")"
eq "a NOLOGIN author: dead, permission_denied" "dead|permission_denied|1" "$(status_of "$nologin")"
eq "an author at its connection limit: failed, to be retried" "failed|connection|1" "$(status_of "$lim")"
eq "the jobs after them ran" "succeeded|succeeded" "$(q "select string_agg(status, '|' order by id) from cronq.jobs where id in ($ok, $noop)")"
eq "only the author who could log in wrote" "de_ok" "$(q "select string_agg(who, ',') from t")"
err=$(q "select last_error from cronq.jobs where id = $wrong")
match "the refusal is the server's own words" "Passwort-Authentifizierung.*fehlgeschlagen" "$err"
match "and says what to configure" 'cannot log in as role "de_wrong".*~/.pgpass' "$err"
check "without the SQLSTATE or the server's source location in it" \
    bash -c '! grep -qE "28P01|LOCATION|miscinit|auth\.c" <<<"$0"' "$err"
eq "the wake is recorded as ended well" 0 "$(q "select exit_status from cronq.wakes order by id desc limit 1")"

# A role's name is quoted in the refusal: a NOLOGIN role named like a
# role at its limit's code (a DBA's doing; cronq_user cannot name roles),
# whose password the runner has, is still refused. Its refusal is raised
# where a role's limit is.
odd='de_x:  53300: y'
q "create role \"$odd\" nologin password 'odd-pw'; grant cronq_user to \"$odd\"; grant \"$odd\" to de_ok" >/dev/null
printf '*:*:*:de_x\\:  53300\\: y:odd-pw\n' >>"$PGPASSFILE"
oddjob=$(as de_ok de_ok-pw "set role \"$odd\"; select cronq.enqueue('sql', '$job'::jsonb)")
cronq run
eq "a role named like a limit's code: dead, permission_denied" "dead|permission_denied|1" "$(status_of "$oddjob")"
eq "its wake ends well" 0 "$RC"

# Its limit free again, the author's job runs at its retry.
q "update cronq.jobs set run_at = now() where id = $lim" >/dev/null
cronq run
eq "the limited author's job ran once it could log in" "succeeded||2" "$(status_of "$lim")"
eq "and wrote as that author" "de_lim,de_ok" "$(q "select string_agg(who, ',' order by who) from t")"

# A role may set its own sessions' defaults: one that cannot start (a
# library that does not load, 58P01) is its own failure, retried, not the
# runner's: the wake goes on.
lib=$(enq de_lib de_lib-pw)
as de_lib de_lib-pw "alter role current_user set local_preload_libraries = 'nope'" >/dev/null
after=$(q "select cronq.enqueue('noop', '{}')")
cronq run
eq "a role whose sessions cannot start: its job failed, to be retried" "failed|connection|1" "$(status_of "$lib")"
eq "the wake went on" "0|succeeded" "$RC|$(q "select status from cronq.jobs where id = $after")"
# The author shapes its own login's failure: a library whose name quotes
# a line of a server that is starting (57P03), or its sessions read-only
# where the runner's conninfo asks for read-write (libpq's own refusal, no
# code). Either looks like no session to be had; the runner asks the
# server again on a session of its own, and it is the author's failure.
forge=$(enq de_forge de_forge-pw)
as de_forge de_forge-pw "alter role current_user set local_preload_libraries = E'\"x\nFATAL:  57P03: the database system is starting up\"'" >/dev/null
ro=$(enq de_ro de_ro-pw)
as de_ro de_ro-pw "alter role current_user set default_transaction_read_only = on" >/dev/null
after=$(q "select cronq.enqueue('noop', '{}')")
cronq run --db "host=$PGHOST port=$PGPORT dbname=locdb target_session_attrs=read-write"
eq "a forged code of a starting server: the author's failure, retried" "failed|connection|1" "$(status_of "$forge")"
eq "sessions read-only where read-write is asked: the author's failure" "failed|connection|1" "$(status_of "$ro")"
eq "and the wake went on" "0|succeeded" "$RC|$(q "select status from cronq.jobs where id = $after")"

# A warning its session starts with (a bad value of its own default) is
# logged as every notice is: its text cannot forge a line of the runner's.
as de_warn de_warn-pw "alter role current_user set default_tablespace = E'nope\ncronq: error: forged\n'" >/dev/null 2>&1
warn=$(enq de_warn de_warn-pw 2>/dev/null)
cronq run
eq "a session that starts with a warning runs its job" "succeeded||1" "$(status_of "$warn")"
check "the warning's text forges no line" bash -c '! grep -q "^cronq: error: forged" <<<"$0"' "$ERR"
match "and is logged, on one line" 'cronq: warning: .*nope cronq: error: forged' "$ERR"

# --- a server full for everyone: the runner's trouble --------------------
# Every slot but the superuser's taken (the 9th holder may find one taken
# by a superuser's session): the author's login fails with the same
# SQLSTATE as a role's limit (53300), raised elsewhere.
full=$(enq de_ok de_ok-pw)
hold de_wrong not-the-runners 9 8
cronq run
release
eq "a full server: the runner stops and says so (75)" 75 "$RC"
eq "the job is given back, its attempt not counted" "queued||0" "$(status_of "$full")"
match "naming the server's reason" "could not open a database session.*Verbindungen" "$ERR"
cronq run
eq "and runs at the next wake" "succeeded||1" "$(status_of "$full")"
# The database's own CONNECTION LIMIT reached (a runner with SUPERUSER is
# not held to it; 53300 again, raised elsewhere): no author gets a
# session, the runner's trouble.
dbfull=$(enq de_ok de_ok-pw)
q "alter database locdb connection limit 0"
cronq run
q "alter database locdb connection limit -1"
eq "the database's limit reached: given back, 75" "75|queued||0" "$RC|$(status_of "$dbfull")"
cronq run
eq "and runs once there is room" "succeeded||1" "$(status_of "$dbfull")"

# --- statements' errors judged by SQLSTATE and routine too ---------------
# A --jsonl line the server refuses is named by its line: COPY's context
# says "COPY jobs, Zeile 5" here.
n=$(q "select count(*) from cronq.jobs")
cronq_in $'{"type":"noop"}\n{"type":"noop"}\n{"type":"noop"}\n\n{"type":"noop","run_at":"not a time"}\n' enqueue --jsonl
eq "a line the server refuses: 65" 65 "$RC"
eq "named by its line, in the server's words" \
    'cronq: error: line 5: ungültige Eingabesyntax für Typ timestamp with time zone: »not a time«' "$ERR"
eq "and nothing written" "$n" "$(q "select count(*) from cronq.jobs")"
ok_db="host=$PGHOST port=$PGPORT dbname=locdb user=de_ok"
cronq_in $'{"type":"noop"}\n{"type":"noop","run_at":"not a time"}\n' enqueue --jsonl --db "$ok_db"
eq "a role under row-level security (its lines staged first): the line named too" \
    '65|cronq: error: line 2: ungültige Eingabesyntax für Typ timestamp with time zone: »not a time«' "$RC|$ERR"
# Another role's schedule: row-level security hides it, not its name.
lim_db="host=$PGHOST port=$PGPORT dbname=locdb user=de_lim"
cronq schedule add de-nightly '0 3 * * *' noop --db "$ok_db"
eq "de_ok's schedule" "0|de_ok" "$RC|$(q "select created_by from cronq.schedules where name = 'de-nightly'")"
cronq schedule add de-nightly '* * * * *' noop --replace --db "$lim_db"
eq "another role cannot replace it: 65, its name taken" \
    '65|cronq: error: schedule "de-nightly" belongs to another role' "$RC|$(head -n 1 <<<"$ERR")"
eq "and it is unchanged" "0 3 * * *|de_ok" "$(q "select cron || '|' || created_by from cronq.schedules where name = 'de-nightly'")"

# --- through PgBouncer ---------------------------------------------------
# PgBouncer passes every error on as 08P01, without the server's routine:
# a refusal in German, or a role whose sessions cannot start, is a failed
# attempt of its author's, asked again on the runner's own session, and
# the wake goes on.
if ! command -v pgbouncer >/dev/null; then
    fail "pgbouncer missing (scripts/deps.sh installs it)"
else
    q "create role de_nl2 nologin password 'de_nl2-pw'; create role de_lib2 login password 'de_lib2-pw';
       grant cronq_user to de_nl2, de_lib2; grant de_nl2 to de_ok; grant insert on t to de_nl2, de_lib2" >/dev/null
    pgbouncer_start session "$(printf '"postgres" "%s"\n"de_lib2" "de_lib2-pw"\n"de_nl2" "de_nl2-pw"\n' "$(cat "$T_DIR/superpw")")"
    q "update cronq.jobs set status = 'cancelled', finished_at = now() where status in ('queued', 'failed')" >/dev/null
    lib2=$(enq de_lib2 de_lib2-pw)
    as de_lib2 de_lib2-pw "alter role current_user set local_preload_libraries = 'nope'" >/dev/null
    nl2=$(as de_ok de_ok-pw "set role de_nl2; select cronq.enqueue('sql', '$job'::jsonb)")
    after=$(q "select cronq.enqueue('noop', '{}')")
    cronq run --db "host=127.0.0.1 port=$bport dbname=locdb user=postgres"
    eq "pgbouncer: the wake goes on" "0|succeeded" "$RC|$(q "select status from cronq.jobs where id = $after")"
    eq "pgbouncer: a role whose sessions cannot start: failed, retried" "failed|connection|1" "$(status_of "$lib2")"
    eq "pgbouncer: a refusal in German (08P01, no routine): failed, retried" "failed|connection|1" "$(status_of "$nl2")"
    match "pgbouncer: its words kept" "Berechtigung" "$(q "select last_error from cronq.jobs where id = $nl2")"
    pgbouncer_stop
fi

# --- the runner's own login refused -------------------------------------
PGPASSWORD=wrong cronq run --db "host=$PGHOST port=$PGPORT dbname=locdb user=de_nobody"
eq "the runner's own refused login: unavailable (69)" 69 "$RC"
match "one line, the server's words" "^cronq: error: could not connect to database: .*FATAL:  Passwort-Authentifizierung f.r Benutzer .de_nobody. fehlgeschlagen$" "$ERR"
eq "and no more" 1 "$(printf '%s\n' "$ERR" | wc -l)"

done_testing
