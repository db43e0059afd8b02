/*
 * inspect — what operators read and revive: jobs listed with filters, one
 * job with every attempt, and retries (by id, or every dead job). Reading
 * needs only SELECT on cronq.jobs and cronq.job_runs; retrying, UPDATE.
 *
 * Ownership: the JSON texts returned are new strings the caller free()s.
 * They are built by the database, so numbers in payloads come back exactly
 * as stored.
 */
#ifndef CRONQ_INSPECT_H
#define CRONQ_INSPECT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

/* Which jobs to list or retry: NULL lists mean "any". */
typedef struct inspect_filter {
	const char **statuses;
	int			nstatuses;
	const char **queues;
	int			nqueues;
	const char **types;
	int			ntypes;
	int64_t		limit;			/* list only: at most this many, newest first */
} inspect_filter;

/* Is s one of the job statuses (queued, running, succeeded, failed, dead, cancelled)? */
bool inspect_status_valid(const char *s);

/*
 * The matching jobs, newest (highest id) first, as a JSON array with one
 * job object per line. Every object has the same keys, in this order: id,
 * queue, type, status, payload, priority, attempts, max_attempts, timeout
 * (seconds), run_at, expires_at (the start deadline), idempotency_key,
 * unique_key, schedule, scheduled_for, enqueued_by,
 * locked_by, locked_until, cancel_requested, error_code, last_error,
 * created_at, updated_at, started_at, finished_at, result (the latest
 * attempt's result, JSON, or null). Times are RFC 3339 UTC
 * to the second; absent values are null. *count gets the number of jobs.
 * With results_as_text, each result is a JSON string holding its JSON
 * text instead: what a program reads with a parser that cannot hold every
 * number a result may have (jansson: no integer past 64 bits).
 */
int inspect_list(PGconn *conn, const inspect_filter *filter, bool results_as_text, char **json,
				 int64_t *count, cq_err *err) __attribute__((warn_unused_result));

/*
 * One job as a JSON object: the keys of inspect_list(), then "runs", every
 * row of cronq.job_runs for it in the order they were recorded, each with
 * id, attempt, outcome, worker, started_at, finished_at, duration (seconds, to
 * the millisecond), error_code, error, output, stderr and result (as
 * text with results_as_text, like the job's). EX_DATAERR when the job
 * does not exist.
 */
int inspect_show(PGconn *conn, int64_t id, bool results_as_text, char **json, cq_err *err)
	__attribute__((warn_unused_result));

/* What retrying one id did. */
typedef struct retry_outcome {
	bool		retried;
	char		status[16];		/* its status when not retried; "" when it does not exist */
} retry_outcome;

/*
 * Put jobs back to queued, due now: attempts 0, lock, cancel request,
 * started_at, finished_at, last_error and error_code cleared; their
 * job_runs are kept. Only dead, failed, succeeded and cancelled jobs are
 * retried (queued and running ones are left alone; so is one whose
 * unique key an active job holds, and all but the first, by id, of
 * several with one key). One statement;
 * result[i] says what happened to ids[i], *retried counts distinct jobs.
 * All or nothing: when one of the ids does not exist (for the caller),
 * none is retried (*retried 0, every retried false).
 */
int inspect_retry(PGconn *conn, const int64_t *ids, int n, retry_outcome *result,
				  int64_t *retried, cq_err *err) __attribute__((warn_unused_result));

/*
 * The same for every dead job matching filter's types and queues; *kept
 * counts those left dead because another job holds their unique key.
 */
int inspect_retry_dead(PGconn *conn, const inspect_filter *filter, int64_t *retried,
					   int64_t *kept, cq_err *err) __attribute__((warn_unused_result));

#endif
