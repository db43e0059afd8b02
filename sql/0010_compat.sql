-- 0010_compat.sql — rolling upgrades: cronq.schema_compatible_from(), a
-- constant SQL function returning the oldest binary (the schema version it
-- was built for) that still works with this schema. A binary built for
-- version B uses a schema at version S when S = B, or S > B and
-- cronq.schema_compatible_from() <= B; an older schema is refused (run
-- cronq migrate), and so is a newer one that says otherwise (upgrade cronq).
-- A wake reads it in its first statement beside cronq.schema_version(),
-- and, like that one, it is a constant: no table to open.
--
-- Each migration declares its own value in a header line of its own (read
-- by scripts/embed-sql.sh into the binary's migration table):
-- compatible-from: 10
-- Without one it is the migration's own version: no older binary. The
-- schema's value is the highest that its migrations declare, which cronq
-- migrate (re)writes as it does cronq.schema_version()
-- (lib/schema/migrate.c); this one is 10 since the binaries before it know
-- nothing of it and refuse any newer schema.

create or replace function cronq.schema_compatible_from() returns integer
language sql immutable parallel safe
return 10;
