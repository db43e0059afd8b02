-- 0022_bounded_settle.sql — what one author's jobs make the runners' shared
-- statements do stays in proportion to those jobs: settling a dependency
-- graph, an on_recover hook, and the key sweep's lock at enqueue.
--
-- 1. jobs_settle walked a failed job's dependants as (job, parent) pairs:
--    a job with many parents was reached once per parent on every level,
--    and the cancellation filtered each row against the whole array of
--    the rest (30,000 jobs of one author, built as 200 x 100 dependants
--    under 10 jobs each depending on all of them, made the statement
--    recording a failure run for minutes, and every wake after it fail).
--    Now the walk visits each job once, the parent it names is found by a
--    join, and a settle with nothing blocked below (the dependants' own,
--    which the walk covered) returns at once.
-- 2. fire_hooks' on_recover looked for the previous job of the job's
--    schedule even for a job of none, by walking back through every older
--    job of every role (0.24 s an outcome at 2,000,000 jobs, inside the
--    statement recording every author's outcomes); now none is looked for,
--    and a schedule's look back is an index probe (jobs_schedule_ended:
--    the author's finished or failed jobs of the schedule).
-- 3. expire_holder, which any enqueue of a held unique key calls, waited
--    for a lock on a late holder, a row its author may keep locked from an
--    open transaction: another role's enqueue of the same key then waited
--    as long. It waits 2 s at most (the sweep's and other enqueues' locks
--    are brief); a holder locked longer counts as still holding the key.
-- 4. hooks_error refuses an sql hook with placeholders and "transaction":
--    false, which could never run: the placeholders' values are set by a
--    statement put before the hook's SQL, and such SQL runs alone.
--
-- Nothing a binary reads changes.
-- compatible-from: 10
--
-- Every statement may run again.

create index if not exists jobs_schedule_ended on cronq.jobs (schedule, enqueued_by, id)
    where schedule is not null and status in ('succeeded', 'failed', 'dead');

create or replace function cronq.jobs_settle() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
    wanted bigint[];
    held bigint[];
begin
    -- Nothing blocked below it, nothing to do: so a dependant the walk
    -- below cancelled (its trigger nested in the walk's update) returns at
    -- once, the walk having reached everything below it.
    if not exists (select 1 from cronq.jobs c where c.id = any(new.dependants) and c.status = 'blocked') then
        return null;
    end if;
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
            -- after it. Each job once (a union of ids: a job of many
            -- parents is not walked again from each), so the work is the
            -- graph's edges; the dependants' own jobs_settle return at once.
            with recursive d(id) as (
                select c.id from cronq.jobs c
                where c.id = any(new.dependants) and c.status = 'blocked'
                union
                select c.id
                from d join cronq.jobs p on p.id = d.id
                join cronq.jobs c on c.id = any(p.dependants) and c.status = 'blocked'
            )
            select array_agg(d.id order by d.id) into wanted from d;
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
            select l.w from (select unnest(wanted) except select unnest(held)) l(w) order by l.w;
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
            -- Each names the first of its parents that ended: this job, or
            -- one the walk cancels (found by a join, not by searching the
            -- whole array for each parent).
            update cronq.jobs c
            set status = 'cancelled', error_code = 'dependency_failed',
                last_error = format('job %s, which it depends on, ended %s', u.parent,
                                    case when u.parent = new.id then new.status else 'cancelled' end),
                finished_at = now(), updated_at = now()
            from (select h.id, min(x.parent) as parent
                  from unnest(held) h(id)
                  join cronq.jobs j on j.id = h.id
                  cross join lateral unnest(j.depends_on) x(parent)
                  where x.parent = new.id or x.parent in (select unnest(wanted))
                  group by h.id) u
            where c.id = u.id and c.status = 'blocked';
        end if;
    end if;
    return null;
end
$$;

-- As 0013's, with the wait for the holder's lock bounded: 2 s in steps
-- of 50 ms, after which a holder still locked counts as holding the key.
create or replace function cronq.expire_holder(p_key text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
declare
    h bigint;
    locked boolean := false;
begin
    select j.id into h from cronq.jobs j
    where j.unique_key = p_key and j.status in ('queued', 'failed', 'running')
      and j.status <> 'running' and j.expires_at <= now();
    if h is null then
        return;
    end if;
    for i in 1..40 loop
        locked := exists (select 1 from cronq.jobs j where j.id = h for no key update skip locked);
        exit when locked;
        perform pg_catalog.pg_sleep(0.05);
    end loop;
    if locked then
        perform cronq.expire_jobs('enqueue', array[h]);
    end if;
end
$$;
revoke execute on function cronq.expire_holder(text) from public;

-- As 0020's, the look back of on_recover bounded (point 2 above).
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
          -- (a job of no schedule has no previous one, and the look back
          -- is one probe of jobs_schedule_ended, not a walk back through
          -- every older job of every role)
          and (o.event <> 'recover' or o.attempt > 1
               or (j.schedule is not null
                   and (select p.status from cronq.jobs p
                        where p.schedule = j.schedule and p.id < j.id and p.enqueued_by = j.enqueued_by
                          and p.status in ('succeeded', 'failed', 'dead')
                        order by p.schedule desc, p.enqueued_by desc, p.id desc limit 1)
                       in ('failed', 'dead')))
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

-- As 0017's, with point 4 above.
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
                when e.value ->> 'type' = 'sql' and e.value -> 'payload' -> 'transaction' = 'false'
                     and e.value -> 'payload' ->> 'sql' ~ '\{(job_id|type|schedule|status|error)\}' then
                    format('%s: an sql hook with placeholders must run in a transaction: its values are set by a statement before the SQL, and "transaction": false runs one statement', e.key)
                else e.key || ': ' || cronq.payload_error(e.value ->> 'type',
                                                           coalesce(e.value -> 'payload', '{}'))
                end as msg
            from jsonb_each(p_hooks) e) x
          where x.msg is not null order by x.key limit 1)
        end;
end;
