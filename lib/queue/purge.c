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
 * their runs in one statement.
 */
static const char purge_sql[] =
	"with victims as ("
	" select id from cronq.jobs"
	" where status = $1 and finished_at < now() - $2::bigint * interval '1 millisecond'"
	" order by finished_at limit $3::int for update skip locked"
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

/* Run sql (params: an age in ms, a batch size) in batches until one is short. */
static int
purge_batches(PGconn *conn, const char *sql, const char *const *params, int nparams,
			  bool (*stop) (void *arg), void *arg, void (*progress) (int64_t deleted),
			  int64_t *deleted, cq_err *err)
{
	for (;;) {
		PGresult *res;
		int64_t got;

		if (stop && stop(arg))
			return 0;
		if ((res = pg_exec(conn, sql, nparams, params, PG_NONE, err, NULL)) == NULL)
			return err->code;
		got = strtoll(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		if (deleted) {
			*deleted += got;
			if (progress)
				progress(*deleted);
		}
		if (got < PURGE_BATCH)
			return 0;
	}
}

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

int
purge_run(PGconn *conn, const purge_rule *rules, int n, bool (*stop) (void *arg), void *arg,
		  void (*progress) (int64_t deleted), int64_t *deleted, cq_err *err)
{
	char ms[32], batch[16];
	int64_t youngest = INT64_MAX;
	int rc;

	*deleted = 0;
	snprintf(batch, sizeof batch, "%d", PURGE_BATCH);
	for (int r = 0; r < n; r++) {
		const char *params[3] = {rules[r].status, ms, batch};

		snprintf(ms, sizeof ms, "%" PRId64, rules[r].older_than_ms);
		if (rules[r].older_than_ms < youngest)
			youngest = rules[r].older_than_ms;
		if ((rc = purge_batches(conn, purge_sql, params, 3, stop, arg, progress, deleted, err)) != 0)
			return rc;
	}
	if (n == 0)
		return 0;
	snprintf(ms, sizeof ms, "%" PRId64, youngest);
	return purge_batches(conn, purge_ledger_sql, (const char *[]) {ms, batch}, 2, stop, arg, NULL,
						 NULL, err);
}
