-- 0025_settle_budget.sql — what one author's dependency graph makes the
-- statement recording every author's outcomes do is bounded.
--
-- jobs_settle (0022) settled a parent's dependants in the transaction
-- that changed the parent's status: a success counted down every blocked
-- dependant, a dead or cancelled parent cancelled its whole chain. That
-- transaction is the runner's outcome statement (or the rescue), shared by
-- every author's jobs, and nothing bounded the graph: 300,000 blocked jobs
-- under one parent that failed took ~8 s of that statement (~25 us a job),
-- and with a short lease the rescue was cancelled at every wake.
--
-- Now a runner's transaction settles at most 10,000 dependants inline
-- (its budget, cronq.settle_left, counted down across every parent it
-- records). Past it:
-- - a dead or cancelled parent's walk cancels the first jobs it reaches,
--   as many as the budget has left; the parent, and each job so cancelled
--   whose own blocked dependants remain, is noted in cronq.settle_parents;
-- - a succeeded parent, or one retried after its success, is noted whole,
--   none of its dependants counted in part.
-- The runners settle the noted parents' dependants at their next wake
-- (cronq.settle_step(), 500 dependants a transaction), each from its
-- parents as they are then, as settle_later's are: a recount, so a retry,
-- an enqueue or another runner's recount made meanwhile, or a second
-- change of the parent, counts nothing twice. A dependant held locked
-- goes to settle_later.
--
-- A runner's transaction is one whose statements say so (set_config
-- 'cronq.settling' to on: the outcome, rescue and expiry statements of
-- this binary, and settle_step) in a session of the tables' owner, a
-- cronq_admin or a superuser. Any other (an author's cancel or retry, a
-- binary before this one, which cannot settle notes) settles inline
-- whatever the graph, as before: the author's own transaction pays for
-- the author's graph, and no author can leave work to the runners.
--
-- settle_step's recount of a job in settle_later also fixes settle.sql's
-- read of the parents: the statement read their statuses from a snapshot
-- taken before it locked the dependant, so a parent's success committed
-- in between (its own settle skipped the dependant, locked) was not
-- counted, and the dependant stayed blocked for ever. The dependants are
-- locked first, then their parents read by a later statement.
--
-- Nothing a binary reads changes (a binary before this one never sets
-- cronq.settling, so never leaves a note).
-- compatible-from: 10
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- Parents whose dependants a runner's transaction left unsettled, past
-- its budget: those at positions after after_pos in the parent's
-- dependants, each to be settled again from its parents as they are when
-- its page runs (a recount, not the parent's change applied blindly: a
-- recount made meanwhile by a retry, an enqueue or another runner, or a
-- second change of the parent, then counts nothing twice). The key is an
-- identity, which never conflicts: the outcome statement's insert never
-- waits for another transaction's note. The runner's alone.
create table if not exists cronq.settle_parents (
    seq bigint generated always as identity primary key,
    job_id bigint not null,
    after_pos integer not null default 0
);
create index if not exists settle_parents_job on cronq.settle_parents (job_id);

create or replace function cronq.jobs_settle() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp set enable_seqscan = off
set jit = off as $$
declare
    wanted bigint[];
    held bigint[];
    budget integer;
    over boolean;
begin
    -- Nothing blocked below it, nothing to do: so a dependant the walk
    -- below cancelled (its trigger nested in the walk's update) returns at
    -- once, the walk having reached everything below it.
    if not exists (select 1 from cronq.jobs c where c.id = any(new.dependants) and c.status = 'blocked') then
        return null;
    end if;
    -- The budget left to a runner's transaction (see the top of this
    -- file): cronq.settle_left once set (by its first jobs_settle, or on
    -- the runner's session), else 10,000. Any other transaction's is
    -- unbounded: it settles its own graph inline.
    if coalesce(current_setting('cronq.settling', true), '') = 'on'
       and (pg_has_role(session_user, (select c.relowner from pg_class c
                                       where c.oid = 'cronq.jobs'::regclass), 'MEMBER')
            or (exists (select 1 from pg_roles r where r.rolname = 'cronq_admin')
                and pg_has_role(session_user, 'cronq_admin', 'MEMBER'))) then
        budget := case when coalesce(current_setting('cronq.settle_left', true), '') ~ '^[0-9]{1,6}$'
                       then current_setting('cronq.settle_left', true)::integer else 10000 end;
    else
        budget := 2147483646;
    end if;
    if new.status in ('dead', 'cancelled') then
        -- Every blocked job down the chain in one statement, up to the
        -- budget: a trigger per level nested as deep as the chain, and a
        -- chain of a few hundred jobs exhausted the stack (stack depth limit
        -- exceeded). Each job once (a union of ids: a job of many parents
        -- is not walked again from each), so the work is the graph's
        -- edges; the dependants' own jobs_settle return at once. The walk
        -- stops after budget + 1 jobs (a recursive query runs only as far
        -- as it is read); in the order it reaches them, each job comes
        -- after a parent it was reached from, so the first budget of them
        -- are all below this one.
        wanted := array(
            with recursive d(id) as (
                select c.id from cronq.jobs c
                where c.id = any(new.dependants) and c.status = 'blocked'
                union
                select c.id
                from d cross join lateral (select p.dependants from cronq.jobs p where p.id = d.id offset 0) p
                cross join lateral (select c.id from cronq.jobs c
                                    where c.id = any(p.dependants) and c.status = 'blocked' offset 0) c
            )
            select d.id from d limit budget + 1);
        over := cardinality(wanted) > budget;
        if over then
            wanted := wanted[1:budget];
        end if;
        wanted := array(select w from unnest(wanted) w order by w);
    else
        wanted := array(select c.id from cronq.jobs c
                        where c.id = any(new.dependants) and c.status = 'blocked'
                        order by c.id limit budget + 1);
        -- a count down taken only in part could not be told from one not
        -- taken: past the budget, none is, and the notes settle them all
        over := cardinality(wanted) > budget;
        if over then
            wanted := '{}';
        end if;
    end if;
    -- The budget is spent before the update below, whose cancelled jobs'
    -- own jobs_settle see what is left.
    perform pg_catalog.set_config('cronq.settle_left', (budget - cardinality(wanted))::text, true);
    if over then
        insert into cronq.settle_parents (job_id) values (new.id);
    end if;
    if cardinality(wanted) = 0 then
        return null;
    end if;
    -- Dependants are a role's own rows, which it may hold locked (select
    -- ... for update, an open cancel): the statement recording an
    -- outcome, and the rescue, must never wait for them (a role kept
    -- every runner from recording and rescuing anything). Those held
    -- are left in cronq.settle_later: each wake settles them again from
    -- their parents.
    held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                  order by c.id for no key update skip locked);
    if cardinality(held) < cardinality(wanted) then
        -- In id order: two runners noting the same jobs never deadlock.
        insert into cronq.settle_later (job_id)
        select l.w from (select unnest(wanted) except select unnest(held)) l(w) order by l.w;
    end if;
    if new.status = 'succeeded' then
        update cronq.jobs c
        set waiting_for = c.waiting_for - 1,
            status = case when c.waiting_for <= 1 then 'queued' else 'blocked' end,
            updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
    elsif old.status = 'succeeded' then
        -- retried after its success: its blocked dependants wait for it again
        update cronq.jobs c set waiting_for = c.waiting_for + 1, updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
    elsif new.status in ('dead', 'cancelled') then
        -- Each names the first of its parents that ended: this job, or
        -- one the walk cancels (a lookup in a hash of the walk's jobs, not
        -- a search of the whole array for each parent). No join: the
        -- planner's count of rows, low in a table not yet analysed, made a
        -- join of 10,000 jobs compare every pair (seconds).
        update cronq.jobs c
        set status = 'cancelled', error_code = 'dependency_failed',
            last_error = (select format('job %s, which it depends on, ended %s', min(x.parent),
                                        case when min(x.parent) = new.id then new.status else 'cancelled' end)
                          from unnest(c.depends_on) x(parent)
                          where x.parent = new.id or x.parent in (select unnest(wanted))),
            finished_at = now(), updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
    end if;
    return null;
end
$$;

-- One page of the settling left to the runners, in a transaction of its
-- own: 500 dependants of the oldest parents' notes not being settled by
-- another runner (from each note's after_pos; a note whose dependants are
-- all taken goes, one taken in part moves on, in the same transaction),
-- else up to 500 of the blocked jobs noted in cronq.settle_later. Each
-- blocked job of the page that no other transaction holds locked is
-- settled from its parents as they are now: cancelled (dependency_failed)
-- when one ended dead or cancelled, else queued when none is left to
-- succeed (a parent gone, purged, counts as succeeded, as in jobs_wait),
-- else blocked with the count corrected. One held locked is noted in
-- settle_later for a later page. more: whether another page may have work
-- now (a note was taken, or a page of settle_later was full); settled: how
-- many jobs' status or count changed. A runner's transaction: the
-- cancellations' own settling is budgeted. No JIT: its statements are
-- small, and costed high by enable_seqscan = off.
create or replace function cronq.settle_step(out more boolean, out settled integer)
language plpgsql security definer set search_path = pg_catalog, pg_temp set enable_seqscan = off
set jit = off as $$
declare
    note record;
    page bigint[] := '{}';
    slice bigint[];
    room integer := 500;
    notes integer := 0;
    locked bigint[];
begin
    more := false;
    settled := 0;
    perform pg_catalog.set_config('cronq.settling', 'on', true);
    for note in select l.seq, l.job_id, l.after_pos from cronq.settle_parents l
                order by l.seq for update skip locked loop
        notes := notes + 1;
        select j.dependants[note.after_pos + 1 : note.after_pos + room] into slice
        from cronq.jobs j where j.id = note.job_id;
        slice := coalesce(slice, '{}');
        if cardinality(slice) < room then
            delete from cronq.settle_parents l where l.seq = note.seq;
        else
            update cronq.settle_parents l set after_pos = note.after_pos + room where l.seq = note.seq;
        end if;
        page := page || slice;
        room := room - cardinality(slice);
        exit when room = 0 or notes >= 500;
    end loop;
    if notes > 0 then
        more := true;
        locked := array(select c.id from cronq.jobs c where c.id = any(page) and c.status = 'blocked'
                        order by c.id for no key update skip locked);
        insert into cronq.settle_later (job_id)
        select c.id from cronq.jobs c
        where c.id = any(page) and c.id <> all(locked) and c.status = 'blocked'
        order by c.id;
    else
        locked := array(select j.id from cronq.jobs j
                        where j.id in (select l.job_id from cronq.settle_later l) and j.status = 'blocked'
                        order by j.id limit 500
                        for no key update skip locked);
        more := cardinality(locked) = 500;
        -- the notes of the jobs settled, and those of jobs no longer blocked
        delete from cronq.settle_later l
        where l.job_id = any(locked)
           or not exists (select 1 from cronq.jobs j where j.id = l.job_id and j.status = 'blocked');
    end if;
    if cardinality(locked) = 0 then
        return;
    end if;
    -- A statement after the lock, so a later snapshot: a parent's outcome
    -- committed before the lock was taken is seen (its own settle skipped
    -- the dependant this page held, or found it settled). Each job's
    -- parents are read by its own subqueries, by index: no join. Only a
    -- job whose status or count changes is written.
    with n as (
        select s.id, s.waiting_for,
            (select count(*)::integer from cronq.jobs p
             where p.id = any(s.depends_on) and p.status <> 'succeeded') as waiting,
            (select min(p.id) from cronq.jobs p
             where p.id = any(s.depends_on) and p.status in ('dead', 'cancelled')) as failed_id
        from cronq.jobs s
        where s.id = any(locked) and s.status = 'blocked'
    ), ch as materialized (
        select n.id, n.waiting, n.failed_id from n
        where n.failed_id is not null or n.waiting = 0 or n.waiting is distinct from n.waiting_for
    )
    update cronq.jobs c set
        (status, waiting_for, error_code, last_error, finished_at, updated_at) = (
            select case when x.failed_id is not null then 'cancelled'
                        when x.waiting = 0 then 'queued' else 'blocked' end,
                   x.waiting,
                   case when x.failed_id is not null then 'dependency_failed' else c.error_code end,
                   case when x.failed_id is not null
                        then format('job %s, which it depends on, ended %s', x.failed_id,
                                    (select p.status from cronq.jobs p where p.id = x.failed_id))
                        else c.last_error end,
                   case when x.failed_id is not null then now() else c.finished_at end,
                   now()
            from ch x where x.id = c.id)
    where c.id = any(array(select ch.id from ch)) and c.status = 'blocked';
    get diagnostics settled = row_count;
end
$$;
revoke execute on function cronq.settle_step() from public;
