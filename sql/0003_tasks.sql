-- 0003_tasks.sql — the tasks that do real work (sql, exec, purge), who may
-- enqueue them, cancellation of running jobs, and the default purge schedule.

-- `cronq cancel` of a running job asks its worker to stop it; the worker
-- sees the request at its next heartbeat and records the job cancelled.
alter table cronq.jobs add column cancel_requested boolean not null default false;

create function cronq.payload_rules_sql(p jsonb) returns text
language sql immutable parallel safe as $$
    select case
        when cronq.unknown_key(p, '{sql,transaction}') is not null
            then format('unknown key "%s"', cronq.unknown_key(p, '{sql,transaction}'))
        when not p ? 'sql' then '"sql" is required'
        when jsonb_typeof(p -> 'sql') <> 'string' or btrim(p ->> 'sql') = ''
            then '"sql" must be a non-empty string'
        when p ? 'transaction' and jsonb_typeof(p -> 'transaction') <> 'boolean'
            then '"transaction" must be true or false'
    end
$$;

create function cronq.payload_rules_exec(p jsonb) returns text
language sql immutable parallel safe as $$
    select case
        when cronq.unknown_key(p, '{command,args,env}') is not null
            then format('unknown key "%s"', cronq.unknown_key(p, '{command,args,env}'))
        when not p ? 'command' then '"command" is required'
        when jsonb_typeof(p -> 'command') <> 'string'
             or (p ->> 'command') !~ '^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}$'
            then '"command" must be a program name in the exec directory: letters, digits and _.+- with no "/"'
        when p ? 'args' and (jsonb_typeof(p -> 'args') <> 'array'
             or exists (select 1 from jsonb_array_elements(p -> 'args') a where jsonb_typeof(a) <> 'string'))
            then '"args" must be an array of strings'
        when p ? 'env' and (jsonb_typeof(p -> 'env') <> 'object'
             or exists (select 1 from jsonb_each(p -> 'env') e
                        where jsonb_typeof(e.value) <> 'string' or e.key !~ '^[A-Za-z_][A-Za-z0-9_]*$'
                           or e.key like 'CRONQ\_%'))
            then '"env" must map variable names (not CRONQ_*) to strings'
    end
$$;

-- The durations cronq reads (lib/util/duration.c): units from largest to
-- smallest, each once, or a bare number of seconds.
create function cronq.is_duration(t text) returns boolean
language sql immutable parallel safe as $$
    select t <> '' and t ~ '^([0-9]+|([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$'
$$;

-- older_than is a duration, or an object giving one per status
-- ({"succeeded": "14d", "dead": "90d"}); statuses go with a single duration.
create function cronq.payload_rules_purge(p jsonb) returns text
language sql immutable parallel safe as $$
    select case
        when cronq.unknown_key(p, '{older_than,statuses}') is not null
            then format('unknown key "%s"', cronq.unknown_key(p, '{older_than,statuses}'))
        when jsonb_typeof(p -> 'older_than') = 'string' then
            case
                when not cronq.is_duration(p ->> 'older_than')
                    then '"older_than" must be a duration such as "30d" or "12h"'
                when p ? 'statuses' and (jsonb_typeof(p -> 'statuses') <> 'array'
                     or jsonb_array_length(p -> 'statuses') = 0
                     or exists (select 1 from jsonb_array_elements(p -> 'statuses') s
                                where s not in ('"succeeded"', '"dead"', '"cancelled"')))
                    then '"statuses" must be a non-empty list of succeeded, dead and cancelled'
            end
        when jsonb_typeof(p -> 'older_than') = 'object' then
            case
                when p ? 'statuses' then '"statuses" goes with a single "older_than" duration'
                when (select count(*) from jsonb_object_keys(p -> 'older_than')) = 0
                     or exists (select 1 from jsonb_each(p -> 'older_than') e
                                where e.key not in ('succeeded', 'dead', 'cancelled')
                                   or jsonb_typeof(e.value) <> 'string'
                                   or not cronq.is_duration(e.value #>> '{}'))
                    then '"older_than" must map succeeded, dead or cancelled to durations'
            end
        else '"older_than" is required: a duration, or durations by status'
    end
$$;

create or replace function cronq.task_rules(p_type text, p jsonb) returns text
language sql immutable parallel safe as $$
    select case p_type
        when 'noop' then cronq.payload_rules_noop(p)
        when 'sleep' then cronq.payload_rules_sleep(p)
        when 'fail' then cronq.payload_rules_fail(p)
        when 'sql' then cronq.payload_rules_sql(p)
        when 'exec' then cronq.payload_rules_exec(p)
        when 'purge' then cronq.payload_rules_purge(p)
        else format('unrecognized task type "%s"', p_type)
    end
$$;

create or replace function cronq.known_task(p_type text) returns boolean
language sql immutable parallel safe as $$
    select p_type in ('noop', 'sleep', 'fail', 'sql', 'exec', 'purge')
$$;

-- exec jobs: only members of cronq_exec (checked again before running).
-- purge jobs: only cronq's own role or a superuser (it deletes everyone's history).
create or replace function cronq.task_permission_error(p_type text, p_role text) returns text
language sql stable as $$
    select case
        when p_type = 'exec' and not (
                exists (select 1 from pg_roles where rolname = 'cronq_exec')
                and exists (select 1 from pg_roles where rolname = p_role)
                and pg_has_role(p_role, 'cronq_exec', 'MEMBER'))
            then format('role "%s" may not enqueue exec jobs: it is not a member of cronq_exec', p_role)
        when p_type = 'purge' and not (
                exists (select 1 from pg_roles r where r.rolname = p_role and r.rolsuper)
                or exists (select 1 from pg_class c join pg_roles r on r.oid = c.relowner
                           where c.oid = 'cronq.jobs'::regclass and r.rolname = p_role))
            then format('role "%s" may not enqueue purge jobs: only the owner of cronq.jobs may', p_role)
    end
$$;

-- History never grows without bound: a daily purge keeping 14 days of
-- succeeded and cancelled jobs and 90 days of dead ones. Operators may
-- change or remove it; migrate never re-creates it.
insert into cronq.schedules (name, cron, type, payload, next_run_at, created_by)
values ('cronq-purge', '17 3 * * *', 'purge',
        '{"older_than": {"succeeded": "14d", "cancelled": "14d", "dead": "90d"}}',
        date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'
            + case when (now() at time zone 'UTC')::time < '03:17' then interval '3 hours 17 minutes'
                   else interval '1 day 3 hours 17 minutes' end,
        current_user)
on conflict (name) do nothing;
