/*
 * status — the outcome of an attempt and the status of a job as C enums,
 * for the modules that pass them around (queue/jobs.c, run/); their text,
 * as cronq.job_runs.outcome and cronq.jobs.status store it, only at the
 * SQL boundary, through the one table in status.c.
 */
#ifndef CRONQ_STATUS_H
#define CRONQ_STATUS_H

#include <stddef.h>

/* An attempt's outcome: the values of cronq.job_runs.outcome. */
typedef enum run_outcome {
	OUTCOME_SUCCEEDED = 0,
	OUTCOME_FAILED,
	OUTCOME_TIMEOUT,
	OUTCOME_LEASE_EXPIRED,		/* rescued: its worker stopped renewing the lease */
	OUTCOME_CANCELLED,
	OUTCOME_GIVEN_BACK,			/* queued again, the attempt not counted */
	OUTCOME_LEASE_LOST,			/* no longer ours: recorded only as history */
} run_outcome;

/* A job's status: the values of cronq.jobs.status, and NONE. */
typedef enum job_status {
	JOB_STATUS_NONE = 0,		/* not recorded: the fence refused the outcome */
	JOB_STATUS_QUEUED,
	JOB_STATUS_RUNNING,
	JOB_STATUS_SUCCEEDED,
	JOB_STATUS_FAILED,
	JOB_STATUS_DEAD,
	JOB_STATUS_CANCELLED,
} job_status;

/* The text the database stores. */
const char *run_outcome_sql(run_outcome outcome);
/* The text the database stores; "" for JOB_STATUS_NONE. */
const char *job_status_sql(job_status status);
/* The status whose text is the len bytes at text; JOB_STATUS_NONE when none. */
job_status job_status_parse(const char *text, size_t len);

#endif
