-- heartbeat: renew worker $1's leases on a batch of running jobs, and say
-- which of them an operator asked to cancel. Fenced like every outcome: a
-- row is renewed only while it is running, locked by $1, at the attempt
-- given for it; bounded by the batch's ids so that its cost never grows
-- with other runners' jobs. The rows not returned are lost to the worker.
-- A row another transaction holds locked (a session of the job's author,
-- or the job's own transaction, may lock it) is skipped, never waited for:
-- it comes back as still the worker's, its lease not renewed this time,
-- with cancel_requested false; the next heartbeat tells.
--
-- Parameters:
--   $1  text      the worker's name
--   $2  bigint    the new lease, in milliseconds from now
--   $3  bigint[]  the jobs' ids
--   $4  int[]     their attempts, in the same order
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE heartbeat AS
-- then
--   EXPLAIN EXECUTE heartbeat('me', 60000, '{1,2}', '{1,1}');
with free as (
    select id from cronq.jobs where id = any($3::bigint[]) for no key update skip locked
), renewed as (
    update cronq.jobs j set locked_until = now() + $2::bigint * interval '1 millisecond'
    from unnest($3::bigint[], $4::int[]) as h(id, attempt)
    where j.id = any(array(select id from free)) and j.id = h.id
        and j.status = 'running' and j.locked_by = $1 and j.attempts = h.attempt
    returning j.id, j.cancel_requested
)
select id, cancel_requested from renewed
union all
select id, false from cronq.jobs where id = any($3::bigint[]) and id <> all(array(select id from free));
