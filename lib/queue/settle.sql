-- settle: the blocked jobs whose parent's outcome jobs_settle (0017) left
-- to a wake because another transaction held them locked (a role may lock
-- its own rows; the statement recording an outcome never waits for it).
-- Each is settled again from its parents as they are now: cancelled
-- (dependency_failed) when one ended dead or cancelled, else queued when
-- none is left to succeed (a parent gone, purged, counts as succeeded, as
-- in jobs_wait), else blocked with the count corrected. 500 at a time; one
-- still held locked is skipped, not waited for, and stays for a later
-- wake; an entry whose job is no longer blocked goes.
-- Returns how many jobs were settled.
--
-- No parameters.
--
-- Try it by hand: paste this file after
--   PREPARE settle AS
-- then
--   EXPLAIN EXECUTE settle;
with s as (
    select j.id, j.depends_on from cronq.jobs j
    where j.id in (select l.job_id from cronq.settle_later l) and j.status = 'blocked'
    order by j.id limit 500
    for no key update of j skip locked
), n as (
    select s.id,
        (select count(*) from cronq.jobs p
         where p.id = any(s.depends_on) and p.status <> 'succeeded') as waiting,
        (select min(p.id) from cronq.jobs p
         where p.id = any(s.depends_on) and p.status in ('dead', 'cancelled')) as failed_id
    from s
), upd as (
    update cronq.jobs c set
        status = case when n.failed_id is not null then 'cancelled'
                      when n.waiting = 0 then 'queued' else 'blocked' end,
        waiting_for = n.waiting,
        error_code = case when n.failed_id is not null then 'dependency_failed' else c.error_code end,
        last_error = case when n.failed_id is not null
            then format('job %s, which it depends on, ended %s', n.failed_id,
                        (select p.status from cronq.jobs p where p.id = n.failed_id))
            else c.last_error end,
        finished_at = case when n.failed_id is not null then now() else c.finished_at end,
        updated_at = now()
    from n
    where c.id = n.id
    returning c.id
), gone as (
    delete from cronq.settle_later l
    where l.job_id in (select upd.id from upd)
       or not exists (select 1 from cronq.jobs j where j.id = l.job_id and j.status = 'blocked')
)
select count(*) from upd;
