-- 0020_names_every.sql — printable queue names; "@every" reads every
-- duration; hooks' jobs written at the cost of an insert.
--
-- Queue names are printable text (SPEC 9): a name with a control character
-- (a newline, an escape, a C1 code) would split a table row or a log line
-- or drive the operator's terminal. Schedule names and limit and pause keys
-- were already checked; hooks' queues too (0017). A trigger, not a CHECK:
-- a CHECK would have to scan the jobs table, and an old row holding such a
-- name would then fail every update of it (its claim, its outcome), which
-- would lose the job. The trigger looks only at a name being written: each
-- new row, and an update that changes the queue. Its WHEN is evaluated by
-- the executor; the function is called only to refuse.
--
-- "@every D" takes what every other duration takes (lib/util/duration.c,
-- cronq.is_duration in 0019): decimals and unit words, "@every 1.5h",
-- "@every 1 hour 30 minutes" (the rest of the expression, whitespace runs
-- read as one space). lib/time/cron.c reads the same grammar.
--
-- Hooks' jobs (issue 22's benchmark: a drain whose every job has an
-- on_success hook must reach half the plain drain's rate). fire_hooks
-- checked each hook job as jobs_guard would (payload rules, the author's
-- rights) and then jobs_guard checked it again, with the key lookup that
-- its ON CONFLICT makes anyway: a third of the hook's cost. Its jobs now
-- carry hook_of, the job whose outcome fired them (shown by show), and
-- jobs_guard's WHEN lets such a row through unchecked only when the owner
-- or a superuser writes it, which is fire_hooks (security definer) and
-- roles that may disable the trigger anyway. From any other role a row
-- with hook_of goes through jobs_guard, which refuses it: a cronq_user has
-- no grant on the column, and a role granted the whole table cannot use
-- the mark to skip the checks or to name another author. fire_hooks now
-- writes the defaults jobs_guard filled in. Its join found the batch's
-- jobs by hashing the whole table (the planner guesses 10 ids for an
-- array): it looks them up by id.
--
-- A binary before this schema refuses the new "@every" forms on its side,
-- and writes names the trigger refuses only where it let them through:
-- compatible-from: 10
--
-- Every statement may run again.

create or replace function cronq.queue_refused() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    raise exception 'queue name must be printable text without control characters'
        using errcode = 'check_violation';
end
$$;

create or replace trigger jobs_queue_name before insert on cronq.jobs
    for each row when (new.queue ~ '[[:cntrl:]]') execute function cronq.queue_refused();
create or replace trigger jobs_queue_rename before update of queue on cronq.jobs
    for each row when (new.queue is distinct from old.queue and new.queue ~ '[[:cntrl:]]')
    execute function cronq.queue_refused();
create or replace trigger schedules_queue_name before insert on cronq.schedules
    for each row when (new.queue ~ '[[:cntrl:]]') execute function cronq.queue_refused();
create or replace trigger schedules_queue_rename before update of queue on cronq.schedules
    for each row when (new.queue is distinct from old.queue and new.queue ~ '[[:cntrl:]]')
    execute function cronq.queue_refused();

-- The error of "@every" followed by the fields d (split on whitespace), as
-- lib/time/cron.c words it; null when they make a period of whole seconds,
-- 1 minute to 100 years. The C names the fault more precisely where the
-- duration cannot be read; here it is "invalid duration".
create or replace function cronq.every_error(d text[]) returns text
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
    num constant text := '([0-9]+(?:\.[0-9]+)?)';
    t text := array_to_string(d, ' ');
    m text[];
    ms numeric;
begin
    if t is null or t = '' then
        return '@every needs a duration, such as @every 90m';
    end if;
    if length(t) >= 64 then
        return format('@every: invalid duration "%s"', left(t, 32));
    end if;
    m := regexp_match(t, '^(?:' || num || '|(?:' || num || ' ?(?:weeks|week|w))?'
                      || '(?: ?' || num || ' ?(?:days|day|d))?'
                      || '(?: ?' || num || ' ?(?:hours|hour|hrs|hr|h))?'
                      || '(?: ?' || num || ' ?(?:minutes|minute|mins|min|m))?'
                      || '(?: ?' || num || ' ?(?:seconds|second|secs|sec|s))?'
                      || '(?: ?' || num || ' ?(?:milliseconds|millisecond|msecs|msec|ms))?)$', 'i');
    if m is null then
        return format('@every: invalid duration "%s"', left(t, 32));
    end if;
    ms := coalesce(m[1]::numeric, 0) * 1000 + coalesce(m[2]::numeric, 0) * 604800000
        + coalesce(m[3]::numeric, 0) * 86400000 + coalesce(m[4]::numeric, 0) * 3600000
        + coalesce(m[5]::numeric, 0) * 60000 + coalesce(m[6]::numeric, 0) * 1000
        + coalesce(m[7]::numeric, 0);
    if ms > 100::numeric * 366 * 86400000 then
        return format('@every: duration "%s" is too long', left(t, 32));
    elsif ms % 1000 <> 0 then
        return format('@every: %s is not a whole number of seconds', left(t, 32));
    elsif ms < 60000 then
        return format('@every: %s is shorter than 1 minute', left(t, 32));
    end if;
    return null;
end
$$;

-- As 0015's, the duration of "@every" read by cronq.every_error.
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
    ms numeric;
begin
    if expr is null then
        return 'empty expression';
    end if;
    -- Not E'\v': a string escape PostgreSQL lacks, read as "v" (0008 split
    -- "nov" and "@every" there). The regular expression's own \v is right.
    f := regexp_split_to_array(btrim(expr, E' \t\n\r\f' || chr(11)), '[ \t\n\r\v\f]+');
    if f = array[''] then
        return 'empty expression';
    end if;
    if left(f[1], 1) = '@' then
        if lower(f[1]) = '@every' then
            return cronq.every_error(f[2:]);
        end if;
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

alter table cronq.jobs add column if not exists hook_of bigint;
comment on column cronq.jobs.hook_of is
    'the job whose outcome fired this hook''s job (cronq.fire_hooks); null for any other job';

create or replace function cronq.jobs_guard() returns trigger
language plpgsql as $$
declare
    privileged pg_catalog.bool;
    msg pg_catalog.text;
begin
    if tg_op operator(pg_catalog.=) 'INSERT' then
        -- The trigger's WHEN lets a row with hook_of through only from
        -- the owner or a superuser (fire_hooks): from anyone else it is a
        -- forgery of the mark that skips these checks.
        if new.hook_of is not null then
            raise exception 'hook_of is written by cronq alone (the jobs hooks enqueue)'
                using errcode = '42501';
        end if;
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


-- The insert trigger skips rows that fire_hooks wrote (see the header);
-- updates are checked as before.
drop trigger if exists jobs_guard on cronq.jobs;
create trigger jobs_guard before insert on cronq.jobs
    for each row when (new.hook_of is null or not cronq.may_act_for_others('cronq.jobs'::regclass))
    execute function cronq.jobs_guard();
create or replace trigger jobs_guard_update before update of type, payload, enqueued_by on cronq.jobs
    for each row execute function cronq.jobs_guard();

-- As 0017's, with hook_of, the defaults, the batch's jobs found by id, and
-- an outcome without an attempt number ignored.
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
        -- an attempt is numbered: a null one would make a null key, which
        -- no conflict stops (an admin calling this could fire a job's
        -- hooks again and again)
        where o.attempt >= 1
    ), e as (
        select o.id, o.status, o.attempt, o.error, o.event, j.hooks -> ('on_' || o.event) as spec,
               j.type, j.schedule, j.queue, j.enqueued_by
        -- the batch's jobs by their ids (an index scan): joined on o.id alone
        -- the planner, which guesses 10 ids, hashed the whole table
        from o join cronq.jobs j on j.id = o.id and j.id = any (p_ids)
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
                                idempotency_key, enqueued_by, run_at, hook_of)
        select case when v.why is null then v.spec ->> 'type' else 'fail' end,
               case when v.why is null then v.payload
                    else jsonb_build_object('message',
                             format('hook on_%s of job %s could not be enqueued: %s', v.event, v.id,
                                    left(v.why, 500)),
                             'code', 'hook_refused', 'permanent', true) end,
               case when v.why is null then coalesce(v.spec ->> 'queue', v.queue) else v.queue end,
               coalesce(case when v.why is null then (v.spec ->> 'priority')::integer end, 0),
               coalesce(case when v.why is null then (v.spec ->> 'max_attempts')::integer end, 10),
               coalesce(case when v.why is null then (v.spec ->> 'timeout')::bigint * interval '1 second' end,
                        interval '1 hour'),
               'notify:' || v.id || ':' || v.attempt || ':' || v.event, v.enqueued_by, now(), v.id
        from v
        order by v.id, v.event
        on conflict (idempotency_key) where idempotency_key is not null do nothing
        returning 1
    )
    select count(*) from ins;
end;

revoke execute on function cronq.fire_hooks(bigint[], text[], integer[], text[]) from public;
