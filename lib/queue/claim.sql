-- claim: take up to $3 due jobs for worker $1 and mark them running.
-- The due rows, in run order, are locked FOR UPDATE SKIP LOCKED so that
-- concurrent runners never wait on each other; the CTE feeds an
-- id = any(array(...)) so that the UPDATE keeps a primary-key index scan.
-- Sent alone, or right after the previous batch's outcomes (record.sql).
-- Rows come back in any order: the C sorts them into run order. Jobs of a
-- paused queue or type (cronq.pauses, until resumed or until its time) are
-- not taken: the keys paused are read once per claim (an empty table's
-- probe when none is), each job compared with them.
--
-- Parameters:
--   $1  text      the worker's name (locked_by)
--   $2  bigint    the lease, in milliseconds (run --lease; 60000 by default)
--   $3  int       at most this many jobs (run --batch; 10 by default)
--   $4  text[]    only these queues, or null for any
--   $5  text[]    only these types, or null for any
--   $6  text[]    never these queues (run --exclude-queue), or null for none;
--                 a queue in both $4 and $6 is excluded
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE claim AS
-- then
--   EXPLAIN EXECUTE claim('me', 60000, 10, null, null, null);
--   EXPLAIN EXECUTE claim('me', 60000, 10, '{default}', '{noop,sleep}', null);
--   EXPLAIN EXECUTE claim('me', 60000, 10, null, null, '{reports,bulk}');
with due as (
    select id from cronq.jobs
    where status in ('queued', 'failed') and run_at <= now()
      and (expires_at is null or expires_at > now())
      and ($4::text[] is null or queue = any($4::text[]))
      and ($5::text[] is null or type = any($5::text[]))
      and ($6::text[] is null or queue <> all($6::text[]))
      and (cardinality((select cronq.paused_keys())) = 0
           or not cronq.held((select cronq.paused_keys()), queue, type))
    order by priority, run_at, id
    limit $3::int
    for update skip locked)
update cronq.jobs j set status = 'running', attempts = j.attempts + 1,
    locked_by = $1, locked_until = now() + $2::bigint * interval '1 millisecond',
    started_at = now(), updated_at = now()
where j.id = any(array(select id from due))
returning j.id, j.attempts, j.max_attempts, j.priority,
    extract(epoch from j.run_at), j.type, j.queue, j.payload::text,
    j.idempotency_key, to_char(j.scheduled_for at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    j.enqueued_by, (extract(epoch from j.timeout) * 1000)::bigint, now();
