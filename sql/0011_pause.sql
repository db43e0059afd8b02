-- 0011_pause.sql — pause and resume (flow control, part one). A key names
-- what is paused: queue:NAME and type:NAME stop the claim from taking
-- those jobs (running ones finish); schedule:NAME stops the schedule from
-- enqueueing (its fire times pass, skipped). One row per paused key;
-- until NULL: until resumed; an until in the past: resumed by itself (a
-- queue's or type's row stays, harmless, until the next pause or resume
-- deletes it; a schedule's stays until the schedule is resumed or removed:
-- materialisation skips the fire times before its until, catch-up or not).
--
-- Who: members of cronq_admin pause and resume any key; a member of
-- cronq_user only schedule:NAME of its own schedules (row-level security
-- below, through the schedules' own). cronq run, which owns the table,
-- reads it in its claim.
--
-- Binaries built before this schema would claim paused jobs:
-- compatible-from: 11
--
-- As 0006 asks: SQL-standard bodies where possible, search_path pinned on
-- the PL/pgSQL ones. Every statement may run again.

-- Why text is not a key of flow control, or NULL.
create or replace function cronq.flow_key_error(k text) returns text
language sql immutable parallel safe
return case
    when k is null or k = '' then 'a key is required'
    when k !~ '^(queue|type|schedule):' then
        pg_catalog.format('%s is not a key: keys are queue:NAME, type:NAME or schedule:NAME', k)
    when k ~ '^(queue|type|schedule):$' then
        pg_catalog.format('%s names nothing: keys are queue:NAME, type:NAME or schedule:NAME', k)
    when pg_catalog.length(k) > 255 then 'a key is at most 255 characters'
    when k ~ '[[:cntrl:]]' then 'a key may not contain control characters'
end;

-- A schedule's pause names its schedule by a foreign key as well: removing
-- the schedule removes the pause (no pause is left behind for a schedule
-- created later under the name, even by a pause written as the schedule
-- is removed), and a paused schedule is not renamed (resume it first).
create table if not exists cronq.pauses (
    key        text primary key check (cronq.flow_key_error(key) is null),
    until      timestamptz,
    paused_by  text not null default current_user,
    paused_at  timestamptz not null default now(),
    schedule   text references cronq.schedules (name) on delete cascade,
    check ((key like 'schedule:%') = (schedule is not null)),
    check (schedule is null or key = 'schedule:' || schedule)
);

-- Everyone sees the pauses of queues and types (a job held by one should
-- say why to its author too); a schedule's pause is seen with the schedule
-- (the subquery is under schedules_own). Writing: cronq_admin any key, an
-- owner its schedules' (cronq.pause() says so aloud before RLS does).
alter table cronq.pauses enable row level security;
drop policy if exists pauses_own on cronq.pauses;
drop policy if exists pauses_read on cronq.pauses;
create policy pauses_read on cronq.pauses for select
    using (key not like 'schedule:%');
drop policy if exists pauses_manage on cronq.pauses;
create policy pauses_manage on cronq.pauses
    using ((select cronq.is_admin())
           or (key like 'schedule:%'
               and exists (select 1 from cronq.schedules s where 'schedule:' || s.name = pauses.key)))
    with check ((select cronq.is_admin())
                or (key like 'schedule:%'
                    and exists (select 1 from cronq.schedules s where 'schedule:' || s.name = pauses.key)));

-- Who paused, and when, is the database's word, not the writer's.
create or replace function cronq.pauses_stamp() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.paused_by := current_user;
    new.paused_at := now();
    return new;
end
$$;
drop trigger if exists pauses_stamp on cronq.pauses;
create trigger pauses_stamp before insert or update on cronq.pauses for each row
    execute function cronq.pauses_stamp();


-- The queue and type keys paused now, '{}' when none. Statements read it
-- once, as (select cronq.paused_keys()), and test each job against the
-- array: with nothing paused that is one probe of an empty table; with a
-- queue paused, a comparison per job walked past (no subquery per row).
create or replace function cronq.paused_keys() returns text[]
language sql stable
return (select coalesce(pg_catalog.array_agg(p.key), '{}') from cronq.pauses p
        where p.key not like 'schedule:%' and (p.until is null or p.until > now()));

-- Whether the keys ks hold the jobs of this queue and type. One use of
-- each argument, so that the planner inlines it into the statement.
create or replace function cronq.held(ks text[], p_queue text, p_type text) returns boolean
language sql immutable
return ks operator(pg_catalog.&&) array['queue:' || p_queue, 'type:' || p_type];

-- Whether the current role pauses and resumes any key: a member of
-- cronq_admin, or of the role that owns cronq's tables (which runs
-- migrate and cronq run; superusers are members of every role).
create or replace function cronq.manages_flow() returns boolean
language sql stable
return (select cronq.is_admin()) or pg_catalog.pg_has_role(
    (select c.relowner from pg_catalog.pg_class c where c.oid = 'cronq.pauses'::pg_catalog.regclass),
    'MEMBER');

-- Refuse aloud a key that is none (22023) or that the caller may not
-- pause or resume (42501): what is not a schedule is cronq_admin's.
create or replace function cronq.flow_check(key text, verb text) returns void
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
declare
    why text := cronq.flow_key_error(key);
begin
    if why is not null then
        raise exception '%', why using errcode = '22023';
    end if;
    if key not like 'schedule:%' and not cronq.manages_flow() then
        raise exception 'only members of cronq_admin % %', verb, key using errcode = '42501',
            hint = format('A member of cronq_user %ss only its own schedules (schedule:NAME).', verb);
    end if;
end
$$;

-- Pause a key until a time (NULL: until resumed). True when this call
-- paused it, false when it was paused already (its until is now this
-- one). Runs with the caller's rights: row-level security decides.
create or replace function cronq.pause(key text, until timestamptz default null)
returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    was boolean;
begin
    perform cronq.flow_check(key, 'pause');
    if until is not null and until <= now() then
        raise exception 'until % is not in the future', until using errcode = '22023';
    end if;
    if key like 'schedule:%' and not exists
            (select 1 from cronq.schedules s where 'schedule:' || s.name = key) then
        raise exception 'schedule "%" does not exist', substr(key, 10) using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    select p.until is null or p.until > now() into was from cronq.pauses p where p.key = pause.key;
    insert into cronq.pauses as p (key, until, schedule)
        values (pause.key, pause.until, case when key like 'schedule:%' then substr(key, 10) end)
        on conflict on constraint pauses_pkey do update set until = excluded.until;
    return not coalesce(was, false);
end
$$;

-- Resume a key. True when it was paused, false when it was not.
create or replace function cronq.resume(key text) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    was boolean;
    ended timestamptz;
    began timestamptz;
begin
    perform cronq.flow_check(key, 'resume');
    delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    delete from cronq.pauses p where p.key = resume.key returning p.until, p.paused_at into ended, began;
    was := found and (ended is null or ended > now());
    -- A schedule resumes from its next fire time: the ones that came while
    -- it was paused stay skipped, catchup all or not. Paused still, the
    -- next wake plans it from now; ended by its until (and no wake came
    -- since), from that time.
    if found and key like 'schedule:%' then
        update cronq.schedules s set next_run_at = case when was then null else ended end
        where s.name = substr(key, 10)
          and (was or (s.next_run_at >= began and s.next_run_at < ended));
    end if;
    return was;
end
$$;
