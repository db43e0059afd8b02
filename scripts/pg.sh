#!/bin/sh
# pg.sh — a throwaway PostgreSQL for tests, benchmarks and the demo.
#   pg.sh start DIR [fast]   initdb into DIR/data (unless there), start it with
#                            its unix socket in DIR on a free port, and print
#                            the environment to reach it (PGHOST=…; export …)
#   pg.sh restart DIR [MODE] restart it (MODE: fast, the default, or immediate)
#   pg.sh stop DIR           stop it (the directory is left to the caller)
# initdb and postgres refuse to run as root: as root, the cluster runs as the
# "postgres" user and DIR is handed to it. "fast" turns fsync off (tests only;
# benchmarks and the demo keep PostgreSQL's defaults).
# PG_LISTEN (default 127.0.0.1) lists the addresses the server listens on;
# set and empty, none: the unix socket alone. PG_PORT picks the port
# (default: a free one, at random).
# PG_PWFILE (a file holding the superuser's password) makes every login
# authenticate with SCRAM instead of trust; PG_LOCAL_AUTH (e.g. trust) then
# sets the method of unix-socket logins alone.
# PG_PRIVATE set: DIR, which holds the socket, is mode 0700, reachable by its
# owner alone (the tests' DIR is 0755 so that any test user reaches it).
# PG_OPTS (-c NAME=VALUE …) is passed to the server after pg.sh's own
# options, which it overrides: a test's cluster with a small max_connections.
set -eu

PGBIN=$(pg_config --bindir 2>/dev/null || true)
[ -x "$PGBIN/initdb" ] || PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$PGBIN/initdb" ] || { echo "pg.sh: cannot find initdb (install postgresql-15)" >&2; exit 1; }

as_owner() {
    # From /: postgres may not reach the caller's working directory.
    if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

free_port() {
    # A port nobody listens on (TCP or a socket file in DIR), picked at random.
    for _ in $(seq 1 50); do
        port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
        if ! ss -ltn 2>/dev/null | grep -q ":$port "; then
            echo "$port"; return 0
        fi
    done
    echo 54329
}

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: pg.sh start|restart|stop DIR [fast|MODE]" >&2; exit 64; }

case "$cmd" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    mode=755
    [ -n "${PG_PRIVATE:-}" ] && mode=700
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir" && chmod $mode "$dir"
    elif [ $mode = 700 ]; then chmod 700 "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        auth="-A trust"
        # PG_PWFILE: the superuser's password, and every connection must
        # give one (SCRAM): the security tests, where trust would let anyone
        # be anyone.
        if [ -n "${PG_PWFILE:-}" ]; then
            cp "$PG_PWFILE" "$dir/pwfile" && chown postgres "$dir/pwfile" 2>/dev/null || true
            auth="-A scram-sha-256 --pwfile=$dir/pwfile"
            [ -n "${PG_LOCAL_AUTH:-}" ] && auth="$auth --auth-local=$PG_LOCAL_AUTH"
        fi
        # shellcheck disable=SC2086
        as_owner "$PGBIN/initdb" -D "$dir/data" -U postgres $auth -E UTF8 \
            --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    port=${PG_PORT:-$(free_port)}
    # pg_ctl hands the options to sh: '' is an empty value.
    opts="-c listen_addresses=${PG_LISTEN-127.0.0.1}"
    [ -n "${PG_LISTEN-x}" ] || opts="-c listen_addresses=''"
    opts="$opts -c port=$port -c unix_socket_directories=$dir -c max_connections=200"
    # Only what a crash of PostgreSQL alone (not of the machine) cannot undo:
    # tests that kill the server must not lose commits.
    [ "${3:-}" = fast ] && opts="$opts -c fsync=off -c full_page_writes=off"
    [ -n "${PG_OPTS:-}" ] && opts="$opts $PG_OPTS"
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null \
        || { tail -n 20 "$dir/server.log" >&2; exit 1; }
    echo "PGHOST=$dir; PGPORT=$port; PGUSER=postgres; PGDATABASE=postgres; PGBIN=$PGBIN; export PGHOST PGPORT PGUSER PGDATABASE PGBIN"
    ;;
restart)
    # pg_ctl reuses the options the server was started with.
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "${3:-fast}" -w -t 60 restart >/dev/null
    ;;
stop)
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: pg.sh start|restart|stop DIR [fast|MODE]" >&2; exit 64 ;;
esac
