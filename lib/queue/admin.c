/* admin — see admin.h. */
#include "queue/admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "util/buf.h"

/*
 * One statement: queued and failed jobs become cancelled at once; running
 * ones are flagged for their worker; the rest are reported as they are.
 */
static const char cancel_sql[] =
	"with req as (select unnest($1::bigint[]) as id),"
	" upd as ("
	"  update cronq.jobs j set"
	"    status = case when j.status = 'running' then j.status else 'cancelled' end,"
	"    cancel_requested = j.status = 'running',"
	"    finished_at = case when j.status = 'running' then j.finished_at else now() end,"
	"    last_error = case when j.status = 'running' then j.last_error else 'cancelled by an operator' end,"
	"    error_code = case when j.status = 'running' then j.error_code else 'cancelled' end,"
	"    updated_at = now()"
	"  from req where j.id = req.id and j.status in ('queued', 'failed', 'running')"
	"  returning j.id, j.status)"
	" select req.id, upd.status, j.status"
	" from req left join upd on upd.id = req.id left join cronq.jobs j on j.id = req.id";

int
jobs_cancel(PGconn *conn, const int64_t *ids, int n, cancel_result *result, cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[1];
	PGresult *res;

	for (int i = 0; i < n; i++)
		result[i] = CANCEL_NOT_FOUND;
	buf_array_ids(&arr, ids, n);
	params[0] = buf_str(&arr);
	res = pg_exec(conn, cancel_sql, 1, params, PG_ANY, err, NULL);
	buf_free(&arr);
	if (res == NULL)
		return err->code;
	for (int r = 0; r < PQntuples(res); r++) {
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
	PQclear(res);
	return 0;
}
