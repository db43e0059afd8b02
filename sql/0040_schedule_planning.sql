-- 0040_schedule_planning.sql — a role plans its schedule from now, not
-- from a time long past; a schedule left without a next run is planned
-- from when it was left so.
--
-- A member of cronq_user may write its schedules' next_run_at (the CLI
-- plans a schedule it adds or replaces), and `cronq check --max-overdue`
-- and `status` measured a schedule's lateness from it: a role that set its
-- own next run three days back made every admin's check CRITICAL ("overdue
-- 3d"), again after each wake if it looped (helper-78). Its only other use,
-- replaying fire times, is a backfill's (`backfill --schedule`), which the
-- ledger and the keys account for. Now such a role may not move a next run
-- back to more than a minute before the clock (22023, nothing written); a
-- value it leaves as it was or moves on is not looked at (a resume of a
-- pause that ended by itself sets the pause's end), and the owner, a
-- superuser and members of cronq_admin may still rewind a schedule by
-- hand. The clock, not the transaction's start: a transaction held open
-- would move the bound back with it. The wake (materialise, as the owner)
-- writes future times only. The trigger is named to fire after
-- schedules_times, whose refusal of a time out of range says more. (A
-- change of spread alone moves the next run by the offsets' difference,
-- up to a day back: the lateness that check and status show is counted
-- from the schedule's last change too, so that it does not read as late.)
--
-- A schedule with no next run (written so with SQL, its expression or
-- zone changed, or next_run_at set to null) is planned by the next wake
-- from updated_at, the moment it was left so, so that a fire time between
-- that write and the wake is decided, not lost (binaries of 40 on; older
-- ones plan from the wake). But next_run_at is not among the columns that
-- make schedules_guard stamp updated_at: set to null alone, the row kept
-- an old updated_at, and the wake replayed up to 100 fire times decided
-- long before, jobs and ledger rows twice (helper-79). Now every write
-- that leaves a schedule without a next run stamps updated_at with the
-- clock (schedules_unplanned), whatever else it changes, but for one that
-- changes nothing of an unplanned schedule (a run by hand, helper-80);
-- binaries of 40 on also plan no earlier than the schedule's last enqueue.
--
-- Binaries read nothing new; the CLI writes the first fire time after the
-- database's now.
-- compatible-from: 25

create or replace function cronq.schedules_times_past() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if tg_op = 'UPDATE' and new.next_run_at >= old.next_run_at then
        return new;
    end if;
    if cronq.may_act_for_others(tg_relid) or (select cronq.is_admin()) then
        return new;
    end if;
    raise exception 'schedule "%": next_run_at % is in the past', new.name,
        to_char(new.next_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        using errcode = '22023',
              hint = 'A role plans its schedule from now; cronq backfill --schedule writes past fire times.';
end
$$;

drop trigger if exists schedules_times_past on cronq.schedules;
create trigger schedules_times_past before insert or update of next_run_at on cronq.schedules
    for each row when (new.next_run_at < clock_timestamp() - interval '1 minute')
    execute function cronq.schedules_times_past();

create or replace function cronq.schedules_unplanned() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    -- A row already unplanned that no change of the schedule touches (a
    -- run by hand's run_now, a wake's own update) keeps its moment: a run
    -- by hand restamped it, and the fire time before it was lost.
    if tg_op = 'UPDATE' and old.next_run_at is null
       and new.updated_at is not distinct from old.updated_at then
        return new;
    end if;
    new.updated_at := clock_timestamp();
    return new;
end
$$;

-- Named to fire after schedules_guard, which stamps updated_at with now().
drop trigger if exists schedules_unplanned on cronq.schedules;
create trigger schedules_unplanned before insert or update on cronq.schedules
    for each row when (new.next_run_at is null)
    execute function cronq.schedules_unplanned();
