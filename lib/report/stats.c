/*
 * stats — see stats.h. The status document is assembled by PostgreSQL
 * (json_build_object, json_agg: status.sql), so that this file holds
 * nothing of its presentation; health.sql reads what check judges by,
 * one subquery per index; timeline.sql counts the events of the
 * timelines, which are laid into their windows' buckets here, with the
 * fire times the runners missed (a schedule's expression is C's to read).
 */
#include "report/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "sched/next.h"
#include "schema/embedded.h"
#include "time/rfc3339.h"
#include "util/json.h"
#include "util/xalloc.h"

/*
 * Each enabled schedule gets "error": why a wake cannot plan it, or why its
 * jobs are refused (status.sql's "refused": the newest refusal since its
 * last job), or null; the document "unplannable_schedules" and
 * "refused_schedules": how many of each.
 */
static void
mark_unplannable(json_t *doc)
{
	schedule_checker *c = schedule_checker_new();
	json_t *s;
	size_t i;
	json_int_t bad = 0, refused = 0;

	json_array_foreach(json_object_get(doc, "schedules"), i, s) {
		const char *why = NULL;

		if (json_is_true(json_object_get(s, "enabled")))
			why = schedule_checker_why(c, cq_json_str(s, "cron", ""), cq_json_str(s, "timezone", ""));
		if (why)
			json_object_set_new(s, "error", json_string(why));
		else if (json_is_string(json_object_get(s, "refused")))
			json_object_set_new(s, "error", json_sprintf("its jobs are refused: %s", cq_json_str(s, "refused", "")));
		else
			json_object_set_new(s, "error", json_null());
		bad += why != NULL;
		refused += why == NULL && json_is_string(json_object_get(s, "refused"));
	}
	json_object_set_new(doc, "unplannable_schedules", json_integer(bad));
	json_object_set_new(doc, "refused_schedules", json_integer(refused));
	schedule_checker_free(c);
}

/* The one JSON value statement sql answers, parsed; what names it in an error. */
static json_t *
query_doc(PGconn *conn, const char *sql, int nparams, const char *const *params, const char *what,
		  cq_err *err)
{
	json_error_t jerr;
	json_t *doc;
	PGresult *res;

	if ((res = pg_exec(conn, sql, nparams, params, PG_ONE, err)) == NULL)
		return NULL;
	doc = json_loads(PQgetvalue(res, 0, 0), 0, &jerr);
	PQclear(res);
	if (doc == NULL)
		cq_fail(err, EX_SOFTWARE, "could not read the %s: %s", what, jerr.text);
	return doc;
}

json_t *
stats_status(PGconn *conn, int list_max, cq_err *err)
{
	char grace[16], hours[16], max[16];
	const char *params[3] = {grace, hours, max};
	json_t *doc;

	snprintf(grace, sizeof grace, "%d", STATS_OVERDUE_GRACE_S);
	snprintf(hours, sizeof hours, "%d", STATS_HISTORY_HOURS);
	snprintf(max, sizeof max, "%d", list_max);
	if ((doc = query_doc(conn, sql_report_status, 3, params, "status document", err)) != NULL)
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
							" where enabled order by name", 0, NULL, PG_ANY, err);
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
	if ((res = pg_exec(conn, sql_report_health, 0, NULL, PG_ONE, err)) == NULL)
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
	h->refused = int_at(res, 12);
	if (!PQgetisnull(res, 0, 13))
		snprintf(h->refused_name, sizeof h->refused_name, "%s", PQgetvalue(res, 0, 13));
	PQclear(res);
	return read_unplannable(conn, h, err);
}

/* ---- timelines ---- */

const stats_window stats_windows[STATS_WINDOWS] = {
	{"24h", "Last 24 hours", 24, 3600},
	{"7d", "Last 7 days", 28, 6 * 3600},
};

const char *const stats_marks[STATS_MARKS] = {"ran", "failed", "skipped", "missed"};

/* Fire times listed per schedule at most (a week of minutes, and more). */
#define TL_MAX_FIRES 20000

/* The entity called name in index (name -> entity, borrowed), made empty if new. */
static json_t *
tl_entity(json_t *index, const char *name)
{
	json_t *e = json_object_get(index, name), *wins;

	if (e)
		return e;
	e = json_pack("{s:s}", "name", name);
	wins = json_array();
	for (int w = 0; w < STATS_WINDOWS; w++) {
		json_t *win = json_object();

		for (int k = 0; k <= STATS_MARKS; k++) {
			json_t *arr = json_array();

			for (int b = 0; b < stats_windows[w].buckets; b++)
				json_array_append_new(arr, json_integer(0));
			json_object_set_new(win, k < STATS_MARKS ? stats_marks[k] : "finished", arr);
		}
		json_array_append_new(wins, win);
	}
	json_object_set_new(e, "windows", wins);
	json_object_set_new(index, name, e);
	return e;
}

/* Count n events of kind, ago_s seconds ago, in each window's bucket. */
static void
tl_add(json_t *entity, const char *kind, int64_t ago_s, int64_t n)
{
	for (int w = 0; w < STATS_WINDOWS; w++) {
		const stats_window *sw = &stats_windows[w];
		json_t *arr;
		size_t b;

		if (ago_s < 0 || ago_s >= (int64_t) sw->buckets * sw->bucket_seconds)
			continue;
		b = (size_t) (sw->buckets - 1 - ago_s / sw->bucket_seconds);
		arr = json_object_get(json_array_get(json_object_get(entity, "windows"), (size_t) w), kind);
		json_array_set_new(arr, b, json_integer(json_integer_value(json_array_get(arr, b)) + n));
	}
}

/*
 * Count as missed, for schedule sched and its queue, each fire time of the
 * enabled schedule f strictly inside a gap [a, b] of tl's "gaps" and after
 * its creation.
 */
static void
tl_missed(const json_t *tl, const json_t *f, json_t *sched, json_t *queue, int64_t now)
{
	const json_t *gap;
	size_t i;
	int64_t listed = 0;

	if (!json_is_true(json_object_get(f, "enabled")))
		return;
	json_array_foreach(json_object_get(tl, "gaps"), i, gap) {
		int64_t from = json_integer_value(json_array_get(gap, 0));
		int64_t to = json_integer_value(json_array_get(gap, 1));
		bool more = true;

		if (from < cq_json_int(f, "created"))
			from = cq_json_int(f, "created");
		while (more && from < to && listed < TL_MAX_FIRES) {
			char text[RFC3339_BUFLEN];
			int64_t *times, n, k;
			cq_err err = {0};

			rfc3339_format(from, text, sizeof text);
			if (sched_next(cq_json_str(f, "cron", ""), cq_json_str(f, "timezone", "UTC"),
						   cq_json_str(f, "anchor", NULL), text, now, 256, &times, &n, &err) != 0)
				return;			/* unplannable: status says why */
			for (k = 0; k < n && times[k] < to; k++) {
				tl_add(sched, "missed", now - times[k], 1);
				tl_add(queue, "missed", now - times[k], 1);
				listed++;
				from = times[k];
			}
			/* a full batch, all inside the gap: the gap goes on */
			more = n == 256 && k == n;
			free(times);
		}
	}
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* index's entities as an array sorted by name (new references). */
static json_t *
tl_sorted(const json_t *index)
{
	size_t n = json_object_size(index), i = 0;
	const char **names = xcalloc(n ? n : 1, sizeof *names);
	const char *key;
	json_t *v, *arr = json_array();

	json_object_foreach((json_t *) index, key, v)
		names[i++] = key;
	qsort(names, n, sizeof *names, by_name);
	for (i = 0; i < n; i++)
		json_array_append(arr, json_object_get(index, names[i]));
	free(names);
	return arr;
}

json_t *
stats_timelines(PGconn *conn, const json_t *status, cq_err *err)
{
	char window[32], grace[16], step[16];
	const char *params[3] = {window, grace, step};
	json_t *tl, *queues, *scheds, *out, *o;
	int64_t longest = 0, now;
	size_t i;

	for (int w = 0; w < STATS_WINDOWS; w++)
		if ((int64_t) stats_windows[w].buckets * stats_windows[w].bucket_seconds > longest)
			longest = (int64_t) stats_windows[w].buckets * stats_windows[w].bucket_seconds;
	snprintf(window, sizeof window, "%lld", (long long) longest);
	snprintf(grace, sizeof grace, "%d", STATS_OVERDUE_GRACE_S);
	snprintf(step, sizeof step, "%d", STATS_TIMELINE_STEP_S);
	if ((tl = query_doc(conn, sql_report_timeline, 3, params, "timelines", err)) == NULL)
		return NULL;
	now = cq_json_int(tl, "now");
	queues = json_object();
	scheds = json_object();
	json_array_foreach(json_object_get(status, "queues"), i, o)
		tl_entity(queues, cq_json_str(o, "queue", "?"));
	json_array_foreach(json_object_get(status, "schedules"), i, o)
		tl_entity(scheds, cq_json_str(o, "name", "?"));
	/* the schedules status lists, no other (it lists a bounded number) */
	json_array_foreach(json_object_get(tl, "fires"), i, o) {
		json_t *s = json_object_get(scheds, cq_json_str(o, "name", "?"));

		if (s == NULL)
			continue;
		json_object_set(s, "queue", json_object_get(o, "queue"));
		tl_missed(tl, o, s, tl_entity(queues, cq_json_str(o, "queue", "?")), now);
	}
	/* [queue, schedule, kind, periods ago, n] */
	json_array_foreach(json_object_get(tl, "events"), i, o) {
		const char *kind = json_string_value(json_array_get(o, 2));
		int64_t ago = json_integer_value(json_array_get(o, 3)) * STATS_TIMELINE_STEP_S;
		int64_t n = json_integer_value(json_array_get(o, 4));
		const json_t *sched = json_array_get(o, 1);

		if (json_object_get(queues, json_string_value(json_array_get(o, 0))))
			tl_add(json_object_get(queues, json_string_value(json_array_get(o, 0))), kind, ago, n);
		/* a job whose schedule is gone counts for its queue only */
		if (json_is_string(sched) && json_object_get(scheds, json_string_value(sched)))
			tl_add(json_object_get(scheds, json_string_value(sched)), kind, ago, n);
	}
	out = json_pack("{s:I, s:o, s:o}", "now", (json_int_t) now, "queues", tl_sorted(queues),
					"schedules", tl_sorted(scheds));
	json_decref(queues);
	json_decref(scheds);
	json_decref(tl);
	return out;
}
