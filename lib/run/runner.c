/*
 * runner — see runner.h. Threads share only the stop flag, the max-jobs
 * budget and the summary (under a mutex); each worker owns its connection,
 * its claimed batch and its pending outcomes. Tasks run cooperatively:
 * worker_tick() is where timeouts, shutdown and lease renewal happen.
 */
#include "run/runner.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "pg/pg.h"
#include "queue/backoff.h"
#include "queue/wakes.h"
#include "sched/schedule.h"
#include "schema/migrate.h"
#include "tasks/payload.h"
#include "tasks/task.h"
#include "util/duration.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/xalloc.h"

/* How long finished outcomes may wait to be recorded together. */
#define FLUSH_INTERVAL_MS 100
/* A job starting this long after the last heartbeat first asks whether it was cancelled. */
#define CANCEL_CHECK_MS 1000
/* Wakes kept in cronq.wakes. */
#define WAKES_KEPT 10000

static volatile sig_atomic_t stop_requests;

void
runner_request_stop(void)
{
	if (stop_requests < 2)
		stop_requests = stop_requests + 1;
}

/* Sleep up to ms, waking early when a stop is requested. */
static void
nap_ms(int64_t ms)
{
	int64_t until = mono_ms() + ms;

	while (!stop_requests) {
		int64_t left = until - mono_ms();
		struct timespec ts;

		if (left <= 0)
			return;
		if (left > 50)
			left = 50;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1000000;
		nanosleep(&ts, NULL);
	}
}

typedef struct shared {
	const run_opts *o;
	int64_t		start_ms;
	pthread_mutex_t lock;
	int64_t		jobs_left;		/* -1: unlimited */
	run_summary sum;
	bool		faulted;		/* the runner could not open a session: claim and start nothing more */
	char		fault[1024];	/* the first such failure */
	char		fault_note[1100];	/* why the unstarted jobs are given back */
} shared;

/* --max-runtime is up: claim nothing more, start nothing more. */
static bool
past_max_runtime(const shared *sh)
{
	return sh->o->max_runtime_ms > 0 && mono_ms() - sh->start_ms >= sh->o->max_runtime_ms;
}

/* Copy libpq's message without the newline it ends with. */
static void
copy_message(char *dst, size_t len, const char *msg)
{
	size_t n;

	snprintf(dst, len, "%s", msg);
	n = strlen(dst);
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r' || dst[n - 1] == ' '))
		dst[--n] = '\0';
}

/*
 * The runner could not open a session it needs: the server is full
 * (max_connections), starting or stopping, unreachable, or memory ran out.
 * Not the jobs' fault, and the next session would fail alike: from now on
 * no worker claims or starts a job, the job that wanted the session and
 * the jobs not started are given back (attempts not counted), the running
 * ones finish, and the run exits 75 naming the first failure.
 */
static void
runner_fault(shared *sh, const char *msg)
{
	pthread_mutex_lock(&sh->lock);
	if (!sh->faulted) {
		copy_message(sh->fault, sizeof sh->fault, msg);
		snprintf(sh->fault_note, sizeof sh->fault_note, "given back unstarted: %s", sh->fault);
		sh->faulted = true;
	}
	pthread_mutex_unlock(&sh->lock);
}

/* Whether runner_fault() happened (its strings are set, then, for good). */
static bool
faulted(shared *sh)
{
	bool f;

	pthread_mutex_lock(&sh->lock);
	f = sh->faulted;
	pthread_mutex_unlock(&sh->lock);
	return f;
}

/* Where a claimed job stands in its worker. */
typedef enum job_state {
	JOB_WAITING = 0,			/* claimed, not started */
	JOB_PENDING,				/* finished, outcome not yet recorded */
	JOB_DONE,					/* recorded (or dropped: not ours any more) */
} job_state;

typedef struct worker {
	shared	   *sh;
	int			index;
	char		id[320];
	PGconn	   *conn;
	bool		own_conn;
	PGconn	   *lost_conn;		/* the caller's connection, replaced by reconnect() */
	PGconn	   *session;		/* the runner's, for tasks (exec checks, purge), opened on demand */
	PGconn	   *author_conn;	/* logged in as author_role, for sql jobs; kept while the author is */
	char	   *author_role;
	claim_batch batch;
	job_state  *state;
	bool	   *held;			/* still ours, as far as the last heartbeat knows */
	bool	   *cancel;			/* an operator asked to cancel it */
	task_result *res;
	job_outcome *out;
	int64_t		claim_mono;
	int64_t		last_flush;
	int64_t		last_beat;
	int64_t		next_beat;
	int			cur;			/* index of the running job, or -1 */
	int64_t		deadline;		/* the running job's timeout, 0: none */
	int64_t		shutdown_at;	/* end of the grace period, 0: not shutting down */
	task_stop	stopped;		/* sticky answer of worker_tick for the running job */
	char		unavailable[1024];	/* why, when it is TASK_STOP_UNAVAILABLE */
	run_summary sum;
	int			code;
	cq_err		err;
} worker;

static int flush(worker *w);
static bool has_pending(const worker *w);

/* Take up to want jobs from the max-jobs budget. */
static int
budget_take(shared *sh, int want)
{
	int got = want;

	pthread_mutex_lock(&sh->lock);
	if (sh->jobs_left >= 0) {
		if (sh->jobs_left < got)
			got = (int) sh->jobs_left;
		sh->jobs_left -= got;
	}
	pthread_mutex_unlock(&sh->lock);
	return got;
}

static void
budget_return(shared *sh, int n)
{
	pthread_mutex_lock(&sh->lock);
	if (sh->jobs_left >= 0)
		sh->jobs_left += n;
	pthread_mutex_unlock(&sh->lock);
}

/*
 * The worker's connection failed: open a new one, once, so that a dropped
 * connection (a restarted server, a terminated backend) does not stop the
 * running job or cost the batch its attempts. The jobs are still ours:
 * their leases run on, and every later statement is fenced.
 */
static bool
reconnect(worker *w)
{
	cq_err err = {0};
	PGconn *conn;

	if (pg_alive(w->conn) || (conn = pg_connect(w->sh->o->conninfo, &err)) == NULL)
		return false;
	log_full(LOG_WARNING, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}}, NULL, NULL,
			 "the connection to the database was lost (%s); reconnected", w->err.msg);
	if (w->own_conn)
		pg_close(w->conn);
	else
		w->lost_conn = w->conn;	/* the caller's: it closes it */
	w->conn = conn;
	w->own_conn = true;
	return true;
}

/* Renew the leases of every job of the batch not yet recorded. */
static int
heartbeat(worker *w)
{
	int n = 0, rc;
	int64_t *ids = xcalloc((size_t) w->batch.n, sizeof *ids);
	int *attempts = xcalloc((size_t) w->batch.n, sizeof *attempts);
	int *idx = xcalloc((size_t) w->batch.n, sizeof *idx);
	bool *owned = xcalloc((size_t) w->batch.n, sizeof *owned);
	bool *cancel = xcalloc((size_t) w->batch.n, sizeof *cancel);

	for (int i = 0; i < w->batch.n; i++) {
		if (w->state[i] == JOB_DONE || !w->held[i])
			continue;
		ids[n] = w->batch.jobs[i].id;
		attempts[n] = w->batch.jobs[i].attempt;
		idx[n++] = i;
	}
	rc = jobs_heartbeat(w->conn, w->id, ids, attempts, n, w->sh->o->lease_ms, owned, cancel, &w->err);
	if (rc == 0) {
		for (int k = 0; k < n; k++) {
			if (cancel[k] && !w->cancel[idx[k]]) {
				w->cancel[idx[k]] = true;
				log_info("job %" PRId64 " was cancelled by an operator; stopping it", ids[k]);
			}
			if (!owned[k]) {
				w->held[idx[k]] = false;
				log_full(LOG_WARNING, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
						 NULL, NULL, "job %" PRId64 " is no longer held by this worker; stopping it",
						 ids[k]);
			}
		}
		log_debug("renewed %d leases", n);
	}
	w->last_beat = mono_ms();
	w->next_beat = w->last_beat + w->sh->o->lease_ms / 3;
	free(ids);
	free(attempts);
	free(idx);
	free(owned);
	free(cancel);
	return rc;
}

/*
 * A session the running job needs could not be opened, for no fault of
 * the job's: the run stops claiming (runner_fault), and the job, unless
 * already stopped for another reason, is given back.
 */
static void
worker_unavailable(worker *w, const char *msg)
{
	runner_fault(w->sh, msg);
	if (w->cur >= 0 && w->stopped == TASK_GO) {
		copy_message(w->unavailable, sizeof w->unavailable, msg);
		w->stopped = TASK_STOP_UNAVAILABLE;
	}
}

/*
 * The worker's task session: opened at first use, kept for the next jobs,
 * opened again when the server dropped it. It logs in as the runner's
 * own connection did: a failure is never the job's.
 */
static PGconn *
worker_session(void *arg, char *why, size_t len)
{
	worker *w = arg;
	cq_err err = {0};

	if (w->session && !pg_alive(w->session)) {
		pg_close(w->session);
		w->session = NULL;
	}
	if (w->session == NULL && (w->session = pg_connect(w->sh->o->conninfo, &err)) == NULL) {
		snprintf(why, len, "%s", err.msg);
		worker_unavailable(w, err.msg);
	}
	return w->session;
}

/*
 * Whether a failed login as an author is the author's business, for the
 * task to judge: refused (credentials, NOLOGIN, pg_hba.conf), or the
 * role's own CONNECTION LIMIT reached (which must not hold up every other
 * author's jobs). Any other failure is the runner's.
 */
static bool
authors_own_failure(const char *msg)
{
	return pg_login_refused(msg) || strstr(msg, "too many connections for role") != NULL;
}

/*
 * A session logged in as role for a job's SQL: the previous job's when it
 * had the same author (reset by author_release), else a new one; the
 * session of another author is closed first, never lent.
 */
static PGconn *
worker_author_session(void *arg, const char *role, cq_err *err)
{
	worker *w = arg;
	const char *login = PQuser(w->conn);

	if (w->author_conn && strcmp(w->author_role, role) == 0 && pg_alive(w->author_conn))
		return w->author_conn;
	pg_close(w->author_conn);
	free(w->author_role);
	w->author_role = xstrdup(role);
	w->author_conn = pg_connect_as(w->sh->o->conninfo, role, login && strcmp(login, role) == 0, err);
	if (w->author_conn == NULL && !authors_own_failure(err->msg))
		worker_unavailable(w, err->msg);
	return w->author_conn;
}

/*
 * Take a job's session back: closed unless the task vouches for it and it
 * is idle (no transaction a job left open); else DISCARD ALL, which drops
 * temporary objects, resets every setting and the role, deallocates
 * prepared statements, closes cursors, unlistens and releases advisory
 * locks, so the next job of the author starts as on a new session.
 */
static void
worker_author_release(void *arg, PGconn *conn, bool reusable)
{
	worker *w = arg;

	if (conn != w->author_conn)
		return;
	if (reusable && PQtransactionStatus(conn) == PQTRANS_IDLE && pg_run(conn, "discard all", 0, NULL, NULL) == 0)
		return;
	pg_close(w->author_conn);
	w->author_conn = NULL;
}

static task_stop
worker_tick(void *arg)
{
	worker *w = arg;
	int64_t now = mono_ms();

	if (w->stopped != TASK_GO)
		return w->stopped;
	if (stop_requests > 0) {
		if (w->shutdown_at == 0)
			w->shutdown_at = now + w->sh->o->grace_ms;
		if (stop_requests > 1 || now >= w->shutdown_at)
			return w->stopped = TASK_STOP_SHUTDOWN;
	}
	if (w->deadline && now >= w->deadline)
		return w->stopped = TASK_STOP_TIMEOUT;
	if (now >= w->next_beat) {
		if (heartbeat(w) != 0 && !(reconnect(w) && heartbeat(w) == 0)) {
			w->code = w->err.code;
			return w->stopped = TASK_STOP_DISCONNECTED;
		}
		if (w->cur >= 0 && !w->held[w->cur])
			return w->stopped = TASK_STOP_LOST;
		if (w->cur >= 0 && w->cancel[w->cur])
			return w->stopped = TASK_STOP_CANCELLED;
	}
	/*
	 * The outcomes of the jobs that ran before this one are recorded while
	 * it runs (the worker's connection is free: tasks use their session),
	 * not after it: a crash or a lost connection during a long job must not
	 * cost them their result.
	 */
	if (w->cur >= 0 && now - w->last_flush >= FLUSH_INTERVAL_MS && has_pending(w) && flush(w) != 0)
		return w->stopped = TASK_STOP_DISCONNECTED;
	return TASK_GO;
}

static void
log_outcome(worker *w, const claimed_job *j, const job_outcome *o)
{
	char id[32], attempt[16], dur[32];
	log_field fields[] = {
		{"job", id, true}, {"type", j->type, false}, {"queue", j->queue, false},
		{"attempt", attempt, true}, {"duration_ms", dur, true},
		{"outcome", run_outcome_sql(o->outcome), false}, {"status", job_status_sql(o->new_status), false},
		{NULL, NULL, false},
	};
	char delay[32];

	snprintf(id, sizeof id, "%" PRId64, j->id);
	snprintf(attempt, sizeof attempt, "%d", j->attempt);
	snprintf(dur, sizeof dur, "%" PRId64, o->end_ms - o->start_ms);
	duration_format(o->delay_ms, delay, sizeof delay);

	if (o->new_status == JOB_STATUS_NONE) {
		if (o->outcome != OUTCOME_LEASE_LOST || w->held[j - w->batch.jobs] == false)
			log_full(LOG_WARNING, fields, NULL, NULL,
					 "job %" PRId64 " was taken over by another worker; its outcome was not recorded", j->id);
	} else if (o->new_status == JOB_STATUS_DEAD)
		log_full(LOG_WARNING, fields, NULL, NULL, "job %" PRId64 " (%s) is dead after attempt %d: %s",
				 j->id, j->type, j->attempt, o->error ? o->error : run_outcome_sql(o->outcome));
	else if (o->new_status == JOB_STATUS_FAILED)
		log_full(LOG_INFO, fields, NULL, NULL, "job %" PRId64 " (%s) failed attempt %d of %d, retry in %s: %s",
				 j->id, j->type, j->attempt, j->max_attempts, delay, o->error ? o->error : run_outcome_sql(o->outcome));
	else
		log_full(LOG_INFO, fields, NULL, NULL, "job %" PRId64 " (%s) %s", j->id, j->type,
				 o->new_status == JOB_STATUS_QUEUED ? "given back" : job_status_sql(o->new_status));
}

/*
 * The batch's pending outcomes, copied into *out (positions in *idx);
 * returns how many. The copies point into w->res, alive until applied.
 */
static int
gather_pending(worker *w, job_outcome **out, int **idx)
{
	int n = 0;

	*out = xcalloc((size_t) (w->batch.n ? w->batch.n : 1), sizeof **out);
	*idx = xcalloc((size_t) (w->batch.n ? w->batch.n : 1), sizeof **idx);
	for (int i = 0; i < w->batch.n; i++)
		if (w->state[i] == JOB_PENDING) {
			(*out)[n] = w->out[i];
			(*idx)[n++] = i;
		}
	return n;
}

/* Recorded: log each outcome, count it, release its strings. */
static void
apply_recorded(worker *w, job_outcome *rec, const int *idx, int n)
{
	for (int k = 0; k < n; k++) {
		int i = idx[k];
		job_status st = rec[k].new_status;

		w->out[i] = rec[k];
		w->state[i] = JOB_DONE;
		log_outcome(w, &w->batch.jobs[i], &w->out[i]);
		if (st == JOB_STATUS_NONE)
			w->sum.lost++;
		else if (st == JOB_STATUS_QUEUED)
			w->sum.given_back++;
		else {
			w->sum.run++;
			if (st == JOB_STATUS_SUCCEEDED)
				w->sum.succeeded++;
			else if (st == JOB_STATUS_FAILED || st == JOB_STATUS_DEAD)
				w->sum.failed++;
		}
		task_result_clear(&w->res[i]);
	}
	w->last_flush = mono_ms();
}

/* Whether any outcome of the batch waits to be recorded. */
static bool
has_pending(const worker *w)
{
	for (int i = 0; i < w->batch.n; i++)
		if (w->state[i] == JOB_PENDING)
			return true;
	return false;
}

/*
 * Record every pending outcome of the batch in one statement, on a new
 * connection if the old one was lost. (Had the lost statement committed,
 * the second finds the jobs recorded: fenced out, they get a lease_lost
 * history row, and nothing changes.)
 */
static int
flush(worker *w)
{
	job_outcome *rec;
	int *idx;
	int n = gather_pending(w, &rec, &idx);
	int rc = n ? jobs_record(w->conn, rec, n, false, &w->err) : 0;

	if (rc != 0 && reconnect(w))
		rc = jobs_record(w->conn, rec, n, false, &w->err);

	if (rc == 0)
		apply_recorded(w, rec, idx, n);
	else
		w->code = rc;
	free(rec);
	free(idx);
	return rc;
}

/* Give back the claimed jobs that never started (shutdown, --max-runtime). */
static void
give_back_waiting(worker *w, const char *why)
{
	int64_t now = mono_ms() - w->claim_mono;

	for (int i = 0; i < w->batch.n; i++) {
		job_outcome *o = &w->out[i];

		if (w->state[i] != JOB_WAITING)
			continue;
		memset(o, 0, sizeof *o);
		o->id = w->batch.jobs[i].id;
		o->attempt = w->batch.jobs[i].attempt;
		o->worker = w->id;
		o->outcome = w->held[i] ? OUTCOME_GIVEN_BACK : OUTCOME_LEASE_LOST;
		o->error = why;
		o->base_time = w->batch.claimed_at;
		o->start_ms = o->end_ms = now;
		w->state[i] = JOB_PENDING;
	}
}

/* Run job i of the batch and leave its outcome pending. */
static void
run_one(worker *w, int i)
{
	const claimed_job *j = &w->batch.jobs[i];
	task_result *r = &w->res[i];
	job_outcome *o = &w->out[i];
	const task_def *t = task_find(j->type);
	task_ctx ctx = {worker_tick, w, worker_session, worker_author_session, worker_author_release,
					w->sh->o->exec_dir, w->sh->o->kill_grace_ms, w->sh->o->exec_uid, w->sh->o->exec_gid,
					w->sh->o->exec_home};
	/* Parsed only now, and freed after: one payload alive at a time. */
	json_t *payload = json_loads(j->payload_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	task_job tj = {j->id, j->attempt, j->type, j->queue, payload, j->payload_text,
				   j->idempotency_key, j->scheduled_for, j->enqueued_by};
	char why[1024];
	int64_t start = mono_ms();
	task_stop stop;

	w->cur = i;
	w->stopped = TASK_GO;
	w->deadline = j->timeout_ms > 0 ? start + j->timeout_ms : 0;
	memset(r, 0, sizeof *r);

	if (w->cancel[i])
		w->stopped = TASK_STOP_CANCELLED;
	else if (t == NULL)
		task_result_set(r, TASK_PERMANENT, "unknown_task", "unrecognized task type \"%s\"", j->type);
	else if (payload == NULL || payload_validate(j->type, payload, why, sizeof why) != 0)
		task_result_set(r, TASK_PERMANENT, "bad_payload", "%s",
						payload ? why : "stored payload is not valid JSON");
	else
		t->run(&ctx, &tj, r);
	json_decref(payload);

	stop = w->stopped;
	/*
	 * Work that took effect (a committed transaction) stands however late
	 * the stop came: recorded as a timeout or given back, it would run
	 * again. (A lost lease is fenced anyway; a lost connection records
	 * nothing.)
	 */
	if (r->took_effect && r->status == TASK_SUCCEEDED &&
		(stop == TASK_STOP_TIMEOUT || stop == TASK_STOP_SHUTDOWN || stop == TASK_STOP_CANCELLED ||
		 stop == TASK_STOP_UNAVAILABLE))
		stop = TASK_GO;
	w->cur = -1;
	w->deadline = 0;
	/*
	 * A stopped task may have cancelled a query; libpq's cancel request can
	 * arrive late and hit whatever runs next on that session. Never reuse it.
	 */
	if (stop != TASK_GO && w->session) {
		pg_close(w->session);
		w->session = NULL;
	}

	memset(o, 0, sizeof *o);
	o->id = j->id;
	o->attempt = j->attempt;
	o->worker = w->id;
	o->base_time = w->batch.claimed_at;
	o->start_ms = start - w->claim_mono;
	o->end_ms = mono_ms() - w->claim_mono;
	o->delay_ms = backoff_delay_ms(j->attempt, j->id, w->sh->o->seed);

	switch (stop) {
		case TASK_GO:
			o->outcome = r->status == TASK_SUCCEEDED ? OUTCOME_SUCCEEDED : OUTCOME_FAILED;
			o->permanent = r->status == TASK_PERMANENT;
			break;
		case TASK_STOP_TIMEOUT: {
			char d[32];

			duration_format(j->timeout_ms, d, sizeof d);
			task_result_set(r, TASK_FAILED, "timeout", "timed out after %s", d);
			o->outcome = OUTCOME_TIMEOUT;
			break;
		}
		case TASK_STOP_SHUTDOWN:
			task_result_set(r, TASK_FAILED, NULL, "given back at shutdown");
			o->outcome = OUTCOME_GIVEN_BACK;
			break;
		case TASK_STOP_UNAVAILABLE:
			task_result_set(r, TASK_FAILED, NULL, "given back: %s", w->unavailable);
			o->outcome = OUTCOME_GIVEN_BACK;
			break;
		case TASK_STOP_CANCELLED:
			task_result_set(r, TASK_FAILED, "cancelled", "cancelled while running");
			o->outcome = OUTCOME_CANCELLED;
			break;
		case TASK_STOP_LOST:
			o->outcome = OUTCOME_LEASE_LOST;
			break;
		case TASK_STOP_DISCONNECTED:
			/* Nothing can be recorded; a later run rescues the lease. */
			w->state[i] = JOB_DONE;
			task_result_clear(r);
			return;
	}
	o->error_code = r->error_code[0] ? r->error_code : NULL;
	o->error = r->error;
	o->output = r->output;
	w->state[i] = JOB_PENDING;
}

/*
 * Run the claimed batch. Outcomes of quick jobs wait, pending, to be
 * recorded with the next claim; they are flushed after a job when
 * FLUSH_INTERVAL_MS have passed, and during a slow job by worker_tick, so
 * that a crash loses little. Before a job starts after a slow one, a
 * heartbeat tells whether an operator cancelled it meanwhile. On shutdown
 * or when --max-runtime is up, the jobs not started are given back.
 */
static void
run_batch(worker *w)
{
	int n = w->batch.n;

	w->state = xcalloc((size_t) n, sizeof *w->state);
	w->held = xcalloc((size_t) n, sizeof *w->held);
	w->cancel = xcalloc((size_t) n, sizeof *w->cancel);
	w->res = xcalloc((size_t) n, sizeof *w->res);
	w->out = xcalloc((size_t) n, sizeof *w->out);
	for (int i = 0; i < n; i++)
		w->held[i] = true;
	w->last_beat = w->claim_mono;
	w->next_beat = w->claim_mono + w->sh->o->lease_ms / 3;
	w->last_flush = mono_ms();

	for (int i = 0; i < n && w->code == 0; i++) {
		w->stopped = TASK_GO;
		if (stop_requests || past_max_runtime(w->sh) || faulted(w->sh))
			break;
		if (mono_ms() - w->last_beat >= CANCEL_CHECK_MS)
			w->next_beat = 0;
		if (worker_tick(w) == TASK_STOP_DISCONNECTED)
			break;
		if (!w->held[i]) {
			w->state[i] = JOB_DONE;
			continue;
		}
		run_one(w, i);
		if (w->code == 0 && mono_ms() - w->last_flush >= FLUSH_INTERVAL_MS)
			flush(w);
	}
	if (w->code == 0)
		give_back_waiting(w, stop_requests ? "given back unstarted at shutdown"
						  : faulted(w->sh) ? w->sh->fault_note
						  : "given back unstarted: --max-runtime is up");
}

/* Release the batch (its outcomes recorded, or beyond recording). */
static void
end_batch(worker *w)
{
	for (int i = 0; i < w->batch.n; i++)
		task_result_clear(&w->res[i]);
	free(w->state);
	free(w->held);
	free(w->cancel);
	free(w->res);
	free(w->out);
	w->state = NULL;
	w->held = NULL;
	w->cancel = NULL;
	w->res = NULL;
	w->out = NULL;
	claim_batch_free(&w->batch);
}

static void *
worker_main(void *arg)
{
	worker *w = arg;
	const run_opts *o = w->sh->o;
	bool have_batch = false;

	if (w->conn == NULL) {
		w->conn = pg_connect(o->conninfo, &w->err);
		w->own_conn = true;
		if (w->conn == NULL) {
			/* Nothing claimed yet; the others stop claiming too. */
			runner_fault(w->sh, w->err.msg);
			cq_clear(&w->err);
			return NULL;
		}
	}
	while (w->code == 0) {
		bool stopping = stop_requests || past_max_runtime(w->sh) || faulted(w->sh);
		int limit = stopping ? 0 : budget_take(w->sh, o->batch);
		job_outcome *rec = NULL;
		int *idx = NULL;
		int npending = 0;
		int64_t claim_mono;
		claim_batch next;

		if (limit == 0) {
			if (have_batch)
				flush(w);
			break;
		}
		/* The previous batch's outcomes ride along with the next claim. */
		if (have_batch)
			npending = gather_pending(w, &rec, &idx);
		claim_mono = mono_ms();
		w->code = jobs_record_and_claim(w->conn, rec, npending, w->id, limit, o->lease_ms,
										&o->filter, &next, &w->err);
		if (w->code == 0 && have_batch)
			apply_recorded(w, rec, idx, npending);
		else if (w->code != 0 && npending > 0 && !pg_alive(w->conn)) {
			/*
			 * Connection lost: flush() records the finished jobs' outcomes
			 * on a new one; the claim is not tried again (it may have
			 * committed), and the run ends with the error.
			 */
			cq_err lost = w->err;
			int code = w->code;

			flush(w);
			w->code = code;
			w->err = lost;
		}
		free(rec);
		free(idx);
		if (have_batch)
			end_batch(w);
		have_batch = false;
		if (w->code != 0)
			break;
		budget_return(w->sh, limit - next.n);
		w->batch = next;
		w->claim_mono = claim_mono;
		if (w->batch.n == 0) {
			claim_batch_free(&w->batch);
			if (o->linger_ms > 0 && mono_ms() - w->sh->start_ms < o->linger_ms && !stop_requests) {
				nap_ms(o->poll_ms);
				continue;
			}
			break;
		}
		log_full(LOG_INFO, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
				 NULL, NULL, "claimed %d jobs", w->batch.n);
		run_batch(w);
		have_batch = true;
	}
	/* Recorded, or (connection lost) left to a later run's rescue. */
	if (have_batch)
		end_batch(w);
	return NULL;
}

static void
make_worker_id(const run_opts *o, char *out, size_t len)
{
	char host[256] = "localhost";
	uint32_t rnd = 0;

	if (o->worker_id) {
		snprintf(out, len, "%s", o->worker_id);
		return;
	}
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
		rnd = (uint32_t) (mono_ms() ^ ((int64_t) getpid() << 16));
	snprintf(out, len, "%s:%d:%08x", host, (int) getpid(), rnd);
}

static void
merge(run_summary *into, const run_summary *from)
{
	into->run += from->run;
	into->succeeded += from->succeeded;
	into->failed += from->failed;
	into->given_back += from->given_back;
	into->lost += from->lost;
}

int
runner_run(const run_opts *o, run_summary *sum, cq_err *err)
{
	shared sh;
	worker *workers;
	PGconn *conn;
	char state[6];
	char base_id[300], host[256] = "localhost";
	wake_info wake = {0};
	int code = 0;

	/*
	 * Not dumpable: a job's program runs as this OS user, and a process of
	 * the same user may otherwise ptrace the runner or its supervisors,
	 * take their descriptors (pidfd_getfd: the database sessions) or read
	 * their /proc environ and memory (credentials). The program itself is
	 * dumpable again after its execve; its parents stay out of its reach.
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	memset(sum, 0, sizeof *sum);
	memset(&sh, 0, sizeof sh);
	sh.o = o;
	sh.start_ms = mono_ms();
	sh.jobs_left = o->max_jobs > 0 ? o->max_jobs : -1;
	pthread_mutex_init(&sh.lock, NULL);

	conn = pg_connect(o->conninfo, err);
	if (conn == NULL) {
		pthread_mutex_destroy(&sh.lock);
		return err->code;
	}
	make_worker_id(o, base_id, sizeof base_id);
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	workers = xcalloc((size_t) o->concurrency, sizeof *workers);
	for (int i = 0; i < o->concurrency; i++) {
		worker *w = &workers[i];

		w->sh = &sh;
		w->index = i;
		w->cur = -1;
		if (o->concurrency > 1)
			snprintf(w->id, sizeof w->id, "%s/%d", base_id, i + 1);
		else
			snprintf(w->id, sizeof w->id, "%s", base_id);
	}

	{
		const wake_args a = {base_id, host, (int) getpid(), migrate_latest_version(),
							 o->linger_ms <= 0};

		if (jobs_wake(conn, &a, &o->filter, &wake, err, state) != 0) {
			code = migrate_explain_missing(conn, state, err);
			goto out;
		}
	}
	if ((code = migrate_check_version(wake.version, err)) != 0)
		goto out;
	/* Keep the newest WAKES_KEPT wakes (and up to 100 more). */
	if (wake.wake_id % 100 == 0 && (code = wakes_trim(conn, wake.wake_id, WAKES_KEPT, err)) != 0)
		goto out;
	if (wake.finished)
		goto out;

	if (wake.need_materialise &&
		(code = schedule_materialise(conn, &sum->scheduled, &sum->skipped, err)) != 0)
		goto out;

	if (wake.need_rescue && (code = jobs_rescue(conn, &sum->rescued, err)) != 0)
		goto out;

	workers[0].conn = conn;
	if (o->concurrency == 1)
		worker_main(&workers[0]);
	else {
		pthread_t *threads = xcalloc((size_t) o->concurrency, sizeof *threads);

		for (int i = 0; i < o->concurrency; i++)
			if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0) {
				workers[i].code = cq_fail(&workers[i].err, EX_OSERR, "could not start worker thread");
				threads[i] = 0;
			}
		for (int i = 0; i < o->concurrency; i++)
			if (threads[i])
				pthread_join(threads[i], NULL);
		free(threads);
	}
	/* Worker 0 ran on this connection; if it had to open another, use that. */
	if (workers[0].lost_conn == conn) {
		pg_close(conn);
		conn = workers[0].conn;
		workers[0].own_conn = false;
	}
	for (int i = 0; i < o->concurrency; i++) {
		worker *w = &workers[i];

		merge(sum, &w->sum);
		if (w->code != 0 && code == 0) {
			code = w->code;
			*err = w->err;
		}
		if (w->own_conn)
			pg_close(w->conn);
		pg_close(w->session);
		pg_close(w->author_conn);
		free(w->author_role);
	}
	if (code == 0 && sh.faulted)
		code = cq_fail(err, EX_TEMPFAIL, "the runner could not open a database session, so it claimed no more"
					   " jobs and gave back %" PRId64 " (their attempts not counted): %s",
					   sum->given_back, sh.fault);

out:
	if (wake.wake_id && !wake.finished && pg_alive(conn)) {
		cq_err ignored;

		if (wakes_finish(conn, wake.wake_id, sum->run, sum->failed, code, &ignored) != 0)
			log_debug("could not record the end of the wake: %s", ignored.msg);
	}
	free(workers);
	pg_close(conn);
	pthread_mutex_destroy(&sh.lock);
	return code;
}
