-- due: the second pass of materialisation (due_unplanned.sql is the
-- first, and says more). The enabled schedules whose next run has come,
-- most overdue first, locked FOR UPDATE SKIP LOCKED so that concurrent
-- runners split them rather than wait. The same columns as
-- due_unplanned.sql: name, cron, timezone, catchup, overlap, the epoch
-- second of the next run (occurrences are looked for from there), now as
-- an epoch second, and whether the schedule's last job is still
-- unfinished (running, or queued or failed and not past its deadline:
-- overlap skip waits for it; a late one can never run), and
-- whether it is paused (schedule:NAME in cronq.pauses: its occurrences
-- pass, skipped), and the end of its pause when it has one, even one that
-- has ended, and its start, as epoch seconds (the occurrences between the
-- two are skipped, whenever a wake gets to them); then its anchor (an
-- "@every" counts its periods from it; null: the epoch) as an epoch
-- second, and its spread in seconds (0: none). next_run_at is a spread
-- instant: fire_next in lib/sched/fire.c.
-- Then its last disabled spell's start and end, as epoch seconds (the
-- occurrences in it are skipped, "disabled"). Then its last job's status
-- (the ledger's detail of an overlap skip). Last, the newest fire time a
-- wake decided, without the offset, as an epoch second (decided_through,
-- schema 41: no fire time up to it is looked for again, wherever the next
-- run was moved).
--
-- Parameters:
--   $1  int  at most this many schedules (a transaction's batch)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE due AS
-- then
--   EXPLAIN EXECUTE due(1000);
with s as materialized (
    -- the batch first, by the index in its order; only then its jobs
    -- and pauses (joined before the limit, every due schedule was
    -- read, joined and sorted for each batch of a wake)
    select s.name, s.cron, s.timezone, s.catchup, s.overlap, s.next_run_at, s.anchor, s.spread,
        s.disabled_from, s.disabled_until, s.last_job_id, s.decided_through
    from cronq.schedules s
    where s.enabled and s.next_run_at <= now() order by s.next_run_at
    limit $1::int
    for update of s skip locked
)
select s.name, s.cron, s.timezone, s.catchup, s.overlap,
    coalesce(floor(extract(epoch from s.next_run_at)), floor(extract(epoch from now())) + 1)::bigint,
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
    left join cronq.pauses p on p.schedule = s.name
order by s.next_run_at;
