-- 0038_retry_resume_races.sql — a dependant retried while its parent
-- ends is settled by the next wake; a schedule resumed runs the fire times
-- that come between the resume and the next wake.
--
-- A retry of a dependant (cronq.retry(), `cronq retry`) makes it blocked
-- when a parent has not succeeded: jobs_wait counts its parents as its
-- transaction sees them. A parent whose outcome committed meanwhile settled
-- only the dependants its own snapshot saw blocked; the retried one, not
-- committed yet, looked cancelled or dead to it, and was passed over. So a
-- retry that committed after its parent's outcome left the dependant
-- blocked for ever (helper-74: 1,899 of 5,000 retried beside their parent's
-- end), waiting for a parent that had succeeded, or not cancelled under
-- one that had died; nothing noted it for a wake. Now jobs_wait notes each
-- job it blocks in cronq.settle_later, as the outcomes note what they
-- cannot settle: the next wake counts its parents again (a job still
-- rightly blocked is left so, its note gone). The trigger runs as the
-- owner (SECURITY DEFINER, search_path pinned): the notes are the owner's
-- table, and a trigger function cannot be called but as a trigger. Its
-- count reads the parents whatever row-level security would show: they
-- are the job's own author's (jobs_plan), or any an admin chose.
--
-- cronq.resume() of a schedule still paused set next_run_at to null, so
-- the next wake planned it from its own now: the fire times between the
-- resume and that wake were lost, without a ledger row (an every-minute
-- schedule lost one at every resume). It is now the resume's own second,
-- the next whole second after now (as a pause that ended by itself
-- resumes from its end): the wake looks for occurrences from there. The
-- fire times that came while paused stay skipped.
--
-- Binaries read nothing new.
-- compatible-from: 25

create or replace function cronq.jobs_wait() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
begin
    new.waiting_for := (select count(*) from cronq.jobs p
                        where p.id = any(new.depends_on) and p.status <> 'succeeded');
    if new.waiting_for > 0 then
        new.status := 'blocked';
        insert into cronq.settle_later (job_id) values (new.id);
    end if;
    return new;
end
$$;

create or replace function cronq.resume(key text) returns boolean
language plpgsql set search_path = pg_catalog, pg_temp as $$
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
    -- it was paused stay skipped, catchup all or not. Paused still, from
    -- the second after the resume; ended by its until (and no wake came
    -- since), from that time.
    if found and key like 'schedule:%' then
        update cronq.schedules s
        set next_run_at = case when was then date_trunc('second', now()) + interval '1 second' else ended end
        where s.name = substr(key, 10)
          and (was or (s.next_run_at >= began and s.next_run_at < ended));
    end if;
    return was;
end
$$;
