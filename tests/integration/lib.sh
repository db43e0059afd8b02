# lib.sh — sourced by every integration test. Gives the test its own
# database, a way to run cronq capturing exit code, stdout and stderr
# together, and assertions that count toward the closing
# "NAME: N passed, M failed" line.
set -u

T_NAME=$(basename "$0" .sh)
T_PASSED=0
T_FAILED=0
PSQL="$PGBIN/psql"
export PGDATABASE="$T_NAME"
"$PSQL" -XAtq -d postgres -c "drop database if exists \"$T_NAME\"" -c "create database \"$T_NAME\"" >/dev/null
T_DIR="$TEST_TMP/$T_NAME"
mkdir -p "$T_DIR"
T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Unrelated environment must not leak into the tests.
unset CRONQ_DATABASE_URL DATABASE_URL

pass() { T_PASSED=$((T_PASSED + 1)); }
fail() { T_FAILED=$((T_FAILED + 1)); echo "not ok $T_NAME: $*"; }

# q SQL: one query, unaligned, tuples only.
q() { "$PSQL" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

# cronq ARGS…: runs the binary, leaving RC, OUT and ERR.
cronq() {
    OUT=$("$CRONQ" "$@" 2>"$T_DIR/stderr"); RC=$?
    ERR=$(cat "$T_DIR/stderr")
}
# cronq_in INPUT ARGS…: the same with INPUT on standard input.
cronq_in() {
    local input=$1; shift
    OUT=$(printf '%s' "$input" | "$CRONQ" "$@" 2>"$T_DIR/stderr"); RC=$?
    ERR=$(cat "$T_DIR/stderr")
}

# check DESC CONDITION…: passes when the command succeeds.
check() {
    local desc=$1; shift
    if "$@"; then pass; else fail "$desc"; fi
}
# eq DESC EXPECTED ACTUAL
eq() {
    if [ "$2" == "$3" ]; then pass; else fail "$1: expected [$2], got [$3]"; fi
}
# match DESC REGEX ACTUAL
match() {
    if [[ "$3" =~ $2 ]]; then pass; else fail "$1: [$3] does not match /$2/"; fi
}
# expect DESC RC STDOUT STDERR: all three of the last cronq call, exactly.
expect() {
    local ok=1
    [ "$RC" == "$2" ] || ok=0
    [ "$OUT" == "$3" ] || ok=0
    [ "$ERR" == "$4" ] || ok=0
    if [ $ok = 1 ]; then pass; else
        fail "$1: expected rc=$2 out=[$3] err=[$4], got rc=$RC out=[$OUT] err=[$ERR]"
    fi
}
# expect_rc_err DESC RC STDERR-REGEX: exit code, empty stdout, one stderr line matching.
# told: the info lines of the last cronq call's stderr (a -v call: what
# cancel, retry, pause, resume, purge, limit and backfill did, which they
# say only on a terminal or with -v), without their "cronq: info: ".
told() { sed -n 's/^cronq: info: //p' <<<"$ERR"; }
# expect_told DESC RC LINE STDERR: the last cronq call (given -v) exited
# RC, wrote nothing on stdout, told LINE among its info lines, and its
# other stderr lines are exactly STDERR.
expect_told() {
    local rest
    rest=$(grep -v '^cronq: info: ' <<<"$ERR")
    if [ "$RC" == "$2" ] && [ -z "$OUT" ] && grep -qxF -- "$3" <<<"$(told)" && [ "$rest" == "$4" ]; then pass; else
        fail "$1: expected rc=$2, told [$3], err=[$4]; got rc=$RC out=[$OUT] err=[$ERR]"
    fi
}
expect_rc_err() {
    local lines
    lines=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$RC" == "$2" ] && [ -z "$OUT" ] && [[ "$ERR" =~ $3 ]] && [ "$lines" -le 2 ]; then pass; else
        fail "$1: expected rc=$2 and stderr /$3/, got rc=$RC out=[$OUT] err=[$ERR]"
    fi
}

# The daily purge schedule fires at 03:17 UTC, whenever a test happens to
# cross it: a run then finds one job more than the test made. Its next
# occurrence moves a day on when it is under two hours away.
purge_aside() {
    q "update cronq.schedules set next_run_at = next_run_at + interval '1 day'
       where name = 'cronq-purge' and next_run_at < now() + interval '2 hours'" >/dev/null
}
migrate() { "$CRONQ" migrate >/dev/null || fail "cronq migrate failed"; purge_aside; }

# poll SECONDS CMD…: run CMD every 0.1 s until it succeeds (return 0) or
# SECONDS have passed (return 1).
poll() {
    local i n=$(( $1 * 10 ))
    shift
    for i in $(seq 1 "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
# sleepers N: a query of the pids of the other sessions in pg_sleep(N) (a
# test's holder of a lock: it takes the lock, then sleeps), never the one
# asking, whose own query names pg_sleep(N) too.
sleepers() {
    echo "select pid from pg_stat_activity where query like '%pg_sleep($1)%' and state = 'active'
          and pid <> pg_backend_pid()"
}
# is_true SQL: whether the query returns t.
is_true() { [ "$(q "$1")" == t ]; }
# wait_for DESC SECONDS SQL: poll until the query returns t.
wait_for() { poll "$2" is_true "$3"; }
# clear_of_minute_end SECONDS: return once the server's clock has at least
# SECONDS left in its minute, for steps that count fire times up to "now"
# and must not see a new one arrive half-way.
clear_of_minute_end() {
    poll 70 is_true "select extract(second from clock_timestamp()) < 60 - $1" \
        || fail "the clock never left the end of its minute"
}

done_testing() {
    echo "$T_NAME: $T_PASSED passed, $T_FAILED failed"
    [ "$T_FAILED" -eq 0 ]
}

# mkrole NAME…: login roles, created once per cluster (roles are shared by
# every test database, so tests must not assume they start without them).
mkrole() {
    local r
    for r in "$@"; do
        q "do \$\$ begin if not exists (select from pg_roles where rolname = '$r') then create role \"$r\" login; end if; end \$\$"
    done
}

# pgbouncer_start MODE USERS: PgBouncer on 127.0.0.1 in front of this
# test's server, in pool_mode MODE, trusting its clients; USERS is its
# auth_file (lines '"role" "password"': what it logs in to the server
# with). Its directory is $bdir ($T_DIR/pgbouncer), its port $bport.
pgbouncer_start() {
    bdir="$T_DIR/pgbouncer"; mkdir -p "$bdir"
    bport=$(( PGPORT + 1 ))
    while ss -ltn | grep -q ":$bport "; do bport=$((bport + 1)); done
    printf '%s\n' "$2" >"$bdir/users.txt"
    cat >"$bdir/pgbouncer.ini" <<INI
[databases]
* = host=$PGHOST port=$PGPORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir =
auth_type = trust
auth_file = $bdir/users.txt
pool_mode = $1
max_client_conn = 200
default_pool_size = 6
logfile = $bdir/pgbouncer.log
pidfile = $bdir/pgbouncer.pid
INI
    chown -R postgres "$bdir" 2>/dev/null
    chmod 600 "$bdir/users.txt"
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- pgbouncer -d "$bdir/pgbouncer.ini"; else pgbouncer -d "$bdir/pgbouncer.ini"; fi
    for _ in $(seq 1 50); do ss -ltn | grep -q ":$bport " && break; sleep 0.1; done
}
pgbouncer_stop() { kill "$(cat "$bdir/pgbouncer.pid")" 2>/dev/null; }

# password_cluster DB ROLE…: a cluster of the test's own, stopped at exit,
# where every login takes a password (SCRAM: under trust anyone is anyone).
# The superuser's password is in $T_DIR/superpw, each ROLE's is "ROLE-pw"
# (the roles are the test's to create); $PGPASSFILE holds them all, and
# PGDATABASE=DB (the test's to create), PGUSER=postgres. The cluster's
# directory is $T_DIR/pg.
password_cluster() {
    local db=$1 r env_line
    shift
    rm -rf "$T_DIR/pg"
    printf 'Sup3r-%s\n' "$RANDOM$RANDOM" >"$T_DIR/superpw"
    chmod 644 "$T_DIR/superpw"
    env_line=$(PG_PWFILE="$T_DIR/superpw" "$T_ROOT/scripts/pg.sh" start "$T_DIR/pg" fast) \
        || { fail "could not start a cluster with password authentication"; done_testing; exit 1; }
    eval "$env_line"
    trap '"$T_ROOT/scripts/pg.sh" stop "$T_DIR/pg" >/dev/null 2>&1' EXIT
    export PGDATABASE=$db PGUSER=postgres PGPASSFILE="$T_DIR/pgpass"
    printf '*:*:*:postgres:%s\n' "$(cat "$T_DIR/superpw")" >"$PGPASSFILE"
    chmod 600 "$PGPASSFILE"
    for r in "$@"; do printf '*:*:*:%s:%s-pw\n' "$r" "$r" >>"$PGPASSFILE"; done
}

# team_cluster LOGIN…: a password_cluster (database teamdb) whose runner,
# cronq_runner, owns teamdb (and so, after its migrate, cronq's tables);
# each LOGIN a login role with its password; the roles cronq_user,
# cronq_admin and cronq_exec, each test granting them as it needs.
team_cluster() {
    local r
    password_cluster teamdb cronq_runner "$@"
    "$PSQL" -XAtq -d postgres -c "create role cronq_runner login password 'cronq_runner-pw'" \
        -c "create database teamdb owner cronq_runner" >/dev/null || fail "create the runner and its database"
    for r in "$@"; do q "create role $r login password '$r-pw'"; done
    q "create role cronq_user nologin; create role cronq_admin nologin; create role cronq_exec nologin" >/dev/null
}
