-- 0017_composition.sql — composition: hooks and dependencies.
--
-- Hooks: a job, and a schedule for all its jobs, may carry job specs to
-- enqueue when something happens to it: jobs.hooks (and schedules.hooks,
-- copied onto each job the schedule makes), a JSON object with any of
-- on_success, on_failure (every failed attempt, the last one included),
-- on_dead and on_recover (a success after a failed attempt of the job, or
-- after a failed or dead job of the same schedule). Each spec is
-- {"type", "payload", "queue", "priority", "max_attempts", "timeout"}
-- (type required; timeout in seconds). A spec is checked when the job or
-- schedule is written, like a job of its own with the job's author
-- (jobs_hooks: hooks_error, hooks_permission_error): a hook never has
-- more rights than the job's author, whose job it becomes. It is enqueued
-- by cronq.fire_hooks, which the runner's outcome statements
-- (lib/queue/record.sql, record_plain.sql) call for their batch, in the
-- statement (so the transaction) that records the outcome, with the key
-- notify:JOB:ATTEMPT:EVENT: once per event, and never without its outcome
-- (one insert a batch: a trigger per row cost a drain 6 times its time). {job_id}, {type}, {schedule}, {status} and
-- {error} are replaced in the payload's strings in one pass; in an sql
-- job's "sql" each becomes an expression reading a setting that a first
-- statement sets (hook_payload): no value is ever spliced into the
-- statement; an exec job's "command" is left as written. Jobs made by hooks carry no hooks. A hook job the database
-- refuses at that moment (its author lost a grant, a substituted value
-- broke a payload rule) is written as a permanent fail job saying so,
-- never at the cost of the outcome.
--
-- Dependencies: jobs.depends_on, the jobs that must succeed first (the
-- author's own, written before it: a job can only depend on older jobs,
-- so no cycle can form). Such a job is "blocked" while waiting_for (how
-- many of them have not succeeded) is above zero; each parent keeps its
-- dependants in jobs.dependants. A parent's success counts down its
-- blocked dependants and makes queued those with nothing left to wait
-- for; a parent that ends dead or cancelled cancels them (error_code
-- dependency_failed, and on down the chain). Both in the transaction that
-- records the parent's outcome (jobs_settle), so a dependant is due at
-- the next claim; one that another transaction holds locked is not waited
-- for (a role may lock its own rows, and the runner's statements must not
-- wait on them): it goes to cronq.settle_later, which the next wake
-- settles from its parents (lib/queue/settle.sql). A retried dependant
-- whose parents have not all succeeded waits again (jobs_wait).
--
-- Binaries built before this schema know neither blocked jobs nor hooks:
-- compatible-from: 17

alter table cronq.jobs add column if not exists hooks jsonb;
alter table cronq.jobs add column if not exists depends_on bigint[];
alter table cronq.jobs add column if not exists dependants bigint[];
alter table cronq.jobs add column if not exists waiting_for integer;
alter table cronq.schedules add column if not exists hooks jsonb;

alter table cronq.jobs drop constraint if exists jobs_status_check;
alter table cronq.jobs add constraint jobs_status_check
    check (status in ('queued', 'running', 'succeeded', 'failed', 'dead', 'cancelled', 'blocked'));

-- What is wrong with a set of hooks, or NULL: its shape, and each spec's
-- payload by its task's rules (payload_error). Whether the author may
-- enqueue each type is hooks_permission_error's to say. A standard SQL
-- body (bound when created, safe under any search_path) with no SET
-- clause: payload_error then runs under the caller's search path, as the
-- check_task of jobs_guard runs it for the same row, and its cached plans
-- stay valid (alternating search paths replanned them at every row: 0.8
-- ms a job).
create or replace function cronq.hooks_error(p_hooks jsonb) returns text
language sql stable
begin atomic
    select case
        when jsonb_typeof(p_hooks) is distinct from 'object' then 'hooks must be a JSON object'
        else (select x.msg from (
            select e.key, case
                when e.key not in ('on_success', 'on_failure', 'on_dead', 'on_recover') then
                    format('unknown hook "%s": must be on_success, on_failure, on_dead or on_recover',
                           left(e.key, 100))
                when jsonb_typeof(e.value) <> 'object' then
                    format('%s: a hook is a job spec, a JSON object such as {"type": "noop"}', e.key)
                when exists (select 1 from jsonb_object_keys(e.value) k(k)
                             where k.k not in ('type', 'payload', 'queue', 'priority', 'max_attempts',
                                               'timeout')) then
                    format('%s: unrecognized field "%s" (a hook has type, payload, queue, priority, max_attempts, timeout)',
                           e.key, (select left(min(k.k), 100) from jsonb_object_keys(e.value) k(k)
                                   where k.k not in ('type', 'payload', 'queue', 'priority',
                                                     'max_attempts', 'timeout')))
                when jsonb_typeof(e.value -> 'type') is distinct from 'string' then
                    format('%s: "type" is required and must be a string', e.key)
                when e.value ? 'payload' and jsonb_typeof(e.value -> 'payload') <> 'object' then
                    format('%s: "payload" must be a JSON object', e.key)
                when e.value ? 'queue' and (jsonb_typeof(e.value -> 'queue') <> 'string'
                                            or e.value ->> 'queue' = '' or length(e.value ->> 'queue') > 200
                                            or e.value ->> 'queue' ~ '[[:cntrl:]]') then
                    format('%s: "queue" must be printable text of 1 to 200 bytes', e.key)
                when e.value ? 'priority' and case
                        when jsonb_typeof(e.value -> 'priority') <> 'number'
                             or e.value ->> 'priority' !~ '^-?[0-9]{1,9}$' then true
                        else (e.value ->> 'priority')::integer not between -1000000 and 1000000 end then
                    format('%s: "priority" must be an integer from -1000000 to 1000000', e.key)
                when e.value ? 'max_attempts' and case
                        when jsonb_typeof(e.value -> 'max_attempts') <> 'number'
                             or e.value ->> 'max_attempts' !~ '^[0-9]{1,9}$' then true
                        else (e.value ->> 'max_attempts')::integer not between 1 and 1000 end then
                    format('%s: "max_attempts" must be an integer from 1 to 1000', e.key)
                when e.value ? 'timeout' and case
                        when jsonb_typeof(e.value -> 'timeout') <> 'number'
                             or e.value ->> 'timeout' !~ '^[0-9]{1,9}$' then true
                        else (e.value ->> 'timeout')::integer not between 1 and 31536000 end then
                    format('%s: "timeout" must be a whole number of seconds from 1 to 31536000', e.key)
                else e.key || ': ' || cronq.payload_error(e.value ->> 'type',
                                                           coalesce(e.value -> 'payload', '{}'))
                end as msg
            from jsonb_each(p_hooks) e) x
          where x.msg is not null order by x.key limit 1)
        end;
end;

-- Whether the role may enqueue every hook's type, or why not.
create or replace function cronq.hooks_permission_error(p_hooks jsonb, p_role text) returns text
language sql stable
begin atomic
    select format('%s: %s', e.key, cronq.task_permission_error(e.value->>'type', p_role))
    from jsonb_each(p_hooks) e
    where cronq.task_permission_error(e.value->>'type', p_role) is not null
    order by e.key
    limit 1;
end;

-- s with each {job_id}, {type}, {schedule}, {status} and {error} replaced
-- by its value (vals, in that order), in one pass: a value holding a
-- placeholder is not replaced again. quoted: each value a quoted SQL
-- literal, NULL for none. Linear in the result (string_agg, not a
-- concatenation per placeholder: 150,000 placeholders in a payload of
-- 1 MiB took hours and held the statement that records an outcome), and
-- refused (54000) before it is built when the result would pass 1 MiB, a
-- payload's limit anyway.
create or replace function cronq.hook_text(s text, vals text[], quoted boolean) returns text
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
    pattern constant text := '\{(job_id|type|schedule|status|error)\}';
    names constant text[] := array['job_id', 'type', 'schedule', 'status', 'error'];
    reps text[];
    parts text[];
    found text[];
    total bigint;
begin
    if s is null or strpos(s, '{') = 0 then
        return s;
    end if;
    found := array(select m[1] from regexp_matches(s, pattern, 'g') m);
    if coalesce(cardinality(found), 0) = 0 then
        return s;
    end if;
    reps := array(select case when quoted then coalesce(quote_literal(vals[i]), 'NULL')
                              else coalesce(vals[i], '') end
                  from generate_series(1, 5) i order by i);
    total := octet_length(s) + (select sum(octet_length(reps[array_position(names, f)]))
                                from unnest(found) f);
    if total > 1048576 then
        raise exception 'its text would be % bytes once its placeholders are replaced (at most 1 MiB)',
            total using errcode = '54000';
    end if;
    parts := regexp_split_to_array(s, pattern);
    return (select string_agg(p.part || coalesce(reps[array_position(names, found[p.n])], ''), ''
                              order by p.n)
            from unnest(parts) with ordinality p(part, n));
end
$$;

-- A JSON value with hook_text applied to each string in it (not to keys).
create or replace function cronq.hook_json(v jsonb, vals text[]) returns jsonb
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
begin
    return case jsonb_typeof(v)
        when 'string' then to_jsonb(cronq.hook_text(v #>> '{}', vals, false))
        when 'object' then (select coalesce(jsonb_object_agg(e.key, cronq.hook_json(e.value, vals)), '{}')
                            from jsonb_each(v) e)
        when 'array' then (select coalesce(jsonb_agg(cronq.hook_json(e.value, vals) order by e.n), '[]')
                           from jsonb_array_elements(v) with ordinality e(value, n))
        else v end;
end
$$;

-- A hook's payload for its job: its strings substituted (hook_json). An
-- exec job's command is left as written. An sql job's statement gets no
-- value spliced in: quoting cannot make that safe (a placeholder the
-- author wrote inside quotes or a comment would let an error message,
-- whose text other roles' data can shape, end the quote and write SQL
-- that runs as the author). Each placeholder becomes an expression that
-- reads its value from a setting, cronq.hook_job_id, cronq.hook_type,
-- cronq.hook_schedule, cronq.hook_status or cronq.hook_error (NULL when
-- empty), and a first statement, which cronq writes with quoted literals
-- where no author's text surrounds them, sets them all: the text put in
-- the author's statement is cronq's own, whatever the values. The session
-- is discarded after the job, as any sql job's. A payload without a
-- placeholder is taken as it is.
create or replace function cronq.hook_payload(spec jsonb, vals text[]) returns jsonb
language sql immutable
begin atomic
    select case
        when coalesce((spec -> 'payload')::text, '') !~ '\{(job_id|type|schedule|status|error)\}'
            then coalesce(spec -> 'payload', '{}')
        when spec ->> 'type' = 'sql' and jsonb_typeof(spec -> 'payload' -> 'sql') = 'string'
            then jsonb_set(cronq.hook_json(spec -> 'payload', vals), '{sql}', to_jsonb(
                case when spec -> 'payload' ->> 'sql' !~ '\{(job_id|type|schedule|status|error)\}'
                     then spec -> 'payload' ->> 'sql'
                     else 'select pg_catalog.set_config(''cronq.hook_job_id'', '
                          || quote_literal(coalesce(vals[1], '')) || ', false), '
                          || 'pg_catalog.set_config(''cronq.hook_type'', '
                          || quote_literal(coalesce(vals[2], '')) || ', false), '
                          || 'pg_catalog.set_config(''cronq.hook_schedule'', '
                          || quote_literal(coalesce(vals[3], '')) || ', false), '
                          || 'pg_catalog.set_config(''cronq.hook_status'', '
                          || quote_literal(coalesce(vals[4], '')) || ', false), '
                          || 'pg_catalog.set_config(''cronq.hook_error'', '
                          || quote_literal(coalesce(vals[5], '')) || ', false);' || E'\n'
                          || regexp_replace(spec -> 'payload' ->> 'sql',
                                            '\{(job_id|type|schedule|status|error)\}',
                                            'nullif(pg_catalog.current_setting(''cronq.hook_\1'', true), '''')',
                                            'g')
                     end))
        when spec ->> 'type' = 'exec' and spec -> 'payload' ? 'command'
            then jsonb_set(cronq.hook_json(spec -> 'payload', vals), '{command}',
                           spec -> 'payload' -> 'command')
        else cronq.hook_json(spec -> 'payload', vals)
        end;
end;

-- The hooks of a batch of outcomes (the runner's outcome statements call
-- it, in the statement that records them, for the jobs with hooks that
-- ended succeeded, failed or dead): per job its events (success, and
-- recover after a failed attempt of its own or a failed or dead previous
-- job of its schedule; failure; failure and dead), each hook's job in one
-- insert: type and payload (hook_payload), queue (the job's by default),
-- priority, attempts, timeout, key notify:JOB:ATTEMPT:EVENT, the job's
-- author. A key already taken means the event's job exists: nothing more.
-- A hook the database would refuse now (its author lost a grant; a
-- substituted value broke a payload rule: the checks of jobs_guard, made
-- first) becomes a permanent fail job saying so, never a failed outcome.
-- Runs as the owner: the hook's job is the author's whoever runs the
-- runner. Returns how many jobs it wrote.
create or replace function cronq.fire_hooks(p_ids bigint[], p_statuses text[], p_attempts integer[],
                                            p_errors text[])
returns bigint
language sql volatile security definer set search_path = pg_catalog, pg_temp
begin atomic
    with o as (
        select o.id, o.status, o.attempt, o.error, ev.event
        from unnest(p_ids, p_statuses, p_attempts, p_errors) as o(id, status, attempt, error)
        cross join lateral unnest(case o.status when 'succeeded' then array['success', 'recover']
                                                when 'failed' then array['failure']
                                                when 'dead' then array['failure', 'dead'] end)
            as ev(event)
    ), e as (
        select o.id, o.status, o.attempt, o.error, o.event, j.hooks -> ('on_' || o.event) as spec,
               j.type, j.schedule, j.queue, j.enqueued_by
        from o join cronq.jobs j on j.id = o.id
        where j.hooks ? ('on_' || o.event)
          -- the author's own jobs of that schedule's name: a name is reused
          -- once its author drops it, and another role's outcome must not
          -- fire this one's hook
          and (o.event <> 'recover' or o.attempt > 1
               or (select p.status from cronq.jobs p
                   where p.schedule = j.schedule and p.id < j.id and p.enqueued_by = j.enqueued_by
                     and p.status in ('succeeded', 'failed', 'dead')
                   order by p.id desc limit 1) in ('failed', 'dead'))
    ), p as materialized (
        -- each once (an inlined CTE would compute them at every use); a
        -- payload whose placeholders would take it past 1 MiB is not built
        -- (150,000 placeholders in a payload of 1 MiB): nothing here may
        -- fail the statement that records the outcomes
        select e.*, case
            when octet_length(coalesce((e.spec -> 'payload')::text, ''))
                 + regexp_count(coalesce((e.spec -> 'payload')::text, ''),
                                '\{(job_id|type|schedule|status|error)\}')
                   * (coalesce(octet_length(left(e.error, 2000)), 0) + 256) <= 1048576
            then case when coalesce((e.spec -> 'payload')::text, '')
                           !~ '\{(job_id|type|schedule|status|error)\}'
                      then coalesce(e.spec -> 'payload', '{}')  -- no call for the common case
                      else cronq.hook_payload(e.spec, array[e.id::text, e.type, e.schedule,
                                                            e.status, left(e.error, 2000)]) end
            end as payload
        from e
    ), v as materialized (
        select p.*, case
            when p.payload is null then 'its payload would pass 1 MiB once its placeholders are replaced'
            else coalesce(cronq.payload_error(p.spec ->> 'type', p.payload),
                          cronq.task_permission_error(p.spec ->> 'type', p.enqueued_by)) end as why
        from p
    ), ins as (
        insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                                idempotency_key, enqueued_by)
        select case when v.why is null then v.spec ->> 'type' else 'fail' end,
               case when v.why is null then v.payload
                    else jsonb_build_object('message',
                             format('hook on_%s of job %s could not be enqueued: %s', v.event, v.id,
                                    left(v.why, 500)),
                             'code', 'hook_refused', 'permanent', true) end,
               case when v.why is null then coalesce(v.spec ->> 'queue', v.queue) else v.queue end,
               case when v.why is null then (v.spec ->> 'priority')::integer end,
               case when v.why is null then (v.spec ->> 'max_attempts')::integer end,
               case when v.why is null then (v.spec ->> 'timeout')::bigint * interval '1 second' end,
               'notify:' || v.id || ':' || v.attempt || ':' || v.event, v.enqueued_by
        from v
        order by v.id, v.event
        on conflict (idempotency_key) where idempotency_key is not null do nothing
        returning 1
    )
    select count(*) from ins;
end;
revoke execute on function cronq.fire_hooks(bigint[], text[], integer[], text[]) from public;

-- A new job's hooks, checked as jobs of its author (after jobs_guard has
-- settled the author). No SET clause and every name qualified: see
-- hooks_error. A job made by a hook carries none.
create or replace function cronq.jobs_hooks() returns trigger
language plpgsql as $$
declare
    msg pg_catalog.text;
begin
    if pg_catalog.starts_with(new.idempotency_key, 'notify:') then
        new.hooks := null;
        return new;
    end if;
    msg := cronq.hooks_error(new.hooks);
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.hooks_permission_error(new.hooks, new.enqueued_by);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
    if new.hooks operator(pg_catalog.=) '{}'::pg_catalog.jsonb then
        new.hooks := null;
    end if;
    return new;
end
$$;
drop trigger if exists jobs_hooks on cronq.jobs;
create trigger jobs_hooks before insert on cronq.jobs for each row
    when (new.hooks is not null)
    execute function cronq.jobs_hooks();

-- A new job's dependencies (before insert, after jobs_guard has settled
-- its author). Runs as the owner, to note the job among its
-- parents' dependants; so it checks the author itself: a parent must be a
-- job of the same author, written before this one.
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
    if cardinality(wanted) > 1000000 then
        raise exception 'a job may depend on at most 1000000 jobs' using errcode = '22023';
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
drop trigger if exists jobs_plan on cronq.jobs;
create trigger jobs_plan before insert on cronq.jobs for each row
    when (new.depends_on is not null or new.dependants is not null or new.waiting_for is not null)
    execute function cronq.jobs_plan();

-- Blocked jobs whose parent's outcome jobs_settle could not apply: another
-- transaction held them locked. Each wake settles them from their parents
-- (lib/queue/settle.sql). The runner's alone: no role has a grant on it.
create table if not exists cronq.settle_later (
    job_id bigint primary key
);

-- After a job's status changes, its dependants, in the same statement
-- (hooks are the outcome statements' own: fire_hooks). Runs as the
-- owner: a dependant is the author's job, kept as the author cannot.
create or replace function cronq.jobs_settle() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
    wanted bigint[];
    parents bigint[];
    held bigint[];
begin
    if new.dependants is not null then
        -- Dependants are a role's own rows, which it may hold locked (select
        -- ... for update, an open cancel): the statement recording an
        -- outcome, and the rescue, must never wait for them (a role kept
        -- every runner from recording and rescuing anything). Those held
        -- are left in cronq.settle_later: each wake settles them again from
        -- their parents (lib/queue/settle.sql).
        if new.status in ('dead', 'cancelled') then
            -- Every blocked job down the chain in one statement: a trigger
            -- per level nested as deep as the chain, and a chain of a few
            -- hundred jobs exhausted the stack (stack depth limit exceeded)
            -- in the statement recording the outcome, and in every rescue
            -- after it. The dependants' own jobs_settle then finds nothing
            -- left blocked below them.
            with recursive d(id, parent) as (
                select c.id, new.id from cronq.jobs c
                where c.id = any(new.dependants) and c.status = 'blocked'
                union
                select c.id, d.id
                from d join cronq.jobs p on p.id = d.id
                join cronq.jobs c on c.id = any(p.dependants) and c.status = 'blocked'
            )
            select array_agg(one.id order by one.id), array_agg(one.parent order by one.id)
            into wanted, parents
            from (select distinct on (d.id) d.id, d.parent from d order by d.id, d.parent) one;
        else
            wanted := array(select c.id from cronq.jobs c
                            where c.id = any(new.dependants) and c.status = 'blocked'
                            order by c.id);
        end if;
        if coalesce(cardinality(wanted), 0) = 0 then
            return null;
        end if;
        held := array(select c.id from cronq.jobs c where c.id = any(wanted) and c.status = 'blocked'
                      order by c.id for no key update skip locked);
        if cardinality(held) < cardinality(wanted) then
            -- In id order: two runners noting the same jobs never deadlock.
            insert into cronq.settle_later (job_id)
            select w from unnest(wanted) w where w <> all(held) order by w
            on conflict do nothing;
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
            update cronq.jobs c
            set status = 'cancelled', error_code = 'dependency_failed',
                last_error = format('job %s, which it depends on, ended %s', u.parent,
                                    case when u.parent = new.id then new.status else 'cancelled' end),
                finished_at = now(), updated_at = now()
            from unnest(wanted, parents) u(id, parent)
            where c.id = u.id and u.id = any(held) and c.status = 'blocked';
        end if;
    end if;
    return null;
end
$$;
drop trigger if exists jobs_settle on cronq.jobs;
create trigger jobs_settle after update of status on cronq.jobs for each row
    when (old.status is distinct from new.status and new.dependants is not null
          and (new.status in ('succeeded', 'dead', 'cancelled') or old.status = 'succeeded'))
    execute function cronq.jobs_settle();

-- A dependant put back to queued by a retry waits again for those of its
-- parents that have not succeeded (after jobs_transition_guard, which
-- checks the retry as such). A parent gone (purged) counts as succeeded:
-- a job is purged only when finished, and a dead or cancelled parent
-- would have cancelled it.
create or replace function cronq.jobs_wait() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.waiting_for := (select count(*) from cronq.jobs p
                        where p.id = any(new.depends_on) and p.status <> 'succeeded');
    if new.waiting_for > 0 then
        new.status := 'blocked';
    end if;
    return new;
end
$$;
drop trigger if exists jobs_wait on cronq.jobs;
create trigger jobs_wait before update of status on cronq.jobs for each row
    when (new.status = 'queued' and old.status in ('succeeded', 'failed', 'dead', 'cancelled')
          and new.depends_on is not null)
    execute function cronq.jobs_wait();

-- Hooks and dependencies are fixed when a job is written: nobody under
-- row-level security changes them after (an admin who added an sql hook to
-- an application's job would have its SQL run as the application).
create or replace function cronq.jobs_fixed() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    raise exception 'job %: its hooks and dependencies are fixed when it is enqueued', old.id
        using errcode = '42501';
end
$$;
drop trigger if exists jobs_fixed on cronq.jobs;
create trigger jobs_fixed before update of hooks, depends_on, dependants, waiting_for on cronq.jobs
    for each row
    when (pg_catalog.row_security_active('cronq.jobs'::pg_catalog.regclass)
          and (old.hooks, old.depends_on, old.dependants, old.waiting_for)
              is distinct from (new.hooks, new.depends_on, new.dependants, new.waiting_for))
    execute function cronq.jobs_fixed();

-- A schedule's hooks are part of what its jobs do, and run as its author:
-- as 0015's guard, and a role that is not the schedule's author (an
-- admin) may not change its hooks (its author's payload would run with
-- the editor's rights, or the editor's hooks with the author's), and one
-- that takes the schedule over by changing its type or payload drops the
-- hooks it did not write (the previous author's SQL would run as the
-- editor). The owner and superusers are trusted as before.
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
    if tg_op = 'INSERT' or (new.cron, new.timezone, new.anchor, new.spread)
                            is distinct from (old.cron, old.timezone, old.anchor, old.spread) then
        msg := coalesce(cronq.cron_error(new.cron), cronq.zone_error(new.timezone));
        if msg is null and new.anchor is not null and not cronq.is_every(new.cron) then
            msg := format('an anchor applies only to @every expressions, not to "%s"', left(new.cron, 64));
        end if;
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
drop trigger if exists schedules_guard on cronq.schedules;
create trigger schedules_guard
    before insert or update of name, cron, timezone, type, payload, queue, priority, max_attempts,
        timeout, enabled, catchup, overlap, created_by, created_at, updated_at, anchor, spread, hooks
    on cronq.schedules for each row execute function cronq.schedules_guard();

-- A schedule's hooks, checked against its author (after schedules_guard;
-- no SET clause, every name qualified: see hooks_error).
create or replace function cronq.schedules_hooks() returns trigger
language plpgsql as $$
declare
    msg pg_catalog.text := cronq.hooks_error(new.hooks);
begin
    if msg is not null then
        raise exception '%', msg using errcode = '22023';
    end if;
    msg := cronq.hooks_permission_error(new.hooks, new.created_by);
    if msg is not null then
        raise exception '%', msg using errcode = '42501';
    end if;
    if new.hooks operator(pg_catalog.=) '{}'::pg_catalog.jsonb then
        new.hooks := null;
    end if;
    return new;
end
$$;
drop trigger if exists schedules_hooks on cronq.schedules;
create trigger schedules_hooks before insert or update of hooks, type, created_by on cronq.schedules
    for each row when (new.hooks is not null)
    execute function cronq.schedules_hooks();

-- Blocked jobs wait; a role leaves its own job blocked as it leaves it
-- queued (an enqueue, a retry).
drop policy if exists jobs_own on cronq.jobs;
create policy jobs_own on cronq.jobs
    using ((select cronq.is_admin()) or enqueued_by = current_user::text)
    with check ((select cronq.is_admin())
                or (enqueued_by = current_user::text
                    and (status in ('queued', 'cancelled', 'blocked')
                         or (status = 'running' and cancel_requested))));

-- A blocked job is cancelled like a queued one (as 0013's guard, and
-- blocked).
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
    elsif old.status in ('queued', 'failed', 'blocked') and new.status = 'cancelled'
          and not new.cancel_requested and new.finished_at is not null then
        return new;
    -- a running job's cancellation, carried out by its worker
    elsif old.status = 'running' and new.status = 'running' and new.cancel_requested
          and new.finished_at is not distinct from old.finished_at then
        return new;
    -- a waiting job with a unique key replaced
    elsif old.status in ('queued', 'failed') and new.status = 'queued'
          and old.unique_key is not null and new.unique_key = old.unique_key
          and not new.cancel_requested and new.finished_at is null
          and (new.type, new.queue, new.priority, new.max_attempts, new.timeout,
               new.idempotency_key, new.enqueued_by)
              is not distinct from (old.type, old.queue, old.priority, old.max_attempts,
                                    old.timeout, old.idempotency_key, old.enqueued_by) then
        return new;
    end if;
    raise exception 'job %: a job is changed only by cancelling or retrying it', old.id
        using errcode = '42501', hint = 'Use cronq.cancel(id), cronq.retry(id) or the CLI.';
end
$$;

-- Cancel: as 0008's, and blocked jobs at once.
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
        from req where j.id = req.id and j.status in ('queued', 'failed', 'running', 'blocked')
        returning j.id, j.status)
    select req.id, coalesce(upd.status, j.status), upd.id is not null
    from req left join upd on upd.id = req.id left join cronq.jobs j on j.id = req.id;
end;

-- enqueue and enqueue_job gain hooks and depends_on at the end (calls by
-- position or name keep working). The old functions go (enqueue first:
-- its body names enqueue_job).
drop function if exists cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval,
                                      text, text, timestamptz, text, boolean, text);
drop function if exists cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval,
                                          text, text, timestamptz, text, boolean, text);

-- As 0014's, and hooks and depends_on (NULL: none).
create or replace function cronq.enqueue_job(
    type text,
    payload jsonb default '{}',
    run_at timestamptz default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    key text default null,
    limit_key text default null,
    expires_at timestamptz default null,
    unique_key text default null,
    replace boolean default false,
    history text default null,
    hooks jsonb default null,
    depends_on bigint[] default null,
    out id bigint,
    out created boolean,
    out note text)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    held text;
    held_type text;
    why text := cronq.limit_key_error(limit_key);
begin
    if limit_key is not null and why is not null then
        raise exception 'limit key: %', why using errcode = '22023';
    end if;
    why := cronq.history_error(history);
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    created := false;
    for attempt in 1..10 loop
        if unique_key is null then
            insert into cronq.jobs as j (type, payload, run_at, queue, priority,
                                         max_attempts, timeout, idempotency_key, limit_key,
                                         expires_at, history, hooks, depends_on)
            values (type, payload, run_at, queue, priority, max_attempts, timeout, key, limit_key,
                    expires_at, coalesce(history, 'all'), hooks, depends_on)
            on conflict (idempotency_key) where idempotency_key is not null do nothing
            returning j.id into id;
        else
            begin
                insert into cronq.jobs as j (type, payload, run_at, queue, priority, max_attempts,
                                             timeout, idempotency_key, limit_key, expires_at,
                                             unique_key, history, hooks, depends_on)
                values (type, payload, run_at, queue, priority, max_attempts, timeout, key,
                        limit_key, expires_at, unique_key, coalesce(history, 'all'), hooks,
                        depends_on)
                on conflict (idempotency_key) where idempotency_key is not null do nothing
                returning j.id into id;
            exception when unique_violation then
                -- jobs_unique_active: a holder committed while we inserted.
                -- Anything else is no business of ours.
                get stacked diagnostics held = constraint_name;
                if held is distinct from 'jobs_unique_active' then
                    raise;
                end if;
                continue;
            end;
        end if;
        if id is not null then
            created := true;
            return;
        end if;
        -- A new statement, a new snapshot: sees a conflicting row committed
        -- by another session while our insert waited for it.
        if key is not null then
            select j.id into id from cronq.jobs j where j.idempotency_key = key;
            if id is not null then
                note := 'key';
                return;
            end if;
        end if;
        if unique_key is not null then
            select j.id, j.status, j.type into id, held, held_type from cronq.jobs j
            where j.unique_key = unique_key and j.status in ('queued', 'failed', 'running');
            if id is not null and replace and held in ('queued', 'failed') then
                if held_type <> type then
                    raise exception 'cannot replace job % of type "%" with a job of type "%"',
                        id, held_type, type using errcode = '22023',
                        hint = 'A replace changes a job''s payload, run time and deadline, not its type.';
                end if;
                update cronq.jobs j
                set payload = coalesce(enqueue_job.payload, '{}'),
                    run_at = coalesce(enqueue_job.run_at, now()),
                    expires_at = enqueue_job.expires_at, status = 'queued', updated_at = now()
                where j.id = id and j.status in ('queued', 'failed');
                if found then
                    note := 'replaced';
                    return;
                end if;
                continue;   -- claimed or cancelled meanwhile: look again
            end if;
            if id is not null then
                note := held;
                return;
            end if;
            continue;   -- finished meanwhile: the key is free
        end if;
        raise exception 'idempotency key "%" is held by another role''s job', left(key, 200)
            using errcode = '23505',
                  hint = 'Idempotency keys are shared by every role: choose one that names your application.';
    end loop;
    raise exception 'could not enqueue with unique key "%": its jobs kept changing', left(unique_key, 200)
        using errcode = '40001', hint = 'Try again.';
end
$$;

-- The SQL API: select cronq.enqueue('noop', depends_on => array[41, 42],
-- hooks => '{"on_dead": {"type": "exec", "payload": {"command": "page"}}}').
create or replace function cronq.enqueue(
    type text,
    payload jsonb default '{}',
    run_at timestamptz default null,
    queue text default null,
    priority integer default null,
    max_attempts integer default null,
    timeout interval default null,
    key text default null,
    limit_key text default null,
    expires_at timestamptz default null,
    unique_key text default null,
    replace boolean default false,
    history text default null,
    hooks jsonb default null,
    depends_on bigint[] default null)
returns bigint
language sql volatile
begin atomic
    select e.id from cronq.enqueue_job(type, payload, run_at, queue, priority, max_attempts,
                                       timeout, key, limit_key, expires_at, unique_key,
                                       replace, history, hooks, depends_on) e;
end;

-- A schedule's hooks reach its jobs: materialisation and backfill
-- --schedule (as 0016's, and hooks).
create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[],
                                                     p_deadline boolean)
returns table (schedule text, job_id bigint, fire_at timestamptz)
language sql volatile
begin atomic
    insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                            idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                            expires_at, history, hooks)
    select s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout,
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end,
           s.history, s.hooks
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    returning cronq.jobs.schedule, cronq.jobs.id, cronq.jobs.scheduled_for;
end;

-- A run by hand carries the schedule's hooks too (as 0016's, and hooks).
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
                                 expires_at, history, hooks)
    values (s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout, k, s.name, t, now(),
            s.created_by, t + s.start_deadline, s.history, s.hooks)
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

-- cronq.schedule gains hooks at the end (NULL keeps the schedule's, {}
-- removes them).
drop function if exists cronq.schedule(text, text, text, jsonb, text, text, integer, integer,
                                       interval, boolean, text, text, interval, text, integer,
                                       timestamptz, interval);

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
    overlap text default null,
    start_deadline interval default null,
    history text default null,
    keep integer default null,
    anchor timestamptz default null,
    spread interval default null,
    hooks jsonb default null)
returns text
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    why text := cronq.history_error(history);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if keep < 1 or keep > 10000 then
        raise exception 'invalid keep %: must be 1 to 10000', keep using errcode = '22023';
    end if;
    begin
        insert into cronq.schedules as s (name, cron, timezone, type, payload, anchor, spread)
        values (name, cron, coalesce(timezone, 'UTC'), type, coalesce(payload, '{}'), anchor,
                nullif(spread, interval '0'));
    exception when unique_violation then
        -- An anchor belongs to an @every: a schedule that is one no more drops it.
        update cronq.schedules s
        set cron = schedule.cron, timezone = coalesce(schedule.timezone, s.timezone),
            type = schedule.type, payload = coalesce(schedule.payload, '{}'),
            anchor = case when cronq.is_every(schedule.cron)
                          then coalesce(schedule.anchor, s.anchor) end,
            spread = case when schedule.spread = interval '0' then null
                          else coalesce(schedule.spread, s.spread) end
        where s.name = schedule.name;
        if not found then
            raise exception 'schedule "%" belongs to another role', name using errcode = '42501',
                hint = 'Schedule names are shared by every role: choose another name.';
        end if;
    end;
    if coalesce(queue, priority::text, max_attempts::text, timeout::text, enabled::text,
                catchup, overlap, start_deadline::text, history, keep::text, hooks::text) is not null then
        update cronq.schedules s
        set queue = coalesce(schedule.queue, s.queue),
            priority = coalesce(schedule.priority, s.priority),
            max_attempts = coalesce(schedule.max_attempts, s.max_attempts),
            timeout = coalesce(schedule.timeout, s.timeout),
            enabled = coalesce(schedule.enabled, s.enabled),
            catchup = coalesce(schedule.catchup, s.catchup),
            overlap = coalesce(schedule.overlap, s.overlap),
            start_deadline = coalesce(schedule.start_deadline, s.start_deadline),
            history = coalesce(schedule.history, s.history),
            keep = coalesce(schedule.keep, s.keep),
            hooks = case when schedule.hooks = '{}' then null
                         else coalesce(schedule.hooks, s.hooks) end
        where s.name = schedule.name;
    end if;
    return name;
end
$$;
