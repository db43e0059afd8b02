-- record_plain: record.sql for a batch of plain successes (no error, no
-- output, standard error or result: cronq.jobs.result is cleared) of one
-- worker against one base time, the common case of a drain: four arrays
-- instead of twelve. Fenced the same way, hooks enqueued the same way;
-- returns the same text: "id status,id status,...", or null. A job whose
-- history policy is errors leaves no job_runs row for its quiet success (a
-- fenced out one still gets its lease_lost row). A row held locked is
-- waited for 2 s at most, then skipped if listed in $7, as in record.sql.
--
-- Parameters:
--   $1  bigint[]     the jobs' ids
--   $2  int[]        their attempts, in the same order
--   $3  timestamptz  the base time (the claim's now())
--   $4  bigint[]     each start, in milliseconds after the base time
--   $5  bigint[]     each end, likewise
--   $6  text         the worker
--   $7  bigint[]     of $1, jobs whose rows held locked are skipped (record.sql's $16)
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE record_plain AS
-- then
--   EXPLAIN EXECUTE record_plain('{1,2}', '{1,1}', now(), '{0,5}', '{5,9}', 'me', '{}');
with lt as (
    select pg_catalog.set_config('lock_timeout', '2s', true) as v
), t as (
    select o.id, o.attempt, $3::timestamptz + o.start_ms * interval '1 millisecond' as started,
        $3::timestamptz + o.end_ms * interval '1 millisecond' as finished
    from unnest($1::bigint[], $2::int[], $4::bigint[], $5::bigint[])
        as o(id, attempt, start_ms, end_ms)
), free as (
    select id from cronq.jobs where id = any($7::bigint[]) for no key update skip locked
), busy as (
    select b.id from unnest($7::bigint[]) b(id) where b.id <> all(array(select id from free))
), upd as (
    update cronq.jobs j set status = 'succeeded', locked_by = null, locked_until = null,
        cancel_requested = false, last_error = null, error_code = null, result = null,
        started_at = t.started, finished_at = t.finished, updated_at = now()
    from t
    where j.id = any($1::bigint[]) and j.id = t.id
        and j.status = 'running' and j.locked_by = $6 and j.attempts = t.attempt
        and (select v from lt) is not null
        and (not j.id = any($7::bigint[]) or j.id = any(array(select id from free)))
    returning j.id, j.status, j.history, j.hooks, j.attempts
), hooked as (
    -- on_success and on_recover of the jobs with hooks (sql/0017)
    select cronq.fire_hooks(array_agg(upd.id), array_agg(upd.status), array_agg(upd.attempts),
                            array_fill(null::text, array[count(*)::int])) as n
    from upd where upd.hooks is not null
    having count(*) > 0
), runs as (
    insert into cronq.job_runs (job_id, attempt, worker, started_at, finished_at,
        outcome, error, duration)
    select t.id, t.attempt, $6, t.started, t.finished,
        case when upd.id is null then 'lease_lost' else 'succeeded' end,
        case when upd.id is null then 'lease lost: outcome succeeded not recorded' end,
        t.finished - t.started
    from t left join upd on upd.id = t.id
    where upd.history is distinct from 'errors' and t.id <> all(array(select id from busy))
)
select concat_ws(',', (select string_agg(id || ' ' || status, ',') from upd),
                 (select string_agg(id || ' busy', ',') from busy))
    || coalesce((select '' from hooked), '');
