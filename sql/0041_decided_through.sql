-- 0041_decided_through.sql — a fire time a wake has decided is never
-- decided again, whatever is done to the schedule's plan afterwards.
--
-- A schedule's next run is a spread instant (the fire time plus the
-- schedule's offset), and an occurrence's key names that instant. A
-- change of the spread alone moves the next run by the difference of the
-- offsets (schedules_guard), which keeps the same fire time; but a spread
-- changed together with the expression, zone or anchor, or with
-- next_run_at set to null, left the schedule to be planned from the
-- write, at the new offset: a fire time already run at its old instant
-- could come due again at its new one, under a new key, and run twice
-- (up to one spread's worth of them). `cronq schedule add --replace`
-- planned from now, with the same result (helper-80).
--
-- Now the wake keeps on the schedule the newest fire time it has decided
-- (enqueued, skipped or refused), without its offset: decided_through,
-- written by cronq.materialise() in the statement that moves the schedule
-- on. Binaries of 41 on look for a schedule's occurrences only after it
-- (at the schedule's offset now), whichever next run or write they plan
-- from; so a next run moved back over a decided fire time decides nothing
-- again either (it gave a second ledger row). A fire time never decided
-- (one a next run moved forward passed over, or one before the schedule
-- existed) is not held back by it. Existing schedules start from their
-- next run: what comes before it is decided, or was never due.
--
-- Binaries of 25 to 40 call the eight-array materialise(), which now
-- leaves decided_through as it is; they plan as before.
-- compatible-from: 25

alter table cronq.schedules add column if not exists decided_through timestamptz;
comment on column cronq.schedules.decided_through is
    'the newest fire time a wake decided (enqueued, skipped or refused), without the spread''s offset: no fire time up to it is decided again';

update cronq.schedules s
set decided_through = s.next_run_at - make_interval(secs => cronq.fire_offset(s.name, s.spread) + 1)
where s.decided_through is null and s.next_run_at is not null;

-- The runner's materialisation, as 0016 wrote it, and each due schedule's
-- newest fire time decided (p_through, aligned with p_sched; null: none
-- decided in this call) kept when later than the one stored.
create or replace function cronq.materialise(p_names text[], p_fires timestamptz[],
                                             p_sched text[], p_next timestamptz[],
                                             p_skip_names text[], p_skip_fires timestamptz[],
                                             p_skip_why text[], p_skip_detail text[],
                                             p_through timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile security definer
set search_path = pg_catalog, pg_temp set lock_timeout = '1s' as $$
    with ins as (
        select o.schedule, o.job_id, o.fire_at from cronq.enqueue_occurrences(p_names, p_fires, true) o
    ), newest as (
        select ins.schedule, max(ins.job_id) as id from ins group by ins.schedule
    ), upd as (
        update cronq.schedules s
        set next_run_at = n.next,
            last_enqueued_at = case when newest.id is not null then now() else s.last_enqueued_at end,
            last_job_id = coalesce(newest.id, s.last_job_id),
            decided_through = greatest(s.decided_through, n.through)
        from unnest(p_sched, p_next, p_through) as n(name, next, through)
        left join newest on newest.schedule = n.name
        where s.name = n.name
        returning s.name
    ), held as materialized (
        -- the occurrences no job was written for: their key was held (rare;
        -- looked up alone, not with every occurrence)
        select f.name, f.fire from unnest(p_names, p_fires) as f(name, fire)
        where not exists (select 1 from ins where ins.schedule = f.name and ins.fire_at = f.fire)
    ), ledger as (
        insert into cronq.occurrences (schedule, fire_at, decision, job_id, detail)
        select ins.schedule, ins.fire_at, 'enqueued', ins.job_id, null from ins
        union all
        -- an occurrence whose key a job already held: the schedule's own job
        -- (a backfill's), or, held by another role's job (one written for a
        -- schedule of that name before), refused
        select f.name, f.fire, case when h.id is null then 'refused' else 'enqueued' end, h.id,
               case when h.id is null then 'its key is held by a job that is not this schedule''s'
                    else 'already enqueued' end
        from held f
        join cronq.schedules s on s.name = f.name
        left join cronq.jobs h
          on h.idempotency_key = 'schedule:' || f.name || ':'
                 || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
         and h.schedule = f.name and h.enqueued_by = s.created_by
        union all
        select k.name, k.fire, k.why,
               case when k.why = 'overlap'
                    then (select s.last_job_id from cronq.schedules s where s.name = k.name) end,
               k.detail
        from unnest(p_skip_names, p_skip_fires, p_skip_why, p_skip_detail) as k(name, fire, why, detail)
    )
    select ins.schedule, ins.job_id from ins
$$;
revoke execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[],
                                             text[], timestamptz[], text[], text[],
                                             timestamptz[]) from public;

-- The form binaries of 25 to 40 call: no fire time decided is recorded
-- (unnest pads p_through with nulls, and greatest() ignores them).
create or replace function cronq.materialise(p_names text[], p_fires timestamptz[],
                                             p_sched text[], p_next timestamptz[],
                                             p_skip_names text[], p_skip_fires timestamptz[],
                                             p_skip_why text[], p_skip_detail text[])
returns table (schedule text, job_id bigint)
language sql volatile security definer
set search_path = pg_catalog, pg_temp as $$
    select m.schedule, m.job_id
    from cronq.materialise(p_names, p_fires, p_sched, p_next, p_skip_names, p_skip_fires,
                           p_skip_why, p_skip_detail, '{}'::timestamptz[]) m
$$;
revoke execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[],
                                             text[], timestamptz[], text[], text[]) from public;

-- A write that plans a schedule at a fire time already decided (the CLI's
-- `schedule add --replace` plans a new expression from now, at the new
-- spread's offset; a role may move its next run back within the minute)
-- leaves it unplanned instead: the wake plans it from the write, after
-- what is decided, and next_run_at never shows an instant that will not
-- run. Named to run after schedules_guard (which may shift or clear the
-- next run) and before schedules_unplanned (which stamps the write's
-- moment). Its WHEN is false for the wake's own writes but for schedules
-- whose period is shorter than their spread: a next fire time after
-- decided_through is more than decided_through plus the offset, which is
-- less than the spread.
create or replace function cronq.schedules_replanned() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if new.next_run_at - make_interval(secs => cronq.fire_offset(new.name, new.spread))
       <= new.decided_through then
        new.next_run_at := null;
    end if;
    return new;
end
$$;

drop trigger if exists schedules_replanned on cronq.schedules;
create trigger schedules_replanned
    before update of next_run_at, spread, cron, timezone, anchor, name on cronq.schedules
    for each row when (new.next_run_at <= new.decided_through + coalesce(new.spread, interval '0'))
    execute function cronq.schedules_replanned();
