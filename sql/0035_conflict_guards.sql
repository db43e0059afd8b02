-- 0035_conflict_guards.sql — an INSERT … ON CONFLICT DO UPDATE of a role
-- never reaches another role's schedule; an enqueue whose unique key a
-- late job holds, locked by another transaction, fails instead of
-- answering with that job.
--
-- INSERT … ON CONFLICT (name) DO UPDATE … WHERE cond locks the existing
-- row and evaluates cond on it before row-level security checks that the
-- row may be updated (PostgreSQL's order, in ExecOnConflictUpdate). So a
-- role that may insert schedules could name another role's schedule and
-- read any of its columns one bit at a time (cond true: the policy's
-- error; false: INSERT 0 0), or, with cond false, keep its row locked for
-- as long as its transaction stays open: the wake passed over it, its
-- author's edits and `schedule run` waited. Every BEFORE ROW INSERT
-- trigger fires before that conflict is looked for, so the name is
-- checked there: taken by a schedule the caller may not see, the insert
-- fails as the unique index would fail it (23505, the words cronq.schedule()
-- and the CLI already give). Admins (cronq.may_act_for_others) see and
-- may change every schedule: nothing is checked for them.
--
-- Left as it is: a schedule being inserted in a transaction not yet
-- committed is not seen by the check; an insert of the same name waits for
-- that transaction and then reaches the conflict. Racing it gains nothing
-- over taking the name first, which any role may do; jobs' keys are the
-- same (jobs_guard and jobs_admit check committed holders), and what is
-- gained there is one job held locked, by a transaction that must stay
-- open, and one bit of it.
--
-- Binaries read nothing new.
-- compatible-from: 25

-- Whether any schedule has this name, the caller's or not: it runs as the
-- owner and says no more than that (key_in_use's twin for names, which a
-- unique violation tells anyway).
create or replace function cronq.schedule_name_in_use(p_name text) returns boolean
language sql stable security definer
set search_path = pg_catalog, pg_temp as $$
    select exists (select 1 from cronq.schedules s where s.name = p_name)
$$;
revoke execute on function cronq.schedule_name_in_use(text) from public;

create or replace function cronq.schedules_name_check() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if cronq.schedule_name_in_use(new.name)
       and not cronq.may_act_for_others(tg_relid)
       and not exists (select 1 from cronq.schedules s where s.name = new.name) then
        raise exception 'schedule "%" belongs to another role', new.name
            using errcode = '23505',
                  hint = 'Schedule names are shared by every role: choose another name.';
    end if;
    return new;
end
$$;
drop trigger if exists schedules_name_check on cronq.schedules;
create trigger schedules_name_check before insert on cronq.schedules
    for each row execute function cronq.schedules_name_check();

-- As 0013's, with one more case: a late holder that expire_holder could
-- not end (another transaction keeps it locked: 2 s waited) is not "already
-- enqueued" — it can never run, and answering with it dropped the new work
-- without a word. The enqueue fails, to be tried again (55P03).
create or replace function cronq.jobs_admit() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp set enable_seqscan = off as $$
declare
    h bigint;
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
        select j.id into h from cronq.jobs j
        where j.unique_key = new.unique_key and j.status in ('queued', 'failed', 'running')
          and j.status <> 'running' and j.expires_at <= now();
        if h is not null then
            raise exception 'unique key "%" is held by job %, past its deadline and locked by another transaction',
                left(new.unique_key, 200), h
                using errcode = '55P03',
                      hint = 'The job cannot run any more; enqueue again once that transaction ends.';
        end if;
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
