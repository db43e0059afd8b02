/*
 * runner — `cronq run`: record the wake, enqueue the due occurrences of
 * schedules, rescue expired leases, then claim
 * and run due jobs with one or more workers (threads, each with its own
 * connection) until nothing is due or a limit is reached, and record the
 * wake's end. Never abandons a started job: every claimed job leaves this
 * module finished, retried or given back (or, if the database went away,
 * leased until a later run rescues it).
 *
 * The run loop is a few files of one purpose each; run_int.h lists them
 * in the order one job goes through them.
 */
#ifndef CRONQ_RUNNER_H
#define CRONQ_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/jobs.h"
#include "util/err.h"

typedef struct run_opts {
	const char *conninfo;
	int			batch;			/* jobs per claim */
	int64_t		max_jobs;		/* 0: no limit */
	int64_t		max_runtime_ms;	/* stop claiming after this; 0: no limit */
	int			concurrency;
	claim_filter filter;
	int64_t		lease_ms;
	const char *worker_id;		/* NULL: host:pid:random */
	int64_t		linger_ms;		/* keep polling this long after start */
	int64_t		poll_ms;
	int64_t		grace_ms;		/* after SIGTERM, how long tasks may finish */
	uint64_t	seed;			/* backoff jitter seed */
	const char *exec_dir;		/* NULL: exec jobs are refused */
	int64_t		kill_grace_ms;	/* a stopped program: SIGTERM, then SIGKILL after this */
	int64_t		exec_uid, exec_gid;	/* programs run as this user and group; -1: the runner's */
	const char *exec_home;		/* and with this HOME (NULL: the runner's) */
} run_opts;

typedef struct run_summary {
	int64_t		run;			/* attempts finished (any outcome) */
	int64_t		succeeded;
	int64_t		failed;			/* failed, timed out or dead */
	int64_t		given_back;
	int64_t		lost;			/* outcomes refused by the fence */
	int			rescued;
	int			expired;		/* waiting jobs cancelled past their deadline */
	int			scheduled;		/* occurrences enqueued from schedules */
	int			skipped;		/* occurrences skipped (catchup/overlap skip) */
} run_summary;

#define RUN_DEFAULT_BATCH 10
#define RUN_DEFAULT_LEASE_MS (60 * 1000)
#define RUN_DEFAULT_POLL_MS 1000
#define RUN_DEFAULT_GRACE_MS (10 * 1000)
#define RUN_DEFAULT_KILL_GRACE_MS (5 * 1000)
/* The run waits for the answer to one of its statements the lease, at least this. */
#define RUN_MIN_ANSWER_LIMIT_MS (2 * 1000)

/*
 * Run; 0, or an EX_* code with err filled. sum is filled either way.
 * EX_TEMPFAIL also when a session the run needed could not be opened (the
 * server full, starting or stopping, unreachable): the claiming stopped
 * there, and the jobs that needed one or had not started were given back.
 */
int runner_run(const run_opts *opts, run_summary *sum, cq_err *err)
	__attribute__((warn_unused_result));

/* Ask the runner to stop: async-signal-safe. A second call ends the grace. */
void runner_request_stop(void);

#endif
