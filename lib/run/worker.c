/*
 * worker — the worker pipeline: one thread per worker (or the caller's,
 * for one), each on its own connection, claiming a batch with the
 * previous batch's outcomes in the same round trip, running it job by job
 * (attempt.c), until nothing is due or a limit is reached. The batch's
 * size follows the pace of its jobs (pace.c), and the jobs of a batch
 * still waiting PACE_HOLD_MS after the claim returned are given back for
 * an idle worker to start (fair sharing). worker_tick() is what a running
 * task calls: where timeouts, shutdown, lease renewal, cancellation, that
 * giving back and the recording of finished outcomes happen.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "pg/pg.h"
#include "run/pace.h"
#include "run/run_int.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/xalloc.h"

/* How long finished outcomes may wait to be recorded together. */
#define FLUSH_INTERVAL_MS 100

/*
 * Without --max-runtime, how long after its start a wake goes on waiting
 * for room under a limit: under cron, it ends before the next minute's.
 */
#define HELD_WAIT_MS (55 * 1000)
/* How often a worker waiting for room claims again (at most: --poll). */
#define HELD_POLL_MS 250

/*
 * With the worker's connection lost and not opened again, how often it
 * tries again while the jobs it holds have lease left (worker_ride_out),
 * and in how many outages of one batch at most, counted afresh after a
 * lease's length of heartbeats (a connection lost again each time it is
 * opened must not keep a batch waiting for ever).
 */
#define RECONNECT_RETRY_MS 1000
#define OUTAGES_MAX 3

/*
 * Sleep until until (mono_ms), waking early once requests stop requests
 * have come (run_stop_requests), 50 ms at a time.
 */
static void
nap(int64_t until, int requests)
{
	while (run_stop_requests < requests) {
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

/* Sleep up to ms, waking early when a stop is requested. */
static void
nap_ms(int64_t ms)
{
	nap(mono_ms() + ms, 1);
}

/*
 * Sleep until until, whatever a first stop request says (a wait for the
 * database after one must not spin), but not past the end of the
 * shutdown's grace, and not at all after a second request.
 */
static void
nap_until(const worker *w, int64_t until)
{
	nap(w->shutdown_at && w->shutdown_at < until ? w->shutdown_at : until, 2);
}

/*
 * The worker's connection is lost, and opening it again failed (a server
 * restarting, a failover under way): whether the running job, and the
 * outcomes waiting to be recorded, may wait for it (then the next
 * heartbeat, which opens it again, is set RECONNECT_RETRY_MS away). They
 * may while their leases last: no other runner can take them before, so
 * the job goes on (it was not the job's fault) and the worker tries again
 * every RECONNECT_RETRY_MS, as long as the next attempt (bounded by
 * connect_timeout, per host), and then stopping the job (its kill grace,
 * and a second), would still end inside the lease; in OUTAGES_MAX
 * outages of a batch at most. A statement that failed on a live
 * connection is no outage: false.
 */
bool
worker_ride_out(worker *w)
{
	int64_t now = mono_ms(), last = 0, limit;

	if (pg_alive(w->db.conn) || (limit = pg_reconnect_limit_ms(w->db.conn)) < 0)
		return false;
	/* A lease's length of heartbeats since the last outage: a new count. */
	if (!w->offline && w->back_at && now - w->back_at > w->sh->o->lease_ms)
		w->outages = 0;
	if (!w->offline && w->outages >= OUTAGES_MAX)
		return false;
	for (int i = 0; i < w->batch.n; i++) {
		const slot *s = &w->slots[i];

		if (s->held && (i == w->cur || s->state == SLOT_PENDING) && s->lease_end > last)
			last = s->lease_end;
	}
	if (now + RECONNECT_RETRY_MS + limit + w->sh->o->kill_grace_ms + 1000 >= last)
		return false;
	if (!w->offline) {
		w->outages++;
		log_full(LOG_INFO, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}}, NULL, NULL,
				 "the connection to the database is lost (%s); waiting for it while the leases last",
				 w->err.msg);
	}
	w->offline = true;
	w->next_beat = now + RECONNECT_RETRY_MS;
	return true;
}

/*
 * The leases renewed; tried once more when the first try failed for what
 * passes: a statement cancelled on a live connection (a DBA's
 * pg_cancel_backend must not stop the job), or a connection lost and
 * opened again (may_repair: not when the job's deadline would pass
 * meanwhile).
 */
static bool
heartbeat(worker *w, bool may_repair)
{
	if (slots_heartbeat(w) == 0)
		return true;
	if (pg_transient(&w->err) && pg_alive(w->db.conn)) {
		cq_clear(&w->err);
		return slots_heartbeat(w) == 0;
	}
	return may_repair && pg_handle_repair(&w->db, w->id, w->err.msg) && slots_heartbeat(w) == 0;
}

/*
 * After a claim whose answer was lost with its connection: it may have
 * committed, and the jobs it took would stay running under this worker's
 * name, never started, until the rescue took them an attempt each. On a
 * connection opened again they are given back: every job running under
 * its name but those it ran, whose outcomes are recorded or left to the
 * rescue (this batch's, and the earlier ones' left unrecorded: w->kept).
 * Not under a --worker-id, which another process may share.
 */
static void
give_back_unknown(worker *w)
{
	cq_err err = {0};
	int n = 0, nran = 0;
	int64_t *ran;

	if (w->sh->o->worker_id || (!pg_alive(w->db.conn) && !pg_handle_repair(&w->db, w->id, w->err.msg)))
		return;
	ran = xcalloc((size_t) (w->nkept + w->batch.n) + 1, sizeof *ran);
	for (int i = 0; i < w->nkept; i++)
		ran[nran++] = w->kept[i];
	for (int i = 0; i < w->batch.n; i++)
		ran[nran++] = w->slots[i].job->id;
	if (jobs_give_back_unknown(w->db.conn, w->id, ran, nran, &n, &err) != 0)
		log_warning("could not give back the jobs a claim whose answer was lost may have taken: %s;"
					" the rescue takes them once their leases expire", err.msg);
	else if (n > 0)
		log_warning("gave back %d job%s that a claim whose answer was lost had taken", n, n == 1 ? "" : "s");
	free(ran);
}

task_stop
worker_tick(void *arg)
{
	worker *w = arg;
	int64_t now = mono_ms();

	if (w->stopped != TASK_GO)
		return w->stopped;
	if (run_stop_requests > 0) {
		if (w->shutdown_at == 0)
			w->shutdown_at = now + w->sh->o->grace_ms;
		if (run_stop_requests > 1 || now >= w->shutdown_at)
			return w->stopped = TASK_STOP_SHUTDOWN;
	}
	if (w->deadline && now >= w->deadline)
		return w->stopped = TASK_STOP_TIMEOUT;
	if (now >= w->next_beat) {
		/*
		 * An attempt to reconnect may block for its connect_timeout: not
		 * made when the job's timeout would pass meanwhile (the job is
		 * stopped first; the wait for the database goes on).
		 */
		bool may_repair = !(w->deadline && now + pg_reconnect_limit_ms(w->db.conn) >= w->deadline);

		if (!heartbeat(w, may_repair)) {
			if (worker_ride_out(w))
				return TASK_GO;
			w->code = w->err.code ? w->err.code : EX_TEMPFAIL;
			return w->stopped = TASK_STOP_DISCONNECTED;
		}
		if (w->offline)
			w->back_at = now;
		w->offline = false;
		if (w->cur >= 0 && !w->slots[w->cur].held)
			return w->stopped = TASK_STOP_LOST;
		if (w->cur >= 0 && w->slots[w->cur].cancel)
			return w->stopped = TASK_STOP_CANCELLED;
	}
	/*
	 * Its lease ran out unrenewed (heartbeats skipped its row, which
	 * another transaction held locked): another runner may take it over
	 * now, so it stops here, as a lost job does.
	 */
	if (w->cur >= 0 && now >= w->slots[w->cur].lease_end) {
		log_full(LOG_WARNING, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}}, NULL, NULL,
				 "job %" PRId64 ": its lease ran out unrenewed (its row was locked by another"
				 " transaction); stopping it", w->slots[w->cur].job->id);
		return w->stopped = TASK_STOP_LOST;
	}
	/* Riding out a lost connection: nothing else can be done meanwhile. */
	if (!pg_alive(w->db.conn))
		return TASK_GO;
	/* A slow job: the jobs claimed behind it go to idle workers. */
	if (w->cur >= 0 && !w->released && now - w->batch_mono >= PACE_HOLD_MS &&
		slots_release(w) != 0)
		return w->stopped = TASK_STOP_DISCONNECTED;
	/*
	 * The outcomes of the jobs that ran before this one are recorded while
	 * it runs (the worker's connection is free: tasks use their session),
	 * not after it: a crash or a lost connection during a long job must not
	 * cost them their result.
	 */
	if (w->cur >= 0 && now - w->last_flush >= FLUSH_INTERVAL_MS && slots_pending(w) &&
		slots_flush(w) != 0)
		return w->stopped = TASK_STOP_DISCONNECTED;
	return TASK_GO;
}

/*
 * Tick until the worker's connection is usable again (at once when it is):
 * TASK_GO then; else why not (TASK_STOP_DISCONNECTED once no lease held
 * leaves time to wait, or a stop).
 */
task_stop
worker_await_connection(worker *w)
{
	task_stop stop;

	while ((stop = worker_tick(w)) == TASK_GO && !pg_alive(w->db.conn))
		nap_until(w, w->next_beat);
	/*
	 * Shut down before it was back: what it held is left for the rescue,
	 * and the run says so (75). (The running job's timeout, a cancel or a
	 * lost lease stop the job, not the wait: its outcome waits too.)
	 */
	if (stop == TASK_STOP_SHUTDOWN && !pg_alive(w->db.conn) && w->code == 0) {
		w->code = w->err.code ? w->err.code : EX_TEMPFAIL;
		cq_prefix(&w->err, "stopped while waiting for the database, its jobs left to be rescued: ");
	}
	return stop;
}

/*
 * Run the claimed batch; returns how many of its jobs started. Outcomes of
 * quick jobs wait, pending, to be recorded with the next claim; they are
 * flushed after a job when FLUSH_INTERVAL_MS have passed, and during a
 * slow job by worker_tick, so that a crash loses little. PACE_HOLD_MS
 * after the claim, the jobs not started are given back for idle workers
 * (here between two jobs, or in worker_tick during one; the give-back
 * ends one an operator cancelled meanwhile). A job it could not give back
 * starts later, after a heartbeat. The jobs not started are given back
 * too on shutdown or when --max-runtime is up.
 */
static int
run_batch(worker *w)
{
	int n = w->batch.n, started = 0;

	slots_open(w);
	w->released = false;
	w->next_beat = w->claim_mono + w->sh->o->lease_ms / 3;
	w->last_flush = mono_ms();

	for (int i = 0; i < n && w->code == 0; i++) {
		w->stopped = TASK_GO;
		if (run_stop_requests || past_max_runtime(w->sh) || faulted(w->sh))
			break;
		if (started > 0 && !w->released && pg_alive(w->db.conn) && mono_ms() - w->batch_mono >= PACE_HOLD_MS &&
			slots_release(w) != 0)
			break;
		/*
		 * A job kept after the give-back (its row locked then, the
		 * statement refused, or the job not ours any more) starts late: a
		 * heartbeat first asks whether it is still ours and was cancelled
		 * meanwhile (perhaps by the job that held its lock).
		 */
		if (w->released && w->slots[i].state == SLOT_WAITING)
			w->next_beat = 0;
		/* No job starts while the connection is lost. */
		if (worker_await_connection(w) == TASK_STOP_DISCONNECTED || !pg_alive(w->db.conn))
			break;
		if (w->slots[i].state != SLOT_WAITING)
			continue;
		if (!w->slots[i].held || mono_ms() >= w->slots[i].lease_end) {
			w->slots[i].state = SLOT_DONE;
			continue;
		}
		attempt_run(w, i);
		started++;
		if (w->code == 0 && pg_alive(w->db.conn) && mono_ms() - w->last_flush >= FLUSH_INTERVAL_MS)
			slots_flush(w);
	}
	/* The last outcomes, finished while the connection was lost, wait for it. */
	w->stopped = TASK_GO;
	if (w->code == 0 && !pg_alive(w->db.conn))
		worker_await_connection(w);
	if (w->code == 0)
		slots_give_back(w, run_stop_requests ? "given back unstarted at shutdown"
						: faulted(w->sh) ? w->sh->fault_note
						: "given back unstarted: --max-runtime is up");
	return started;
}

/*
 * Record the batch's finished outcomes; with the connection lost, wait
 * for it while their leases allow (worker_ride_out), then record them.
 */
static void
flush_all(worker *w)
{
	w->stopped = TASK_GO;
	while (slots_flush(w) == 0 && slots_pending(w) && worker_await_connection(w) == TASK_GO)
		;
}

/* Release the batch (its outcomes recorded, or beyond recording). */
static void
end_batch(worker *w)
{
	slots_close(w);
	claim_batch_free(&w->batch);
}

/*
 * The cap on the next claims' size under limits: a claim that left due rows
 * for want of room took all the room there was, so the next takes no more
 * than it got (rows locked and left cost the claim); a capped claim that
 * got all it asked for, none left, lets the cap grow by a quarter.
 */
static int
limit_cap(int cap, int asked, int got, int refused)
{
	if (refused > 0)
		return got > 0 ? got : 1;
	if (cap > 0 && got == asked)
		return cap + cap / 4 + 1;
	return cap;
}

/*
 * After an empty claim: whether due jobs wait only for room under a full
 * limit, and this wake may wait for them (until --max-runtime, which the
 * claim loop obeys; without it, HELD_WAIT_MS after its start), rescuing
 * expired leases meanwhile. Asked when the wake saw limits, or when this
 * worker took jobs before (a limit made since then may be what empties
 * its claims; an idle wake without limits does not pay for the question).
 * A failed question sets w->code.
 */
static bool
waits_for_room(worker *w)
{
	const run_opts *o = w->sh->o;
	bool held = false, expired = false;
	int rescued = 0;

	if (!(w->sh->limited || w->took_jobs) || run_stop_requests || faulted(w->sh))
		return false;
	if (o->max_runtime_ms == 0 && mono_ms() - w->sh->start_ms >= HELD_WAIT_MS)
		return false;
	if ((w->code = jobs_held(w->db.conn, &o->filter, &held, &expired, &w->err)) != 0) {
		cq_prefix(&w->err, "could not ask whether jobs wait for a limit: ");
		return false;
	}
	/* A dead runner's jobs hold the room until their leases are rescued. */
	if (held && expired) {
		if ((w->code = jobs_rescue(w->db.conn, &rescued, &w->err)) != 0) {
			cq_prefix(&w->err, "could not rescue the expired leases: ");
			return false;
		}
		w->sum.rescued += rescued;
	}
	return held;
}

static void *
worker_main(void *arg)
{
	worker *w = arg;
	const run_opts *o = w->sh->o;
	bool have_batch = false;
	int started;

	if (w->db.conn == NULL && pg_handle_open(&w->db, o->conninfo, &w->err) == NULL) {
		/* Nothing claimed yet; the others stop claiming too. */
		runner_fault(w->sh, w->err.msg);
		cq_clear(&w->err);
		return NULL;
	}
	while (w->code == 0) {
		bool stopping = run_stop_requests || past_max_runtime(w->sh) || faulted(w->sh);
		int limit;
		job_outcome *rec = NULL;
		int *idx = NULL;
		int npending = 0;
		int64_t claim_mono;
		claim_batch next;

		if (w->claim_limit == 0)
			w->claim_limit = 1;
		limit = stopping ? 0 : budget_take(w->sh, w->claim_limit);
		if (limit == 0) {
			if (have_batch)
				flush_all(w);
			break;
		}
		/* The previous batch's outcomes ride along with the next claim. */
		if (have_batch)
			npending = slots_gather(w, &rec, &idx);
		claim_mono = mono_ms();
		w->code = jobs_record_and_claim(w->db.conn, rec, npending, w->id, limit, o->lease_ms,
										&o->filter, w->plain_claims, &next, &w->err);
		if (w->code != 0)
			cq_prefix(&w->err, npending > 0 ? "could not record outcomes and claim jobs: "
						   : "could not claim jobs: ");
		if (w->code == 0 && have_batch)
			slots_recorded(w, rec, idx, npending);
		else if (w->code != 0 && (npending > 0 || !pg_alive(w->db.conn))) {
			/*
			 * The outcomes not recorded (the connection lost, or a
			 * statement that failed on a live one): flush_all() records
			 * them on their own, on a new connection if need be (waiting
			 * for it while their leases last). A claim lost with its
			 * connection may have committed: not tried again, its jobs
			 * given back. The run ends with the error.
			 */
			cq_err lost = w->err;
			int code = w->code;
			bool cut = !pg_alive(w->db.conn);

			w->code = 0;
			if (npending > 0)
				flush_all(w);
			if (cut)
				give_back_unknown(w);
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
		/*
		 * An empty plain claim found nothing due, or flow control in
		 * effect since the claim that chose it: claim.sql, at once, tells
		 * which and obeys it (in a transaction of its own, after the
		 * outcomes above were recorded). Only a claim that took jobs says
		 * whether flow control is in effect.
		 */
		if (next.n == 0 && w->plain_claims) {
			w->plain_claims = false;
			claim_batch_free(&next);
			continue;
		}
		w->plain_claims = next.n > 0 && !next.flow;
		w->batch = next;
		w->claim_mono = claim_mono;
		w->batch_mono = mono_ms();
		if (w->batch.n == 0) {
			claim_batch_free(&w->batch);
			if (waits_for_room(w)) {
				nap_ms(o->poll_ms < HELD_POLL_MS ? o->poll_ms : HELD_POLL_MS);
				continue;
			}
			if (w->code != 0)
				break;
			if (o->linger_ms > 0 && mono_ms() - w->sh->start_ms < o->linger_ms && !run_stop_requests) {
				nap_ms(o->poll_ms);
				continue;
			}
			break;
		}
		w->took_jobs = true;
		log_full(LOG_INFO, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
				 NULL, NULL, "claimed %d job%s", w->batch.n, w->batch.n == 1 ? "" : "s");
		started = run_batch(w);
		w->claim_limit = pace_next(w->claim_limit, o->batch, started, mono_ms() - w->batch_mono);
		w->claim_cap = limit_cap(w->claim_cap, limit, w->batch.n, w->batch.refused);
		if (w->claim_cap > 0 && w->claim_limit > w->claim_cap)
			w->claim_limit = w->claim_cap;
		have_batch = true;
	}
	/* Recorded, or (connection lost) left to a later run's rescue. */
	if (have_batch)
		end_batch(w);
	free(w->kept);
	w->kept = NULL;
	w->nkept = 0;
	return NULL;
}

/* Run the n workers: on this thread when there is one, else a thread each. */
void
workers_run(worker *workers, int n)
{
	pthread_t *threads;

	if (n == 1) {
		worker_main(&workers[0]);
		return;
	}
	threads = xcalloc((size_t) n, sizeof *threads);
	for (int i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0) {
			workers[i].code = cq_fail(&workers[i].err, EX_OSERR, "could not start worker thread");
			threads[i] = 0;
		}
	for (int i = 0; i < n; i++)
		if (threads[i])
			pthread_join(threads[i], NULL);
	free(threads);
}
