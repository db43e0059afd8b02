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
-- again either (it gave a second ledger row), while the fire times after
-- it that are due are decided as any (catch-up applying). Existing
-- schedules start from their next run or now, whichever is earlier: what
-- comes before it is decided or was passed over (a next run in the
-- future, even one postponed by hand, holds back nothing after now:
-- helper-81).
--
-- A rename changes the offset too (the name is hashed): like a change of
-- the spread alone, it now moves the next run to the same fire time's new
-- instant, where the fire times whose new instant came earlier were
-- passed over (helper-81).
--
-- A role's next run may not go back to more than a minute before the
-- clock (0040): that now compares fire times, so that a replace lowering
-- the spread of an overdue schedule (the same fire time, earlier) is not
-- refused (helper-82); and a rename's move of the next run is held to the
-- years 1 to 9999 as any.
--
-- Binaries of 25 to 40 call the eight-array materialise(), which now
-- leaves decided_through as it is; they plan as before.
-- compatible-from: 25

alter table cronq.schedules add column if not exists decided_through timestamptz;
comment on column cronq.schedules.decided_through is
    'the newest fire time a wake decided (enqueued, skipped or refused), without the spread''s offset: no fire time up to it is decided again';

-- An instant of years 1 to 9999, as every time of a schedule (0037): the
-- wake turns it into an epoch second. Only the owner and admins write it.
alter table cronq.schedules drop constraint if exists schedules_decided_through_check;
alter table cronq.schedules add constraint schedules_decided_through_check
    check (decided_through >= '0001-01-01 00:00:00+00' and decided_through < '10000-01-01 00:00:00+00');

update cronq.schedules s
set decided_through = least(s.next_run_at, now())
                      - make_interval(secs => cronq.fire_offset(s.name, s.spread) + 1)
where s.decided_through is null and s.next_run_at is not null
  and s.next_run_at > '0001-01-02 00:00:00+00';

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

-- A write that changes when a schedule fires (its expression, zone,
-- anchor, spread or name) and plans it, in the same statement, at a fire
-- time already decided, still to come (the CLI's `schedule add --replace`
-- plans a new expression from now, at the new spread's offset), leaves it
-- unplanned instead: the wake plans it from the write, after what is
-- decided, and next_run_at does not show an instant that will not run. A
-- next run already due is left as it is, whatever moved it there (a write
-- of the next run alone, or a move back then a change of the spread or
-- name): the wake decides the fire times after decided_through that are
-- due, and none before (helper-81, helper-82); planned from the write,
-- those were lost. Named to run after schedules_times and
-- schedules_times_past (which refuse a time out of range, or too far back
-- for a role, whatever this one would do) and before schedules_unplanned
-- (which stamps the write's moment). The wake's own writes change none of
-- the columns it looks at.
create or replace function cronq.schedules_undecided() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if new.next_run_at - make_interval(secs => cronq.fire_offset(new.name, new.spread))
       <= new.decided_through then
        new.next_run_at := null;
    end if;
    return new;
end
$$;

drop trigger if exists schedules_undecided on cronq.schedules;
create trigger schedules_undecided
    before update of cron, timezone, anchor, spread, name on cronq.schedules
    for each row when (new.next_run_at > now() and new.decided_through is not null
                       and (new.cron, new.timezone, new.anchor, new.spread, new.name)
                           is distinct from (old.cron, old.timezone, old.anchor, old.spread, old.name))
    execute function cronq.schedules_undecided();

-- schedules_guard as 0023 wrote it, a rename taken as a change of the
-- spread alone: the next run moves to the same fire time at the new
-- name's offset (the expression, zone and anchor unchanged).
create or replace function cronq.schedules_guard() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
declare
    msg text;
begin
    if tg_op = 'INSERT' then
        if new.created_by is null or (new.created_by <> current_user::text
                                   and not cronq.may_act_for_others(tg_relid)) then
            new.created_by := current_user;
        end if;
    elsif not cronq.may_act_for_others(tg_relid) then
        if new.created_by is distinct from old.created_by then
            raise exception 'only a superuser may change created_by' using errcode = '42501';
        end if;
        if new.hooks is distinct from old.hooks and old.created_by <> current_user::text then
            raise exception 'schedule "%": only its author, %, may change its hooks', old.name,
                old.created_by using errcode = '42501';
        end if;
        -- Whoever changes what a schedule's jobs do becomes its author;
        -- changing when they run (an admin fixing a zone) does not make
        -- the author's SQL run as the editor.
        if (new.type, new.payload) is distinct from (old.type, old.payload)
           and old.created_by <> current_user::text then
            new.created_by := current_user;
            new.hooks := null;
        end if;
    end if;
    if tg_op = 'INSERT' or (new.cron, new.timezone, new.anchor, new.spread, new.name)
                            is distinct from (old.cron, old.timezone, old.anchor, old.spread, old.name) then
        msg := coalesce(cronq.cron_error(new.cron), cronq.zone_error(new.timezone));
        if msg is null and new.anchor is not null and not cronq.is_every(new.cron) then
            msg := format('an anchor applies only to @every expressions, not to "%s"', left(new.cron, 64));
        end if;
        if msg is not null then
            raise exception 'schedule "%": %', new.name, msg using errcode = '22023';
        end if;
        if tg_op = 'UPDATE' and new.next_run_at is not distinct from old.next_run_at then
            if (new.cron, new.timezone, new.anchor)
               is not distinct from (old.cron, old.timezone, old.anchor) then
                -- The spread or the name: the next occurrence not yet
                -- decided is the same fire time, due at its new offset.
                new.next_run_at := old.next_run_at
                    - make_interval(secs => cronq.fire_offset(old.name, old.spread))
                    + make_interval(secs => cronq.fire_offset(new.name, new.spread));
            else
                new.next_run_at := null;
            end if;
        end if;
    end if;
    if tg_op = 'INSERT' or new.type is distinct from old.type
       or new.payload is distinct from old.payload then
        perform cronq.check_task(new.type, new.payload, new.created_by);
    end if;
    new.updated_at := now();
    return new;
end
$$;

-- The years 1 to 9999 (0037) hold for a next run a rename moves too
-- (helper-82: a next run in year 9999 renamed went past it).
drop trigger if exists schedules_times on cronq.schedules;
create trigger schedules_times before insert or update of next_run_at, spread, name on cronq.schedules
    for each row
    when (not (new.next_run_at >= timestamptz '0001-01-01 00:00:00+00'
               and new.next_run_at < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.time_refused('next_run_at');

-- A role may not move its next run back to more than a minute before the
-- clock (0040), which is to say its next fire time: the same fire time at
-- a smaller offset (a spread or name changed in the same statement as the
-- next run is written, as `schedule add --replace` writes it) is no move
-- back (helper-82: a replace that lowered the spread of an overdue
-- schedule was refused).
create or replace function cronq.schedules_times_past() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if tg_op = 'UPDATE' and new.next_run_at >= old.next_run_at then
        return new;
    end if;
    if tg_op = 'UPDATE'
       and new.next_run_at - make_interval(secs => cronq.fire_offset(new.name, new.spread))
           >= old.next_run_at - make_interval(secs => cronq.fire_offset(old.name, old.spread)) then
        return new;
    end if;
    if cronq.may_act_for_others(tg_relid) or (select cronq.is_admin()) then
        return new;
    end if;
    raise exception 'schedule "%": next_run_at % is in the past', new.name,
        to_char(new.next_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        using errcode = '22023',
              hint = 'A role plans its schedule from now; cronq backfill --schedule writes past fire times.';
end
$$;
