-- 0013_deadlines_unique.sql — flow control, deadlines and unique keys.
--
-- Deadlines: cronq.jobs.expires_at, set at enqueue (--expires,
-- --expires-at, expires_at in JSONL and SQL) or by a schedule's
-- start_deadline (each occurrence's job expires at its fire time plus
-- it; backfills set none). The claim never takes a job past its
-- deadline; each wake cancels those waiting ones (error_code expired,
-- with a job_runs row saying so: lib/queue/expire.sql), probing
-- jobs_expiring, an index that holds only waiting jobs with a deadline:
-- empty, and free, when nobody uses deadlines.
--
-- Unique while active: cronq.jobs.unique_key. At most one job with a key
-- is waiting or running at a time (jobs_unique_active, a partial unique
-- index: the index decides, never a look before the insert). Another
-- enqueue with the key writes nothing and gets the holder's id, or with
-- replace gives a waiting holder the new payload, run time and deadline.
-- Keys are shared by every role, like idempotency keys: a role whose key
-- another role's job holds is refused (23505), and learns nothing of that
-- job.
--
-- Binaries built before this schema would start jobs past their
-- deadline, so none of them may use it:
-- compatible-from: 13
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

alter table cronq.jobs add column if not exists expires_at timestamptz;
alter table cronq.jobs add column if not exists unique_key text;
alter table cronq.jobs drop constraint if exists jobs_unique_key_check;
alter table cronq.jobs add constraint jobs_unique_key_check
    check (unique_key <> '' and length(unique_key) <= 1000 and unique_key !~ '[[:cntrl:]]');
comment on column cronq.jobs.expires_at is
    'start deadline: a job not started by then ends cancelled with error_code expired';
comment on column cronq.jobs.unique_key is
    'at most one job with this key is queued, failed or running at a time';

alter table cronq.schedules add column if not exists start_deadline interval;
alter table cronq.schedules drop constraint if exists schedules_start_deadline_check;
alter table cronq.schedules add constraint schedules_start_deadline_check
    check (start_deadline > interval '0');

-- The waiting jobs with a deadline, for the wake's probe and the sweep.
create index if not exists jobs_expiring on cronq.jobs (expires_at)
    where status in ('queued', 'failed') and expires_at is not null;

-- The statuses of an active job. Issue 22's 'blocked' belongs here too
-- (a blocked job holds its key): recreate the index with it then.
create unique index if not exists jobs_unique_active on cronq.jobs (unique_key)
    where unique_key is not null and status in ('queued', 'failed', 'running');

-- Whether an active job holds this unique key, the caller's or not: it
-- runs as the owner and says no more than that (key_in_use's twin).
create or replace function cronq.unique_key_in_use(p_key text) returns boolean
language sql stable security definer
set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
    select exists (select 1 from cronq.jobs j
                   where j.unique_key = p_key and j.status in ('queued', 'failed', 'running'))
$$;

-- End these waiting jobs, if they are still waiting and past their
-- deadline: cancelled, error_code expired, each with a job_runs row for
-- the attempt that never started (worker p_worker). Returns how many.
-- The wake's sweep (lib/queue/expire.sql) and expire_holder below pass
-- the ids they locked. Only the owner runs it (the runner's sweep, and
-- expire_holder, which runs as the owner); grants.sql grants it to no one.
create or replace function cronq.expire_jobs(p_worker text, p_ids bigint[]) returns bigint
language sql volatile
begin atomic
    with upd as (
        update cronq.jobs j set status = 'cancelled', error_code = 'expired',
            last_error = 'not started by its deadline, '
                || to_char(j.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            locked_by = null, locked_until = null, finished_at = now(), updated_at = now()
        where j.id = any(p_ids) and j.status in ('queued', 'failed') and j.expires_at <= now()
        returning j.id, j.attempts, j.last_error
    ), runs as (
        insert into cronq.job_runs (job_id, attempt, worker, finished_at, outcome, error_code,
                                    error)
        select upd.id, upd.attempts + 1, p_worker, now(), 'cancelled', 'expired', upd.last_error
        from upd
    )
    select count(*) from upd;
end;
revoke execute on function cronq.expire_jobs(text, bigint[]) from public;

-- A waiting job past its deadline holds its unique key only until the
-- next wake's sweep: an enqueue or a retry with the key ends it first,
-- as the sweep would (whoever's it is: it can never run), so that the key
-- is free at once. It waits for a lock the sweep or another enqueue holds
-- on the row, then looks again (expire_jobs' update does). Called only
-- when the key is held (unique_key_in_use): the look goes by
-- jobs_unique_active, never by the table's statistics.
create or replace function cronq.expire_holder(p_key text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
declare
    h bigint;
begin
    select j.id into h from cronq.jobs j
    where j.unique_key = p_key and j.status in ('queued', 'failed', 'running')
      and j.status <> 'running' and j.expires_at <= now();
    if h is not null then
        perform 1 from cronq.jobs j where j.id = h for no key update;
        perform cronq.expire_jobs('enqueue', array[h]);
    end if;
end
$$;
revoke execute on function cronq.expire_holder(text) from public;
revoke execute on function cronq.unique_key_in_use(text) from public;

-- Every path that inserts a job (cronq.enqueue, COPY, INSERT) comes
-- here when it sets a deadline or a unique key, and only then (the
-- trigger's WHEN). A deadline must be later than now and than the job's
-- run time (a schedule's occurrences are exempt: catch-up enqueues
-- missed ones, which then expire). A unique key an active job of the
-- caller's holds means "already enqueued": the row is skipped, as for an
-- existing idempotency key; another role's job holding it is said aloud.
-- This look only makes the answer friendlier: two enqueues at once both
-- pass it, and jobs_unique_active refuses the second.
create or replace function cronq.jobs_admit() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
begin
    if new.expires_at is not null and new.schedule is null
       and new.expires_at <= greatest(now(), coalesce(new.run_at, now())) then
        raise exception 'expires_at % is not later than the job''s run time', new.expires_at
            using errcode = '22023',
                  hint = 'A deadline is a time after the job is due (its run time, now by default).';
    end if;
    -- The common case, a key nobody holds: one probe of jobs_unique_active.
    if new.unique_key is not null and cronq.unique_key_in_use(new.unique_key) then
        perform cronq.expire_holder(new.unique_key);
        if exists (select 1 from cronq.jobs j where j.unique_key = new.unique_key
                   and j.status in ('queued', 'failed', 'running')) then
            return null;
        end if;
        if row_security_active('cronq.jobs'::regclass)
           and cronq.unique_key_in_use(new.unique_key) then
            raise exception 'unique key "%" is held by another role''s job', left(new.unique_key, 200)
                using errcode = '23505',
                      hint = 'Unique keys are shared by every role: choose one that names your application.';
        end if;
    end if;
    return new;
end
$$;
drop trigger if exists jobs_admit on cronq.jobs;
create trigger jobs_admit before insert on cronq.jobs for each row
    when (new.expires_at is not null or new.unique_key is not null)
    execute function cronq.jobs_admit();

-- A cronq_user may now also replace its own waiting job with a unique key
-- (enqueue_job below): new payload, run time and deadline, due as queued,
-- nothing else touched. The rest is 0008's guard as it was.
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

-- Put these jobs back to queued, due now, if they are finished or failed:
-- attempts 0, lease, cancel request, times, error and deadline cleared
-- (an operator's retry is explicit: the job runs however late). Returns
-- the ids requeued. Under the caller's row-level security.
create or replace function cronq.requeue_jobs(p_ids bigint[]) returns bigint[]
language sql volatile
begin atomic
    with upd as (
        update cronq.jobs j set
            status = 'queued', run_at = now(), attempts = 0, locked_by = null, locked_until = null,
            cancel_requested = false, started_at = null, finished_at = null, last_error = null,
            error_code = null, expires_at = null, updated_at = now()
        where j.id = any(p_ids) and j.status in ('dead', 'failed', 'succeeded', 'cancelled')
        returning j.id)
    select coalesce(array_agg(upd.id), '{}') from upd;
end;

-- Retry: as 0008's, through requeue_jobs. A unique key is held by one
-- active job at a time: a finished job whose key another active job holds
-- (any role's, committed or not) is not retried, and of several finished
-- jobs with one key only the first by id is; they are reported unchanged,
-- the rest retried. Jobs with a unique key go one at a time, each a try
-- that jobs_unique_active may refuse; a late waiting holder holds nothing
-- (expire_holder). A failed job holds its own key.
create or replace function cronq.retry_jobs(ids bigint[])
returns table (id bigint, status text, changed boolean)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_column
declare
    done bigint[];
    r record;
    what text;
begin
    done := cronq.requeue_jobs(array(select j.id from cronq.jobs j
                                     where j.id = any(ids) and j.unique_key is null));
    for r in select j.id, j.unique_key from cronq.jobs j
             where j.id = any(ids) and j.unique_key is not null
               and j.status in ('dead', 'failed', 'succeeded', 'cancelled')
             order by j.unique_key, j.id loop
        if cronq.unique_key_in_use(r.unique_key) then
            perform cronq.expire_holder(r.unique_key);
        end if;
        begin
            done := done || cronq.requeue_jobs(array[r.id]);
        exception when unique_violation then
            get stacked diagnostics what = constraint_name;
            if what is distinct from 'jobs_unique_active' then
                raise;
            end if;
        end;
    end loop;
    return query
        select req.id, case when req.id = any(done) then 'queued' else j.status end,
               req.id = any(done)
        from (select distinct u.id from unnest(ids) as u(id)) req
        left join cronq.jobs j on j.id = req.id;
end
$$;

-- enqueue and enqueue_job gain expires_at, unique_key and replace at the
-- end, after 0012's limit_key (calls by position or name keep working);
-- enqueue_job also says what became of the request. A new signature: the
-- old functions go (enqueue first: its body names enqueue_job).
drop function if exists cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval, text);
drop function if exists cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval, text);
drop function if exists cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval, text, text);
drop function if exists cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval, text, text);

-- Enqueue one job and say what became of it: created, or not, and then
-- note tells why: 'key' (a job of the caller's holds the idempotency key:
-- nothing written, whatever the rest asks), 'queued', 'failed' or
-- 'running' (an active job holds the unique key: left alone), or
-- 'replaced' (with replace, the waiting holder took this payload, run
-- time and deadline, and is queued; its type must be this one, the rest
-- of it stays). id is the new job's or the holder's.
-- A holder that finishes while we look is no holder: the insert is tried
-- again.
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
    created := false;
    for attempt in 1..10 loop
        if unique_key is null then
            insert into cronq.jobs as j (type, payload, run_at, queue, priority,
                                         max_attempts, timeout, idempotency_key, limit_key,
                                         expires_at)
            values (type, payload, run_at, queue, priority, max_attempts, timeout, key, limit_key,
                    expires_at)
            on conflict (idempotency_key) where idempotency_key is not null do nothing
            returning j.id into id;
        else
            begin
                insert into cronq.jobs as j (type, payload, run_at, queue, priority, max_attempts,
                                             timeout, idempotency_key, limit_key, expires_at,
                                             unique_key)
                values (type, payload, run_at, queue, priority, max_attempts, timeout, key,
                        limit_key, expires_at, unique_key)
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

-- The SQL API: select cronq.enqueue('noop') returns the job id (the new
-- job's, or the one holding the key).
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
    replace boolean default false)
returns bigint
language sql volatile
begin atomic
    select e.id from cronq.enqueue_job(type, payload, run_at, queue, priority, max_attempts,
                                       timeout, key, limit_key, expires_at, unique_key,
                                       replace) e;
end;

-- Occurrences with their deadlines (p_deadline: each job expires at its
-- fire time plus its schedule's start_deadline). The runner's
-- materialise() calls the two-argument form, now with deadlines;
-- backfill --schedule passes false: a backfill is asked for explicitly,
-- however late.
create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[],
                                                     p_deadline boolean)
returns table (schedule text, job_id bigint)
language sql volatile
begin atomic
    insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout,
                            idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                            expires_at)
    select s.type, s.payload, s.queue, s.priority, s.max_attempts, s.timeout,
           'schedule:' || s.name || ':'
               || to_char(f.fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           s.name, f.fire, f.fire, s.created_by,
           case when p_deadline then f.fire + s.start_deadline end
    from unnest(p_names, p_fires) as f(name, fire)
    join cronq.schedules s on s.name = f.name
    order by f.fire
    returning cronq.jobs.schedule, cronq.jobs.id;
end;

create or replace function cronq.enqueue_occurrences(p_names text[], p_fires timestamptz[])
returns table (schedule text, job_id bigint)
language sql volatile
begin atomic
    select o.schedule, o.job_id from cronq.enqueue_occurrences(p_names, p_fires, true) o;
end;

-- cronq.schedule gains start_deadline at the end.
drop function if exists cronq.schedule(text, text, text, jsonb, text, text, integer, integer,
                                       interval, boolean, text, text);

-- Create or replace the caller's schedule NAME, like pg_cron's
-- cron.schedule: as 0008's, and start_deadline (NULL keeps the schedule's,
-- none on a new one).
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
    start_deadline interval default null)
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
                catchup, overlap, start_deadline::text) is not null then
        update cronq.schedules s
        set queue = coalesce(schedule.queue, s.queue),
            priority = coalesce(schedule.priority, s.priority),
            max_attempts = coalesce(schedule.max_attempts, s.max_attempts),
            timeout = coalesce(schedule.timeout, s.timeout),
            enabled = coalesce(schedule.enabled, s.enabled),
            catchup = coalesce(schedule.catchup, s.catchup),
            overlap = coalesce(schedule.overlap, s.overlap),
            start_deadline = coalesce(schedule.start_deadline, s.start_deadline)
        where s.name = schedule.name;
    end if;
    return name;
end
$$;
