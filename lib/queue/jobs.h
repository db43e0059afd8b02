/*
 * jobs — the statements of the jobs contract that a runner executes: claim a
 * batch, renew leases, record outcomes (fenced), rescue expired leases.
 * Each is one statement; none keeps session state between transactions.
 *
 * Ownership: a claim_batch owns its jobs and their strings and payloads;
 * claim_batch_free() releases them.
 */
#ifndef CRONQ_JOBS_H
#define CRONQ_JOBS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "queue/status.h"
#include "util/err.h"

typedef struct claimed_job {
	int64_t		id;
	int			attempt;		/* this attempt's number (attempts after the claim) */
	int			max_attempts;
	int			priority;
	double		run_at;			/* epoch seconds, for ordering */
	char	   *type;
	char	   *queue;
	char	   *payload_text;		/* parsed by whoever runs the job */
	char	   *idempotency_key;
	char	   *scheduled_for;
	char	   *enqueued_by;
	int64_t		timeout_ms;		/* 0: none */
} claimed_job;

typedef struct claim_batch {
	claimed_job *jobs;			/* in run order: priority, run_at, id */
	int			n;
	char		claimed_at[64];	/* the database's clock as the claim wrote the rows */
	int			refused;		/* due rows the claim locked but left for want of room (limits) */
	bool		flow;			/* flow control was in effect: limits or pauses (claim.sql) */
} claim_batch;

typedef struct claim_filter {
	const char **queues;		/* NULL or a list of nqueues names */
	int			nqueues;
	const char **types;
	int			ntypes;
	const char **exclude_queues;	/* never these: wins over queues */
	int			nexclude_queues;
} claim_filter;

/*
 * Claim up to limit due jobs for worker with one statement, leasing them for
 * lease_ms. out is filled (n may be 0) and must be freed. With plain, the
 * statement is claim_plain.sql, for when the last claim said flow control
 * was not in effect (!out->flow). A plain claim that comes back empty
 * found nothing due, or flow control in effect since: the caller claims
 * again without plain, and claim.sql obeys it and says which.
 */
int jobs_claim(PGconn *conn, const char *worker, int limit, int64_t lease_ms,
			   const claim_filter *filter, bool plain, claim_batch *out, cq_err *err)
	__attribute__((warn_unused_result));
void claim_batch_free(claim_batch *batch);
/*
 * Renew the leases of the given (id, attempt) pairs still held by worker.
 * owned[i] is set to whether job i is still this worker's, cancel[i] to
 * whether an operator asked to cancel it, renewed[i] to whether its lease
 * was renewed (a row another transaction holds locked is not: owned, not
 * renewed).
 */
int jobs_heartbeat(PGconn *conn, const char *worker, const int64_t *ids,
				   const int *attempts, int n, int64_t lease_ms, bool *owned,
				   bool *cancel, bool *renewed, cq_err *err) __attribute__((warn_unused_result));

/* When a running job's task started: base (its claim's now()) + start_ms. */
typedef struct job_started {
	int64_t		id;
	int			attempt;
	const char *base_time;
	int64_t		start_ms;
} job_started;

/*
 * Fair sharing: give back the n claimed, unstarted jobs (id, attempt) that
 * worker still holds, their attempt not counted and no history row, and
 * set cur's started_at (cur may be NULL). released[i] is set to whether
 * job i was given back; one that was not is no longer the worker's, or
 * was locked by another transaction (skipped, not waited for).
 */
int jobs_release(PGconn *conn, const char *worker, const int64_t *ids, const int *attempts,
				 int n, const job_started *cur, bool *released, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * After a claim whose answer was lost with its connection (it may have
 * committed): give back every job running under worker's name but the n
 * it ran (ran: their outcomes recorded, or left to the rescue), as
 * jobs_release() does (no attempt counted, no history row), rows locked
 * elsewhere skipped. Only for a name no other process uses. *n_back: how
 * many were given back.
 */
int jobs_give_back_unknown(PGconn *conn, const char *worker, const int64_t *ran, int n, int *n_back,
						   cq_err *err)
	__attribute__((warn_unused_result));

/* One attempt's outcome, to be recorded. */
typedef struct job_outcome {
	int64_t		id;
	int			attempt;
	const char *worker;			/* the fence: who must still hold the job */
	run_outcome outcome;
	bool		permanent;		/* failed with no retry possible: dead now */
	const char *error_code;		/* NULL when none */
	const char *error;
	const char *output;			/* standard output, or a task's own report */
	const char *err_output;		/* an exec program's standard error, or NULL */
	const char *result;			/* JSON text (cronq.job_runs.result), or NULL */
	int64_t		delay_ms;		/* backoff before the retry, if one follows */
	const char *base_time;		/* started_at = base + start_ms */
	int64_t		start_ms;
	int64_t		end_ms;			/* < 0: finished now() */
	bool		others;			/* another role's job: its author may hold its row locked */
	/* filled by jobs_record: the job's new status, NONE when fenced out */
	job_status	new_status;
	bool		busy;			/* (others) not recorded: another transaction held its row */
	bool		unrecorded;		/* its own statement failed too (jobs_record said why) */
} job_outcome;

/*
 * Whether due jobs (under filter, not paused) wait for room under a full
 * limit, and whether some running job's lease has expired (held.sql): a
 * worker whose claim came back empty waits for them, rescuing the leases.
 */
int jobs_held(PGconn *conn, const claim_filter *filter, bool *held, bool *expired, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Record outcomes in one statement: each job is updated only while it is
 * still running, locked by o->worker, at o->attempt (and, with
 * expired_only, while its lease has expired). Every recorded outcome gets a
 * cronq.job_runs row; an outcome refused by the fence gets a "lease_lost"
 * row instead (except in expired_only mode, where it means the worker came
 * back in time). A row held locked by another transaction is waited for 2
 * s at most (another runner's claim holds one for milliseconds; an author
 * its own job's, perhaps from an idle transaction, for ever); then the
 * outcomes are recorded again without waiting for the rows of those marked
 * others: one held comes back busy, unrecorded, with no history row; the
 * job's lease then expires and the rescue retries it. A statement that
 * fails for what may be one outcome's fault (its data, a check on its
 * row: record_apart) records them one by one, so that only that one
 * stays unrecorded (marked so, with a warning); it too then expires.
 */
int jobs_record(PGconn *conn, job_outcome *o, int n, bool expired_only,
				cq_err *err) __attribute__((warn_unused_result));

/*
 * jobs_record() of n outcomes (none: a plain claim) and jobs_claim() in one
 * statement, one round trip and one commit: how a worker moves from one
 * batch to the next.
 */
int jobs_record_and_claim(PGconn *conn, job_outcome *o, int n, const char *worker,
						  int limit, int64_t lease_ms, const claim_filter *filter, bool plain,
						  claim_batch *out, cq_err *err) __attribute__((warn_unused_result));

/*
 * Rescue running jobs whose lease expired: each counts as a failed attempt
 * (error_code lease_expired), due again at once (the lease was its wait) or
 * dead when out of attempts; one an operator asked to cancel is cancelled. *rescued gets how many were recorded.
 */
int jobs_rescue(PGconn *conn, int *rescued, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Settle the blocked jobs jobs_settle (0017) left in cronq.settle_later
 * (held locked when their parent's outcome was recorded): queued,
 * cancelled or still blocked, from their parents as they are now, and
 * the parents noted in cronq.settle_parents (0025), for 5 s at most. Rows
 * held locked are skipped. stop (NULL: none) is asked between pages,
 * each a transaction of its own: once it says so, the rest is the next
 * wake's. 0, or the error's exit code.
 */
int jobs_settle_later(PGconn *conn, bool (*stop)(void), int *settled, cq_err *err);

/*
 * Cancel the waiting jobs past their start deadline (error_code expired,
 * a job_runs row each, worker named), 500 per statement until none is
 * left, for 5 s at most or until stop (NULL: none) says so (a bigger
 * backlog is the next wakes'). *expired gets how many.
 */
int jobs_expire(PGconn *conn, const char *worker, bool (*stop)(void), int *expired, cq_err *err)
	__attribute__((warn_unused_result));

#endif
