-- expire: the waiting jobs (queued, or failed and waiting to retry) whose
-- start deadline has passed end cancelled, error_code expired, 500 at a
-- time, each with a job_runs row for the attempt that never started. The
-- claim never takes such a job (claim.sql); this is each wake's sweep.
-- A row a claim (or anyone) holds locked is skipped, not waited for, and
-- the update looks again at what it locked: a job claimed meanwhile is
-- running, and stays so. Returns how many were expired.
--
-- Parameters:
--   $1  text   the worker's name (job_runs.worker)
--
-- Try it by hand: paste this file after
--   PREPARE expire AS
-- then
--   EXPLAIN EXECUTE expire('me');
with late as (
    select id from cronq.jobs
    where status in ('queued', 'failed') and expires_at <= now()
    order by expires_at limit 500
    for no key update skip locked
), upd as (
    update cronq.jobs j set status = 'cancelled', error_code = 'expired',
        last_error = 'not started by its deadline, '
            || to_char(j.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        locked_by = null, locked_until = null, finished_at = now(), updated_at = now()
    from late
    where j.id = late.id and j.status in ('queued', 'failed') and j.expires_at <= now()
    returning j.id, j.attempts, j.last_error
), runs as (
    insert into cronq.job_runs (job_id, attempt, worker, finished_at, outcome, error_code, error)
    select upd.id, upd.attempts + 1, $1, now(), 'cancelled', 'expired', upd.last_error from upd
)
select count(*) from upd;
