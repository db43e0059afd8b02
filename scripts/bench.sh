#!/usr/bin/env bash
# bench.sh — cronq against reference commands and against its targets, in one
# run on one throwaway PostgreSQL (PostgreSQL's default durability settings).
# Prints each figure next to its reference and their ratio, then one line per
# target: met or not met. Timings on these shared machines are noisy: compare
# ratios within one run, never absolute numbers. cronq and reference runs are
# interleaved (a, b, a, b, …) so that noise hits both.
#   CRONQ       the binary (absolute path; copied for the run, so that a
#               rebuild during the run cannot change or break it)
#   BENCH_ONLY  targets to run, comma-separated (default 1,2,3,4,5,6,7,8,9,10)
#   CRONQ_BASE  an older binary for targets 9 and 10's comparisons (optional)
#   HOOK_N      jobs per drain of target 10 (default 20000)
#   LIM_N       jobs per drain of target 9 (default 20000)
#   REPS        repetitions of timings under a second (default 31, minimum 5)
#   REPS_LONG   repetitions of longer timings (default 3, minimum 3)
#   DRAIN_N     jobs per drain (default 100000)    ENQ_N   jobs enqueued (default 100000)
#   HIST_N      finished jobs of history (default 1000000)
#   SCHED_N     schedules (default 10000)          RSS_N   jobs of the large memory drain
#               (default 100000; the small one is RSS_N / 10)
#   PLAN_PENDING  pending jobs when plans are captured (default 3000)
#   BENCH_PLANS the plans' file (default build/bench-plans.txt)
# Medians throughout.
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
: "${CRONQ:?set CRONQ to the cronq binary}"
REPS=${REPS:-31}; REPS_LONG=${REPS_LONG:-3}
DRAIN_N=${DRAIN_N:-100000}; ENQ_N=${ENQ_N:-100000}; HIST_N=${HIST_N:-1000000}
SCHED_N=${SCHED_N:-10000}; RSS_N=${RSS_N:-100000}; PLAN_PENDING=${PLAN_PENDING:-3000}
BENCH_ONLY=${BENCH_ONLY:-1,2,3,4,5,6,7,8,9,10}; BENCH_PLANS=${BENCH_PLANS:-$root/build/bench-plans.txt}
[ "$REPS" -ge 5 ] || { echo "bench: REPS=$REPS raised to 5" >&2; REPS=5; }
[ "$REPS_LONG" -ge 3 ] || { echo "bench: REPS_LONG=$REPS_LONG raised to 3" >&2; REPS_LONG=3; }
selected() { case ",$BENCH_ONLY," in *",$1,"*) return 0 ;; esac; return 1; }

tmp=$(mktemp -d /tmp/cronq-bench.XXXXXX); chmod 755 "$tmp"
trap '"$root/scripts/pg.sh" stop "$tmp/pg" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
# A copy taken between two rebuilds: retried while the binary is being linked.
for i in $(seq 30); do
    cp "$CRONQ" "$tmp/cronq" 2>/dev/null && cmp -s "$CRONQ" "$tmp/cronq" && [ -x "$tmp/cronq" ] \
        && "$tmp/cronq" --version >/dev/null 2>&1 && break
    [ "$i" -lt 30 ] || { echo "bench: no working binary at $CRONQ" >&2; exit 1; }
    sleep 1
done
CRONQ_SRC=$CRONQ; CRONQ="$tmp/cronq"
eval "$("$root/scripts/pg.sh" start "$tmp/pg")"
PSQL="$PGBIN/psql"   # the real psql, not Debian's Perl wrapper
export CRONQ_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=postgres"
q() { "$PSQL" -XAtq -d "$CRONQ_DATABASE_URL" -c "$1"; }
qd() { "$PSQL" -XAtq -d "$1" -c "$2"; }   # qd URL SQL: another database
"$CRONQ" migrate
# No schedule of migrate's own (the daily purge) may fire during the run.
q "delete from cronq.schedules"

now_ns() { date +%s%N; }
# time_ms CMD…: wall time of one run in ms (fractional); fails if CMD does.
time_ms() {
    local s e
    s=$(now_ns)
    "$@" >/dev/null || { echo "bench: failed: $*" >&2; return 1; }
    e=$(now_ns)
    awk -v d=$((e - s)) 'BEGIN { printf "%.2f", d / 1e6 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
med() { printf '%s\n' "$@" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# rate N MS: N per second.
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t * 1000 }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
# peak_rss_kb CMD…: the command's peak resident set, in KiB.
peak_rss_kb() {
    /usr/bin/time -f '%M' -o "$tmp/rss" "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; return 1; }
    tail -n 1 "$tmp/rss"
}

fmt='%-58s %14s %14s %8s\n'
line() { printf "$fmt" "$@"; }
n_targets=0; n_met=0
# verdict TEXT OK DETAIL: the target's line (OK is 1 when met).
verdict() {
    n_targets=$((n_targets + 1))
    if [ "$2" = 1 ]; then n_met=$((n_met + 1)); echo "target $1: met ($3)"; else echo "target $1: not met ($3)"; fi
}

# Job files: N noop jobs, one JSON line each (noop_quiet_file: with
# "history": "errors").
noop_file() {
    [ -f "$tmp/noop-$1.jsonl" ] || seq 1 "$1" | awk '{ print "{\"type\":\"noop\"}" }' >"$tmp/noop-$1.jsonl"
    echo "$tmp/noop-$1.jsonl"
}
noop_quiet_file() {
    [ -f "$tmp/noop-quiet-$1.jsonl" ] ||
        seq 1 "$1" | awk '{ print "{\"type\":\"noop\",\"history\":\"errors\"}" }' >"$tmp/noop-quiet-$1.jsonl"
    echo "$tmp/noop-quiet-$1.jsonl"
}
# enqueue_noop N [URL [BINARY]]: N noop jobs enqueued by cronq (default database).
enqueue_noop() { "${3:-$CRONQ}" enqueue --db "${2:-$CRONQ_DATABASE_URL}" --jsonl <"$(noop_file "$1")" >/dev/null; }
# new_db NAME: a database of this cluster, migrated; its URL in db_url.
new_db() {
    db_url="host=$PGHOST port=$PGPORT user=postgres dbname=$1"
    q "create database $1"; "$CRONQ" migrate --db "$db_url" >/dev/null
}
# drain_prep N: an empty queue, then N noop jobs, vacuumed and analysed.
drain_prep() { q "truncate cronq.jobs, cronq.job_runs"; enqueue_noop "$1"; q "vacuum analyze cronq.jobs"; }
# verify_drain N LABEL [MIN_ID [URL]]: jobs above MIN_ID all succeeded, each
# with exactly one run. Prints a warning and fails otherwise; sets dups.
dups=0
verify_drain() {
    local n=$1 label=$2 min=${3:-0} url=${4:-$CRONQ_DATABASE_URL} got
    got=$(qd "$url" "select (select count(*) from cronq.jobs where id > $min) || ' ' ||
                    (select count(*) from cronq.jobs where id > $min and status <> 'succeeded') || ' ' ||
                    (select count(*) from cronq.job_runs where job_id > $min) || ' ' ||
                    (select count(*) from (select job_id from cronq.job_runs where job_id > $min
                                           group by job_id having count(*) > 1) x)")
    set -- $got
    dups=$4
    if [ "$1" != "$n" ] || [ "$2" != 0 ] || [ "$3" != "$n" ] || [ "$4" != 0 ]; then
        echo "warning: $label: $1 jobs (expected $n), $2 not succeeded, $3 job_runs rows (expected $n), $4 jobs run more than once"
        return 1
    fi
}
# The idle wake: cronq run on an empty queue, and its reference.
wake_cronq() { time_ms "$CRONQ" run; }
wake_psql() { time_ms "$PSQL" -X -d "$CRONQ_DATABASE_URL" -c 'select 1'; }
# schedules_none_due N [URL]: exactly N enabled schedules, none due.
schedules_none_due() {
    local url=${2:-$CRONQ_DATABASE_URL}
    qd "$url" "delete from cronq.schedules"
    [ "$1" -eq 0 ] || qd "$url" "insert into cronq.schedules (name, cron, type, next_run_at)
        select 's' || i, '0 0 1 1 *', 'noop', now() + interval '30 days' from generate_series(1, $1) i"
    qd "$url" "vacuum analyze cronq.schedules"
}

echo "cronq bench: $CRONQ_SRC (built $(date -u -r "$CRONQ_SRC" '+%F %T') UTC), targets $BENCH_ONLY; REPS=$REPS REPS_LONG=$REPS_LONG DRAIN_N=$DRAIN_N ENQ_N=$ENQ_N HIST_N=$HIST_N SCHED_N=$SCHED_N RSS_N=$RSS_N"
printf "$fmt" "benchmark" "cronq" "reference" "ratio"

# Targets 1 to 6 run with 100 enabled schedules, none due.
schedules_none_due 100
q "create schema ref; create table ref.jobs (id bigserial primary key, priority int not null default 0, run_at timestamptz not null default now(), status text not null default 'queued')"
q "create index on ref.jobs (priority, run_at, id) where status = 'queued'"; q "create index on ref.jobs (id) where status = 'running'"

# interleaved A B: the medians of REPS timings (ms) of the functions A and
# B, run in turn after three untimed pairs; left in med_a and med_b. The
# first and third quartiles of the pairs' own ratios (A/B) are left in
# spread: how far one run's ratio can move on noise alone.
interleaved() {
    local a=() b=()
    for _ in 1 2 3; do "$1" >/dev/null; "$2" >/dev/null; done
    for _ in $(seq "$REPS"); do a+=("$("$1")"); b+=("$("$2")"); done
    med_a=$(med "${a[@]}"); med_b=$(med "${b[@]}")
    spread=$(paste <(printf '%s\n' "${a[@]}") <(printf '%s\n' "${b[@]}") | awk '{ print $1 / $2 }' | sort -n |
        awk '{ r[NR] = $1 } END { printf "%.2f-%.2f", r[int((NR + 3) / 4)], r[int((3 * NR + 1) / 4)] }')
}
# interleaved_wakes URL_A URL_B: the same for idle wakes of cronq in two
# databases (twins differing in one thing).
wake_url_a() { time_ms "$CRONQ" run --db "$url_a"; }
wake_url_b() { time_ms "$CRONQ" run --db "$url_b"; }
interleaved_wakes() { url_a=$1; url_b=$2; interleaved wake_url_a wake_url_b; }

# 1. Wake cost: cronq run on an empty queue (100 schedules, none due) vs
# psql -c 'select 1'.
if selected 1; then
    interleaved wake_cronq wake_psql
    r=$(ratio "$med_a" "$med_b")
    line "wake, empty queue, 100 schedules (median ms; ref psql)" "$med_a" "$med_b" "$r"
    ok=1; le "$r" 1.15 || ok=0
    verdict "1 wake <= 1.15x psql" "$ok" "$r; pairs' ratios p25-p75 $spread"
fi

# 2. Drain: cronq run --batch 1000 over DRAIN_N noop jobs vs plain SQL in psql
# claiming 1000 rows with SKIP LOCKED and marking them done, per loop; then
# the same with --concurrency 2 against the same reference; then a drain of
# as many noop jobs enqueued with --history errors (no job_runs row each)
# against that loop run on cronq.jobs itself (>= 0.95x).
# ref_loop TABLE DUE DONE: the file of the reference's statements on TABLE,
# whose pending rows match DUE and whose finished status is DONE. Per loop,
# what any queue must do: claim (mark running) 1000 due rows, then mark them
# done. No history, no fencing, no leases.
ref_loop() {
    local f="$tmp/ref-${1//./-}.sql"
    [ -f "$f" ] || for _ in $(seq $((DRAIN_N / 1000 + 1))); do
        echo "with c as (select id from $1 where $2 and run_at <= now() order by priority, run_at, id limit 1000 for update skip locked) update $1 j set status = 'running' where j.id = any(array(select id from c));"
        echo "update $1 set status = '$3' where status = 'running';"
    done >"$f"
    echo "$f"
}
drain_ref() {
    q "truncate ref.jobs"; q "insert into ref.jobs (priority) select 0 from generate_series(1, $DRAIN_N)"; q "vacuum analyze ref.jobs"
    time_ms "$PSQL" -X -q -d "$CRONQ_DATABASE_URL" -f "$(ref_loop ref.jobs "status = 'queued'" done)"
}
# The same statements on cronq.jobs itself (DRAIN_N jobs enqueued by cronq):
# not a target, but it tells how much of the gap is the table (the columns
# and indexes the contract gives cronq.jobs) and how much is cronq's work.
drain_ref_on_jobs() {
    local n
    drain_prep "$DRAIN_N"
    time_ms "$PSQL" -X -q -d "$CRONQ_DATABASE_URL" -f "$(ref_loop cronq.jobs "status in ('queued', 'failed')" succeeded)"
    n=$(q "select count(*) from cronq.jobs where status = 'succeeded'")
    [ "$n" = "$DRAIN_N" ] || echo "warning: plain SQL on cronq.jobs left $n jobs succeeded, expected $DRAIN_N" >&2
}
# drain_once LABEL ARGS…: prepare DRAIN_N jobs, time one cronq run ARGS…,
# verify; the time is left in t.
drain_once() {
    local label=$1; shift
    drain_prep "$DRAIN_N"
    t=$(time_ms "$@")
    verify_drain "$DRAIN_N" "$label" || true
}
# drain_quiet_once: the same over DRAIN_N noop jobs enqueued with
# --history errors, which must all succeed leaving no job_runs row.
drain_quiet_once() {
    local got
    q "truncate cronq.jobs, cronq.job_runs"
    "$CRONQ" enqueue --jsonl <"$(noop_quiet_file "$DRAIN_N")" >/dev/null
    q "vacuum analyze cronq.jobs"
    t=$(time_ms "$CRONQ" run --batch 1000)
    got=$(q "select count(*) filter (where status = 'succeeded') || ' ' || (select count(*) from cronq.job_runs) from cronq.jobs")
    [ "$got" = "$DRAIN_N 0" ] ||
        echo "warning: drain --history errors: $got (succeeded, job_runs rows), expected $DRAIN_N 0"
}
if selected 2; then
    a=(); b=(); c=(); d=(); e=()
    for _ in $(seq "$REPS_LONG"); do
        drain_once "drain" "$CRONQ" run --batch 1000; a+=("$t")
        b+=("$(drain_ref)")
        drain_once "drain --concurrency 2" "$CRONQ" run --batch 1000 --concurrency 2; c+=("$t")
        d+=("$(drain_ref_on_jobs)")
        drain_quiet_once; e+=("$t")
    done
    rate1=$(rate "$DRAIN_N" "$(med "${a[@]}")"); rb=$(rate "$DRAIN_N" "$(med "${b[@]}")")
    rc=$(rate "$DRAIN_N" "$(med "${c[@]}")"); rd=$(rate "$DRAIN_N" "$(med "${d[@]}")")
    re=$(rate "$DRAIN_N" "$(med "${e[@]}")")
    r1=$(ratio "$rate1" "$rb"); r2=$(ratio "$rc" "$rb"); r3=$(ratio "$re" "$rd")
    line "drain $DRAIN_N noop (jobs/s; ref plain SQL)" "$rate1" "$rb" "$r1"
    line "drain $DRAIN_N noop, --concurrency 2 (jobs/s; ref plain SQL)" "$rc" "$rb" "$r2"
    line "  the plain SQL loop on cronq.jobs (jobs/s; ref plain SQL)" "$rd" "$rb" "$(ratio "$rd" "$rb")"
    line "  cronq's drain (jobs/s; ref that loop on cronq.jobs)" "$rate1" "$rd" "$(ratio "$rate1" "$rd")"
    # --history errors: no job_runs row per job, the work the loop does
    line "drain $DRAIN_N noop, --history errors (jobs/s; ref that loop)" "$re" "$rd" "$r3"
    ok=1; ge "$r1" 1.05 || ok=0; ge "$r2" 1.35 || ok=0; ge "$r3" 0.95 || ok=0
    verdict "2 drain >= 1.05x plain SQL, --concurrency 2 >= 1.35x, --history errors >= 0.95x the loop on cronq.jobs" \
        "$ok" "$r1, $r2, $r3"
fi

# 3. Enqueue: cronq enqueue --jsonl vs psql \copy of the same rows (wall time).
if selected 3; then
    seq 1 "$ENQ_N" | awk '{ printf "{\"type\":\"noop\",\"queue\":\"q%d\",\"priority\":%d}\n", $1 % 10, $1 % 5 }' >"$tmp/jobs.jsonl"
    seq 1 "$ENQ_N" | awk '{ printf "noop\t{}\tq%d\t%d\n", $1 % 10, $1 % 5 }' >"$tmp/jobs.tsv"
    a=(); b=()
    for _ in $(seq "$REPS_LONG"); do
        q "truncate cronq.jobs"; q "vacuum cronq.jobs"
        a+=("$(time_ms "$CRONQ" enqueue --jsonl <"$tmp/jobs.jsonl")")
        n=$(q "select count(*) from cronq.jobs")
        [ "$n" = "$ENQ_N" ] || echo "warning: enqueue --jsonl left $n jobs, expected $ENQ_N"
        q "truncate cronq.jobs"; q "vacuum cronq.jobs"
        b+=("$(time_ms "$PSQL" -X -q -d "$CRONQ_DATABASE_URL" -c "\\copy cronq.jobs (type, payload, queue, priority) from '$tmp/jobs.tsv'")")
    done
    n=$(q "select count(*) from cronq.jobs")
    [ "$n" = "$ENQ_N" ] || echo "warning: \\copy left $n jobs, expected $ENQ_N"
    ea=$(med "${a[@]}"); eb=$(med "${b[@]}"); r=$(ratio "$ea" "$eb")
    line "enqueue --jsonl $ENQ_N (wall ms; ref \\copy)" "$ea" "$eb" "$r"
    line "enqueue --jsonl $ENQ_N (jobs/s; ref \\copy)" "$(rate "$ENQ_N" "$ea")" "$(rate "$ENQ_N" "$eb")" "$(ratio "$eb" "$ea")"
    ok=1; le "$r" 1.05 || ok=0
    verdict "3 enqueue wall <= 1.05x \\copy" "$ok" "$r"
    q "truncate cronq.jobs, cronq.job_runs"
fi

# 4. History: HIST_N finished jobs (and their runs) must not slow the wake or
# the drain, and no statement may scan cronq's tables sequentially.
# plan_report LOG: split the server log's auto_explain entries (each with its
# CONTEXT, when nested) into the plans' file, labelled by statement, and print
# per statement whether any plan has a Seq Scan on jobs, job_runs or
# schedules. Sets plan_ok.
plan_report() {
    echo "# $2; auto_explain (costs removed) of every statement of one cronq run" >"$BENCH_PLANS"
    awk '
        function flush() {
            if (plan == "") return
            t = tolower(plan)
            if (ctx ~ /materialise/ || index(t, "from unnest(p_names") || index(t, "cronq.materialise(")) kind = "materialise"
            else if (index(t, "insert into cronq.job_runs")) kind = "record"
            else if (ctx != "") kind = "nested, other"
            else if (index(t, "from cronq.schedules s left join cronq.jobs") || (index(t, "cronq.schedules") && index(t, "for update of s"))) kind = "materialise: due schedules"
            else if (index(t, "skip locked")) kind = "claim"
            else if (index(t, "cronq.wakes")) kind = "wake"
            else kind = "other"
            gsub(/  \(cost=[^)]*\)/, "", plan)
            print "==== " kind " ===="
            printf "%s", plan
            if (ctx != "") printf "%s", ctx
            print ""
            plan = ""; ctx = ""
        }
        /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9:.]+ [^ ]+ \[[0-9]+\] / {
            if ($0 ~ /LOG:  duration: .* plan:$/) { flush(); plan = $0 "\n"; mode = "plan"; next }
            if ($0 ~ /CONTEXT:  / && mode == "plan") { ctx = $0 "\n"; mode = "ctx"; next }
            flush(); mode = ""; next
        }
        mode == "plan" { plan = plan $0 "\n"; next }
        mode == "ctx" { ctx = ctx $0 "\n"; next }
        END { flush() }
    ' "$1" >>"$BENCH_PLANS"
    # One line per statement: executions, Seq Scans on cronq's tables, and for
    # the claims whether they read jobs_due.
    plan_ok=1
    awk -v want="claim,record,materialise: due schedules,materialise" '
        /^==== .* ====$/ { kind = substr($0, 6, length($0) - 10); n[kind]++; next }
        /Seq Scan on (cronq\.)?(jobs|job_runs|schedules)( |$)/ {
            s = $0; sub(/^.*Seq Scan on /, "", s); sub(/ .*$/, "", s)
            if (index(seq[kind], s) == 0) seq[kind] = seq[kind] (seq[kind] == "" ? "" : ", ") s
            next
        }
        /(Index|Index Only) Scan( Backward)? using jobs_due |Bitmap Index Scan on jobs_due/ { due[kind] = 1 }
        END {
            k = split(want, w, ",")
            for (i = 1; i <= k; i++) seen[w[i]] = 1
            for (kind in n) if (!(kind in seen)) w[++k] = kind
            for (i = 1; i <= k; i++) {
                kind = w[i]
                if (!(kind in n)) { printf "plan %-28s not captured\n", kind ":"; bad = 1; continue }
                msg = (seq[kind] == "") ? "no Seq Scan on jobs, job_runs, schedules" : "Seq Scan on " seq[kind]
                if (seq[kind] != "") bad = 1
                if (kind == "claim") {
                    msg = msg (due[kind] ? "; claim reads jobs_due" : "; claim does NOT read jobs_due")
                    if (!due[kind]) bad = 1
                }
                printf "plan %-28s %s (%d plans)\n", kind ":", msg, n[kind]
            }
            exit bad
        }
    ' "$BENCH_PLANS" || plan_ok=0
}
if selected 4; then
    # Two databases of this cluster, so that runs interleave: "hist" with
    # HIST_N finished jobs and their runs, "nohist" without; both migrated,
    # with 100 schedules none due, as for targets 1 and 2.
    new_db hist; hist_url=$db_url; new_db nohist; nohist_url=$db_url
    schedules_none_due 100 "$hist_url"; schedules_none_due 100 "$nohist_url"
    # History as the runner leaves it: succeeded, one attempt, one run each,
    # every column jobs_guard would fill set to what it would accept. The
    # guard (per-row PL/pgSQL) is skipped, as a superuser may, unless some
    # other trigger exists on these tables.
    others=$(qd "$hist_url" "select count(*) from pg_trigger where tgrelid in ('cronq.jobs'::regclass, 'cronq.job_runs'::regclass) and not tgisinternal and tgname <> 'jobs_guard'")
    bypass="set session_replication_role = replica"; [ "$others" = 0 ] || bypass="select 1"
    [ "$(qd "$hist_url" "select cronq.payload_error('noop', '{}') is null")" = t ] || echo "warning: history: noop {} is not a valid payload"
    s=$(now_ns)
    "$PSQL" -XAtq -d "$hist_url" -v ON_ERROR_STOP=1 -c "$bypass" -c "
        insert into cronq.jobs (queue, type, payload, priority, run_at, status, attempts, max_attempts,
                                timeout, enqueued_by, created_at, updated_at, started_at, finished_at)
        select 'default', 'noop', '{}', 0, t, 'succeeded', 1, 10, interval '1 hour', current_user,
               t, t + interval '2 milliseconds', t + interval '1 millisecond', t + interval '2 milliseconds'
        from (select now() - interval '1 hour' - ($HIST_N - i) * interval '50 milliseconds' as t
              from generate_series(1, $HIST_N) i) g" -c "
        insert into cronq.job_runs (job_id, attempt, worker, started_at, finished_at, outcome, duration)
        select id, 1, 'bench-history', started_at, finished_at, 'succeeded', finished_at - started_at
        from cronq.jobs"
    qd "$hist_url" "vacuum analyze cronq.jobs, cronq.job_runs"
    q "checkpoint"
    e=$(now_ns)
    hmax=$(qd "$hist_url" "select coalesce(max(id), 0) from cronq.jobs")
    echo "history: $HIST_N jobs and runs inserted, vacuumed and checkpointed in $(( (e - s) / 1000000 )) ms"
    # (a) The wake, interleaved with its twin without history.
    interleaved_wakes "$hist_url" "$nohist_url"
    rw=$(ratio "$med_a" "$med_b")
    line "wake, $HIST_N history (median ms; ref no history)" "$med_a" "$med_b" "$rw"
    # (b) The drain, interleaved too; only the drained jobs are removed
    # between reps, the history stays.
    # drain_in URL MIN_ID: DRAIN_N noop jobs above MIN_ID drained and
    # verified, then removed; the time is left in t.
    drain_in() {
        enqueue_noop "$DRAIN_N" "$1"
        qd "$1" "vacuum analyze cronq.jobs"
        t=$(time_ms "$CRONQ" run --db "$1" --batch 1000)
        verify_drain "$DRAIN_N" "drain in ${1##*dbname=}" "$2" "$1" || true
        qd "$1" "delete from cronq.job_runs where job_id > $2"; qd "$1" "delete from cronq.jobs where id > $2"
        qd "$1" "vacuum analyze cronq.jobs, cronq.job_runs"
    }
    a=(); b=()
    for _ in $(seq "$REPS_LONG"); do
        drain_in "$hist_url" "$hmax"; a+=("$t")
        drain_in "$nohist_url" 0; b+=("$t")
    done
    rate_hist=$(rate "$DRAIN_N" "$(med "${a[@]}")"); rate_nohist=$(rate "$DRAIN_N" "$(med "${b[@]}")")
    rd=$(ratio "$rate_nohist" "$rate_hist")
    line "drain $DRAIN_N over $HIST_N history (jobs/s; ref no history)" "$rate_hist" "$rate_nohist" "$(ratio "$rate_hist" "$rate_nohist")"
    # (c) Plans: HIST_N history, PLAN_PENDING pending jobs, SCHED_N schedules
    # of which 10 are due. auto_explain logs every statement of one cronq run
    # (claim, outcomes with the next claim, outcomes alone at --max-jobs,
    # materialisation with what it runs inside), as planned for that run.
    schedules_none_due "$SCHED_N" "$hist_url"
    qd "$hist_url" "update cronq.schedules set next_run_at = date_trunc('year', now() at time zone 'UTC') at time zone 'UTC' where name in ('s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10')"
    enqueue_noop "$PLAN_PENDING" "$hist_url"
    qd "$hist_url" "vacuum analyze cronq.jobs, cronq.schedules"
    mkdir -p "$(dirname "$BENCH_PLANS")"
    what="$HIST_N finished jobs, $PLAN_PENDING pending, $SCHED_N schedules of which 10 due"
    if q "load 'auto_explain'" 2>/dev/null; then
        off=$(wc -c <"$tmp/pg/server.log")
        PGOPTIONS="-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_nested_statements=on -c auto_explain.log_analyze=off" \
            "$CRONQ" run --db "$hist_url" --batch 1000 --max-jobs 2000 >/dev/null
        tail -c +$((off + 1)) "$tmp/pg/server.log" >"$tmp/explain.log"
        plan_report "$tmp/explain.log" "$what; cronq run --batch 1000 --max-jobs 2000"
        echo "plans ($what): $BENCH_PLANS"
    else
        echo "warning: auto_explain cannot be loaded: no plans"; plan_ok=0
    fi
    ok=1; le "$rw" 1.15 || ok=0; le "$rd" 1.15 || ok=0; [ "$plan_ok" = 1 ] || ok=0
    verdict "4 history: wake <= 1.15x, drain empty/history <= 1.15x, no Seq Scan" "$ok" \
        "$rw, $rd, plans $([ "$plan_ok" = 1 ] && echo ok || echo 'not ok')"
    q "drop database hist"; q "drop database nohist"
fi

# run4 ARGS…: four `cronq run ARGS…` started together; fails if one does.
run4() {
    local pids=() p rc=0
    for _ in 1 2 3 4; do "$CRONQ" run "$@" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    return $rc
}

# 5. Concurrency: four cronq run processes started together vs one process,
# re-measured here (interleaved); every job must run exactly once. Beside
# it, what this machine gives the bare work: the reference's loop on
# cronq.jobs (claim 1000 due rows with SKIP LOCKED, then mark those rows
# done, by id: each session its own), in four psql sessions against one.
# ref_ids_loop: that loop's file.
ref_ids_loop() {
    local f="$tmp/ref-ids.sql"
    [ -f "$f" ] || for _ in $(seq $((DRAIN_N / 1000 + 1))); do
        echo "with c as (select id from cronq.jobs where status in ('queued', 'failed') and run_at <= now() order by priority, run_at, id limit 1000 for update skip locked), u as (update cronq.jobs j set status = 'running' where j.id = any(array(select id from c)) returning j.id) select coalesce(array_agg(id), '{}')::text as ids from u \\gset"
        echo "update cronq.jobs set status = 'succeeded' where id = any(:'ids'::bigint[]);"
    done >"$f"
    echo "$f"
}
# psql_n N: N psql sessions running that loop together; fails if one does.
psql_n() {
    local pids=() p rc=0 f
    f=$(ref_ids_loop)
    for _ in $(seq "$1"); do "$PSQL" -X -q -v ON_ERROR_STOP=1 -d "$CRONQ_DATABASE_URL" -f "$f" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    return $rc
}
# drain_psql N: the time of psql_n N over DRAIN_N fresh jobs, checked.
drain_psql() {
    local n
    drain_prep "$DRAIN_N"
    time_ms psql_n "$1"
    n=$(q "select count(*) from cronq.jobs where status = 'succeeded'")
    [ "$n" = "$DRAIN_N" ] || echo "warning: $1 psql sessions left $n jobs succeeded, expected $DRAIN_N" >&2
}
if selected 5; then
    a=(); b=(); c=(); d=(); dup_total=0; checks=1
    for _ in $(seq "$REPS_LONG"); do
        drain_once "drain" "$CRONQ" run --batch 1000; a+=("$t")
        drain_prep "$DRAIN_N"
        b+=("$(time_ms run4 --batch 1000)")
        verify_drain "$DRAIN_N" "4 processes" || checks=0
        dup_total=$((dup_total + dups))
        c+=("$(drain_psql 1)"); d+=("$(drain_psql 4)")
    done
    r1=$(rate "$DRAIN_N" "$(med "${a[@]}")"); r4=$(rate "$DRAIN_N" "$(med "${b[@]}")")
    p1=$(rate "$DRAIN_N" "$(med "${c[@]}")"); p4=$(rate "$DRAIN_N" "$(med "${d[@]}")")
    r=$(ratio "$r4" "$r1")
    line "drain $DRAIN_N, 4 processes (jobs/s; ref 1 process)" "$r4" "$r1" "$r"
    line "jobs run more than once, 4 processes, $REPS_LONG drains" "$dup_total" "0" "-"
    line "  plain SQL loop on cronq.jobs, 4 sessions (jobs/s; ref 1)" "$p4" "$p1" "$(ratio "$p4" "$p1")"
    line "  cronq, 4 processes (jobs/s; ref that loop, 4 sessions)" "$r4" "$p4" "$(ratio "$r4" "$p4")"
    line "  cronq, 1 process (jobs/s; ref that loop, 1 session)" "$r1" "$p1" "$(ratio "$r1" "$p1")"
    ok=1; ge "$r" 1.3 || ok=0; [ "$dup_total" = 0 ] && [ "$checks" = 1 ] || ok=0
    verdict "5 4 processes >= 1.3x 1 process, no job run twice" "$ok" \
        "$r, $dup_total duplicates$([ "$checks" = 1 ] || echo ', checks failed'); the plain SQL loop's own 4/1: $(ratio "$p4" "$p1")"
fi

# 6. Memory: peak RSS of a drain, large and small.
if selected 6; then
    small=$((RSS_N / 10)); a=(); b=()
    for _ in $(seq "$REPS_LONG"); do
        drain_prep "$RSS_N"; a+=("$(peak_rss_kb "$CRONQ" run --batch 1000)")
        verify_drain "$RSS_N" "memory drain" || true
        drain_prep "$small"; b+=("$(peak_rss_kb "$CRONQ" run --batch 1000)")
        verify_drain "$small" "memory drain" || true
    done
    ma=$(med "${a[@]}"); mb=$(med "${b[@]}"); r=$(ratio "$ma" "$mb")
    line "peak RSS, drain of $RSS_N (KiB; ref 9 MiB)" "$ma" "9216" "$(ratio "$ma" 9216)"
    line "peak RSS, drain of $RSS_N (KiB; ref drain of $small)" "$ma" "$mb" "$r"
    ok=1; le "$ma" 9216 || ok=0; le "$r" 1.1 || ok=0
    verdict "6 peak RSS <= 9216 KiB, $RSS_N/$small <= 1.1x" "$ok" "$ma KiB, $r"
    q "truncate cronq.jobs, cronq.job_runs"
fi

# 7. Schedules, in two fresh databases of this cluster so that runs can
# interleave: "sched" with SCHED_N schedules, "nosched" with none.
# (a) the idle wake with SCHED_N schedules none due vs none at all; (b) SCHED_N
# schedules all due, materialised by a run that claims nothing: its time less
# the idle wake of (a) in the same database.
if selected 7; then
    new_db sched; sched_url=$db_url; new_db nosched; nosched_url=$db_url
    schedules_none_due "$SCHED_N" "$sched_url"; schedules_none_due 0 "$nosched_url"
    interleaved_wakes "$sched_url" "$nosched_url"
    idle=$med_a; r=$(ratio "$med_a" "$med_b")
    line "wake, $SCHED_N schedules none due (median ms; ref none)" "$med_a" "$med_b" "$r"
    # A fire time a minute ago, every minute: catchup latest makes it one
    # (the same fire time each rep: what the last rep decided is forgotten)
    # job per schedule (now() - 30 seconds holds no fire time half the time).
    # Each rep starts from jobs emptied, vacuumed and analysed (as autovacuum
    # would leave them), so that no rep depends on autovacuum's timing.
    cols=$(qd "$sched_url" "select string_agg(column_name || ' = null', ', ') from information_schema.columns where table_schema = 'cronq' and table_name = 'schedules' and column_name in ('last_job_id', 'last_enqueued_at', 'decided_through')")
    reset="update cronq.schedules set next_run_at = date_trunc('minute', now()) - interval '1 minute'${cols:+, $cols}"
    qd "$sched_url" "update cronq.schedules set cron = '* * * * *'"
    c=(); made=1
    for _ in $(seq "$REPS_LONG"); do
        qd "$sched_url" "delete from cronq.jobs"; qd "$sched_url" "$reset"
        # the ledger's rows of the last rep (same fire times) go too
        qd "$sched_url" "do \$\$ begin if to_regclass('cronq.occurrences') is not null then delete from cronq.occurrences; end if; end \$\$"
        qd "$sched_url" "vacuum analyze cronq.jobs, cronq.schedules"
        c+=("$(time_ms "$CRONQ" run --db "$sched_url" --queue nonexistent-queue)")
        n=$(qd "$sched_url" "select count(*) from cronq.jobs")
        [ "$n" = "$SCHED_N" ] || { echo "warning: materialisation created $n jobs, expected $SCHED_N"; made=0; }
    done
    tm=$(med "${c[@]}")
    mrate=$(awk -v n="$SCHED_N" -v t="$tm" -v i="$idle" 'BEGIN { if (t > i) printf "%.0f", n / (t - i) * 1000; else print "n/a" }')
    line "materialise $SCHED_N due (run ms; ref idle wake)" "$tm" "$idle" "$(ratio "$tm" "$idle")"
    line "materialise $SCHED_N due (occurrences/s; ref target)" "$mrate" "20000" \
        "$([ "$mrate" = n/a ] && echo - || ratio "$mrate" 20000)"
    ok=1; le "$r" 1.1 || ok=0; [ "$mrate" != n/a ] && ge "$mrate" 20000 || ok=0; [ "$made" = 1 ] || ok=0
    verdict "7 schedules: wake $SCHED_N/none <= 1.1x, materialise >= 20000/s" "$ok" \
        "$r, $mrate/s$([ "$made" = 1 ] || echo ', wrong job count')"
fi

# 8. Slow jobs in parallel: SLOW_N jobs of one second each, 4 processes x
# --concurrency 4 started together with the default flags (16 slots): the
# ideal is SLOW_N / 16 seconds; a worker holding claimed jobs it cannot
# start soon makes it longer. Every job must run exactly once.
SLOW_N=${SLOW_N:-200}
if selected 8; then
    a=(); checks=1
    for _ in $(seq "$REPS_LONG"); do
        q "truncate cronq.jobs, cronq.job_runs"
        q "insert into cronq.jobs (type, payload) select 'sleep', '{\"seconds\": 1}' from generate_series(1, $SLOW_N)"
        a+=("$(time_ms run4 --concurrency 4)")
        verify_drain "$SLOW_N" "slow jobs" || checks=0
    done
    ideal=$(awk -v n="$SLOW_N" 'BEGIN { printf "%.2f", n / 16 * 1000 }')
    t=$(med "${a[@]}"); r=$(ratio "$t" "$ideal")
    line "$SLOW_N jobs of 1 s, 4 processes x --concurrency 4 (ms; ref ideal)" "$t" "$ideal" "$r"
    ok=1; le "$r" 1.3 || ok=0; [ "$checks" = 1 ] || ok=0
    verdict "8 slow jobs in parallel <= 1.3x the ideal" "$ok" "$r$([ "$checks" = 1 ] || echo ', checks failed')"
    q "truncate cronq.jobs, cronq.job_runs"
fi

# 9. Limits. (a) A drain of LIM_N noop jobs in a queue limited to
# --max-running 64 against the same drain unlimited, interleaved, with
# cron's flags (the default --batch, 10: the limit does not bind the
# batch) and with --batch 1000 (it does: claimed jobs are running jobs, so
# a claim takes at most the room, 64). The target is judged on the
# default flags; the --batch 1000 ratio is printed beside it. (b) With no
# limit defined, the claim must not pay for them: the idle wake and the
# drain of this binary against CRONQ_BASE (a binary built before limits,
# e.g. of the previous release), each in a database it migrated itself,
# interleaved. Without CRONQ_BASE, (b) is skipped.
LIM_N=${LIM_N:-20000}
# base_db NAME: a database of this cluster migrated by CRONQ_BASE (a copy in
# $tmp/cronq-base), no schedules; its URL in base_url.
base_db() {
    cp "$CRONQ_BASE" "$tmp/cronq-base"
    base_url="host=$PGHOST port=$PGPORT user=postgres dbname=$1"
    q "create database $1"; "$tmp/cronq-base" migrate --db "$base_url" >/dev/null
    qd "$base_url" "delete from cronq.schedules"
}
# base_drains N: REPS_LONG drains of N noop jobs by this binary (times
# appended to da) and by CRONQ_BASE in base_url (to db), interleaved.
base_drains() {
    for _ in $(seq "$REPS_LONG"); do
        q "truncate cronq.jobs, cronq.job_runs"; enqueue_noop "$1"; q "vacuum analyze cronq.jobs"
        da+=("$(time_ms "$CRONQ" run --batch 1000)")
        qd "$base_url" "truncate cronq.jobs, cronq.job_runs"; enqueue_noop "$1" "$base_url" "$tmp/cronq-base"
        qd "$base_url" "vacuum analyze cronq.jobs"
        db+=("$(time_ms "$tmp/cronq-base" run --db "$base_url" --batch 1000)")
    done
}
# lim_drain LABEL ARGS…: LIM_N noop jobs drained by cronq run ARGS…, timed
# into t and verified.
lim_drain() {
    local label=$1; shift
    q "truncate cronq.jobs, cronq.job_runs"; enqueue_noop "$LIM_N"; q "vacuum analyze cronq.jobs"
    t=$(time_ms "$CRONQ" run "$@")
    verify_drain "$LIM_N" "$label" || checks=0
}
if selected 9; then
    a=(); b=(); c=(); d=(); e=(); checks=1
    for _ in $(seq "$REPS_LONG"); do
        lim_drain "unlimited drain"; a+=("$t")
        lim_drain "unlimited drain, --batch 1000" --batch 1000; c+=("$t")
        lim_drain "unlimited drain, --batch 64" --batch 64; e+=("$t")
        "$CRONQ" limit queue:default --max-running 64 >/dev/null
        lim_drain "drain under --max-running 64"; b+=("$t")
        lim_drain "drain under --max-running 64, --batch 1000" --batch 1000; d+=("$t")
        "$CRONQ" limit queue:default --clear >/dev/null
    done
    ru=$(rate "$LIM_N" "$(med "${a[@]}")"); rl=$(rate "$LIM_N" "$(med "${b[@]}")"); r=$(ratio "$rl" "$ru")
    ru2=$(rate "$LIM_N" "$(med "${c[@]}")"); rl2=$(rate "$LIM_N" "$(med "${d[@]}")"); r2=$(ratio "$rl2" "$ru2")
    line "drain $LIM_N noop, --max-running 64 (jobs/s; ref unlimited)" "$rl" "$ru" "$r"
    line "  the same with --batch 1000 (jobs/s; ref unlimited)" "$rl2" "$ru2" "$r2"
    # Under --max-running 64 a claim takes at most 64: the same batches
    # without a limit say what the limit itself costs.
    ru3=$(rate "$LIM_N" "$(med "${e[@]}")"); r3=$(ratio "$rl2" "$ru3")
    line "  the same (jobs/s; ref unlimited --batch 64)" "$rl2" "$ru3" "$r3"
    ok=1; ge "$r" 0.8 || ok=0; [ "$checks" = 1 ] || ok=0
    detail="$r; with --batch 1000: $r2, $r3 of unlimited --batch 64"
    if [ -n "${CRONQ_BASE:-}" ]; then
        base_db limits_base; wa=(); wb=(); da=(); db=()
        for _ in $(seq "$REPS"); do
            wa+=("$(wake_cronq)"); wb+=("$(time_ms "$tmp/cronq-base" run --db "$base_url")")
        done
        base_drains "$LIM_N"
        rw=$(ratio "$(med "${wa[@]}")" "$(med "${wb[@]}")")
        rd=$(ratio "$(rate "$LIM_N" "$(med "${db[@]}")")" "$(rate "$LIM_N" "$(med "${da[@]}")")")
        line "idle wake, no limit defined (ms; ref CRONQ_BASE)" "$(med "${wa[@]}")" "$(med "${wb[@]}")" "$rw"
        line "drain $LIM_N noop, no limit (jobs/s; ref CRONQ_BASE)" \
            "$(rate "$LIM_N" "$(med "${da[@]}")")" "$(rate "$LIM_N" "$(med "${db[@]}")")" "$(ratio "$(rate "$LIM_N" "$(med "${da[@]}")")" "$(rate "$LIM_N" "$(med "${db[@]}")")")"
        le "$rw" 1.05 || ok=0; le "$rd" 1.05 || ok=0
        detail="$detail; no limit: wake $rw, drain time $rd of CRONQ_BASE's"
    fi
    verdict "9 limits: --max-running 64 drain >= 0.8x unlimited (cron's flags); none defined: wake and drain <= 1.05x CRONQ_BASE" \
        "$ok" "$detail$([ "$checks" = 1 ] || echo ', checks failed')"
    q "truncate cronq.jobs, cronq.job_runs"
fi

# 10. Composition. (a) A drain of HOOK_N noop jobs each with an on_success
# hook against the drain of HOOK_N plain noop jobs, interleaved, with
# --batch 1000: the drain writes twice the jobs (each outcome's statement
# enqueues its hook's job), which go to the queue "hooks" that this run
# does not drain: the cost of writing them is measured, not that of
# running them again (>= 0.5x). (b) Jobs without hooks or dependencies must
# not pay for them: the drain of this binary against CRONQ_BASE (built
# before them), each in a database it migrated itself, interleaved (<=
# 1.05x its time). Without CRONQ_BASE, (b) is skipped.
HOOK_N=${HOOK_N:-20000}
hook_file() {
    [ -f "$tmp/noop-hook-$1.jsonl" ] ||
        seq 1 "$1" | awk '{ print "{\"type\":\"noop\",\"on_success\":{\"type\":\"noop\",\"queue\":\"hooks\"}}" }' >"$tmp/noop-hook-$1.jsonl"
    echo "$tmp/noop-hook-$1.jsonl"
}
if selected 10; then
    a=(); b=(); checks=1
    for _ in $(seq "$REPS_LONG"); do
        q "truncate cronq.jobs, cronq.job_runs"; enqueue_noop "$HOOK_N"; q "vacuum analyze cronq.jobs"
        a+=("$(time_ms "$CRONQ" run --batch 1000 --queue default)")
        verify_drain "$HOOK_N" "plain drain" || checks=0
        q "truncate cronq.jobs, cronq.job_runs"
        "$CRONQ" enqueue --jsonl <"$(hook_file "$HOOK_N")" >/dev/null; q "vacuum analyze cronq.jobs"
        b+=("$(time_ms "$CRONQ" run --batch 1000 --queue default)")
        got=$(q "select count(*) filter (where status = 'succeeded') || ' ' ||
                        count(*) filter (where idempotency_key like 'notify:%:success' and queue = 'hooks') from cronq.jobs")
        [ "$got" = "$HOOK_N $HOOK_N" ] ||
            { echo "warning: drain with hooks: $got (succeeded, hook jobs), expected $HOOK_N $HOOK_N"; checks=0; }
    done
    rp=$(rate "$HOOK_N" "$(med "${a[@]}")"); rh=$(rate "$HOOK_N" "$(med "${b[@]}")"); r=$(ratio "$rh" "$rp")
    line "drain $HOOK_N noop, each with on_success (jobs/s; ref without)" "$rh" "$rp" "$r"
    ok=1; ge "$r" 0.5 || ok=0; [ "$checks" = 1 ] || ok=0
    detail="$r"
    if [ -n "${CRONQ_BASE:-}" ]; then
        base_db hooks_base; da=(); db=()
        base_drains "$HOOK_N"
        rd=$(ratio "$(med "${da[@]}")" "$(med "${db[@]}")")
        line "drain $HOOK_N noop, no hooks (jobs/s; ref CRONQ_BASE)" \
            "$(rate "$HOOK_N" "$(med "${da[@]}")")" "$(rate "$HOOK_N" "$(med "${db[@]}")")" \
            "$(ratio "$(rate "$HOOK_N" "$(med "${da[@]}")")" "$(rate "$HOOK_N" "$(med "${db[@]}")")")"
        le "$rd" 1.05 || ok=0
        detail="$detail; no hooks: drain time $rd of CRONQ_BASE's"
    fi
    verdict "10 hooks: drain with on_success >= 0.5x without; none: drain <= 1.05x CRONQ_BASE" \
        "$ok" "$detail$([ "$checks" = 1 ] || echo ', checks failed')"
    q "truncate cronq.jobs, cronq.job_runs"
fi

# Cron engine: fire times per second from `schedule next` (no database).
for expr in '*/5 * * * *' '0 0 1 1 *'; do
    n=100000; [ "$expr" = '0 0 1 1 *' ] && n=5000
    t=$(time_ms "$CRONQ" schedule next "$expr" --from 2026-01-01T00:00:00Z --count $n)
    line "schedule next '$expr' (fire times/s)" "$(rate "$n" "$t")" "-" "-"
done

echo "date: $(date -u +%F), $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{ print $3 }')"
echo "targets met: $n_met of $n_targets"
