-- 0037_finite_schedule_times.sql — a schedule's next run and a pause's end
-- are instants of years 1 to 9999, as a job's times are (0024); a cancel's
-- end and a job's last change are the database's clock.
--
-- 0024 bounded jobs.run_at and jobs.expires_at. Three more times a member
-- of cronq_user writes were left open:
--   * schedules.next_run_at (its column grant): '-infinity' is due, and
--     the wake's due statement turns it into an epoch second, a bigint:
--     "cannot convert infinity to bigint" ended every runner's wake with
--     70 before it claimed a job, for every role, until the row was
--     changed; status and check failed for everyone ("cannot subtract
--     infinite timestamps");
--   * pauses.until (cronq.pause() asks only that it be later than now,
--     which 'infinity' is; an UPDATE of the column may set '-infinity'):
--     the same statement, the same end;
--   * jobs.finished_at, which a cancel sets: 'infinity' made `status
--     --html` fail for everyone; and jobs.updated_at, which any change a
--     role may make sets.
-- Now next_run_at outside [0001-01-01, 10000-01-01) UTC is refused (22008:
-- the CLI exits 65, nothing written); a pause until 'infinity' is a pause
-- until resumed (until null, as without --until), any other until out of
-- that range refused; and the transition guard, which checks every change
-- a role under row-level security makes to a job, sets a cancel's
-- finished_at and every such change's updated_at to now(), whatever the
-- statement said. The runners' own statements (no row-level security) are
-- not touched: a trigger's WHEN is evaluated before any function call.
--
-- Rows written before are given their meaning in range: a schedule's next
-- run out of it is planned again at the next wake (null); a pause until
-- 'infinity' or past 9999 lasts until resumed; one that ended before year 1
-- (an empty window of skipped occurrences) is deleted; a finished_at or
-- updated_at out of range is now().
--
-- Binaries read nothing new.
-- compatible-from: 25

update cronq.schedules set next_run_at = null
where not (next_run_at >= timestamptz '0001-01-01 00:00:00+00'
           and next_run_at < timestamptz '10000-01-01 00:00:00+00');
-- (pauses_stamp would stamp the rows with the migration's role and time)
alter table cronq.pauses disable trigger pauses_stamp;
update cronq.pauses set until = null where until >= timestamptz '10000-01-01 00:00:00+00';
alter table cronq.pauses enable trigger pauses_stamp;
delete from cronq.pauses where until < timestamptz '0001-01-01 00:00:00+00';
update cronq.jobs set finished_at = now()
where not (finished_at >= timestamptz '0001-01-01 00:00:00+00'
           and finished_at < timestamptz '10000-01-01 00:00:00+00');
update cronq.jobs set updated_at = now()
where not (updated_at >= timestamptz '0001-01-01 00:00:00+00'
           and updated_at < timestamptz '10000-01-01 00:00:00+00');

-- A job's scheduled_for too (no role may update it): a fire time BC made
-- the key of the same date AD (to_char's YYYY drops the era), so a job
-- could hold a later author's occurrence (helper-75). Those written
-- before lose the time and such a key.
update cronq.jobs set scheduled_for = null,
    idempotency_key = case when starts_with(idempotency_key, 'schedule:') then null else idempotency_key end
where not (scheduled_for >= timestamptz '0001-01-01 00:00:00+00'
           and scheduled_for < timestamptz '10000-01-01 00:00:00+00');

-- As 0024's, naming scheduled_for when it is the time out of range.
create or replace function cronq.jobs_times_refused() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
declare
    bad_run_at boolean := (tg_op = 'INSERT' or new.run_at is distinct from old.run_at)
        and not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
                 and new.run_at < timestamptz '10000-01-01 00:00:00+00');
    bad_expires_at boolean := not bad_run_at
        and not (new.expires_at >= timestamptz '0001-01-01 00:00:00+00'
                 and new.expires_at < timestamptz '10000-01-01 00:00:00+00');
    col text := case when bad_run_at then 'run_at' when bad_expires_at then 'expires_at' else 'scheduled_for' end;
    val timestamptz := case when bad_run_at then new.run_at when bad_expires_at then new.expires_at
                            else new.scheduled_for end;
begin
    raise exception 'invalid %: "%" is not a time of years 1 to 9999', col, val using errcode = '22008';
end
$$;

drop trigger if exists jobs_times on cronq.jobs;
create trigger jobs_times before insert on cronq.jobs for each row
    when (not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
               and new.run_at < timestamptz '10000-01-01 00:00:00+00')
          or not (new.expires_at >= timestamptz '0001-01-01 00:00:00+00'
                  and new.expires_at < timestamptz '10000-01-01 00:00:00+00')
          or not (new.scheduled_for >= timestamptz '0001-01-01 00:00:00+00'
                  and new.scheduled_for < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.jobs_times_refused();

-- A time out of range refused, naming its column (the trigger's argument)
-- and its value: one function for the schedules' and the pauses' triggers.
create or replace function cronq.time_refused() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    raise exception 'invalid %: "%" is not a time of years 1 to 9999', tg_argv[0],
        to_jsonb(new) ->> tg_argv[0] using errcode = '22008';
end
$$;

-- Of spread too: schedules_guard (which fires first, by name) moves the
-- next run by a changed spread's difference (helper-75: a day past 9999).
drop trigger if exists schedules_times on cronq.schedules;
create trigger schedules_times before insert or update of next_run_at, spread on cronq.schedules for each row
    when (not (new.next_run_at >= timestamptz '0001-01-01 00:00:00+00'
               and new.next_run_at < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.time_refused('next_run_at');

-- A pause until 'infinity' is one until resumed (pauses_forever fires
-- before pauses_until, by name); anything else out of range is refused.
create or replace function cronq.pauses_forever() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    new.until := null;
    return new;
end
$$;

drop trigger if exists pauses_forever on cronq.pauses;
create trigger pauses_forever before insert or update of until on cronq.pauses for each row
    when (new.until = 'infinity'::timestamptz)
    execute function cronq.pauses_forever();
drop trigger if exists pauses_until on cronq.pauses;
create trigger pauses_until before insert or update of until on cronq.pauses for each row
    when (not (new.until >= timestamptz '0001-01-01 00:00:00+00'
               and new.until < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.time_refused('until');

-- As 0017's, each change it lets through stamped with now(): updated_at,
-- and a cancel's finished_at.
create or replace function cronq.jobs_transition_guard() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    -- An admin is trusted with every job (and may run cronq run itself).
    if cronq.is_admin() then
        return new;
    end if;
    if not (case
        -- retry
        when old.status in ('dead', 'failed', 'succeeded', 'cancelled') and new.status = 'queued'
             and new.attempts = 0 and new.locked_by is null and new.locked_until is null
             and not new.cancel_requested and new.started_at is null and new.finished_at is null
            then true
        -- the rest leave the attempt and its lease as they are
        when (new.attempts, new.locked_by, new.locked_until, new.started_at)
             is distinct from (old.attempts, old.locked_by, old.locked_until, old.started_at)
            then false
        -- cancel
        when old.status in ('queued', 'failed', 'blocked') and new.status = 'cancelled'
             and not new.cancel_requested and new.finished_at is not null
            then true
        -- a running job's cancellation, carried out by its worker
        when old.status = 'running' and new.status = 'running' and new.cancel_requested
             and new.finished_at is not distinct from old.finished_at
            then true
        -- a waiting job with a unique key replaced
        when old.status in ('queued', 'failed') and new.status = 'queued'
             and old.unique_key is not null and new.unique_key = old.unique_key
             and not new.cancel_requested and new.finished_at is null
             and (new.type, new.queue, new.priority, new.max_attempts, new.timeout,
                  new.idempotency_key, new.enqueued_by)
                 is not distinct from (old.type, old.queue, old.priority, old.max_attempts,
                                       old.timeout, old.idempotency_key, old.enqueued_by)
            then true
        else false
    end) then
        raise exception 'job %: a job is changed only by cancelling or retrying it', old.id
            using errcode = '42501', hint = 'Use cronq.cancel(id), cronq.retry(id) or the CLI.';
    end if;
    if new.status = 'cancelled' then
        new.finished_at := now();
    end if;
    new.updated_at := now();
    return new;
end
$$;
