/*
 * inspect — see inspect.h. The JSON is built by the database (row_to_json),
 * so keys, their order and numbers are the same whoever prints them; the
 * command decodes it only to lay it out for people.
 */
#include "queue/inspect.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "util/buf.h"
#include "util/xalloc.h"

/* RFC 3339 UTC to the second, as schedules and `schedule next` print times. */
#define TS(col) "to_char(" col " at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
/* An interval as seconds, to the millisecond ("3600", "0.25"). */
#define SECONDS(col) "round(extract(epoch from " col ")::numeric, 3)::float8"

/*
 * The job object's keys, in order (inspect.h promises them); RESULT is
 * the result's column, as jsonb or as its text (see inspect.h).
 */
#define JOB_COLUMNS(RESULT) \
	"j.id, j.queue, j.type, j.status, j.payload, j.priority, j.attempts, j.max_attempts," \
	" " SECONDS("j.timeout") " as timeout," \
	" " TS("j.run_at") " as run_at, " TS("j.expires_at") " as expires_at," \
	" j.idempotency_key, j.unique_key, j.history, j.schedule," \
	" " TS("j.scheduled_for") " as scheduled_for, j.enqueued_by, j.locked_by," \
	" " TS("j.locked_until") " as locked_until, j.cancel_requested, j.error_code, j.last_error," \
	" " TS("j.created_at") " as created_at, " TS("j.updated_at") " as updated_at," \
	" " TS("j.started_at") " as started_at, " TS("j.finished_at") " as finished_at," \
	" j.hooks, j.depends_on, j.hook_of, j.earlier_attempts," \
	" case when j.status = 'blocked' then (select coalesce(json_agg(json_build_object('id', p.id," \
	"   'status', p.status) order by p.id), '[]') from cronq.jobs p" \
	"   where p.id = any(j.depends_on) and p.status <> 'succeeded') end as waiting_on, " RESULT

bool
inspect_status_valid(const char *s)
{
	static const char *const statuses[] = {
		"queued", "blocked", "running", "succeeded", "failed", "dead", "cancelled", NULL,
	};

	for (const char *const *p = statuses; *p; p++)
		if (strcmp(*p, s) == 0)
			return true;
	return false;
}

/* A text[] literal of names, or NULL (SQL NULL: no filter) when there are none. */
static char *
text_array(const char **names, int n)
{
	buf b = BUF_INIT;

	if (n == 0)
		return NULL;
	pg_array_begin(&b);
	for (int i = 0; i < n; i++)
		pg_array_text(&b, names[i]);
	pg_array_end(&b);
	return buf_steal(&b);
}

#define RESULT_JSON(t) t ".result"
#define RESULT_TEXT(t) t ".result::text as result"

#define LIST_SQL(RESULT) \
	"select coalesce(string_agg(row_to_json(x)::text, E',\\n' order by x.id desc), ''), count(*)" \
	" from (select " JOB_COLUMNS(RESULT) \
	"  from cronq.jobs j" \
	"  where ($1::text[] is null or j.status = any ($1::text[]))" \
	"    and ($2::text[] is null or j.queue = any ($2::text[]))" \
	"    and ($3::text[] is null or j.type = any ($3::text[]))" \
	"  order by j.id desc limit $4::bigint) x"
static const char *const list_sql[] = {LIST_SQL(RESULT_JSON("j")), LIST_SQL(RESULT_TEXT("j"))};

int
inspect_list(PGconn *conn, const inspect_filter *f, bool results_as_text, char **json, int64_t *count,
			 cq_err *err)
{
	char *statuses = text_array(f->statuses, f->nstatuses);
	char *queues = text_array(f->queues, f->nqueues);
	char *types = text_array(f->types, f->ntypes);
	char limit[32];
	const char *params[4] = {statuses, queues, types, limit};
	PGresult *res;

	*json = NULL;
	snprintf(limit, sizeof limit, "%" PRId64, f->limit);
	res = pg_exec(conn, list_sql[results_as_text], 4, params, PG_ONE, err);
	free(statuses);
	free(queues);
	free(types);
	if (res == NULL)
		return err->code;
	*count = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	*json = *count > 0 ? xasprintf("[\n%s\n]", PQgetvalue(res, 0, 0)) : xstrdup("[]");
	PQclear(res);
	return 0;
}

#define SHOW_SQL(RESULT, RUN_RESULT) \
	"select row_to_json(x)::text from (" \
	" select " JOB_COLUMNS(RESULT) "," \
	"  (select coalesce('[' || string_agg(row_to_json(r)::text, ',' order by r.id) || ']', '[]')::json" \
	"   from (select rr.id, rr.attempt, rr.outcome, rr.worker," \
	"           " TS("rr.started_at") " as started_at, " TS("rr.finished_at") " as finished_at," \
	"           " SECONDS("rr.duration") " as duration, rr.error_code, rr.error, rr.output," \
	"           rr.stderr, " RUN_RESULT \
	"         from cronq.job_runs rr where rr.job_id = j.id) r) as runs" \
	" from cronq.jobs j where j.id = $1::bigint) x"
static const char *const show_sql[] = {SHOW_SQL(RESULT_JSON("j"), RESULT_JSON("rr")),
									   SHOW_SQL(RESULT_TEXT("j"), RESULT_TEXT("rr"))};

int
inspect_show(PGconn *conn, int64_t id, bool results_as_text, char **json, cq_err *err)
{
	char idtext[32];
	const char *params[1] = {idtext};
	PGresult *res;

	*json = NULL;
	snprintf(idtext, sizeof idtext, "%" PRId64, id);
	if ((res = pg_exec(conn, show_sql[results_as_text], 1, params, PG_MAYBE_ONE, err)) == NULL)
		return err->code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return cq_fail(err, EX_DATAERR, "job %" PRId64 " does not exist", id);
	}
	*json = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

/*
 * One statement. The final select reads the snapshot taken before the
 * update, so a job not retried is reported with the status that kept it.
 */
/* cronq.retry_jobs() holds the statement, shared with cronq.retry(). */
static const char retry_sql[] =
	"select r.id, r.changed, coalesce(r.status, '') from cronq.retry_jobs($1::bigint[]) r";

int
inspect_retry(PGconn *conn, const int64_t *ids, int n, retry_outcome *result, int64_t *retried,
			  cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[1];
	PGresult *res;

	bool missing = false;

	*retried = 0;
	memset(result, 0, (size_t) n * sizeof *result);
	pg_array_ids(&arr, ids, n);
	params[0] = buf_str(&arr);
	if (pg_run(conn, "begin", 0, NULL, err) != 0) {
		buf_free(&arr);
		return err->code;
	}
	res = pg_exec(conn, retry_sql, 1, params, PG_ANY, err);
	buf_free(&arr);
	for (int r = 0; res && r < PQntuples(res); r++) {
		int64_t id = strtoll(PQgetvalue(res, r, 0), NULL, 10);
		bool done = PQgetvalue(res, r, 1)[0] == 't';

		if (done)
			(*retried)++;
		for (int i = 0; i < n; i++)
			if (ids[i] == id) {
				result[i].retried = done;
				snprintf(result[i].status, sizeof result[i].status, "%s", PQgetvalue(res, r, 2));
			}
	}
	for (int i = 0; i < n; i++)
		missing = missing || result[i].status[0] == '\0';
	/* All or nothing: one id not found undoes the others. */
	if ((res = pg_end_tx(conn, res, !missing, err)) == NULL)
		return err->code;
	PQclear(res);
	for (int i = 0; missing && i < n; i++)
		result[i].retried = false;
	if (missing)
		*retried = 0;
	return 0;
}

static const char retry_dead_sql[] =
	"select count(*) filter (where r.changed), count(*) filter (where not r.changed)"
	" from cronq.retry_jobs(array("
	"  select id from cronq.jobs where status = 'dead'"
	"   and ($1::text[] is null or type = any ($1::text[]))"
	"   and ($2::text[] is null or queue = any ($2::text[])))) r";

int
inspect_retry_dead(PGconn *conn, const inspect_filter *f, int64_t *retried, int64_t *kept,
				   cq_err *err)
{
	char *types = text_array(f->types, f->ntypes);
	char *queues = text_array(f->queues, f->nqueues);
	const char *params[2] = {types, queues};
	PGresult *res = pg_exec(conn, retry_dead_sql, 2, params, PG_ONE, err);

	free(types);
	free(queues);
	*retried = *kept = 0;
	if (res == NULL)
		return err->code;
	*retried = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*kept = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	PQclear(res);
	return 0;
}
