/*
 * task — what a built-in task is: a name, a payload validator and a run
 * function, registered in registry.c. Tasks know nothing of claiming or
 * leases: while they run they call task_tick() often, and stop promptly
 * when it says so; the runner decides what a stop means for the job.
 *
 * Ownership: a task_result's error, output, err_output and result are
 * owned by the result and freed by task_result_clear(); payloads are borrowed from the runner.
 */
#ifndef CRONQ_TASK_H
#define CRONQ_TASK_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Why a running task must stop (task_tick's answer). */
typedef enum task_stop {
	TASK_GO = 0,				/* keep going */
	TASK_STOP_TIMEOUT,			/* the job's timeout has passed */
	TASK_STOP_SHUTDOWN,			/* the runner is shutting down, grace is over */
	TASK_STOP_LOST,				/* the job is no longer ours (lease lost) */
	TASK_STOP_CANCELLED,		/* an operator cancelled the job */
	TASK_STOP_DISCONNECTED,		/* the runner lost its database connection */
	TASK_STOP_UNAVAILABLE,		/* the runner could not open a session the job needs: given back */
} task_stop;

/* How a task ended, when it was not stopped. */
typedef enum task_status {
	TASK_SUCCEEDED = 0,
	TASK_FAILED,				/* retryable */
	TASK_PERMANENT,				/* no retry can help: the job goes dead at once */
} task_status;

typedef struct task_result {
	task_status status;
	char		error_code[64];	/* "" when none */
	char	   *error;			/* NULL when none */
	char	   *output;			/* captured output tail, NULL when none */
	char	   *err_output;		/* a program's standard error (its tail), NULL when none */
	/*
	 * The attempt's result as JSON text that PostgreSQL's jsonb accepts
	 * (cronq.job_runs.result), NULL when none: a sql job's command tag and
	 * first row, an exec program's value from descriptor 3.
	 */
	char	   *result;
	/*
	 * The work is done and durable (a committed transaction) even if the
	 * runner asked the task to stop too late to prevent it: the runner then
	 * records the success, since running the job again would repeat it.
	 */
	bool		took_effect;
} task_result;

/* The job as a task sees it. */
typedef struct task_job {
	int64_t		id;
	int			attempt;
	const char *type;
	const char *queue;
	const json_t *payload;
	const char *payload_text;
	const char *idempotency_key;	/* NULL when none */
	const char *scheduled_for;	/* NULL when not from a schedule */
	const char *enqueued_by;
} task_job;

/* The runner's side: tick checks timeouts, shutdown, cancellation and the lease. */
typedef struct task_ctx {
	task_stop	(*tick) (void *arg);
	void	   *arg;
	/*
	 * The runner's own database session, for the runner's statements that
	 * a task needs (the exec permission check, purge): owned and kept by the
	 * runner between jobs (NULL with why filled when it cannot be opened:
	 * the runner's fault, so the job is given back, as for author_session).
	 * No job's SQL ever runs on it.
	 */
	PGconn	   *(*session) (void *arg, char *why, size_t len);
	/*
	 * A session logged in as role, for a job's own SQL (NULL with err
	 * filled when it cannot be opened): never one of the runner's, never
	 * one another role used. A login the server refuses for role, or the
	 * role's own connection limit, is the job's problem; any other failure
	 * (the server is full, starting or stopping, unreachable, out of
	 * memory) is the runner's: task_tick() then says TASK_STOP_UNAVAILABLE
	 * and the job is given back, its attempt not counted. The task hands
	 * the session back with reusable false when it stopped the job or
	 * cannot vouch for the session's state; the runner then closes it,
	 * else resets it (DISCARD ALL) for the next job of the same author.
	 */
	PGconn	   *(*author_session) (void *arg, const char *role, cq_err *err);
	void		(*author_release) (void *arg, PGconn *conn, bool reusable);
	/*
	 * A session the task was using (the runner's or an author's) was lost
	 * while a statement ran (task_session_lost() asks only then): the
	 * runner says whose fault that is. TASK_GO:
	 * the job's (the server kept the runner's own session, so it ended only
	 * the job's; e.g. the job's SQL ended its own backend), and the task
	 * records the failure. Else the runner's (a restart, a crash or a
	 * failover ended its sessions too): the task stops, recording nothing,
	 * and the job is given back, its attempt not counted (three times in a
	 * row at most: a job that crashes the server is counted after that).
	 */
	task_stop	(*session_lost) (void *arg);
	const char *exec_dir;		/* NULL: exec jobs are refused */
	int64_t		kill_grace_ms;	/* SIGTERM to SIGKILL, for programs */
	int64_t		exec_uid, exec_gid;	/* programs' user and group; -1: the runner's */
	const char *exec_home;		/* programs' HOME; NULL: the runner's */
} task_ctx;

typedef struct task_def {
	const char *name;
	/* 0 when payload (already known to be an object) is acceptable; else -1
	 * with the reason, worded as the database's cronq.payload_error(). */
	int			(*validate) (const json_t *payload, char *err, size_t errlen);
	void		(*run) (const task_ctx *ctx, const task_job *job, task_result *res);
} task_def;

static inline task_stop
task_tick(const task_ctx *ctx)
{
	return ctx->tick ? ctx->tick(ctx->arg) : TASK_GO;
}

/*
 * After a statement on conn failed: TASK_GO when conn is alive, or its loss
 * was the job's doing (the task records the failure); else the runner
 * stops the task, records why and gives the job back (ctx->session_lost).
 */
static inline task_stop
task_session_lost(const task_ctx *ctx, PGconn *conn)
{
	if (PQstatus(conn) != CONNECTION_BAD || ctx->session_lost == NULL)
		return TASK_GO;
	return ctx->session_lost(ctx->arg);
}

/* Sleep up to ms milliseconds, ticking; returns the first stop reason. */
task_stop task_sleep_ms(const task_ctx *ctx, int64_t ms);

/* Fill res (error and code may be NULL); the error is cut to 2 KiB of
 * valid UTF-8. */
void task_result_set(task_result *res, task_status status, const char *code,
					 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void task_result_clear(task_result *res);

/* The registry: NULL when no task has that name. */
const task_def *task_find(const char *name);
/* All tasks, NULL-terminated, for --help and errors. */
const task_def *const *task_all(void);

/* The built-in tasks, one file each. */
extern const task_def task_noop;
extern const task_def task_sleep;
extern const task_def task_fail;
extern const task_def task_sql;
extern const task_def task_exec;
extern const task_def task_purge;

/* A key of payload not in allowed (NULL-terminated), or NULL when none. */
const char *task_unknown_key(const json_t *payload, const char *const *allowed);

/*
 * Whether the job's author may still enqueue its type (checked again before
 * each run, so that a revoked grant takes effect at once, also for a job
 * retried after it: cronq.task_permission_error() on the runner's session).
 * 1; 0 with the reason in why; -1 when it could not be asked.
 */
int task_author_may(const task_ctx *ctx, const task_job *job, char *why, size_t len);

#endif
