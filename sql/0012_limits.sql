-- 0012_limits.sql — limits (flow control, part two) and a job's own
-- limit key. A limit caps, across every runner and host, how many jobs of
-- a key run at once (max_running) and how many start in any window of
-- length per (rate). The claim decides both (cronq.limit_room), under a
-- lock of the limit's row: the running jobs are counted from their own
-- rows (a runner killed mid-job leaves a running row that counts until the
-- rescue ends it, as the job itself would); the starts of the window from
-- the limit's own log of them (starts), which the claim that takes the
-- jobs writes in its transaction: it cannot drift (each entry expires with
-- its window) and no purge of the history makes it forget a start.
--
-- Keys: queue:NAME, type:NAME, schedule:NAME (the schedule's jobs), or a
-- job's own limit key (cronq enqueue --limit-key, e.g. tenant:42): any
-- PREFIX:VALUE whose PREFIX is none of those three. A job obeys the pauses
-- and limits of all its keys.
--
-- Binaries built before this schema would claim past the limits and
-- ignore the pauses of limit keys:
-- compatible-from: 12
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

-- Why text is not a key of flow control, or NULL: queue:, type:,
-- schedule: or another PREFIX: (letters, digits, _ . -), then a name.
create or replace function cronq.flow_key_error(k text) returns text
language sql immutable parallel safe
return case
    when k is null or k = '' then 'a key is required'
    when k !~ '^[A-Za-z0-9_.-]+:' then
        pg_catalog.format('%s is not a key: keys are queue:NAME, type:NAME, schedule:NAME or a limit key PREFIX:NAME (such as tenant:42)', k)
    when k ~ '^[A-Za-z0-9_.-]+:$' then
        pg_catalog.format('%s names nothing: keys are queue:NAME, type:NAME, schedule:NAME or a limit key PREFIX:NAME (such as tenant:42)', k)
    when pg_catalog.length(k) > 255 then 'a key is at most 255 characters'
    when k ~ '[[:cntrl:]]' then 'a key may not contain control characters'
end;

-- Why text is not a job's own limit key, or NULL: a key, and none of the
-- three a job has by itself.
create or replace function cronq.limit_key_error(k text) returns text
language sql immutable parallel safe
return coalesce(cronq.flow_key_error(k), case
    when k ~ '^(queue|type|schedule):' then
        pg_catalog.format('%s cannot be a limit key: a job has its queue:, type: and schedule: keys by itself', k)
end);

alter table cronq.jobs add column if not exists limit_key text;
do $$
begin
    if not exists (select 1 from pg_catalog.pg_constraint
                   where conname = 'jobs_limit_key_check'
                     and conrelid = 'cronq.jobs'::pg_catalog.regclass) then
        -- A new column: no row to check (NOT VALID spares the scan). The
        -- test of NULL comes first: most jobs have no limit key, and an
        -- insert of many must not call the function for each.
        alter table cronq.jobs add constraint jobs_limit_key_check
            check (limit_key is null or cronq.limit_key_error(limit_key) is null) not valid;
    end if;
end
$$;

-- The keys a job obeys: its queue's, its type's, its schedule's and its
-- own (the last two may be NULL, which no key array overlaps).
create or replace function cronq.job_keys(p_queue text, p_type text, p_schedule text,
                                          p_limit_key text) returns text[]
language sql immutable parallel safe
return array['queue:' || p_queue, 'type:' || p_type, 'schedule:' || p_schedule, p_limit_key];

-- Paused now: queue, type and limit keys (a schedule's pause stops its
-- enqueueing, not its jobs). As in 0011, held() is inlined in the claim.
create or replace function cronq.held(ks text[], p_queue text, p_type text, p_limit_key text)
returns boolean
language sql immutable
return ks operator(pg_catalog.&&) array['queue:' || p_queue, 'type:' || p_type, p_limit_key];

create table if not exists cronq.limits (
    key          text primary key check (cronq.flow_key_error(key) is null),
    max_running  integer check (max_running between 1 and 1000000),
    rate         integer check (rate between 1 and 10000),
    per          interval check (per >= interval '1 second' and per <= interval '1 day'),
    set_by       text not null default current_user,
    set_at       timestamptz not null default now(),
    starts       timestamptz[] not null default '{}',
    check (max_running is not null or rate is not null),
    check ((rate is null) = (per is null))
);
comment on table cronq.limits is 'cronq limits: at most max_running jobs of a key at once, at most rate starts per window; see cronq(1)';

-- Everyone reads the limits (a job held by one should say why to its
-- author); members of cronq_admin and the tables' owner write them.
alter table cronq.limits enable row level security;
drop policy if exists limits_read on cronq.limits;
create policy limits_read on cronq.limits for select using (true);
drop policy if exists limits_manage on cronq.limits;
create policy limits_manage on cronq.limits
    using ((select cronq.manages_flow())) with check ((select cronq.manages_flow()));

create or replace function cronq.limits_stamp() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.set_by := current_user;
    new.set_at := now();
    return new;
end
$$;
drop trigger if exists limits_stamp on cronq.limits;
create trigger limits_stamp before insert or update on cronq.limits for each row
    execute function cronq.limits_stamp();

-- A limit that appears or goes while claims are locking the limits of
-- their keys would be counted by a claim that never locked it (two claims
-- could then take its last slot): whoever inserts or deletes a limit
-- first waits for the claims under way and holds the new ones back until
-- it commits (EXCLUSIVE conflicts with their ROW SHARE only). A change of
-- a limit's values is serialised with them by its row lock.
create or replace function cronq.limits_serialise() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    lock table cronq.limits in exclusive mode;
    return null;
end
$$;
drop trigger if exists limits_serialise on cronq.limits;
create trigger limits_serialise before insert or delete on cronq.limits
    for each statement execute function cronq.limits_serialise();

-- Whether any limit is defined: the claim's gate (one probe of an empty
-- table when none is).
create or replace function cronq.limited() returns boolean
language sql stable
return exists (select 1 from cronq.limits);

-- The room each limit has now: how many more of its jobs may start (0 or
-- less: none), with its jobs running (of a max_running limit; 0 else) and
-- its starts in its window (of a rate limit, from its log; NULL else). Of the limits on keys (NULL: every limit). With lock, first
-- locks the limits' rows, in one order, so that claims of one key run one
-- after another: each statement below then has a new snapshot, which sees
-- the jobs every earlier claim of the key committed. A row lock, not an
-- advisory one: taking it needs UPDATE on cronq.limits, which only
-- cronq_admin has (any role may take any advisory lock, and hold back
-- every claim of a key from an idle transaction). Runs as its caller (the
-- runner, which owns the tables: row-level security does not hide other
-- roles' jobs from it).
create or replace function cronq.limit_room(keys text[], lock boolean)
returns table (key text, room bigint, running bigint, started bigint)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
begin
    if lock then
        perform from cronq.limits l where keys is null or l.key = any(keys)
            order by l.key for no key update of l;
    end if;
    return query
    with lim as (
        select l.key, l.max_running, l.rate, l.per, l.starts from cronq.limits l
        where keys is null or l.key = any(keys)
    ), running as (
        select k.key, count(*) as n
        from cronq.jobs j
        cross join lateral unnest(cronq.job_keys(j.queue, j.type, j.schedule, j.limit_key)) k(key)
        join lim on lim.key = k.key
        where j.status = 'running' and lim.max_running is not null
        group by k.key
    ), started as (
        select lim.key, (select count(*) from unnest(lim.starts) s where s > now() - lim.per) as n
        from lim where lim.rate is not null
    )
    select lim.key, least(lim.max_running - coalesce(running.n, 0), lim.rate - started.n),
        coalesce(running.n, 0), started.n
    from lim left join running on running.key = lim.key left join started on started.key = lim.key;
end
$$;

-- Refuse aloud a key that is none (22023) or that the caller may not
-- limit (42501): limits are cronq_admin's, of every kind of key.
create or replace function cronq.limit_check(key text) returns void
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
declare
    why text := cronq.flow_key_error(key);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if not cronq.manages_flow() then
        raise exception 'only members of cronq_admin limit %', key using errcode = '42501';
    end if;
end
$$;

-- Set the limits of a key: the ones given, the others kept (a key's first
-- limit needs one). Returns the row as it now stands.
create or replace function cronq.set_limit(key text, max_running integer default null,
                                           rate integer default null, per interval default null)
returns cronq.limits
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    r cronq.limits;
begin
    perform cronq.limit_check(key);
    if (rate is null) <> (per is null) then
        raise exception 'a rate is a number of starts per window: give both' using errcode = '22023';
    end if;
    insert into cronq.limits as l (key, max_running, rate, per)
        values (set_limit.key, set_limit.max_running, set_limit.rate, set_limit.per)
        on conflict on constraint limits_pkey do update
        set max_running = coalesce(excluded.max_running, l.max_running),
            rate = coalesce(excluded.rate, l.rate), per = coalesce(excluded.per, l.per)
        returning * into r;
    return r;
end
$$;

-- Remove the limits of a key. True when it had some.
create or replace function cronq.clear_limit(key text) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
begin
    perform cronq.limit_check(key);
    delete from cronq.limits l where l.key = clear_limit.key;
    return found;
end
$$;

-- The SQL API takes a job's limit key: the same function with one more
-- argument (the old one goes, so that no call is ambiguous).
drop function if exists cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval, text);
drop function if exists cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval, text);
create or replace function cronq.enqueue_job(type text, payload jsonb default '{}',
    run_at timestamptz default null, queue text default null, priority integer default null,
    max_attempts integer default null, timeout interval default null, key text default null,
    limit_key text default null, out id bigint, out created boolean)
language plpgsql set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    why text := cronq.limit_key_error(limit_key);
begin
    if limit_key is not null and why is not null then
        raise exception 'limit key: %', why using errcode = '22023';
    end if;
    insert into cronq.jobs as j (type, payload, run_at, queue, priority,
                                 max_attempts, timeout, idempotency_key, limit_key)
    values (type, payload, run_at, queue, priority, max_attempts, timeout, key, limit_key)
    on conflict (idempotency_key) where idempotency_key is not null do nothing
    returning j.id into id;
    if id is not null then
        created := true;
        return;
    end if;
    -- A new statement, a new snapshot: sees a conflicting row committed
    -- by another session while our insert waited for it.
    select j.id into id from cronq.jobs j where j.idempotency_key = key;
    if id is null then
        raise exception 'idempotency key "%" is held by another role''s job', left(key, 200)
            using errcode = '23505',
                  hint = 'Idempotency keys are shared by every role: choose one that names your application.';
    end if;
    created := false;
end
$$;
create or replace function cronq.enqueue(type text, payload jsonb default '{}',
    run_at timestamptz default null, queue text default null, priority integer default null,
    max_attempts integer default null, timeout interval default null, key text default null,
    limit_key text default null)
returns bigint
language sql
begin atomic
    select e.id from cronq.enqueue_job(type, payload, run_at, queue, priority, max_attempts,
                                       timeout, key, limit_key) e;
end;

-- The limited keys with no room now, '{}' when none (or no limit at all:
-- one probe of an empty table). The claim reads it once, without locks,
-- to walk past the jobs of full keys; what it then takes it decides under
-- the keys' locks (limit_room(keys, true)).
create or replace function cronq.full_keys() returns text[]
language sql stable
return case when exists (select 1 from cronq.limits)
    then (select coalesce(pg_catalog.array_agg(r.key), '{}') from cronq.limit_room(null, false) r
          where r.room <= 0)
    else '{}' end;

-- The limits as they stand, for status, check and cronq limit list: each
-- with its jobs running, its starts in its window (rate limits) and its
-- room (never below 0). As its caller sees them: a member of cronq_user
-- counts only its own jobs (row-level security), the runner and
-- cronq_admin every role's.
create or replace view cronq.limits_now with (security_invoker = true) as
select l.key, l.max_running, l.rate, extract(epoch from l.per)::bigint as per_seconds,
    r.running, r.started, greatest(r.room, 0) as room, r.room <= 0 as full,
    l.set_by, l.set_at
from cronq.limits l join cronq.limit_room(null, false) r on r.key = l.key;
