-- record_plain: record.sql for a batch of plain successes (no error, no
-- output, standard error or result: cronq.jobs.result is cleared) of one
-- worker against one base time, the common case of a drain: four arrays
-- instead of twelve. Fenced the same way, hooks enqueued the same way. A
-- job whose history policy is errors leaves no job_runs row for its quiet
-- success (a fenced out one still gets its lease_lost row); the join that
-- writes the rows runs only when there is one to write. A row held locked
-- is waited for 2 s at most, then the statement fails (55P03), as
-- record.sql does; lib/queue/jobs.c sends the outcomes again through
-- record.sql, which skips the rows of other roles' jobs held locked.
-- Returns the jobs NOT recorded (fenced out: no longer this attempt's),
-- as "id,id,...", or an empty text when every one was: the rest succeeded.
-- Nothing per recorded job comes back, where a batch is a thousand.
--
-- Parameters:
--   $1  bigint[]     the jobs' ids
--   $2  int[]        their attempts, in the same order
--   $3  timestamptz  the base time (the claim's now())
--   $4  bigint[]     each start, in milliseconds after the base time
--   $5  bigint[]     each end, likewise
--   $6  text         the worker
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE record_plain AS
-- then
--   EXPLAIN EXECUTE record_plain('{1,2}', '{1,1}', now(), '{0,5}', '{5,9}', 'me');
with lt as (
    -- rows held locked are waited for 2 s at most; and this is a runner's
    -- transaction, whose settling of dependants is budgeted (sql/0025)
    select pg_catalog.set_config('lock_timeout', '2s', true)
        || pg_catalog.set_config('cronq.settling', 'on', true) as v
), upd as (
    -- the arrays unnested side by side in a select list, joined as they
    -- come (a table function would first copy them into a tuplestore:
    -- ~0.4 ms a batch of 1,000); id = any($1) keeps the primary key's
    -- index in reach of the planner when many jobs are running
    update cronq.jobs j set status = 'succeeded', locked_by = null, locked_until = null,
        cancel_requested = false, last_error = null, error_code = null, result = null,
        started_at = $3::timestamptz + o.start_ms * interval '1 millisecond',
        finished_at = $3::timestamptz + o.end_ms * interval '1 millisecond', updated_at = now()
    from (select unnest($1::bigint[]) as id, unnest($2::int[]) as attempt,
                 unnest($4::bigint[]) as start_ms, unnest($5::bigint[]) as end_ms) o
    where j.id = any($1::bigint[]) and j.id = o.id
        and j.status = 'running' and j.locked_by = $6 and j.attempts = o.attempt
        and (select v from lt) is not null
    returning j.id, j.history, j.hooks, j.attempts
), t as (
    -- the outcomes again, for the history rows and the answer below: read
    -- only when one is written (a job fenced out, a history policy all)
    select o.id, o.attempt, $3::timestamptz + o.start_ms * interval '1 millisecond' as started,
        $3::timestamptz + o.end_ms * interval '1 millisecond' as finished
    from unnest($1::bigint[], $2::int[], $4::bigint[], $5::bigint[])
        as o(id, attempt, start_ms, end_ms)
), hooked as (
    -- on_success and on_recover of the jobs with hooks (sql/0017)
    select cronq.fire_hooks(array_agg(upd.id), array_fill('succeeded'::text, array[count(*)::int]),
                            array_agg(upd.attempts), array_fill(null::text, array[count(*)::int])) as n
    from upd where upd.hooks is not null
    having count(*) > 0
), runs as (
    -- the rows to write, joined for only when there are any: a job fenced
    -- out (its lease_lost row), or one whose history policy is all
    insert into cronq.job_runs (job_id, attempt, worker, started_at, finished_at,
        outcome, error, duration)
    select t.id, t.attempt, $6, t.started, t.finished,
        case when upd.id is null then 'lease_lost' else 'succeeded' end,
        case when upd.id is null then 'lease lost: outcome succeeded not recorded' end,
        t.finished - t.started
    from t left join upd on upd.id = t.id and upd.attempts = t.attempt
    where upd.history is distinct from 'errors'
        and ((select count(*) from upd) < cardinality($1::bigint[])
             or exists (select from upd where upd.history is distinct from 'errors'))
)
select case when (select count(*) from upd) < cardinality($1::bigint[])
            then (select string_agg(t.id::text, ',') from t left join upd on upd.id = t.id and upd.attempts = t.attempt
                  where upd.id is null)
            else '' end
    || coalesce((select '' from hooked), '');
