#!/usr/bin/env bash
# make demo from a checkout the postgres user cannot reach (a copy of the
# tracked files in a mode-0700 directory, as root): the jobs run, the
# cluster listens on its unix socket alone, in a 0700 directory; a second
# run reuses it; DEMO_PORT=N listens on 127.0.0.1:N alone and refuses a TCP
# login without the password; make demo-stop leaves no server and no
# directory behind. Then a normal user (postgres) in its own 0700 checkout:
# the cluster in .demo/pg, run as that user. Root only (the cluster then
# runs as postgres, which is what used to fail); elsewhere it says so and
# counts nothing.
. "$(dirname "$0")/lib.sh"

root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "t_demo: skipped (the private-checkout case needs root)"
    done_testing; exit
fi

W=$(mktemp -d /tmp/cronq-t_demo.XXXXXX)
chmod 700 "$W"
# The tracked files; a copy without git (mutate.sh's scratch) takes what
# the demo needs.
(cd "$root" && git ls-files -z 2>/dev/null | xargs -0 -r cp --parents -t "$W")
[ -f "$W/scripts/demo.sh" ] || cp -r "$root/Makefile" "$root/scripts" "$W/"
cleanup() {
    [ -d "$W/.demo" ] && (cd "$W" && scripts/demo.sh stop >/dev/null 2>&1)
    rm -rf "$W"
}
trap cleanup EXIT

check "postgres cannot reach the checkout" bash -c '! runuser -u postgres -- test -x "$0"' "$W"

# demo [VAR=VALUE…]: scripts/demo.sh in the copy with the binary under test
# (no second build), outside the harness's cluster; leaves RC and OUT.
demo() {
    OUT=$(cd "$W" && env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGPASSFILE \
        CRONQ="$CRONQ" "$@" scripts/demo.sh 2>&1); RC=$?
}
# dq SQL: a query on the demo cluster, through its unix socket.
dq() {
    (. "$W/.demo/env"; "$PSQL" -XAtq -h "$PGHOST" -p "$PGPORT" -U postgres -d postgres -c "$1")
}
# tcp_listeners: the TCP addresses the demo's postmaster listens on.
tcp_listeners() {
    local pm
    pm=$(head -n 1 "$DEMO_DIR/data/postmaster.pid")
    ss -ltnpH | grep "pid=$pm," | awk '{print $4}' | sort | tr '\n' ' '
}

# alive PID: its state when it runs (nothing when gone or a zombie: the
# postmaster, orphaned by pg_ctl, is reaped by whichever process adopted it,
# which may do so late).
alive() {
    [ -n "$1" ] || { echo "no pid"; return; }
    ps -o stat= -p "$1" | grep -v '^Z'
}

demo
eq "make demo: exit" 0 "$RC"
[ "$RC" = 0 ] || echo "  $OUT" | tail -n 20
match "make demo: prints how to connect" 'Connect: +[^ ]*psql "host=/tmp/cronq-demo\.' "$OUT"
DEMO_DIR=$(. "$W/.demo/env" 2>/dev/null; echo "${DEMO_DIR:-}")
match "the cluster lives in a fresh directory under /tmp" '^/tmp/cronq-demo\.[A-Za-z0-9]{6}$' "$DEMO_DIR"
eq "its directory: postgres's, mode 0700" "postgres 700" "$(stat -c '%U %a' "$DEMO_DIR" 2>&1)"
eq "the jobs ran: 5 succeeded, 1 failed, 6 attempts" "5|1|6" \
    "$(dq "select count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed'),
               (select count(*) from cronq.job_runs) from cronq.jobs")"
eq "listen_addresses is empty" "" "$(dq 'show listen_addresses')"
eq "no TCP listener" "" "$(tcp_listeners)"
check "the socket is there" test -S "$DEMO_DIR/.s.PGSQL.5432"
check "another user cannot connect through it" bash -c \
    '! runuser -u nobody -- "$0" -XAtq -w -h "$1" -U postgres -d postgres -c "select 1" >/dev/null 2>&1' \
    "$PSQL" "$DEMO_DIR"
eq ".demo/ is the caller's alone" "root 700" "$(stat -c '%U %a' "$W/.demo")"

demo
eq "make demo again: exit" 0 "$RC"
match "it reuses the cluster" "reusing the demo cluster in $DEMO_DIR" "$OUT"
# (At least: the schedule may have come due, the failed job may have retried.)
eq "the second run's jobs ran too" t \
    "$(dq "select count(*) filter (where status = 'succeeded') >= 9 from cronq.jobs")"
succeeded=$(dq "select count(*) filter (where status = 'succeeded') from cronq.jobs")

demo DEMO_PORT=abc
eq "DEMO_PORT must be a number" 64 "$RC"

port=
for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 30000 ))
    ss -ltnH "sport = :$p" | grep -q . || { port=$p; break; }
done
demo DEMO_PORT="$port"
eq "DEMO_PORT=$port make demo: exit" 0 "$RC"
[ "$RC" = 0 ] || echo "  $OUT" | tail -n 20
match "it restarts the cluster with the port" "restarting the demo cluster in $DEMO_DIR" "$OUT"
match "it prints how to connect over TCP" "PGPASSFILE=$W/.demo/pgpass [^ ]*psql \"host=127.0.0.1 port=$port " "$OUT"
eq "listen_addresses" "127.0.0.1" "$(dq 'show listen_addresses')"
eq "listens on 127.0.0.1:$port alone" "127.0.0.1:$port " "$(tcp_listeners)"
ERR=$(PGPASSFILE="$T_DIR/none" "$PSQL" -XAtq -w "host=127.0.0.1 port=$port user=postgres dbname=postgres" -c 'select 1' 2>&1)
match "a TCP login without the password is refused" 'no password supplied' "$ERR"
ERR=$(PGPASSFILE="$T_DIR/none" PGPASSWORD=wrong "$PSQL" -XAtq -w "host=127.0.0.1 port=$port user=postgres dbname=postgres" -c 'select 1' 2>&1)
match "a wrong password is refused" 'password authentication failed' "$ERR"
eq "with .demo/pgpass it connects" 1 \
    "$(PGPASSFILE="$W/.demo/pgpass" "$PSQL" -XAtq -w "host=127.0.0.1 port=$port user=postgres dbname=postgres" -c 'select 1' 2>&1)"
eq "the data is kept" t "$(dq "select count(*) filter (where status = 'succeeded') > $succeeded from cronq.jobs")"
eq "pgpass: mode 0600" 600 "$(stat -c %a "$W/.demo/pgpass")"

pm=$(head -n 1 "$DEMO_DIR/data/postmaster.pid" 2>/dev/null)
OUT=$(make -C "$W" --no-print-directory demo-stop 2>&1); RC=$?
eq "make demo-stop: exit" 0 "$RC"
eq "no server left" "" "$(alive "$pm")"
eq "no process of it" "" "$(pgrep -f "${DEMO_DIR:-no demo directory}" || true)"
check "its directory is gone" test ! -e "$DEMO_DIR"
check ".demo/ is gone" test ! -e "$W/.demo"
eq "nothing listens on $port" "" "$(ss -ltnH "sport = :$port")"
OUT=$(make -C "$W" --no-print-directory demo-stop 2>&1); RC=$?
eq "make demo-stop with nothing to stop: exit" 0 "$RC"

# A normal user (postgres here) in a checkout of its own, mode 0700: the
# cluster stays in .demo/pg and runs as that user.
U=$(mktemp -d /tmp/cronq-t_demo-user.XXXXXX)
trap 'cleanup; [ -d "$U/.demo" ] && runuser -u postgres -- "$U/scripts/demo.sh" stop >/dev/null 2>&1; rm -rf "$U"' EXIT
cp -r "$W/." "$U/"
cp "$CRONQ" "$U/cronq"
chown -R postgres "$U"
chmod 700 "$U"
OUT=$(cd / && runuser -u postgres -- env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE -u PGPASSFILE \
    CRONQ="$U/cronq" "$U/scripts/demo.sh" 2>&1); RC=$?
eq "make demo as a normal user: exit" 0 "$RC"
[ "$RC" = 0 ] || echo "  $OUT" | tail -n 20
eq "its cluster is in .demo/pg" "$U/.demo/pg" "$(. "$U/.demo/env" 2>/dev/null; echo "${DEMO_DIR:-}")"
eq "owned by the user, mode 0700" "postgres 700" "$(stat -c '%U %a' "$U/.demo/pg" 2>&1)"
eq "its jobs ran" "5|1" "$(W=$U dq "select count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed') from cronq.jobs")"
eq "its listen_addresses is empty" "" "$(W=$U dq 'show listen_addresses')"
pm=$(head -n 1 "$U/.demo/pg/data/postmaster.pid" 2>/dev/null)
OUT=$(runuser -u postgres -- make -C "$U" --no-print-directory demo-stop 2>&1); RC=$?
eq "make demo-stop as the user: exit" 0 "$RC"
eq "its server is gone" "" "$(alive "$pm")"
check "its .demo/ is gone" test ! -e "$U/.demo"

done_testing
