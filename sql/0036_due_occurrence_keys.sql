-- 0036_due_occurrence_keys.sql — a role writes a schedule's occurrence
-- key only for a fire time already due.
--
-- A schedule's occurrence keys (schedule:NAME:FIRE_TIME, and
-- schedule:NAME:manual:TIME) belong to its author: its backfills write
-- them, and an INSERT with the key and the schedule set. Any fire time was
-- accepted, so an author could write jobs holding the keys of occurrences
-- years ahead, remove the schedule, and leave them: whoever took the name
-- next had those occurrences refused one by one when they came due (the
-- ledger's `refused`), a name squatted by jobs the new author cannot see.
-- A fire time later than now is not a backfill's to write: the schedule
-- enqueues it itself once due. So a role under row-level security (a
-- member of cronq_user) is refused such a key (42501), and `cronq backfill
-- --schedule` refuses a range holding an occurrence not due yet. The owner
-- (materialisation writes due occurrences, run_schedule now's), superusers
-- and BYPASSRLS roles are not checked, as before. A new schedule fires
-- from when it was made, so no job an earlier author wrote holds one of
-- the keys it makes itself; those of fire times before it (a backfill, a
-- next run set in the past) may be held, and are refused aloud.
--
-- Jobs written before this migration are left as they are.
--
-- Binaries read nothing new.
-- compatible-from: 25

-- As 0016's, with one more case: a fire time not due yet.
create or replace function cronq.reserved_key_error(p_key text, p_schedule text,
                                                    p_fire timestamptz, p_role text)
returns text
language sql stable
begin atomic
    select case
        when p_schedule is not null
             and not exists (select 1 from cronq.schedules s
                             where s.name = p_schedule and s.created_by = p_role)
            then format('role "%s" may not enqueue jobs of schedule "%s": it is not its author',
                        p_role, p_schedule)
        -- The whole key, not a prefix: names may hold ":", and the schedule
        -- "a:2026-11-24T20" must not own "schedule:a:2026-11-24T20:00:00Z".
        when starts_with(p_key, 'schedule:')
             and p_key is distinct from 'schedule:' || p_schedule || ':'
                 || to_char(p_fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
             and p_key is distinct from 'schedule:' || p_schedule || ':manual:'
                 || to_char(p_fire at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            then format('idempotency key "%s" is reserved: keys starting with "schedule:" belong to the schedule and fire time they name',
                        left(p_key, 200))
        -- Not before year 1 either: to_char's YYYY drops the era, so a
        -- fire time BC wrote the key of the same date AD (helper-75).
        when starts_with(p_key, 'schedule:')
             and not (p_fire >= timestamptz '0001-01-01 00:00:00+00' and p_fire <= now())
            then format('idempotency key "%s" names a fire time not due yet (or before year 1): a schedule enqueues its occurrences itself once they are due',
                        left(p_key, 200))
        when starts_with(p_key, 'notify:')
            then format('idempotency key "%s" is reserved: keys starting with "notify:" belong to hooks',
                        left(p_key, 200))
    end;
end;
