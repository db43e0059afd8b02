#!/usr/bin/env bash
# Never hang. A black-hole server (a listener that accepts TCP and never
# says a word): cronq check and cronq run give up after the default 10 s
# connect timeout (UNKNOWN 3 and 69, one line, no password), or after the
# conninfo's connect_timeout (keyword and URI) or $PGCONNECT_TIMEOUT; a
# SIGTERM or SIGINT while connecting ends cronq run at once. TCP keepalives
# are on by default. A server that goes silent mid-run (the link of a
# runner in its own network namespace cut while a job runs) ends the run
# with 75 in bounded time, writing nothing; skipped, saying why, where
# network namespaces are not permitted. A server process that stops
# answering (its kernel still acknowledging) does not hold up SIGTERM; and
# with no signal, no statement of cronq run's own waits longer than the
# lease: the runner's own backend sent SIGSTOP mid-job, the run carries on
# on a new connection; the postmaster stopped too, the run ends with 75
# and one line, and the job, left leased, is rescued and finished by the
# next run. A row another session holds locked for longer than the lease
# holds up neither the heartbeat nor the rescue. Every cronq call is
# bounded (timeout 40), so a hang fails here, not at the file's time limit.
. "$(dirname "$0")/lib.sh"
migrate

# A listener that accepts and holds every connection, silent; its port.
cat >"$T_DIR/blackhole.py" <<'EOF'
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
EOF
# A TCP proxy: listens on ADDR, forwards each connection to 127.0.0.1:PORT.
cat >"$T_DIR/proxy.py" <<'EOF'
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c = s.accept()[0]
    u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
EOF

pids=()
ns=; host_if=
stopped=()   # server processes sent SIGSTOP: always sent SIGCONT, however the test ends
resume() {
    [ ${#stopped[@]} -gt 0 ] && kill -CONT "${stopped[@]}" 2>/dev/null
    stopped=()
}
cleanup() {
    local p
    resume
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$host_if" ] && ip link del "$host_if" 2>/dev/null
    [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT

# start_listener SCRIPT ADDR [ARG]: starts it in the background, sets PORT.
start_listener() {
    local out="$T_DIR/listener.$RANDOM"
    python3 "$T_DIR/$1" "$2" ${3:+"$3"} >"$out" &
    pids+=($!)
    for _ in $(seq 1 50); do [ -s "$out" ] && break; sleep 0.1; done
    PORT=$(cat "$out")
}

# timed ARGS…: cronq ARGS… bounded to 40 s; RC, OUT, ERR and MS (elapsed).
timed() {
    local t0=$(date +%s%N)
    OUT=$(timeout -s KILL 40 "$CRONQ" "$@" 2>"$T_DIR/stderr"); RC=$?
    ERR=$(cat "$T_DIR/stderr")
    MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# between DESC LOW HIGH: MS within [LOW, HIGH] ms.
between() { check "$1 (${MS} ms)" [ "$MS" -ge "$2" -a "$MS" -le "$3" ]; }
# hold_locks DESC SECONDS WHERE: another session holds the rows of cronq.jobs
# matching WHERE locked (FOR UPDATE) for SECONDS, in the background (its pid
# in locker); returns once it does.
hold_locks() {
    "$PSQL" -XAtq -c "begin" -c "select id from cronq.jobs where $3 for update" -c "select pg_sleep($2)" \
        -c "commit" >/dev/null 2>&1 &
    locker=$!
    check "$1: the other session holds the lock" wait_for "lock" 5 \
        "select exists ($(sleepers "$2"))"
}

start_listener blackhole.py 127.0.0.1
hole=$PORT
id=$("$CRONQ" enqueue noop '{}')
check "the black hole listens" [ -n "$hole" ]

# The default: 10 s, one line naming the problem, no password.
timed run --db "host=127.0.0.1 port=$hole user=app password=sekrit dbname=app"
expect_rc_err "run, default timeout: 69, one line" 69 '^cronq: error: could not connect to database: timeout expired: no answer from 127\.0\.0\.1:[0-9]+ within 10 s'
between "run, default timeout: gives up after 10 s" 9500 13000
check "run, default timeout: no password in the message" bash -c "! grep -q sekrit '$T_DIR/stderr'"

timed check --db "postgresql://app:sekrit@127.0.0.1:$hole/app"
eq "check, default timeout: UNKNOWN" 3 "$RC"
match "check, default timeout: one UNKNOWN line" '^CRONQ UNKNOWN - (timed out after 10s connecting to the database|could not connect to database: timeout expired)' "$OUT"
eq "check, default timeout: one line" 1 "$(printf '%s\n' "$OUT" | grep -c .)"
between "check, default timeout: gives up after 10 s" 9500 13000
check "check: no password in the line" bash -c "! grep -q sekrit <<<'$OUT'"

# The conninfo's connect_timeout, as a keyword and in a URI, and $PGCONNECT_TIMEOUT.
timed run --db "host=127.0.0.1 port=$hole connect_timeout=2"
expect_rc_err "run, connect_timeout=2: 69" 69 'timeout expired: no answer from 127\.0\.0\.1:[0-9]+ within 2 s'
between "run, connect_timeout=2: after 2 s" 1800 4000
timed run --db "postgresql://app:sekrit@127.0.0.1:$hole/app?connect_timeout=2"
expect_rc_err "run, URI connect_timeout=2: 69" 69 'timeout expired: .* within 2 s'
between "run, URI connect_timeout=2: after 2 s" 1800 4000
PGCONNECT_TIMEOUT=2 timed run --db "host=127.0.0.1 port=$hole"
expect_rc_err "run, PGCONNECT_TIMEOUT=2: 69" 69 'timeout expired: .* within 2 s'
between "run, PGCONNECT_TIMEOUT=2: after 2 s" 1800 4000
timed check --db "host=127.0.0.1 port=$hole connect_timeout=2"
expect "check, connect_timeout=2: UNKNOWN, naming the problem" 3 \
    "CRONQ UNKNOWN - could not connect to database: timeout expired: no answer from 127.0.0.1:$hole within 2 s (connect_timeout)" ""
between "check, connect_timeout=2: after 2 s" 1800 4000
timed run --db "host=127.0.0.1 port=$hole connect_timeout=abc"
expect_rc_err "connect_timeout=abc: a usage error" 64 'invalid integer value "abc" for connection option "connect_timeout"'

# A signal 1 s into the connection: cronq run ends at once, as a stop before
# its first claim does (exit 0), whatever the timeout.
# (timeout --foreground: the signal goes to cronq alone. Without it, timeout
# sends it on to its whole process group as well, which under make asan
# includes LeakSanitizer's tracer checking leaks at cronq's exit: it hung
# there, once in ~60 tries on a loaded machine.)
for sig in TERM INT; do
    t0=$(date +%s%N)
    timeout --foreground -s KILL 40 "$CRONQ" run --db "host=127.0.0.1 port=$hole connect_timeout=30" 2>"$T_DIR/sig.err" &
    pid=$!
    sleep 1
    t1=$(date +%s%N)
    kill -$sig $pid
    wait $pid; rc=$?
    ms=$(( ($(date +%s%N) - t1) / 1000000 ))
    eq "SIG$sig while connecting: exit 0" 0 $rc
    check "SIG$sig while connecting: ends within 1 s of it (${ms} ms)" [ $ms -le 1000 ]
done
eq "nothing was written: the job is still queued, no wake" "queued|0|0" \
    "$(q "select status || '|' || (select count(*) from cronq.job_runs) || '|' || (select count(*) from cronq.wakes) from cronq.jobs where id = $id")"

# TCP keepalives are on by default (libpq's kernel timer on the socket), and
# a conninfo that turns them off is obeyed. keepalive_timer CONNINFO: the
# keepalive timer of cronq run --linger 3s's connection, looked for 10 times
# (not the retransmission timer, "on", of bytes in flight, and on a busy
# machine connecting may take a while).
keepalive_timer() {
    local pid i
    "$CRONQ" run --db "$1" --linger 3s 2>/dev/null &
    pid=$!
    for i in $(seq 1 10); do
        sleep 0.2
        ss -tnopH state established "dst 127.0.0.1:$PGPORT" | grep "pid=$pid," | grep -o 'timer:(keepalive'
    done | sort -u | tr '\n' ' '
    wait $pid
}
eq "keepalives on by default" "timer:(keepalive " "$(keepalive_timer "host=127.0.0.1 port=$PGPORT")"
eq "keepalives=0 in the conninfo is obeyed" "" "$(keepalive_timer "host=127.0.0.1 port=$PGPORT keepalives=0")"

# A server that stops answering while its kernel still does (a stopped
# process: here the proxy between cronq and the server, sent SIGSTOP while
# a job runs): keepalives cannot tell, but SIGTERM still ends the run: no
# wait on the database outlasts --grace + 1 s after it. Exit 75 (the job
# could not be given back: its lease is rescued later), nothing written.
start_listener proxy.py 127.0.0.1 "$PGPORT"
proxy_pid=${pids[-1]}
proxy=$PORT
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 60}')
# (A lease of 10s: the heartbeat's own limit, the lease, comes after the
# stop's, below.)
timeout --foreground -s KILL 60 "$CRONQ" run --db "host=127.0.0.1 port=$proxy" --lease 10s --grace 1s --worker-id worker-s 2>"$T_DIR/s.err" &
pid=$!
check "stopped server: the job runs through the proxy" wait_for "running" 10 "select locked_by = 'worker-s' from cronq.jobs where id = $id"
stopped=($proxy_pid); kill -STOP "$proxy_pid"
sleep 4                                          # a heartbeat (every 3.3 s) now waits
t1=$(date +%s%N)
kill -TERM $pid
wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t1) / 1000000 ))
resume
eq "stopped server, SIGTERM: exit 75" 75 $rc
check "stopped server, SIGTERM: ends within --grace + 1 s per wait (${ms} ms)" [ $ms -le 6000 ]
match "stopped server, SIGTERM: says so" 'no answer from the database [0-9]+ ms after the stop request' "$(cat "$T_DIR/s.err")"
eq "stopped server: nothing was written: the job is still running, no outcome" "running|worker-s|0" \
    "$(q "select status || '|' || locked_by || '|' || (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# A server process that stops answering and no signal to cronq: the
# runner's own backend (found by the application_name of its --db) sent
# SIGSTOP while a job runs. Keepalives cannot tell, and nothing asks the
# run to stop; but a heartbeat unanswered for the lease (3s) counts as a
# lost connection: cancelled, closed, and as for any lost connection the
# worker reconnects (a new backend answers) and carries on, with a warning.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 6}')
timeout -s KILL 40 "$CRONQ" run --db "application_name=cronq-stuck" --lease 3s --worker-id worker-b \
    2>"$T_DIR/b.err" &
pid=$!
check "stopped backend: the job runs" wait_for "running" 10 "select locked_by = 'worker-b' from cronq.jobs where id = $id"
backend=$(q "select pid from pg_stat_activity where application_name = 'cronq-stuck'")
check "stopped backend: the runner's backend found ($backend)" [ -n "$backend" ]
stopped=($backend); kill -STOP $backend
wait $pid; rc=$?
resume
eq "stopped backend: the run carries on on a new connection: exit 0" 0 $rc
match "stopped backend: one warning, saying why" '^cronq: warning: the connection to the database was lost \(could not renew the leases: connection to database lost: no answer from the database within 3s \(--lease\); the connection was given up\); reconnected worker=worker-b$' \
    "$(cat "$T_DIR/b.err")"
eq "stopped backend: the job succeeded at its first attempt" "succeeded|1|succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome::text, ',' order by attempt) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# A locked row is not a silent server: a session (the job's author's, or
# the job's own transaction) holding the running job's row FOR UPDATE for
# half the lease neither holds up the heartbeat nor ends the run: the
# heartbeat skips the locked row, keeps the job, and renews its lease once
# the lock is gone.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 5}')
timeout -s KILL 40 "$CRONQ" run --lease 4s --worker-id worker-l 2>"$T_DIR/l.err" &
pid=$!
check "locked row: the job runs" wait_for "running" 10 "select locked_by = 'worker-l' from cronq.jobs where id = $id"
hold_locks "locked row" 2 "id = $id"
wait $pid; rc=$?
wait $locker
eq "locked row: exit 0" 0 $rc
eq "locked row: nothing on stderr" "" "$(cat "$T_DIR/l.err")"
eq "locked row: the job succeeded at its first attempt, one history row" "succeeded|1|succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome::text, ',' order by attempt) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# Locked for longer than the lease: the worker cannot renew it, and once
# the lease it holds runs out another runner may take the job, so the
# worker stops it then (not at its end, 8 s in), says so, and the run
# ends 0 (neither waiting for the lock nor failing on it). The job, its
# lease expired, is rescued and run again once the lock is gone.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 8}')
t0=$(date +%s%N)
timeout -s KILL 40 "$CRONQ" run --lease 2s --worker-id worker-m 2>"$T_DIR/m.err" &
pid=$!
check "lease runs out: the job runs" wait_for "running" 10 "select locked_by = 'worker-m' from cronq.jobs where id = $id"
hold_locks "lease runs out" 5 "id = $id"
wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait $locker
eq "lease runs out: exit 0" 0 $rc
check "lease runs out: the job stopped before its end (${ms} ms)" [ "$ms" -lt 7000 ]
match "lease runs out: the worker says why" "job $id: its lease ran out unrenewed \(its row was locked by another transaction\); stopping it" \
    "$(cat "$T_DIR/m.err")"
timed run --lease 2s
eq "lease runs out: rescued and run again once the lock is gone" "succeeded|2|lease_lost,lease_expired,succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome::text, ',' order by id) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# The heartbeat statement itself (lib/queue/heartbeat.sql), every row
# locked by another session: a skipped row comes back only while the
# worker holds it at that attempt (by the statement's snapshot), with its
# cancel request, and never as renewed.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
for i in 1 2 3 4; do "$CRONQ" enqueue noop >/dev/null; done
read -r j1 j2 j3 j4 <<<"$(q "select string_agg(id::text, ' ' order by id) from cronq.jobs")"
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'me', locked_until = now() + interval '1 minute',
       started_at = now();
   update cronq.jobs set locked_by = 'thief' where id = $j2;
   update cronq.jobs set attempts = 2 where id = $j3;
   update cronq.jobs set cancel_requested = true where id = $j4" >/dev/null
hold_locks "heartbeat.sql" 4 "true"
out=$({ echo "prepare heartbeat as"; cat "$(dirname "$0")/../../lib/queue/heartbeat.sql"
        echo "execute heartbeat('me', 60000, '{$j1,$j2,$j3,$j4}', '{1,1,1,1}');"; } |
      "$PSQL" -XAtq -v ON_ERROR_STOP=1 2>&1 | sort | tr '\n' ' ')
eq "heartbeat.sql: ours kept, not renewed, with its cancel request; another's and a later attempt not" \
    "$j1|f|f $j4|t|f " "$out"
wait $locker

# A role keeping 500 expired leases locked (the rescue's page) does not
# stop the rescue of everyone else's.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
q "insert into cronq.jobs (type, payload, status, attempts, locked_by, locked_until, started_at)
   select 'noop', '{}', 'running', 1, 'gone', now() - interval '3 minutes', now() - interval '4 minutes'
   from generate_series(1, 500)" >/dev/null
other=$("$CRONQ" enqueue noop)
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'gone', locked_until = now() - interval '1 minute',
       started_at = now() - interval '2 minutes' where id = $other" >/dev/null
hold_locks "500 locked" 4 "id <> $other"
timed run --lease 2s
eq "500 locked: the other expired lease is rescued and its job run" "succeeded|2" \
    "$(q "select status || '|' || attempts from cronq.jobs where id = $other")"
wait $locker

# Nor does the rescue wait for a locked row: a job left running by a
# runner that is gone, its lease expired, its row locked by another session
# for 5 s. cronq run --lease 2s rescues what it can and ends at once (it
# would otherwise wait out its 2 s answer limit and end with 75); once the
# lock is gone the next run rescues the job and runs it.
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue noop)
q "update cronq.jobs set status = 'running', attempts = 1, locked_by = 'gone', started_at = now() - interval '2 minutes',
       locked_until = now() - interval '1 minute' where id = $id" >/dev/null
hold_locks "locked expired row" 5 "id = $id"
timed run --lease 2s
eq "locked expired row: the run ends 0" 0 "$RC"
between "locked expired row: the run does not wait for the lock" 0 1900
eq "locked expired row: nothing on stderr" "" "$ERR"
eq "locked expired row: the job is left as it was" "running|gone|0" \
    "$(q "select status || '|' || locked_by || '|' || (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
wait $locker
timed run --lease 2s
eq "locked expired row, lock gone: the next run ends 0" 0 "$RC"
eq "locked expired row, lock gone: rescued, then run" "succeeded|2|lease_expired,succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome::text, ',' order by attempt) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# The whole server stops answering (the postmaster too, so the worker's
# reconnection times out: PGCONNECT_TIMEOUT=2): the run ends with 75 and
# one line naming what it was doing, within the lease (3s) after the
# heartbeat that found no answer, a second for the cancel request and the
# reconnection's 2 s. The job, still leased to the run, is not lost: once
# the lease runs out the next run rescues it and runs it again.
pm_pid=$(head -n 1 "$(q 'show data_directory')/postmaster.pid")
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 30}')
PGCONNECT_TIMEOUT=2 timeout -s KILL 40 "$CRONQ" run --db "application_name=cronq-stuck" --lease 3s \
    --worker-id worker-c 2>"$T_DIR/c.err" &
pid=$!
check "stopped server: the job runs" wait_for "running" 10 "select locked_by = 'worker-c' from cronq.jobs where id = $id"
backend=$(q "select pid from pg_stat_activity where application_name = 'cronq-stuck'")
check "stopped server: the postmaster ($pm_pid) and the runner's backend ($backend) found" [ -n "$pm_pid" -a -n "$backend" ]
stopped=($pm_pid $backend); kill -STOP "${stopped[@]}"
t1=$(date +%s%N)
wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t1) / 1000000 ))
resume
eq "stopped server, no signal: exit 75" 75 $rc
check "stopped server, no signal: ends after the lease, within it + 1 s + the reconnection (${ms} ms)" \
    [ $ms -ge 3000 -a $ms -le 12000 ]
match "stopped server, no signal: one line naming what it was doing" '^cronq: error: could not renew the leases: connection to database lost: no answer from the database within 3s \(--lease\); the connection was given up$' \
    "$(cat "$T_DIR/c.err")"
check "stopped server: the stopped backend ends once resumed" \
    wait_for "gone" 10 "select count(*) = 0 from pg_stat_activity where pid = $backend"
eq "stopped server: the job is not lost: still the run's, running, no outcome" "running|worker-c|0" \
    "$(q "select status || '|' || locked_by || '|' || (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"
check "stopped server: its lease runs out" wait_for "expired" 10 "select locked_until < now() from cronq.jobs where id = $id"
q "update cronq.jobs set payload = '{\"seconds\": 0}' where id = $id" >/dev/null   # the next attempt is quick
cronq run --lease 3s
eq "stopped server: the next run exits 0" 0 "$RC"
eq "stopped server: the job rescued, then succeeded at its second attempt" "succeeded|2|lease_expired,succeeded" \
    "$(q "select status || '|' || attempts || '|' || (select string_agg(outcome::text, ',' order by attempt) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

# A server gone silent mid-run: the runner, in its own network namespace,
# reaches the server through a proxy on the host end of a veth; the link is
# cut while a job runs. Short keepalives and tcp_user_timeout (set in the
# conninfo) notice it; the reconnection gives up after the default 10 s.
ns=cqh$$; host_if=cqhh$$; ns_if=cqha$$
net=$(( 1 + RANDOM % 250 ))
host_ip=10.124.$net.1; ns_ip=10.124.$net.2
if ! { ip netns add "$ns" && ip link add "$host_if" type veth peer name "$ns_if" \
       && ip link set "$ns_if" netns "$ns"; } 2>"$T_DIR/netns.err"; then
    echo "  skipped (mid-run): network namespaces are not permitted here: $(head -n 1 "$T_DIR/netns.err")"
    ns=; host_if=
    done_testing; exit
fi
ip addr add "$host_ip/30" dev "$host_if"; ip link set "$host_if" up
ip netns exec "$ns" ip addr add "$ns_ip/30" dev "$ns_if"
ip netns exec "$ns" ip link set "$ns_if" up; ip netns exec "$ns" ip link set lo up
start_listener proxy.py "$host_ip" "$PGPORT"
proxy=$PORT
q "delete from cronq.jobs; delete from cronq.job_runs" >/dev/null
id=$("$CRONQ" enqueue sleep '{"seconds": 60}')
db="host=$host_ip port=$proxy user=$PGUSER dbname=$PGDATABASE keepalives_idle=1 keepalives_interval=1 keepalives_count=2 tcp_user_timeout=2000"
t0=$(date +%s%N)
timeout -s KILL 60 ip netns exec "$ns" "$CRONQ" run --db "$db" --lease 3s --worker-id worker-a 2>"$T_DIR/a.err" &
pid=$!
check "mid-run: A runs the job through the proxy" wait_for "running" 10 "select locked_by = 'worker-a' from cronq.jobs where id = $id"
t1=$(date +%s%N)
ip link set "$host_if" down                      # the server goes silent
wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t1) / 1000000 ))
eq "mid-run: exit 75" 75 $rc
check "mid-run: the run ends in bounded time (${ms} ms)" [ $ms -le 25000 ]
eq "mid-run: one line on stderr" 1 "$(grep -c . "$T_DIR/a.err")"
eq "mid-run: nothing was written: the job is still A's, running, no outcome" "running|worker-a|0" \
    "$(q "select status || '|' || locked_by || '|' || (select count(*) from cronq.job_runs where job_id = $id) from cronq.jobs where id = $id")"

done_testing
