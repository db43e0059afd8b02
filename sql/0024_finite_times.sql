-- 0024_finite_times.sql — a job's times are instants of years 1 to 9999.
--
-- run_at and expires_at took any timestamptz PostgreSQL reads:
-- 'infinity', '-infinity', '4713-11-24 BC', '20000-01-01'. One job due at
-- -infinity made status, check and the metrics fail for everyone
-- ("cannot subtract infinite timestamps") until it ran; an infinite time
-- showed as no time at all, a date BC as the same date AD, and a year
-- past 9999 as no RFC 3339 time. Any role that may enqueue could do it,
-- from the CLI, a JSONL line or SQL.
--
-- Now a row is refused (22008, a data error: the CLI exits 65 and writes
-- nothing) when either time is outside [0001-01-01, 10000-01-01) UTC, the
-- years every other time of cronq is given in (schedule anchors, --at).
-- A trigger rather than a check constraint, so that the message names the
-- column and the value; its WHEN is evaluated in the executor, so a job
-- whose times are fine costs a comparison or two, no function call.
-- Rows written before are given their meaning in range where they would
-- break status (below); an update checks only the times it changes.
--
-- A limit's rate window is whole seconds: 5 starts per 1.5 s was kept,
-- and enforced, but shown everywhere (status, limit list, per_seconds) as
-- 5/2s. The CLI refuses it (64); the table now does too, and a window
-- written before is rounded up to what it was shown as.
--
-- cronq.key_in_use(), which jobs_guard asks as the owner (0008), was
-- executable by PUBLIC: it tells no more than an enqueue's refusal does,
-- but like unique_key_in_use it is now granted to the cronq roles alone
-- (sql/grants.sql).
--
-- Nothing a binary reads changes.
-- compatible-from: 10
--
-- As 0006 asks: search_path pinned on PL/pgSQL bodies. Every statement may
-- run again.

-- Rows written before: a time that would make status fail, or read as
-- another, is given its meaning in range (-infinity or BC: due now, as it
-- was; an infinite deadline: none, as it was). Others out of range (a
-- year past 9999) stay; an update checks only the times it changes, so
-- such a job's outcome is still recorded.
update cronq.jobs set run_at = now() where run_at < timestamptz '0001-01-01 00:00:00+00';
update cronq.jobs set expires_at = null where expires_at = 'infinity';

create or replace function cronq.jobs_times_refused() returns trigger
language plpgsql set search_path = pg_catalog, pg_temp as $$
declare
    bad_run_at boolean := (tg_op = 'INSERT' or new.run_at is distinct from old.run_at)
        and not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
                 and new.run_at < timestamptz '10000-01-01 00:00:00+00');
    col text := case when bad_run_at then 'run_at' else 'expires_at' end;
    val timestamptz := case when bad_run_at then new.run_at else new.expires_at end;
begin
    raise exception 'invalid %: "%" is not a time of years 1 to 9999', col, val using errcode = '22008';
end
$$;

drop trigger if exists jobs_times on cronq.jobs;
create trigger jobs_times before insert on cronq.jobs for each row
    when (not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
               and new.run_at < timestamptz '10000-01-01 00:00:00+00')
          or not (new.expires_at >= timestamptz '0001-01-01 00:00:00+00'
                  and new.expires_at < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.jobs_times_refused();
drop trigger if exists jobs_times_update on cronq.jobs;
create trigger jobs_times_update before update of run_at, expires_at on cronq.jobs for each row
    when (new.run_at is distinct from old.run_at
              and not (new.run_at >= timestamptz '0001-01-01 00:00:00+00'
                       and new.run_at < timestamptz '10000-01-01 00:00:00+00')
          or new.expires_at is distinct from old.expires_at
              and not (new.expires_at >= timestamptz '0001-01-01 00:00:00+00'
                       and new.expires_at < timestamptz '10000-01-01 00:00:00+00'))
    execute function cronq.jobs_times_refused();

revoke execute on function cronq.key_in_use(text) from public;

-- A window written before is rounded up to the whole seconds it was
-- shown as (5/1.5s: 5/2s), so that the check holds for every row (a row
-- left out of it would fail the claim's update of its starts).
alter table cronq.limits drop constraint if exists limits_per_whole_seconds;
update cronq.limits set per = date_trunc('second', per) + interval '1 second'
where per <> date_trunc('second', per);
alter table cronq.limits add constraint limits_per_whole_seconds
    check (per = date_trunc('second', per));
