-- 0028_name_check.sql — a schedule's name is checked in a fraction of
-- the time, the same names allowed.
--
-- A check constraint is evaluated for every row an update writes, whatever
-- columns it changes. The name's, '^[A-Za-z0-9_.:@-]{1,200}$', is a
-- regular expression whose bounded repetition makes an automaton of 200
-- states: ~6.5 µs a row, half of what moving a due schedule on costs the
-- wake's materialisation (1,000 schedules: 13 ms, 6.5 of them this check;
-- ~0.5 µs a row with the form below). Every due schedule's row is updated
-- at each of its fire times.
--
-- The same names, and no others: one or more of those characters, at most
-- 200 of them (characters, as the expression counted). Rows written
-- before passed the old form, so they pass this one; the constraint keeps
-- its name, which an insert's refusal names.
--
-- Nothing a binary reads changes.
-- compatible-from: 10
--
-- Every statement may run again.

alter table cronq.schedules
    drop constraint if exists schedules_name_check,
    add constraint schedules_name_check
        check (name ~ '^[A-Za-z0-9_.:@-]+$' and pg_catalog.length(name) <= 200);
