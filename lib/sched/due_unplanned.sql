-- due_unplanned: the first pass of materialisation. The enabled schedules
-- with no next_run_at (written with SQL, or their expression changed),
-- locked FOR UPDATE SKIP LOCKED so that concurrent runners split them
-- rather than wait. Planned from the write that left them so (updated_at,
-- which schedules_unplanned stamps with the clock on every write of a row
-- left without a next run, schema 40), or from their last enqueue if
-- later (what a wake decided then is not decided again): their
-- occurrences are looked for from the second after it, so that a fire
-- time between that write and this wake is decided as any due one
-- (catch-up, overlap, pauses), and none before it is enqueued; their next
-- run is their first fire time after this wake. due.sql, the second pass, takes those due; the C
-- computes the fire times and writes jobs and next runs through
-- cronq.materialise() in the same transaction. Two passes, each read in
-- the order of the partial index schedules_due with a LIMIT (one "due or
-- null" query cannot be: it sorted every due schedule for each batch).
-- Columns: name, cron, timezone, catchup, overlap, the epoch second to
-- look for occurrences from, now as an epoch second, and whether the
-- schedule's last job is still unfinished (queued, running or failed:
-- overlap skip waits for it), whether it is paused, when its pause ends,
-- its anchor and its spread, its last disabled spell, its last job's
-- status and the newest fire time decided (as due.sql: a spread changed
-- with the expression plans the fire times after it, not the one just run
-- at its new offset).
--
-- Parameters:
--   $1  int  at most this many schedules (a transaction's batch)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE due_unplanned AS
-- then
--   EXPLAIN EXECUTE due_unplanned(1000);
with s as materialized (
    -- the batch first, by the index in its order; only then its jobs
    -- and pauses (joined before the limit, every due schedule was
    -- read, joined and sorted for each batch of a wake)
    select s.name, s.cron, s.timezone, s.catchup, s.overlap,
        greatest(s.updated_at, s.last_enqueued_at) as planned_from, s.anchor, s.spread,
        s.disabled_from, s.disabled_until, s.last_job_id, s.decided_through
    from cronq.schedules s
    where s.enabled and s.next_run_at is null
    limit $1::int
    for update of s skip locked
)
select s.name, s.cron, s.timezone, s.catchup, s.overlap,
    floor(extract(epoch from least(s.planned_from, now())))::bigint + 1,
    floor(extract(epoch from now()))::bigint,
    coalesce(j.status = 'running' or j.status in ('queued', 'failed')
             and (j.expires_at is null or j.expires_at > now()), false),
    p.schedule is not null and (p.until is null or p.until > now()),
    floor(extract(epoch from p.until))::bigint, floor(extract(epoch from p.paused_at))::bigint,
    floor(extract(epoch from s.anchor))::bigint, coalesce(floor(extract(epoch from s.spread)), 0)::bigint,
    floor(extract(epoch from s.disabled_from))::bigint, floor(extract(epoch from s.disabled_until))::bigint,
    j.status, floor(extract(epoch from s.decided_through))::bigint
from s left join lateral (
        -- its last job, by the primary key (limit 1: never a join that reads the whole table)
        select j.status, j.expires_at from cronq.jobs j where j.id = s.last_job_id limit 1) j on true
    left join cronq.pauses p on p.schedule = s.name;
