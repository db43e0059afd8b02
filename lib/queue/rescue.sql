-- rescue: the running jobs whose lease has expired (their worker stopped
-- renewing it), 500 at a time, oldest lease first. Each is then recorded
-- through record.sql with $13 true, which leaves alone any whose lease was
-- renewed meanwhile. A row another transaction holds locked is left out
-- (not waited for, and not in the way of the others: 500 rows one role
-- keeps locked must not stop every other role's rescue); a later rescue
-- takes it.
--
-- No parameters.
--
-- Try it by hand: paste this file after
--   PREPARE rescue AS
-- then
--   EXPLAIN EXECUTE rescue;
select id, attempts, locked_by, started_at, cancel_requested from cronq.jobs
where status = 'running' and locked_until < now()
order by locked_until limit 500
for no key update skip locked;
