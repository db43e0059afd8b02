-- 0006_search_path.sql — every function in schema cronq means the same
-- whatever the caller's search_path. A role with a schema of its own (or
-- CREATE on any schema) could otherwise put its own "<>", "=", pg_has_role
-- or text type ahead of pg_catalog, and the triggers, which run in its
-- session, would check its jobs with its rules.
--
-- Three ways, by what each function is and how often it runs:
-- * SQL functions get SQL-standard bodies (RETURN / BEGIN ATOMIC): names,
--   operators and types are bound when the function is created (migrate
--   pins search_path to pg_catalog), and the planner still inlines them,
--   so the per-row cost of 0004 stays.
-- * The PL/pgSQL functions every inserted job passes through (jobs_guard,
--   check_task, payload_error, task_permission_error) name every function,
--   operator and type with its schema: a SET search_path clause would cost
--   each row about 2 µs per function.
-- * The others (schedules_guard, enqueue_job) pin search_path.

create or replace function cronq.json_depth(v jsonb) returns integer
language sql immutable strict parallel safe
return case jsonb_typeof(v)
    when 'object' then 1 + coalesce((select max(cronq.json_depth(e.value)) from jsonb_each(v) e), 0)
    when 'array' then 1 + coalesce((select max(cronq.json_depth(e)) from jsonb_array_elements(v) e), 0)
    else 0 end;

create or replace function cronq.unknown_key(p jsonb, allowed text[]) returns text
language sql immutable strict parallel safe
return (select k from jsonb_object_keys(p) k where k <> all (allowed) order by k limit 1);

create or replace function cronq.is_duration(t text) returns boolean
language sql immutable parallel safe
return t <> '' and t ~ '^([0-9]+|([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$';

create or replace function cronq.known_task(p_type text) returns boolean
language sql immutable parallel safe
return p_type in ('noop', 'sleep', 'fail', 'sql', 'exec', 'purge');

create or replace function cronq.payload_rules_noop(p jsonb) returns text
language sql stable parallel safe
return case when p <> '{}'::jsonb
    then format('unknown key "%s"', cronq.unknown_key(p, '{}')) end;

create or replace function cronq.payload_rules_sleep(p jsonb) returns text
language sql stable parallel safe
return case
    when cronq.unknown_key(p, '{seconds}') is not null
        then format('unknown key "%s"', cronq.unknown_key(p, '{seconds}'))
    when not p ? 'seconds' then '"seconds" is required'
    when jsonb_typeof(p -> 'seconds') <> 'number' then '"seconds" must be a number'
    when (p ->> 'seconds')::numeric not between 0 and 86400
        then '"seconds" must be between 0 and 86400'
end;

create or replace function cronq.payload_rules_fail(p jsonb) returns text
language sql stable parallel safe
return case
    when cronq.unknown_key(p, '{message,code,permanent}') is not null
        then format('unknown key "%s"', cronq.unknown_key(p, '{message,code,permanent}'))
    when p ? 'message' and jsonb_typeof(p -> 'message') <> 'string'
        then '"message" must be a string'
    when p ? 'code' and (jsonb_typeof(p -> 'code') <> 'string'
                         or (p ->> 'code') !~ '^[a-z0-9_]{1,64}$')
        then '"code" must be 1 to 64 characters of a-z, 0-9 and _'
    when p ? 'permanent' and jsonb_typeof(p -> 'permanent') <> 'boolean'
        then '"permanent" must be true or false'
end;

create or replace function cronq.payload_rules_sql(p jsonb) returns text
language sql stable parallel safe
return case
    when cronq.unknown_key(p, '{sql,transaction}') is not null
        then format('unknown key "%s"', cronq.unknown_key(p, '{sql,transaction}'))
    when not p ? 'sql' then '"sql" is required'
    when jsonb_typeof(p -> 'sql') <> 'string' or btrim(p ->> 'sql') = ''
        then '"sql" must be a non-empty string'
    when p ? 'transaction' and jsonb_typeof(p -> 'transaction') <> 'boolean'
        then '"transaction" must be true or false'
end;

create or replace function cronq.payload_rules_purge(p jsonb) returns text
language sql stable parallel safe
return case
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
end;

create or replace function cronq.task_rules(p_type text, p jsonb) returns text
language sql stable parallel safe
return case p_type
    when 'noop' then cronq.payload_rules_noop(p)
    when 'sleep' then cronq.payload_rules_sleep(p)
    when 'fail' then cronq.payload_rules_fail(p)
    when 'sql' then cronq.payload_rules_sql(p)
    when 'exec' then cronq.payload_rules_exec(p)
    when 'purge' then cronq.payload_rules_purge(p)
    else format('unrecognized task type "%s"', p_type)
end;

create or replace function cronq.key_taken(p_key text) returns boolean
language sql stable set enable_seqscan = off
return exists (select 1 from cronq.jobs where idempotency_key = p_key);

-- Whether the current role (not the session's: inside a SECURITY DEFINER
-- function a superuser's session calls, is_superuser still says "on" while
-- the function's owner acts) is a superuser or owns the table.
create or replace function cronq.may_act_for_others(tbl oid) returns boolean
language sql stable
return exists (select 1 from pg_roles r
               where r.rolname = current_user
                 and (r.rolsuper or r.oid = (select c.relowner from pg_class c where c.oid = tbl)));

create or replace function cronq.enqueue(
    type text,
    payload jsonb default '{}',
    run_at timestamptz default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    key text default null)
returns bigint
language sql volatile
begin atomic
    select e.id from cronq.enqueue_job(type, payload, run_at, queue, priority,
                                       max_attempts, timeout, key) e;
end;

alter function cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval, text)
    set search_path = pg_catalog, pg_temp;
alter function cronq.schedules_guard() set search_path = pg_catalog, pg_temp;

-- The hot PL/pgSQL functions, every name qualified. IS DISTINCT FROM names
-- no operator of its own (it looks "=" up), so it is written with
-- OPERATOR(pg_catalog.=) on the old row's NOT NULL columns.

create or replace function cronq.payload_error(p_type pg_catalog.text, p_payload pg_catalog.jsonb)
returns pg_catalog.text
language plpgsql immutable parallel safe as $$
declare
    t pg_catalog.text;
    msg pg_catalog.text;
begin
    if p_type is null or p_type operator(pg_catalog.=) '' then
        return 'task type must not be empty';
    end if;
    if not cronq.known_task(p_type) then
        return pg_catalog.format('unrecognized task type "%s"', p_type);
    end if;
    if p_payload is null or pg_catalog.jsonb_typeof(p_payload) operator(pg_catalog.<>) 'object' then
        return pg_catalog.format('invalid payload: must be a JSON object, not %s',
                                 coalesce(pg_catalog.jsonb_typeof(p_payload), 'null'));
    end if;
    if pg_catalog.pg_column_size(p_payload) operator(pg_catalog.>) 524288
       and pg_catalog.octet_length(p_payload::pg_catalog.text) operator(pg_catalog.>) 1048576 then
        return 'invalid payload: larger than 1 MiB';
    end if;
    -- Only a payload with many brackets can be deep; skip the walk otherwise.
    t := p_payload::pg_catalog.text;
    if pg_catalog.length(t) operator(pg_catalog.-) pg_catalog.length(pg_catalog.translate(t, '{[', ''))
           operator(pg_catalog.>) 64
       and cronq.json_depth(p_payload) operator(pg_catalog.>) 64 then
        return 'invalid payload: nested deeper than 64 levels';
    end if;
    msg := cronq.task_rules(p_type, p_payload);
    if msg is not null then
        return pg_catalog.format('invalid payload for task "%s": %s', p_type, msg);
    end if;
    return null;
end
$$;

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
                             and r.rolname operator(pg_catalog.=) p_role)) then
            return pg_catalog.format('role "%s" may not enqueue purge jobs: only the owner of cronq.jobs may', p_role);
        end if;
    end if;
    return null;
end
$$;

create or replace function cronq.check_task(p_type pg_catalog.text, p_payload pg_catalog.jsonb,
                                            p_role pg_catalog.text)
returns void
language plpgsql stable as $$
declare
    msg pg_catalog.text;
begin
    msg := cronq.payload_error(p_type, p_payload);
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.task_permission_error(p_type, p_role);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
end
$$;

create or replace function cronq.jobs_guard() returns trigger
language plpgsql as $$
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
    -- An existing idempotency key means "already enqueued": the row is
    -- skipped, whatever the path (COPY of many lines included).
    if tg_op operator(pg_catalog.=) 'INSERT' and new.idempotency_key is not null
       and cronq.key_taken(new.idempotency_key) then
        return null;
    end if;
    return new;
end
$$;
