/*
 * purge — the purge task, {"older_than": "30d", "statuses": ["succeeded",
 * "cancelled"]} or {"older_than": {"succeeded": "14d", "dead": "90d"}}:
 * the queue's batch deletion (queue/purge.h) run on a session of cronq's
 * own role, stopping when the job must.
 */
#include <inttypes.h>
#include <stdio.h>

#include "queue/purge.h"
#include "tasks/task.h"
#include "util/xalloc.h"

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
	switch (task_author_may(ctx, job, why, sizeof why)) {
		case -1:
			task_result_set(res, TASK_FAILED, "connection", "%s", why);
			return;
		case 0:
			task_result_set(res, TASK_PERMANENT, "permission_denied", "%s", why);
			return;
	}
	if ((conn = ctx->session(ctx->arg, why, sizeof why)) == NULL) {
		task_result_set(res, TASK_FAILED, "connection", "could not open a session for the job: %s", why);
		return;
	}
	if (purge_run(conn, rules, n, should_stop, (void *) ctx, NULL, &deleted, &err) != 0) {
		/* Its session ended with the runner's (a failover): given back. */
		if (task_session_lost(ctx, conn) != TASK_GO)
			return;
		task_result_set(res, TASK_FAILED, "sql_error", "%s", err.msg);
		return;
	}
	task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
	res->output = xasprintf("deleted %" PRId64 " job%s", deleted, deleted == 1 ? "" : "s");
}

const task_def task_purge = {"purge", purge_validate, purge_task_run};
