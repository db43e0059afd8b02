/*
 * slots — a worker's batch: one slot per claimed job, in run order, with
 * where the job stands (waiting, pending, done), whether it is still ours
 * and cancelled, and its result and outcome. Here the batch's leases are
 * renewed, its pending outcomes gathered and recorded (on a new
 * connection if the old one was lost), then logged and counted, and the
 * jobs never started given back.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "run/run_int.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/xalloc.h"

/* One slot per job of the claimed batch, every job held and waiting. */
void
slots_open(worker *w)
{
	w->slots = xcalloc((size_t) (w->batch.n ? w->batch.n : 1), sizeof *w->slots);
	w->outages = 0;
	w->back_at = 0;
	for (int i = 0; i < w->batch.n; i++) {
		w->slots[i].job = &w->batch.jobs[i];
		w->slots[i].held = true;
		w->slots[i].lease_end = w->claim_mono + w->sh->o->lease_ms;
	}
}

void
slots_close(worker *w)
{
	for (int i = 0; w->slots && i < w->batch.n; i++)
		task_result_clear(&w->slots[i].res);
	free(w->slots);
	w->slots = NULL;
}

/* Renew the leases of every job of the batch not yet recorded. */
int
slots_heartbeat(worker *w)
{
	int n = 0, rc;
	int64_t *ids = xcalloc((size_t) w->batch.n, sizeof *ids);
	int *attempts = xcalloc((size_t) w->batch.n, sizeof *attempts);
	int *idx = xcalloc((size_t) w->batch.n, sizeof *idx);
	bool *owned = xcalloc((size_t) w->batch.n, sizeof *owned);
	bool *cancel = xcalloc((size_t) w->batch.n, sizeof *cancel);
	bool *renewed = xcalloc((size_t) w->batch.n, sizeof *renewed);
	int64_t sent = mono_ms();

	for (int i = 0; i < w->batch.n; i++) {
		if (w->slots[i].state == SLOT_DONE || !w->slots[i].held)
			continue;
		ids[n] = w->slots[i].job->id;
		attempts[n] = w->slots[i].job->attempt;
		idx[n++] = i;
	}
	rc = jobs_heartbeat(w->db.conn, w->id, ids, attempts, n, w->sh->o->lease_ms, owned, cancel,
						renewed, &w->err);
	if (rc != 0)
		cq_prefix(&w->err, "could not renew the leases: ");
	if (rc == 0) {
		for (int k = 0; k < n; k++) {
			slot *s = &w->slots[idx[k]];

			/* Not renewed (its row locked elsewhere): the lease runs on from the last renewal. */
			if (renewed[k])
				s->lease_end = sent + w->sh->o->lease_ms;
			if (cancel[k] && !s->cancel) {
				s->cancel = true;
				log_info("job %" PRId64 " was cancelled by an operator; stopping it", ids[k]);
			}
			if (!owned[k]) {
				s->held = false;
				log_full(LOG_WARNING, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
						 NULL, NULL, "job %" PRId64 " is no longer held by this worker; stopping it",
						 ids[k]);
			}
		}
		log_debug("renewed %d lease%s", n, n == 1 ? "" : "s");
	}
	w->next_beat = mono_ms() + w->sh->o->lease_ms / 3;
	free(ids);
	free(attempts);
	free(idx);
	free(owned);
	free(cancel);
	free(renewed);
	return rc;
}

static void
log_outcome(const slot *s)
{
	const claimed_job *j = s->job;
	const job_outcome *o = &s->out;
	char id[32], attempt[16], dur[32];
	log_field fields[] = {
		{"job", id, true}, {"type", j->type, false}, {"queue", j->queue, false},
		{"attempt", attempt, true}, {"duration_ms", dur, true},
		{"outcome", run_outcome_sql(o->outcome), false}, {"status", job_status_sql(o->new_status), false},
		{NULL, NULL, false},
	};
	char delay[32];

	/* Nothing formatted for a line that would not be written (a drain's every job). */
	if (!log_enabled(o->new_status == JOB_STATUS_NONE || o->new_status == JOB_STATUS_DEAD
					 ? LOG_WARNING : LOG_INFO))
		return;
	snprintf(id, sizeof id, "%" PRId64, j->id);
	snprintf(attempt, sizeof attempt, "%d", j->attempt);
	snprintf(dur, sizeof dur, "%" PRId64, o->end_ms - o->start_ms);
	duration_format(o->delay_ms, delay, sizeof delay);

	if (o->unrecorded)
		;						/* jobs_record said why */
	else if (o->busy)
		log_full(LOG_WARNING, fields, NULL, NULL,
				 "job %" PRId64 "'s row is held locked by another transaction; its outcome (%s) was not"
				 " recorded: the job runs again once its lease expires", j->id, run_outcome_sql(o->outcome));
	else if (o->new_status == JOB_STATUS_NONE) {
		if (o->outcome != OUTCOME_LEASE_LOST || s->held == false)
			log_full(LOG_WARNING, fields, NULL, NULL,
					 "job %" PRId64 " was taken over by another worker; its outcome was not recorded", j->id);
	} else if (o->new_status == JOB_STATUS_DEAD || o->new_status == JOB_STATUS_FAILED) {
		/* The error is the job's words: quoted, so that none reads as a field of the line. */
		char *why = o->error ? log_quote(o->error) : xstrdup(run_outcome_sql(o->outcome));

		if (o->new_status == JOB_STATUS_DEAD)
			log_full(LOG_WARNING, fields, NULL, NULL, "job %" PRId64 " (%s) is dead after attempt %d: %s",
					 j->id, j->type, j->attempt, why);
		else
			log_full(LOG_INFO, fields, NULL, NULL, "job %" PRId64 " (%s) failed attempt %d of %d, retry in %s: %s",
					 j->id, j->type, j->attempt, j->max_attempts, delay, why);
		free(why);
	} else
		log_full(LOG_INFO, fields, NULL, NULL, "job %" PRId64 " (%s) %s", j->id, j->type,
				 o->new_status == JOB_STATUS_QUEUED ? "given back" : job_status_sql(o->new_status));
}

/*
 * The batch's pending outcomes, copied into *out (positions in *idx);
 * returns how many. The copies point into the slots' results, alive until
 * recorded; both arrays are the caller's to free.
 */
int
slots_gather(worker *w, job_outcome **out, int **idx)
{
	int n = 0;

	*out = xcalloc((size_t) (w->batch.n ? w->batch.n : 1), sizeof **out);
	*idx = xcalloc((size_t) (w->batch.n ? w->batch.n : 1), sizeof **idx);
	for (int i = 0; i < w->batch.n; i++)
		if (w->slots[i].state == SLOT_PENDING) {
			(*out)[n] = w->slots[i].out;
			(*idx)[n++] = i;
		}
	return n;
}

/*
 * Whether j is another role's than the runner's: its author may hold its
 * row locked, so that recording its outcome waits for it 2 s at most, then
 * skips it (jobs_record).
 */
bool
others_job(const worker *w, const claimed_job *j)
{
	const char *me = PQuser(w->db.conn);

	return me == NULL || j->enqueued_by == NULL || strcmp(j->enqueued_by, me) != 0;
}

/* Recorded: log each outcome, count it, release its strings. */
void
slots_recorded(worker *w, job_outcome *rec, const int *idx, int n)
{
	for (int k = 0; k < n; k++) {
		slot *s = &w->slots[idx[k]];
		job_status st = rec[k].new_status;

		s->out = rec[k];
		s->state = SLOT_DONE;
		log_outcome(s);
		if (st == JOB_STATUS_NONE) {
			w->sum.lost++;
			w->kept = xrealloc(w->kept, (size_t) (w->nkept + 1) * sizeof *w->kept);
			w->kept[w->nkept++] = s->job->id;
		}
		else if (st == JOB_STATUS_QUEUED)
			w->sum.given_back++;
		else {
			w->sum.run++;
			if (st == JOB_STATUS_SUCCEEDED)
				w->sum.succeeded++;
			else if (st == JOB_STATUS_FAILED || st == JOB_STATUS_DEAD)
				w->sum.failed++;
		}
		task_result_clear(&s->res);
	}
	w->last_flush = mono_ms();
}

/* Whether any outcome of the batch waits to be recorded. */
bool
slots_pending(const worker *w)
{
	for (int i = 0; i < w->batch.n; i++)
		if (w->slots[i].state == SLOT_PENDING)
			return true;
	return false;
}

/*
 * Record every pending outcome of the batch in one statement, on a new
 * connection if the old one was lost. (Had the lost statement committed,
 * the second finds the jobs recorded: fenced out, they get a lease_lost
 * history row, and nothing changes.)
 */
int
slots_flush(worker *w)
{
	job_outcome *rec;
	int *idx;
	int n = slots_gather(w, &rec, &idx);
	int rc = n ? jobs_record(w->db.conn, rec, n, false, &w->err) : 0;

	if (rc != 0 && pg_handle_repair(&w->db, w->id, w->err.msg))
		rc = jobs_record(w->db.conn, rec, n, false, &w->err);
	if (rc != 0)
		cq_prefix(&w->err, "could not record outcomes: ");

	if (rc == 0)
		slots_recorded(w, rec, idx, n);
	else if (worker_ride_out(w))
		rc = 0;					/* kept pending until the connection is back */
	else
		w->code = rc;
	free(rec);
	free(idx);
	return rc;
}

/* Give back the claimed jobs that never started (shutdown, --max-runtime). */
void
slots_give_back(worker *w, const char *why)
{
	int64_t now = mono_ms() - w->batch_mono;

	for (int i = 0; i < w->batch.n; i++) {
		slot *s = &w->slots[i];
		job_outcome *o = &s->out;

		if (s->state != SLOT_WAITING)
			continue;
		memset(o, 0, sizeof *o);
		o->id = s->job->id;
		o->attempt = s->job->attempt;
		o->worker = w->id;
		o->outcome = s->held ? OUTCOME_GIVEN_BACK : OUTCOME_LEASE_LOST;
		o->error = why;
		o->base_time = w->batch.claimed_at;
		o->start_ms = o->end_ms = now;
		o->others = s->held && others_job(w, s->job);	/* lease_lost: history only */
		s->state = SLOT_PENDING;
	}
}

/*
 * Fair sharing: give back the jobs of the batch that have not started, so
 * that an idle worker starts them now rather than after the running one
 * (whose start is noted: the claim wrote the claim's time). Once a batch.
 * A job the statement skipped (locked by another transaction: see
 * release.sql) stays in the batch, to start in turn after a heartbeat.
 * Returns non-zero only when the connection is lost (w->code set).
 */
int
slots_release(worker *w)
{
	size_t cap = (size_t) (w->batch.n ? w->batch.n : 1);
	int n = 0, given = 0, rc;
	int64_t *ids = xcalloc(cap, sizeof *ids);
	int *attempts = xcalloc(cap, sizeof *attempts);
	int *idx = xcalloc(cap, sizeof *idx);
	bool *released = xcalloc(cap, sizeof *released);
	job_started cur, *curp = NULL;

	w->released = true;
	for (int i = 0; i < w->batch.n; i++) {
		if (w->slots[i].state != SLOT_WAITING || !w->slots[i].held || i == w->cur)
			continue;
		ids[n] = w->slots[i].job->id;
		attempts[n] = w->slots[i].job->attempt;
		idx[n++] = i;
	}
	/* The first job of a batch started at the claim, as the claim wrote. */
	if (w->cur > 0) {
		cur = (job_started) {w->slots[w->cur].job->id, w->slots[w->cur].job->attempt,
			w->batch.claimed_at, w->cur_start - w->batch_mono};
		curp = &cur;
	}
	rc = jobs_release(w->db.conn, w->id, ids, attempts, n, curp, released, &w->err);
	if (rc != 0 && pg_handle_repair(&w->db, w->id, w->err.msg))
		rc = jobs_release(w->db.conn, w->id, ids, attempts, n, curp, released, &w->err);
	if (rc != 0 && pg_alive(w->db.conn)) {
		/*
		 * Refused, not lost (a lock or statement timeout the DBA set): the
		 * give-back was only for fairness. The jobs stay in the batch, each
		 * started after a heartbeat says it is still ours.
		 */
		log_full(LOG_WARNING, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
				 NULL, NULL, "could not give back the jobs not started (keeping them): %s", w->err.msg);
		cq_clear(&w->err);
		rc = 0;
	} else if (rc != 0 && worker_ride_out(w)) {
		rc = 0;					/* kept, to start once the connection is back */
	} else if (rc != 0) {
		cq_prefix(&w->err, "could not give back the jobs not started: ");
		w->code = rc;
	} else {
		/*
		 * The others stay: a row locked by another transaction, or one no
		 * longer this worker's (another took it, or the first try committed
		 * and its answer was lost). run_batch starts none of them before a
		 * heartbeat says it is still ours and not cancelled.
		 */
		for (int k = 0; k < n; k++)
			if (released[k]) {
				w->slots[idx[k]].state = SLOT_DONE;
				given++;
			}
		budget_return(w->sh, given);
		w->sum.given_back += given;
		if (given > 0)
			log_full(LOG_INFO, (log_field[]) {{"worker", w->id, false}, {NULL, NULL, false}},
					 NULL, NULL, "gave back %d job%s not started, for an idle worker to start", given,
					 given == 1 ? "" : "s");
	}
	free(ids);
	free(attempts);
	free(idx);
	free(released);
	return rc;
}
