-- heartbeat: renew worker $1's leases on a batch of running jobs, and say
-- which of them an operator asked to cancel. Fenced like every outcome: a
-- row is renewed only while it is running, locked by $1, at the attempt
-- given for it; bounded by the batch's ids so that its cost never grows
-- with other runners' jobs. The rows not returned are lost to the worker.
-- A row another transaction holds locked (a session of the job's author,
-- or the job's own transaction, may lock it) is skipped, never waited for:
-- it comes back not renewed, when it is still the worker's as far as the
-- statement's snapshot tells (fenced the same way), with its
-- cancel_requested; the worker's own count of its lease then runs on, and
-- stops the job when the lease runs out unrenewed (lib/run/worker.c).
-- Columns: id, cancel_requested, renewed.
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
select id, cancel_requested, true from renewed
union all
select j.id, j.cancel_requested, false
from cronq.jobs j join unnest($3::bigint[], $4::int[]) as h(id, attempt) on j.id = h.id
where j.id = any($3::bigint[]) and j.id <> all(array(select id from free))
    and j.status = 'running' and j.locked_by = $1 and j.attempts = h.attempt;
