-- 0009_payload_rules.sql — two places where the database's payload rules
-- said otherwise than the C ones (lib/tasks/*.c), found by running the
-- cases of tests/payload_cases.tsv through both:
--   - a "sql" task's statement made only of tabs, carriage returns or
--     newlines was accepted: btrim() strips spaces alone, where sql.c
--     skips " \t\r\n";
--   - the unknown key named was the first in the database's collation,
--     where the C names the first in byte order (strcmp): in a database
--     whose collation is not "C", {"b": 1, "B": 1} named "b" and the C "B".
-- As 0006 and 0007: SQL-standard bodies, the same attributes; every
-- statement may run again (create or replace).

create or replace function cronq.unknown_key(p jsonb, allowed text[]) returns text
language sql immutable strict parallel safe
return (select k from jsonb_object_keys(p) k where k <> all (allowed) order by k collate "C" limit 1);

create or replace function cronq.payload_rules_sql(p jsonb) returns text
language sql stable parallel safe
return case
    when cronq.unknown_key(p, '{sql,transaction}') is not null
        then format('unknown key "%s"', cronq.unknown_key(p, '{sql,transaction}'))
    when not p ? 'sql' then '"sql" is required'
    when jsonb_typeof(p -> 'sql') <> 'string' or btrim(p ->> 'sql', E' \t\r\n') = ''
        then '"sql" must be a non-empty string'
    when p ? 'transaction' and jsonb_typeof(p -> 'transaction') <> 'boolean'
        then '"transaction" must be true or false'
end;
