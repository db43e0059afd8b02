/*
 * sql — {"sql": "...", "transaction": true}: runs SQL as the role that
 * enqueued the job, so enqueueing grants no privilege its author lacked.
 *
 * The job's SQL runs on a session logged in as its author with the
 * runner's credentials for that role (the runner's author_session), never
 * on a session of the runner's with SET ROLE: a role set in a session is
 * not a boundary (RESET ROLE in a DO block, a deferred trigger or a WITH
 * HOLD cursor runs as the login role). Whatever a job leaves in a session
 * (temporary objects, settings, prepared statements, cursors, listeners)
 * reaches no other author's job, whose session is another, and none of the
 * runner's statements; the next job of the same author finds it reset.
 */
#include "tasks/task.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "pg/rowjson.h"
#include "util/buf.h"
#include "util/log.h"
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

/*
 * Record a failed statement: permission errors are permanent, as are the
 * other errors no retry can fix (syntax, undefined objects: class 42). A
 * session lost mid-statement is the job's failure only if the server kept
 * the runner's own session (the job's SQL ended its backend); if it ended
 * the runner's too (a restart, a failover), the runner gives the job back.
 */
static void
fail_with(const task_ctx *ctx, task_result *res, const PGresult *r, PGconn *conn)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (task_session_lost(ctx, conn) != TASK_GO)
		return;					/* the runner records why it stopped the task */
	if (msg == NULL)
		msg = PQerrorMessage(conn);
	if (state && strcmp(state, "42501") == 0)
		task_result_set(res, TASK_PERMANENT, "permission_denied", "%s", msg);
	else if (state && strncmp(state, "42", 2) == 0)
		task_result_set(res, TASK_PERMANENT, state, "%s", msg);
	else
		task_result_set(res, TASK_FAILED, state ? state : "sql_error", "%s", msg);
}

/*
 * A new session logged in as the job's author, or NULL: a login the server
 * refuses is permanent (no retry brings credentials), the role's own
 * connection limit and any other failure of this login alone are retried;
 * a server that gives no session to anyone (full, starting or stopping,
 * unreachable) is the runner's trouble, and the runner gives the job back,
 * as it says through task_tick().
 */
static PGconn *
author_session(const task_ctx *ctx, const task_job *job, task_result *res)
{
	cq_err err = {0};
	PGconn *conn = ctx->author_session(ctx->arg, job->enqueued_by, &err);

	if (conn)
		return conn;
	if (task_tick(ctx) != TASK_GO)
		;						/* the runner records why it stopped the task */
	else if (pg_login_refused(&err))
		task_result_set(res, TASK_PERMANENT, "permission_denied",
						"cannot log in as role \"%s\" to run its sql job: %s; give the runner credentials "
						"for that role (a ~/.pgpass line, a client certificate or a pg_ident.conf map)",
						job->enqueued_by, err.msg);
	else
		task_result_set(res, TASK_FAILED, "connection", "%s", err.msg);
	return NULL;
}

/*
 * "rows: N" from the command tag of the job's last statement, and the
 * result: {"tag": "DELETE 21", "row": null}, the tag as psql prints it and
 * the statement's first row (rowjson.h); a row longer than ROWJSON_MAX as
 * JSON is left out, "row_too_large": true saying so.
 */
static void
set_rows_output(task_result *res, PGresult *r, const PGresult *first)
{
	const char *n = PQcmdTuples(r);
	char *row = first ? rowjson_text(first, 0, ROWJSON_MAX) : NULL;
	buf b = BUF_INIT;

	free(res->output);
	res->output = xasprintf("rows: %s", n[0] ? n : "0");
	buf_puts(&b, "{\"tag\": ");
	rowjson_string(&b, PQcmdStatus(r));
	buf_printf(&b, ", \"row\": %s%s}", row ? row : "null",
			   first && row == NULL ? ", \"row_too_large\": true" : "");
	free(row);
	free(res->result);
	res->result = buf_steal(&b);
}

/*
 * Run the job's SQL on conn: in one explicit transaction (several
 * statements may follow each other), or alone with the extended protocol
 * (one statement, outside any transaction block: VACUUM, CREATE INDEX
 * CONCURRENTLY).
 */
static void
run_sql(const task_ctx *ctx, PGconn *conn, const char *sql, bool in_transaction, task_result *res)
{
	PGresult *r = NULL, *end = NULL, *first = NULL;
	int failed_at;
	bool stopped;

	if (in_transaction) {
		r = PQexec(conn, "begin");
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fail_with(ctx, res, r, conn);
			goto out;
		}
		PQclear(r);
	}
	r = pg_exec_watched(conn, sql, in_transaction ? -1 : 0, NULL, should_stop, (void *) ctx,
						ctx->kill_grace_ms, &failed_at, &stopped, &first);
	if (r == NULL || failed_at >= 0) {
		if (!stopped)			/* else the runner records why it stopped the task */
			fail_with(ctx, res, r, conn);
		goto out;
	}
	if (in_transaction) {
		/* Watched too: deferred triggers run the author's code at commit. */
		end = pg_exec_watched(conn, "commit", -1, NULL, should_stop, (void *) ctx, ctx->kill_grace_ms,
							  &failed_at, &stopped, NULL);
		if (end == NULL || failed_at >= 0 || strcmp(PQcmdStatus(end), "COMMIT") != 0) {
			/* A deferred constraint or trigger failed, or the job's SQL left the transaction aborted. */
			if (stopped)
				;
			else if (end == NULL || failed_at >= 0)
				fail_with(ctx, res, end, conn);
			else
				task_result_set(res, TASK_PERMANENT, "rolled_back", "the job's transaction was rolled back");
			goto out;
		}
	}
	/* Done and durable, even if a cancel request was on its way. */
	task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
	res->took_effect = true;
	set_rows_output(res, r, first);
out:
	PQclear(first);
	PQclear(r);
	PQclear(end);
}

/*
 * A statement still running after its cancels (it caught them): its
 * backend is ended from the runner's session, where the runner may (a
 * superuser, a member of pg_signal_backend or of the author's role);
 * else it goes on until it next speaks to the client, whose session the
 * runner closes. Its transaction, if it opened one, never commits.
 */
static void
end_backend(const task_ctx *ctx, PGconn *conn)
{
	char why[256], pid[16];
	const char *values[] = {pid};
	PGconn *runner = ctx->session(ctx->arg, why, sizeof why);
	PGresult *r;

	snprintf(pid, sizeof pid, "%d", PQbackendPID(conn));
	if (runner == NULL)
		return;
	r = pg_exec(runner, "select pg_catalog.pg_terminate_backend($1::pg_catalog.int4)", 1, values, PG_ANY,
				NULL);
	PQclear(r);
}

/*
 * A job's notices and warnings are logged up to NOTICES_SHOWN, and a run's
 * up to NOTICES_RUN_SHOWN, then only counted: a loop of RAISE WARNING, or
 * many jobs' few, must not flood cron mail. Each line names its job and
 * quotes what the job said (and its hint), so that no job's words read as
 * the runner's own line or fields.
 */
enum { NOTICES_SHOWN = 20, NOTICES_RUN_SHOWN = 200 };

static _Atomic long run_notices;

typedef struct job_notices {
	int64_t		id;
	long		seen;
} job_notices;

static void
on_job_notice(void *arg, const PGresult *r)
{
	job_notices *n = arg;
	const char *severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
	const char *hint = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	/* A server going down warns before it closes; the error that follows says it all. */
	bool warning = severity && strcmp(severity, "WARNING") == 0 && !(state && strncmp(state, "57", 2) == 0);
	char id[32], *said, *hinted;
	long run;

	if (++n->seen > NOTICES_SHOWN || !log_enabled(warning ? LOG_WARNING : LOG_DEBUG))
		return;
	if ((run = ++run_notices) > NOTICES_RUN_SHOWN) {
		if (run == NOTICES_RUN_SHOWN + 1)
			log_warning("jobs' notices and warnings are not shown any more in this run (%d shown)",
						NOTICES_RUN_SHOWN);
		return;
	}
	snprintf(id, sizeof id, "%" PRId64, n->id);
	said = log_quote(msg ? msg : PQresultErrorMessage(r));
	hinted = hint ? log_quote(hint) : NULL;
	log_full(warning ? LOG_WARNING : LOG_DEBUG, (log_field[]) {{"job", id, true}, {NULL, NULL, false}},
			 NULL, NULL, "job %s said: %s%s%s%s", id, said, hinted ? " (hint: " : "", hinted ? hinted : "",
			 hinted ? ")" : "");
	free(said);
	free(hinted);
}

static void
sql_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	const char *sql = json_string_value(json_object_get(job->payload, "sql"));
	json_t *tx = json_object_get(job->payload, "transaction");
	PGconn *conn = author_session(ctx, job, res);
	PQnoticeReceiver before;
	job_notices seen = {job->id, 0};

	if (conn == NULL)
		return;
	before = PQsetNoticeReceiver(conn, on_job_notice, &seen);
	run_sql(ctx, conn, sql, !(tx && json_is_false(tx)), res);
	PQsetNoticeReceiver(conn, before, NULL);
	if (PQtransactionStatus(conn) == PQTRANS_ACTIVE)
		end_backend(ctx, conn);
	if (seen.seen > NOTICES_SHOWN && run_notices <= NOTICES_RUN_SHOWN)
		log_warning("job %lld sent %ld more notices and warnings, not shown", (long long) job->id,
					seen.seen - NOTICES_SHOWN);
	/* A stopped job may have a cancel request still on its way. */
	ctx->author_release(ctx->arg, conn, task_tick(ctx) == TASK_GO);
}

const task_def task_sql = {"sql", sql_validate, sql_run};
