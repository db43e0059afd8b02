-- 0026_settle_grant.sql — an enqueue that ends another role's late
-- holder no longer pays for that role's whole dependency graph.
--
-- An enqueue (or a retry) of a unique key that a waiting job past its
-- deadline holds ends that holder first, whoever's it is (0013), in the
-- enqueuer's transaction; a holder with blocked dependants then had its
-- whole chain cancelled there, inline (0025 budgets only the runners'
-- transactions): one role could make another's enqueue of a key it
-- expects take seconds to minutes (10,000 dependants cost ~0.3 s).
--
-- Now the settling of the holder's chain in that transaction is budgeted
-- as a runner's is: at most 10,000 dependants, the rest noted in
-- cronq.settle_parents for the next wake. The budget is fixed there, not
-- the session's cronq.settle_left: an author may end its own late holder
-- (expire_holder is callable, and a holder may be retried and made late
-- again, over and over), and a budget of 0 chosen in its own session made
-- each such cycle note the whole chain for the runners at no cost to it
-- (helper-55). With 10,000, a transaction leaves the runners only what is
-- past 10,000 jobs it settled itself.
--
-- settle_later and settle_parents take a job, and a parent whose note has
-- not begun, once (see jobs_settle below).
--
-- Binaries before 25 cannot settle notes, and any enqueue may now write
-- one (before, only a runner of 25 or later did): compatible-from 25.
--
-- How jobs_settle knows: expire_holder, the owner's, writes a random
-- token in cronq.settle_grants (the owner's alone: no role may read or
-- write it) and names it in cronq.settle_grant for the length of its call
-- to expire_jobs, then removes both. The row is never committed, so no
-- other transaction sees it; a role that names a token in its own
-- session finds no row, and settles its graph inline as before.
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

create table if not exists cronq.settle_grants (
    token text primary key
);

-- As 0022's, the holder's ending budgeted (above).
create or replace function cronq.expire_holder(p_key text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
declare
    h bigint;
    locked boolean := false;
    grant_token text;
    outer_left text := current_setting('cronq.settle_left', true);
begin
    select j.id into h from cronq.jobs j
    where j.unique_key = p_key and j.status in ('queued', 'failed', 'running')
      and j.status <> 'running' and j.expires_at <= now();
    if h is null then
        return;
    end if;
    for i in 1..40 loop
        locked := exists (select 1 from cronq.jobs j where j.id = h for no key update skip locked);
        exit when locked;
        perform pg_catalog.pg_sleep(0.05);
    end loop;
    if locked then
        grant_token := pg_catalog.gen_random_uuid()::text;
        insert into cronq.settle_grants (token) values (grant_token);
        perform pg_catalog.set_config('cronq.settle_grant', grant_token, true);
        -- the window's budget, whatever the session set (above)
        perform pg_catalog.set_config('cronq.settle_left', '10000', true);
        perform cronq.expire_jobs('enqueue', array[h]);
        perform pg_catalog.set_config('cronq.settle_left', coalesce(outer_left, ''), true);
        perform pg_catalog.set_config('cronq.settle_grant', '', true);
        delete from cronq.settle_grants g where g.token = grant_token;
    end if;
end
$$;
revoke execute on function cronq.expire_holder(text) from public;

-- As 0025's, budgeted also inside expire_holder's grant (above); an
-- unbounded transaction no longer writes cronq.settle_left; a job held
-- locked is noted in settle_later once, and a parent once while its note
-- has not begun (helper-56: an author holding its dependants locked while
-- it ended their parent over and over grew both without bound).
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
    -- The budget left to a runner's transaction (0025), or to an
    -- enqueue or retry ending a late holder (expire_holder, above, sets
    -- it to 10,000): cronq.settle_left once set (by its first
    -- jobs_settle, or on a runner's session), else 10,000. Any other transaction's is unbounded: it
    -- settles its own graph inline.
    if (coalesce(current_setting('cronq.settling', true), '') = 'on'
        and (pg_has_role(session_user, (select c.relowner from pg_class c
                                        where c.oid = 'cronq.jobs'::regclass), 'MEMBER')
             or (exists (select 1 from pg_roles r where r.rolname = 'cronq_admin')
                 and pg_has_role(session_user, 'cronq_admin', 'MEMBER'))))
       or (coalesce(current_setting('cronq.settle_grant', true), '') <> ''
           and exists (select 1 from cronq.settle_grants g
                       where g.token = current_setting('cronq.settle_grant', true))) then
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
    -- own jobs_settle see what is left (an unbounded one has nothing to
    -- keep).
    if budget < 2147483646 then
        perform pg_catalog.set_config('cronq.settle_left', (budget - cardinality(wanted))::text, true);
    end if;
    -- A note not yet begun covers a second change of its parent (each
    -- dependant is recounted when its page runs): one is enough, however
    -- often the parent changes before a wake. Not one a page is taking
    -- now (locked: its recount may have read the parent as it was), and
    -- the note found is held (key share) until this commits, so that no
    -- page takes it before this change is seen.
    if over and not exists (select 1 from cronq.settle_parents n where n.job_id = new.id and n.after_pos = 0
                            for key share skip locked) then
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
        -- In id order: two runners noting the same jobs never deadlock. A
        -- job already noted is not noted again (an author holding its
        -- dependants locked while it ends their parent over and over made
        -- the table grow without bound, and every wake read it whole).
        -- A note another transaction is deleting (a page settling the
        -- job, whose recount may not see this change) does not count; the
        -- one found is held until this commits, and a page deletes only
        -- notes it can lock.
        insert into cronq.settle_later (job_id)
        select l.w from (select unnest(wanted) except select unnest(held)) l(w)
        where not exists (select 1 from cronq.settle_later s where s.job_id = l.w for key share skip locked)
        order by l.w;
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

-- As 0025's, a job held locked noted in settle_later once (as in
-- jobs_settle above), and only the notes it can lock deleted.
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
          and not exists (select 1 from cronq.settle_later s where s.job_id = c.id for key share skip locked)
        order by c.id;
    else
        locked := array(select j.id from cronq.jobs j
                        where j.id in (select l.job_id from cronq.settle_later l) and j.status = 'blocked'
                        order by j.id limit 500
                        for no key update skip locked);
        more := cardinality(locked) = 500;
        -- the notes of the jobs settled, and those of jobs no longer
        -- blocked; not one another transaction holds (it counted on it
        -- for a change this page's recount may not see: the next page's)
        delete from cronq.settle_later l
        where l.ctid in (select s.ctid from cronq.settle_later s
                         where s.job_id = any(locked)
                            or not exists (select 1 from cronq.jobs j where j.id = s.job_id and j.status = 'blocked')
                         for update skip locked);
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
