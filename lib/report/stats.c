/*
 * stats — see stats.h. The status document is assembled by PostgreSQL
 * (json_build_object, json_agg) so that this file holds the queries and
 * nothing of their presentation.
 */
#include "report/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "util/json.h"

/* A timestamptz as RFC 3339 UTC text, or null. */
#define ISO(x) "to_char((" x ") at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
/* Whole seconds from a past timestamptz to now(), never negative. */
#define AGE_S(x) "greatest(0, floor(extract(epoch from now() - (" x "))))::bigint"
/* The same in milliseconds. */
#define AGE_MS(x) "greatest(0, floor(extract(epoch from now() - (" x ")) * 1000))::bigint"

#define DUE "status in ('queued', 'failed') and run_at <= now()"
#define EXPIRED "status = 'running' and locked_until < now()"
/* Attempts that count as failures in the 24-hour history. */
#define FAILED_OUTCOMES "('failed', 'timeout', 'lease_expired')"

#define STATUS_COUNTS(t) \
	"'queued', " t ".queued, 'running', " t ".running, 'succeeded', " t ".succeeded," \
	" 'failed', " t ".failed, 'dead', " t ".dead, 'cancelled', " t ".cancelled, 'total', " t ".total"

/*
 * qt: counts per (queue, type); q: the same per queue; hr: attempts finished
 * in each of the last $2 hours (hour 0 = the last 60 minutes) per queue;
 * hist: those as two arrays per queue, oldest hour first. $1 is the overdue
 * grace in seconds.
 */
static const char status_sql[] =
	"with qt as ("
	"  select queue, type,"
	"    count(*) filter (where status = 'queued') as queued,"
	"    count(*) filter (where status = 'running') as running,"
	"    count(*) filter (where status = 'succeeded') as succeeded,"
	"    count(*) filter (where status = 'failed') as failed,"
	"    count(*) filter (where status = 'dead') as dead,"
	"    count(*) filter (where status = 'cancelled') as cancelled,"
	"    count(*) as total,"
	"    count(*) filter (where " DUE ") as due,"
	"    min(run_at) filter (where " DUE ") as oldest_due,"
	"    count(*) filter (where " EXPIRED ") as expired"
	"  from cronq.jobs group by queue, type),"
	" q as ("
	"  select queue, sum(queued)::bigint as queued, sum(running)::bigint as running,"
	"    sum(succeeded)::bigint as succeeded, sum(failed)::bigint as failed,"
	"    sum(dead)::bigint as dead, sum(cancelled)::bigint as cancelled,"
	"    sum(total)::bigint as total, sum(due)::bigint as due,"
	"    min(oldest_due) as oldest_due, sum(expired)::bigint as expired"
	"  from qt group by queue),"
	" hr as ("
	"  select j.queue,"
	"    least($2::int - 1, greatest(0, floor(extract(epoch from now() - r.finished_at) / 3600)))::int as ago,"
	"    count(*) filter (where r.outcome = 'succeeded') as ok,"
	"    count(*) filter (where r.outcome in " FAILED_OUTCOMES ") as bad"
	"  from cronq.job_runs r join cronq.jobs j on j.id = r.job_id"
	"  where r.finished_at > now() - make_interval(hours => $2::int)"
	"  group by 1, 2),"
	" hist as ("
	"  select q.queue,"
	"    json_agg(coalesce(hr.ok, 0) order by g.ago desc) as ok,"
	"    json_agg(coalesce(hr.bad, 0) order by g.ago desc) as bad"
	"  from q cross join generate_series(0, $2::int - 1) g(ago)"
	"  left join hr on hr.queue = q.queue and hr.ago = g.ago"
	"  group by q.queue),"
	" s as ("
	"  select s.name, s.cron, s.timezone, s.type, s.queue, s.enabled,"
	"    " ISO("s.next_run_at") " as next_run_at,"
	"    case when s.enabled and s.next_run_at < now() then " AGE_S("s.next_run_at") " else 0 end"
	"      as overdue_seconds,"
	"    coalesce(s.enabled and s.next_run_at < now() - make_interval(secs => $1::int), false)"
	"      as overdue,"
	"    " ISO("s.last_enqueued_at") " as last_enqueued_at,"
	"    s.last_job_id, j.status as last_job_status,"
	"    " ISO("j.finished_at") " as last_job_finished_at"
	"  from cronq.schedules s left join cronq.jobs j on j.id = s.last_job_id)"
	" select json_build_object("
	"  'generated_at', " ISO("now()") ","
	"  'jobs', (select json_build_object(" STATUS_COUNTS("t") ") from ("
	"    select coalesce(sum(queued), 0)::bigint as queued, coalesce(sum(running), 0)::bigint as running,"
	"      coalesce(sum(succeeded), 0)::bigint as succeeded, coalesce(sum(failed), 0)::bigint as failed,"
	"      coalesce(sum(dead), 0)::bigint as dead, coalesce(sum(cancelled), 0)::bigint as cancelled,"
	"      coalesce(sum(total), 0)::bigint as total from q) t),"
	"  'due', (select coalesce(sum(due), 0)::bigint from q),"
	"  'lag_seconds', (select coalesce(" AGE_S("min(oldest_due)") ", 0) from q),"
	"  'oldest_due_at', (select " ISO("min(oldest_due)") " from q),"
	"  'queues', coalesce((select json_agg(json_build_object('queue', q.queue, " STATUS_COUNTS("q") ","
	"      'due', q.due, 'lag_seconds', coalesce(" AGE_S("q.oldest_due") ", 0),"
	"      'oldest_due_at', " ISO("q.oldest_due") ", 'expired_leases', q.expired,"
	"      'runs_24h', json_build_object('succeeded', h.ok, 'failed', h.bad))"
	"    order by q.queue) from q join hist h on h.queue = q.queue), '[]'),"
	"  'types', coalesce((select json_agg(json_build_object('queue', t.queue, 'type', t.type, "
	STATUS_COUNTS("t") ") order by t.queue, t.type) from qt t), '[]'),"
	"  'expired_leases', json_build_object("
	"    'count', (select coalesce(sum(expired), 0)::bigint from q),"
	"    'jobs', coalesce((select json_agg(x) from ("
	"      select id, queue, type, attempts, max_attempts, locked_by,"
	"        " ISO("locked_until") " as locked_until, " AGE_S("locked_until") " as expired_seconds"
	"      from cronq.jobs where " EXPIRED " order by locked_until, id limit 20) x), '[]')),"
	"  'dead', json_build_object("
	"    'count', (select coalesce(sum(dead), 0)::bigint from q),"
	"    'jobs', coalesce((select json_agg(x) from ("
	"      select id, queue, type, attempts, error_code, last_error,"
	"        " ISO("finished_at") " as finished_at"
	"      from cronq.jobs where status = 'dead'"
	"      order by finished_at desc nulls last, id desc limit 10) x), '[]')),"
	"  'schedules', coalesce((select json_agg(s order by s.name) from s), '[]'),"
	"  'overdue_schedules', (select count(*) from s where s.overdue),"
	"  'last_wake', (select json_build_object('id', w.id, 'worker', w.worker, 'host', w.host,"
	"      'pid', w.pid, 'started_at', " ISO("w.started_at") ","
	"      'finished_at', " ISO("w.finished_at") ", 'seconds_ago', " AGE_S("w.started_at") ","
	"      'jobs_run', w.jobs_run, 'jobs_failed', w.jobs_failed, 'exit_status', w.exit_status)"
	"    from cronq.wakes w order by w.id desc limit 1))";

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
	if ((res = pg_exec(conn, status_sql, 2, params, PG_ONE, err, NULL)) == NULL)
		return NULL;
	doc = json_loads(PQgetvalue(res, 0, 0), 0, &jerr);
	PQclear(res);
	if (doc == NULL)
		cq_fail(err, EX_SOFTWARE, "could not read the status document: %s", jerr.text);
	else
		mark_unplannable(doc);
	return doc;
}

/*
 * One row; each subquery is shaped for its index: the due and failed
 * counts and the lag read jobs_due, the stuck count jobs_leases, the most
 * overdue schedule schedules_due, the newest wake the primary key.
 */
static const char health_sql[] =
	"select"
	" (select coalesce(" AGE_MS("min(run_at)") ", 0) from cronq.jobs where " DUE "),"
	" (select count(*) from cronq.jobs where " DUE "),"
	" (select count(*) from cronq.jobs where status = 'dead'),"
	" (select count(*) from cronq.jobs where status = 'failed'),"
	" (select count(*) from cronq.jobs where " EXPIRED "),"
	" (select " AGE_MS("started_at") " from cronq.wakes order by id desc limit 1),"
	" o.name, o.ms"
	" from (select 1) one left join lateral ("
	"   select name, " AGE_MS("next_run_at") " as ms from cronq.schedules"
	"   where enabled and next_run_at < now() order by next_run_at limit 1) o on true";

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
	if ((res = pg_exec(conn, health_sql, 0, NULL, PG_ONE, err, NULL)) == NULL)
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
	PQclear(res);
	return read_unplannable(conn, h, err);
}
