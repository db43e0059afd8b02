/*
 * why — see why.h. Two statements: the schedule (to compute which fire
 * time is asked about, in C as the wake does: its fire clock, anchor and
 * spread applied), then everything known of that fire time in one row;
 * the reason is put together here.
 */
#include "sched/why.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "sched/schedule.h"
#include "util/buf.h"
#include "time/rfc3339.h"
#include "time/tz.h"

static const char schedule_sql[] =
	"select s.cron, s.timezone,"
	"  case when isfinite(coalesce($2::timestamptz, now()))"
	"       then floor(extract(epoch from coalesce($2::timestamptz, now())))::bigint end,"
	"  floor(extract(epoch from s.anchor))::bigint, coalesce(floor(extract(epoch from s.spread)), 0)::bigint"
	" from cronq.schedules s where s.name = $1";

/* How many fire times before the asked one are looked at for a refusal. */
#define WHY_LOOK_BACK 64

#define UTC(x) "to_char((" x ") at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/*
 * All that is known of the fire time $2 (its key's text $3) of schedule $1:
 * the ledger's newest decision (a fire time decided again after next_run_at
 * was rewound has more than one); and, of its fire times before it ($4,
 * WHY_LOOK_BACK of them: index probes), whether the newest decided was
 * refused, with its next run still to come.
 */
static const char fire_sql[] =
	"select o.decision, o.detail, " UTC("o.decided_at") " as decided_at,"
	"  j.id as job_id, j.status, j.attempts, j.error_code, left(j.last_error, 200) as last_error,"
	"  " UTC("j.finished_at") " as finished_at, " UTC("j.started_at") " as started_at,"
	"  " UTC("j.expires_at") " as expires_at, " UTC("j.run_at") " as run_at,"
	"  coalesce(j.started_at <= o.decided_at, false) as started_then,"
	"  o.decision is null and j.id is not null as by_key,"
	"  " UTC("s.created_at") " as created_at, s.created_at > $2::timestamptz as before_created,"
	"  " UTC("s.disabled_from") " as disabled_from, " UTC("s.disabled_until") " as disabled_until,"
	"  not s.enabled and s.disabled_from <= $2::timestamptz as disabled_now,"
	"  " UTC("p.paused_at") " as paused_at, " UTC("p.until") " as until,"
	"  coalesce(p.paused_at <= $2::timestamptz and (p.until is null or p.until > $2::timestamptz), false)"
	"    as paused_then,"
	"  $2::timestamptz > now() as future,"
	"  s.next_run_at is null or s.next_run_at <= $2::timestamptz as undecided,"
	/* at or before the newest fire time a wake decided (the schedule's times changed since) */
	"  $2::timestamptz - make_interval(secs => cronq.fire_offset(s.name, s.spread)) <= s.decided_through"
	"    as decided_before, " UTC("s.decided_through") " as decided_through,"
	"  " UTC("w.before") " as wake_before, " UTC("w.after") " as wake_after,"
	/* a gap the wakes kept can tell of: none in the 2 minutes after the fire time */
	"  w.before is not null and coalesce(w.after, now()) > $2::timestamptz + interval '2 minutes' as gap,"
	/* the jobs refused: the newest decision of the fire times before it ($4), a refusal, its retry to come */
	"  rf.detail as refused_why, " UTC("rf.decided_at") " as refused_at,"
	"  " UTC("s.next_run_at") " as next_run_at"
	" from cronq.schedules s"
	" cross join (select max(started_at) filter (where started_at <= $2::timestamptz) as before,"
	"   min(started_at) filter (where started_at > $2::timestamptz) as after from cronq.wakes) w"
	" left join lateral (select * from cronq.occurrences x"
	"   where x.schedule = s.name and x.fire_at = $2::timestamptz"
	"   order by x.decided_at desc limit 1) o on true"
	" left join lateral (select x.decision, x.detail, x.decided_at from cronq.occurrences x"
	"   where x.fire_at = any($4::timestamptz[]) and x.schedule = s.name"
	"   order by x.fire_at desc, x.decided_at desc limit 1) rl on true"
	" left join lateral (select rl.detail, rl.decided_at where rl.decision = 'refused'"
	"   and s.next_run_at > $2::timestamptz) rf on true"
	" left join cronq.pauses p on p.schedule = s.name"
	/* its job: the decision's, else one with its key written since the schedule was made
	 * (a job with the key left by a former schedule of the name is not its backfill;
	 * its author may have changed since: an admin's edit) */
	" left join cronq.jobs j on j.id = coalesce(o.job_id,"
	"   (select x.id from cronq.jobs x where x.idempotency_key = 'schedule:' || s.name || ':' || $3"
	"   and x.created_at >= s.created_at))"
	" where s.name = $1";

/* Column name of row 0 of res, or NULL when it is NULL. */
static const char *
col(const PGresult *res, const char *name)
{
	int c = PQfnumber(res, name);

	return c < 0 || PQgetisnull(res, 0, c) ? NULL : PQgetvalue(res, 0, c);
}

static bool
flag(const PGresult *res, const char *name)
{
	const char *v = col(res, name);

	return v && v[0] == 't';
}

static void
say(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* The first wake after the fire time, or "now" when none came yet. */
static const char *
wake_after(const PGresult *r)
{
	return col(r, "wake_after") ? col(r, "wake_after") : "now";
}

/* What became of job (the row's job_id), in reason. */
static void
job_fate(const PGresult *r, char *out, size_t len)
{
	const char *id = col(r, "job_id"), *status = col(r, "status");
	const char *error = col(r, "last_error") ? col(r, "last_error") : col(r, "error_code");

	if (strcmp(status, "succeeded") == 0)
		say(out, len, "ran: job %s succeeded at %s (attempt %s)", id, col(r, "finished_at"), col(r, "attempts"));
	else if (strcmp(status, "running") == 0)
		say(out, len, "running: job %s, attempt %s, started at %s", id, col(r, "attempts"), col(r, "started_at"));
	else if (strcmp(status, "queued") == 0)
		say(out, len, "enqueued: job %s waits to run (due %s)", id, col(r, "run_at"));
	else if (strcmp(status, "failed") == 0)
		say(out, len, "ran and failed: job %s, attempt %s (%s); retry at %s", id, col(r, "attempts"),
			error ? error : "no error text", col(r, "run_at"));
	else if (strcmp(status, "dead") == 0)
		say(out, len, "ran and went dead: job %s after %s attempt(s) (%s)", id, col(r, "attempts"),
			error ? error : "no error text");
	else if (col(r, "error_code") && strcmp(col(r, "error_code"), "expired") == 0)
		say(out, len, "expired before it started: job %s was not started by its deadline, %s", id,
			col(r, "expires_at"));
	else
		say(out, len, "cancelled: job %s (%s)", id, error ? error : "cancelled by hand");
}

/* The reason of a ledger row's decision, in out. */
static void
decided(const PGresult *r, const char *decision, char *out, size_t len)
{
	const char *detail = col(r, "detail");

	if ((strcmp(decision, "enqueued") == 0 || strcmp(decision, "expired") == 0) && col(r, "job_id"))
		job_fate(r, out, len);
	else if (strcmp(decision, "enqueued") == 0 || strcmp(decision, "expired") == 0)
		say(out, len, "%s: its job has been purged since", decision);
	else if (strcmp(decision, "overlap") == 0 && col(r, "job_id") && detail)
		say(out, len, "skipped: job %s was still %s (overlap skip)", col(r, "job_id"),
			strcmp(detail, "running") == 0 ? "running"
			: strcmp(detail, "failed") == 0 ? "waiting to be retried" : "waiting to run");
	else if (strcmp(decision, "overlap") == 0 && col(r, "job_id"))	/* decided before schema 23 */
		say(out, len, "skipped: job %s still %s (overlap skip)", col(r, "job_id"),
			flag(r, "started_then") ? "running" : "waiting to run");
	else if (strcmp(decision, "overlap") == 0)
		say(out, len, "skipped: the previous job was still unfinished (overlap skip)");
	else if (strcmp(decision, "catchup") == 0)
		say(out, len, "skipped by catch-up (catchup %s: %s)", detail ? detail : "latest",
			detail && strcmp(detail, "skip") == 0 ? "a missed occurrence is not run late"
			: "after a gap only the newest missed occurrence runs");
	else if (strcmp(decision, "paused") == 0)
		say(out, len, "skipped: the schedule was paused%s%s", detail ? " until " : "", detail ? detail : "");
	else if (strcmp(decision, "disabled") == 0 && detail)
		say(out, len, "skipped: the schedule was disabled from %s", detail);
	else if (strcmp(decision, "disabled") == 0 && col(r, "disabled_from") && col(r, "disabled_until"))
		say(out, len, "skipped: the schedule was disabled from %s to %s", col(r, "disabled_from"),
			col(r, "disabled_until"));
	else if (strcmp(decision, "disabled") == 0)
		say(out, len, "skipped: the schedule was disabled");
	else
		say(out, len, "refused: its job could not be written: %s", detail ? detail : "no reason recorded");
	/*
	 * Decided late, after a gap in the wakes: said, so that a pause or a
	 * spell that began after the fire time is not read as the reason no
	 * runner ran it when it was due.
	 */
	if ((strcmp(decision, "catchup") == 0 || strcmp(decision, "paused") == 0 ||
		 strcmp(decision, "disabled") == 0) && flag(r, "gap")) {
		size_t used = strlen(out);

		say(out + used, len - used, "; no runner woke between %s and %s", col(r, "wake_before"), wake_after(r));
	}
	/* Skipped when decided, and enqueued since under its key (a backfill). */
	if (strcmp(decision, "enqueued") != 0 && strcmp(decision, "expired") != 0 &&
		strcmp(decision, "overlap") != 0 && col(r, "job_id")) {
		char fate[512];
		size_t used = strlen(out);

		job_fate(r, fate, sizeof fate);
		say(out + used, len - used, "; enqueued since by a backfill: %s", fate);
	}
}

/* The reason when the ledger has no row; *decision gets its name. */
static void
undecided(const PGresult *r, const char **decision, char *out, size_t len)
{
	/* not due yet, or due and not decided: unless a wake decided it at its former instant */
	bool passed = flag(r, "decided_before") && (flag(r, "future") || flag(r, "undecided"));

	if (passed && !flag(r, "disabled_now") && !flag(r, "paused_then")) {
		*decision = "decided_before";
		say(out, len, "will not run: the wakes have decided or passed over every fire time up to %s",
			col(r, "decided_through"));
	} else if (flag(r, "future")) {
		*decision = "not_due";
		say(out, len, "not due yet");
	} else if (flag(r, "by_key")) {
		char fate[512];

		*decision = "backfill";
		job_fate(r, fate, sizeof fate);
		say(out, len, "%s (enqueued by a backfill, not by a wake)", fate);
	} else if (flag(r, "before_created")) {
		*decision = "not_created";
		say(out, len, "the schedule did not exist yet (created %s)", col(r, "created_at"));
	} else if (flag(r, "disabled_now")) {
		*decision = "disabled";
		say(out, len, "not run: disabled since %s", col(r, "disabled_from"));
	} else if (flag(r, "paused_then")) {
		*decision = "paused";
		say(out, len, "not run: paused since %s %s%s", col(r, "paused_at"),
			col(r, "until") ? "until " : "until resumed", col(r, "until") ? col(r, "until") : "");
	} else if (flag(r, "undecided") && col(r, "wake_after") == NULL) {
		*decision = "no_wake";
		if (col(r, "wake_before"))
			say(out, len, "not run: no runner woke between %s and now", col(r, "wake_before"));
		else
			say(out, len, "not run: no runner has woken since it was due");
	} else if (flag(r, "undecided")) {
		*decision = "waiting";
		say(out, len, "due, not decided yet: the next wake decides it (catch-up and overlap apply)");
	} else if (col(r, "refused_why")) {
		*decision = "refused";
		say(out, len, "not run: the schedule's jobs were refused at %s (%s); the wakes try again at %s",
			col(r, "refused_at"), col(r, "refused_why"), col(r, "next_run_at"));
	} else if (flag(r, "gap")) {
		*decision = "no_wake";
		say(out, len, "not run: no runner woke between %s and %s; catch-up passed it over",
			col(r, "wake_before"), wake_after(r));
	} else {
		*decision = "unrecorded";
		say(out, len, "no record of it: the ledger keeps decisions as long as purge keeps jobs"
			" (or it was decided before cronq recorded decisions)");
	}
}

json_t *
schedule_why(PGconn *conn, const char *name, const char *at, cq_err *err)
{
	const char *params[4] = {name, at, NULL, NULL};
	int64_t before[WHY_LOOK_BACK];
	int nbefore;
	buf earlier = BUF_INIT;
	char fire_text[RFC3339_BUFLEN], local[64], reason[1024], why[512];
	const char *decision, *zone_name;
	PGresult *res, *r;
	int64_t t, fire;
	struct tz_tm tm;
	fire_def times;
	tz *zone;
	json_t *out;

	if ((res = pg_exec(conn, schedule_sql, 2, params, PG_MAYBE_ONE, err)) == NULL) {
		if (at && pg_bad_time(err->sqlstate))
			cq_prefix(err, "invalid value \"%s\" for --at: ", at);
		return NULL;
	}
	if (PQntuples(res) == 0) {
		PQclear(res);
		cq_fail(err, EX_DATAERR, "schedule \"%s\" does not exist", name);
		return NULL;
	}
	if (PQgetisnull(res, 0, 2)) {
		PQclear(res);
		cq_fail(err, EX_DATAERR, "invalid --at \"%s\": not a finite time", at);
		return NULL;
	}
	t = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	times = (fire_def) {name, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), !PQgetisnull(res, 0, 3),
		strtoll(PQgetvalue(res, 0, 3), NULL, 10), strtoll(PQgetvalue(res, 0, 4), NULL, 10)};
	/* times points into res: the fire time, and those before it, now. */
	if (schedule_fire_at_or_before(&times, t, &fire, err) != 0 ||
		schedule_fires_upto(&times, fire - 1, WHY_LOOK_BACK, before, &nbefore, err) != 0) {
		PQclear(res);
		return NULL;
	}
	zone_name = PQgetvalue(res, 0, 1);
	if ((zone = tz_open(zone_name, why, sizeof why)) == NULL) {
		PQclear(res);
		cq_fail(err, EX_DATAERR, "%s", why);
		return NULL;
	}
	tz_local(zone, fire, &tm);
	tz_free(zone);
	/* The seconds too when there are some (a spread instant). */
	snprintf(local, sizeof local, "%04d-%02d-%02d %02d:%02d%s%.*d %s", tm.year, tm.mon, tm.mday, tm.hour, tm.min,
			 tm.sec ? ":" : "", tm.sec ? 2 : 0, tm.sec, zone_name);
	rfc3339_format(fire, fire_text, sizeof fire_text);
	out = json_pack("{s:s, s:s, s:s, s:s}", "schedule", name, "fire_at", fire_text, "zone", zone_name,
					"fire_local", local);
	PQclear(res);

	buf_puts(&earlier, "{");
	for (int k = 0; k < nbefore; k++) {
		char ts[RFC3339_BUFLEN];

		rfc3339_format(before[k], ts, sizeof ts);
		buf_printf(&earlier, "%s%s", k ? "," : "", ts);
	}
	buf_puts(&earlier, "}");
	params[1] = fire_text;
	params[2] = fire_text;
	params[3] = buf_str(&earlier);
	r = pg_exec(conn, fire_sql, 4, params, PG_MAYBE_ONE, err);
	buf_free(&earlier);
	if (r == NULL) {
		json_decref(out);
		return NULL;
	}
	if (PQntuples(r) == 0) {	/* removed meanwhile */
		PQclear(r);
		json_decref(out);
		cq_fail(err, EX_DATAERR, "schedule \"%s\" does not exist", name);
		return NULL;
	}
	if ((decision = col(r, "decision")) != NULL) {
		decided(r, decision, reason, sizeof reason);
		json_object_set_new(out, "decided_at", json_string(col(r, "decided_at")));
	} else
		undecided(r, &decision, reason, sizeof reason);
	json_object_set_new(out, "decision", json_string(decision));
	json_object_set_new(out, "reason", json_string(reason));
	if (col(r, "job_id")) {
		json_object_set_new(out, "job_id", json_integer(strtoll(col(r, "job_id"), NULL, 10)));
		json_object_set_new(out, "job_status", col(r, "status") ? json_string(col(r, "status")) : json_null());
	}
	PQclear(r);
	return out;
}

void
schedule_why_text(const json_t *why, char *out, size_t len)
{
	snprintf(out, len, "%s %s (%s): %s", json_string_value(json_object_get(why, "schedule")),
			 json_string_value(json_object_get(why, "fire_at")),
			 json_string_value(json_object_get(why, "fire_local")),
			 json_string_value(json_object_get(why, "reason")));
}
