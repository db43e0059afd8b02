-- status: the document of "cronq status" (--json prints it; the tables
-- and --prometheus are made from it), built by PostgreSQL as one json
-- value: job counts overall, per queue and per (queue, type); how late the
-- due jobs are; attempts per hour over the last $2 hours per queue; the
-- expired leases and the last dead jobs; the schedules, overdue or not;
-- the last wake; the keys paused; the limits, with their running jobs,
-- recent starts and room. Due jobs held by a pause ("held") are counted
-- apart: neither due nor late (jobs waiting for room under a limit are
-- due, and late when they wait). The C adds only each schedule's "error" (a cron
-- expression or zone it cannot plan).
-- qt: counts per (queue, type), with the start of the oldest running job;
-- q: the same per queue; rr: the attempts finished in the last $2 hours,
-- read once; hr: those per hour (hour 0 = the last 60 minutes) per queue;
-- hist: those as two arrays per queue, oldest hour first; dur: the
-- durations of the attempts that ran (succeeded, failed, timeout) per
-- (queue, type): count, sum and the 0.5, 0.9 and 0.99 quantiles. Times are
-- RFC 3339 UTC text; ages are whole seconds, never negative; durations are
-- seconds, to the millisecond.
-- ql: the queues listed, when there are more than $3: those with jobs due,
-- running, failed, dead or on an expired lease first, the most such jobs
-- first, then the most jobs (one role's thousands of queue names must not
-- make the page, the metrics and the tables unusable for everyone, nor
-- hide another's queue in trouble); sl: the schedules listed, overdue or
-- refused first, then enabled, by next run. *_omitted say how many not.
--
-- Parameters:
--   $1  int  the grace, in seconds, before a schedule counts as overdue
--            (cronq sends 120)
--   $2  int  the hours of history in runs_24h and durations (cronq sends 24)
--   $3  int  the most queues and schedules listed (0: all); the counts
--            overall are of all (cronq sends 200, or status --limit)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE status AS
-- then
--   EXECUTE status(120, 24, 200);
--   EXPLAIN EXECUTE status(120, 24, 200);
with pz as (
    select key, until, paused_by, paused_at from cronq.pauses where until is null or until > now()),
qt as (
    select queue, type,
        count(*) filter (where status = 'queued') as queued,
        count(*) filter (where status = 'running') as running,
        count(*) filter (where status = 'succeeded') as succeeded,
        count(*) filter (where status = 'failed') as failed,
        count(*) filter (where status = 'dead') as dead,
        count(*) filter (where status = 'cancelled') as cancelled,
        count(*) filter (where status = 'blocked') as blocked,
        count(*) as total,
        count(*) filter (where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())) as due,
        min(greatest(run_at, created_at)) filter (where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())) as oldest_due,
        count(*) filter (where status = 'running' and locked_until < now()) as expired,
        count(*) filter (where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())
            and cronq.held((select cronq.paused_keys()), queue, type, limit_key)) as held,
        min(greatest(run_at, created_at)) filter (where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())
            and not cronq.held((select cronq.paused_keys()), queue, type, limit_key)) as oldest_free,
        min(started_at) filter (where status = 'running') as oldest_running
    from cronq.jobs group by queue, type),
q as (
    select queue, sum(queued)::bigint as queued, sum(running)::bigint as running,
        sum(succeeded)::bigint as succeeded, sum(failed)::bigint as failed,
        sum(dead)::bigint as dead, sum(cancelled)::bigint as cancelled,
        sum(blocked)::bigint as blocked, sum(total)::bigint as total, coalesce(sum(due - held), 0)::bigint as due,
        min(oldest_free) as oldest_due, sum(expired)::bigint as expired,
        coalesce(sum(held), 0)::bigint as held, min(oldest_running) as oldest_running
    from qt group by queue),
ql as (
    select queue from q
    order by due + running + failed + dead + expired > 0 desc, due + running + failed + dead + expired desc,
        total desc, queue
    limit nullif($3::int, 0)),
rr as materialized (
    select j.queue, j.type, r.outcome, r.finished_at, extract(epoch from r.duration) as secs
    from cronq.job_runs r join cronq.jobs j on j.id = r.job_id
    where r.finished_at > now() - make_interval(hours => $2::int)),
hr as (
    select queue,
        least($2::int - 1, greatest(0, floor(extract(epoch from now() - finished_at) / 3600)))::int as ago,
        count(*) filter (where outcome = 'succeeded') as ok,
        count(*) filter (where outcome in ('failed', 'timeout', 'lease_expired')) as bad
    from rr
    group by 1, 2),
dur as (
    select queue, type, count(*) as n, sum(secs) as total,
        percentile_cont(array[0.5, 0.9, 0.99]) within group (order by secs::float8) as p
    from rr where secs is not null and outcome in ('succeeded', 'failed', 'timeout')
    group by queue, type),
hist as (
    select q.queue,
        json_agg(coalesce(hr.ok, 0) order by g.ago desc) as ok,
        json_agg(coalesce(hr.bad, 0) order by g.ago desc) as bad
    from ql q cross join generate_series(0, $2::int - 1) g(ago)
    left join hr on hr.queue = q.queue and hr.ago = g.ago
    group by q.queue),
s as (
    select s.name, s.cron, s.timezone, s.type, s.queue, s.enabled,
        to_char(s.next_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as next_run_at,
        -- late from its next run, or from its last change if later (a
        -- change of spread moves the next run back up to a day)
        case when s.enabled and s.next_run_at < now()
            then greatest(0, floor(extract(epoch from now() - greatest(s.next_run_at, s.updated_at))))::bigint
            else 0 end as overdue_seconds,
        coalesce(s.enabled and greatest(s.next_run_at, s.updated_at) < now() - make_interval(secs => $1::int), false)
            as overdue,
        to_char(s.last_enqueued_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as last_enqueued_at,
        s.last_job_id, j.status as last_job_status,
        exists (select 1 from pz where pz.key = 'schedule:' || s.name) as paused,
        to_char(j.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as last_job_finished_at,
        case when s.enabled then cronq.schedule_refusal(s.name, s.last_enqueued_at) end as refused
    from cronq.schedules s left join cronq.jobs j on j.id = s.last_job_id),
sl as (
    select * from s
    order by s.overdue or s.refused is not null desc, s.enabled desc, s.next_run_at nulls last, s.name
    limit nullif($3::int, 0))
select json_build_object(
    'generated_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'jobs', (select json_build_object('queued', t.queued, 'running', t.running,
            'succeeded', t.succeeded, 'failed', t.failed, 'dead', t.dead,
            'cancelled', t.cancelled, 'blocked', t.blocked, 'total', t.total)
        from (
            select coalesce(sum(queued), 0)::bigint as queued, coalesce(sum(running), 0)::bigint as running,
                coalesce(sum(succeeded), 0)::bigint as succeeded, coalesce(sum(failed), 0)::bigint as failed,
                coalesce(sum(dead), 0)::bigint as dead, coalesce(sum(cancelled), 0)::bigint as cancelled,
                coalesce(sum(blocked), 0)::bigint as blocked,
                coalesce(sum(total), 0)::bigint as total from q) t),
    'due', (select coalesce(sum(due), 0)::bigint from q),
    'held', (select coalesce(sum(held), 0)::bigint from q),
    'paused', coalesce((select json_agg(json_build_object('key', key,
            'until', to_char(until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'paused_by', paused_by,
            'paused_at', to_char(paused_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
        order by key) from (select * from pz order by key limit nullif($3::int, 0)) pz), '[]'),
    'paused_omitted', greatest(0, (select count(*) from pz) - coalesce(nullif($3::int, 0), 2147483647)),
    'limits', coalesce((select json_agg(json_build_object('key', l.key,
            'max_running', l.max_running, 'rate', l.rate, 'per_seconds', l.per_seconds,
            'running', l.running, 'started', l.started, 'room', l.room, 'full', l.full,
            'set_by', l.set_by,
            'set_at', to_char(l.set_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
        order by l.key) from cronq.limits_now l), '[]'),
    'lag_seconds', (select coalesce(greatest(0, floor(extract(epoch from now() - min(oldest_due))))::bigint, 0)
        from q),
    'oldest_due_at', (select to_char(min(oldest_due) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        from q),
    'queues', coalesce((select json_agg(json_build_object('queue', q.queue,
            'queued', q.queued, 'running', q.running, 'succeeded', q.succeeded,
            'failed', q.failed, 'dead', q.dead, 'cancelled', q.cancelled, 'blocked', q.blocked,
            'total', q.total,
            'due', q.due, 'held', q.held,
            'paused', exists (select 1 from pz where pz.key = 'queue:' || q.queue),
            'lag_seconds', coalesce(greatest(0, floor(extract(epoch from now() - q.oldest_due)))::bigint, 0),
            'oldest_due_at', to_char(q.oldest_due at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'expired_leases', q.expired,
            'oldest_running_seconds',
                coalesce(greatest(0, floor(extract(epoch from now() - q.oldest_running)))::bigint, 0),
            'oldest_running_at', to_char(q.oldest_running at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'runs_24h', json_build_object('succeeded', h.ok, 'failed', h.bad))
        order by q.queue) from q join hist h on h.queue = q.queue), '[]'),
    'queues_omitted', (select count(*) from q) - (select count(*) from ql),
    'oldest_running_seconds', (select coalesce(greatest(0, floor(extract(epoch from now() - min(oldest_running))))::bigint, 0)
        from q),
    'durations', json_build_object('window_hours', $2::int,
        'runs', coalesce((select json_agg(json_build_object('queue', d.queue, 'type', d.type,
            'count', d.n, 'sum_seconds', round(d.total, 3),
            'p50_seconds', round(d.p[1]::numeric, 3), 'p90_seconds', round(d.p[2]::numeric, 3),
            'p99_seconds', round(d.p[3]::numeric, 3))
        order by d.queue, d.type) from dur d join ql on ql.queue = d.queue), '[]')),
    'types', coalesce((select json_agg(json_build_object('queue', t.queue, 'type', t.type,
            'queued', t.queued, 'running', t.running, 'succeeded', t.succeeded,
            'failed', t.failed, 'dead', t.dead, 'cancelled', t.cancelled, 'blocked', t.blocked,
            'total', t.total)
        order by t.queue, t.type) from qt t join ql on ql.queue = t.queue), '[]'),
    'expired_leases', json_build_object(
        'count', (select coalesce(sum(expired), 0)::bigint from q),
        'jobs', coalesce((select json_agg(x) from (
            select id, queue, type, attempts, max_attempts, locked_by,
                to_char(locked_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as locked_until,
                greatest(0, floor(extract(epoch from now() - locked_until)))::bigint as expired_seconds
            from cronq.jobs where status = 'running' and locked_until < now()
            order by locked_until, id limit 20) x), '[]')),
    'dead', json_build_object(
        'count', (select coalesce(sum(dead), 0)::bigint from q),
        'jobs', coalesce((select json_agg(x) from (
            select id, queue, type, attempts, error_code, last_error,
                to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as finished_at
            from cronq.jobs where status = 'dead'
            order by finished_at desc nulls last, id desc limit 10) x), '[]')),
    'schedules', coalesce((select json_agg(s order by s.name) from sl s), '[]'),
    'schedules_omitted', (select count(*) from s) - (select count(*) from sl),
    'overdue_schedules', (select count(*) from s where s.overdue),
    'last_wake', (select json_build_object('id', w.id, 'worker', w.worker, 'host', w.host,
            'pid', w.pid,
            'started_at', to_char(w.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'finished_at', to_char(w.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'seconds_ago', greatest(0, floor(extract(epoch from now() - w.started_at)))::bigint,
            'jobs_run', w.jobs_run, 'jobs_failed', w.jobs_failed, 'exit_status', w.exit_status)
        from cronq.wakes w order by w.id desc limit 1));
