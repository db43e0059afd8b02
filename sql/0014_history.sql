-- 0014_history.sql — history policies (issue 21).
--
-- cronq.jobs.history: 'all' (the default: every attempt leaves a job_runs
-- row) or 'errors' (a succeeded attempt with no output leaves none; a
-- success with output and every other outcome keep their full row), set
-- at enqueue (--history, "history" in JSONL, history => in SQL) or by the
-- job's schedule. The outcome statements (lib/queue/record.sql and
-- record_plain.sql) read it from the row they update anyway: nothing is
-- added to the claim, and a job of the default policy costs one
-- comparison more.
--
-- cronq.schedules.history, handed to each job the schedule makes (the
-- runner's materialisation and backfill --schedule), and
-- cronq.schedules.keep: purge keeps the newest keep finished jobs of the
-- schedule whatever their age, and deletes its finished jobs beyond them
-- whatever their age (lib/queue/purge.c); null, no keep: the age rules.
--
-- Binaries built before this schema would purge by age the jobs a keep
-- must keep:
-- compatible-from: 14
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

-- A default that is a constant: adding the column rewrites no row.
alter table cronq.jobs add column if not exists history text not null default 'all';
alter table cronq.jobs drop constraint if exists jobs_history_check;
alter table cronq.jobs add constraint jobs_history_check check (history in ('all', 'errors'));
comment on column cronq.jobs.history is
    'all: every attempt leaves a job_runs row; errors: a succeeded attempt with no output leaves none';

alter table cronq.schedules add column if not exists history text not null default 'all';
alter table cronq.schedules add column if not exists keep integer;
alter table cronq.schedules drop constraint if exists schedules_history_check;
alter table cronq.schedules add constraint schedules_history_check
    check (history in ('all', 'errors'));
alter table cronq.schedules drop constraint if exists schedules_keep_check;
-- At most 10,000: a keep must not let a role hoard history past the
-- operator's retention (lib/sched/schedule.h SCHEDULE_MAX_KEEP).
alter table cronq.schedules add constraint schedules_keep_check check (keep between 1 and 10000);
comment on column cronq.schedules.history is 'the history policy of the schedule''s jobs';
comment on column cronq.schedules.keep is
    'purge keeps the newest keep finished jobs of the schedule whatever their age, and deletes the rest whatever their age; null: the age rules';

-- A schedule's finished jobs, newest first, for the keep of purge: only
-- scheduled jobs are in it (a drain of plain jobs never touches it).
create index if not exists jobs_schedule_finished on cronq.jobs (schedule, finished_at, id)
    where schedule is not null and status in ('succeeded', 'dead', 'cancelled');

-- The schedules with a keep, which every purge batch reads: none in the
-- common case, and then the probe of an empty index.
create index if not exists schedules_keep on cronq.schedules (name) where keep is not null;

-- Why text is not a history policy, or NULL.
create or replace function cronq.history_error(p text) returns text
language sql immutable parallel safe
return case when p is not null and p not in ('all', 'errors') then
    pg_catalog.format('invalid history policy "%s": must be all or errors', p) end;

-- enqueue and enqueue_job gain history at the end, after 0013's replace
-- (calls by position or name keep working). A new signature: the old
-- functions go (enqueue first: its body names enqueue_job).
drop function if exists cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval,
                                      text, text, timestamptz, text, boolean);
drop function if exists cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval,
                                          text, text, timestamptz, text, boolean);

-- As 0013's, and history (NULL: all). A job that holds the key keeps its
-- own policy, replaced or not.
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
                                         expires_at, history)
            values (type, payload, run_at, queue, priority, max_attempts, timeout, key, limit_key,
                    expires_at, coalesce(history, 'all'))
            on conflict (idempotency_key) where idempotency_key is not null do nothing
            returning j.id into id;
        else
            begin
                insert into cronq.jobs as j (type, payload, run_at, queue, priority, max_attempts,
                                             timeout, idempotency_key, limit_key, expires_at,
                                             unique_key, history)
                values (type, payload, run_at, queue, priority, max_attempts, timeout, key,
                        limit_key, expires_at, unique_key, coalesce(history, 'all'))
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

-- The SQL API: select cronq.enqueue('noop', history => 'errors').
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
    history text default null)
returns bigint
language sql volatile
begin atomic
    select e.id from cronq.enqueue_job(type, payload, run_at, queue, priority, max_attempts,
                                       timeout, key, limit_key, expires_at, unique_key,
                                       replace, history) e;
end;

-- The schedule's policy reaches its jobs through enqueue_occurrences (the
-- runner's materialise() and backfill --schedule alike) and
-- run_schedule(), and cronq.schedule() takes history and keep: 0016 and
-- 0015 define them, with what those add (one definition each).

