#!/usr/bin/env bash
# Network cut: runner A lives in its own network namespace (veth, TCP to
# the server). Its link is cut mid-job for longer than the lease; runner B
# takes the job over and completes it; when the link returns, A's late
# outcome is refused by fencing (kept as lease_lost) and logged; the job
# has exactly one successful outcome. Skipped, saying why, where network
# namespaces are not permitted.
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
ns=cq$$; host_if=cqh$$; ns_if=cqa$$
net=$(( 1 + RANDOM % 250 ))
host_ip=10.123.$net.1; ns_ip=10.123.$net.2
cleanup() {
    [ -n "${a_pid:-}" ] && kill -9 "$a_pid" 2>/dev/null
    ip link del "$host_if" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    "$root/scripts/pg.sh" stop "$T_DIR/pg2" >/dev/null 2>&1
}
trap cleanup EXIT

if ! { ip netns add "$ns" && ip link add "$host_if" type veth peer name "$ns_if" \
       && ip link set "$ns_if" netns "$ns"; } 2>"$T_DIR/netns.err"; then
    echo "  skipped: network namespaces are not permitted here: $(head -n 1 "$T_DIR/netns.err")"
    done_testing; exit
fi
ip addr add "$host_ip/30" dev "$host_if"; ip link set "$host_if" up
ip netns exec "$ns" ip addr add "$ns_ip/30" dev "$ns_if"
ip netns exec "$ns" ip link set "$ns_if" up; ip netns exec "$ns" ip link set lo up

# A server of its own that also listens on the host end of the veth.
mkdir -p "$T_DIR/pg2"; chmod 755 "$T_DIR" "$T_DIR/pg2"
env2=$(PG_LISTEN="127.0.0.1,$host_ip" "$root/scripts/pg.sh" start "$T_DIR/pg2" fast) || { fail "could not start the second server"; done_testing; exit; }
port2=$(sed -n 's/.*PGPORT=\([0-9]*\);.*/\1/p' <<<"$env2")
echo "host all all $ns_ip/32 trust" >>"$T_DIR/pg2/data/pg_hba.conf"
"$PGBIN/pg_ctl" -D "$T_DIR/pg2/data" reload >/dev/null 2>&1 || runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T_DIR/pg2/data" reload >/dev/null
local_db="host=$T_DIR/pg2 port=$port2 user=postgres dbname=postgres"
tcp_db="host=$host_ip port=$port2 user=postgres dbname=postgres"
q2() { "$PSQL" -XAtq -d "$local_db" -c "$1"; }

"$CRONQ" migrate --db "$local_db"
id=$("$CRONQ" enqueue sleep '{"seconds": 6}' --db "$local_db")
ip netns exec "$ns" "$CRONQ" run --db "$tcp_db" --lease 3s --worker-id worker-a 2>"$T_DIR/a.err" &
a_pid=$!
for _ in $(seq 1 50); do [ "$(q2 "select locked_by from cronq.jobs where id = $id")" = worker-a ] && break; sleep 0.1; done
eq "A runs the job over TCP from its namespace" worker-a "$(q2 "select locked_by from cronq.jobs where id = $id")"

ip link set "$host_if" down                       # the cut
sleep 4                                          # past A's 3 s lease
"$CRONQ" run --db "$local_db" --worker-id worker-b 2>"$T_DIR/b.err"
eq "B took the job over and completed it" "succeeded|2|worker-b" \
    "$(q2 "select j.status || '|' || j.attempts || '|' || r.worker from cronq.jobs j join cronq.job_runs r on r.job_id = j.id and r.outcome = 'succeeded' where j.id = $id")"
ip link set "$host_if" up                         # the link returns

for _ in $(seq 1 600); do kill -0 "$a_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$a_pid" 2>/dev/null; then fail "A still runs 60 s after the link returned"; fi
wait "$a_pid"; a_rc=$?
a_pid=
echo "  A exited $a_rc: $(tr '\n' ' ' <"$T_DIR/a.err" | head -c 300)"
eq "no double outcome: the job is B's" "succeeded|2|1" \
    "$(q2 "select status || '|' || attempts || '|' || (select count(*) from cronq.job_runs where job_id = $id and outcome = 'succeeded') from cronq.jobs where id = $id")"
eq "A's lost attempt: rescued as lease_expired, its late outcome kept as lease_lost" "1|lease_expired|worker-a;1|lease_lost|worker-a;2|succeeded|worker-b" \
    "$(q2 "select string_agg(attempt || '|' || outcome || '|' || worker, ';' order by attempt, id) from cronq.job_runs where job_id = $id")"
match "A logged that the job was taken over" "no longer held by this worker|taken over by another worker" "$(cat "$T_DIR/a.err")"

done_testing
