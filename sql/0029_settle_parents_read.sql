-- 0029_settle_parents_read.sql — a page of the wake's settling reads at
-- most 10,000 parents; a job depends on 100,000 jobs at most.
--
-- settle_step (0027) takes up to 500 blocked jobs a page and recounts
-- each from its parents, reading every entry of its depends_on by key
-- (twice: those still to succeed, and the first that ended). Nothing
-- bounded the parents: a job could have 1,000,000. An author holding its
-- dependants locked while a runner recorded their parent's success had
-- them noted; 60 of 40,000 parents each then cost a wake ~10 s, and a page
-- past the runner's answer limit (~330 of them under the default 60 s
-- lease) failed every wake before its claim, for every role, until the
-- notes went. Each cycle cost the author a retry, ~20 ms (helper-59, HIGH).
--
-- Now a page takes its jobs, fewest parents first, while their parents
-- number 10,000 at most (the first job whatever its count): the rest are left
-- noted for the next page, which a wake reaches within its 5 s of
-- settling, or the next wake does. And a job depends on 100,000 jobs at
-- most (the largest backfill's, whose --then job depends on each of its
-- 100,000 steps), so that one job alone is a page of a second, not ten.
-- Jobs written before with more stay as they are.
--
-- Nothing a binary reads changes: settle_step() answers as before.
-- compatible-from: 25
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- As 0017's, at most 100,000 parents (above).
create or replace function cronq.jobs_plan() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
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
    with p as (
        update cronq.jobs p set dependants = coalesce(p.dependants, '{}') || new.id
        where p.id = any(wanted) and p.enqueued_by = new.enqueued_by
        returning p.id, p.status
    )
    select array_agg(p.id), count(*) filter (where p.status <> 'succeeded'),
           min(p.id) filter (where p.status in ('dead', 'cancelled'))
    into found_ids, waiting, failed_id
    from p;
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

-- As 0027's, and a page takes no more jobs than 10,000 parents to recount (above).
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
    rest bigint[];
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
        -- jobs were the oldest).
        locked := array(select j.id from cronq.settle_later l join cronq.jobs j on j.id = l.job_id
                        where j.status = 'blocked'
                        order by cardinality(j.depends_on), j.id limit 500
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
    select coalesce(array_agg(b.id order by b.id) filter (where b.n = 1 or b.parents <= 10000), '{}'),
           coalesce(array_agg(b.id order by b.id) filter (where b.n > 1 and b.parents > 10000), '{}')
    into locked, rest
    from (select c.id, row_number() over w as n, sum(coalesce(cardinality(c.depends_on), 0)) over w as parents
          from cronq.jobs c where c.id = any(locked)
          window w as (order by coalesce(cardinality(c.depends_on), 0), c.id)) b;
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
