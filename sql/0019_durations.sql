-- 0019_durations.sql — the database reads durations as the binary does.
--
-- lib/util/duration.c now takes decimals and PostgreSQL's unit words
-- ("1.5h", "30 days", "2 hours 30 minutes", case-insensitive, spaces or
-- tabs between a number and its unit and between parts, each unit at most
-- once and largest first, a bare number being seconds). The payload rules
-- that name a duration (a purge's older_than) must accept what the CLI
-- accepts (tests/payload_cases.tsv runs the same cases through both), so
-- cronq.is_duration follows. One difference is left, as before: the C
-- refuses more than 100 years.
--
-- Binaries before this schema refuse the new forms on their side only:
-- compatible-from: 10

create or replace function cronq.is_duration(t text) returns boolean
language sql immutable parallel safe
return t <> '' and t !~ '^[ \t]' and t !~ '[ \t]$'
    and t ~* ('^([0-9]+(\.[0-9]+)?'
              || '|([0-9]+(\.[0-9]+)?[ \t]*(weeks|week|w))?'
              || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(days|day|d))?'
              || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(hours|hour|hrs|hr|h))?'
              || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(minutes|minute|mins|min|m))?'
              || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(seconds|second|secs|sec|s))?'
              || '([ \t]*[0-9]+(\.[0-9]+)?[ \t]*(milliseconds|millisecond|msecs|msec|ms))?)$');
