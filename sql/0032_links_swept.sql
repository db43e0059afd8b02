-- 0032_links_swept.sql — links a statement left behind are swept by
-- purge, and a parent that ended in the statement that made its
-- dependant settles that dependant at the next wake.
--
-- Two findings of the review of 0031 (helper-62):
--
-- A role that set cronq.links_taken past its links, or cleared
-- cronq.links_left (in a RETURNING, say), kept jobs_link from taking
-- them: its jobs stayed unlinked (its own harm) and the links stayed,
-- committed, never read again: a row a job that role wrote, for good.
-- cronq.sweep_links() deletes those links (any other transaction's
-- are not committed, so not seen); purge calls it (as the owner or a
-- cronq_admin), so the daily cronq-purge schedule bounds them to a day
-- of that role's jobs.
--
-- A parent cancelled in the statement that writes its dependant (insert
-- ... returning cronq.cancel(parent)) ended before jobs_link appended the
-- dependant to it, so its settling did not see it: the dependant stayed
-- blocked for good (0029 appended row by row and cancelled it). Now
-- jobs_link notes such a parent (dead or cancelled when its new
-- dependants are appended, one of which is blocked) in
-- cronq.settle_parents, from the first new dependant on: the next wake
-- recounts them from their parents as they are, as it does a parent past
-- a runner's budget.
--
-- Binaries read nothing new; purge calls sweep_links (binaries of 32 on).
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- As 0031's, and a parent that ended before its new dependants were
-- appended is noted for the next wake (above). Its status is read from
-- the row the update writes: no other transaction can change it between
-- jobs_plan's lock and this (both in this transaction); this statement
-- can (a function its RETURNING or its select calls), as the author, or
-- an admin. Only a dead or cancelled parent with a blocked new dependant
-- is noted: jobs_plan cancels a job one of whose parents has ended so,
-- so that state is one this statement made, and the note's first page
-- cancels the dependant. A parent that had succeeded when jobs_plan read
-- it is counted already: noting every ended parent of a blocked job let
-- a role write a note per parent (100,000 in one statement) that each
-- recounted the same job's parents at the wake, for every role's wakes
-- (helper-63). A parent an admin's statement makes succeeded after
-- jobs_plan read it cannot be told from one that had, and is not noted.
create or replace function cronq.jobs_link() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
set enable_seqscan = off set enable_nestloop = off set jit = off as $$
declare
    taken text := pg_catalog.current_setting('cronq.links_taken', true);
    last bigint;
begin
    with l as (
        delete from cronq.plan_links l
        where l.xid = pg_catalog.pg_current_xact_id_if_assigned()
          and l.seq > case when taken ~ '^[0-9]{1,18}$' then taken::bigint else 0 end
        returning l.seq, l.child
    ), e as (
        select p.parent, pg_catalog.array_agg(l.child order by l.child) as kids
        from l cross join lateral
            pg_catalog.unnest((select c.depends_on from cronq.jobs c where c.id = l.child)) as p(parent)
        group by p.parent
    ), u as (
        update cronq.jobs j set dependants = coalesce(j.dependants, '{}') || e.kids
        from e
        where j.id = any(array(select e.parent from e)) and j.id = e.parent
        returning j.id, j.status, pg_catalog.cardinality(j.dependants) - pg_catalog.cardinality(e.kids) as before,
                  e.kids
    ), n as (
        insert into cronq.settle_parents (job_id, after_pos)
        select u.id, u.before from u
        where u.status in ('dead', 'cancelled')
          and exists (select 1 from cronq.jobs c where c.id = any(u.kids) and c.status = 'blocked')
        order by u.id
    )
    select max(l.seq) into last from l;
    if last is not null then
        perform pg_catalog.set_config('cronq.links_taken', last::text, true);
    end if;
    perform pg_catalog.set_config('cronq.links_left', '', true);
    return null;
end
$$;
revoke execute on function cronq.jobs_link() from public;

-- The links left behind: every link it sees. A link is seen by another
-- transaction only once its own has committed, and a committed
-- transaction's links are all left behind (jobs_link was kept from
-- taking them, above): those of statements under way are not yet
-- committed, so not seen, and stay. Returns how many went. Runs as the
-- owner (no role has a grant on the table); purge calls it, as the owner
-- or a cronq_admin (grants.sql). A scan of the whole table: it holds only
-- the links of the statements under way and those left behind.
create or replace function cronq.sweep_links() returns bigint
language sql security definer set search_path = pg_catalog, pg_temp
begin atomic
    with d as (
        delete from cronq.plan_links l
        returning 1)
    select count(*) from d;
end;
revoke execute on function cronq.sweep_links() from public;
