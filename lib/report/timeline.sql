-- timeline: what `cronq status --html` draws for each queue and schedule
-- over the last $1 seconds (its longest window), as one json value the C
-- (lib/report/stats.c) spreads over the windows' buckets:
--   "events": [[queue, schedule, kind, seconds_ago, n], ...]: counts of
--     kind "ran" (jobs succeeded, by finished_at), "failed" (attempts
--     failed, timed out or lease-expired, by their end), "finished" (jobs
--     succeeded, dead or cancelled: throughput) and "skipped" (ledger
--     decisions overlap, catchup, paused, disabled, refused, expired, by
--     fire time), grouped by how many whole periods of $3 seconds ago
--     they happened (0: the last $3 seconds), so that the answer is small
--     whatever the history: every window's bucket is a multiple of $3;
--   "gaps": [[from, to], ...]: epoch seconds between which a fire time
--     had no wake in the $2 seconds after it (the runners were not woken:
--     missed); only between two wakes the table kept, or the newest and now,
--     cut at the window's start;
--   "fires": each schedule's cron, zone, anchor and creation, for the C
--     to list its fire times inside the gaps;
--   "now": the database's clock, epoch seconds.
-- Bounded by the window, and by indexes: jobs_finished for the finished
-- jobs, the ones not finished (their attempts may have failed in the
-- window) through jobs_due and jobs_leases, job_runs by its key from those
-- jobs (not from a job that succeeded at its first attempt: a job retried
-- by hand counts the failures since), occurrences_fire for the ledger.
-- cronq.wakes is small (trimmed).
--
-- Parameters:
--   $1  bigint  the window, in seconds (cronq sends 604800, 7 days)
--   $2  int     the grace after a fire time within which a wake must come
--               (cronq sends 120)
--   $3  int     the period events are counted by, in seconds (cronq sends
--               3600)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE timeline AS
-- then
--   EXPLAIN EXECUTE timeline(604800, 120, 3600);
with w as (
    select now() as now, now() - make_interval(secs => $1::bigint) as since),
fin as (
    select j.id, j.queue, j.schedule, j.status, j.attempts, j.finished_at
    from cronq.jobs j, w
    where j.status in ('succeeded', 'dead', 'cancelled') and j.finished_at > w.since),
-- the jobs an attempt may have failed of: a job that succeeded at its
-- first attempt had no other
cand as (
    select fin.id, fin.queue, fin.schedule from fin where fin.status <> 'succeeded' or fin.attempts > 1
    union all
    select j.id, j.queue, j.schedule from cronq.jobs j
    where j.status in ('queued', 'failed') and j.attempts > 0
    union all
    select j.id, j.queue, j.schedule from cronq.jobs j where j.status = 'running'),
ev as (
    select fin.queue, fin.schedule, 'finished' as kind, fin.finished_at as at from fin
    union all
    select fin.queue, fin.schedule, 'ran', fin.finished_at from fin where fin.status = 'succeeded'
    union all
    -- each job's runs by job_runs' key (offset 0: never a scan of all runs)
    select c.queue, c.schedule, 'failed', r.finished_at
    from cand c cross join lateral (
        select x.finished_at from cronq.job_runs x, w
        where x.job_id = c.id and x.finished_at > w.since
          and x.outcome in ('failed', 'timeout', 'lease_expired') offset 0) r
    union all
    select s.queue, o.schedule, 'skipped', o.fire_at
    from cronq.occurrences o join cronq.schedules s on s.name = o.schedule, w
    where o.fire_at > w.since and o.fire_at <= w.now
      and o.decision in ('overlap', 'catchup', 'paused', 'disabled', 'refused', 'expired')),
agg as (
    select ev.queue, ev.schedule, ev.kind,
        greatest(0, floor(extract(epoch from w.now - ev.at) / $3::int))::bigint as ago, count(*) as n
    from ev, w
    group by 1, 2, 3, 4),
wk as (
    select x.started_at,
        coalesce(lead(x.started_at) over (order by x.started_at, x.id), w.now) as next
    from cronq.wakes x, w
    -- from the last wake before the window on (its gap may reach into it)
    where x.started_at >= coalesce((select max(y.started_at) from cronq.wakes y
                                    where y.started_at <= w.since), w.since)),
gaps as (
    select greatest(wk.started_at, w.since) as a, wk.next - make_interval(secs => $2::int) as b
    from wk, w
    where wk.next - make_interval(secs => $2::int) > greatest(wk.started_at, w.since))
select json_build_object(
    'now', (select floor(extract(epoch from w.now))::bigint from w),
    'events', coalesce((select json_agg(json_build_array(agg.queue, agg.schedule, agg.kind, agg.ago, agg.n)
        order by agg.queue, agg.schedule, agg.kind, agg.ago) from agg), '[]'),
    'gaps', coalesce((select json_agg(json_build_array(floor(extract(epoch from gaps.a))::bigint,
        ceil(extract(epoch from gaps.b))::bigint) order by gaps.a) from gaps), '[]'),
    'fires', coalesce((select json_agg(json_build_object('name', s.name, 'queue', s.queue,
        'cron', s.cron, 'timezone', s.timezone, 'enabled', s.enabled,
        'anchor', to_char(s.anchor at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'created', floor(extract(epoch from s.created_at))::bigint) order by s.name)
        from cronq.schedules s), '[]'));
