-- 0043_occurrences_checked.sql — a wake's occurrences are checked once
-- per statement, not once per job by jobs_guard.
--
-- Materialising 10,000 due schedules (issue 21's benchmark: at least
-- 20,000 occurrences a second) spent more than half of the jobs' insert
-- in jobs_guard, a PL/pgSQL trigger run for every row: the payload rules
-- and the author's right to the task (check_task, itself PL/pgSQL) and
-- the key lookup (key_taken, whose SET clause is applied and undone at
-- each call), ~35 µs a job of the ~100 µs a schedule took.
--
-- Now cronq.enqueue_occurrences, when the owner or a superuser calls it
-- (the wake's materialise(), security definer, or the owner's backfill),
-- checks its occurrences as jobs_guard would, in one statement: the
-- first that the payload rules or its author's rights refuse fails the
-- call with jobs_guard's error, as before; an occurrence whose key a job
-- already has is not written, as before (the guard returned no row for
-- it). It writes the defaults the guard filled in, and marks its insert
-- with a transaction's setting, cronq.occurrences_checked, reset as soon
-- as the insert is done; jobs_guard's WHEN lets a row through unchecked
-- only under that mark and only from the owner or a superuser, who may
-- disable the trigger anyway. Any other role may set the setting: its
-- rows are checked all the same (the guard's WHEN asks who writes), and
-- its backfill goes through the guard as before.
--
-- Nothing a binary reads changes.
-- compatible-from: 25
--
-- Every statement may run again.

create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[],
                                                     p_deadline boolean)
returns table (schedule text, job_id bigint, fire_at timestamptz)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    trusted boolean := cronq.may_act_for_others('cronq.jobs'::regclass);
    bad record;
begin
    if trusted then
        -- what jobs_guard would refuse first, in the order of the insert
        select s.name, cronq.payload_error(s.type, s.payload) as payload_msg,
               cronq.task_permission_error(s.type, s.created_by) as right_msg
        into bad
        from unnest(p_names, p_fires) as f(name, fire)
        join cronq.schedules s on s.name = f.name
        where cronq.payload_error(s.type, s.payload) is not null
           or cronq.task_permission_error(s.type, s.created_by) is not null
        order by f.fire
        limit 1;
        if found then
            if bad.payload_msg is not null then
                raise exception '%', bad.payload_msg using errcode = '22023';
            end if;
            raise exception '%', bad.right_msg using errcode = '42501';
        end if;
        perform pg_catalog.set_config('cronq.occurrences_checked', 'on', true);
    end if;
    return query
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history, hooks)
    select s.type, coalesce(s.payload, '{}'), coalesce(s.queue, 'default'),
           coalesce(s.priority, 0), coalesce(s.max_attempts, 10),
           coalesce(s.timeout, interval '1 hour'), k.key, s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end,
           s.history, s.hooks
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    cross join lateral (
        select 'schedule:' || s.name || ':'
                   || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as key) k
    -- a key a job already has: "already enqueued", no row (as the guard
    -- did for its writer's own jobs; another role's job holding it is
    -- the guard's to say, for a writer it checks)
    where not exists (select 1 from cronq.jobs h where h.idempotency_key = k.key)
    order by f.fire
    returning j.schedule, j.id, j.scheduled_for;
    if trusted then
        perform pg_catalog.set_config('cronq.occurrences_checked', '', true);
    end if;
end
$$;

-- jobs_guard's insert trigger skips, as before, the rows fire_hooks wrote
-- (hook_of), and now those enqueue_occurrences checked; both only from
-- the owner or a superuser. Updates are checked as before.
drop trigger if exists jobs_guard on cronq.jobs;
create trigger jobs_guard before insert on cronq.jobs
    for each row when ((new.hook_of is null
                        and pg_catalog.current_setting('cronq.occurrences_checked', true)
                            is distinct from 'on')
                       or not cronq.may_act_for_others('cronq.jobs'::regclass))
    execute function cronq.jobs_guard();
