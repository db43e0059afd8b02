-- 0002_schedules.sql — named cron schedules, and the function runners call
-- to enqueue their due occurrences exactly once.

create table cronq.schedules (
    name             text primary key check (name ~ '^[A-Za-z0-9_.:@-]{1,200}$'),
    cron             text not null check (cron <> '' and length(cron) <= 1000),
    timezone         text not null default 'UTC',
    type             text not null,
    payload          jsonb not null default '{}',
    queue            text not null default 'default' check (queue <> '' and length(queue) <= 200),
    priority         integer not null default 0,
    max_attempts     integer not null default 10 check (max_attempts between 1 and 1000),
    timeout          interval check (timeout > interval '0'),
    enabled          boolean not null default true,
    catchup          text not null default 'latest' check (catchup in ('latest', 'all', 'skip')),
    overlap          text not null default 'skip' check (overlap in ('skip', 'allow')),
    next_run_at      timestamptz,
    last_enqueued_at timestamptz,
    last_job_id      bigint,
    created_by       text not null,
    created_at       timestamptz not null default now(),
    updated_at       timestamptz not null default now()
);

comment on table cronq.schedules is 'cronq schedules: named cron definitions; see cronq(1)';

-- "Is any schedule due?" reads only due entries of this index, so an idle
-- wake costs the same with 10 or 10,000 schedules.
create index schedules_due on cronq.schedules (next_run_at) where enabled;

-- Schedules obey the jobs' payload rules, and their author is the role that
-- wrote them: their jobs are enqueued in that role's name.
create function cronq.schedules_guard() returns trigger
language plpgsql as $$
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
        -- Whoever changes what a schedule does becomes its author.
        if (new.cron, new.timezone, new.type, new.payload)
           is distinct from (old.cron, old.timezone, old.type, old.payload) then
            new.created_by := current_user;
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

create trigger schedules_guard before insert or update on cronq.schedules
    for each row execute function cronq.schedules_guard();

-- Enqueue occurrences and move schedules on, in one statement. The caller
-- (cronq run) holds the schedules' rows FOR UPDATE, has computed in C which
-- fire times to enqueue (p_names[i] fires at p_fires[i]) and each
-- schedule's next run (p_sched[i] → p_next[i]). Jobs are enqueued in the
-- name of the schedule's author, which is why this runs as the owner; the
-- key schedule:NAME:FIRE_TIME makes every occurrence at most one job.
create function cronq.materialise(p_names text[], p_fires timestamptz[],
                                  p_sched text[], p_next timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile security definer
set search_path = pg_catalog, pg_temp as $$
    with ins as (
        insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                                idempotency_key, schedule, scheduled_for, run_at, enqueued_by)
        select s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout,
               'schedule:' || s.name || ':'
                   || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
               s.name, f.fire, f.fire, s.created_by
        from unnest(p_names, p_fires) as f(name, fire)
        join cronq.schedules s on s.name = f.name
        order by f.fire
        returning id, cronq.jobs.schedule
    ), newest as (
        select ins.schedule, max(ins.id) as id from ins group by ins.schedule
    ), upd as (
        update cronq.schedules s
        set next_run_at = n.next,
            last_enqueued_at = case when newest.id is not null then now() else s.last_enqueued_at end,
            last_job_id = coalesce(newest.id, s.last_job_id)
        from unnest(p_sched, p_next) as n(name, next)
        left join newest on newest.schedule = n.name
        where s.name = n.name
        returning s.name
    )
    select ins.schedule, ins.id from ins
$$;

revoke execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[]) from public;

do $$
begin
    if exists (select from pg_roles where rolname = 'cronq_user') then
        grant select on cronq.schedules to cronq_user;
    end if;
end
$$;
