/*
 * runner — see runner.h; the files of the run loop are listed in
 * run_int.h. This one is the top: runner_run opens the runner's
 * connection, starts the wake (wake.c), runs the workers (worker.c) and
 * ends the wake with the summary. It also keeps what the workers share:
 * the stop flag, the max-jobs budget, the fault.
 */
#include "run/runner.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

#include "pg/handle.h"
#include "pg/pg.h"
#include "run/run_int.h"
#include "util/clock.h"
#include "util/xalloc.h"

volatile sig_atomic_t run_stop_requests;
/*
 * When the first stop request came (mono_ms()), set by the signal handler
 * (clock_gettime is async-signal-safe, and so is a lock-free atomic).
 */
static _Atomic int64_t stop_at;

void
runner_request_stop(void)
{
	if (run_stop_requests == 0)
		atomic_store(&stop_at, mono_ms());
	if (run_stop_requests < 2)
		run_stop_requests = run_stop_requests + 1;
}

/* Set once the runner's first connection is open, before any thread starts. */
static volatile sig_atomic_t connected;
/* How long a wait on the database may last after a stop request: --grace + 1 s. */
static int64_t stop_wait_ms;

/*
 * Whether to give up waiting on the database (pg_set_wait_stop): with no
 * stop request, never. Before the run has its first connection, at once
 * (nothing is claimed yet). After, a wait (a connection being opened, a
 * statement's answer) that has lasted stop_wait_ms since it began or since
 * the stop request, whichever is later: what a server that stopped
 * answering gets, while the statements that record outcomes and give jobs
 * back at shutdown still run as usual.
 */
static bool
wait_stop(int64_t started_ms)
{
	int64_t at;

	if (!run_stop_requests)
		return false;
	if (!connected)
		return true;
	at = atomic_load(&stop_at);
	return mono_ms() - (started_ms > at ? started_ms : at) >= stop_wait_ms;
}

/* --max-runtime is up: claim nothing more, start nothing more. */
bool
past_max_runtime(const shared *sh)
{
	return sh->o->max_runtime_ms > 0 && mono_ms() - sh->start_ms >= sh->o->max_runtime_ms;
}

/* Copy libpq's message without the newline it ends with. */
void
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
void
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
bool
faulted(shared *sh)
{
	bool f;

	pthread_mutex_lock(&sh->lock);
	f = sh->faulted;
	pthread_mutex_unlock(&sh->lock);
	return f;
}

/* Take up to want jobs from the max-jobs budget. */
int
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

void
budget_return(shared *sh, int n)
{
	pthread_mutex_lock(&sh->lock);
	if (sh->jobs_left >= 0)
		sh->jobs_left += n;
	pthread_mutex_unlock(&sh->lock);
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
	char base_id[300];
	wake_info wake = {0};
	cq_err later = {0};
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

	workers = xcalloc((size_t) o->concurrency, sizeof *workers);
	connected = 0;
	stop_wait_ms = o->grace_ms + 1000;
	pg_set_wait_stop(wait_stop);
	/*
	 * No answer to one of the run's own statements (a claim, a heartbeat,
	 * an outcome, the wake's) within the lease: the connection is lost, as
	 * if the server had closed it. By then the leases it was to renew have
	 * run out, so waiting on gains nothing; a server process that stopped
	 * answering while its kernel still acknowledges (which keepalives never
	 * notice) would otherwise hold the run for good.
	 */
	pg_set_answer_limit(o->lease_ms > RUN_MIN_ANSWER_LIMIT_MS ? o->lease_ms : RUN_MIN_ANSWER_LIMIT_MS,
						"--lease");
	/*
	 * Worker 0 runs on the runner's connection: the wake's start and end.
	 * SIGTERM or SIGINT while it is being opened ends the run as one
	 * before the first claim does: nothing done, exit 0.
	 */
	if ((conn = pg_handle_open(&workers[0].db, o->conninfo, err)) == NULL) {
		free(workers);
		pthread_mutex_destroy(&sh.lock);
		if (run_stop_requests) {
			cq_clear(err);
			return 0;
		}
		return err->code;
	}
	connected = 1;
	make_worker_id(o, base_id, sizeof base_id);
	for (int i = 0; i < o->concurrency; i++) {
		worker *w = &workers[i];

		w->sh = &sh;
		w->index = i;
		w->cur = -1;
		w->db.conninfo = o->conninfo;
		if (o->concurrency > 1)
			snprintf(w->id, sizeof w->id, "%s/%d", base_id, i + 1);
		else
			snprintf(w->id, sizeof w->id, "%s", base_id);
	}

	if ((code = wake_start(conn, o, base_id, &wake, sum, &later, err)) != 0 || wake.finished)
		goto out;
	sh.limited = wake.limited;

	workers_run(workers, o->concurrency);
	for (int i = 0; i < o->concurrency; i++) {
		worker *w = &workers[i];

		merge(sum, &w->sum);
		if (w->code != 0 && code == 0) {
			code = w->code;
			*err = w->err;
		}
		if (i > 0)
			pg_handle_close(&w->db);
		worker_sessions_close(w);
	}
	if (code == 0 && sh.faulted)
		code = cq_fail(err, EX_TEMPFAIL, "the runner could not open a database session, so it claimed no more"
					   " jobs and gave back %" PRId64 " (their attempts not counted): %s",
					   sum->given_back, sh.fault);
	if (code == 0 && later.code != 0) {
		code = later.code;
		*err = later;
	}

out:
	/* Worker 0's connection: the runner's, or the one that replaced it. */
	wake_end(workers[0].db.conn, &wake, sum, code);
	pg_handle_close(&workers[0].db);
	free(workers);
	pthread_mutex_destroy(&sh.lock);
	return code;
}
