/*
 * schedule — see schedule.h. Materialisation takes the due schedules FOR
 * UPDATE SKIP LOCKED, so concurrent runners split them rather than wait,
 * computes fire times in C, and writes jobs and next runs through
 * cronq.materialise() in one statement of the same transaction; the
 * occurrence key schedule:NAME:FIRE_TIME is the backstop. Only when that
 * statement is refused (a schedule whose jobs the database no longer
 * accepts) is the batch done again in parts under savepoints, still
 * holding the same rows, to set the schedules at fault aside.
 */
#include "sched/schedule.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "schema/embedded.h"
#include "queue/enqueue.h"
#include "sched/fire.h"
#include "tasks/payload.h"
#include "time/cron.h"
#include "time/rfc3339.h"
#include "time/tz.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xalloc.h"

/* Schedules materialised per transaction. */
#define MATERIALISE_BATCH 1000

bool
schedule_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 200)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char) *s) && !strchr("_.:@-", *s))
			return false;
	return true;
}

/* What d says about its times, for a fire clock. */
static fire_def
def_times(const schedule_def *d)
{
	fire_def f = {d->name, d->cron, d->timezone, d->has_anchor, d->anchor, d->spread_ms / 1000};

	return f;
}

int
schedule_check(const schedule_def *d, cq_err *err)
{
	fire_def times = def_times(d);
	fire_clock clock;
	enqueue_req req;
	int rc;

	if (!schedule_name_valid(d->name))
		return cq_fail(err, EX_DATAERR, "invalid schedule name \"%s\": use 1 to 200 letters, digits and _.:@-", d->name);
	if (strlen(d->name) >= 7 && strcmp(d->name + strlen(d->name) - 7, ":manual") == 0)
		return cq_fail(err, EX_DATAERR, "invalid schedule name \"%s\": a name may not end in \":manual\""
					   " (the keys of another schedule's runs by hand end so)", d->name);
	if (d->spread_ms % 1000 != 0)
		return cq_fail(err, EX_DATAERR, "invalid spread: must be a whole number of seconds");
	if ((rc = fire_open(&times, &clock, err)) != 0)
		return rc;
	fire_close(&clock);
	if (d->catchup && strcmp(d->catchup, "latest") != 0 && strcmp(d->catchup, "all") != 0 &&
		strcmp(d->catchup, "skip") != 0)
		return cq_fail(err, EX_DATAERR, "invalid catchup policy \"%s\": must be latest, all or skip", d->catchup);
	if (d->overlap && strcmp(d->overlap, "skip") != 0 && strcmp(d->overlap, "allow") != 0)
		return cq_fail(err, EX_DATAERR, "invalid overlap policy \"%s\": must be skip or allow", d->overlap);
	if (d->keep < 0)
		return cq_fail(err, EX_DATAERR, "invalid keep %d: must be at least 1", d->keep);

	/* The job fields obey the same rules as any enqueued job's. */
	memset(&req, 0, sizeof req);
	req.type = d->type;
	req.payload = d->payload;
	req.opts = d->opts;
	req.history = d->history;
	req.hooks = d->hooks;
	req.in_ms = -1;
	return enqueue_check(&req, payload_validate, err);
}

/* The database's now(), as epoch seconds. */
static int
db_now(PGconn *conn, int64_t *now, cq_err *err)
{
	PGresult *res = pg_exec(conn, "select floor(extract(epoch from now()))::bigint", 0, NULL, PG_ONE, err);

	if (res == NULL)
		return err->code;
	*now = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

/* The first due instant of times strictly after t. */
static int
first_after(const fire_def *times, int64_t t, int64_t *next, cq_err *err)
{
	fire_clock clock;
	int rc;

	if ((rc = fire_open(times, &clock, err)) != 0)
		return rc;
	if (fire_next(&clock, t, next) != 0)
		rc = cq_fail(err, EX_DATAERR, "cron expression \"%s\" never fires", times->cron);
	fire_close(&clock);
	return rc;
}

/* Whether the session sees schedule name (false too when it cannot tell). */
static bool
schedule_visible(PGconn *conn, const char *name)
{
	cq_err ignored = {0};
	PGresult *res = pg_exec(conn, "select 1 from cronq.schedules where name = $1", 1,
							(const char *[]) {name}, PG_MAYBE_ONE, &ignored);
	bool seen = res && PQntuples(res) == 1;

	PQclear(res);
	return seen;
}

int
schedule_add(PGconn *conn, const schedule_def *d, bool replace, bool *replaced, cq_err *err)
{
	/* Columns left out take the table's defaults, the one place that knows them. */
	const char *cols[] = {"name", "cron", "timezone", "type", "payload", "queue", "priority",
						  "max_attempts", "timeout", "enabled", "catchup", "overlap", "next_run_at",
						  "start_deadline", "anchor", "spread", "history", "keep", "hooks"};
	const char *casts[] = {"", "", "", "", "::jsonb", "", "::int", "::int",
						   "::bigint * interval '1 millisecond'", "::bool", "", "", "::timestamptz",
						   "::bigint * interval '1 millisecond'", "::timestamptz",
						   "::bigint * interval '1 second'", "", "::int", "::jsonb"};
	enum {NCOLS = sizeof cols / sizeof cols[0]};
	char prio[16], attempts[16], timeout[32], next_text[32], deadline[32], keep[16];
	char anchor[RFC3339_BUFLEN], spread[32];
	fire_def times = def_times(d);
	const char *vals[NCOLS];
	const char *params[NCOLS];
	buf sql = BUF_INIT, values = BUF_INIT;
	int64_t now = 0, next = 0;
	int n = 0, rc;
	PGresult *res;

	if ((rc = schedule_check(d, err)) != 0)
		return rc;
	if ((rc = db_now(conn, &now, err)) != 0 ||
		(rc = first_after(&times, now, &next, err)) != 0)
		return rc;
	snprintf(prio, sizeof prio, "%d", d->opts.priority);
	snprintf(attempts, sizeof attempts, "%d", d->opts.max_attempts);
	snprintf(timeout, sizeof timeout, "%" PRId64, d->opts.timeout_ms);
	rfc3339_format(next, next_text, sizeof next_text);
	vals[0] = d->name;
	vals[1] = d->cron;
	vals[2] = d->timezone;
	vals[3] = d->type;
	vals[4] = d->payload;
	vals[5] = d->opts.queue;
	vals[6] = d->opts.has_priority ? prio : NULL;
	vals[7] = d->opts.max_attempts > 0 ? attempts : NULL;
	vals[8] = d->opts.timeout_ms > 0 ? timeout : NULL;
	vals[9] = d->disabled ? "false" : NULL;
	vals[10] = d->catchup;
	vals[11] = d->overlap;
	vals[12] = next_text;
	snprintf(deadline, sizeof deadline, "%" PRId64, d->start_deadline_ms);
	vals[13] = d->start_deadline_ms > 0 ? deadline : NULL;
	rfc3339_format(d->anchor, anchor, sizeof anchor);
	vals[14] = d->has_anchor ? anchor : NULL;
	snprintf(spread, sizeof spread, "%" PRId64, d->spread_ms / 1000);
	vals[15] = d->spread_ms > 0 ? spread : NULL;
	vals[16] = d->history;
	snprintf(keep, sizeof keep, "%d", d->keep);
	vals[17] = d->keep > 0 ? keep : NULL;
	vals[18] = d->hooks;

	buf_puts(&sql, "insert into cronq.schedules as s (");
	for (int i = 0; i < NCOLS; i++) {
		if (vals[i] == NULL)
			continue;
		params[n++] = vals[i];
		buf_printf(&sql, "%s%s", n > 1 ? ", " : "", cols[i]);
		buf_printf(&values, "%s$%d%s", n > 1 ? ", " : "", n, casts[i]);
	}
	buf_printf(&sql, ") values (%s)", buf_str(&values));
	if (replace) {
		/*
		 * A schedule replaced keeps its plan while its expression, zone and
		 * anchor stay (the schedules_guard trigger moves it with a spread
		 * changed alone: the same fire time at its new offset); else it is
		 * planned from now, or, should that name a fire time already
		 * decided (a new spread's offset), left to the wake, which plans
		 * it after them (the schedules_undecided trigger).
		 */
		buf_puts(&sql, " on conflict (name) do update set");
		for (int i = 1; i < NCOLS; i++)
			if (strcmp(cols[i], "next_run_at") == 0)
				buf_puts(&sql, " next_run_at = case when (s.cron, s.timezone, s.anchor)"
						 " is not distinct from (excluded.cron, excluded.timezone, excluded.anchor)"
						 " then s.next_run_at else excluded.next_run_at end,");
			else
				buf_printf(&sql, " %s = excluded.%s%s", cols[i], cols[i], i < NCOLS - 1 ? "," : "");
		/* Who becomes its author is the schedules_guard trigger's to say.
		 * An inserted row has no xmax; one updated by on conflict has ours. */
		if (replaced)
			buf_puts(&sql, " returning xmax <> 0");
	}
	if (replaced)
		*replaced = false;
	res = pg_exec(conn, buf_str(&sql), n, params, PG_NONE, err);
	buf_free(&sql);
	buf_free(&values);
	if (res == NULL) {
		/*
		 * Row-level security hides another role's schedule but not its
		 * name; its refusal (42501, as a missing grant's) is raised where
		 * every policy's is.
		 */
		if ((strcmp(err->sqlstate, "23505") == 0 || (replace && strcmp(err->sqlstate, "42501") == 0 &&
											 strcmp(err->routine, "ExecWithCheckOptions") == 0)) &&
			!schedule_visible(conn, d->name)) {
			cq_fail(err, EX_DATAERR, "schedule \"%s\" belongs to another role", d->name);
			cq_hint(err, "Schedule names are shared by every role: choose another name.");
		} else if (strcmp(err->sqlstate, "23505") == 0) {
			cq_fail(err, EX_DATAERR, "schedule \"%s\" already exists", d->name);
			cq_hint(err, "Use --replace to replace it, or \"cronq schedule remove %s\" first.", d->name);
		}
		return err->code;
	}
	if (replace && replaced && PQntuples(res) == 1)
		*replaced = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return 0;
}

static int
not_found(const char *name, cq_err *err)
{
	return cq_fail(err, EX_DATAERR, "schedule \"%s\" does not exist", name);
}

int
schedule_remove(PGconn *conn, const char *name, cq_err *err)
{
	const char *params[1] = {name};
	/* Not a DELETE: a trigger deletes the row (sql/0021, why). */
	PGresult *res = pg_exec(conn, "update cronq.schedules set removed = true where name = $1",
							1, params, PG_NONE, err);
	bool found;

	if (res == NULL)
		return err->code;
	found = strcmp(PQcmdTuples(res), "0") != 0;
	PQclear(res);
	return found ? 0 : not_found(name, err);
}

int
schedule_set_enabled(PGconn *conn, const char *name, bool enabled, bool *changed, cq_err *err)
{
	const char *params[2] = {name, enabled ? "true" : "false"};
	/* The joined row is the one before the update: its enabled, the old one. */
	PGresult *res = pg_exec(conn, "update cronq.schedules s set enabled = $2::bool from cronq.schedules o"
							" where s.name = $1 and o.name = s.name returning o.enabled <> $2::bool",
							2, params, PG_MAYBE_ONE, err);
	bool found;

	if (res == NULL)
		return err->code;
	found = PQntuples(res) == 1;
	if (changed)
		*changed = found && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return found ? 0 : not_found(name, err);
}

int
schedule_run(PGconn *conn, const char *name, bool force, int64_t *job_id, bool *again, cq_err *err)
{
	const char *params[2] = {name, force ? "true" : "false"};
	PGresult *res = pg_exec(conn, "select cronq.run_schedule($1, $2::bool), now()", 2, params, PG_ONE, err);

	*again = false;
	if (res == NULL) {
		if (strcmp(err->sqlstate, "P0002") == 0)
			err->code = EX_DATAERR;
		else if (strcmp(err->sqlstate, "55006") == 0)
			err->code = EX_TEMPFAIL;
		return err->code;
	}
	*job_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	/*
	 * The key holds one job a second: a job not created at this call's
	 * now() was enqueued by an earlier run of the same second (committed: only
	 * the question is left to ask, and a failure to ask it says nothing).
	 */
	params[0] = PQgetvalue(res, 0, 0);
	params[1] = PQgetvalue(res, 0, 1);
	cq_err unasked = {0};
	PGresult *same = pg_exec(conn, "select created_at <> $2::timestamptz from cronq.jobs where id = $1", 2, params,
							 PG_MAYBE_ONE, &unasked);

	*again = same && PQntuples(same) == 1 && PQgetvalue(same, 0, 0)[0] == 't';
	PQclear(same);
	PQclear(res);
	return 0;
}

/* t as RFC 3339 on zone's clock: "2026-03-08T03:00:00-04:00". */
static void
format_local(const tz *zone, int64_t t, char *out, size_t len)
{
	struct tz_tm tm;
	int off;

	tz_local(zone, t, &tm);
	off = tm.utoff < 0 ? -tm.utoff : tm.utoff;
	snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.year, tm.mon, tm.mday, tm.hour,
			 tm.min, tm.sec, tm.utoff < 0 ? '-' : '+', off / 3600, off / 60 % 60);
}

/*
 * Add to s, one schedule of schedule_list(), "next_fire_times": its next
 * SCHEDULE_SHOW_NEXT due instants (schedule_upcoming) in UTC and on its
 * zone's clock. A schedule this host cannot plan (a zone gone) gets none.
 */
static int
add_upcoming(PGconn *conn, const char *name, json_t *s, cq_err *err)
{
	int64_t *times = NULL, n = 0;
	char *zone_name = NULL, why[512];
	json_t *list = json_array();
	tz *zone;
	cq_err soft = {0};
	int rc;

	if ((rc = schedule_upcoming(conn, name, SCHEDULE_SHOW_NEXT, &times, &n, &zone_name, NULL, &soft)) != 0) {
		json_decref(list);
		if (soft.code == EX_DATAERR)
			return json_object_set_new(s, "next_fire_times", json_null()) == 0 ? 0 : EX_SOFTWARE;
		*err = soft;
		return rc;
	}
	if ((zone = tz_open(zone_name, why, sizeof why)) != NULL) {
		for (int64_t i = 0; i < n; i++) {
			char utc[RFC3339_BUFLEN], local[40];

			rfc3339_format(times[i], utc, sizeof utc);
			format_local(zone, times[i], local, sizeof local);
			json_array_append_new(list, json_pack("{s:s, s:s}", "utc", utc, "local", local));
		}
		tz_free(zone);
	}
	json_object_set_new(s, "next_fire_times", list);
	free(times);
	free(zone_name);
	return 0;
}

json_t *
schedule_list(PGconn *conn, const char *name, cq_err *err)
{
	static const char sql[] =
		"select coalesce(json_agg(x order by x.name), '[]') from ("
		" select s.name, s.cron, s.timezone, s.type, s.payload, s.queue, s.priority,"
		"   s.max_attempts, round(extract(epoch from s.timeout), 3)::float8 as timeout,"
		"   s.enabled, s.catchup, s.overlap,"
		"   round(extract(epoch from s.start_deadline), 3)::float8 as start_deadline,"
		"   to_char(s.anchor at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') as anchor,"
		"   round(extract(epoch from s.spread), 3)::float8 as spread, s.history, s.keep,"
		"   to_char(s.next_run_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') as next_run_at,"
		"   to_char(s.last_enqueued_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') as last_enqueued_at,"
		"   s.last_job_id, j.status as last_job_status, s.created_by"
		" from cronq.schedules s left join cronq.jobs j on j.id = s.last_job_id"
		" where $1::text is null or s.name = $1) x";
	const char *params[1] = {name};
	PGresult *res = pg_exec(conn, sql, 1, params, PG_ONE, err);
	json_error_t jerr;
	json_t *list;

	if (res == NULL)
		return NULL;
	list = json_loads(PQgetvalue(res, 0, 0), 0, &jerr);
	PQclear(res);
	if (list == NULL) {
		cq_fail(err, EX_SOFTWARE, "could not read schedules: %s", jerr.text);
		return NULL;
	}
	if (name && json_array_size(list) == 0) {
		json_decref(list);
		not_found(name, err);
		return NULL;
	}
	if (name && add_upcoming(conn, name, json_array_get(list, 0), err) != 0) {
		json_decref(list);
		return NULL;
	}
	return list;
}

/*
 * The instant, at offset, of the newest fire time a wake decided: column
 * col of row (decided_through as an epoch second); INT64_MIN for none.
 * No fire time at or before it is planned or listed again.
 */
static int64_t
decided_instant(const PGresult *res, int row, int col, int64_t offset)
{
	return PQgetisnull(res, row, col) ? INT64_MIN : strtoll(PQgetvalue(res, row, col), NULL, 10) + offset;
}

int
schedule_upcoming(PGconn *conn, const char *name, int64_t count, int64_t **times, int64_t *n,
				  char **zone, const char **ended, cq_err *err)
{
	static const char sql[] =
		"select s.cron, s.timezone, floor(extract(epoch from now()))::bigint,"
		" floor(extract(epoch from s.anchor))::bigint,"
		" coalesce(floor(extract(epoch from s.spread)), 0)::bigint,"
		" p.key is not null, floor(extract(epoch from p.paused_at))::bigint,"
		" floor(extract(epoch from p.until))::bigint, s.enabled,"
		" floor(extract(epoch from s.decided_through))::bigint"
		" from cronq.schedules s left join cronq.pauses p on p.schedule = s.name"
		" where s.name = $1";
	PGresult *res = pg_exec(conn, sql, 1, (const char *[]) {name}, PG_MAYBE_ONE, err);
	const char *why = NULL;
	fire_def def;
	fire_clock clock;
	bool paused, forever;
	int64_t t, paused_at, until;
	int rc;

	*times = NULL;
	*n = 0;
	if (zone)
		*zone = NULL;
	if (ended)
		*ended = NULL;
	if (res == NULL)
		return err->code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return not_found(name, err);
	}
	def = (fire_def) {name, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), !PQgetisnull(res, 0, 3),
		strtoll(PQgetvalue(res, 0, 3), NULL, 10), strtoll(PQgetvalue(res, 0, 4), NULL, 10)};
	t = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	paused = PQgetvalue(res, 0, 5)[0] == 't';
	paused_at = strtoll(PQgetvalue(res, 0, 6), NULL, 10);
	forever = PQgetisnull(res, 0, 7);
	until = strtoll(PQgetvalue(res, 0, 7), NULL, 10);
	if ((rc = fire_open(&def, &clock, err)) != 0) {
		PQclear(res);
		return rc;
	}
	/* none at or before the newest fire time decided: the wake will not decide it again */
	if (t < decided_instant(res, 0, 9, clock.offset))
		t = decided_instant(res, 0, 9, clock.offset);
	if (zone)
		*zone = xstrdup(def.zone);
	*times = xcalloc((size_t) count + 1, sizeof **times);
	while (*n < count) {
		if (PQgetvalue(res, 0, 8)[0] != 't') {
			why = "is disabled: it has no fire time until it is enabled";
			break;
		}
		if (fire_next(&clock, t, &t) != 0) {
			why = "has no later fire time";
			break;
		}
		/* An occurrence in the pause is skipped when its time comes: left out. */
		if (paused && t >= paused_at && (forever || t < until)) {
			if (forever) {
				why = "is paused until resumed: it has no fire time until then";
				break;
			}
			t = until - 1;
			continue;
		}
		(*times)[(*n)++] = t;
	}
	if (ended)
		*ended = why;
	fire_close(&clock);
	PQclear(res);
	return 0;
}

/* A small cache of parsed zones for one materialisation pass. */
typedef struct zone_cache {
	char	  **names;
	tz		  **zones;
	int			n, cap;
} zone_cache;

static tz *
zone_get(zone_cache *c, const char *name, char *why, size_t len)
{
	tz *z;

	for (int i = 0; i < c->n; i++)
		if (strcmp(c->names[i], name) == 0)
			return c->zones[i];
	if ((z = tz_open(name, why, len)) == NULL)
		return NULL;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->names = xrealloc(c->names, (size_t) c->cap * sizeof *c->names);
		c->zones = xrealloc(c->zones, (size_t) c->cap * sizeof *c->zones);
	}
	c->names[c->n] = xstrdup(name);
	c->zones[c->n++] = z;
	return z;
}

static void
zone_cache_free(zone_cache *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->names[i]);
		tz_free(c->zones[i]);
	}
	free(c->names);
	free(c->zones);
}

struct schedule_checker {
	zone_cache	zones;
	char		why[512];
};

schedule_checker *
schedule_checker_new(void)
{
	return xcalloc(1, sizeof(schedule_checker));
}

const char *
schedule_checker_why(schedule_checker *c, const char *cron, const char *zone_name)
{
	cron_expr *e = cron_parse(cron, c->why, sizeof c->why);
	tz *zone = e ? zone_get(&c->zones, zone_name, c->why, sizeof c->why) : NULL;
	int64_t next;
	const char *why = c->why;

	if (e && zone) {
		why = NULL;
		if (cron_next(e, zone, (int64_t) time(NULL), &next) != 0) {
			snprintf(c->why, sizeof c->why, "cron expression never fires");
			why = c->why;
		}
	}
	cron_free(e);
	return why;
}

void
schedule_checker_free(schedule_checker *c)
{
	if (c == NULL)
		return;
	zone_cache_free(&c->zones);
	free(c);
}

/*
 * The newest occurrences in [from, upto], at most cap of them, into out
 * (ascending); returns how many. Searches back from upto in growing windows
 * so that a long outage does not mean stepping through every missed minute.
 */
static int
occurrences(const fire_clock *clock, int64_t from, int64_t upto, int cap, int64_t *out)
{
	static const int64_t windows[] = {3600, 86400, 32 * 86400, 367 * 86400, 5 * 366 * 86400};

	for (size_t w = 0; w <= sizeof windows / sizeof windows[0]; w++) {
		int64_t start = w < sizeof windows / sizeof windows[0] ? upto - windows[w] : from;
		int64_t t, count = 0;
		int64_t *ring = xcalloc((size_t) cap, sizeof *ring);

		if (start < from)
			start = from;
		t = start - 1;
		while (fire_next(clock, t, &t) == 0 && t <= upto) {
			ring[count % cap] = t;
			count++;
		}
		if (count >= cap || start == from || w == sizeof windows / sizeof windows[0]) {
			int n = count < cap ? (int) count : cap;

			for (int i = 0; i < n; i++)
				out[i] = ring[(count - n + i) % cap];
			free(ring);
			return n;
		}
		free(ring);
	}
	return 0;
}

int
schedule_fires_upto(const fire_def *times, int64_t t, int cap, int64_t *out, int *n, cq_err *err)
{
	fire_clock clock;
	int rc;

	*n = 0;
	if ((rc = fire_open(times, &clock, err)) != 0)
		return rc;
	*n = occurrences(&clock, t - 5 * 366 * 86400, t, cap, out);
	fire_close(&clock);
	return 0;
}

int
schedule_fire_at_or_before(const fire_def *times, int64_t t, int64_t *fire, cq_err *err)
{
	int n, rc;

	if ((rc = schedule_fires_upto(times, t, 1, fire, &n, err)) == 0 && n != 1) {
		char ts[RFC3339_BUFLEN];

		rfc3339_format(t, ts, sizeof ts);
		rc = cq_fail(err, EX_DATAERR, "\"%s\" has no fire time in the five years up to %s", times->cron, ts);
	}
	return rc;
}

/*
 * The due schedules, locked, in two passes over the partial index
 * schedules_due, each read in its order with a LIMIT: first those with no
 * next_run_at (due_unplanned.sql), then those due (due.sql).
 */
static const char *const due_sql[] = {
	sql_sched_due_unplanned,
	sql_sched_due,
};

static const char materialise_sql[] =
	"select schedule, job_id from cronq.materialise($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/*
 * A schedule that cannot run (a bad expression or zone stored behind the
 * CLI's back, or jobs the database refuses) is looked at again an hour
 * later, loudly, rather than disabled or retried every wake.
 */
#define SCHEDULE_RETRY_S 3600

/*
 * One due schedule's share of a batch. Who owns what: name points into the
 * due query's result; clock.zone into the zone cache; clock.expr, fires,
 * why, detail and refusal are the entry's own.
 */
typedef struct due_entry {
	const char *name;
	int64_t    *fires;			/* the occurrences decided about, ascending */
	const char **why;			/* each one's: NULL to enqueue, else its ledger decision */
	const char **detail;		/* and what the ledger says of it (NULL: nothing) */
	int			nfires;
	int			skipped;		/* occurrences skipped by a policy */
	const char *skip_why;		/* which one, for the log */
	char	   *refusal;		/* why it cannot run, or NULL */
	char		until[RFC3339_BUFLEN];		/* the end of its pause, for the ledger */
	char		spell[2 * RFC3339_BUFLEN + 8];	/* its last disabled spell, "FROM to UNTIL" */
	char		next[RFC3339_BUFLEN];		/* its next run; "" for never */
	fire_clock	clock;			/* expr NULL when it does not parse */
} due_entry;

/*
 * Whether a failed cronq.materialise() may be the fault of one schedule's
 * contents (a payload the rules refuse, an author without the privilege,
 * a job constraint, a job of its key that another transaction is still
 * writing: materialise()'s lock_timeout) rather than of the database or
 * the session: only then
 * is the batch worth trying again schedule by schedule.
 */
static bool
schedule_fault(const cq_err *err)
{
	const char *s = err->sqlstate;

	return strncmp(s, "22", 2) == 0 || strncmp(s, "23", 2) == 0 || strncmp(s, "42", 2) == 0 ||
		strncmp(s, "P0", 2) == 0 || strcmp(s, "55P03") == 0;
}

/* Why the log says an occurrence was skipped, by its ledger decision. */
static const char *
skip_text(const char *why)
{
	if (strcmp(why, "overlap") == 0)
		return "previous job still unfinished, occurrence skipped (overlap skip)";
	if (strcmp(why, "catchup") == 0)
		return "occurrences missed, skipped (catch-up)";
	if (strcmp(why, "paused") == 0)
		return "schedule paused, occurrences skipped";
	return "schedule disabled then, occurrences skipped";
}

/* Mark d's occurrence k skipped: why, its ledger decision. */
static void
entry_skip(due_entry *d, int k, const char *why, const char *detail)
{
	d->why[k] = why;
	d->detail[k] = detail;
	d->skipped++;
	d->skip_why = skip_text(why);
}

/* Whether t is in [from, until) of columns from and until of row i (NULL: none). */
static bool
in_window(const PGresult *res, int i, int from, int until, int64_t t)
{
	return !PQgetisnull(res, i, from) && !PQgetisnull(res, i, until) &&
		t >= strtoll(PQgetvalue(res, i, from), NULL, 10) && t < strtoll(PQgetvalue(res, i, until), NULL, 10);
}

/*
 * Fill d from row i of the due query: its newest occurrences since its
 * next run and after the newest one decided before (at most
 * SCHEDULE_CATCHUP_CAP), each one to enqueue or skipped
 * with its reason for the ledger, and its next run. Those of a disabled
 * spell or a pause (one still on, or one that has ended) are skipped
 * first; of the others catch-up keeps all (catchup all) or the newest
 * (latest; skip, when it is not late), and overlap skip drops those kept
 * while the last job is unfinished.
 */
static void
entry_fill(due_entry *d, const PGresult *res, int i, zone_cache *zones)
{
	const char *catchup = PQgetvalue(res, i, 3);
	bool busy = PQgetvalue(res, i, 7)[0] == 't';
	bool skip_overlap = busy && strcmp(PQgetvalue(res, i, 4), "skip") == 0;
	bool paused = PQgetvalue(res, i, 8)[0] == 't';
	bool all = strcmp(catchup, "all") == 0;
	int64_t from = strtoll(PQgetvalue(res, i, 5), NULL, 10);
	int64_t now = strtoll(PQgetvalue(res, i, 6), NULL, 10);
	int64_t spread = strtoll(PQgetvalue(res, i, 12), NULL, 10);
	int64_t after;
	char why[512];
	cron_expr *e = cron_parse(PQgetvalue(res, i, 1), why, sizeof why);
	tz *zone = e ? zone_get(zones, PQgetvalue(res, i, 2), why, sizeof why) : NULL;

	memset(d, 0, sizeof *d);
	d->name = PQgetvalue(res, i, 0);
	if (e && zone && (spread < 0 || spread > FIRE_SPREAD_MAX)) {
		snprintf(why, sizeof why, "spread out of range: at most 1 day");
		zone = NULL;
	}
	if (e == NULL || zone == NULL) {
		d->refusal = xstrdup(why);
		rfc3339_format(now + SCHEDULE_RETRY_S, d->next, sizeof d->next);
		cron_free(e);
		return;
	}
	if (!PQgetisnull(res, i, 11))
		cron_set_anchor(e, strtoll(PQgetvalue(res, i, 11), NULL, 10));
	d->clock.expr = e;
	d->clock.zone = zone;
	d->clock.offset = fire_offset(d->name, spread);
	/*
	 * Nothing a wake decided is decided again: a spread changed with the
	 * expression, or a next run moved back, would otherwise make a fire
	 * time already run due at its new instant, under a new key.
	 */
	if (from <= decided_instant(res, i, 16, d->clock.offset))
		from = decided_instant(res, i, 16, d->clock.offset) + 1;
	d->fires = xcalloc(SCHEDULE_CATCHUP_CAP, sizeof *d->fires);
	d->why = xcalloc(SCHEDULE_CATCHUP_CAP, sizeof *d->why);
	d->detail = xcalloc(SCHEDULE_CATCHUP_CAP, sizeof *d->detail);
	d->nfires = occurrences(&d->clock, from, now, SCHEDULE_CATCHUP_CAP, d->fires);
	if (!PQgetisnull(res, i, 9))
		rfc3339_format(strtoll(PQgetvalue(res, i, 9), NULL, 10), d->until, sizeof d->until);
	if (!PQgetisnull(res, i, 13) && !PQgetisnull(res, i, 14)) {
		char from_text[RFC3339_BUFLEN], until_text[RFC3339_BUFLEN];

		rfc3339_format(strtoll(PQgetvalue(res, i, 13), NULL, 10), from_text, sizeof from_text);
		rfc3339_format(strtoll(PQgetvalue(res, i, 14), NULL, 10), until_text, sizeof until_text);
		snprintf(d->spell, sizeof d->spell, "%s to %s", from_text, until_text);
	}
	for (int k = 0; k < d->nfires; k++) {
		bool newest = k == d->nfires - 1;

		/* What the ledger keeps is what was so when it was decided. */
		if (in_window(res, i, 13, 14, d->fires[k]))
			entry_skip(d, k, "disabled", d->spell);
		else if (paused || in_window(res, i, 10, 9, d->fires[k]))
			entry_skip(d, k, "paused", d->until[0] ? d->until : NULL);
		else if (!all && !newest)
			entry_skip(d, k, "catchup", catchup);
		else if (strcmp(catchup, "skip") == 0 && now - d->fires[k] > SCHEDULE_SKIP_TOLERANCE_S)
			entry_skip(d, k, "catchup", catchup);
		else if (skip_overlap)
			entry_skip(d, k, "overlap", PQgetisnull(res, i, 15) ? NULL : PQgetvalue(res, i, 15));
	}
	if (fire_next(&d->clock, from > now ? from - 1 : now, &after) == 0)
		rfc3339_format(after, d->next, sizeof d->next);
}

/*
 * d's jobs were refused (why): it enqueues nothing (its occurrences to
 * enqueue go to the ledger refused, with why), and runs next at its first
 * occurrence an hour or more after the newest one (a real occurrence; ""
 * for never).
 */
static void
entry_refuse(due_entry *d, const char *why)
{
	int64_t after;

	d->refusal = xstrdup(why);
	d->next[0] = '\0';
	if (fire_next(&d->clock, d->fires[d->nfires - 1] + SCHEDULE_RETRY_S - 1, &after) == 0)
		rfc3339_format(after, d->next, sizeof d->next);
	for (int k = 0; k < d->nfires; k++)
		if (d->why[k] == NULL) {
			d->why[k] = "refused";
			d->detail[k] = d->refusal;
		}
}

/* How many of d's occurrences are to be enqueued. */
static int
entry_to_enqueue(const due_entry *d)
{
	int n = 0;

	for (int k = 0; k < d->nfires; k++)
		n += d->why[k] == NULL;
	return n;
}

/*
 * One cronq.materialise() call for the n entries of list: their fires, and
 * each one's next run. Adds the jobs enqueued to *enqueued.
 */
static int
materialise_call(PGconn *conn, due_entry *const *list, int n, int *enqueued, cq_err *err)
{
	enum {NAMES, FIRES, SCHED, NEXT, SKIP_NAMES, SKIP_FIRES, SKIP_WHY, SKIP_DETAIL, THROUGH, NARRAYS};
	buf arrays[NARRAYS];
	const char *params[NARRAYS];
	PGresult *res;
	char ts[RFC3339_BUFLEN];

	for (int a = 0; a < NARRAYS; a++) {
		arrays[a] = (buf) BUF_INIT;
		pg_array_begin(&arrays[a]);
	}
	for (int i = 0; i < n; i++) {
		const due_entry *d = list[i];

		for (int k = 0; k < d->nfires; k++) {
			bool skip = d->why[k] != NULL;

			rfc3339_format(d->fires[k], ts, sizeof ts);
			pg_array_text(&arrays[skip ? SKIP_NAMES : NAMES], d->name);
			pg_array_text(&arrays[skip ? SKIP_FIRES : FIRES], ts);
			if (skip) {
				pg_array_text(&arrays[SKIP_WHY], d->why[k]);
				pg_array_text(&arrays[SKIP_DETAIL], d->detail[k]);
			}
		}
		pg_array_text(&arrays[SCHED], d->name);
		pg_array_text(&arrays[NEXT], d->next[0] ? d->next : NULL);
		/* the newest fire time decided, without its offset */
		if (d->nfires > 0)
			rfc3339_format(d->fires[d->nfires - 1] - d->clock.offset, ts, sizeof ts);
		pg_array_text(&arrays[THROUGH], d->nfires > 0 ? ts : NULL);
	}
	for (int a = 0; a < NARRAYS; a++) {
		pg_array_end(&arrays[a]);
		params[a] = buf_str(&arrays[a]);
	}
	res = pg_exec(conn, materialise_sql, NARRAYS, params, PG_ANY, err);
	for (int a = 0; a < NARRAYS; a++)
		buf_free(&arrays[a]);
	if (res == NULL)
		return err->code;
	*enqueued += PQntuples(res);
	for (int i = 0; i < PQntuples(res); i++)
		log_info("schedule \"%s\" enqueued job %s", PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	return 0;
}

/*
 * Materialise list[0..n) under a savepoint. Refused for what may be one
 * schedule's fault, the list is halved and each half tried again, down to
 * the schedules to blame: such a schedule enqueues nothing and joins *rest,
 * to move on to its retry time. One refused schedule among n costs about
 * 2 log2(n) calls, not n.
 */
static int
materialise_split(PGconn *conn, due_entry **list, int n, due_entry **rest, int *nrest,
				  int *enqueued, cq_err *err)
{
	bool refused;
	int rc;

	if ((rc = pg_run(conn, "savepoint materialise_part", 0, NULL, err)) != 0)
		return rc;
	rc = materialise_call(conn, list, n, enqueued, err);
	if ((refused = rc != 0)) {
		if (!schedule_fault(err) || !pg_alive(conn))
			return rc;
		if (n == 1) {
			if (strcmp(err->sqlstate, "55P03") == 0)
				cq_fail(err, EX_TEMPFAIL, "a job with one of its occurrence keys is being written by a"
						" transaction not yet committed (waited 1 s)");
			entry_refuse(list[0], err->msg);
			rest[(*nrest)++] = list[0];
		}
		cq_clear(err);
		if ((rc = pg_run(conn, "rollback to savepoint materialise_part", 0, NULL, err)) != 0)
			return rc;
	}
	if ((rc = pg_run(conn, "release savepoint materialise_part", 0, NULL, err)) != 0)
		return rc;
	if (!refused || n == 1)
		return 0;
	if ((rc = materialise_split(conn, list, n / 2, rest, nrest, enqueued, err)) != 0)
		return rc;
	return materialise_split(conn, list + n / 2, n - n / 2, rest, nrest, enqueued, err);
}

/*
 * The slow path, taken when the batch's one call failed for what may be a
 * schedule's fault: the schedules with occurrences to enqueue are split
 * until the ones to blame are found; then one call moves on the rest (the
 * refused, and those with nothing to enqueue).
 */
static int
materialise_slow(PGconn *conn, due_entry *d, int n, int *enqueued, cq_err *err)
{
	due_entry **list = xcalloc((size_t) n + 1, sizeof *list);
	due_entry **rest = xcalloc((size_t) n + 1, sizeof *rest);
	int nlist = 0, nrest = 0, rc = 0;

	for (int i = 0; i < n; i++) {
		if (entry_to_enqueue(&d[i]) > 0)
			list[nlist++] = &d[i];
		else
			rest[nrest++] = &d[i];
	}
	if (nlist > 0)
		rc = materialise_split(conn, list, nlist, rest, &nrest, enqueued, err);
	if (rc == 0 && nrest > 0)
		rc = materialise_call(conn, rest, nrest, enqueued, err);
	free(list);
	free(rest);
	return rc;
}

/*
 * One transaction's worth of the schedules select_sql finds: *due gets how
 * many (0: done).
 * The due schedules go to cronq.materialise() in one call, or with slow
 * through materialise_slow(). *fault says whether a cronq.materialise()
 * call failed for what may be a schedule's fault (schedule_fault()).
 */
static int
materialise_batch(PGconn *conn, const char *select_sql, zone_cache *zones, bool slow,
				  int *enqueued, int *skipped, int *due, cq_err *err, bool *fault)
{
	due_entry *d = NULL;
	due_entry **all = NULL;
	PGresult *res = NULL;
	int added = 0;
	char batch[16];
	int rc;

	snprintf(batch, sizeof batch, "%d", MATERIALISE_BATCH);
	*due = 0;
	*fault = false;
	if ((rc = pg_run(conn, "begin", 0, NULL, err)) != 0)
		goto out;
	if ((res = pg_exec(conn, select_sql, 1, (const char *[]) {batch}, PG_ANY, err)) == NULL) {
		rc = err->code;
		goto out;
	}
	*due = PQntuples(res);
	d = xcalloc((size_t) *due + 1, sizeof *d);
	all = xcalloc((size_t) *due + 1, sizeof *all);
	for (int i = 0; i < *due; i++) {
		entry_fill(&d[i], res, i, zones);
		all[i] = &d[i];
	}
	if (*due > 0) {
		rc = slow ? materialise_slow(conn, d, *due, &added, err)
			: materialise_call(conn, all, *due, &added, err);
		if (rc != 0) {
			*fault = schedule_fault(err);
			goto out;
		}
	}
	if ((rc = pg_run(conn, "commit", 0, NULL, err)) != 0)
		goto out;

	/* Only now, so that a batch that failed and is tried again says nothing twice. */
	*enqueued += added;
	for (int i = 0; i < *due; i++) {
		if (d[i].refusal)
			log_warning("schedule \"%s\" cannot run: %s", d[i].name, d[i].refusal);
		if (d[i].skipped > 0) {
			log_info("schedule \"%s\": %s", d[i].name, d[i].skip_why);
			*skipped += d[i].skipped;
		}
	}

out:
	if (rc != 0 && pg_alive(conn)) {
		PGresult *r = PQexec(conn, "rollback");

		PQclear(r);
	}
	for (int i = 0; d && i < *due; i++) {
		free(d[i].fires);
		free(d[i].why);
		free(d[i].detail);
		free(d[i].refusal);
		cron_free(d[i].clock.expr);
	}
	free(d);
	free(all);
	PQclear(res);
	return rc;
}

int
schedule_materialise(PGconn *conn, bool (*stop)(void), int *enqueued, int *skipped, cq_err *err)
{
	zone_cache zones = {NULL, NULL, 0, 0};
	bool fault;
	int rc = 0, due;

	*enqueued = 0;
	*skipped = 0;
	for (size_t pass = 0; rc == 0 && pass < sizeof due_sql / sizeof due_sql[0]; pass++) {
		do {
			rc = materialise_batch(conn, due_sql[pass], &zones, false, enqueued, skipped, &due,
								   err, &fault);
			if (rc != 0 && fault && pg_alive(conn)) {
				/* The fast path's one statement was refused: the same batch, in parts. */
				log_debug("materialising the due schedules in parts: %s", err->msg);
				cq_clear(err);
				rc = materialise_batch(conn, due_sql[pass], &zones, true, enqueued, skipped, &due,
									   err, &fault);
			}
		} while (rc == 0 && due == MATERIALISE_BATCH && !(stop && stop()));
		if (rc == 0 && stop && stop()) {
			log_info("a stop was asked: the schedules still due are the next wake's");
			break;
		}
	}
	zone_cache_free(&zones);
	return rc;
}
