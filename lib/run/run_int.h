/*
 * run_int — what the files of lib/run share; private to them. One job,
 * from runner_run to its recorded outcome, file by file:
 *
 *   runner.c    runner_run: the wake around the workers, the summary
 *   wake.c      the wake's start (probe, version, trim, schedules,
 *               rescue) and its end
 *   worker.c    a worker: claim a batch (recording the last one's
 *               outcomes with the claim), run it job by job, and the tick
 *               a running task calls (timeout, shutdown, lease, cancel,
 *               fair sharing)
 *   pace.c      pace_next(): how many jobs the next claim takes
 *   slots.c     the batch: one slot per claimed job; leases renewed,
 *               outcomes gathered, recorded, logged and counted
 *   attempt.c   one attempt: run the job's task, leave its outcome
 *               pending in its slot
 *   outcome.c   outcome_for(): the policy from (stop reason, task result)
 *               to the outcome recorded
 *   sessions.c  the sessions a task borrows (the runner's, an author's)
 *
 * Threads share only the shared struct (the stop flag apart): the budget,
 * the fault and the options. Each worker owns its connection, its batch
 * and its pending outcomes.
 */
#ifndef CRONQ_RUN_INT_H
#define CRONQ_RUN_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "pg/handle.h"
#include "queue/jobs.h"
#include "queue/wakes.h"
#include "run/runner.h"
#include "tasks/task.h"
#include "util/err.h"

/* Set by runner_request_stop(): 1 asks to stop, 2 ends the grace. */
extern volatile sig_atomic_t run_stop_requests;

/* What the workers of one run share (under lock). */
typedef struct shared {
	const run_opts *o;
	int64_t		start_ms;
	pthread_mutex_t lock;
	int64_t		jobs_left;		/* -1: unlimited */
	bool		limited;		/* the wake saw limits: an empty claim may mean jobs wait for room
								 * (and, for a worker that took jobs, a limit made since) */
	bool		faulted;		/* the runner could not open a session: claim and start nothing more */
	char		fault[1024];	/* the first such failure */
	char		fault_note[1100];	/* why the unstarted jobs are given back */
} shared;

/* Where a claimed job stands in its worker. */
typedef enum slot_state {
	SLOT_WAITING = 0,			/* claimed, not started */
	SLOT_PENDING,				/* finished, outcome not yet recorded */
	SLOT_DONE,					/* recorded (or dropped: not ours any more) */
} slot_state;

/* One claimed job of a worker's batch. */
typedef struct slot {
	const claimed_job *job;		/* in the worker's claim_batch */
	slot_state	state;
	bool		held;			/* still ours, as far as the last heartbeat knows */
	bool		cancel;			/* an operator asked to cancel it */
	int64_t		lease_end;		/* mono_ms when its lease runs out, as last renewed */
	task_result res;
	job_outcome out;
} slot;

typedef struct worker {
	shared	   *sh;
	int			index;
	char		id[320];
	pg_handle	db;				/* claims, heartbeats, outcomes; worker 0's is the runner's */
	PGconn	   *session;		/* the runner's, for tasks (exec checks, purge), opened on demand */
	PGconn	   *author_conn;	/* logged in as author_role, for sql jobs; kept while the author is */
	char	   *author_role;
	claim_batch batch;
	slot	   *slots;			/* batch.n of them */
	int			claim_limit;	/* the next claim's size (pace.c); 0: not yet claimed */
	int			claim_cap;		/* at most this many while limits leave rows (0: no cap) */
	bool		plain_claims;	/* the last claim saw no flow control: claim_plain.sql next */
	bool		took_jobs;		/* claimed jobs in this wake: a limit may have come since */
	int64_t		claim_mono;		/* the claim sent: its leases count from here (~ its now()) */
	int64_t		batch_mono;		/* the claim's answer received: the batch began; start_ms
								 * and end_ms count from here (~ batch.claimed_at) */
	bool		released;		/* the batch's unstarted jobs were given back (fair sharing) */
	int64_t		last_flush;
	int64_t		next_beat;
	bool		offline;		/* its connection lost, waited for (worker_ride_out) */
	int			outages;		/* waits for it in this batch (since a lease's length of heartbeats) */
	int64_t		back_at;		/* when the last wait ended (mono_ms), 0: none */
	int			cur;			/* index of the running job, or -1 */
	int64_t		cur_start;		/* when it started (mono_ms) */
	int64_t		deadline;		/* the running job's timeout, 0: none */
	int64_t		shutdown_at;	/* end of the grace period, 0: not shutting down */
	task_stop	stopped;		/* sticky answer of worker_tick for the running job */
	char		unavailable[1024];	/* why, when it is TASK_STOP_UNAVAILABLE */
	run_summary sum;
	int64_t    *kept;			/* jobs it ran whose outcome was not recorded (their rows
								 * held locked elsewhere): still running under its name */
	int			nkept;
	int			code;
	cq_err		err;
} worker;

/* runner.c: the shared state */
bool past_max_runtime(const shared *sh);
void runner_fault(shared *sh, const char *msg);
bool faulted(shared *sh);
int budget_take(shared *sh, int want);
void budget_return(shared *sh, int n);
void copy_message(char *dst, size_t len, const char *msg);

/*
 * wake.c. wake_start: 0, or an EX_* code with err filled. A failed
 * materialisation on a connection still usable is not the wake's end:
 * it is logged, kept in *later (later->code non-zero) for the run's exit,
 * and the wake goes on to the jobs.
 */
int wake_start(PGconn *conn, const run_opts *o, const char *worker_id, wake_info *wake,
			   run_summary *sum, cq_err *later, cq_err *err);
void wake_end(PGconn *conn, const wake_info *wake, const run_summary *sum, int code);

/* worker.c */
void workers_run(worker *workers, int n);
task_stop worker_tick(void *arg);
task_stop worker_await_connection(worker *w);
bool worker_ride_out(worker *w);

/* slots.c */
void slots_open(worker *w);
void slots_close(worker *w);
int slots_gather(worker *w, job_outcome **out, int **idx);
void slots_recorded(worker *w, job_outcome *rec, const int *idx, int n);
bool slots_pending(const worker *w);
int slots_heartbeat(worker *w);
int slots_flush(worker *w);
void slots_give_back(worker *w, const char *why);
int slots_release(worker *w);
bool others_job(const worker *w, const claimed_job *j);

/* attempt.c */
void attempt_run(worker *w, int i);

/* sessions.c */
PGconn *worker_session(void *arg, char *why, size_t len);
PGconn *worker_author_session(void *arg, const char *role, cq_err *err);
void worker_author_release(void *arg, PGconn *conn, bool reusable);
void worker_unavailable(worker *w, const char *msg);
task_stop worker_session_lost(void *arg);
void worker_sessions_close(worker *w);

#endif
