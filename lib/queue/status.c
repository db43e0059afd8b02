/*
 * status — see status.h: the one table from the enums to the text of the
 * database (the check constraints of cronq.jobs.status and
 * cronq.job_runs.outcome in sql/0001_init.sql).
 */
#include "queue/status.h"

#include <string.h>

static const char *const outcome_text[] = {
	[OUTCOME_SUCCEEDED] = "succeeded",
	[OUTCOME_FAILED] = "failed",
	[OUTCOME_TIMEOUT] = "timeout",
	[OUTCOME_LEASE_EXPIRED] = "lease_expired",
	[OUTCOME_CANCELLED] = "cancelled",
	[OUTCOME_GIVEN_BACK] = "given_back",
	[OUTCOME_LEASE_LOST] = "lease_lost",
};

static const char *const status_text[] = {
	[JOB_STATUS_NONE] = "",
	[JOB_STATUS_QUEUED] = "queued",
	[JOB_STATUS_RUNNING] = "running",
	[JOB_STATUS_SUCCEEDED] = "succeeded",
	[JOB_STATUS_FAILED] = "failed",
	[JOB_STATUS_DEAD] = "dead",
	[JOB_STATUS_CANCELLED] = "cancelled",
};

const char *
run_outcome_sql(run_outcome outcome)
{
	return outcome_text[outcome];
}

const char *
job_status_sql(job_status status)
{
	return status_text[status];
}

job_status
job_status_parse(const char *text, size_t len)
{
	for (size_t s = JOB_STATUS_NONE + 1; s < sizeof status_text / sizeof status_text[0]; s++)
		if (strlen(status_text[s]) == len && memcmp(status_text[s], text, len) == 0)
			return (job_status) s;
	return JOB_STATUS_NONE;
}
