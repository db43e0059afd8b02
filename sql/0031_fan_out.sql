-- 0031_fan_out.sql — a statement's new dependants are written into each
-- parent's row once, at the end of the statement, not once a dependant.
--
-- jobs_plan (0017, 0029) appended each new job's id to every parent's
-- dependants with an update, row by row: a parent given N dependants in
-- one statement was written N times in one transaction, each version
-- holding the whole array so far (out of line past ~250 entries), each
-- update reaching the row through the versions before it. 1,000
-- dependants of one job in one `cronq enqueue --jsonl` took 0.5 s, 2,000
-- 3 s, 4,000 14 s, 8,000 61 s; a reviewer's 100,000 ran over an hour,
-- the parent's row locked throughout.
--
-- Now jobs_plan locks the parents as the update did (FOR NO KEY UPDATE: a
-- runner recording a parent's outcome waits for this transaction, as it
-- waited for the update) and reads their status as before, and leaves the
-- new job's id in cronq.plan_links. At the end of the
-- statement, jobs_link appends each parent's new dependants at once, in id
-- order, and empties the statement's links: 8,000 dependants of one job in
-- one statement then take about as long as 8,000 jobs without. A job a
-- conflict kept out (insert ... on conflict do nothing on a key another
-- transaction committed meanwhile, as two runs at once of one backfill's
-- --then job) is no longer appended to its parents: the row
-- trigger runs before the conflict is known; only jobs the statement
-- wrote are linked.
--
-- Each call of the SQL API's cronq.enqueue() is a statement of its own:
-- a loop of calls still writes a parent once a call (docs/semantics.md).
--
-- Binaries read nothing new.
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- The links of the statements under way: a job whose parents (its
-- depends_on, read back from its row) get it as a dependant, until its
-- statement ends (jobs_link deletes them). Only the transaction that wrote
-- a row ever reads it (by its xid: never reused); a row outlives its
-- statement only if that statement failed, and then it was never
-- committed, or if its role set cronq.links_left or cronq.links_taken
-- itself (jobs_link, below): then its own jobs stay unlinked and the row
-- stays, committed, never read again (one a job that role wrote; the
-- owner may delete those whose pg_xact_status(xid) is not 'in
-- progress'). A deleted row stays in the index until the transaction ends,
-- so each statement's links are found after the last that jobs_link took
-- (seq, kept in the transaction's setting cronq.links_taken): a
-- transaction of 10,000 calls of cronq.enqueue() would otherwise read
-- every link it ever wrote at each call. Unlogged: a link is needed only
-- within its transaction. The owner's alone: no role has a grant on it.
create unlogged table if not exists cronq.plan_links (
    xid xid8 not null default pg_catalog.pg_current_xact_id(),
    seq bigint generated always as identity,
    child bigint not null
);
create index if not exists plan_links_xid on cronq.plan_links (xid, seq);

-- As 0029's, the parents locked and read, and the link left for jobs_link
-- (above), where 0029's appended to them one by one. Its reads of the
-- parents probe the primary key whatever the planner thinks of the
-- table: on a table emptied or filled since it was last analysed, a scan
-- of the whole table was planned for each row (8,000 dependants of one
-- job in one statement, just after a truncate: 4.3 s, 0.8 s so); jit off,
-- as seqscan off raises the costs past its threshold.
create or replace function cronq.jobs_plan() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
set enable_seqscan = off set jit = off as $$
declare
    wanted bigint[];
    found_ids bigint[];
    waiting integer;
    failed_id bigint;
    failed_status text;
begin
    new.dependants := null;
    new.waiting_for := null;
    if new.depends_on is null then
        return new;
    end if;
    wanted := array(select distinct d from unnest(new.depends_on) d order by d);
    if cardinality(wanted) = 0 then
        new.depends_on := null;
        return new;
    end if;
    -- Unblocking makes a job queued, where a unique key is held: two
    -- blocked jobs of one key would make the parent's outcome fail.
    if new.unique_key is not null then
        raise exception 'a job with a unique key cannot depend on other jobs' using errcode = '22023';
    end if;
    if cardinality(wanted) > 100000 then
        raise exception 'a job may depend on at most 100000 jobs' using errcode = '22023';
    end if;
    if wanted[1] is null then
        raise exception 'depends_on holds a null' using errcode = '22023';
    end if;
    -- Locked as jobs_link's update will lock them, so that no parent's
    -- status changes before this job is among its dependants: a runner
    -- recording an outcome waits for this transaction. Locking a row this
    -- transaction already holds writes nothing.
    select array_agg(p.id), count(*) filter (where p.status <> 'succeeded'),
           min(p.id) filter (where p.status in ('dead', 'cancelled'))
    into found_ids, waiting, failed_id
    from (select p.id, p.status from cronq.jobs p
          where p.id = any(wanted) and p.enqueued_by = new.enqueued_by
          for no key update of p) p;
    if coalesce(cardinality(found_ids), 0) < cardinality(wanted) then
        raise exception 'job % does not exist or belongs to another role: a job depends only on its author''s jobs',
            (select min(w) from unnest(wanted) w where w <> all(coalesce(found_ids, '{}')))
            using errcode = '22023';
    end if;
    if wanted[cardinality(wanted)] >= new.id then
        raise exception 'job % cannot depend on job %: a job depends only on jobs enqueued before it (no cycles)',
            new.id, wanted[cardinality(wanted)] using errcode = '22023';
    end if;
    new.depends_on := wanted;
    insert into cronq.plan_links (child) values (new.id);
    perform pg_catalog.set_config('cronq.links_left', 'on', true);
    if failed_id is not null then
        select j.status into failed_status from cronq.jobs j where j.id = failed_id;
        new.status := 'cancelled';
        new.error_code := 'dependency_failed';
        new.last_error := format('job %s, which it depends on, ended %s', failed_id, failed_status);
        new.finished_at := now();
    elsif waiting > 0 then
        new.status := 'blocked';
        new.waiting_for := waiting;
    end if;
    return new;
end
$$;

-- At the end of each statement whose rows left links (jobs_plan sets
-- cronq.links_left for the trigger's WHEN, so that other inserts do not
-- call this: ~60 us each): the links since the last taken, each parent's
-- new dependants appended in one update, in id order; a link whose job
-- the statement did not write (a conflict kept it out) is dropped. A
-- statement inside another (an insert of cronq.enqueue() called by an
-- insert's select) takes the outer one's links written so far too: their
-- jobs are written, their parents locked. A role that sets
-- cronq.links_taken or cronq.links_left itself can only leave its own
-- jobs unlinked (its own transaction's links, its own parents), or have
-- this called for nothing.
-- Its one plan is made once a session, often while cronq.jobs looks
-- near empty to the planner (a full scan of the primary key's index
-- looked as cheap as a probe: 1 ms a call at 3,000 jobs, quadratic for a
-- transaction of many calls). So every read of cronq.jobs is a probe of
-- its key by construction: a job's parents a subquery on its own (not
-- made a join; none for a job the statement did not write), the parents by the array of their ids; and the join of
-- the parents to their new dependants hashes or sorts, never scans one
-- side for each row of the other (seqscan and nestloop off; jit off, as
-- the costs that turns off pass its threshold: 0.2 s a call). Runs as the
-- owner: a parent is the author's job, kept as the author cannot; its row
-- is already locked by this transaction.
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

drop trigger if exists jobs_link on cronq.jobs;
create trigger jobs_link after insert on cronq.jobs for each statement
    when (pg_catalog.current_setting('cronq.links_left', true) = 'on')
    execute function cronq.jobs_link();
