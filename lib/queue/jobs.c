/*
 * jobs — see jobs.h. The long statements sit beside the C that decodes them,
 * in .sql files compiled into the binary (schema/embedded.h). Arrays go to
 * the server as text literals and come back through unnest(), so a batch of
 * any size costs one round trip.
 */
#include "queue/jobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "schema/embedded.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/*
 * The claim (claim.sql): due rows in run order, locked with SKIP LOCKED so
 * concurrent runners never wait on each other, then marked running; sent
 * alone, or after the outcomes of the previous batch. The heartbeat
 * (heartbeat.sql) and the outcomes (record.sql, and record_plain.sql for a
 * batch of plain successes) pass the same fence: only a row still running,
 * locked by that worker, at that attempt is touched. The rescue
 * (rescue.sql) finds the expired leases and records them through
 * record.sql, fenced on the lease having expired too.
 */

static char *
dup_or_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : xstrdup(PQgetvalue(res, row, col));
}

static int
cmp_run_order(const void *a, const void *b)
{
	const claimed_job *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (x->run_at != y->run_at)
		return x->run_at < y->run_at ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Positions of ids[0..n) sorted by id, to find a returned row's entry fast. */
typedef struct id_pos {
	int64_t		id;
	int			pos;
} id_pos;

static int
cmp_id_pos(const void *a, const void *b)
{
	const id_pos *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static id_pos *
index_ids(const int64_t *ids, size_t stride, int n)
{
	id_pos *ix = xcalloc((size_t) (n ? n : 1), sizeof *ix);

	for (int i = 0; i < n; i++) {
		ix[i].id = *(const int64_t *) ((const char *) ids + (size_t) i * stride);
		ix[i].pos = i;
	}
	qsort(ix, (size_t) n, sizeof *ix, cmp_id_pos);
	return ix;
}

/* The position of id in the index, or -1. */
static int
find_id(const id_pos *ix, int n, int64_t id)
{
	id_pos key = {id, 0};
	const id_pos *hit = bsearch(&key, ix, (size_t) n, sizeof *ix, cmp_id_pos);

	return hit ? hit->pos : -1;
}

/*
 * For each row of res, whose first column is one of ids[0..n): returned[i]
 * = true, and flag[i] = its second column (a boolean) when flag is given.
 */
static void
mark_returned(const PGresult *res, const int64_t *ids, int n, bool *returned, bool *flag,
			  bool *flag2)
{
	id_pos *ix = index_ids(ids, sizeof *ids, n);

	for (int r = 0; r < PQntuples(res); r++) {
		int i = find_id(ix, n, strtoll(PQgetvalue(res, r, 0), NULL, 10));

		if (i >= 0) {
			returned[i] = true;
			if (flag)
				flag[i] = PQgetvalue(res, r, 1)[0] == 't';
			if (flag2)
				flag2[i] = PQgetvalue(res, r, 2)[0] == 't';
		}
	}
	free(ix);
}

/* Fill out from the rows of a claim's result, in run order. */
static void
decode_claimed(const PGresult *res, claim_batch *out)
{
	int rows = PQntuples(res);

	memset(out, 0, sizeof *out);
	out->jobs = xcalloc((size_t) (rows ? rows : 1), sizeof *out->jobs);
	for (int r = 0; r < rows; r++) {
		claimed_job *j = &out->jobs[out->n];

		j->id = strtoll(PQgetvalue(res, r, 0), NULL, 10);
		j->attempt = atoi(PQgetvalue(res, r, 1));
		j->max_attempts = atoi(PQgetvalue(res, r, 2));
		j->priority = atoi(PQgetvalue(res, r, 3));
		j->run_at = strtod(PQgetvalue(res, r, 4), NULL);
		j->type = xstrdup(PQgetvalue(res, r, 5));
		j->queue = xstrdup(PQgetvalue(res, r, 6));
		j->payload_text = xstrdup(PQgetvalue(res, r, 7));
		j->idempotency_key = dup_or_null(res, r, 8);
		j->scheduled_for = dup_or_null(res, r, 9);
		j->enqueued_by = xstrdup(PQgetvalue(res, r, 10));
		j->timeout_ms = PQgetisnull(res, r, 11) ? 0 : strtoll(PQgetvalue(res, r, 11), NULL, 10);
		if (out->n == 0) {
			snprintf(out->claimed_at, sizeof out->claimed_at, "%s", PQgetvalue(res, r, 12));
			out->refused = atoi(PQgetvalue(res, r, 13));
			out->flow = PQgetvalue(res, r, 14)[0] == 't';
		}
		out->n++;
	}
	qsort(out->jobs, (size_t) out->n, sizeof *out->jobs, cmp_run_order);
}

/* The claim's six parameters; claim_params_free() frees the arrays. */
typedef struct claim_params {
	char		lease[32];
	char		limit[16];
	char	   *queues;
	char	   *types;
	char	   *exclude_queues;
} claim_params;

#define CLAIM_NPARAMS 6
/* How long a wake settles the dependants left to it, or expires late jobs, at most (pages()). */
#define PAGES_MAX_MS 5000

/*
 * Fill cp and point params[0..5] (worker, lease, limit, queues, types,
 * excluded queues) at it.
 */
static void
claim_params_fill(claim_params *cp, const char *worker, int limit, int64_t lease_ms,
				  const claim_filter *filter, const char **params)
{
	snprintf(cp->lease, sizeof cp->lease, "%" PRId64, lease_ms);
	snprintf(cp->limit, sizeof cp->limit, "%d", limit);
	cp->queues = pg_text_array(filter->queues, filter->nqueues);
	cp->types = pg_text_array(filter->types, filter->ntypes);
	cp->exclude_queues = pg_text_array(filter->exclude_queues, filter->nexclude_queues);
	params[0] = worker;
	params[1] = cp->lease;
	params[2] = cp->limit;
	params[3] = cp->queues;
	params[4] = cp->types;
	params[5] = cp->exclude_queues;
}

static void
claim_params_free(claim_params *cp)
{
	free(cp->queues);
	free(cp->types);
	free(cp->exclude_queues);
}

int
jobs_claim(PGconn *conn, const char *worker, int limit, int64_t lease_ms,
		   const claim_filter *filter, bool plain, claim_batch *out, cq_err *err)
{
	claim_params cp;
	const char *params[CLAIM_NPARAMS];
	PGresult *res;

	memset(out, 0, sizeof *out);
	claim_params_fill(&cp, worker, limit, lease_ms, filter, params);
	res = pg_exec(conn, plain ? sql_queue_claim_plain : sql_queue_claim, CLAIM_NPARAMS, params,
				  PG_ANY, err);
	claim_params_free(&cp);
	if (res == NULL)
		return err->code;
	decode_claimed(res, out);
	PQclear(res);
	return 0;
}

void
claim_batch_free(claim_batch *batch)
{
	if (batch == NULL || batch->jobs == NULL)
		return;
	for (int i = 0; i < batch->n; i++) {
		claimed_job *j = &batch->jobs[i];

		free(j->type);
		free(j->queue);
		free(j->payload_text);
		free(j->idempotency_key);
		free(j->scheduled_for);
		free(j->enqueued_by);
	}
	free(batch->jobs);
	batch->jobs = NULL;
	batch->n = 0;
}

/* The array literals of n (id, attempt) pairs, as heartbeat.sql and release.sql take them. */
static void
id_attempt_arrays(buf *idb, buf *atb, const int64_t *ids, const int *attempts, int n)
{
	char num[32];

	pg_array_begin(idb);
	pg_array_begin(atb);
	for (int i = 0; i < n; i++) {
		snprintf(num, sizeof num, "%" PRId64, ids[i]);
		pg_array_raw(idb, num);
		snprintf(num, sizeof num, "%d", attempts[i]);
		pg_array_raw(atb, num);
	}
	pg_array_end(idb);
	pg_array_end(atb);
}

int
jobs_heartbeat(PGconn *conn, const char *worker, const int64_t *ids,
			   const int *attempts, int n, int64_t lease_ms, bool *owned, bool *cancel,
			   bool *renewed, cq_err *err)
{
	buf idb = BUF_INIT, atb = BUF_INIT;
	char lease[32];
	const char *params[4];
	PGresult *res;

	if (n == 0)
		return 0;
	id_attempt_arrays(&idb, &atb, ids, attempts, n);
	memset(owned, 0, (size_t) n * sizeof *owned);
	memset(cancel, 0, (size_t) n * sizeof *cancel);
	memset(renewed, 0, (size_t) n * sizeof *renewed);
	snprintf(lease, sizeof lease, "%" PRId64, lease_ms);
	params[0] = worker;
	params[1] = lease;
	params[2] = buf_str(&idb);
	params[3] = buf_str(&atb);
	res = pg_exec(conn, sql_queue_heartbeat, 4, params, PG_ANY, err);
	buf_free(&idb);
	buf_free(&atb);
	if (res == NULL)
		return err->code;
	mark_returned(res, ids, n, owned, cancel, renewed);
	PQclear(res);
	return 0;
}

int
jobs_release(PGconn *conn, const char *worker, const int64_t *ids, const int *attempts, int n,
			 const job_started *cur, bool *released, cq_err *err)
{
	buf idb = BUF_INIT, atb = BUF_INIT;
	char cur_id[32] = "", cur_attempt[16] = "", cur_ms[32] = "";
	const char *params[7];
	PGresult *res;

	if (n == 0 && cur == NULL)
		return 0;
	id_attempt_arrays(&idb, &atb, ids, attempts, n);
	memset(released, 0, (size_t) n * sizeof *released);
	if (cur) {
		snprintf(cur_id, sizeof cur_id, "%" PRId64, cur->id);
		snprintf(cur_attempt, sizeof cur_attempt, "%d", cur->attempt);
		snprintf(cur_ms, sizeof cur_ms, "%" PRId64, cur->start_ms);
	}
	params[0] = worker;
	params[1] = buf_str(&idb);
	params[2] = buf_str(&atb);
	params[3] = cur ? cur_id : NULL;
	params[4] = cur ? cur_attempt : NULL;
	params[5] = cur ? cur->base_time : NULL;
	params[6] = cur ? cur_ms : NULL;
	res = pg_exec(conn, sql_queue_release, 7, params, PG_ANY, err);
	buf_free(&idb);
	buf_free(&atb);
	if (res == NULL)
		return err->code;
	mark_returned(res, ids, n, released, NULL, NULL);
	PQclear(res);
	return 0;
}

int
jobs_give_back_unknown(PGconn *conn, const char *worker, const int64_t *ran, int nran, int *n_back,
					   cq_err *err)
{
	buf ranb = BUF_INIT;
	const char *params[2];
	PGresult *res;
	int n, rc;
	int64_t *ids;
	int *attempts;
	bool *released;
	char num[32];

	*n_back = 0;
	pg_array_begin(&ranb);
	for (int i = 0; i < nran; i++) {
		snprintf(num, sizeof num, "%" PRId64, ran[i]);
		pg_array_raw(&ranb, num);
	}
	pg_array_end(&ranb);
	params[0] = worker;
	params[1] = buf_str(&ranb);
	res = pg_exec(conn, "select id, attempts from cronq.jobs where status = 'running' and locked_by = $1"
				  " and id <> all($2::bigint[])", 2, params, PG_ANY, err);
	buf_free(&ranb);
	if (res == NULL)
		return err->code;
	n = PQntuples(res);
	ids = xcalloc((size_t) n + 1, sizeof *ids);
	attempts = xcalloc((size_t) n + 1, sizeof *attempts);
	released = xcalloc((size_t) n + 1, sizeof *released);
	for (int i = 0; i < n; i++) {
		ids[i] = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		attempts[i] = atoi(PQgetvalue(res, i, 1));
	}
	PQclear(res);
	rc = jobs_release(conn, worker, ids, attempts, n, NULL, released, err);
	for (int i = 0; rc == 0 && i < n; i++)
		*n_back += released[i];
	free(ids);
	free(attempts);
	free(released);
	return rc;
}

/*
 * Whether the outcomes are all plain successes of one worker against one
 * base time, which the shorter statement (record_plain.sql) records.
 */
static bool
outcomes_plain(const job_outcome *o, int n)
{
	for (int i = 0; i < n; i++) {
		if (o[i].outcome != OUTCOME_SUCCEEDED || o[i].permanent || o[i].error_code ||
			o[i].error || o[i].output || o[i].err_output || o[i].result || o[i].end_ms < 0 || o[i].base_time == NULL ||
			strcmp(o[i].worker, o[0].worker) != 0 || strcmp(o[i].base_time, o[0].base_time) != 0)
			return false;
	}
	return n > 0;
}

/* The arrays of record.sql's parameters ($1 to $12, $14 to $16). */
#define RECORD_ARRAYS 15
#define RECORD_NPARAMS 16

/*
 * The parameters of the outcome statement, held by a[]: with plain, the
 * seven of record_plain.sql, else the sixteen of record.sql; only with
 * skip are the jobs marked others listed (their rows not waited for).
 * Returns how many.
 */
static int
outcome_params(job_outcome *o, int n, bool plain, bool expired_only, bool skip, buf a[RECORD_ARRAYS],
			   const char *params[RECORD_NPARAMS])
{
	char num[32];

	for (int k = 0; k < RECORD_ARRAYS; k++)
		pg_array_begin(&a[k]);
	for (int i = 0; i < n; i++) {
		o[i].new_status = JOB_STATUS_NONE;
		o[i].busy = o[i].unrecorded = false;
		snprintf(num, sizeof num, "%" PRId64, o[i].id);
		pg_array_raw(&a[0], num);
		if (o[i].others && !expired_only && skip)
			pg_array_raw(&a[14], num);
		snprintf(num, sizeof num, "%d", o[i].attempt);
		pg_array_raw(&a[1], num);
		snprintf(num, sizeof num, "%" PRId64, o[i].start_ms);
		pg_array_raw(&a[10], num);
		snprintf(num, sizeof num, "%" PRId64, o[i].end_ms);
		pg_array_raw(&a[11], o[i].end_ms < 0 ? NULL : num);
		if (plain)
			continue;
		pg_array_text(&a[2], o[i].worker);
		pg_array_text(&a[3], run_outcome_sql(o[i].outcome));
		pg_array_raw(&a[4], o[i].permanent ? "t" : "f");
		pg_array_text(&a[5], o[i].error_code);
		pg_array_text(&a[6], o[i].error);
		pg_array_text(&a[7], o[i].output);
		snprintf(num, sizeof num, "%" PRId64, o[i].delay_ms);
		pg_array_raw(&a[8], num);
		pg_array_text(&a[9], o[i].base_time);
		pg_array_text(&a[12], o[i].err_output);
		pg_array_text(&a[13], o[i].result);
	}
	for (int k = 0; k < RECORD_ARRAYS; k++) {
		pg_array_end(&a[k]);
		params[k < 12 ? k : k + 1] = buf_str(&a[k]);
	}
	if (plain) {
		params[2] = o[0].base_time;
		params[3] = buf_str(&a[10]);
		params[4] = buf_str(&a[11]);
		params[5] = o[0].worker;
		return 6;
	}
	params[12] = expired_only ? "t" : "f";
	return RECORD_NPARAMS;
}

/* Copy each recorded job's new status from list ("id status,…", or NULL). */
static void
apply_statuses(const char *list, job_outcome *o, int n)
{
	id_pos *ix = index_ids(&o[0].id, sizeof *o, n);

	while (list && *list) {
		char *end;
		int64_t id = strtoll(list, &end, 10);
		size_t len = strcspn(end + 1, ",");
		int i = find_id(ix, n, id);

		if (i >= 0 && len == 4 && memcmp(end + 1, "busy", 4) == 0)
			o[i].busy = true;
		else if (i >= 0)
			o[i].new_status = job_status_parse(end + 1, len);
		list = end + 1 + len + (end[1 + len] == ',');
	}
	free(ix);
}

/*
 * The same for record_plain.sql's answer: every job succeeded but those
 * listed ("id,id,…", or empty), whose rows were not theirs to record.
 */
static void
apply_plain(const char *list, job_outcome *o, int n)
{
	id_pos *ix = *list ? index_ids(&o[0].id, sizeof *o, n) : NULL;

	for (int i = 0; i < n; i++)
		o[i].new_status = JOB_STATUS_SUCCEEDED;
	while (*list) {
		char *end;
		int64_t id = strtoll(list, &end, 10);
		int i;

		if (end == list)
			break;				/* not a number: nothing more to read */
		if ((i = find_id(ix, n, id)) >= 0)
			o[i].new_status = JOB_STATUS_NONE;
		list = *end == ',' ? end + 1 : end;
	}
	free(ix);
}

/*
 * One outcome statement. With skip, the rows of the jobs marked others are
 * not waited for (busy when held); without, a row held locked is waited
 * for up to the statement's lock_timeout, and then it fails (55P03 in
 * err->sqlstate).
 */
static int
record_once(PGconn *conn, job_outcome *o, int n, bool expired_only, bool skip, cq_err *err)
{
	buf a[RECORD_ARRAYS] = {BUF_INIT};
	const char *params[RECORD_NPARAMS];
	PGresult *res;
	bool plain;
	int np;

	if (n == 0)
		return 0;
	/* Rows not waited for (skip) are record.sql's to skip. */
	plain = !expired_only && !skip && outcomes_plain(o, n);
	np = outcome_params(o, n, plain, expired_only, skip, a, params);
	res = pg_exec(conn, plain ? sql_queue_record_plain : sql_queue_record, np, params, PG_ONE, err);
	for (int k = 0; k < RECORD_ARRAYS; k++)
		buf_free(&a[k]);
	if (res == NULL)
		return err->code;
	if (plain)
		apply_plain(PQgetvalue(res, 0, 0), o, n);
	else
		apply_statuses(PQgetisnull(res, 0, 0) ? NULL : PQgetvalue(res, 0, 0), o, n);
	PQclear(res);
	return 0;
}

/* Whether a statement failed for a lock it waited for past lock_timeout. */
static bool
lock_timed_out(const cq_err *err)
{
	return strcmp(err->sqlstate, "55P03") == 0;
}

/*
 * Whether a failed outcome statement may be one outcome's fault rather
 * than the batch's: its data (classes 22, 54), a check or a trigger on its
 * row (23, P0, 38, 39, XX). Not a lost connection, a cancel or a timeout
 * (57), a lack of resources (53) or a lock wait (55): sending the outcomes
 * one by one would not help there.
 */
static bool
one_outcomes_fault(const cq_err *err)
{
	static const char *const classes[] = {"22", "23", "54", "P0", "38", "39", "XX", NULL};

	for (int i = 0; classes[i]; i++)
		if (strncmp(err->sqlstate, classes[i], 2) == 0)
			return true;
	return false;
}

static int record_apart(PGconn *conn, job_outcome *o, int n, bool expired_only, cq_err *err);

/*
 * After a failed outcome statement (its SQLSTATE in err, nothing of it
 * committed): a lock wait that timed out, or a statement cancelled or
 * ended by a conflict (a DBA's pg_cancel_backend), the outcomes again,
 * once, without waiting for other roles' rows; then, if what failed may be
 * one outcome's fault, one statement each (record_apart). Else rc as it
 * was.
 */
static int
record_recover(PGconn *conn, job_outcome *o, int n, bool expired_only, int rc, cq_err *err, bool apart)
{
	if (rc != 0 && !expired_only && (lock_timed_out(err) || pg_transient(err)) && pg_alive(conn))
		rc = record_once(conn, o, n, false, true, err);
	/*
	 * Held past the wait again: a row of the runner's own jobs is locked
	 * too (a member of cronq_admin may lock any job's). Every row held is
	 * skipped now, left to the rescue, rather than the whole batch.
	 */
	if (rc != 0 && !expired_only && lock_timed_out(err) && pg_alive(conn)) {
		bool *others = xcalloc((size_t) n + 1, sizeof *others);

		for (int i = 0; i < n; i++) {
			others[i] = o[i].others;
			o[i].others = true;
		}
		rc = record_once(conn, o, n, false, true, err);
		for (int i = 0; i < n; i++)
			o[i].others = others[i];
		free(others);
	}
	if (rc != 0 && apart && one_outcomes_fault(err) && pg_alive(conn))
		rc = record_apart(conn, o, n, expired_only, err);
	return rc;
}

/* One outcome in a statement of its own, a lock wait recovered as above. */
static int
record_one(PGconn *conn, job_outcome *o, bool expired_only, cq_err *err)
{
	int rc = record_once(conn, o, 1, expired_only, false, err);

	return record_recover(conn, o, 1, expired_only, rc, err, false);
}

/*
 * The outcomes one statement each, after the batch's statement failed for
 * what may be one outcome's fault: each is recorded but the one at fault.
 * That one is sent once more without the texts its job wrote (output,
 * standard error, result, error message: a note says why), and if that
 * fails too it stays unrecorded: a warning, and the rescue takes the job
 * once its lease expires. err says why the batch's failed. Returns
 * non-zero only when the connection is lost.
 */
static int
record_apart(PGconn *conn, job_outcome *o, int n, bool expired_only, cq_err *err)
{
	log_warning("could not record %d outcome%s in one statement (%s); recording each on its own", n,
				n == 1 ? "" : "s", err->msg);
	cq_clear(err);
	for (int i = 0; i < n; i++) {
		job_outcome bare;
		char note[640];

		if (record_one(conn, &o[i], expired_only, err) == 0)
			continue;
		if (!pg_alive(conn))
			return err->code;
		bare = o[i];
		snprintf(note, sizeof note, "its outcome could not be recorded with what the job wrote: %.500s", err->msg);
		note[utf8_cut(note, strlen(note))] = '\0';	/* no character cut in half */
		bare.output = bare.err_output = bare.result = NULL;
		bare.error = note;
		cq_clear(err);
		if (record_one(conn, &bare, expired_only, err) == 0) {
			o[i].new_status = bare.new_status;
			o[i].busy = bare.busy;
			continue;
		}
		if (!pg_alive(conn))
			return err->code;
		log_warning("job %" PRId64 "'s outcome (%s) could not be recorded: %s; the job runs again once its lease"
					" expires", o[i].id, run_outcome_sql(o[i].outcome), err->msg);
		cq_clear(err);
		o[i].new_status = JOB_STATUS_NONE;
		o[i].unrecorded = true;
	}
	return 0;
}

int
jobs_record(PGconn *conn, job_outcome *o, int n, bool expired_only, cq_err *err)
{
	int rc = record_once(conn, o, n, expired_only, false, err);

	return record_recover(conn, o, n, expired_only, rc, err, true);
}

int
jobs_held(PGconn *conn, const claim_filter *filter, bool *held, bool *expired, cq_err *err)
{
	claim_params cp;
	const char *params[CLAIM_NPARAMS];
	PGresult *res;

	claim_params_fill(&cp, "", 0, 0, filter, params);
	res = pg_exec(conn, sql_queue_held, 3, params + 3, PG_ONE, err);
	claim_params_free(&cp);
	if (res == NULL)
		return err->code;
	*held = PQgetvalue(res, 0, 0)[0] == 't';
	*expired = PQgetvalue(res, 0, 1)[0] == 't';
	PQclear(res);
	return 0;
}

/*
 * Batch k's outcomes and batch k+1's claim: two statements sent together,
 * one round trip, one transaction, one commit. The claim cannot see the
 * rows the outcomes touch (running: not due), so the two never collide.
 * Why two statements and not one: a row another runner claimed after the
 * claim's snapshot still looks queued to it, and SKIP LOCKED follows it to
 * its running version, locks it, drops it, and keeps the lock to the end
 * of the transaction, so that its owner's outcome update waits for us.
 * Written as one statement, the claim's snapshot was taken before the
 * outcomes' ~10 ms of work and such rows were many; its own statement
 * takes a fresh snapshot. The order matters too: outcomes first, so that
 * nothing after the claim can wait (claim first, two runners could each
 * hold a row the other's outcomes needed: a deadlock).
 */
int
jobs_record_and_claim(PGconn *conn, job_outcome *o, int n, const char *worker, int limit,
					  int64_t lease_ms, const claim_filter *filter, bool plain, claim_batch *out,
					  cq_err *err)
{
	buf a[RECORD_ARRAYS] = {BUF_INIT};
	const char *rp[RECORD_NPARAMS], *cp_params[CLAIM_NPARAMS];
	claim_params cp;
	PGresult *res[2];
	bool plain_record;
	int np, rc;

	if (n == 0)
		return jobs_claim(conn, worker, limit, lease_ms, filter, plain, out, err);
	memset(out, 0, sizeof *out);
	plain_record = outcomes_plain(o, n);
	np = outcome_params(o, n, plain_record, false, false, a, rp);
	claim_params_fill(&cp, worker, limit, lease_ms, filter, cp_params);
	rc = pg_exec_pair(conn, (const char *const[]) {plain_record ? sql_queue_record_plain : sql_queue_record,
													plain ? sql_queue_claim_plain : sql_queue_claim},
					  (const int[]) {np, CLAIM_NPARAMS}, (const char *const *const[]) {rp, cp_params}, res, err);
	for (int k = 0; k < RECORD_ARRAYS; k++)
		buf_free(&a[k]);
	claim_params_free(&cp);
	/*
	 * A row held locked past the outcomes' lock_timeout (its author's,
	 * perhaps from an idle transaction), a statement cancelled, or one
	 * outcome's fault: nothing was committed. The outcomes again, not
	 * waiting for other roles' rows, then the claim.
	 */
	if (rc != 0 && (lock_timed_out(err) || pg_transient(err) || one_outcomes_fault(err)) && pg_alive(conn)) {
		if ((rc = record_recover(conn, o, n, false, rc, err, true)) != 0)
			return rc;
		/*
		 * The outcomes are committed: a claim that fails now is an empty
		 * one (reporting the failure would have them recorded again, as
		 * lease_lost); a lost connection is met by the next statement.
		 */
		if (jobs_claim(conn, worker, limit, lease_ms, filter, plain, out, err) != 0) {
			log_warning("could not claim jobs after recording outcomes: %s", err->msg);
			cq_clear(err);
			memset(out, 0, sizeof *out);
		}
		return 0;
	}
	if (rc != 0)
		return rc;
	if (plain_record && PQntuples(res[0]) == 1)
		apply_plain(PQgetvalue(res[0], 0, 0), o, n);
	else if (PQntuples(res[0]) == 1 && !PQgetisnull(res[0], 0, 0))
		apply_statuses(PQgetvalue(res[0], 0, 0), o, n);
	decode_claimed(res[1], out);
	PQclear(res[0]);
	PQclear(res[1]);
	return 0;
}

int
jobs_rescue(PGconn *conn, int *rescued, cq_err *err)
{
	*rescued = 0;
	for (;;) {
		PGresult *res = pg_exec(conn, sql_queue_rescue, 0, NULL, PG_ANY, err);
		job_outcome *o;
		int n, rc, recorded;

		if (res == NULL)
			return err->code;
		n = PQntuples(res);
		if (n == 0) {
			PQclear(res);
			return 0;
		}
		o = xcalloc((size_t) n, sizeof *o);
		for (int i = 0; i < n; i++) {
			o[i].id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
			o[i].attempt = atoi(PQgetvalue(res, i, 1));
			o[i].worker = PQgetvalue(res, i, 2);
			if (PQgetvalue(res, i, 4)[0] == 't') {
				o[i].outcome = OUTCOME_CANCELLED;
				o[i].error_code = "cancelled";
				o[i].error = "cancelled; its worker had stopped renewing the lease";
			} else {
				o[i].outcome = OUTCOME_LEASE_EXPIRED;
				o[i].error_code = "lease_expired";
				o[i].error = "lease expired: its worker stopped renewing it before recording an outcome";
			}
			/* The lease already made it wait: a rescued job is due at once. */
			o[i].delay_ms = 0;
			o[i].base_time = PQgetisnull(res, i, 3) ? NULL : PQgetvalue(res, i, 3);
			o[i].end_ms = -1;
		}
		rc = jobs_record(conn, o, n, true, err);
		recorded = 0;
		for (int i = 0; rc == 0 && i < n; i++) {
			if (o[i].new_status == JOB_STATUS_NONE)
				continue;
			recorded++;
			(*rescued)++;
			log_full(o[i].new_status == JOB_STATUS_DEAD ? LOG_WARNING : LOG_INFO,
					 (log_field[]) {{"job", PQgetvalue(res, i, 0), true},
									{"worker", o[i].worker, false},
									{"status", job_status_sql(o[i].new_status), false}, {NULL, NULL, false}},
					 NULL, NULL, "job %" PRId64 " lease expired (attempt %d)", o[i].id, o[i].attempt);
		}
		free(o);
		PQclear(res);
		if (rc != 0)
			return rc;
		/* A full pass that recorded nothing would find the same rows again. */
		if (n < 500 || recorded == 0)
			return 0;
	}
}

/*
 * Run sql, a page a transaction, while its answer (more, n) says another
 * page may have work now, for PAGES_MAX_MS at most and until stop (NULL:
 * none) says so: a backlog too big for that is the next wakes' to go on
 * with (what, in the line that says so), and this wake claims. said(n)
 * hears of each page's count; *total gets their sum.
 */
static int
pages(PGconn *conn, const char *sql, int nparams, const char *const *params, const char *what,
	  bool (*stop)(void), void (*said)(int n), int *total, cq_err *err)
{
	int64_t start = mono_ms();

	*total = 0;
	for (int page = 0; mono_ms() - start < PAGES_MAX_MS; page++) {
		if (page > 0 && stop && stop()) {
			log_info("%s goes on at the next wake: a stop was asked", what);
			return 0;
		}
		PGresult *res = pg_exec(conn, sql, nparams, params, PG_ONE, err);
		bool more;
		int n;

		if (res == NULL)
			return err->code;
		more = PQgetvalue(res, 0, 0)[0] == 't';
		n = atoi(PQgetvalue(res, 0, 1));
		PQclear(res);
		*total += n;
		if (n > 0)
			said(n);
		if (!more)
			return 0;
	}
	log_info("%s goes on at the next wake: %d s spent", what, PAGES_MAX_MS / 1000);
	return 0;
}

static void
said_settled(int n)
{
	log_info("%d blocked job%s settled from %s parents", n, n == 1 ? "" : "s", n == 1 ? "its" : "their");
}

/*
 * Pages of cronq.settle_step() until one says nothing more is to be had
 * now (what is left is held locked by another transaction: a later
 * wake's).
 */
int
jobs_settle_later(PGconn *conn, bool (*stop)(void), int *settled, cq_err *err)
{
	return pages(conn, sql_queue_settle, 0, NULL, "settling", stop, said_settled, settled, err);
}

static void
said_expired(int n)
{
	log_info("%d job%s expired: not started by %s deadline", n, n == 1 ? "" : "s", n == 1 ? "its" : "their");
}

int
jobs_expire(PGconn *conn, const char *worker, bool (*stop)(void), int *expired, cq_err *err)
{
	return pages(conn, sql_queue_expire, 1, (const char *[]) {worker}, "expiring", stop, said_expired, expired,
				 err);
}
