-- held: whether due jobs wait only for room under a limit (cronq.limits):
-- asked by a worker whose claim came back empty while limits are defined,
-- to wait for room rather than end the wake. A due job (under the claim's
-- filters, not paused) with a key full now; and whether a running job's
-- lease has expired (its runner died: its row fills a limit's room until
-- the rescue ends it, which the waiting worker then does).
--
-- Parameters:
--   $1  text[]    only these queues, or null for any (as the claim's $4)
--   $2  text[]    only these types, or null for any (as the claim's $5)
--   $3  text[]    never these queues, or null for none (as the claim's $6)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE held AS
-- then
--   EXPLAIN EXECUTE held(null, null, null);
with fk as materialized (select cronq.full_keys() as ks)
select cardinality((select ks from fk)) > 0 and exists (
    select 1 from cronq.jobs
    where status in ('queued', 'failed') and run_at <= now()
      and (expires_at is null or expires_at > now())
      and ($1::text[] is null or queue = any($1::text[]))
      and ($2::text[] is null or type = any($2::text[]))
      and ($3::text[] is null or queue <> all($3::text[]))
      and (cardinality((select cronq.paused_keys())) = 0
           or not cronq.held((select cronq.paused_keys()), queue, type, limit_key))
      and (select ks from fk) && cronq.job_keys(queue, type, schedule, limit_key)),
    exists (select 1 from cronq.jobs where status = 'running' and locked_until < now());
