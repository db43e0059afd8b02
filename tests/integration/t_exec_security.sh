#!/usr/bin/env bash
# exec jobs with a hostile payload: the author is a member of cronq_exec and
# writes the payload as it likes, but may only name programs of the exec
# directory. Its env may not change how a program is loaded or interpreted,
# the payload must fit what execve() passes, and nothing the program starts
# outlives its job. Judged by row counts, files and process IDs, not by the
# wording of errors (except where the CLI's one line is the contract).
. "$(dirname "$0")/lib.sh"
migrate
status_of() { q "select status || '|' || coalesce(error_code, '') from cronq.jobs where id = $1"; }
jobs() { q "select count(*) from cronq.jobs"; }
schedules() { q "select count(*) from cronq.schedules"; }
# as_author SQL: one statement as the author, errors dropped.
as_author() { PGUSER=xs_author "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$1" 2>/dev/null; }
# q_in: the statement on stdin (payloads over 128 KiB cannot be arguments).
q_in() { "$PSQL" -XAtq -v ON_ERROR_STOP=1; }
author_in() { PGUSER=xs_author "$PSQL" -XAtq -v ON_ERROR_STOP=1 2>/dev/null; }
# gone PID…: each has ended (kill -0 fails) within 5 s.
gone() {
    local p
    for p in "$@"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || continue 2; sleep 0.1; done
        return 1
    done
}
# wait_files FILE…: each exists and is not empty within 10 s.
wait_files() {
    local f
    for f in "$@"; do
        for _ in $(seq 1 100); do [ -s "$f" ] && continue 2; sleep 0.1; done
        return 1
    done
}

exec_dir="$T_DIR/bin"; mkdir -p "$exec_dir"
chmod 755 "$T_DIR" "$exec_dir"
# bashmark: a bash script that leaves a trace when it runs. With BASH_ENV
# reaching it, bash would first run the author's file, which leaves another.
cat >"$exec_dir/bashmark" <<SH
#!/bin/bash
touch "$T_DIR/ran.\${1:-x}"
SH
printf 'touch "%s/evil-ran"\n' "$T_DIR" >"$T_DIR/evil.sh"
# argsize: how many arguments, how long the first and CRONQ_PAYLOAD are.
cat >"$exec_dir/argsize" <<SH
#!/bin/sh
touch "$T_DIR/argsize-ran"
echo "\$# \${#1} \${#CRONQ_PAYLOAD}"
SH
printf '#!/nonexistent/interpreter\n' >"$exec_dir/badinterp"
cat >"$exec_dir/showenv" <<'SH'
#!/bin/sh
env | grep -E '^(LANG|TZ)=' | sort
SH
# spawn: leaves a sleeper that called setsid() (ignoring SIGTERM) and one
# that was forked twice, writing their process IDs, then exits or hangs.
cat >"$exec_dir/spawn" <<'SH'
#!/bin/sh
setsid sh -c 'trap "" TERM; cut -d" " -f6 /proc/$$/stat > "$OUT/setsid.sid"; echo $$ > "$OUT/setsid.pid"; exec sleep 300' \
    </dev/null >/dev/null 2>&1 &
( sh -c 'echo $$ > "$OUT/double.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 & )
echo $$ > "$OUT/prog.pid"
i=0
while [ ! -s "$OUT/setsid.pid" ] || [ ! -s "$OUT/double.pid" ]; do
    i=$((i + 1)); [ $i -gt 200 ] && exit 9
    sleep 0.05
done
[ "$1" = hang ] && sleep 300
exit 0
SH
chmod 755 "$exec_dir"/*

mkrole xs_author
q "grant cronq_user, cronq_exec to xs_author; grant cronq_exec to postgres" 2>/dev/null
q "grant insert, update, delete on cronq.schedules to xs_author"
check "precondition: BASH_ENV reaching bashmark runs the author's file" \
    bash -c 'BASH_ENV="$1/evil.sh" "$1/bin/bashmark" pre && [ -e "$1/evil-ran" ]' _ "$T_DIR"
rm -f "$T_DIR"/evil-ran "$T_DIR"/ran.*

# --- 1. env: refused at enqueue (65), by INSERT and by UPDATE -------------
# First what the author may do, the same ways: so a refusal below is the
# rule's. (Only cronq's own role may update a job: it tries in the author's
# stead.)
jobs0=$(jobs); sched0=$(schedules)
good=$(PGUSER=xs_author "$CRONQ" enqueue exec '{"command": "bashmark", "args": ["good"]}' --run-at '2100-01-01')
as_author "insert into cronq.jobs (type, payload, run_at) values ('exec', '{\"command\": \"bashmark\"}', '2100-01-01')"
as_author "insert into cronq.schedules (name, cron, type, payload) values ('xs-good', '0 0 1 1 *', 'exec', '{\"command\": \"bashmark\"}')"
q "update cronq.jobs set payload = '{\"command\": \"bashmark\", \"env\": {\"COLOUR\": \"blue\"}}' where id = $good"
jobs0=$((jobs0 + 2)); sched0=$((sched0 + 1))
eq "the author may enqueue, insert and schedule exec jobs; env may be updated" "$jobs0|$sched0|blue" \
    "$(jobs)|$(schedules)|$(q "select payload #>> '{env,COLOUR}' from cronq.jobs where id = $good")"
for name in LD_PRELOAD ld_preload LD_LIBRARY_PATH PERL5OPT Perl5Lib BASH_ENV bash_env BASH_FUNC_x%% PATH path \
            Path ENV IFS SHELLOPTS PYTHONPATH NODE_OPTIONS JAVA_TOOL_OPTIONS GLIBC_TUNABLES HOME PGPASSFILE GIT_SSH_COMMAND \
            TAR_OPTIONS ZIPOPT SSLKEYLOGFILE http_proxy CURL_HOME VIMINIT; do
    payload="{\"command\": \"bashmark\", \"env\": {\"COLOUR\": \"red\", \"$name\": \"$T_DIR/evil.sh\"}}"
    PGUSER=xs_author cronq enqueue exec "$payload"
    if [ "$name" = 'BASH_FUNC_x%%' ]; then
        # Not a variable name at all: refused by the older rule.
        expect "enqueue: env $name" 65 "" 'cronq: error: invalid payload for task "exec": "env" must map variable names (not CRONQ_*) to strings'
    else
        expect "enqueue: env $name" 65 "" "cronq: error: invalid payload for task \"exec\": \"env\" may not set \"$name\": it changes how a program is loaded or interpreted"
    fi
    PGUSER=xs_author cronq schedule add "xs-$RANDOM" '* * * * *' exec "$payload"
    eq "schedule add: env $name refused" 65 "$RC"
    as_author "insert into cronq.jobs (type, payload) values ('exec', '$payload')"
    as_author "select cronq.enqueue('exec', '$payload')"
    as_author "insert into cronq.schedules (name, cron, type, payload) values ('xs-$RANDOM', '* * * * *', 'exec', '$payload')"
    q "update cronq.jobs set payload = '$payload' where id = $good" 2>/dev/null
    as_author "update cronq.schedules set payload = '$payload' where name = 'xs-good'"
done
eq "no job or schedule with a denied variable was stored" "$jobs0|$sched0" "$(jobs)|$(schedules)"
eq "nor written into an existing one" "0|0" \
    "$(q "select count(*) from cronq.jobs, jsonb_object_keys(payload -> 'env') k where k <> 'COLOUR'")|$(q "select count(*) from cronq.schedules, jsonb_object_keys(payload -> 'env') k")"

# The database's rule under a search_path whose "~*" always says no.
q "drop schema if exists xs_author cascade; create schema xs_author authorization xs_author"
as_author "create function xs_author.never(text, text) returns boolean language sql as 'select false';
           create operator xs_author.~* (leftarg = text, rightarg = text, function = xs_author.never)"
as_author "set search_path = xs_author, pg_catalog; insert into cronq.jobs (type, payload) values ('exec', '{\"command\": \"bashmark\", \"env\": {\"LD_PRELOAD\": \"x\"}}')"
eq "a hostile search_path does not let LD_PRELOAD in" "$jobs0" "$(jobs)"
q "drop schema xs_author cascade"

# --- 2. what the payload's env may set -----------------------------------
id=$("$CRONQ" enqueue exec '{"command": "showenv", "env": {"LANG": "fr_FR.UTF-8", "TZ": "Europe/Paris"}}')
LANG=C.UTF-8 TZ=UTC "$CRONQ" run --exec-dir "$exec_dir"
eq "LANG and TZ from env replace the runner's, once each" $'LANG=fr_FR.UTF-8\nTZ=Europe/Paris' \
    "$(q "select output from cronq.job_runs where job_id = $id")"

# --- 3. stored before the rule: dead, and nothing ran --------------------
stored() {  # stored PAYLOAD: a job inserted past the trigger, as before migration 0007; prints its id
    printf '%s\n' "begin; alter table cronq.jobs disable trigger jobs_guard;
        insert into cronq.jobs (queue, type, payload, priority, run_at, max_attempts, timeout, enqueued_by)
        values ('default', 'exec', \$p\$$1\$p\$, 0, now(), 3, '1 minute', 'xs_author');
        alter table cronq.jobs enable trigger jobs_guard; commit;
        select max(id) from cronq.jobs;" | q_in
}
q "update cronq.jobs set status = 'cancelled' where id = $good"
s1=$(stored "{\"command\": \"bashmark\", \"args\": [\"s1\"], \"env\": {\"BASH_ENV\": \"$T_DIR/evil.sh\"}}")
s2=$(stored "{\"command\": \"bashmark\", \"args\": [\"s2\"], \"env\": {\"ld_preload\": \"$T_DIR/evil.so\"}}")
s3=$(stored "{\"command\": \"bashmark\", \"args\": [\"s3\", \"$(head -c 131100 /dev/zero | tr '\0' x)\"]}")
"$CRONQ" run --exec-dir "$exec_dir" 2>/dev/null
for id in $s1 $s2 $s3; do
    eq "stored before the rule: job $id is dead with bad_payload" "dead|bad_payload" "$(status_of "$id")"
done
eq "its error names the variable" 'invalid payload for task "exec": "env" may not set "BASH_ENV": it changes how a program is loaded or interpreted' \
    "$(q "select last_error from cronq.jobs where id = $s1")"
check "no stored job's program ran" [ -z "$(ls "$T_DIR" | grep -E '^(ran\.|evil-ran)')" ]

# --- 4. size: at the limit it runs, one byte over is refused -------------
filler() { head -c "$1" /dev/zero | tr '\0' x; }
empties() { [ "$1" -gt 0 ] && printf '"", %.0s' $(seq 1 "$1"); }
# {"args": [E…, "F"], "command": "argsize"} as jsonb prints it: 36 + 4e + f bytes.
big() { printf '{"args": [%s"%s"], "command": "argsize"}' "$(empties "$1")" "$(filler "$2")"; }
at=$(big 0 131021); over=$(big 0 131022)
id=$("$CRONQ" enqueue exec "$at")
eq "131057 bytes of payload text: enqueued" 0 $?
eq "stored as 131057 bytes of text" 131057 "$(q "select octet_length(payload::text) from cronq.jobs where id = $id")"
"$CRONQ" run --exec-dir "$exec_dir"
eq "and it runs: the program gets it all" "succeeded||1 131021 131057" \
    "$(status_of "$id")|$(q "select output from cronq.job_runs where job_id = $id")"
n=$(jobs)
cronq enqueue exec "$over"
expect "131058 bytes: refused at enqueue" 65 "" 'cronq: error: invalid payload for task "exec": larger than 131057 bytes as JSON text, too large for the CRONQ_PAYLOAD variable (the kernel passes none over 128 KiB)'
printf "insert into cronq.jobs (type, payload) values ('exec', '%s')" "$over" | author_in
printf "insert into cronq.schedules (name, cron, type, payload) values ('xs-big', '* * * * *', 'exec', '%s')" "$over" | author_in
eq "131058 bytes: nothing written by INSERT either" "$n|$sched0" "$(jobs)|$(schedules)"

# 393216 bytes of arguments and environment (26219 arguments) run; one more byte is refused.
at=$(big 26218 26149); over=$(big 26219 26143)
id=$(printf "select cronq.enqueue('exec', '%s')" "$at" | author_in)
check "393216 bytes of arguments: enqueued" [ -n "$id" ]
"$CRONQ" run --exec-dir "$exec_dir"
eq "and run: 26219 arguments" "succeeded||26219 0 131057" "$(status_of "$id")|$(q "select output from cronq.job_runs where job_id = $id")"
n=$(jobs)
cronq enqueue exec "$over"
expect "393217 bytes: refused at enqueue" 65 "" 'cronq: error: invalid payload for task "exec": arguments and environment larger than 393216 bytes (strings with their NULs and 8-byte pointers, CRONQ_PAYLOAD included)'
printf "insert into cronq.jobs (type, payload) values ('exec', '%s')" "$over" | author_in
eq "393217 bytes: nothing written by INSERT either" "$n" "$(jobs)"

# A runner whose stack limit leaves execve() less room than the payload
# needs: E2BIG is the payload's fault, not the program's.
rm -f "$T_DIR/argsize-ran"
id=$("$CRONQ" enqueue exec "$(big 0 131021)")
(ulimit -s 256 && exec "$CRONQ" run --exec-dir "$exec_dir")
eq "E2BIG at run time: dead with payload_too_large" "dead|payload_too_large" "$(status_of "$id")"
check "and the program did not run" [ ! -e "$T_DIR/argsize-ran" ]
id=$("$CRONQ" enqueue exec '{"command": "badinterp"}')
"$CRONQ" run --exec-dir "$exec_dir"
eq "an interpreter that is not there: dead with exec_failed" \
    "dead|exec_failed|could not run badinterp: No such file or directory" \
    "$(status_of "$id")|$(q "select last_error from cronq.jobs where id = $id")"

# --- 5. no descendant outlives its job -----------------------------------
out="$T_DIR/spawn"
spawned() {  # the pid files exist; the setsid sleeper had a session of its own
    wait_files "$out/prog.pid" "$out/setsid.pid" "$out/double.pid" || return 1
    [ "$(cat "$out/setsid.sid")" = "$(cat "$out/setsid.pid")" ]
}
pids() { cat "$out/prog.pid" "$out/setsid.pid" "$out/double.pid" 2>/dev/null | tr '\n' ' '; }
start_spawn() {  # start_spawn MODE [ENQUEUE-ARGS…]: prints the job id
    local mode=$1; shift
    rm -rf "$out"; mkdir -p "$out"
    "$CRONQ" enqueue exec "{\"command\": \"spawn\", \"args\": [\"$mode\"], \"env\": {\"OUT\": \"$out\"}}" "$@"
}
# stop_run PID: wait up to 20 s for a backgrounded cronq to exit (SIGKILL after).
state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo Z; }
stop_run() {
    for _ in $(seq 1 200); do
        [ "$(state "$1")" = Z ] && break
        sleep 0.1
    done
    if [ "$(state "$1")" != Z ]; then
        fail "cronq run (pid $1) did not exit"
        kill -KILL "$1"
    fi
    wait "$1"
}

# The program exits at once, successfully.
id=$(start_spawn exit)
"$CRONQ" run --exec-dir "$exec_dir"
check "exit: a setsid and a double-forked sleeper were started" spawned
eq "exit: the job succeeded" "succeeded|" "$(status_of "$id")"
# shellcheck disable=SC2046
check "exit: no process of the job is left ($(pids))" gone $(pids)

# The job times out.
id=$(start_spawn hang --timeout 2s)
"$CRONQ" run --exec-dir "$exec_dir" --kill-grace 1s
check "timeout: the sleepers were started" spawned
eq "timeout: the job timed out" "failed|timeout" "$(status_of "$id")"
# shellcheck disable=SC2046
check "timeout: no process of the job is left ($(pids))" gone $(pids)

# cronq run gets SIGTERM mid-job.
id=$(start_spawn hang)
"$CRONQ" run --exec-dir "$exec_dir" --grace 1s --kill-grace 1s &
rp=$!
check "SIGTERM: the sleepers were started" spawned
kill -TERM "$rp"
stop_run "$rp"
eq "SIGTERM: the job was given back" "queued|" "$(status_of "$id")"
# shellcheck disable=SC2046
check "SIGTERM: no process of the job is left ($(pids))" gone $(pids)
q "update cronq.jobs set status = 'cancelled' where id = $id"

# cronq run gets SIGKILL mid-job: its supervisor sees the socket close.
id=$(start_spawn hang)
"$CRONQ" run --exec-dir "$exec_dir" &
rp=$!
check "SIGKILL: the sleepers were started" spawned
kill -KILL "$rp"
wait "$rp" 2>/dev/null
# shellcheck disable=SC2046
check "SIGKILL: no process of the job is left ($(pids))" gone $(pids)

# --- values: locale names are no paths, TZ names no file -----------------
jobs0=$(jobs)
for kv in 'LANGUAGE=../../../../tmp/evil' 'LC_MESSAGES=/tmp/x' 'LANG=C%n' 'TZ=/tmp/zone' 'TZ=:/tmp/zone' 'TZ=Europe/../../tmp/z'; do
    payload="{\"command\": \"bashmark\", \"env\": {\"${kv%%=*}\": \"${kv#*=}\"}}"
    PGUSER=xs_author cronq enqueue exec "$payload"
    eq "enqueue: env $kv refused" 65 "$RC"
    as_author "insert into cronq.jobs (type, payload) values ('exec', '$payload')"
    as_author "insert into cronq.schedules (name, cron, type, payload) values ('xs-v$RANDOM', '* * * * *', 'exec', '$payload')"
done
eq "no job or schedule with such a value was stored" "$jobs0|$sched0" "$(jobs)|$(schedules)"

# --- the program cannot reach its runner --------------------------------
# Same OS user, but the runner and the supervisor are not dumpable: no
# /proc environ (credentials), no ptrace, no pidfd_getfd of its sessions.
cat >"$exec_dir/peek" <<'SH'
#!/bin/sh
gp=$(cut -d' ' -f4 /proc/$PPID/stat)
cat /proc/$PPID/environ /proc/$gp/environ 2>/dev/null | tr '\0' '\n' | grep -c XS_SECRET
exit 0
SH
chmod 755 "$exec_dir/peek"
# (root may read any process's /proc: the runner runs as postgres here.)
id=$("$CRONQ" enqueue exec '{"command": "peek"}')
if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- env XS_SECRET=runner-secret PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
        PGDATABASE="$PGDATABASE" "$CRONQ" run --exec-dir "$exec_dir" 2>"$T_DIR/peek.err" \
        || fail "the runner as postgres: $(cat "$T_DIR/peek.err")"
else
    XS_SECRET=runner-secret "$CRONQ" run --exec-dir "$exec_dir" 2>/dev/null
fi
eq "a program reads neither its supervisor's nor its runner's environment" "succeeded|0" \
    "$(q "select j.status || '|' || btrim(r.output, e' \n') from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $id")"

# --- a program that stops its supervisor --------------------------------
cat >"$exec_dir/stopper" <<SH
#!/bin/sh
echo \$\$ > "$T_DIR/stopper.pid"
kill -STOP \$PPID
exec sleep 120
SH
chmod 755 "$exec_dir/stopper"
id=$("$CRONQ" enqueue exec '{"command": "stopper"}' --timeout 1s --max-attempts 1)
timeout -s KILL 60 "$CRONQ" run --exec-dir "$exec_dir" --kill-grace 1s 2>/dev/null
eq "SIGSTOP to the supervisor: the run ends (not killed at 60 s)" 0 "$?"
eq "the job timed out" "dead|timeout" "$(status_of "$id")"
check "and its program is gone" gone "$(cat "$T_DIR/stopper.pid")"

# --- --exec-user: programs without the runner's identity -----------------
# As another user, a program reads none of the runner's files (here a
# root-only file standing for ~/.pgpass) and gets that user's home.
if [ "$(id -u)" -eq 0 ]; then
    echo "runner-secret" >"$T_DIR/pgpass-like"; chmod 600 "$T_DIR/pgpass-like"
    cat >"$exec_dir/who" <<SH
#!/bin/sh
echo "\$(id -u)|\$(id -G)|\$(cat "$T_DIR/pgpass-like" 2>/dev/null || echo unreadable)|\$HOME"
SH
    chmod 755 "$exec_dir/who"
    id=$("$CRONQ" enqueue exec '{"command": "who"}')
    "$CRONQ" run --exec-dir "$exec_dir" --exec-user nobody 2>/dev/null
    eq "--exec-user nobody: its uid, its group only, no runner's file, its home" \
        "succeeded|$(id -u nobody)|$(id -g nobody)|unreadable|$(getent passwd nobody | cut -d: -f6)" \
        "$(q "select j.status || '|' || btrim(r.output, e' \n') from cronq.jobs j join cronq.job_runs r on r.job_id = j.id where j.id = $id")"
    id=$(start_spawn hang)
    chmod 777 "$out"
    "$CRONQ" run --exec-dir "$exec_dir" --exec-user nobody &
    rp=$!
    check "--exec-user: the sleepers were started" spawned
    kill -TERM "$rp"
    stop_run "$rp"
    # shellcheck disable=SC2046
    check "--exec-user, SIGTERM: no process of the job is left ($(pids))" gone $(pids)
    q "update cronq.jobs set status = 'cancelled' where id = $id"
    cronq run --exec-dir "$exec_dir" --exec-user root
    eq "--exec-user root is refused" 64 "$RC"
    cronq run --exec-dir "$exec_dir" --exec-user no-such-user-xs
    expect "--exec-user of no such user" 78 "" 'cronq: error: --exec-user: no such user "no-such-user-xs"'
    runuser -u postgres -- "$CRONQ" run --exec-dir "$exec_dir" --exec-user nobody 2>/dev/null
    eq "--exec-user needs root" 78 "$?"
fi

done_testing
