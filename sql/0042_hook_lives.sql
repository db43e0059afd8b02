-- 0042_hook_lives.sql — an operator's retry starts a new life of the job,
-- and its hooks fire again.
--
-- A hook's job has the key notify:JOB:ATTEMPT:EVENT, which makes it
-- once per event. But an operator's retry starts the attempts again from
-- 1 (SPEC: "attempts reset"), so the new life's events had the keys of
-- the old one's: a job dead after 3 attempts, retried and dead again
-- after 3, fired no on_dead the second time (nor on_failure for attempts
-- 1 to 3) while the first life's hook jobs were still there, and did once
-- they were purged. What the on-call person was told depended on purge.
--
-- Now cronq.jobs.earlier_attempts counts the attempts of the job's
-- earlier lives (null until a retry), kept by a trigger on any write that
-- lowers attempts but a give-back (the retry; no cronq_user may write the
-- column itself), and the key's ATTEMPT is the attempt's number over the
-- job's whole life:
-- earlier_attempts + attempts. A job never retried keeps the keys it had
-- (notify:812:3:dead); the third attempt after a retry of a job dead
-- after 3 is notify:812:6:dead.
--
-- Nothing a binary reads changes (fire_hooks is the server's).
-- compatible-from: 25
--
-- Every statement may run again.

-- (null for a job never retried, the common case: a null takes no room in
-- the row, which every claim and outcome writes again)
alter table cronq.jobs add column if not exists earlier_attempts bigint;
-- bounded, so that the key's arithmetic in fire_hooks cannot overflow (an
-- admin's write of a huge count would fail every outcome of the job, and
-- leave it running: helper-83)
alter table cronq.jobs drop constraint if exists jobs_earlier_attempts_check;
alter table cronq.jobs add constraint jobs_earlier_attempts_check
    check (earlier_attempts between 0 and 1000000000000);

-- The attempts a write takes away are the ended life's: added to the
-- count, so that earlier_attempts + attempts never goes back (a retry
-- adds the attempts it resets; an admin lowering attempts by hand, what
-- it lowers them by). But a job given back (a fair share's release, a
-- runner's stop or --max-runtime: running to queued, the attempt not
-- counted) lives on: its attempt was not one, and its number is the next
-- attempt's again (helper-83: counted, it shifted a job's keys by one
-- though it was never retried). A trigger's write to NEW needs no column
-- grant, so a role's retry (requeue_jobs, as the invoker) keeps the
-- count, and no cronq_user can set it: it has no grant on the column (an
-- admin may write it, as every column).
create or replace function cronq.jobs_lives() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.earlier_attempts := coalesce(old.earlier_attempts, 0) + (old.attempts - new.attempts);
    return new;
end
$$;

drop trigger if exists jobs_lives on cronq.jobs;
create trigger jobs_lives before update of attempts on cronq.jobs for each row
    when (new.attempts < old.attempts
          and not (old.status = 'running' and new.attempts = old.attempts - 1))
    execute function cronq.jobs_lives();

-- As 0022's, the key's ATTEMPT counted over the job's lives, and a
-- schedule's look back for on_recover only in the job's first life.
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
               j.type, j.schedule, j.queue, j.enqueued_by, j.earlier_attempts
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
          -- (the schedule's look back only for the first attempt of the
          -- job's first life: a retried job that had recovered would
          -- recover again, helper-83)
          and (o.event <> 'recover' or o.attempt > 1
               or (j.schedule is not null and coalesce(j.earlier_attempts, 0) = 0
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
               'notify:' || v.id || ':' || (coalesce(v.earlier_attempts, 0) + v.attempt) || ':' || v.event, v.enqueued_by, now(), v.id
        from v
        order by v.id, v.event
        on conflict (idempotency_key) where idempotency_key is not null do nothing
        returning 1
    )
    select count(*) from ins;
end;

revoke execute on function cronq.fire_hooks(bigint[], text[], integer[], text[]) from public;
