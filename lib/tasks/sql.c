/*
 * sql — {"sql": "...", "transaction": true}: runs SQL as the role that
 * enqueued the job, so enqueueing grants no privilege its author lacked.
 *
 * In a transaction (the default) the SQL runs inside a temporary SECURITY
 * DEFINER function created by that role: PostgreSQL refuses SET ROLE,
 * RESET ROLE and set_config('role') inside such a function, so the SQL
 * cannot climb back to the runner's role. With "transaction": false (VACUUM,
 * CREATE INDEX CONCURRENTLY) it runs as one statement (extended protocol:
 * no second statement can follow a role change) on a session opened for
 * the job with that role set at startup, and closed after.
 */
#include "tasks/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "util/buf.h"
#include "util/xalloc.h"

static int
sql_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {"sql", "transaction", NULL};
	const char *key = task_unknown_key(payload, allowed);
	json_t *sql = json_object_get(payload, "sql");
	json_t *tx = json_object_get(payload, "transaction");
	const char *s;

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	if (sql == NULL) {
		snprintf(err, errlen, "\"sql\" is required");
		return -1;
	}
	s = json_string_value(sql);
	if (s)
		s += strspn(s, " \t\r\n");
	if (s == NULL || *s == '\0') {
		snprintf(err, errlen, "\"sql\" must be a non-empty string");
		return -1;
	}
	if (tx && !json_is_boolean(tx)) {
		snprintf(err, errlen, "\"transaction\" must be true or false");
		return -1;
	}
	return 0;
}

static bool
should_stop(void *arg)
{
	return task_tick(arg) != TASK_GO;
}

/* Record a failed statement: permission errors are permanent, as are the
 * other errors no retry can fix (syntax, undefined objects: class 42). */
static void
fail_with(task_result *res, const PGresult *r, PGconn *conn, const char *what)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (msg == NULL)
		msg = PQerrorMessage(conn);
	if (state && strcmp(state, "42501") == 0)
		task_result_set(res, TASK_PERMANENT, "permission_denied", "%s%s", what, msg);
	else if (state && strncmp(state, "42", 2) == 0)
		task_result_set(res, TASK_PERMANENT, state, "%s%s", what, msg);
	else
		task_result_set(res, TASK_FAILED, state ? state : "sql_error", "%s%s", what, msg);
}

static void
set_rows_output(task_result *res, const PGresult *r, bool from_function)
{
	char out[64];

	snprintf(out, sizeof out, "rows: %s",
			 from_function ? PQgetvalue(r, 0, 0) : (PQcmdTuples((PGresult *) r)[0] ? PQcmdTuples((PGresult *) r) : "0"));
	free(res->output);
	res->output = xstrdup(out);
}

static void
run_in_transaction(const task_ctx *ctx, const task_job *job, const char *sql, task_result *res)
{
	char why[512];
	PGconn *conn = ctx->session(ctx->arg, why, sizeof why);
	buf body = BUF_INIT, script = BUF_INIT;
	char *lit_sql = NULL, *lit_body = NULL, *ident = NULL;
	PGresult *r, *rows = NULL;
	int failed_at;
	bool stopped;

	if (conn == NULL) {
		task_result_set(res, TASK_FAILED, "connection", "could not open a session for the job: %s", why);
		return;
	}
	lit_sql = PQescapeLiteral(conn, sql, strlen(sql));
	ident = PQescapeIdentifier(conn, job->enqueued_by, strlen(job->enqueued_by));
	if (lit_sql == NULL || ident == NULL) {
		task_result_set(res, TASK_PERMANENT, "bad_payload", "could not quote the job's SQL: %s", PQerrorMessage(conn));
		goto out;
	}
	buf_printf(&body, "declare n bigint; begin execute %s; get diagnostics n = row_count; return n; end", lit_sql);
	lit_body = PQescapeLiteral(conn, buf_str(&body), body.len);
	buf_printf(&script,
			   "begin;\n"
			   "set local role %s;\n"
			   "create function pg_temp.cronq_job() returns bigint language plpgsql security definer as %s;\n"
			   "select pg_temp.cronq_job();\n"
			   "drop function pg_temp.cronq_job();\n"
			   "commit",
			   ident, lit_body);

	r = pg_exec_watched(conn, buf_str(&script), -1, NULL, should_stop, (void *) ctx, &failed_at, &stopped, &rows);
	if (failed_at >= 0 || r == NULL || PQresultStatus(r) == PGRES_FATAL_ERROR) {
		PGresult *rb = PQexec(conn, "rollback");

		PQclear(rb);
		if (stopped)
			;					/* the runner records why it stopped the task */
		else if (failed_at == 1)
			task_result_set(res, TASK_PERMANENT, "permission_denied",
							"cannot run as role \"%s\": %s (the runner's role must be a member of it: GRANT \"%s\" TO the runner)",
							job->enqueued_by, r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : "", job->enqueued_by);
		else
			fail_with(res, r, conn, failed_at == 2 ? "cannot prepare the job as its role: " : "");
	} else {
		/* Committed, even if a cancel request was on its way. */
		task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
		res->took_effect = true;
		if (rows && PQntuples(rows) == 1)
			set_rows_output(res, rows, true);
	}
	PQclear(r);
	PQclear(rows);
out:
	PQfreemem(lit_sql);
	PQfreemem(lit_body);
	PQfreemem(ident);
	buf_free(&body);
	buf_free(&script);
}

static void
run_alone(const task_ctx *ctx, const task_job *job, const char *sql, task_result *res)
{
	buf options = BUF_INIT;
	cq_err err = {0};
	PGconn *conn;
	PGresult *r;
	int failed_at;
	bool stopped;

	/* Role names may hold anything: escape as the "options" syntax wants. */
	buf_puts(&options, "-c role=");
	for (const char *p = job->enqueued_by; *p; p++) {
		if (*p == ' ' || *p == '\\')
			buf_putc(&options, '\\');
		buf_putc(&options, *p);
	}
	conn = pg_connect_with(ctx->conninfo, buf_str(&options), &err);
	buf_free(&options);
	if (conn == NULL) {
		if (strstr(err.msg, "permission denied to set role"))
			task_result_set(res, TASK_PERMANENT, "permission_denied",
							"cannot run as role \"%s\": the runner's role is not a member of it (GRANT \"%s\" TO the runner)",
							job->enqueued_by, job->enqueued_by);
		else
			task_result_set(res, TASK_FAILED, "connection", "%s", err.msg);
		return;
	}
	r = pg_exec_watched(conn, sql, 0, NULL, should_stop, (void *) ctx, &failed_at, &stopped, NULL);
	if (r != NULL && failed_at < 0) {
		/* Done, even if a cancel request was on its way. */
		task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
		res->took_effect = true;
		set_rows_output(res, r, false);
	} else if (stopped)
		;						/* the runner records why it stopped the task */
	else
		fail_with(res, r, conn, "");
	PQclear(r);
	pg_close(conn);
}

static void
sql_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	const char *sql = json_string_value(json_object_get(job->payload, "sql"));
	json_t *tx = json_object_get(job->payload, "transaction");

	if (tx && json_is_false(tx))
		run_alone(ctx, job, sql, res);
	else
		run_in_transaction(ctx, job, sql, res);
}

const task_def task_sql = {"sql", sql_validate, sql_run};
