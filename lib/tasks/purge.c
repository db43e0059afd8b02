/*
 * purge — the purge task, {"older_than": "30d", "statuses": ["succeeded",
 * "cancelled"]} or {"older_than": {"succeeded": "14d", "dead": "90d"}}, and
 * the batch deletion it shares with `cronq purge` (see purge.h). Runs as
 * cronq's own role.
 */
#include "tasks/purge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "tasks/task.h"
#include "util/duration.h"
#include "util/xalloc.h"

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

	*deleted = 0;
	snprintf(batch, sizeof batch, "%d", PURGE_BATCH);
	for (int r = 0; r < n; r++) {
		const char *params[3] = {rules[r].status, ms, batch};

		snprintf(ms, sizeof ms, "%" PRId64, rules[r].older_than_ms);
		for (;;) {
			PGresult *res;
			int64_t got;

			if (stop && stop(arg))
				return 0;
			if ((res = pg_exec(conn, purge_sql, 3, params, PG_NONE, err, NULL)) == NULL)
				return err->code;
			got = strtoll(PQcmdTuples(res), NULL, 10);
			PQclear(res);
			*deleted += got;
			if (progress)
				progress(*deleted);
			if (got < PURGE_BATCH)
				break;
		}
	}
	return 0;
}

static int
purge_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {"older_than", "statuses", NULL};
	const char *key = task_unknown_key(payload, allowed);
	purge_rule rules[PURGE_MAX_RULES];
	int n;

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	return purge_rules_from_payload(payload, rules, &n, err, errlen);
}

static bool
should_stop(void *arg)
{
	return task_tick(arg) != TASK_GO;
}

static void
purge_task_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	purge_rule rules[PURGE_MAX_RULES];
	char why[512];
	int n;
	int64_t deleted = 0;
	cq_err err = {0};
	PGconn *conn;

	if (purge_rules_from_payload(job->payload, rules, &n, why, sizeof why) != 0) {
		task_result_set(res, TASK_PERMANENT, "bad_payload", "%s", why);
		return;
	}
	if ((conn = ctx->session(ctx->arg, why, sizeof why)) == NULL) {
		task_result_set(res, TASK_FAILED, "connection", "could not open a session for the job: %s", why);
		return;
	}
	if (purge_run(conn, rules, n, should_stop, (void *) ctx, NULL, &deleted, &err) != 0) {
		task_result_set(res, TASK_FAILED, "sql_error", "%s", err.msg);
		return;
	}
	task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
	res->output = xasprintf("deleted %" PRId64 " jobs", deleted);
}

const task_def task_purge = {"purge", purge_validate, purge_task_run};
