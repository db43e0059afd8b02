/*
 * wait — see wait.h. The statements read cronq.jobs by its primary key
 * only; nothing is written, and no lock taken.
 */
#include "queue/wait.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/xalloc.h"

static const char poll_sql[] =
	"select id, status from cronq.jobs where id = any ($1::bigint[])";

/* Compact, as inspect.c's objects: row_to_json. */
static const char report_sql[] =
	"select coalesce(string_agg(row_to_json(x)::text, E'\\n' order by i.n), '')"
	" from unnest($1::bigint[]) with ordinality as i(id, n)"
	" left join cronq.jobs j on j.id = i.id"
	" cross join lateral (select i.id, j.status, j.error_code, j.last_error, j.result) x";

bool
wait_status_finished(const char *status)
{
	return strcmp(status, "succeeded") == 0 || strcmp(status, "dead") == 0 ||
		strcmp(status, "cancelled") == 0;
}

int64_t
wait_next_delay_ms(int64_t prev_ms)
{
	if (prev_ms <= 0)
		return WAIT_FIRST_DELAY_MS;
	return prev_ms * 2 < WAIT_MAX_DELAY_MS ? prev_ms * 2 : WAIT_MAX_DELAY_MS;
}

/* The bigint[] literal of the jobs' ids, or of the pending ones' (pg_array_ids). */
static void
ids_array(buf *b, const wait_job *jobs, int n, bool pending_only)
{
	int64_t *ids = xcalloc(n > 0 ? (size_t) n : 1, sizeof *ids);
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!pending_only || !jobs[i].finished)
			ids[k++] = jobs[i].id;
	pg_array_ids(b, ids, k);
	free(ids);
}

int
wait_poll(PGconn *conn, wait_job *jobs, int n, cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[1];
	PGresult *res;

	ids_array(&arr, jobs, n, true);
	params[0] = buf_str(&arr);
	res = pg_exec(conn, poll_sql, 1, params, PG_ANY, err);
	buf_free(&arr);
	if (res == NULL)
		return err->code;
	for (int i = 0; i < n; i++)
		if (!jobs[i].finished)
			jobs[i].status[0] = '\0';
	for (int r = 0; r < PQntuples(res); r++) {
		int64_t id = strtoll(PQgetvalue(res, r, 0), NULL, 10);

		/* The same id given twice is one job, read once for both. */
		for (int i = 0; i < n; i++)
			if (jobs[i].id == id && !jobs[i].finished) {
				snprintf(jobs[i].status, sizeof jobs[i].status, "%s", PQgetvalue(res, r, 1));
				jobs[i].finished = wait_status_finished(jobs[i].status);
			}
	}
	PQclear(res);
	return 0;
}

void
wait_pending_text(const wait_job *jobs, int n, char *out, size_t len)
{
	buf b = BUF_INIT;
	int shown = 0, pending = 0;

	for (int i = 0; i < n; i++) {
		if (jobs[i].finished)
			continue;
		if (pending++ >= 20)
			continue;
		buf_printf(&b, "%s%" PRId64 " (%s)", shown++ ? ", " : "", jobs[i].id, jobs[i].status);
	}
	if (pending > shown)
		buf_printf(&b, " and %d more", pending - shown);
	snprintf(out, len, "%s", buf_str(&b));
	buf_free(&b);
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int
wait_until(PGconn *conn, wait_job *jobs, int n, int64_t deadline_ms, cq_err *err)
{
	int64_t delay = 0;
	char ids[1024];

	for (;;) {
		int rc = wait_poll(conn, jobs, n, err);
		bool all = true;
		int64_t now;

		if (rc != 0)
			return rc;
		for (int i = 0; i < n; i++) {
			if (!jobs[i].finished && jobs[i].status[0] == '\0')
				return cq_fail(err, EX_DATAERR, "job %" PRId64 " no longer exists", jobs[i].id);
			all = all && jobs[i].finished;
		}
		if (all)
			return 0;
		now = mono_ms();
		if (deadline_ms > 0 && now >= deadline_ms) {
			wait_pending_text(jobs, n, ids, sizeof ids);
			return cq_fail(err, EX_TEMPFAIL, "timed out; still pending: %s", ids);
		}
		delay = wait_next_delay_ms(delay);
		sleep_ms(deadline_ms > 0 && deadline_ms - now < delay ? deadline_ms - now : delay);
	}
}

int
wait_report_json(PGconn *conn, const wait_job *jobs, int n, char **json, cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[1];
	PGresult *res;

	*json = NULL;
	ids_array(&arr, jobs, n, false);
	params[0] = buf_str(&arr);
	res = pg_exec(conn, report_sql, 1, params, PG_ONE, err);
	buf_free(&arr);
	if (res == NULL)
		return err->code;
	*json = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}
