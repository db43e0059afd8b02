-- release: fair sharing. A worker whose batch meets a slow job gives back
-- the jobs it claimed behind it and has not started, so that an idle
-- worker (of any runner) can start them now, and notes when its current
-- job's task started (the claim wrote the claim's time). Fenced like every
-- outcome: only rows still running, locked by $1, at the attempt given are
-- touched. A job given back made no attempt: its attempt is not counted
-- and it gets no cronq.job_runs row; one an operator asked to cancel
-- meanwhile ends cancelled, as cancel does to a queued job. Rows another
-- transaction holds locked (the running job's own, if it cancelled a job
-- of its batch) are skipped, never waited for: this runs while the job
-- does, and that lock is released only when the job ends.
-- Returns the ids given back. The worker keeps the others and starts each
-- in turn only after a heartbeat says it is still its own (an earlier try
-- of this statement may have committed, its answer lost) and not
-- cancelled.
--
-- Parameters:
--   $1  text         the worker's name
--   $2  bigint[]     the jobs to give back
--   $3  int[]        their attempts, in the same order
--   $4  bigint       the running job, or null
--   $5  int          its attempt
--   $6  timestamptz  its claim's time (the base, as in record.sql)
--   $7  bigint       when its task started, in milliseconds after the base
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE release AS
-- then
--   EXPLAIN EXECUTE release('me', '{2,3}', '{1,1}', 1, 1, now(), 250);
with runner as (
    -- a runner's transaction: its settling of dependants is budgeted (sql/0025)
    select pg_catalog.set_config('cronq.settling', 'on', true) as v
), back as (
    update cronq.jobs j set
        status = case when j.cancel_requested then 'cancelled' else 'queued' end,
        attempts = j.attempts - 1, locked_by = null, locked_until = null,
        started_at = null,
        finished_at = case when j.cancel_requested then now() end,
        last_error = case when j.cancel_requested then 'cancelled by an operator' else j.last_error end,
        error_code = case when j.cancel_requested then 'cancelled' else j.error_code end,
        cancel_requested = false, updated_at = now()
    from unnest($2::bigint[], $3::int[]) as b(id, attempt)
    where j.id = any($2::bigint[]) and j.id = b.id
        and j.id = any(array(select id from cronq.jobs where id = any($2::bigint[])
                             for no key update skip locked))
        and j.status = 'running' and j.locked_by = $1 and j.attempts = b.attempt
        and (select v from runner) is not null
    returning j.id
), cur as (
    -- run whether or not the query below reads it, like every data-modifying WITH
    update cronq.jobs j set started_at = $6::timestamptz + $7::bigint * interval '1 millisecond'
    where j.id = $4::bigint
        and j.id = any(array(select id from cronq.jobs where id = $4::bigint for no key update skip locked))
        and j.status = 'running' and j.locked_by = $1 and j.attempts = $5::int
)
select id from back;
