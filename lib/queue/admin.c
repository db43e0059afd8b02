/* admin — see admin.h. */
#include "queue/admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "util/buf.h"

/*
 * cronq.cancel_jobs() (sql/0008_ownership.sql) holds the statement, shared
 * with the SQL API's cronq.cancel(): queued and failed jobs become
 * cancelled at once; a running one is flagged, and its worker's next
 * heartbeat stops it. Row-level security limits it to the caller's jobs
 * unless the caller may manage all. Per id: the status to report (set
 * when this call changed the job) and the job's status (NULL: none).
 */
static const char cancel_sql[] =
	"select c.id, case when c.changed then c.status end, c.status"
	" from cronq.cancel_jobs($1::bigint[]) c";

int
jobs_cancel(PGconn *conn, const int64_t *ids, int n, cancel_result *result, cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[1];
	PGresult *res;
	bool missing = false;

	for (int i = 0; i < n; i++)
		result[i] = CANCEL_NOT_FOUND;
	pg_array_ids(&arr, ids, n);
	params[0] = buf_str(&arr);
	if (pg_run(conn, "begin", 0, NULL, err) != 0) {
		buf_free(&arr);
		return err->code;
	}
	res = pg_exec(conn, cancel_sql, 1, params, PG_ANY, err);
	buf_free(&arr);
	for (int r = 0; res && r < PQntuples(res); r++) {
		int64_t id = strtoll(PQgetvalue(res, r, 0), NULL, 10);
		cancel_result what;

		if (!PQgetisnull(res, r, 1))
			what = strcmp(PQgetvalue(res, r, 1), "running") == 0 ? CANCEL_REQUESTED : CANCEL_DONE;
		else
			what = PQgetisnull(res, r, 2) ? CANCEL_NOT_FOUND : CANCEL_FINISHED;
		for (int i = 0; i < n; i++)
			if (ids[i] == id)
				result[i] = what;
	}
	for (int i = 0; i < n; i++)
		missing = missing || result[i] == CANCEL_NOT_FOUND;
	/* All or nothing: one id not found undoes the others. */
	if ((res = pg_end_tx(conn, res, !missing, err)) == NULL)
		return err->code;
	PQclear(res);
	for (int i = 0; missing && i < n; i++)
		if (result[i] != CANCEL_NOT_FOUND)
			result[i] = CANCEL_UNDONE;
	return 0;
}
