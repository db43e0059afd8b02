-- 0038_retry_resume_races.sql — a dependant retried while its parent
-- ends counts that end; a schedule resumed runs the fire times that come
-- between the resume and the next wake.
--
-- A retry of a dependant (cronq.retry(), `cronq retry`) makes it blocked
-- when a parent has not succeeded: jobs_wait counts its parents as its
-- transaction sees them. A parent whose outcome committed meanwhile settled
-- only the dependants its own snapshot saw blocked; the retried one, not
-- committed yet, looked cancelled or dead to it, and was passed over. So a
-- retry that committed after its parent's outcome left the dependant
-- blocked for ever (helper-74: 1,899 of 5,000 retried beside their parent's
-- end). Now jobs_wait locks the parents it counts, as jobs_plan locks an
-- enqueue's (FOR NO KEY UPDATE): a parent's outcome under way is waited
-- for and then counted; one that comes later waits for the retry's commit
-- and then sees the dependant blocked. (Noting each retried job for the
-- next wake, tried first, let a role flood the notes with cancel-retry
-- loops and had the wake cancel a dependant retried under a dead parent,
-- which the retry means to keep waiting: helper-76.) An author's open
-- transaction that retries holds its own parents, as an enqueue's does:
-- the batch recording one of them waits 2 s at most (semantics.md).
--
-- cronq.resume() of a schedule still paused set next_run_at to null, so
-- the next wake planned it from its own now: the fire times between the
-- resume and that wake were lost, without a ledger row (an every-minute
-- schedule lost one at every resume). It is now the next whole second
-- after the resume (the clock's, not the transaction's start: a wake
-- during a long transaction may have decided later fire times, paused),
-- or the next run a wake already planned if that is later (as a pause
-- that ended by itself resumes from its end): the wake looks for
-- occurrences from there. The fire times that came while paused stay
-- skipped.
--
-- Binaries read nothing new.
-- compatible-from: 25

-- As 0017's, the parents locked as jobs_plan locks an enqueue's.
create or replace function cronq.jobs_wait() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.waiting_for := (select count(*) filter (where p.status <> 'succeeded')
                        from (select p.status from cronq.jobs p
                              where p.id = any(new.depends_on)
                              for no key update of p) p);
    if new.waiting_for > 0 then
        new.status := 'blocked';
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
        set next_run_at = case when was
                               then greatest(s.next_run_at, date_trunc('second', clock_timestamp()) + interval '1 second')
                               else ended end
        where s.name = substr(key, 10)
          and (was or (s.next_run_at >= began and s.next_run_at < ended));
    end if;
    return was;
end
$$;
