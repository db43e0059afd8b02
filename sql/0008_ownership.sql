-- 0008_ownership.sql — who sees and changes what. Row-level security
-- gives each role its own jobs, runs and schedules (members of cronq_admin
-- see and manage all; the owner of the tables, which runs cronq run, and
-- superusers are not subject to it); idempotency keys under schedule: and
-- notify: are reserved to what makes them, and a key held by another role's
-- job is refused aloud instead of swallowing the job; the SQL API to
-- cancel, retry, schedule and unschedule; schedules checked when written.
--
-- The grants themselves are not here: sql/grants.sql runs at the end of
-- every migrate, so that roles a DBA creates later get them too.
--
-- Written as 0006 asks: SQL-standard bodies where possible, search_path
-- pinned on the PL/pgSQL ones, every name qualified in the hot jobs_guard.
-- Every statement may run again.

-- Whether the current role may see and manage every role's jobs. Inside
-- a policy it is written (select cronq.is_admin()): evaluated once per
-- statement, not per row. False while the role does not exist.
create or replace function cronq.is_admin() returns boolean
language sql stable
return case when exists (select 1 from pg_roles where rolname = 'cronq_admin')
            then pg_has_role(current_user, 'cronq_admin', 'MEMBER') else false end;

-- Policies apply to every role but the tables' owner and superusers; a
-- role with no grant sees nothing anyway. A role that is no admin sees its
-- own rows, and may leave a job of its own only queued (retry) or
-- cancelled (cancel, or a cancellation its running worker carries out).
alter table cronq.jobs enable row level security;
drop policy if exists jobs_own on cronq.jobs;
create policy jobs_own on cronq.jobs
    using ((select cronq.is_admin()) or enqueued_by = current_user::text)
    with check ((select cronq.is_admin())
                or (enqueued_by = current_user::text
                    and (status in ('queued', 'cancelled')
                         or (status = 'running' and cancel_requested))));

-- A run is seen with its job: the subquery is itself under jobs_own.
alter table cronq.job_runs enable row level security;
drop policy if exists job_runs_own on cronq.job_runs;
create policy job_runs_own on cronq.job_runs
    using ((select cronq.is_admin())
           or exists (select 1 from cronq.jobs j where j.id = job_runs.job_id));

alter table cronq.schedules enable row level security;
drop policy if exists schedules_own on cronq.schedules;
create policy schedules_own on cronq.schedules
    using ((select cronq.is_admin()) or created_by = current_user::text)
    with check ((select cronq.is_admin()) or created_by = current_user::text);

-- Whether any job holds this idempotency key, the caller's or not: it
-- runs as the owner and says no more than that. key_taken (0004), under
-- the caller's row-level security, tells the caller's own jobs apart.
create or replace function cronq.key_in_use(p_key text) returns boolean
language sql stable security definer
set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
    select exists (select 1 from cronq.jobs j where j.idempotency_key = p_key)
$$;

-- Why role p_role may not write a job with this key for this schedule and
-- fire time, or NULL. schedule:NAME:FIRE_TIME keys and the schedule column
-- belong to NAME's author (its backfills; the runner's materialisation writes them as the
-- owner); notify: keys to hooks, which the runner writes. Row-level
-- security limits the lookup to what the role may see.
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
            then format('idempotency key "%s" is reserved: keys starting with "schedule:" belong to the schedule and fire time they name',
                        left(p_key, 200))
        when starts_with(p_key, 'notify:')
            then format('idempotency key "%s" is reserved: keys starting with "notify:" belong to hooks',
                        left(p_key, 200))
    end;
end;

create or replace function cronq.jobs_guard() returns trigger
language plpgsql as $$
declare
    privileged pg_catalog.bool;
    msg pg_catalog.text;
begin
    if tg_op operator(pg_catalog.=) 'INSERT' then
        new.queue := coalesce(new.queue, 'default');
        new.payload := coalesce(new.payload, '{}');
        new.priority := coalesce(new.priority, 0);
        new.run_at := coalesce(new.run_at, pg_catalog.now());
        new.max_attempts := coalesce(new.max_attempts, 10);
        new.timeout := coalesce(new.timeout, '1 hour'::pg_catalog.interval);
        if new.enqueued_by is null
           or (new.enqueued_by operator(pg_catalog.<>) current_user::pg_catalog.text
               and not cronq.may_act_for_others(tg_relid)) then
            new.enqueued_by := current_user;
        end if;
    elsif (new.enqueued_by operator(pg_catalog.=) old.enqueued_by) is not true
          and not cronq.may_act_for_others(tg_relid) then
        raise exception 'only a superuser may change enqueued_by'
            using errcode = '42501';
    end if;
    if tg_op operator(pg_catalog.=) 'INSERT'
       or (new.type operator(pg_catalog.=) old.type) is not true
       or (new.payload operator(pg_catalog.=) old.payload) is not true then
        perform cronq.check_task(new.type, new.payload, new.enqueued_by);
    end if;
    if tg_op operator(pg_catalog.<>) 'INSERT' then
        return new;
    end if;
    -- Reserved keys and schedules bind the roles under row-level security;
    -- those it does not apply to (the owner, whose materialisation writes
    -- every schedule's occurrences, superusers, BYPASSRLS) see every row
    -- anyway. row_security_active() reads the catalog caches: no query
    -- per materialised row.
    privileged := not pg_catalog.row_security_active(tg_relid);
    if not privileged
       and (new.schedule is not null
            or pg_catalog.starts_with(new.idempotency_key, 'schedule:')
            or pg_catalog.starts_with(new.idempotency_key, 'notify:')) then
        msg := cronq.reserved_key_error(new.idempotency_key, new.schedule, new.scheduled_for,
                                        new.enqueued_by);
        if msg is not null then
            raise exception '%', msg using errcode = '42501';
        end if;
    end if;
    -- A key this role's job holds means "already enqueued": the row is
    -- skipped, whatever the path (COPY of many lines included). Another
    -- role's job holding it is said aloud, never a silent skip.
    if new.idempotency_key is not null then
        if cronq.key_taken(new.idempotency_key) then
            return null;
        end if;
        if not privileged and cronq.key_in_use(new.idempotency_key) then
            raise exception 'idempotency key "%" is held by another role''s job',
                pg_catalog.left(new.idempotency_key, 200)
                using errcode = '23505',
                      hint = 'Idempotency keys are shared by every role: choose one that names your application.';
        end if;
    end if;
    return new;
end
$$;

-- Enqueue one job and say whether it is new. With a key this role's job
-- holds, nothing is written and that job's id comes back (created false).
create or replace function cronq.enqueue_job(
    type text,
    payload jsonb default '{}',
    run_at timestamptz default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    key text default null,
    out id bigint,
    out created boolean)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
begin
    insert into cronq.jobs as j (type, payload, run_at, queue, priority,
                                 max_attempts, timeout, idempotency_key)
    values (type, payload, run_at, queue, priority, max_attempts, timeout, key)
    on conflict (idempotency_key) where idempotency_key is not null do nothing
    returning j.id into id;
    if id is not null then
        created := true;
        return;
    end if;
    -- A new statement, a new snapshot: sees a conflicting row committed
    -- by another session while our insert waited for it.
    select j.id into id from cronq.jobs j where j.idempotency_key = key;
    if id is null then
        raise exception 'idempotency key "%" is held by another role''s job', left(key, 200)
            using errcode = '23505',
                  hint = 'Idempotency keys are shared by every role: choose one that names your application.';
    end if;
    created := false;
end
$$;

-- Occurrences of schedules as jobs, in each schedule's author's name: the
-- runner's materialise() (as the owner, for every schedule) and an
-- author's backfill --schedule (as itself, for its own) both come here.
create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile
begin atomic
    insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                            idempotency_key, schedule, scheduled_for, run_at, enqueued_by)
    select s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout,
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    returning cronq.jobs.schedule, cronq.jobs.id;
end;

create or replace function cronq.materialise(p_names text[], p_fires timestamptz[],
                                             p_sched text[], p_next timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile security definer
set search_path = pg_catalog, pg_temp as $$
    with ins as (
        select o.schedule, o.job_id from cronq.enqueue_occurrences(p_names, p_fires) o
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
    )
    select ins.schedule, ins.job_id from ins
$$;
revoke execute on function cronq.materialise(text[], timestamptz[], text[], timestamptz[]) from public;

-- A role under row-level security and no admin (an application) changes
-- a job only as cancel_jobs() and retry_jobs() do: its grants name the
-- columns those write, and this says in which combinations. Anything else
-- (a job made running, attempts pushed to the integer's limit, a lease
-- forged) could stall every runner's claim or rescue. The runner (the
-- owner) is not subject to it: the WHEN clause is a catalog-cache lookup.
create or replace function cronq.jobs_transition_guard() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    -- An admin is trusted with every job (and may run cronq run itself).
    if cronq.is_admin() then
        return new;
    end if;
    -- retry
    if old.status in ('dead', 'failed', 'succeeded', 'cancelled') and new.status = 'queued'
       and new.attempts = 0 and new.locked_by is null and new.locked_until is null
       and not new.cancel_requested and new.started_at is null and new.finished_at is null then
        return new;
    end if;
    -- the rest leave the attempt and its lease as they are
    if (new.attempts, new.locked_by, new.locked_until, new.started_at)
       is distinct from (old.attempts, old.locked_by, old.locked_until, old.started_at) then
        null;
    -- cancel
    elsif old.status in ('queued', 'failed') and new.status = 'cancelled'
          and not new.cancel_requested and new.finished_at is not null then
        return new;
    -- a running job's cancellation, carried out by its worker
    elsif old.status = 'running' and new.status = 'running' and new.cancel_requested
          and new.finished_at is not distinct from old.finished_at then
        return new;
    end if;
    raise exception 'job %: a job is changed only by cancelling or retrying it', old.id
        using errcode = '42501', hint = 'Use cronq.cancel(id), cronq.retry(id) or the CLI.';
end
$$;

drop trigger if exists jobs_transition_guard on cronq.jobs;
create trigger jobs_transition_guard before update on cronq.jobs for each row
    when (pg_catalog.row_security_active('cronq.jobs'::pg_catalog.regclass))
    execute function cronq.jobs_transition_guard();

-- Cancel jobs: queued and failed ones at once; a running one is stopped by
-- its worker's next heartbeat and ends cancelled. Per id: its status now
-- (NULL: no such job, or not one of the caller's) and whether this call
-- changed it. Runs with the caller's rights: row-level security decides.
create or replace function cronq.cancel_jobs(ids bigint[])
returns table (id bigint, status text, changed boolean)
language sql volatile
begin atomic
    with req as (select distinct r.id from unnest(ids) as r(id)),
    upd as (
        update cronq.jobs j set
            status = case when j.status = 'running' then j.status else 'cancelled' end,
            cancel_requested = j.status = 'running',
            finished_at = case when j.status = 'running' then j.finished_at else now() end,
            last_error = case when j.status = 'running' then j.last_error else 'cancelled by an operator' end,
            error_code = case when j.status = 'running' then j.error_code else 'cancelled' end,
            updated_at = now()
        from req where j.id = req.id and j.status in ('queued', 'failed', 'running')
        returning j.id, j.status)
    select req.id, coalesce(upd.status, j.status), upd.id is not null
    from req left join upd on upd.id = req.id left join cronq.jobs j on j.id = req.id;
end;

-- Retry finished jobs: queued, due now, lock cleared, attempts reset (their
-- runs are kept). Per id as cancel_jobs.
create or replace function cronq.retry_jobs(ids bigint[])
returns table (id bigint, status text, changed boolean)
language sql volatile
begin atomic
    with req as (select distinct r.id from unnest(ids) as r(id)),
    upd as (
        update cronq.jobs j set
            status = 'queued', run_at = now(), attempts = 0, locked_by = null, locked_until = null,
            cancel_requested = false, started_at = null, finished_at = null, last_error = null,
            error_code = null, updated_at = now()
        from req where j.id = req.id and j.status in ('dead', 'failed', 'succeeded', 'cancelled')
        returning j.id, j.status)
    select req.id, coalesce(upd.status, j.status), upd.id is not null
    from req left join upd on upd.id = req.id left join cronq.jobs j on j.id = req.id;
end;

-- The SQL API for one job. True when this call cancelled (or asked the
-- worker to cancel) or requeued it, false when there was nothing to do
-- (already finished; still pending); an error when the caller has no
-- such job. job_changed() reads one row of cancel_jobs() or retry_jobs().
create or replace function cronq.job_changed(id bigint, status text, changed boolean)
returns boolean
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
begin
    if status is null then
        raise exception 'job % does not exist', id using errcode = 'P0002',
            hint = 'A role sees only the jobs it enqueued, unless it is a member of cronq_admin.';
    end if;
    return changed;
end
$$;

create or replace function cronq.cancel(id bigint) returns boolean
language sql volatile
begin atomic
    select cronq.job_changed(c.id, c.status, c.changed) from cronq.cancel_jobs(array[id]) c;
end;

create or replace function cronq.retry(id bigint) returns boolean
language sql volatile
begin atomic
    select cronq.job_changed(r.id, r.status, r.changed) from cronq.retry_jobs(array[id]) r;
end;

-- Why text is not a cron expression cronq runs, or NULL: the rules of
-- lib/sched/cron.c (Vixie cron and cronie's syntax; five fields or one of
-- the @ macros; no @reboot, ~, L, W, #, ?), checked when a schedule is
-- written. tests/integration/t_roles.sh compares the two on a corpus.
create or replace function cronq.cron_error(expr text) returns text
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
    names constant text[] := array['minute', 'hour', 'day of month', 'month', 'day of week'];
    lows constant int[] := array[0, 0, 1, 1, 0];
    highs constant int[] := array[59, 23, 31, 12, 7];
    months constant text[] := array['jan', 'feb', 'mar', 'apr', 'may', 'jun',
                                    'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    wdays constant text[] := array['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
    max_days constant int[] := array[31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    f text[];
    item text;
    m text[];
    lo int;
    hi int;
    step int;
    v text;
    bits bool[];
    mdays bool[] := array_fill(false, array[32]);
    mons bool[] := array_fill(false, array[13]);
    n int;
begin
    if expr is null then
        return 'empty expression';
    end if;
    f := regexp_split_to_array(btrim(expr, E' \t\n\r\v\f'), E'[ \t\n\r\v\f]+');
    if f = array[''] then
        return 'empty expression';
    end if;
    if left(f[1], 1) = '@' then
        if lower(f[1]) in ('@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly') then
            return case when cardinality(f) > 1 then format('unexpected text after %s', lower(f[1])) end;
        end if;
        return case when lower(f[1]) = '@reboot' then '@reboot is not supported'
                    else format('unrecognized macro "%s"', left(f[1], 32)) end;
    end if;
    if cardinality(f) <> 5 then
        return format('expected 5 fields, got %s', cardinality(f));
    end if;
    for i in 1 .. 5 loop
        bits := array_fill(false, array[60]);
        if f[i] ~ '(^|,)(,|$)' then
            return format('%s: empty item in list', names[i]);
        end if;
        foreach item in array string_to_array(f[i], ',') loop
            m := regexp_match(item, '^(?:(\*)|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:/([0-9]+))?$');
            if m is null then
                return format('%s: "%s" is not supported', names[i], left(item, 32));
            end if;
            if m[1] is not null then
                lo := lows[i];
                hi := highs[i];
            else
                lo := null;
                hi := null;
                foreach v in array array[m[2], m[3]] loop
                    continue when v is null;
                    if v ~ '^[0-9]+$' then
                        v := coalesce(nullif(ltrim(v, '0'), ''), '0');
                        n := case when length(v) > 4 then 10000 else v::int end;
                        if n < lows[i] or n > highs[i] then
                            return format('%s: %s is out of range %s-%s', names[i], left(v, 32), lows[i], highs[i]);
                        end if;
                    elsif i = 4 and lower(v) = any (months) then
                        n := array_position(months, lower(v));
                    elsif i = 5 and lower(v) = any (wdays) then
                        n := array_position(wdays, lower(v)) - 1;
                    else
                        return format('%s: "%s" is not a %s', names[i], left(v, 32),
                                      case when i in (4, 5) then 'valid name' else 'number' end);
                    end if;
                    if lo is null then lo := n; else hi := n; end if;
                end loop;
                if hi is null then
                    hi := case when m[4] is not null then highs[i] else lo end;
                elsif lo > hi then
                    return format('%s: range %s-%s is reversed', names[i], m[2], m[3]);
                end if;
            end if;
            step := 1;
            if m[4] is not null then
                v := coalesce(nullif(ltrim(m[4], '0'), ''), '0');
                step := case when length(v) > 4 then 10000 else v::int end;
                if step < 1 or step > highs[i] - lows[i] + 1 then
                    return format('%s: step %s is out of range 1-%s', names[i], left(m[4], 32),
                                  highs[i] - lows[i] + 1);
                end if;
            end if;
            for k in 0 .. (hi - lo) / step loop
                bits[lo + k * step + 1] := true;
            end loop;
        end loop;
        if i = 3 then mdays := bits[1:32]; end if;
        if i = 4 then mons := bits[1:13]; end if;
    end loop;
    -- Both day fields restricted: either matches, so some day always comes.
    if left(f[3], 1) = '*' or left(f[5], 1) = '*' then
        if not exists (select 1 from generate_series(1, 12) mo, generate_series(1, 31) d
                       where mons[mo + 1] and mdays[d + 1] and d <= max_days[mo]) then
            return format('cron expression "%s" never fires', left(expr, 64));
        end if;
    end if;
    return null;
end
$$;

-- Why text is not a time zone every runner reads the same, or NULL: an
-- IANA name the server knows (UTC included), spelt as the tz database
-- spells names.
create or replace function cronq.zone_error(zone text) returns text
language sql stable
begin atomic
    select case
        when zone = 'UTC' then null
        when zone is null or zone !~ '^[A-Za-z0-9_+][A-Za-z0-9._+-]*(/[A-Za-z0-9_+][A-Za-z0-9._+-]*)*$'
             or zone in ('localtime', 'posixrules', 'Factory')
             or not exists (select 1 from pg_timezone_names t where t.name = zone)
            then format('unrecognized time zone "%s"', left(zone, 64))
    end;
end;

-- Schedules obey the jobs' payload rules and cron's; their author is the
-- role that wrote them; a new expression or zone is due to be planned at
-- the next wake (next_run_at NULL) unless the writer planned it.
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
        -- Whoever changes what a schedule's jobs do becomes its author;
        -- changing when they run (an admin fixing a zone) does not make
        -- the author's SQL run as the editor.
        if (new.type, new.payload) is distinct from (old.type, old.payload) then
            new.created_by := current_user;
        end if;
    end if;
    if tg_op = 'INSERT' or (new.cron, new.timezone) is distinct from (old.cron, old.timezone) then
        msg := coalesce(cronq.cron_error(new.cron), cronq.zone_error(new.timezone));
        if msg is not null then
            raise exception 'schedule "%": %', new.name, msg using errcode = '22023';
        end if;
        if tg_op = 'UPDATE' and new.next_run_at is not distinct from old.next_run_at then
            new.next_run_at := null;
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

-- Create or replace the caller's schedule NAME, like pg_cron's
-- cron.schedule. Options left NULL keep the table's defaults on a new
-- schedule and their values on a replaced one. The expression and zone are
-- checked now; the next wake plans the first run. Another role's schedule
-- of that name is refused.
create or replace function cronq.schedule(
    name text,
    cron text,
    type text,
    payload jsonb default '{}',
    timezone text default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    enabled boolean default null,
    catchup text default null,
    overlap text default null)
returns text
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
begin
    begin
        insert into cronq.schedules as s (name, cron, timezone, type, payload)
        values (name, cron, coalesce(timezone, 'UTC'), type, coalesce(payload, '{}'));
    exception when unique_violation then
        update cronq.schedules s
        set cron = schedule.cron, timezone = coalesce(schedule.timezone, s.timezone),
            type = schedule.type, payload = coalesce(schedule.payload, '{}')
        where s.name = schedule.name;
        if not found then
            raise exception 'schedule "%" belongs to another role', name using errcode = '42501',
                hint = 'Schedule names are shared by every role: choose another name.';
        end if;
    end;
    if coalesce(queue, priority::text, max_attempts::text, timeout::text, enabled::text,
                catchup, overlap) is not null then
        update cronq.schedules s
        set queue = coalesce(schedule.queue, s.queue),
            priority = coalesce(schedule.priority, s.priority),
            max_attempts = coalesce(schedule.max_attempts, s.max_attempts),
            timeout = coalesce(schedule.timeout, s.timeout),
            enabled = coalesce(schedule.enabled, s.enabled),
            catchup = coalesce(schedule.catchup, s.catchup),
            overlap = coalesce(schedule.overlap, s.overlap)
        where s.name = schedule.name;
    end if;
    return name;
end
$$;

-- Remove the caller's schedule NAME (its jobs stay). An error when it has
-- none of that name.
create or replace function cronq.unschedule(name text) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
begin
    delete from cronq.schedules s where s.name = name;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    return true;
end
$$;

-- purge deletes every role's history: its owner, a superuser or an admin.
create or replace function cronq.task_permission_error(p_type pg_catalog.text, p_role pg_catalog.text)
returns pg_catalog.text
language plpgsql stable as $$
begin
    if p_type operator(pg_catalog.=) 'exec' then
        if not (exists (select 1 from pg_catalog.pg_roles
                        where rolname operator(pg_catalog.=) 'cronq_exec')
                and exists (select 1 from pg_catalog.pg_roles
                            where rolname operator(pg_catalog.=) p_role)
                and pg_catalog.pg_has_role(p_role, 'cronq_exec', 'MEMBER')) then
            return pg_catalog.format('role "%s" may not enqueue exec jobs: it is not a member of cronq_exec', p_role);
        end if;
    elsif p_type operator(pg_catalog.=) 'purge' then
        if not (exists (select 1 from pg_catalog.pg_roles r
                        where r.rolname operator(pg_catalog.=) p_role and r.rolsuper)
                or exists (select 1 from pg_catalog.pg_class c
                           join pg_catalog.pg_roles r on r.oid operator(pg_catalog.=) c.relowner
                           where c.oid operator(pg_catalog.=) 'cronq.jobs'::pg_catalog.regclass
                             and r.rolname operator(pg_catalog.=) p_role)
                or (exists (select 1 from pg_catalog.pg_roles
                            where rolname operator(pg_catalog.=) 'cronq_admin')
                    and exists (select 1 from pg_catalog.pg_roles
                                where rolname operator(pg_catalog.=) p_role)
                    and pg_catalog.pg_has_role(p_role, 'cronq_admin', 'MEMBER'))) then
            return pg_catalog.format('role "%s" may not enqueue purge jobs: only the owner of cronq.jobs or a member of cronq_admin may', p_role);
        end if;
    end if;
    return null;
end
$$;

