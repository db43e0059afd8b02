-- health: what "cronq check" judges by, as one row: how late the oldest
-- due job is (ms, 0 when none), how many jobs are due, dead, failed
-- (waiting to retry) and running on an expired lease; how long ago the
-- last wake started (ms, null when none ever did); and the most overdue
-- enabled schedule's name and lateness (ms, nulls when none is); the keys
-- paused (a count, and the first in order); the limits full now (the
-- same); the enabled schedules whose jobs are refused (the newest refusal
-- in the ledger later than their last job, cronq.schedule_refusal(): a
-- count, and the first's "NAME: why"). A job is late from when it became
-- due: its run_at, or its enqueue when its author wrote an earlier run_at
-- (year 1 made every check CRITICAL). A job held by a pause is not late:
-- it counts in neither the lag nor the due jobs (one waiting for room
-- under a limit does). Each
-- subquery is shaped for its index: the due and failed counts and the lag
-- read jobs_due, the stuck count jobs_leases, the most overdue schedule
-- schedules_due, the newest wake the primary key.
--
-- No parameters.
--
-- Try it by hand: paste this file after
--   PREPARE health AS
-- then
--   EXECUTE health;
--   EXPLAIN EXECUTE health;
select
    (select coalesce(greatest(0, floor(extract(epoch from now() - min(greatest(run_at, created_at))) * 1000))::bigint, 0)
        from cronq.jobs where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())
            and not cronq.held((select cronq.paused_keys()), queue, type, limit_key)),
    (select count(*) from cronq.jobs where status in ('queued', 'failed') and run_at <= now()
            and (expires_at is null or expires_at > now())
            and not cronq.held((select cronq.paused_keys()), queue, type, limit_key)),
    (select count(*) from cronq.jobs where status = 'dead'),
    (select count(*) from cronq.jobs where status = 'failed'),
    (select count(*) from cronq.jobs where status = 'running' and locked_until < now()),
    (select greatest(0, floor(extract(epoch from now() - started_at) * 1000))::bigint
        from cronq.wakes order by id desc limit 1),
    o.name, o.ms,
    (select count(*) from cronq.pauses where until is null or until > now()),
    (select min(key) from cronq.pauses where until is null or until > now()),
    (select count(*) from unnest((select cronq.full_keys())) k),
    (select min(k) from unnest((select cronq.full_keys())) k),
    r.n, r.first
from (select 1) one left join lateral (
    -- enabled schedules whose newest refusal came after their last job
    select count(*) as n, min(x.name || ': ' || x.detail) as first
    from (select s.name, cronq.schedule_refusal(s.name, s.last_enqueued_at) as detail
          from cronq.schedules s where s.enabled) x
    where x.detail is not null) r on true
left join lateral (
    -- late from its next run, or from its last change if later (a change
    -- of spread moves the next run back up to a day: not late for that)
    select name, greatest(0, floor(extract(epoch from now() - greatest(next_run_at, updated_at)) * 1000))::bigint as ms
    from cronq.schedules
    where enabled and next_run_at < now() order by greatest(next_run_at, updated_at) limit 1) o on true;
