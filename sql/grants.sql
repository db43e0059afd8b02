-- grants.sql — not a migration: cronq migrate runs it at the end of every
-- run, in the same transaction, so that the roles have exactly these
-- privileges whenever they exist, created by migrate or later by a DBA.
-- Every statement may run any number of times.
--
--   cronq_user   enqueues; sees, cancels and retries its own jobs; manages
--                its own schedules (row-level security, 0008)
--   cronq_exec   its members' jobs may run programs; no privilege of its own
--   cronq_admin  sees and manages every role's jobs and schedules, purges
--
-- The owner of the tables (the role that runs migrate and cronq run) and
-- superusers need no grant.

-- The roles, when the migrating role may create them. Otherwise migrate
-- reports the statements a superuser must run (lib/schema/migrate.c).
do $$
declare
    r text;
begin
    foreach r in array array['cronq_user', 'cronq_exec', 'cronq_admin'] loop
        if not exists (select 1 from pg_catalog.pg_roles where rolname = r) then
            begin
                execute pg_catalog.format('create role %I nologin', r);
            exception when insufficient_privilege then
                null;
            end;
        end if;
    end loop;
end
$$;

do $$
begin
    if exists (select 1 from pg_catalog.pg_roles where rolname = 'cronq_user') then
        -- From a clean slate, so that what an older cronq or a hand-written
        -- GRANT gave beyond this list goes.
        revoke all on all tables in schema cronq from cronq_user;
        revoke all on all sequences in schema cronq from cronq_user;
        revoke all on all functions in schema cronq from cronq_user;
        grant usage on schema cronq to cronq_user;
        grant select on cronq.jobs, cronq.job_runs, cronq.schedules, cronq.wakes,
            cronq.schema_migrations, cronq.occurrences to cronq_user;
        grant insert (queue, type, payload, priority, run_at, max_attempts, timeout,
                      idempotency_key, schedule, scheduled_for, enqueued_by, limit_key,
                      expires_at, unique_key, history, hooks, depends_on,
                      -- (what enqueue_occurrences writes, which a role's
                      -- backfill calls: the mark counts only from the owner,
                      -- jobs_guard checks a role's rows all the same; 0043)
                      occurrence_checked)
            on cronq.jobs to cronq_user;
        -- What cancel, retry and an enqueue's replace write; row-level
        -- security allows only the caller's jobs, and jobs_transition_guard
        -- only what they do.
        grant update (status, run_at, attempts, locked_by, locked_until, cancel_requested,
                      started_at, finished_at, last_error, error_code, updated_at,
                      payload, expires_at)
            on cronq.jobs to cronq_user;
        -- Pauses of its own schedules (row-level security, 0011). Columns
        -- only, of this table and of schedules: a table-level UPDATE or
        -- DELETE would let the role LOCK TABLE against the runners; a row
        -- goes when its removed is set (0021).
        grant select, insert (key, until, schedule), update (until, removed)
            on cronq.pauses to cronq_user;
        -- Limits: read (row-level security lets only admins write, 0012).
        grant select on cronq.limits, cronq.limits_now to cronq_user;
        grant insert (name, cron, timezone, type, payload, queue, priority, max_attempts,
                      timeout, enabled, catchup, overlap, next_run_at, start_deadline,
                      history, keep, anchor, spread, hooks),
              update (cron, timezone, type, payload, queue, priority, max_attempts,
                      timeout, enabled, catchup, overlap, next_run_at, start_deadline,
                      history, keep, anchor, spread, hooks, removed, run_now)
            on cronq.schedules to cronq_user;
        -- What an enqueue with a unique key or a new schedule asks as the
        -- owner (0013, 0035): whether a job holds the key or a schedule the
        -- name, and to end a late holder.
        grant execute on function cronq.unique_key_in_use(text), cronq.expire_holder(text),
                                  cronq.key_in_use(text), cronq.schedule_name_in_use(text)
            to cronq_user;
    end if;
    if exists (select 1 from pg_catalog.pg_roles where rolname = 'cronq_admin') then
        revoke all on all tables in schema cronq from cronq_admin;
        revoke all on all sequences in schema cronq from cronq_admin;
        revoke all on all functions in schema cronq from cronq_admin;
        grant usage on schema cronq to cronq_admin;
        grant select, insert, update, delete on cronq.jobs, cronq.job_runs, cronq.schedules
            to cronq_admin;
        grant select, delete on cronq.wakes to cronq_admin;
        grant select, insert, update, delete on cronq.pauses to cronq_admin;
        grant select, insert, update, delete on cronq.limits to cronq_admin;
        grant select on cronq.limits_now to cronq_admin;
        grant select on cronq.schema_migrations to cronq_admin;
        grant select, delete on cronq.occurrences to cronq_admin;
        grant execute on function cronq.unique_key_in_use(text), cronq.expire_holder(text),
                                  cronq.key_in_use(text), cronq.schedule_name_in_use(text)
            to cronq_admin;
        -- What the outcome statements call (0017), so that a member may run
        -- `cronq run`: it enqueues the hooks their authors wrote, as them
        -- (no more than run_schedule lets an admin do).
        grant execute on function cronq.fire_hooks(bigint[], text[], integer[], text[])
            to cronq_admin;
        -- What the wake calls (0025) to settle the dependants an outcome's
        -- transaction left, from their parents as they are.
        grant execute on function cronq.settle_step() to cronq_admin;
        -- What purge calls (0032): the dependency links left behind.
        grant execute on function cronq.sweep_links() to cronq_admin;
        -- what purge asks: a parent whose dependants are still to settle
        -- stays, whole (settle_parents) or one by one (settle_later, 0038)
        grant select on cronq.settle_parents, cronq.settle_later to cronq_admin;
    end if;
end
$$;

-- The SQL API, for both.
do $$
declare
    r text;
begin
    foreach r in array array['cronq_user', 'cronq_admin'] loop
        continue when not exists (select 1 from pg_catalog.pg_roles where rolname = r);
        execute pg_catalog.format('grant execute on function
            cronq.enqueue(text, jsonb, timestamptz, text, integer, integer, interval, text,
                          text, timestamptz, text, boolean, text, jsonb, bigint[]),
            cronq.enqueue_job(text, jsonb, timestamptz, text, integer, integer, interval, text,
                              text, timestamptz, text, boolean, text, jsonb, bigint[]),
            cronq.cancel(bigint), cronq.retry(bigint),
            cronq.cancel_jobs(bigint[]), cronq.retry_jobs(bigint[]),
            cronq.schedule(text, text, text, jsonb, text, text, integer, integer, interval,
                           boolean, text, text, interval, text, integer, timestamptz, interval,
                           jsonb),
            cronq.history_error(text),
            cronq.unschedule(text),
            cronq.pause(text, timestamptz), cronq.resume(text),
            cronq.paused_keys(), cronq.held(text[], text, text),
            cronq.held(text[], text, text, text), cronq.job_keys(text, text, text, text),
            cronq.set_limit(text, integer, integer, interval), cronq.clear_limit(text),
            cronq.limited(), cronq.full_keys(), cronq.limit_key_error(text),
            cronq.enqueue_occurrences(text[], timestamptz[]),
            cronq.enqueue_occurrences(text[], timestamptz[], boolean),
            cronq.run_schedule(text, boolean)
            to %I', r);
    end loop;
end
$$;
