-- 0021_no_table_locks.sql — a cronq_user removes its schedules and
-- resumes their pauses without a table-level UPDATE or DELETE, so that it
-- can no longer lock either table against the runners.
--
-- PostgreSQL lets a role LOCK TABLE in any mode when it holds UPDATE,
-- DELETE or TRUNCATE on the whole table; a table-wide INSERT allows ROW
-- EXCLUSIVE, SELECT ACCESS SHARE, and privileges on columns allow nothing.
-- cronq_user held DELETE on cronq.schedules and UPDATE and DELETE on
-- cronq.pauses: from an idle transaction it could hold ACCESS EXCLUSIVE
-- on either and stall every runner, each claim on cronq.pauses
-- (paused_keys) and each wake on cronq.schedules.
--
-- Now (sql/grants.sql) cronq_user writes only columns of both. It
-- removes a row by setting its column removed: an UPDATE like any other of
-- its rows, which row-level security allows only on the rows the role
-- manages (schedules_own, pauses_manage). A trigger then deletes the row,
-- as the tables' owner, in the same statement: the deletion is decided by
-- the same policies as before, and done with rights the role lacks. A row
-- inserted with removed set (by a role that may write the column) goes at
-- once too: removed is never true in a committed row.
--
-- A binary built before this schema still runs jobs and schedules; only
-- its "schedule remove" as a member of cronq_user is refused (permission
-- denied for table schedules), writing nothing.
-- compatible-from: 10
--
-- Every statement may run again.

alter table cronq.schedules add column if not exists removed boolean not null default false;
alter table cronq.pauses add column if not exists removed boolean not null default false;
comment on column cronq.schedules.removed is
    'set true to remove the schedule (a trigger deletes the row): how a member of cronq_user removes one';
comment on column cronq.pauses.removed is
    'set true to end the pause (a trigger deletes the row): how a member of cronq_user resumes its schedule';

-- Runs as the owner, called only as the trigger below, after an update
-- that row-level security allowed. A trigger function cannot be called
-- any other way.
create or replace function cronq.remove_row() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
begin
    if tg_table_name = 'schedules' then
        delete from cronq.schedules where name = new.name;
    else
        delete from cronq.pauses where key = new.key;
    end if;
    return null;
end
$$;
revoke all on function cronq.remove_row() from public;
drop trigger if exists schedules_remove on cronq.schedules;
create trigger schedules_remove after insert or update of removed on cronq.schedules
    for each row when (new.removed) execute function cronq.remove_row();
drop trigger if exists pauses_remove on cronq.pauses;
create trigger pauses_remove after insert or update of removed on cronq.pauses
    for each row when (new.removed) execute function cronq.remove_row();

-- Ending a pause is not pausing: it keeps who paused and when (resume
-- reads them back from its UPDATE). (A pause inserted with removed set is
-- not stamped either: it is deleted before the statement ends.)
drop trigger if exists pauses_stamp on cronq.pauses;
create trigger pauses_stamp before insert or update on cronq.pauses for each row
    when (not new.removed) execute function cronq.pauses_stamp();

-- As in 0008, through the removal.
create or replace function cronq.unschedule(name text) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
begin
    update cronq.schedules s set removed = true where s.name = name;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    return true;
end
$$;

-- As in 0011. Pauses ended by their until are deleted by those that
-- manage every key (a cronq_user's row-level security shows it none of
-- them, and it has no DELETE); a key is resumed through the removal.
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
    if cronq.manages_flow() then
        delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    end if;
    select p.until is null or p.until > now() into was from cronq.pauses p where p.key = pause.key;
    insert into cronq.pauses as p (key, until, schedule)
        values (pause.key, pause.until, case when key like 'schedule:%' then substr(key, 10) end)
        on conflict on constraint pauses_pkey do update set until = excluded.until;
    return not coalesce(was, false);
end
$$;

create or replace function cronq.resume(key text) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
    was boolean;
    ended timestamptz;
    began timestamptz;
begin
    perform cronq.flow_check(key, 'resume');
    if cronq.manages_flow() then
        delete from cronq.pauses p where p.until <= now() and p.schedule is null;   -- ended by themselves
    end if;
    update cronq.pauses p set removed = true where p.key = resume.key
        returning p.until, p.paused_at into ended, began;
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

-- Occurrence jobs a role writes itself (backfill --schedule, through
-- cronq.enqueue_occurrences, or INSERT) lock their schedule's row first,
-- until they commit. A wake's materialisation locks the due schedules
-- FOR UPDATE SKIP LOCKED (lib/sched/due.sql): it now passes over such a
-- schedule instead of waiting on the keys not yet committed (1 s each,
-- its lock_timeout, then the schedules' batch split in halves), which an
-- author could hold from an idle transaction, for as many schedules as
-- it has, at every wake. The owner's writes (materialisation itself) do
-- not call it: row-level security is not active for them.
create or replace function cronq.occurrence_lock() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    perform from cronq.schedules s where s.name = new.schedule for no key update;
    return new;
end
$$;
drop trigger if exists jobs_occurrence_lock on cronq.jobs;
create trigger jobs_occurrence_lock before insert on cronq.jobs
    for each row when (new.schedule is not null
                       and pg_catalog.row_security_active('cronq.jobs'::pg_catalog.regclass))
    execute function cronq.occurrence_lock();

-- cronq.settle_later without its primary key: a note that a blocked job
-- needs settling may be written twice (settle.sql settles the job once
-- and deletes every note of it). With the key, jobs_settle's insert (in
-- the statement recording an outcome, and in the rescue) waited for an
-- author's note of the same job not yet committed (cancelling its own
-- parent job in a transaction left open, while holding the dependant
-- locked): the wait the statement recording outcomes must never make.
alter table cronq.settle_later drop constraint if exists settle_later_pkey;
create index if not exists settle_later_job on cronq.settle_later (job_id);
