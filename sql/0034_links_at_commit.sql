-- 0034_links_at_commit.sql — a transaction's new dependants are written
-- into each parent's row once, when it commits, not once a statement;
-- and a new dependant's count of what it waits for is taken again then.
--
-- 0031 wrote a statement's new dependants into each parent once, at the
-- statement's end. Each call of the SQL API's cronq.enqueue() is a
-- statement of its own, so a loop of calls (select cronq.enqueue(...,
-- depends_on => array[p]) from a table, one statement calling it per row)
-- still wrote the parent once a call, each version holding the whole
-- array so far: 1,000 dependants of one job in 2.0 s, 2,000 in 4.9 s,
-- 4,000 in 15.8 s (a plain enqueue: 0.23 ms a call).
--
-- Now the end of a statement that left links only asks for them to be
-- applied at the commit (a row in cronq.link_commits, one a transaction,
-- whose deferred constraint trigger fires then), and jobs_link_commit
-- applies the transaction's links at once, as jobs_link applied a
-- statement's. SET CONSTRAINTS ALL IMMEDIATE (or naming
-- cronq.link_commits_apply) applies them at each statement's end again.
--
-- Between its statement and the commit a new dependant is not yet among
-- its parents' dependants, so a later statement of the same transaction
-- that changes a parent's status does not reach it. The commit takes each
-- new blocked dependant's count again from its parents as they are then
-- (all locked by this transaction since jobs_plan read them: no other
-- transaction can have changed them): a parent retried after its success
-- is waited for again, one an admin's statement made succeeded is not
-- waited for (0032 could not tell that one from a parent that had
-- succeeded before). A parent cancelled or dead by then is noted for the
-- next wake, which cancels the dependant, as 0032 does for a parent its
-- own statement ended.
--
-- Binaries read nothing new.
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- One row a transaction whose statements left links, from the first
-- such statement's end to the commit (jobs_link_commit deletes it): its
-- insert queues the deferred trigger below once. A row of a subtransaction
-- rolled back goes with its trigger event, and the next statement asks
-- again. Unlogged, the owner's alone: no role has a grant on it.
create unlogged table if not exists cronq.link_commits (
    xid xid8 primary key default pg_catalog.pg_current_xact_id()
);

-- At the end of each statement whose rows left links (jobs_plan sets
-- cronq.links_left for the trigger's WHEN, as in 0031): the links are
-- applied when the transaction commits.
create or replace function cronq.jobs_link() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
begin
    insert into cronq.link_commits default values on conflict do nothing;
    perform pg_catalog.set_config('cronq.links_left', '', true);
    return null;
end
$$;
revoke execute on function cronq.jobs_link() from public;

-- 0032's jobs_link, run at the commit (or at a statement's end under SET
-- CONSTRAINTS IMMEDIATE): the links since the last taken, each parent's
-- new dependants appended in one update, in id order, a parent that ended
-- cancelled or dead noted for the next wake; then each new blocked
-- dependant's count taken again (above), in a statement of its own (a
-- job can be both a new dependant and a parent whose dependants the
-- first statement appends to). Runs as the owner, as 0031's.
create or replace function cronq.jobs_link_commit() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
set enable_seqscan = off set enable_nestloop = off set jit = off as $$
declare
    taken text := pg_catalog.current_setting('cronq.links_taken', true);
    last bigint;
    kids bigint[];
begin
    delete from cronq.link_commits c where c.xid = pg_catalog.pg_current_xact_id();
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
    select max(l.seq), pg_catalog.array_agg(l.child) into last, kids from l;
    if last is not null then
        perform pg_catalog.set_config('cronq.links_taken', last::text, true);
        -- jobs_plan's count, taken again: each probe of a parent by its
        -- key (a subquery on its own, as in jobs_link)
        with r as (
            select k.id, k.waiting_for as had,
                   (select count(*) from cronq.jobs p
                    where p.id = any(k.depends_on) and p.status <> 'succeeded') as n
            from cronq.jobs k
            where k.id = any(kids) and k.status = 'blocked'
        )
        update cronq.jobs c
        set waiting_for = r.n, status = case when r.n = 0 then 'queued' else 'blocked' end, updated_at = now()
        from r
        where c.id = any(array(select r.id from r where r.n is distinct from r.had)) and c.id = r.id;
    end if;
    perform pg_catalog.set_config('cronq.links_left', '', true);
    return null;
end
$$;
revoke execute on function cronq.jobs_link_commit() from public;

drop trigger if exists link_commits_apply on cronq.link_commits;
create constraint trigger link_commits_apply after insert on cronq.link_commits
    deferrable initially deferred for each row
    execute function cronq.jobs_link_commit();

-- 0032's, and with the links the rows of cronq.link_commits that
-- committed transactions left (none: jobs_link_commit deletes its own,
-- unless the owner disabled its trigger).
create or replace function cronq.sweep_links() returns bigint
language sql security definer set search_path = pg_catalog, pg_temp
begin atomic
    with c as (
        delete from cronq.link_commits
        returning 1
    ), d as (
        delete from cronq.plan_links l
        returning 1)
    select count(*) from d;
end;
revoke execute on function cronq.sweep_links() from public;
