-- 0040_next_run_not_past.sql — a role plans its schedule from now, not
-- from a time long past.
--
-- A member of cronq_user may write its schedules' next_run_at (the CLI
-- plans a schedule it adds or replaces), and `cronq check --max-overdue`
-- and `status` measure a schedule's lateness from it: a role that set its
-- own next run three days back made every admin's check CRITICAL ("overdue
-- 3d"), again after each wake if it looped (helper-78). Its only other use,
-- replaying fire times, is a backfill's (`backfill --schedule`), which the
-- ledger and the keys account for. Now such a role may not write a next
-- run more than a minute before the database's clock (22023, nothing
-- written); a value it leaves as it was is not looked at, and the owner, a
-- superuser and members of cronq_admin may still rewind a schedule by hand.
-- The wake (materialise, as the owner) writes future times only. The
-- trigger is named to fire after schedules_times, whose refusal of a time
-- out of range says more.
--
-- Binaries read nothing new; the CLI writes the first fire time after the
-- database's now.
-- compatible-from: 25

create or replace function cronq.schedules_times_past() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
begin
    if tg_op = 'UPDATE' and new.next_run_at is not distinct from old.next_run_at then
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
    for each row when (new.next_run_at < now() - interval '1 minute')
    execute function cronq.schedules_times_past();
