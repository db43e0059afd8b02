-- 0018_results.sql — what a job's task hands back (issue 22, results).
--
-- cronq.job_runs.stderr: an exec program's standard error, apart from
-- its standard output (job_runs.output); each keeps its last 64 KiB.
-- cronq.job_runs.result: the attempt's result, as jsonb: a sql job's
-- {"tag": "DELETE 21", "row": {...} or null} (the command tag and first
-- row of its last statement), an exec program's JSON value written to
-- file descriptor 3; null when the task gave none.
-- cronq.jobs.result: the result of the job's latest recorded attempt (an
-- attempt given back leaves it as it was), so that a job whose history
-- policy is errors keeps it with no job_runs row.
--
-- Written only by the runner's outcome statements (lib/queue/record.sql,
-- record_plain.sql); no role other than the owner and cronq_admin may
-- write them (sql/grants.sql grants cronq_user no column of them).
--
-- Three nullable columns, nothing else: a binary built before this schema
-- still works with it. It writes no result, so a job it runs again keeps
-- the result of its attempt recorded by a newer binary until one records
-- another.
-- compatible-from: 10
--
-- Every statement may run again.

alter table cronq.job_runs add column if not exists stderr text;
alter table cronq.job_runs add column if not exists result jsonb;
alter table cronq.jobs add column if not exists result jsonb;
comment on column cronq.job_runs.stderr is
    'an exec program''s standard error (its last 64 KiB); output holds its standard output';
comment on column cronq.job_runs.result is
    'the attempt''s result: a sql job''s {"tag", "row"}, an exec program''s JSON from descriptor 3; null: none';
comment on column cronq.jobs.result is
    'the result of the latest recorded attempt (see cronq.job_runs.result)';
