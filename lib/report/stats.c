/*
 * stats — see stats.h. The status document is assembled by PostgreSQL
 * (json_build_object, json_agg: status.sql), so that this file holds
 * nothing of its presentation; health.sql reads what check judges by,
 * one subquery per index.
 */
#include "report/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "schema/embedded.h"
#include "util/json.h"

/*
 * Each enabled schedule gets "error": why a wake cannot plan it (or null),
 * and the document "unplannable_schedules": how many cannot.
 */
static void
mark_unplannable(json_t *doc)
{
	schedule_checker *c = schedule_checker_new();
	json_t *s;
	size_t i;
	json_int_t bad = 0;

	json_array_foreach(json_object_get(doc, "schedules"), i, s) {
		const char *why = NULL;

		if (json_is_true(json_object_get(s, "enabled")))
			why = schedule_checker_why(c, cq_json_str(s, "cron", ""), cq_json_str(s, "timezone", ""));
		json_object_set_new(s, "error", why ? json_string(why) : json_null());
		bad += why != NULL;
	}
	json_object_set_new(doc, "unplannable_schedules", json_integer(bad));
	schedule_checker_free(c);
}

json_t *
stats_status(PGconn *conn, cq_err *err)
{
	char grace[16], hours[16];
	const char *params[2] = {grace, hours};
	json_error_t jerr;
	json_t *doc;
	PGresult *res;

	snprintf(grace, sizeof grace, "%d", STATS_OVERDUE_GRACE_S);
	snprintf(hours, sizeof hours, "%d", STATS_HISTORY_HOURS);
	if ((res = pg_exec(conn, sql_report_status, 2, params, PG_ONE, err, NULL)) == NULL)
		return NULL;
	doc = json_loads(PQgetvalue(res, 0, 0), 0, &jerr);
	PQclear(res);
	if (doc == NULL)
		cq_fail(err, EX_SOFTWARE, "could not read the status document: %s", jerr.text);
	else
		mark_unplannable(doc);
	return doc;
}

static int64_t
int_at(const PGresult *res, int col)
{
	return PQgetisnull(res, 0, col) ? 0 : strtoll(PQgetvalue(res, 0, col), NULL, 10);
}

/* Count the enabled schedules a wake cannot plan; name the first. */
static int
read_unplannable(PGconn *conn, stats_health *h, cq_err *err)
{
	PGresult *res = pg_exec(conn, "select name, cron, timezone from cronq.schedules"
							" where enabled order by name", 0, NULL, PG_ANY, err, NULL);
	schedule_checker *c;

	if (res == NULL)
		return err->code;
	c = schedule_checker_new();
	for (int i = 0; i < PQntuples(res); i++) {
		const char *why = schedule_checker_why(c, PQgetvalue(res, i, 1), PQgetvalue(res, i, 2));

		if (why && h->unplannable++ == 0)
			snprintf(h->unplannable_name, sizeof h->unplannable_name, "%s: %s",
					 PQgetvalue(res, i, 0), why);
	}
	schedule_checker_free(c);
	PQclear(res);
	return 0;
}

int
stats_health_read(PGconn *conn, stats_health *h, cq_err *err)
{
	PGresult *res;

	memset(h, 0, sizeof *h);
	if ((res = pg_exec(conn, sql_report_health, 0, NULL, PG_ONE, err, NULL)) == NULL)
		return err->code;
	h->lag_ms = int_at(res, 0);
	h->due = int_at(res, 1);
	h->dead = int_at(res, 2);
	h->failed = int_at(res, 3);
	h->stuck = int_at(res, 4);
	h->woke = !PQgetisnull(res, 0, 5);
	h->silence_ms = int_at(res, 5);
	if (!PQgetisnull(res, 0, 6)) {
		snprintf(h->overdue_name, sizeof h->overdue_name, "%s", PQgetvalue(res, 0, 6));
		h->overdue_ms = int_at(res, 7);
	}
	h->paused = int_at(res, 8);
	if (!PQgetisnull(res, 0, 9))
		snprintf(h->paused_key, sizeof h->paused_key, "%s", PQgetvalue(res, 0, 9));
	h->full = int_at(res, 10);
	if (!PQgetisnull(res, 0, 11))
		snprintf(h->full_key, sizeof h->full_key, "%s", PQgetvalue(res, 0, 11));
	PQclear(res);
	return read_unplannable(conn, h, err);
}
