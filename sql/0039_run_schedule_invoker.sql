-- 0039_run_schedule_invoker.sql — who may run a schedule now is decided
-- by row-level security, as the caller, not by the session's role.
--
-- cronq.run_schedule() was SECURITY DEFINER, so current_user inside it is
-- its owner's; it read who called from the session instead (its SET ROLE,
-- else its login). Inside another role's SECURITY DEFINER function, or a
-- view or policy calling one, the session is whoever reads it: a
-- cronq_user's function that an admin's session came to run could run any
-- role's schedule, with --force, at a time of that role's choosing (the
-- job stays its author's, but a role acted on a schedule it may not
-- manage). Now run_schedule runs as its caller and asks with an UPDATE of
-- the schedule's row (run_now), which row-level security lets a caller
-- make only on a schedule it may manage, as current_user, wherever it is
-- called from; a trigger of the owner's (schedules_run_now) then writes
-- the job, as run_schedule did, and clears run_now, which is never stored
-- (schedules_run_now_check). The UPDATE locks the row, as run_schedule's
-- FOR UPDATE did. An UPDATE of run_now alone fires no other trigger
-- (schedules_guard does not stamp updated_at, from which a wake plans a
-- schedule written with SQL).
--
-- Binaries read nothing new (`cronq schedule run` calls run_schedule as
-- before).
-- compatible-from: 25

alter table cronq.schedules add column if not exists run_now text;
alter table cronq.schedules drop constraint if exists schedules_run_now_check;
alter table cronq.schedules add constraint schedules_run_now_check check (run_now is null);

-- One job now with the schedule's settings (key schedule:NAME:manual:T, T
-- this second), in its author's name; overlap skip refuses while its last
-- job is unfinished, unless run_now is 'force'.
create or replace function cronq.schedules_run_now() returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp as $$
declare
    busy bigint;
    t timestamptz := date_trunc('second', now());
    k text;
    id bigint;
begin
    if new.run_now not in ('run', 'force') then
        raise exception 'schedule "%": run_now must be run or force, not "%"', new.name, left(new.run_now, 64)
            using errcode = '22023';
    end if;
    if new.run_now = 'run' and new.overlap = 'skip' then
        select j.id into busy from cronq.jobs j
        where j.id = new.last_job_id
          and (j.status = 'running'
               or j.status in ('queued', 'failed') and (j.expires_at is null or j.expires_at > now()));
        if busy is not null then
            raise exception 'schedule "%": its job % is still unfinished (overlap skip)', new.name, busy
                using errcode = '55006', hint = 'Use --force to run it anyway.';
        end if;
    end if;
    k := 'schedule:' || new.name || ':manual:' || to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,
                                 idempotency_key, schedule, scheduled_for, run_at, enqueued_by,
                                 expires_at, history, hooks)
    values (new.type, new.payload, new.queue, new.priority, new.max_attempts, new.timeout, k, new.name, t,
            now(), new.created_by, t + new.start_deadline, new.history, new.hooks)
    returning j.id into id;
    if id is null then
        -- The key is held: by this schedule's run of this second, or not at all.
        select j.id into id from cronq.jobs j
        where j.idempotency_key = k and j.schedule = new.name and j.enqueued_by = new.created_by;
        if id is null then
            raise exception 'schedule "%": key % is held by another job', new.name, k using errcode = '23505';
        end if;
    end if;
    if new.last_job_id is null or new.last_job_id < id then
        new.last_job_id := id;
    end if;
    new.run_now := null;
    return new;
end
$$;
revoke execute on function cronq.schedules_run_now() from public;

drop trigger if exists schedules_run_now on cronq.schedules;
create trigger schedules_run_now before update of run_now on cronq.schedules
    for each row when (new.run_now is not null) execute function cronq.schedules_run_now();

create or replace function cronq.run_schedule(name text, force boolean default false)
returns bigint
language plpgsql volatile
set search_path = pg_catalog, pg_temp as $$
#variable_conflict use_variable
declare
    t timestamptz := date_trunc('second', now());
    id bigint;
begin
    -- Row-level security lets the caller (current_user, wherever this is
    -- called from) update only a schedule it may manage: its own, or any
    -- for a member of cronq_admin; schedules_run_now writes the job.
    update cronq.schedules x set run_now = case when coalesce(force, false) then 'force' else 'run' end
    where x.name = name;
    if not found then
        raise exception 'schedule "%" does not exist', name using errcode = 'P0002',
            hint = 'A role sees only the schedules it created, unless it is a member of cronq_admin.';
    end if;
    select j.id into id from cronq.jobs j
    where j.idempotency_key = 'schedule:' || name || ':manual:'
                              || to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
      and j.schedule = name;
    return id;
end
$$;
revoke execute on function cronq.run_schedule(text, boolean) from public;
