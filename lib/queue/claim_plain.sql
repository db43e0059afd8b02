-- claim_plain: claim.sql where flow control is not in effect (no limit
-- defined, nothing but schedules paused), the common case of a drain: the
-- same walk, lock, update and columns, without the steps that read the
-- limits and pauses (planned, and run, for every batch otherwise). A
-- worker sends it after a claim.sql whose last column said flow control
-- was not in effect. Its guard reads that again, once, at the start: a
-- limit or pause made since then turns the walk off, the claim comes back
-- empty, and the worker claims again with claim.sql, which obeys it (as
-- it does after any empty plain claim: nothing due looks the same). The
-- guard reads cronq.limits under ROW SHARE, as claim.sql's steps do: a
-- limit being added (cronq.limits_serialise, sql/0012_limits.sql) waits
-- for the claims under way and holds this one back until it commits, so
-- that no claim whose snapshot missed the limit takes jobs after a claim
-- that counted it.
-- Returns claim.sql's columns; no row is ever left for want of room, and
-- flow control was not in effect. Its walk's conditions, update and
-- columns are claim.sql's, word for word (t_sql checks).
--
-- Parameters: claim.sql's ($1 worker, $2 lease in ms, $3 at most this many
-- jobs, $4 only these queues, $5 only these types, $6 never these queues).
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE claim_plain AS
-- then
--   EXPLAIN EXECUTE claim_plain('me', 60000, 10, null, null, null);
with taken as (
    select id
    from cronq.jobs
    where status in ('queued', 'failed') and run_at <= now()
      and (expires_at is null or expires_at > now())
      and ($4::text[] is null or queue = any($4::text[]))
      and ($5::text[] is null or type = any($5::text[]))
      and ($6::text[] is null or queue <> all($6::text[]))
      and (select not exists (select from cronq.limits for key share)
                  and cardinality(cronq.paused_keys()) = 0)
    order by priority, run_at, id
    limit $3::int
    for update skip locked
)
update cronq.jobs j set status = 'running', attempts = j.attempts + 1,
    locked_by = $1, locked_until = now() + $2::bigint * interval '1 millisecond',
    started_at = clock_timestamp(), updated_at = now()
where j.id = any(array(select id from taken))
returning j.id, j.attempts, j.max_attempts, j.priority,
    date_part('epoch', j.run_at), j.type, j.queue, j.payload::text,
    j.idempotency_key, to_char(j.scheduled_for at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    j.enqueued_by, (extract(epoch from j.timeout) * 1000)::bigint, (select clock_timestamp()),
    0, false;
