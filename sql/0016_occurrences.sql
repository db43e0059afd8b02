-- 0016_occurrences.sql — schedules that explain themselves: the
-- occurrence ledger, a schedule's disabled spell, and run-now.
--
-- cronq.occurrences has one row per fire time a wake decided about:
-- enqueued (its job), or skipped by overlap (job_id: the job still
-- unfinished), by catch-up, while paused or disabled, or refused (the
-- schedule's jobs could not be written; detail: why). A job of the row
-- that ends past its start deadline makes the row "expired". It is
-- written by cronq.materialise(), in the statement that enqueues the
-- jobs and moves the schedule on, under the lock of the schedule's row:
-- one decision per occurrence however many runners wake. The idle wake
-- never calls it. Rows go with their schedule (a trigger) and with
-- purge (lib/queue/purge.c: fire times older than the purge's age whose
-- job is gone).
--
-- A schedule's disabled spell: disabled_from and disabled_until
-- (schedules_spell, below, keeps them; nobody writes them by hand).
-- Enabling no longer moves next_run_at: the next wake sees the fire times
-- of the spell and records them as skipped, "disabled".
--
-- cronq.run_schedule(name, force): `cronq schedule run`, one job now with
-- the schedule's settings, key schedule:NAME:manual:TIME, as its author.
-- So that such a key is no other schedule's occurrence key, no schedule
-- name ends in ":manual".
--
-- jobs_author: only a job's author (or the owner, a superuser) changes
-- what it runs.
--
-- Binaries built before this schema would catch up a disabled spell's
-- newest fire time after an enable:
-- compatible-from: 16
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

create table if not exists cronq.occurrences (
    schedule   text not null,
    fire_at    timestamptz not null,
    decision   text not null,
    job_id     bigint,
    detail     text,
    decided_at timestamptz not null default now(),
    constraint occurrences_decision_check check (decision in
        ('enqueued', 'overlap', 'catchup', 'paused', 'disabled', 'expired', 'refused'))
);
comment on table cronq.occurrences is
    'cronq occurrence ledger: what the runners decided for each fire time of a schedule; see cronq(1) why';
-- Once per fire time is the schedule's row lock's doing (materialisation
-- holds it FOR UPDATE): no unique index, whose check would cost each row
-- as much again. A fire time decided twice (next_run_at rewound by hand)
-- has two rows; why reads the newest.
-- One index serves why (a schedule's fire time: both equal) and purge
-- (the fire times older than its age): each one costs materialisation.
create index if not exists occurrences_fire on cronq.occurrences (fire_at, schedule);

-- A role sees the ledger of the schedules it sees (its own: row-level
-- security on cronq.schedules applies inside the policy), an admin all.
alter table cronq.occurrences enable row level security;
drop policy if exists occurrences_own on cronq.occurrences;
create policy occurrences_own on cronq.occurrences for select
    using ((select cronq.is_admin()) or schedule in (select s.name from cronq.schedules s));
drop policy if exists occurrences_purge on cronq.occurrences;
create policy occurrences_purge on cronq.occurrences for delete
    using ((select cronq.is_admin()));

-- A schedule's rows go with it, and follow it when renamed: triggers,
-- not a foreign key, whose check per row would cost materialisation a
-- third of its speed (the rows are written under the schedule's lock).
-- A definer: an owner removing its schedule may not delete ledger rows.
create or replace function cronq.schedules_ledger() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
begin
    if tg_op = 'DELETE' then
        delete from cronq.occurrences where schedule = old.name;
    else
        update cronq.occurrences set schedule = new.name where schedule = old.name;
    end if;
    return null;
end
$$;
drop trigger if exists schedules_ledger_delete on cronq.schedules;
create trigger schedules_ledger_delete after delete on cronq.schedules
    for each row execute function cronq.schedules_ledger();
drop trigger if exists schedules_ledger_rename on cronq.schedules;
create trigger schedules_ledger_rename after update of name on cronq.schedules
    for each row when (old.name is distinct from new.name)
    execute function cronq.schedules_ledger();

alter table cronq.schedules add column if not exists disabled_from timestamptz;
alter table cronq.schedules add column if not exists disabled_until timestamptz;
comment on column cronq.schedules.disabled_from is
    'when the schedule was last disabled (its fire times from then on are skipped, "disabled")';
comment on column cronq.schedules.disabled_until is
    'when it was enabled again after disabled_from (NULL while disabled)';

create or replace function cronq.schedules_spell() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if tg_op = 'INSERT' then
        new.disabled_from := case when new.enabled then null else now() end;
        new.disabled_until := null;
    elsif new.enabled is distinct from old.enabled then
        if new.enabled then
            new.disabled_until := now();
        elsif old.disabled_until is not null and old.next_run_at <= old.disabled_until then
            -- Disabled again before a wake used the last spell: one spell,
            -- from its start (the fire times between are skipped too).
            new.disabled_until := null;
        else
            new.disabled_from := now();
            new.disabled_until := null;
        end if;
    else
        new.disabled_from := old.disabled_from;
        new.disabled_until := old.disabled_until;
    end if;
    return new;
end
$$;
drop trigger if exists schedules_spell on cronq.schedules;
create trigger schedules_spell
    before insert or update of enabled, disabled_from, disabled_until
    on cronq.schedules for each row execute function cronq.schedules_spell();
-- A schedule disabled by an older binary: its spell began no later than
-- its last change and its next run (what an older enable skipped).
update cronq.schedules set disabled_from = least(updated_at, next_run_at, now())
where not enabled and disabled_from is null;

-- The occurrences' jobs (as 0014's, with their schedule's history
-- policy), now returning their fire times (the ledger's key).
drop function if exists cronq.enqueue_occurrences(text[], timestamptz[]);
drop function if exists cronq.enqueue_occurrences(text[], timestamptz[], boolean) cascade;
create function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[],
                                          p_deadline boolean)
returns table (schedule text, job_id bigint, fire_at timestamptz)
language sql volatile
begin atomic
    insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                            idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                            expires_at, history)
    select s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout,
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end,
           s.history
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    returning cronq.jobs.schedule, cronq.jobs.id, cronq.jobs.scheduled_for;
end;

create function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile
begin atomic
    select o.schedule, o.job_id from cronq.enqueue_occurrences(p_names, p_fires, true) o;
end;

-- The runner's materialisation: the jobs of the occurrences to enqueue
-- (p_names, p_fires), each due schedule moved on (p_sched, p_next), and
-- the ledger: one row per occurrence enqueued (or found enqueued already,
-- its key held by a job of the schedule's: a backfill's), and one per occurrence
-- skipped (p_skip_names, p_skip_fires, p_skip_why: overlap, catchup,
-- paused, disabled or refused; p_skip_detail). An overlap skip names the
-- schedule's last job, the one still unfinished.
-- A job insert that waits on another transaction (one writing a job with
-- the same occurrence key, not yet committed: a schedule's author may)
-- gives up after a second (55P03) rather than hold the batch's other
-- schedules: the runner then sets that schedule aside for an hour, as for
-- any job the database refuses, and the others go on.
create or replace function cronq.materialise(p_names text[], p_fires timestamptz[],
                                             p_sched text[], p_next timestamptz[],
                                             p_skip_names text[], p_skip_fires timestamptz[],
                                             p_skip_why text[], p_skip_detail text[])
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
            last_job_id = coalesce(newest.id, s.last_job_id)
        from unnest(p_sched, p_next) as n(name, next)
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
                                             text[], timestamptz[], text[], text[]) from public;

-- The form binaries of schema 13 call (none may use this schema: see
-- compatible-from above; kept so that the name still resolves).
create or replace function cronq.materialise(p_names text[], p_fires timestamptz[],
                                             p_sched text[], p_next timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile security definer
set search_path = pg_catalog, pg_temp as $$
    select m.schedule, m.job_id
    from cronq.materialise(p_names, p_fires, p_sched, p_next, '{}', '{}', '{}', '{}') m
$$;
revoke execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[]) from public;

-- A manual key, schedule:NAME:manual:TIME, must never be another
-- schedule's occurrence key: that would be the schedule "NAME:manual" at
-- TIME (the two end with a time of one length, so only that name). No
-- schedule name ends in ":manual" from now on (NOT VALID: one that exists
-- is left, and its author told by the next change).
alter table cronq.schedules drop constraint if exists schedules_name_manual_check;
alter table cronq.schedules add constraint schedules_name_manual_check
    check (name !~ ':manual$') not valid;

-- Keys: a schedule's own occurrence, schedule:NAME:FIRE_TIME, and now its
-- runs by hand, schedule:NAME:manual:TIME (TIME the job's scheduled_for).
create or replace function cronq.reserved_key_error(p_key text, p_schedule text,
                                                    p_fire timestamptz, p_role text)
returns text
language sql stable
begin atomic
    select case
        when p_schedule is not null
             and not exists (select 1 from cronq.schedules s
                             where s.name = p_schedule and s.created_by = p_role)
            then format('role "%s" may not enqueue jobs of schedule "%s": it is not its author',
                        p_role, p_schedule)
        -- The whole key, not a prefix: names may hold ":", and the schedule
        -- "a:2026-11-24T20" must not own "schedule:a:2026-11-24T20:00:00Z".
        when starts_with(p_key, 'schedule:')
             and p_key is distinct from 'schedule:' || p_schedule || ':'
                 || to_char(p_fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
             and p_key is distinct from 'schedule:' || p_schedule || ':manual:'
                 || to_char(p_fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            then format('idempotency key "%s" is reserved: keys starting with "schedule:" belong to the schedule and fire time they name',
                        left(p_key, 200))
        when starts_with(p_key, 'notify:')
            then format('idempotency key "%s" is reserved: keys starting with "notify:" belong to hooks',
                        left(p_key, 200))
    end;
end;

-- `cronq schedule run NAME [--force]`: one job now with the schedule's
-- type, payload, queue, priority, attempts, timeout and start deadline,
-- key schedule:NAME:manual:TIME, and the schedule's last job from then on
-- (overlap skip waits for it). The job is the schedule's author's, whoever
-- asks: an admin running an application's schedule must not make its SQL
-- run as the admin. So it is written as the owner (a definer), for a
-- caller that may manage the schedule: its author, a member of
-- cronq_admin, the owner, a superuser; to anyone else the schedule does
-- not exist. The caller is the role the session acts as (SET ROLE's, else
-- the login), which a definer does not change. overlap skip refuses while
-- the last job is unfinished (55006), unless force. The same second twice
-- is one job (its key).
create or replace function cronq.run_schedule(name text, force boolean default false)
returns bigint
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    caller text := case when current_setting('role') = 'none' then session_user::text
                        else current_setting('role') end;
    s cronq.schedules;
    busy bigint;
    t timestamptz := date_trunc('second', now());
    k text;
    id bigint;
begin
    -- Only a row the caller may manage is looked at, and locked: anyone
    -- else's call must not hold another role's schedule from the wakes.
    select * into s from cronq.schedules x
    where x.name = name
      and (x.created_by = caller
           or (exists (select 1 from pg_roles where rolname = 'cronq_admin')
               and pg_has_role(caller, 'cronq_admin', 'MEMBER'))
           or exists (select 1 from pg_roles r where r.rolname = caller
                      and (r.rolsuper or r.oid = (select c.relowner from pg_class c
                                                  where c.oid = 'cronq.schedules'::regclass))))
    for update;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    if not coalesce(force, false) and s.overlap = 'skip' then
        select j.id into busy from cronq.jobs j
        where j.id = s.last_job_id
          and (j.status = 'running'
               or j.status in ('queued', 'failed') and (j.expires_at is null or j.expires_at > now()));
        if busy is not null then
            raise exception 'schedule "%": its job % is still unfinished (overlap skip)', name, busy
                using errcode = '55006', hint = 'Use --force to run it anyway.';
        end if;
    end if;
    k := 'schedule:' || s.name || ':manual:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history)
    values (s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout, k, s.name, t, now(),
            s.created_by, t + s.start_deadline, s.history)
    returning j.id into id;
    if id is null then
        -- The key is held: by this schedule's run of this second, or not at all.
        select j.id into id from cronq.jobs j
        where j.idempotency_key = k and j.schedule = s.name and j.enqueued_by = s.created_by;
        if id is null then
            raise exception 'schedule "%": key % is held by another job', name, k using errcode = '23505';
        end if;
    end if;
    update cronq.schedules x set last_job_id = id
    where x.name = s.name and (x.last_job_id is null or x.last_job_id < id);
    return id;
end
$$;
revoke execute on function cronq.run_schedule(text, boolean) from public;

-- A job of a schedule that ended past its start deadline: its occurrence
-- is "expired" (as 0013's, and the ledger's row). Runs as the owner: the
-- wake's sweep and expire_holder() (a definer) call it.
create or replace function cronq.expire_jobs(p_worker text, p_ids bigint[]) returns bigint
language sql volatile
begin atomic
    with upd as (
        update cronq.jobs j set status = 'cancelled', error_code = 'expired',
            last_error = 'not started by its deadline, '
                || to_char(j.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            locked_by = null, locked_until = null, finished_at = now(), updated_at = now()
        where j.id = any(p_ids) and j.status in ('queued', 'failed') and j.expires_at <= now()
        returning j.id, j.attempts, j.last_error, j.schedule, j.scheduled_for
    ), runs as (
        insert into cronq.job_runs (job_id, attempt, worker, finished_at, outcome, error_code,
                                    error)
        select upd.id, upd.attempts + 1, p_worker, now(), 'cancelled', 'expired', upd.last_error
        from upd
    ), ledger as (
        update cronq.occurrences o set decision = 'expired'
        from upd
        where upd.schedule is not null and o.schedule = upd.schedule
          and o.fire_at = upd.scheduled_for and o.job_id = upd.id
    )
    select count(*) from upd;
end;
revoke execute on function cronq.expire_jobs(text, bigint[]) from public;

-- What a job runs (type, payload) is changed by its author alone, or by
-- the owner or a superuser: an admin who rewrote an application's sql job
-- would have its own SQL run as the application. (A schedule's editor
-- becomes its author instead: schedules_guard, 0008.) Fires only when the
-- type or the payload changes: never on the runner's updates.
create or replace function cronq.jobs_author() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if old.enqueued_by <> current_user::text and not cronq.may_act_for_others(tg_relid) then
        raise exception 'job %: only its author, %, may change what it runs', old.id, old.enqueued_by
            using errcode = '42501';
    end if;
    return new;
end
$$;
drop trigger if exists jobs_author on cronq.jobs;
create trigger jobs_author before update of type, payload on cronq.jobs
    for each row when ((old.type, old.payload) is distinct from (new.type, new.payload))
    execute function cronq.jobs_author();
