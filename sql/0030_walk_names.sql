-- 0030_walk_names.sql — a runner's walk names each job it cancels from
-- its own rows, and a settle page orders its notes, without reading the
-- jobs' parents.
--
-- A dead or cancelled parent's walk (0027) cancels the blocked jobs below
-- it, each with a last_error naming the first of its parents that ended:
-- the least of its depends_on that is the parent or a job the walk
-- cancels. That read every cancelled job's whole depends_on (up to 100,000
-- entries, 0029), where the budget of a runner's transaction counted only
-- the dependants entries walked: 100 dependants of 40,001 parents cost a
-- runner's outcome statement 0.58 s, for a walk charged 100 entries
-- (helper-59, MEDIUM).
--
-- Now a budgeted walk names each job after the least of the parents it
-- reached that job from (a row of the walk each: the parent, or a job the
-- walk cancels), looked up in a jsonb map of the walk's jobs: nothing
-- beyond the entries the budget counted is read. The job named is the
-- same as before unless the budget stopped the walk before it read the
-- job's entry under a lesser parent (then a greater one that also ended
-- is named). An author's own walk (unbounded) names them as before.
--
-- And settle_step (0029) no longer reads the parents of jobs it does not
-- settle. A page of cronq.settle_later notes took its jobs fewest parents
-- first by the cardinality of each noted job's depends_on, which fetched
-- every noted job's parents at every page (2,000 notes of jobs of 50,000
-- parents each, held by their author: 0.8 s a page, every wake); and the
-- split counted the parents of each of the 500 jobs it took, where it
-- keeps only those that fit in 10,000. Now the notes are ordered by the
-- size the parents take on disk (read from the row: nothing fetched),
-- and the split counts each job's parents as it takes it, stopping at the
-- first that does not fit.
--
-- jobs_settle and settle_step change; nothing a binary reads does.
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- As 0027's, a budgeted walk's names from its own rows (above).
-- run again.

-- As 0026's, the budget counting entries read (above).
create or replace function cronq.jobs_settle() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp set enable_seqscan = off
set jit = off as $$
declare
    wanted bigint[];
    held bigint[];
    budget integer;
    spent bigint := 0;
    over boolean := false;
    frontier bigint[] := '{}';
    walked bigint[];
    walked_read bigint[];
    walked_card integer[];
    covered text;
    named jsonb;
begin
    -- Cancelled by a walk that covered it (below): the walk read all its
    -- dependants, or noted it for the next wake. Known by a token only
    -- that walk's transaction holds, in a table no role may read or write
    -- (as 0026's grant): a session that names a token finds no row.
    if coalesce(current_setting('cronq.settle_covered', true), '') <> ''
       and exists (select 1 from cronq.settle_grants g
                   where g.token = current_setting('cronq.settle_covered', true)) then
        return null;
    end if;
    -- The budget left to a runner's transaction (0025), or to an
    -- enqueue or retry ending a late holder (expire_holder, 0026, sets it
    -- to 10,000): cronq.settle_left once set (by its first jobs_settle,
    -- or on a runner's session), else 10,000. It counts the entries of
    -- dependants arrays read, each a look-up, not the jobs settled: a
    -- job's dependants keep those already ended, and a walk that counted
    -- jobs read every one of them (helper-55: 140,000 ended entries under
    -- 21 blocked jobs, ~0.3 s of a runner's statement each time their
    -- parent ended). Any other transaction's is unbounded: it settles its
    -- own graph inline.
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
    if new.status in ('dead', 'cancelled') and budget < 2147483646 then
        -- Every blocked job down the chain in one statement, as below, but
        -- a row for each entry read (blocked or not), and no more rows
        -- than the budget and one: a recursive query runs only as far as
        -- it is read, so past the budget nothing more is looked up. Not
        -- deduplicated (a union would drop an entry read again from
        -- another parent without counting it, and many parents could
        -- share the same ended dependants): a job reached from several
        -- parents is walked from each, which costs the budget, not more.
        -- In the order it reaches them, each job comes after a parent it
        -- was reached from, so the blocked jobs of the first budget rows
        -- are all below this one.
        with recursive d(id, blocked, parent, card) as (
            select e.id, exists (select 1 from cronq.jobs c where c.id = e.id and c.status = 'blocked'), new.id,
                   cardinality(new.dependants)
            from unnest(new.dependants[1:budget + 1]) e(id)
            union all
            select e.id, exists (select 1 from cronq.jobs c where c.id = e.id and c.status = 'blocked'), d.id,
                   p.card
            from d cross join lateral (select p.dependants, cardinality(p.dependants) as card
                                       from cronq.jobs p where p.id = d.id offset 0) p
            cross join lateral unnest(p.dependants[1:budget + 1]) e(id)
            where d.blocked
        ), r as materialized (
            select d.id, d.blocked, d.parent, d.card, row_number() over () as n
            from (select * from d limit budget + 1) d
        ), k as (
            select r.parent, count(*) as k, max(r.card) as card from r where r.n <= budget group by r.parent
        )
        -- What each job walked had in its dependants then, and how many of
        -- them were read (the frontier, below, is told from them).
        select (select count(*) from r),
               coalesce((select array_agg(distinct r.id) from r where r.blocked and r.n <= budget), '{}'),
               coalesce((select array_agg(k.parent order by k.parent) from k), '{}'),
               coalesce((select array_agg(k.k order by k.parent) from k), '{}'),
               coalesce((select array_agg(k.card order by k.parent) from k), '{}'),
               -- each blocked job walked, to the least parent it was
               -- reached from (the cancel's last_error, below)
               coalesce((select pg_catalog.jsonb_object_agg(m.id::text, m.parent)
                         from (select r.id, min(r.parent) as parent from r
                               where r.blocked and r.n <= budget group by r.id) m), '{}')
        into spent, wanted, walked, walked_read, walked_card, named;
        over := spent > budget;
    elsif new.status in ('dead', 'cancelled') then
        -- Unbounded (the author's own transaction): every blocked job down
        -- the chain in one statement: a trigger per level nested as deep as
        -- the chain, and a chain of a few hundred jobs exhausted the stack
        -- (stack depth limit exceeded). Each job once (a union of ids: a
        -- job of many parents is not walked again from each), so the work
        -- is the graph's edges; the dependants' own jobs_settle find
        -- nothing blocked below them and return.
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
            select d.id from d order by d.id);
    elsif cardinality(new.dependants) > budget then
        -- a count down taken only in part could not be told from one not
        -- taken: past the budget, none is, and the notes settle them all;
        -- nothing is read
        over := true;
        wanted := '{}';
    else
        spent := cardinality(new.dependants);
        wanted := array(select c.id from cronq.jobs c
                        where c.id = any(new.dependants) and c.status = 'blocked'
                        order by c.id);
    end if;
    -- The budget is spent before the update below, whose cancelled jobs'
    -- own jobs_settle see what is left (an unbounded one has nothing to
    -- keep).
    if budget < 2147483646 then
        perform pg_catalog.set_config('cronq.settle_left', greatest(budget - spent, 0)::text, true);
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
    -- Nothing blocked below it (within the budget), nothing to do.
    if cardinality(wanted) = 0 then
        return null;
    end if;
    -- Dependants are a role's own rows, which it may hold locked (select
    -- ... for update, an open cancel): the statement recording an
    -- outcome, and the rescue, must never wait for them (a role kept
    -- every runner from recording and rescuing anything). Those held
    -- are left in cronq.settle_later: each wake settles them again from
    -- their parents.
    -- Except a count up (a parent retried after its success: only an
    -- author's or an admin's transaction, unbounded, makes one): it waits
    -- for the rows, as that transaction is the author's own. A count up
    -- left to a note was lost when another parent's success counted the
    -- job down inline first (helper-57): it was queued, a parent waiting.
    if old.status = 'succeeded' and new.status <> 'succeeded' and budget = 2147483646 then
        held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                      order by c.id for no key update);
    else
        held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                      order by c.id for no key update skip locked);
    end if;
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
    -- The frontier of a budgeted walk: the jobs it cancels now whose
    -- dependants it did not all read (past the budget: only the last one
    -- walked can be part read, rows coming in order), or whose dependants
    -- grew since it read them (a job enqueued meanwhile, its parent one of
    -- these: helper-58; read after the lock, which holds back any more).
    -- Noted, as a parent past the budget is (above); their own settling,
    -- nested in the update below, returns at once.
    if walked is not null and cardinality(held) > 0 then
        frontier := array(
            select h.id from unnest(held) h(id)
            cross join lateral (select cardinality(j.dependants) as now from cronq.jobs j where j.id = h.id) c
            left join unnest(walked, walked_read, walked_card) w(id, k, card) on w.id = h.id
            where c.now > 0 and (w.id is null or w.k < w.card or c.now > w.card)
            order by h.id);
        insert into cronq.settle_parents (job_id)
        select f.id from unnest(frontier) f(id)
        where not exists (select 1 from cronq.settle_parents n where n.job_id = f.id and n.after_pos = 0
                          for key share skip locked)
        order by f.id;
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
        -- join of 10,000 jobs compare every pair (seconds). After a
        -- budgeted walk their own jobs_settle, nested in this update, find
        -- its token and return (above): all below them was walked, or
        -- noted. After an unbounded one (an author's own) each looks again
        -- below itself, as before: what was enqueued since is seen there.
        if walked is not null then
            covered := pg_catalog.gen_random_uuid()::text;
            insert into cronq.settle_grants (token) values (covered);
            perform pg_catalog.set_config('cronq.settle_covered', covered, true);
        end if;
        update cronq.jobs c
        set status = 'cancelled', error_code = 'dependency_failed',
            -- after a budgeted walk, the least parent it reached the job
            -- from, in its map (0030: the job's depends_on, which the
            -- budget does not count, is then not read); else the least of
            -- its parents that ended
            last_error = (select format('job %s, which it depends on, ended %s', f.parent,
                                        case when f.parent = new.id then new.status else 'cancelled' end)
                          from (select coalesce((named ->> c.id::text)::bigint,
                                                (select min(x.parent) from unnest(c.depends_on) x(parent)
                                                 where x.parent = new.id or x.parent in (select unnest(wanted))))
                                       as parent) f),
            finished_at = now(), updated_at = now()
        where c.id = any(held) and c.status = 'blocked';
        if walked is not null then
            perform pg_catalog.set_config('cronq.settle_covered', '', true);
            delete from cronq.settle_grants g where g.token = covered;
        end if;
    end if;
    return null;
end
$$;

-- As 0029's, the notes ordered and the page split without reading every noted
-- job's parents (above).
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
    rest bigint[] := '{}';
    kept bigint[] := '{}';
    parents bigint := 0;
    b record;
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
        -- Up to 500 noted blocked jobs whose note and row this page can
        -- both lock: a note another transaction holds (a change counting
        -- on it) is left for a later page and costs this one nothing. A
        -- page that took the first 500 jobs whatever held their notes met
        -- the same ones again at once, for the whole wake, while one
        -- author kept a transaction open (helper-57).
        -- The jobs of fewest parents first: an author's noted jobs of many
        -- parents, re-noted at each of its cycles, do not keep other
        -- roles' notes waiting behind them (in id order they did: its
        -- jobs were the oldest). Told by the size their parents take on
        -- disk, which is read from the row without fetching the array
        -- (its cardinality fetched every noted job's parents, each page:
        -- 2,000 held notes of 50,000 parents cost a page 0.8 s; 0030).
        locked := array(select j.id from cronq.settle_later l join cronq.jobs j on j.id = l.job_id
                        where j.status = 'blocked'
                        order by coalesce(pg_catalog.pg_column_size(j.depends_on), 0), j.id limit 500
                        for update of l skip locked for no key update of j skip locked);
        more := cardinality(locked) = 500;
    end if;
    -- The recount below reads every parent of each job it takes (a job may
    -- have 100,000): the jobs are taken, fewest parents first, while their
    -- parents number 10,000 at most, and the first whatever its count. 500
    -- jobs of 40,000 parents each made one page a statement of minutes,
    -- past the runner's answer limit: every wake failed before its claim,
    -- for every role, and an author could note the same jobs again for
    -- ~20 ms a cycle (helper-59). The rest are left noted for the next page.
    -- In the order of the size their parents take on disk, each counted
    -- as it is taken (its parents are read by the recount anyway), none
    -- past the first that does not fit (counting all 500 fetched each
    -- one's parents: with the notes' order, a page over 2,000 notes of
    -- 50,000 parents took 1.04 s, now 82 ms; 0030).
    for b in select c.id from cronq.jobs c where c.id = any(locked)
             order by coalesce(pg_catalog.pg_column_size(c.depends_on), 0), c.id loop
        if cardinality(rest) = 0 then
            parents := parents + coalesce((select cardinality(c.depends_on) from cronq.jobs c where c.id = b.id), 0);
        end if;
        if cardinality(kept) = 0 or (cardinality(rest) = 0 and parents <= 10000) then
            kept := kept || b.id;
        else
            rest := rest || b.id;
        end if;
    end loop;
    locked := kept;
    if cardinality(rest) > 0 then
        more := true;
        -- a page of parents' dependants notes them (it holds their rows,
        -- so no other page takes them before this commits); a page of
        -- notes leaves theirs
        if notes > 0 then
            insert into cronq.settle_later (job_id)
            select r.id from unnest(rest) r(id)
            where not exists (select 1 from cronq.settle_later s where s.job_id = r.id for key share skip locked)
            order by r.id;
        end if;
    end if;
    if notes = 0 then
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
    -- parents are read by its own subqueries, by index: no join; a parent
    -- at a time, by its key, in a scalar subquery that the planner does not
    -- turn into a join (as p.id = any(depends_on), or an exists, a table whose
    -- statistics said few jobs had ended was read through jobs_finished,
    -- every ended job for each dependant: 0.7 ms each with 5,000 ended,
    -- 2,000 dependants past a wake's 5 s). Only a job whose status or
    -- count changes is written.
    with n as materialized (
        select s.id, s.waiting_for,
            (select count(*)::integer from (select distinct unnest(s.depends_on)) x(id)
             where (select p.status from cronq.jobs p where p.id = x.id) <> 'succeeded') as waiting,
            (select min(x.id) from unnest(s.depends_on) x(id)
             where (select p.status from cronq.jobs p where p.id = x.id) in ('dead', 'cancelled')) as failed_id
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
