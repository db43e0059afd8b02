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
-- call with jobs_guard's error, as before. It writes the defaults the
-- guard filled in, and marks its rows occurrence_checked; jobs_guard's
-- WHEN lets a marked row through unchecked only when the owner or a
-- superuser writes it. The mark is in the row, written by this insert
-- alone: a first cut kept it in a setting, which any role may set before
-- calling an owner's function that inserts jobs (run_schedule's trigger)
-- and so have that function's job written unchecked (helper-84). A role
-- may write the column (cronq_user is granted it, so that its backfill
-- goes through this function): its rows, and an admin's, are checked all
-- the same (the mark is the insert's word to the trigger, not a record
-- of who checked a row). The schedules checked are held (FOR SHARE) until
-- the insert has read them (helper-85: an admin's renames between the
-- check and the insert swapped an unchecked schedule in, where the
-- caller had not locked them). An occurrence whose key a job already has is not written, as
-- before (the guard returned no row for it): ON CONFLICT DO NOTHING on
-- the key's unique index, which also skips a key written since the
-- statement began, or twice in one call, where an anti-join on the
-- statement's snapshot raised a unique violation (helper-84).
--
-- Nothing a binary reads changes.
-- compatible-from: 25
--
-- Every statement may run again.

alter table cronq.jobs add column if not exists occurrence_checked boolean;

create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[],
                                                     p_deadline boolean)
returns table (schedule text, job_id bigint, fire_at timestamptz)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    trusted boolean := cronq.may_act_for_others('cronq.jobs'::regclass);
    bad record;
begin
    if trusted then
        -- The check and the insert are two statements, each with its
        -- snapshot: the schedules they read are held first, so that none
        -- changes (an admin's rename swapping an exec schedule in under a
        -- checked name, helper-85) between the two. The wake and a backfill
        -- hold them already (a stronger lock of the same transaction: no
        -- wait, nothing written).
        perform from cronq.schedules s where s.name = any(p_names) for share;
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
    end if;
    return query
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history, hooks, occurrence_checked)
    select s.type, coalesce(s.payload, '{}'), coalesce(s.queue, 'default'),
           coalesce(s.priority, 0), coalesce(s.max_attempts, 10),
           coalesce(s.timeout, interval '1 hour'),
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end,
           s.history, s.hooks, case when trusted then true end
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    -- a key a job already has: "already enqueued", no row (for a writer
    -- the guard checks, it skipped its own jobs' keys first and says
    -- another role's aloud)
    on conflict (idempotency_key) where idempotency_key is not null do nothing
    returning j.schedule, j.id, j.scheduled_for;
end
$$;

-- jobs_guard's insert trigger skips, as before, the rows fire_hooks wrote
-- (hook_of), and now those enqueue_occurrences checked; both only from
-- the owner or a superuser. Updates are checked as before.
drop trigger if exists jobs_guard on cronq.jobs;
create trigger jobs_guard before insert on cronq.jobs
    for each row when ((new.hook_of is null and new.occurrence_checked is not true)
                       or not cronq.may_act_for_others('cronq.jobs'::regclass))
    execute function cronq.jobs_guard();
