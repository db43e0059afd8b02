/*
 * registry — the list of built-in tasks. Adding a task is its own file plus
 * one line here (and its rule in the database's cronq.payload_error()).
 */
#include "tasks/task.h"

#include "pg/pg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/utf8.h"
#include "util/xalloc.h"

static const task_def *const registry[] = {
	&task_noop,
	&task_sleep,
	&task_fail,
	&task_sql,
	&task_exec,
	&task_purge,
	NULL,
};

const task_def *
task_find(const char *name)
{
	for (const task_def *const *t = registry; *t; t++)
		if (strcmp((*t)->name, name) == 0)
			return *t;
	return NULL;
}

const task_def *const *
task_all(void)
{
	return registry;
}

task_stop
task_sleep_ms(const task_ctx *ctx, int64_t ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		task_stop stop = task_tick(ctx);
		int64_t elapsed, left;
		struct timespec nap;

		if (stop != TASK_GO)
			return stop;
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		left = ms - elapsed;
		if (left <= 0)
			return TASK_GO;
		/* Short naps keep shutdown and timeouts prompt. */
		if (left > 50)
			left = 50;
		nap.tv_sec = 0;
		nap.tv_nsec = left * 1000000;
		nanosleep(&nap, NULL);
	}
}

void
task_result_set(task_result *res, task_status status, const char *code, const char *fmt, ...)
{
	res->status = status;
	snprintf(res->error_code, sizeof res->error_code, "%s", code ? code : "");
	free(res->error);
	res->error = NULL;
	if (fmt) {
		va_list ap;
		char buf[2048];
		size_t len;

		va_start(ap, fmt);
		len = (size_t) vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		/* Cut short, the last character may be split: drop what is left of it. */
		if (len >= sizeof buf)
			len = utf8_cut(buf, sizeof buf - 1);
		/* And the database takes only UTF-8, whatever bytes the text held. */
		res->error = utf8_sanitize(buf, len);
	}
}

void
task_result_clear(task_result *res)
{
	free(res->error);
	free(res->output);
	free(res->err_output);
	free(res->result);
	memset(res, 0, sizeof *res);
}

/* The smallest such key, as the database's cronq.unknown_key() picks. */
const char *
task_unknown_key(const json_t *payload, const char *const *allowed)
{
	const char *key, *first = NULL;
	json_t *v;

	json_object_foreach((json_t *) payload, key, v) {
		const char *const *a = allowed;

		while (*a && strcmp(*a, key) != 0)
			a++;
		if (*a == NULL && (first == NULL || strcmp(key, first) < 0))
			first = key;
	}
	return first;
}

int
task_author_may(const task_ctx *ctx, const task_job *job, char *why, size_t len)
{
	const char *params[2] = {job->type, job->enqueued_by};
	PGresult *r;
	int may;

	/*
	 * A session the server ends between its idle check and this statement
	 * (a failover) is no fault of the job's: once more, on a new one (one
	 * that cannot be opened gives the job back: worker_unavailable).
	 */
	for (int tries = 0;; tries++) {
		PGconn *conn = ctx->session(ctx->arg, why, len);
		cq_err err = {0};

		if (conn == NULL)
			return -1;
		/* pg_exec: bounded like every statement of the runner's (pg_set_answer_limit). */
		r = pg_exec(conn, "select cronq.task_permission_error($1, $2)", 2, params, PG_ONE, &err);
		if (r != NULL)
			break;
		if (tries == 0 && !pg_alive(conn))
			continue;
		snprintf(why, len, "could not check the role of the job: %.900s", err.msg);
		return -1;
	}
	may = PQgetisnull(r, 0, 0);
	if (!may)
		snprintf(why, len, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return may;
}
