/*
 * enqueue — see enqueue.h. The bulk path streams COPY rows as it reads, so
 * memory stays flat for millions of lines; the payload goes to the server
 * as the exact text the user wrote (jansson re-printing would round reals).
 */
#include "queue/enqueue.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "queue/compose.h"
#include "queue/flow.h"
#include "queue/payload.h"
#include "time/rfc3339.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* A line longer than this cannot hold a valid job (the payload limit is 1 MiB). */
#define JSONL_MAX_LINE (2 * 1024 * 1024)
/*
 * COPY data is sent in chunks of about this size: small enough that the
 * server always has rows to work on while the next lines are parsed (with
 * 256 KiB chunks the send blocked on a full socket and the server waited
 * for the parser in turn: 100,000 jobs took 1.09x psql's \copy, 0.99x now).
 */
#define COPY_CHUNK (32 * 1024)

/* A deadline given as a duration counts from the job's run time. */
static const char enqueue_sql[] =
	"select e.id, e.created, e.note from"
	" (select coalesce($3::timestamptz, now() + coalesce($4::bigint, 0) * interval '1 millisecond')"
	"   as run_at) r,"
	" cronq.enqueue_job($1, $2::jsonb, r.run_at,"
	"   $5, $6::int, $7::int, $8::bigint * interval '1 millisecond', $9, $10,"
	"   coalesce($11::timestamptz, r.run_at + $12::bigint * interval '1 millisecond'),"
	"   $13, $14::bool, $15, $16::jsonb, $17::bigint[]) e";

#define COPY_COLUMNS "type, payload, run_at, queue, priority, max_attempts, timeout, " \
	"idempotency_key, limit_key, expires_at, unique_key, history, hooks, depends_on"

static const char copy_sql[] = "copy cronq.jobs (" COPY_COLUMNS ") from stdin";

/*
 * PostgreSQL refuses COPY FROM into a table under row-level security, as
 * cronq.jobs is for every role but its owner: such a role copies into a
 * temporary table of the same columns, then inserts from it in line order,
 * in one transaction (the temporary table goes at its end).
 */
static const char stage_sql[] =
	"begin;"
	" create temporary table cronq_jsonl on commit drop as"
	"  select " COPY_COLUMNS " from cronq.jobs with no data;"
	" alter table pg_temp.cronq_jsonl add column n bigint generated always as identity";
static const char stage_copy_sql[] = "copy pg_temp.cronq_jsonl (" COPY_COLUMNS ") from stdin";
static const char stage_insert_sql[] =
	"insert into cronq.jobs (" COPY_COLUMNS ")"
	" select " COPY_COLUMNS " from pg_temp.cronq_jsonl order by n";

bool
enqueue_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return true;
		if (utf8_format_mark((const char *) p))
			return true;
	}
	return false;
}

bool
enqueue_history_valid(const char *s)
{
	return strcmp(s, "all") == 0 || strcmp(s, "errors") == 0;
}

/* A request's hooks text: 0, or EX_DATAERR with the reason. */
static int
hooks_check(const char *text, enqueue_rules_fn rules, cq_err *err)
{
	char why[1024];
	json_error_t jerr;
	json_t *hooks = json_loads(text, 0, &jerr);
	int rc = 0;

	if (hooks == NULL)
		return cq_fail(err, EX_DATAERR, "hooks: malformed JSON at column %d: %s", jerr.column, jerr.text);
	if (compose_hooks_check(hooks, rules, why, sizeof why) != 0)
		rc = cq_fail(err, EX_DATAERR, "%s", why);
	json_decref(hooks);
	return rc;
}

int
enqueue_check(const enqueue_req *req, enqueue_rules_fn rules, cq_err *err)
{
	char why[1024];
	json_t *payload = NULL;
	int64_t t;
	int rc = 0;

	if (req->payload) {
		payload = payload_parse(req->payload, strlen(req->payload), why, sizeof why);
		if (payload == NULL)
			return cq_fail(err, EX_DATAERR, "%s", why);
	}
	if (rules(req->type, payload, why, sizeof why) != 0)
		rc = cq_fail(err, EX_DATAERR, "%s", why);
	else if (req->run_at && rfc3339_parse(req->run_at, &t, why, sizeof why) == RFC3339_IMPOSSIBLE)
		rc = cq_fail(err, EX_DATAERR, "invalid run time: %s", why);
	else if (req->expires_at && rfc3339_parse(req->expires_at, &t, why, sizeof why) == RFC3339_IMPOSSIBLE)
		rc = cq_fail(err, EX_DATAERR, "invalid start deadline: %s", why);
	else if (req->opts.queue && (req->opts.queue[0] == '\0' || strlen(req->opts.queue) > ENQUEUE_MAX_NAME))
		rc = cq_fail(err, EX_DATAERR, "queue name must be 1 to %d bytes", ENQUEUE_MAX_NAME);
	else if (req->opts.queue && enqueue_has_control(req->opts.queue))
		rc = cq_fail(err, EX_DATAERR, "queue name must be printable text without control characters");
	else if (req->key && (req->key[0] == '\0' || strlen(req->key) > ENQUEUE_MAX_KEY))
		rc = cq_fail(err, EX_DATAERR, "key must be 1 to %d bytes", ENQUEUE_MAX_KEY);
	else if (req->limit_key && flow_limit_key_invalid(req->limit_key, why, sizeof why))
		rc = cq_fail(err, EX_DATAERR, "limit key: %s", why);
	else if (req->unique_key && (req->unique_key[0] == '\0' || strlen(req->unique_key) > ENQUEUE_MAX_KEY))
		rc = cq_fail(err, EX_DATAERR, "unique key must be 1 to %d bytes", ENQUEUE_MAX_KEY);
	else if (req->unique_key && enqueue_has_control(req->unique_key))
		rc = cq_fail(err, EX_DATAERR, "unique key may not contain control characters");
	else if (req->unique_key && req->depends_on && strcmp(req->depends_on, "{}") != 0)
		rc = cq_fail(err, EX_DATAERR, "a job with a unique key cannot depend on other jobs");
	else if (req->replace && req->unique_key == NULL)
		rc = cq_fail(err, EX_DATAERR, "replace needs a unique key");
	else if (req->expires_ms < 0)
		rc = cq_fail(err, EX_DATAERR, "expires must be positive");
	else if (req->history && !enqueue_history_valid(req->history))
		rc = cq_fail(err, EX_DATAERR, "invalid history policy \"%s\": must be all or errors", req->history);
	else if (req->opts.has_priority && (req->opts.priority < -ENQUEUE_MAX_PRIORITY || req->opts.priority > ENQUEUE_MAX_PRIORITY))
		rc = cq_fail(err, EX_DATAERR, "priority must be from %d to %d", -ENQUEUE_MAX_PRIORITY, ENQUEUE_MAX_PRIORITY);
	else if (req->opts.max_attempts < 0 || req->opts.max_attempts > ENQUEUE_MAX_ATTEMPTS)
		rc = cq_fail(err, EX_DATAERR, "max_attempts must be from 1 to %d", ENQUEUE_MAX_ATTEMPTS);
	else if (req->opts.timeout_ms < 0)
		rc = cq_fail(err, EX_DATAERR, "timeout must be positive");
	else if (req->hooks)
		rc = hooks_check(req->hooks, rules, err);
	json_decref(payload);
	return rc;
}

int
enqueue_one(PGconn *conn, const enqueue_req *req, enqueue_rules_fn rules, int64_t *id,
			enqueue_note *note, char status[16], cq_err *err)
{
	char in[32], prio[16], attempts[16], timeout[32], expires[32];
	const char *params[17];
	const char *how;
	PGresult *res;
	int rc;

	if ((rc = enqueue_check(req, rules, err)) != 0)
		return rc;
	snprintf(in, sizeof in, "%" PRId64, req->in_ms);
	snprintf(prio, sizeof prio, "%d", req->opts.priority);
	snprintf(attempts, sizeof attempts, "%d", req->opts.max_attempts);
	snprintf(timeout, sizeof timeout, "%" PRId64, req->opts.timeout_ms);
	params[0] = req->type;
	params[1] = req->payload ? req->payload : "{}";
	params[2] = req->run_at;
	params[3] = req->in_ms >= 0 ? in : NULL;
	params[4] = req->opts.queue;
	params[5] = req->opts.has_priority ? prio : NULL;
	params[6] = req->opts.max_attempts > 0 ? attempts : NULL;
	params[7] = req->opts.timeout_ms > 0 ? timeout : NULL;
	params[8] = req->key;
	params[9] = req->limit_key;
	snprintf(expires, sizeof expires, "%" PRId64, req->expires_ms);
	params[10] = req->expires_at;
	params[11] = req->expires_ms > 0 ? expires : NULL;
	params[12] = req->unique_key;
	params[13] = req->replace ? "true" : "false";
	params[14] = req->history;
	params[15] = req->hooks;
	params[16] = req->depends_on;
	res = pg_exec(conn, enqueue_sql, 17, params, PG_ONE, err);
	if (res == NULL)
		return err->code;
	*id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	how = PQgetvalue(res, 0, 2);
	snprintf(status, 16, "%s", how);
	if (PQgetvalue(res, 0, 1)[0] == 't')
		*note = ENQUEUE_CREATED;
	else if (strcmp(how, "key") == 0)
		*note = ENQUEUE_KEY_EXISTS;
	else if (strcmp(how, "replaced") == 0)
		*note = ENQUEUE_REPLACED;
	else if (strcmp(how, "running") == 0)
		*note = ENQUEUE_UNIQUE_RUNNING;
	else
		*note = ENQUEUE_UNIQUE_WAITING;
	PQclear(res);
	return 0;
}

/*
 * Find the raw text of the top-level member named key in a JSON object
 * text that jansson has already accepted. Sets *start and *len and returns
 * true when found (the last occurrence wins, as in jsonb).
 */
static bool
member_span(const char *s, size_t n, const char *key, size_t *start, size_t *len)
{
	size_t i = 0, klen = strlen(key);
	bool found = false;

	while (i < n && s[i] != '{')
		i++;
	i++;
	for (;;) {
		size_t kstart, kend, vstart;
		int depth = 0;

		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == ','))
			i++;
		if (i >= n || s[i] != '"')
			return found;
		kstart = ++i;
		while (i < n && s[i] != '"')
			i += s[i] == '\\' ? 2 : 1;
		kend = i++;
		while (i < n && s[i] != ':')
			i++;
		i++;
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
			i++;
		vstart = i;
		for (; i < n; i++) {
			char c = s[i];

			if (c == '"') {
				for (i++; i < n && s[i] != '"'; i++)
					if (s[i] == '\\')
						i++;
			} else if (c == '{' || c == '[')
				depth++;
			else if (c == '}' || c == ']') {
				if (depth == 0)
					break;
				depth--;
			} else if (c == ',' && depth == 0)
				break;
		}
		if (kend - kstart == klen && memcmp(s + kstart, key, klen) == 0) {
			size_t end = i;

			while (end > vstart && (s[end - 1] == ' ' || s[end - 1] == '\t' ||
									s[end - 1] == '\r' || s[end - 1] == '\n'))
				end--;
			*start = vstart;
			*len = end - vstart;
			found = true;
		}
	}
}

static const char *const jsonl_fields[] = {
	"type", "payload", "run_at", "queue", "priority", "max_attempts", "key", "timeout", "limit_key",
	"expires_at", "unique_key", "history", "on_success", "on_failure", "on_dead", "on_recover",
	"depends_on", NULL,
};

void
enqueue_owned_free(enqueue_owned *own)
{
	free(own->payload);
	free(own->hooks);
	free(own->depends_on);
	memset(own, 0, sizeof *own);
}

/*
 * A line's on_success, on_failure, on_dead and on_recover as one hooks
 * object, and its depends_on (an array of ids) as an array literal, into
 * own. 0, or EX_DATAERR.
 */
static int
parse_composition(json_t *obj, enqueue_owned *own, enqueue_req *req, cq_err *err)
{
	json_t *hooks = json_object(), *v;
	size_t i;

	for (const char *const *e = compose_events; *e; e++)
		if ((v = json_object_get(obj, *e)) != NULL && !json_is_null(v))
			json_object_set(hooks, *e, v);
	if (json_object_size(hooks) > 0)
		req->hooks = own->hooks = json_dumps(hooks, JSON_COMPACT);
	json_decref(hooks);
	if ((v = json_object_get(obj, "depends_on")) != NULL && !json_is_null(v)) {
		buf b = BUF_INIT;
		json_t *id;

		if (!json_is_array(v))
			return cq_fail(err, EX_DATAERR, "\"depends_on\" must be an array of job ids");
		buf_putc(&b, '{');
		json_array_foreach(v, i, id) {
			if (!json_is_integer(id) || json_integer_value(id) <= 0) {
				buf_free(&b);
				return cq_fail(err, EX_DATAERR, "\"depends_on\" must be an array of job ids");
			}
			buf_printf(&b, "%s%" JSON_INTEGER_FORMAT, i ? "," : "", json_integer_value(id));
		}
		buf_putc(&b, '}');
		req->depends_on = own->depends_on = buf_steal(&b);
	}
	return 0;
}

int
enqueue_parse_line(const char *line, size_t len, enqueue_rules_fn rules, json_t **obj,
				   enqueue_owned *own, enqueue_req *req, cq_err *err)
{
	json_error_t jerr;
	const char *key;
	json_t *v;
	size_t start, plen;

	memset(req, 0, sizeof *req);
	req->in_ms = -1;
	memset(own, 0, sizeof *own);
	*obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (*obj == NULL)
		return cq_fail(err, EX_DATAERR, "malformed JSON at column %d: %s", jerr.column, jerr.text);
	json_object_foreach(*obj, key, v) {
		bool known = false;

		for (const char *const *f = jsonl_fields; *f; f++)
			if (strcmp(*f, key) == 0)
				known = true;
		if (!known)
			return cq_fail(err, EX_DATAERR, "unrecognized field \"%s\"", key);
	}
#define STRING_FIELD(name, dest) \
	if ((v = json_object_get(*obj, name)) != NULL && !json_is_null(v)) { \
		if (!json_is_string(v)) \
			return cq_fail(err, EX_DATAERR, "\"%s\" must be a string", name); \
		dest = json_string_value(v); \
	}
	STRING_FIELD("type", req->type);
	STRING_FIELD("run_at", req->run_at);
	STRING_FIELD("queue", req->opts.queue);
	STRING_FIELD("key", req->key);
	STRING_FIELD("limit_key", req->limit_key);
	STRING_FIELD("expires_at", req->expires_at);
	STRING_FIELD("unique_key", req->unique_key);
	STRING_FIELD("history", req->history);
#undef STRING_FIELD
	if (req->type == NULL)
		return cq_fail(err, EX_DATAERR, "\"type\" is required");
	if ((v = json_object_get(*obj, "priority")) != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < -ENQUEUE_MAX_PRIORITY ||
			json_integer_value(v) > ENQUEUE_MAX_PRIORITY)
			return cq_fail(err, EX_DATAERR, "\"priority\" must be an integer from %d to %d",
						   -ENQUEUE_MAX_PRIORITY, ENQUEUE_MAX_PRIORITY);
		req->opts.has_priority = true;
		req->opts.priority = (int) json_integer_value(v);
	}
	if ((v = json_object_get(*obj, "max_attempts")) != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			json_integer_value(v) > ENQUEUE_MAX_ATTEMPTS)
			return cq_fail(err, EX_DATAERR, "\"max_attempts\" must be an integer from 1 to %d",
						   ENQUEUE_MAX_ATTEMPTS);
		req->opts.max_attempts = (int) json_integer_value(v);
	}
	if ((v = json_object_get(*obj, "timeout")) != NULL && !json_is_null(v)) {
		char why[256];

		/* A number of seconds, fractions too, as "3.5s" is for --timeout. */
		if (json_is_integer(v) && json_integer_value(v) > 0 &&
			json_integer_value(v) <= DURATION_MAX_MS / 1000)
			req->opts.timeout_ms = json_integer_value(v) * 1000;
		else if (json_is_real(v) && json_real_value(v) * 1000 >= 1 &&
				 json_real_value(v) * 1000 <= (double) DURATION_MAX_MS)
			req->opts.timeout_ms = (int64_t) (json_real_value(v) * 1000 + 0.5);
		else if (!json_is_string(v) ||
				 duration_parse(json_string_value(v), &req->opts.timeout_ms, why, sizeof why) != 0 ||
				 req->opts.timeout_ms <= 0)
			return cq_fail(err, EX_DATAERR, "\"timeout\" must be a positive duration such as \"90s\" or a number of seconds");
	}
	if ((v = json_object_get(*obj, "payload")) != NULL && !json_is_null(v)) {
		if (!member_span(line, len, "payload", &start, &plen))
			return cq_fail(err, EX_SOFTWARE, "could not locate the payload in the line");
		req->payload = own->payload = xstrndup(line + start, plen);
	}
	if (parse_composition(*obj, own, req, err) != 0)
		return err->code;
	return enqueue_check(req, rules, err);
}

static void
append_row(buf *b, const enqueue_req *req)
{
	char num[64];

	pg_copy_field(b, req->type);
	buf_putc(b, '\t');
	pg_copy_field(b, req->payload);
	buf_putc(b, '\t');
	pg_copy_field(b, req->run_at);
	buf_putc(b, '\t');
	pg_copy_field(b, req->opts.queue);
	buf_putc(b, '\t');
	snprintf(num, sizeof num, "%d", req->opts.priority);
	pg_copy_field(b, req->opts.has_priority ? num : NULL);
	buf_putc(b, '\t');
	snprintf(num, sizeof num, "%d", req->opts.max_attempts);
	pg_copy_field(b, req->opts.max_attempts > 0 ? num : NULL);
	buf_putc(b, '\t');
	snprintf(num, sizeof num, "%" PRId64 " milliseconds", req->opts.timeout_ms);
	pg_copy_field(b, req->opts.timeout_ms > 0 ? num : NULL);
	buf_putc(b, '\t');
	pg_copy_field(b, req->key);
	buf_putc(b, '\t');
	pg_copy_field(b, req->limit_key);
	buf_putc(b, '\t');
	pg_copy_field(b, req->expires_at);
	buf_putc(b, '\t');
	pg_copy_field(b, req->unique_key);
	buf_putc(b, '\t');
	/* The column is not null: COPY would store \N as given, not the default. */
	pg_copy_field(b, req->history ? req->history : "all");
	buf_putc(b, '\t');
	pg_copy_field(b, req->hooks);
	buf_putc(b, '\t');
	pg_copy_field(b, req->depends_on);
	buf_putc(b, '\n');
}

/* Blank lines are not COPY rows: map a row number back to its input line. */
typedef struct line_map {
	int64_t    *blank;			/* input line numbers of skipped lines, ascending */
	size_t		n, cap;
} line_map;

static int64_t
row_to_line(const line_map *m, int64_t row)
{
	int64_t line = row;

	for (size_t i = 0; i < m->n && m->blank[i] <= line; i++)
		line++;
	return line;
}

/*
 * After the COPY into the staging table (rc: how it went): the insert and
 * the commit, or the rollback. *created (unless NULL) gets the jobs written.
 */
static int
stage_finish(PGconn *conn, int rc, int64_t *created, cq_err *err)
{
	PGresult *res;

	if (rc == 0 && (res = pg_exec(conn, stage_insert_sql, 0, NULL, PG_NONE, err)) != NULL) {
		*created = strtoll(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		if ((rc = pg_run(conn, "commit", 0, NULL, err)) == 0)
			return 0;
	} else if (rc == 0)
		rc = err->code;
	if (pg_alive(conn)) {
		res = PQexec(conn, "rollback");
		PQclear(res);
	}
	return rc;
}

/*
 * The row of the COPY an error's context names, or 0. COPY's own context
 * line comes last (the outermost) and names its table, cronq.jobs or the
 * staging table: "COPY jobs, line 7" or, in the server's lc_messages,
 * "COPY cronq_jsonl, Zeile 7", "jobsのCOPY、行 7", "jobs 복사, 7번째 줄":
 * its first number is the row in every language PostgreSQL speaks (the
 * row's text, quoted after it, may hold others).
 */
static int64_t
copy_row(const char *ctx)
{
	const char *last = ctx, *digits;
	size_t n = ctx ? strlen(ctx) : 0;

	while (n > 0 && ctx[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < n; i++)
		if (ctx[i] == '\n')
			last = ctx + i + 1;
	if (last == NULL || (strstr(last, "jobs") == NULL && strstr(last, "cronq_jsonl") == NULL) ||
		(digits = strpbrk(last, "0123456789")) == NULL)
		return 0;
	return strtoll(digits, NULL, 10);
}

/* Read the COPY's final result(s); 0 or the error with its input line. */
static int
copy_finish(PGconn *conn, const line_map *map, int64_t *created, cq_err *err)
{
	PGresult *res;
	int rc = 0;

	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			*created = strtoll(PQcmdTuples(res), NULL, 10);
		} else if (rc == 0) {
			int64_t row = copy_row(PQresultErrorField(res, PG_DIAG_CONTEXT));

			rc = pg_fail_result(conn, res, err);
			if (row > 0)
				cq_prefix(err, "line %" PRId64 ": ", row_to_line(map, row));
		}
		PQclear(res);
	}
	return rc;
}

/*
 * Start the COPY into cronq.jobs, or, for a role under row-level security,
 * into the staging table (*staged).
 */
static int
copy_start(PGconn *conn, bool *staged, cq_err *err)
{
	PGresult *res = PQexec(conn, copy_sql);
	int rc = 0;

	*staged = false;
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		rc = pg_fail_result(conn, res, err);
		if (strcmp(err->sqlstate, "0A000") == 0 && pg_alive(conn)) {
			cq_clear(err);
			rc = 0;
			*staged = true;
			PQclear(res);
			res = PQexec(conn, stage_sql);	/* several statements: the simple protocol */
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				rc = pg_fail_result(conn, res, err);
			else {
				PQclear(res);
				res = PQexec(conn, stage_copy_sql);
				if (PQresultStatus(res) != PGRES_COPY_IN)
					rc = pg_fail_result(conn, res, err);
			}
			if (rc != 0)
				stage_finish(conn, rc, NULL, err);
		}
	}
	PQclear(res);
	return rc;
}

int
enqueue_jsonl(PGconn *conn, FILE *in, enqueue_rules_fn rules, enqueue_progress progress,
			  int64_t *lines_out, int64_t *created, cq_err *err)
{
	buf rows = BUF_INIT;
	line_map map = {NULL, 0, 0};
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int64_t lineno = 0, jobs = 0;
	bool staged;
	int rc = 0;

	*created = 0;
	*lines_out = 0;
	if ((rc = copy_start(conn, &staged, err)) != 0)
		return rc;

	while ((len = getline(&line, &cap, in)) != -1) {
		enqueue_req req;
		json_t *obj = NULL;
		enqueue_owned own = {NULL, NULL, NULL};
		size_t n = (size_t) len;
		bool blank = true;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		for (size_t i = 0; i < n && blank; i++)
			blank = line[i] == ' ' || line[i] == '\t';
		if (blank) {
			if (map.n == map.cap) {
				map.cap = map.cap ? map.cap * 2 : 16;
				map.blank = xrealloc(map.blank, map.cap * sizeof *map.blank);
			}
			map.blank[map.n++] = lineno;
			continue;
		}
		if (n > JSONL_MAX_LINE)
			rc = cq_fail(err, EX_DATAERR, "line %" PRId64 ": longer than 2 MiB", lineno);
		else if (enqueue_parse_line(line, n, rules, &obj, &own, &req, err) != 0) {
			cq_prefix(err, "line %" PRId64 ": ", lineno);
			rc = err->code;
		} else
			append_row(&rows, &req);
		json_decref(obj);
		enqueue_owned_free(&own);
		if (rc != 0)
			break;
		jobs++;
		if (rows.len >= COPY_CHUNK) {
			if (PQputCopyData(conn, rows.data, (int) rows.len) != 1) {
				rc = pg_fail_result(conn, NULL, err);
				break;
			}
			buf_reset(&rows);
		}
		if (progress && lineno % 10000 == 0)
			progress(lineno, false);
	}
	free(line);
	if (rc == 0 && ferror(in))
		rc = cq_fail(err, EX_IOERR, "could not read standard input");

	if (rc == 0) {
		if ((rows.len > 0 && PQputCopyData(conn, rows.data, (int) rows.len) != 1) ||
			PQputCopyEnd(conn, NULL) != 1)
			rc = pg_fail_result(conn, NULL, err);
		else
			rc = copy_finish(conn, &map, created, err);
		if (staged)
			rc = stage_finish(conn, rc, created, err);
	} else {
		cq_err ignored;

		/* Abort the COPY: the server rolls back every row already sent. */
		if (PQputCopyEnd(conn, "input rejected by cronq") == 1)
			copy_finish(conn, &map, created, &ignored);
		if (staged)
			stage_finish(conn, rc, created, &ignored);
		*created = 0;
	}
	if (progress)
		progress(lineno, true);
	*lines_out = jobs;
	buf_free(&rows);
	free(map.blank);
	return rc;
}
