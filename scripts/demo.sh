#!/usr/bin/env bash
# demo.sh — run cronq for real. With no database configured, starts (or
# reuses) a throwaway PostgreSQL cluster, migrates, enqueues a few jobs (some
# succeed, one fails and retries), runs them, and shows the result.
# `scripts/demo.sh stop` (make demo-stop) stops the cluster and removes it.
#
# Where it lives. .demo/ under the checkout (mode 0700) holds what the demo
# remembers: env (how to reach the cluster, and where it is) and pgpass (the
# superuser's password, for TCP). The cluster itself (data, log, socket) is
# in a directory of mode 0700 that only its owner reaches:
#   * as a normal user, .demo/pg: initdb and the server run as that user;
#   * as root, a fresh /tmp/cronq-demo.XXXXXX owned by "postgres": initdb
#     and the server refuse to run as root, so they run as postgres, which
#     may not reach the checkout (under /root, or any mode-0700 parent).
#
# How to reach it. By default the server listens on its unix socket alone
# (listen_addresses = ''), in that 0700 directory: only the demo's user (and
# root) can open it, so trust authentication there makes nobody else a
# superuser. DEMO_PORT=N also listens on 127.0.0.1:N, where every login must
# give the password (scram-sha-256; .demo/pgpass holds it). The cluster is
# always made with that password and scram for TCP, so a later DEMO_PORT
# never opens a trusted port.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.demo"
CRONQ=${CRONQ:-$root/bin/cronq}
PGBIN=$(pg_config --bindir 2>/dev/null || true)
[ -x "$PGBIN/psql" ] || PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PSQL="$PGBIN/psql"

# The cluster's directory, as env remembers it; empty when there is none.
cluster_dir() {
    local d=
    [ -f "$state/env" ] && d=$(. "$state/env"; echo "${DEMO_DIR:-}")
    # Only a directory the demo made is ever stopped or removed.
    case "$d" in
        "$state/pg" | /tmp/cronq-demo.??????) echo "$d" ;;
    esac
}

stop_cluster() {
    local d
    d=$(cluster_dir)
    if [ -n "$d" ]; then
        "$root/scripts/pg.sh" stop "$d"
        rm -rf "$d"
    fi
    # A cluster of an older demo, kept in .demo/ itself.
    [ -f "$state/data/PG_VERSION" ] && "$root/scripts/pg.sh" stop "$state"
    rm -rf "$state"
}

if [ "${1:-}" = stop ]; then
    stop_cluster
    echo "demo cluster stopped and removed"
    exit 0
fi

port=${DEMO_PORT:-}
if [ -n "$port" ] && ! [[ "$port" =~ ^[0-9]+$ && "$port" -ge 1 && "$port" -le 65535 ]]; then
    echo "demo.sh: DEMO_PORT must be a TCP port number, not '$port'" >&2
    exit 64
fi

managed=0
if [ -z "${CRONQ_DATABASE_URL:-}${DATABASE_URL:-}" ]; then
    managed=1
    dir=$(cluster_dir)
    running=0
    if [ -n "$dir" ] && (. "$state/env"; "$PSQL" -XAtqc 'select 1' >/dev/null 2>&1); then
        running=1
        if [ "$(. "$state/env"; echo "${DEMO_PORT:-}")" != "$port" ]; then
            echo "== restarting the demo cluster in $dir (DEMO_PORT changed)"
            "$root/scripts/pg.sh" stop "$dir"
            running=0
        else
            echo "== reusing the demo cluster in $dir"
        fi
    fi
    if [ $running = 0 ]; then
        fresh=0
        if [ -z "$dir" ] || [ ! -f "$dir/data/PG_VERSION" ]; then
            fresh=1
            # Nothing to reuse (a first run, or /tmp emptied by a reboot).
            stop_cluster >/dev/null 2>&1 || true
            if [ "$(id -u)" -eq 0 ]; then
                dir=$(mktemp -d /tmp/cronq-demo.XXXXXX)
            else
                dir="$state/pg"
            fi
        fi
        mkdir -p "$state"
        chmod 700 "$state"
        echo "== starting a throwaway PostgreSQL in $dir"
        newpw=0
        if [ ! -f "$state/pgpass" ]; then
            newpw=1
            pw=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
            (umask 077; echo "*:*:*:postgres:$pw" >"$state/pgpass")
        fi
        (umask 077; sed 's/.*://' "$state/pgpass" >"$state/pwfile")
        listen=
        [ -n "$port" ] && listen=127.0.0.1
        env_line=$(PG_PRIVATE=1 PG_LISTEN=$listen PG_PORT=${port:-5432} \
            PG_PWFILE="$state/pwfile" PG_LOCAL_AUTH=trust \
            "$root/scripts/pg.sh" start "$dir") || {
            # A cluster made just now and not remembered is removed at once.
            rm -f "$state/pwfile"
            [ $fresh = 1 ] && { "$root/scripts/pg.sh" stop "$dir"; rm -rf "$dir"; }
            exit 1
        }
        rm -f "$state/pwfile" "$dir/pwfile"
        printf '%s\nDEMO_DIR=%s; DEMO_PORT=%s\n' "$env_line" "$dir" "$port" >"$state/env"
        if [ $newpw = 1 ] && [ $fresh = 0 ]; then
            # An old cluster whose pgpass was lost: it takes the new password.
            echo "alter role postgres password :'pw'" | (. "$state/env"; "$PSQL" -XAtq -v ON_ERROR_STOP=1 -v pw="$pw") >/dev/null
        fi
    fi
    . "$state/env"
    export CRONQ_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=postgres"
fi

# Show each command as one would type it, then run it.
run() {
    local a out='$ cronq'
    for a in "$@"; do
        if [[ "$a" =~ ^[A-Za-z0-9_./:=@,+-]+$ ]]; then out="$out $a"; else out="$out '${a//\'/\'\\\'\'}'"; fi
    done
    echo "$out"
    "$CRONQ" "$@"
}
echo "== migrate"
run migrate --verbose
echo "== enqueue"
run enqueue noop
run enqueue sleep '{"seconds": 0.5}' --queue reports
run enqueue fail '{"message": "the printer is on fire", "code": "printer"}' --max-attempts 3
run enqueue noop --key "demo:$(date -u +%F)"
run enqueue noop --key "demo:$(date -u +%F)" || true
echo "\$ cronq enqueue --jsonl < jobs.jsonl"
printf '{"type":"noop","priority":-1}\n{"type":"sleep","payload":{"seconds":0.2},"queue":"reports"}\n' \
    | "$CRONQ" enqueue --jsonl --verbose
echo "== a schedule (every 5 minutes, Paris time; every cronq run enqueues what is due)"
run schedule add demo-report '*/5 * * * *' sleep '{"seconds": 0.1}' --tz Europe/Paris --replace
run schedule next '*/5 * * * *' --tz Europe/Paris --count 3
echo "== run (what cron does every minute; --verbose shows each outcome)"
run run --verbose --concurrency 2
echo "== the jobs"
"$PSQL" -X -d "$CRONQ_DATABASE_URL" -c "select id, type, queue, status, attempts, run_at - now() as retry_in, last_error from cronq.jobs order by id"
echo "== their attempts"
"$PSQL" -X -d "$CRONQ_DATABASE_URL" -c "select job_id, attempt, outcome, error_code, duration from cronq.job_runs order by id"
echo "== status"
run status
cat <<MSG
The fail job retries with backoff: run "cronq run" again once retry_in has passed.
Connect:   $PSQL "$CRONQ_DATABASE_URL"
Run again: CRONQ_DATABASE_URL="$CRONQ_DATABASE_URL" $CRONQ run --verbose
MSG
if [ $managed = 1 ]; then
    echo "           (its unix socket is in $PGHOST: mode 0700, owner $(stat -c %U "$PGHOST"))"
    if [ -n "${DEMO_PORT:-}" ]; then
        cat <<MSG
Over TCP:  PGPASSFILE=$state/pgpass $PSQL "host=127.0.0.1 port=$DEMO_PORT user=postgres dbname=postgres"
           (127.0.0.1:$DEMO_PORT alone; every TCP login needs the password in $state/pgpass)
MSG
    else
        echo "Over TCP:  none; DEMO_PORT=N make demo listens on 127.0.0.1:N too, password required"
    fi
fi
echo "Stop:      make demo-stop (stops the cluster and removes it)"
