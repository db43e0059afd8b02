-- record: the outcomes of a batch of attempts, fenced: only a job still
-- running, locked by that attempt's worker, at that attempt is touched.
-- Refused outcomes leave a lease_lost row in cronq.job_runs. A job an
-- operator asked to cancel ends cancelled whatever its attempt's outcome
-- but success (which stands: the work is done), even when the worker had
-- not heard of the request yet; its job_runs row keeps the attempt's own
-- outcome. A job whose history policy is errors leaves no job_runs row
-- for a success with no output, standard error or result (any other
-- outcome, and a success with one of them, keep theirs). cronq.jobs.result
-- gets the attempt's result (an attempt given back leaves it alone). The
-- hooks of the jobs that succeeded, failed or went dead are enqueued in
-- this statement (cronq.fire_hooks, sql/0017). A batch of plain successes
-- goes through record_plain.sql.
-- A row held locked by another transaction is waited for 2 s at most
-- (lock_timeout, for the rest of the transaction): another runner's claim
-- holds a row it passed over for milliseconds, but an author may hold its
-- own job's (SELECT ... FOR UPDATE, from an idle transaction) for as long
-- as it likes, and the wait would hold back every job of the batch. Past
-- that the statement fails (55P03), and lib/queue/jobs.c sends it again
-- with $16, the other roles' jobs: those whose rows are held are skipped
-- and returned as "id busy", with no history row (the rescue of their
-- leases retries them).
-- Returns one text: the recorded jobs as "id status,id status,...", and
-- the skipped ones as "id busy"; empty or null when none was.
--
-- Parameters, arrays with one element per attempt, in the same order:
--   $1  bigint[]       the jobs' ids
--   $2  int[]          their attempts
--   $3  text[]         the workers
--   $4  text[]         the outcomes: succeeded, failed, timeout, cancelled,
--                      given_back, lease_expired, lease_lost
--   $5  bool[]         whether the failure is permanent (no retry)
--   $6  text[]         error codes, or nulls
--   $7  text[]         error messages, or nulls
--   $8  text[]         outputs, or nulls
--   $9  bigint[]       the delay before a retry, in milliseconds
--   $10 timestamptz[]  each attempt's base time (its claim's now())
--   $11 bigint[]       the start, in milliseconds after the base time
--   $12 bigint[]       the end, likewise (null: now())
--   $13 bool           only jobs whose lease has expired, and no history
--                      row for the others (the rescue); a row another
--                      transaction holds locked is skipped, not waited for
--                      (a later rescue takes it)
--   $14 text[]         standard errors, or nulls
--   $15 jsonb[]        results, or nulls (the rescue: all nulls)
--   $16 bigint[]       of $1, jobs whose rows held locked are skipped, not
--                      waited for: '{}', or after a lock timeout the jobs
--                      of other roles than the runner's
--
-- Try it by hand (psql 15 has no \bind): paste this file after
--   PREPARE record AS
-- then
--   EXPLAIN EXECUTE record('{1}', '{1}', '{me}', '{failed}', '{f}', '{boom}',
--     '{"it broke"}', '{null}', '{10000}', array[now()], '{0}', '{25}', false,
--     '{null}', '{null}', '{}');
with lt as (
    -- rows held locked are waited for 2 s at most; and this is a runner's
    -- transaction, whose settling of dependants is budgeted (sql/0025)
    select pg_catalog.set_config('lock_timeout', '2s', true)
        || pg_catalog.set_config('cronq.settling', 'on', true) as v
), o as (
    select * from unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::bool[],
        $6::text[], $7::text[], $8::text[], $9::bigint[], $10::timestamptz[],
        $11::bigint[], $12::bigint[], $14::text[], $15::jsonb[])
        as o(id, attempt, worker, outcome, permanent, error_code, error, output,
             delay_ms, base, start_ms, end_ms, stderr, result)
), t as (
    select o.*, o.base + o.start_ms * interval '1 millisecond' as started,
        coalesce(o.base + o.end_ms * interval '1 millisecond', now()) as finished
    from o
), free as (
    select id from cronq.jobs
    where id = any(case when $13::bool then $1::bigint[] else $16::bigint[] end)
    for no key update skip locked
), busy as (
    select b.id from unnest($16::bigint[]) b(id)
    where not $13::bool and b.id <> all(array(select id from free))
), upd as (
    update cronq.jobs j set
        status = case
            when t.outcome = 'succeeded' then 'succeeded'
            when t.outcome = 'cancelled' or j.cancel_requested then 'cancelled'
            when t.outcome = 'given_back' then 'queued'
            when t.permanent or j.attempts >= j.max_attempts then 'dead'
            else 'failed' end,
        attempts = case when t.outcome = 'given_back' then j.attempts - 1 else j.attempts end,
        run_at = case
            when t.outcome in ('succeeded', 'given_back', 'cancelled') or j.cancel_requested
                 or t.permanent or j.attempts >= j.max_attempts then j.run_at
            else now() + t.delay_ms * interval '1 millisecond' end,
        locked_by = null, locked_until = null, cancel_requested = false,
        last_error = case when j.cancel_requested and t.outcome not in ('succeeded', 'cancelled')
            then 'cancelled by an operator' when t.outcome = 'given_back' then j.last_error
            else t.error end,
        error_code = case when j.cancel_requested and t.outcome <> 'succeeded' then 'cancelled'
            when t.outcome = 'given_back' then j.error_code else t.error_code end,
        result = case when t.outcome = 'given_back' then j.result else t.result end,
        started_at = t.started,
        finished_at = case
            when t.outcome in ('succeeded', 'cancelled') or j.cancel_requested or t.permanent
                 or (t.outcome <> 'given_back' and j.attempts >= j.max_attempts) then t.finished
            end,
        updated_at = now()
    from t
    where j.id = any($1::bigint[]) and j.id = t.id
        and j.status = 'running' and j.locked_by = t.worker and j.attempts = t.attempt
        and t.outcome <> 'lease_lost'
        and (not $13::bool or j.locked_until < now()) and (select v from lt) is not null
        and (not ($13::bool or j.id = any($16::bigint[])) or j.id = any(array(select id from free)))
    returning j.id, j.status, j.history, j.hooks, j.attempts, j.last_error
), hooked as (
    -- the hooks of the outcomes recorded (sql/0017): called only when a
    -- job of the batch has hooks
    select cronq.fire_hooks(array_agg(upd.id), array_agg(upd.status), array_agg(upd.attempts),
                            array_agg(upd.last_error)) as n
    from upd where upd.hooks is not null and upd.status in ('succeeded', 'failed', 'dead')
    having count(*) > 0
), runs as (
    insert into cronq.job_runs (job_id, attempt, worker, started_at, finished_at,
        outcome, error_code, error, output, duration, stderr, result)
    select t.id, t.attempt, t.worker, t.started, t.finished,
        case when upd.id is null then 'lease_lost'
             when t.permanent then 'failed' else t.outcome end,
        t.error_code,
        case when upd.id is null and t.outcome <> 'lease_lost'
             then 'lease lost: outcome ' || t.outcome || ' not recorded'
             else t.error end,
        t.output, t.finished - t.started, t.stderr, t.result
    from t left join upd on upd.id = t.id
    where (upd.id is not null or not $13::bool)
        and t.id <> all(array(select id from busy))
        and (upd.history is distinct from 'errors' or t.outcome <> 'succeeded'
             or coalesce(t.output, '') <> '' or coalesce(t.stderr, '') <> ''
             or t.result is not null)
)
select concat_ws(',', (select string_agg(id || ' ' || status, ',') from upd),
                 (select string_agg(id || ' busy', ',') from busy))
    || coalesce((select '' from hooked), '');
