-- expire: the waiting jobs (queued, or failed and waiting to retry) whose
-- start deadline has passed end cancelled, error_code expired, 500 at a
-- time, each with a job_runs row for the attempt that never started. The
-- claim never takes such a job (claim.sql); this is each wake's sweep.
-- A row a claim (or anyone) holds locked is skipped, not waited for, and
-- cronq.expire_jobs (0013: the update and the history, shared with an
-- enqueue whose unique key a late job holds) looks again at what it
-- locked: a job claimed meanwhile is running, and stays so. Returns
-- whether the page was full (another may have work) and how many were
-- expired.
--
-- Parameters:
--   $1  text   the worker's name (job_runs.worker)
--
-- Try it by hand: paste this file after
--   PREPARE expire AS
-- then
--   EXPLAIN EXECUTE expire('me');
with runner as materialized (
    -- a runner's transaction: its settling of dependants is budgeted (sql/0025)
    select pg_catalog.set_config('cronq.settling', 'on', true)
), page as materialized (
    select array(
        select id from cronq.jobs
        where status in ('queued', 'failed') and expires_at <= now()
        order by expires_at limit 500
        for no key update skip locked) as ids
    from runner
)
select cardinality(page.ids) = 500, cronq.expire_jobs($1, page.ids)
from page;
