-- claim: take up to $3 due jobs for worker $1 and mark them running.
-- The due rows, in run order, are locked FOR UPDATE SKIP LOCKED so that
-- concurrent runners never wait on each other; the CTE feeds an
-- id = any(array(...)) so that the UPDATE keeps a primary-key index scan.
-- Sent alone, or right after the previous batch's outcomes (record.sql).
-- Rows come back in any order: the C sorts them into run order. The last
-- three columns hold one value for the whole batch (read from the first
-- row): the database's clock as the first row is written, after any wait
-- for a limit's lock, the base of the times the worker records (counted
-- from the answer's arrival, they are never later than the moments they
-- stand for, and a job's recorded start never precedes its claim; each
-- row's started_at is its own: a job counts under its limits from then);
-- the due rows left for want of room (the worker claims no more than it
-- got next time: locking rows it cannot take costs); and whether flow
-- control is in effect, a limit defined or a queue, type or limit key
-- paused. While it is not, the worker's next claims are claim_plain.sql,
-- this statement without the flow-control steps, until one of those comes
-- back empty. Jobs of a
-- paused queue or type (cronq.pauses, until resumed or until its time) are
-- not taken: the keys paused are read once per claim (an empty table's
-- probe when none is), each job compared with them. A job's keys
-- (cronq.job_keys: queue, type, schedule, its own limit key) obey the
-- limits (cronq.limits, sql/0012_limits.sql) in two steps: the walk passes
-- the jobs of keys full at the statement's start (cronq.full_keys(), read
-- without locks); then, the due rows locked, cronq.limit_room() locks the
-- limits' rows of the keys among them (one claim of a key at a time),
-- counts the keys' running jobs and recent starts afresh, the rows beyond
-- a key's room, in run order, are left for later, and the starts taken
-- are written into each rate limit's log (logged). With no limit defined
-- each step is one probe of the empty table.
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
with fk as materialized (
    select cronq.full_keys() as ks   -- once, however often the walk reads it
), due as (
    select id, priority, run_at, queue, type, schedule, limit_key
    from cronq.jobs
    where status in ('queued', 'failed') and run_at <= now()
      and (expires_at is null or expires_at > now())
      and ($4::text[] is null or queue = any($4::text[]))
      and ($5::text[] is null or type = any($5::text[]))
      and ($6::text[] is null or queue <> all($6::text[]))
      and (cardinality((select cronq.paused_keys())) = 0
           or not cronq.held((select cronq.paused_keys()), queue, type, limit_key))
      and (cardinality((select ks from fk)) = 0
           or not (select ks from fk) && cronq.job_keys(queue, type, schedule, limit_key))
    order by priority, run_at, id
    limit $3::int
    for update skip locked
), room as materialized (
    select r.key, r.room
    from cronq.limit_room(array(select distinct k from due,
                                    unnest(cronq.job_keys(due.queue, due.type, due.schedule, due.limit_key)) k
                                where k is not null), true) r
    where (select cronq.limited())
), refused as (
    select ranked.id from (
        select d.id, room.room,
            row_number() over (partition by room.key order by d.priority, d.run_at, d.id) as rank
        from due d
        cross join lateral unnest(cronq.job_keys(d.queue, d.type, d.schedule, d.limit_key)) u(key)
        join room on room.key = u.key
        where (select true from room limit 1)
    ) ranked
    where ranked.rank > ranked.room
), taken as (
    select id, queue, type, schedule, limit_key from due where id not in (select id from refused)
), logged as (
    -- each rate limit's log of starts: the window's, and these
    update cronq.limits l
    set starts = array(select s from unnest(l.starts) s where s > now() - l.per)
                 || array_fill(clock_timestamp(), array[t.n::int])
    from (select u.key, count(*) as n
          from taken
          cross join lateral unnest(cronq.job_keys(taken.queue, taken.type, taken.schedule,
                                                   taken.limit_key)) u(key)
          where (select true from room limit 1) and u.key in (select key from room)
          group by u.key) t
    where l.key = t.key and l.rate is not null)
update cronq.jobs j set status = 'running', attempts = j.attempts + 1,
    locked_by = $1, locked_until = now() + $2::bigint * interval '1 millisecond',
    started_at = clock_timestamp(), updated_at = now()
where j.id = any(array(select id from taken))
returning j.id, j.attempts, j.max_attempts, j.priority,
    date_part('epoch', j.run_at), j.type, j.queue, j.payload::text,
    j.idempotency_key, to_char(j.scheduled_for at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    j.enqueued_by, (extract(epoch from j.timeout) * 1000)::bigint, (select clock_timestamp()),
    (select count(*) from refused),
    (select cronq.limited() or cardinality(cronq.paused_keys()) > 0);
