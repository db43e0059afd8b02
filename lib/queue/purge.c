/* purge — see purge.h. */
#include "queue/purge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "util/duration.h"

/*
 * One batch: the oldest finished rows of one status (through the partial
 * index jobs_finished), skipping any a concurrent purge holds, deleted with
 * their runs in one statement. The jobs of a schedule with a keep,
 * enqueued in its author's name, are left to keep_sql: their age does not
 * count (a probe of the index schedules_keep, empty when no schedule has
 * a keep, for each scheduled row only). A parent whose dependants a
 * runner left to the next wake stays until they are settled: those left
 * whole (cronq.settle_parents, sql/0025) are found through its row, those
 * noted one by one (cronq.settle_later: a row its outcome could not lock)
 * through theirs (none, mostly; read once a statement, a hashed set, not
 * once a row). Purged first, a dead parent left its noted dependant to run
 * as if it had succeeded.
 */
#define PARENT_SETTLED \
	"   and (dependants is null" \
	"        or not exists (select 1 from cronq.settle_parents n where n.job_id = cronq.jobs.id)" \
	"           and cronq.jobs.id not in (select unnest(d.depends_on) from cronq.settle_later l" \
	"                                     join cronq.jobs d on d.id = l.job_id where d.status = 'blocked'))"

static const char purge_sql[] =
	"with victims as ("
	" select id from cronq.jobs"
	" where status = $1 and finished_at < now() - $2::bigint * interval '1 millisecond'"
	"   and (schedule is null"
	"        or not exists (select 1 from cronq.schedules s where s.keep is not null"
	"                       and s.name = cronq.jobs.schedule and s.created_by = cronq.jobs.enqueued_by))"
	PARENT_SETTLED
	" order by finished_at limit $3::int for update skip locked"
	"), runs as ("
	" delete from cronq.job_runs r using victims v where r.job_id = v.id"
	")"
	" delete from cronq.jobs j using victims v where j.id = v.id";

/*
 * One batch of the keeps: for each schedule with a keep of N, its finished
 * jobs (any finished status) newest first by finished_at (then id), through
 * the partial index jobs_schedule_finished; of those after the first N, the
 * ones of status $1 are deleted with their runs, whatever their age. A
 * job not finished (queued, failed, running) is never counted or touched:
 * the lock takes a row only while it is still finished with that status.
 * Its jobs are those enqueued in its author's name, as every job it makes
 * is: a role that creates a schedule with the name of another's removed
 * one cannot purge the other's jobs by a keep (they follow the age rules).
 */
static const char keep_sql[] =
	"with beyond as ("
	" select b.id from cronq.schedules s"
	" cross join lateral ("
	"   select j.id, j.status from cronq.jobs j"
	"   where j.schedule = s.name and j.enqueued_by = s.created_by"
	"     and j.status in ('succeeded', 'dead', 'cancelled')"
	"   order by j.finished_at desc, j.id desc offset s.keep) b"
	" where s.keep is not null and b.status = $1"
	" limit $2::int"
	"), victims as ("
	" select id from cronq.jobs"
	" where id = any (array(select id from beyond)) and status = $1"
	PARENT_SETTLED
	" for update skip locked"
	"), runs as ("
	" delete from cronq.job_runs r using victims v where r.job_id = v.id"
	")"
	" delete from cronq.jobs j using victims v where j.id = v.id";

/*
 * The occurrence ledger goes as the jobs do: a batch of the rows whose
 * fire time is older than the youngest age purged and whose job is gone
 * (or that have none: skips), oldest first (index occurrences_fire).
 */
static const char purge_ledger_sql[] =
	"with victims as ("
	" select ctid from cronq.occurrences o"
	" where fire_at < now() - $1::bigint * interval '1 millisecond'"
	"   and (job_id is null or not exists (select 1 from cronq.jobs j where j.id = o.job_id))"
	" order by fire_at limit $2::int"
	")"
	" delete from cronq.occurrences o using victims v where o.ctid = v.ctid";

/*
 * The dependency links a statement's author kept jobs_link from taking
 * (sql/0032): every link this session sees, as only a committed
 * transaction's are seen by another.
 */
static const char sweep_links_sql[] = "select cronq.sweep_links()";

bool
purge_status_valid(const char *s)
{
	return strcmp(s, "succeeded") == 0 || strcmp(s, "dead") == 0 || strcmp(s, "cancelled") == 0;
}

/* A duration as the payload rules accept it (no negative, not empty). */
static bool
read_duration(const json_t *v, int64_t *ms)
{
	char why[128];

	return json_is_string(v) && duration_parse(json_string_value(v), ms, why, sizeof why) == 0;
}

int
purge_rules_from_payload(const json_t *payload, purge_rule *rules, int *n, char *err, size_t errlen)
{
	json_t *older = json_object_get(payload, "older_than");
	json_t *statuses = json_object_get(payload, "statuses");
	const char *key;
	json_t *v;
	size_t i;

	*n = 0;
	if (json_is_string(older)) {
		int64_t ms;

		if (!read_duration(older, &ms)) {
			snprintf(err, errlen, "\"older_than\" must be a duration such as \"30d\" or \"12h\"");
			return -1;
		}
		if (statuses == NULL) {
			rules[(*n)++] = (purge_rule) {"succeeded", ms};
			rules[(*n)++] = (purge_rule) {"cancelled", ms};
			return 0;
		}
		if (!json_is_array(statuses) || json_array_size(statuses) == 0)
			goto bad_statuses;
		json_array_foreach(statuses, i, v) {
			bool seen = false;

			if (!json_is_string(v) || !purge_status_valid(json_string_value(v)))
				goto bad_statuses;
			for (int k = 0; k < *n; k++)
				seen = seen || strcmp(rules[k].status, json_string_value(v)) == 0;
			if (!seen && *n < PURGE_MAX_RULES)
				rules[(*n)++] = (purge_rule) {json_string_value(v), ms};
		}
		return 0;
	}
	if (json_is_object(older)) {
		if (statuses) {
			snprintf(err, errlen, "\"statuses\" goes with a single \"older_than\" duration");
			return -1;
		}
		json_object_foreach(older, key, v) {
			int64_t ms;

			if (!purge_status_valid(key) || !read_duration(v, &ms) || *n >= PURGE_MAX_RULES)
				goto bad_map;
			rules[(*n)++] = (purge_rule) {key, ms};
		}
		if (*n == 0)
			goto bad_map;
		return 0;
	}
	snprintf(err, errlen, "\"older_than\" is required: a duration, or durations by status");
	return -1;

bad_statuses:
	snprintf(err, errlen, "\"statuses\" must be a non-empty list of succeeded, dead and cancelled");
	return -1;
bad_map:
	snprintf(err, errlen, "\"older_than\" must map succeeded, dead or cancelled to durations");
	return -1;
}

/*
 * Run sql (params: its n parameters) batch after batch until one deletes
 * fewer than PURGE_BATCH jobs; 1 when stop said to stop, 0 when done.
 */
static int
purge_batches(PGconn *conn, const char *sql, int n, const char *const *params,
			  bool (*stop) (void *arg), void *arg, void (*progress) (int64_t deleted),
			  int64_t *deleted, cq_err *err)
{
	for (;;) {
		PGresult *res;
		int64_t got;

		if (stop && stop(arg))
			return 1;
		if ((res = pg_exec(conn, sql, n, params, PG_NONE, err)) == NULL)
			return -1;
		got = strtoll(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		*deleted += got;
		if (progress)
			progress(*deleted);
		if (got < PURGE_BATCH)
			return 0;
	}
}

int
purge_run(PGconn *conn, const purge_rule *rules, int n, bool (*stop) (void *arg), void *arg,
		  void (*progress) (int64_t deleted), int64_t *deleted, cq_err *err)
{
	char ms[32], batch[16];
	int64_t youngest = INT64_MAX, ledger_rows = 0;
	int rc;

	*deleted = 0;
	snprintf(batch, sizeof batch, "%d", PURGE_BATCH);
	for (int r = 0; r < n; r++) {
		const char *params[3] = {rules[r].status, ms, batch};
		const char *keep_params[2] = {rules[r].status, batch};

		snprintf(ms, sizeof ms, "%" PRId64, rules[r].older_than_ms);
		if (rules[r].older_than_ms < youngest)
			youngest = rules[r].older_than_ms;
		rc = purge_batches(conn, purge_sql, 3, params, stop, arg, progress, deleted, err);
		if (rc == 0)
			rc = purge_batches(conn, keep_sql, 2, keep_params, stop, arg, progress, deleted, err);
		if (rc != 0)
			return rc < 0 ? err->code : 0;
	}
	if (n == 0)
		return 0;
	/* The ledger's rows are not jobs: not counted, no progress. */
	snprintf(ms, sizeof ms, "%" PRId64, youngest);
	rc = purge_batches(conn, purge_ledger_sql, 2, (const char *[]) {ms, batch}, stop, arg, NULL,
					   &ledger_rows, err);
	if (rc == 0)
		return pg_run(conn, sweep_links_sql, 0, NULL, err);
	return rc < 0 ? err->code : 0;
}
