/*
 * backfill — see backfill.h. Payload templates are expanded on the JSON
 * text itself, not through jansson, so numbers reach the database exactly
 * as the user wrote them (a re-printed 0.1 would become 0.10000000000000001).
 */
#include "sched/backfill.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "queue/enqueue.h"
#include "queue/payload.h"
#include "sched/fire.h"
#include "time/cron.h"
#include "time/rfc3339.h"
#include "time/tz.h"
#include "tasks/payload.h"
#include "tasks/task.h"
#include "util/xalloc.h"

/* A batch is sent early once its arrays hold this many bytes. */
#define BATCH_BYTES (4 * 1024 * 1024)
/* Deepest JSON nesting the expander follows (payloads stop at 64). */
#define MAX_DEPTH 128

static bool
is_word_char(char c)
{
	return isalnum((unsigned char) c) || c == '_';
}

/* Length of the word of "{word}" starting at s (s[0] == '{'), or 0. */
static size_t
word_len(const char *s, size_t n)
{
	size_t i = 1;

	while (i < n && is_word_char(s[i]))
		i++;
	return i > 1 && i < n && s[i] == '}' ? i - 1 : 0;
}

/*
 * Expand s[0..n). In a JSON string (json set) an escape sequence is copied
 * whole, so "\{" cannot start anything and "\\" stays two bytes.
 */
static int
expand_span(const char *s, size_t n, bool json, int64_t t, buf *out, char *err, size_t errlen)
{
	size_t i = 0;

	while (i < n) {
		size_t w;

		if (json && s[i] == '\\' && i + 1 < n) {
			buf_append(out, s + i, 2);
			i += 2;
			continue;
		}
		if (s[i] != '{') {
			buf_putc(out, s[i++]);
			continue;
		}
		if (i + 1 < n && s[i + 1] == '{' && (w = word_len(s + i + 1, n - i - 1)) > 0) {
			buf_append(out, s + i + 1, w + 2);	/* {{word} is the literal {word} */
			i += w + 3;
			continue;
		}
		if ((w = word_len(s + i, n - i)) == 0) {
			buf_putc(out, s[i++]);
			continue;
		}
		if (w == 4 && memcmp(s + i + 1, "date", 4) == 0) {
			struct tz_tm tm;

			tz_break_down(t, 0, &tm);
			buf_printf(out, "%04d-%02d-%02d", tm.year, tm.mon, tm.mday);
		} else if (w == 2 && memcmp(s + i + 1, "ts", 2) == 0) {
			char ts[RFC3339_BUFLEN];

			rfc3339_format(t, ts, sizeof ts);
			buf_puts(out, ts);
		} else {
			snprintf(err, errlen, "unrecognized placeholder \"%.*s\"",
					 (int) (w < 100 ? w + 2 : 100), s + i);
			return -1;
		}
		i += w + 2;
	}
	return 0;
}

int
backfill_expand(const char *tmpl, int64_t t, buf *out, char *err, size_t errlen)
{
	return expand_span(tmpl, strlen(tmpl), false, t, out, err, errlen);
}

int
backfill_expand_json(const char *json, int64_t t, buf *out, char *err, size_t errlen)
{
	/* Per open container: '{' object or '['; in objects, whether a key comes next. */
	char kind[MAX_DEPTH];
	bool want_key[MAX_DEPTH];
	int depth = 0;
	size_t n = strlen(json), i = 0;

	while (i < n) {
		char c = json[i];

		if (c == '"') {
			size_t start = ++i;
			bool key = depth > 0 && kind[depth - 1] == '{' && want_key[depth - 1];

			while (i < n && json[i] != '"')
				i += json[i] == '\\' ? 2 : 1;
			if (i > n)
				i = n;
			buf_putc(out, '"');
			if (key)
				buf_append(out, json + start, i - start);
			else if (expand_span(json + start, i - start, true, t, out, err, errlen) != 0)
				return -1;
			if (i < n)
				buf_putc(out, '"');
			i++;
			continue;
		}
		if (c == '{' || c == '[') {
			if (depth == MAX_DEPTH) {
				snprintf(err, errlen, "invalid payload: nested deeper than %d levels", PAYLOAD_MAX_DEPTH);
				return -1;
			}
			kind[depth] = c;
			want_key[depth++] = c == '{';
		} else if ((c == '}' || c == ']') && depth > 0)
			depth--;
		else if (c == ':' && depth > 0)
			want_key[depth - 1] = false;
		else if (c == ',' && depth > 0)
			want_key[depth - 1] = kind[depth - 1] == '{';
		buf_putc(out, c);
		i++;
	}
	return 0;
}

bool
backfill_uses(const char *tmpl, const char *name)
{
	size_t n = strlen(tmpl), len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		size_t w;

		if (tmpl[i] != '{')
			continue;
		if (i + 1 < n && tmpl[i + 1] == '{' && word_len(tmpl + i + 1, n - i - 1) > 0) {
			i += 1 + word_len(tmpl + i + 1, n - i - 1) + 1;	/* an escape, not a use */
			continue;
		}
		w = word_len(tmpl + i, n - i);
		if (w == len && memcmp(tmpl + i + 1, name, len) == 0)
			return true;
	}
	return false;
}

int
backfill_count(int64_t from, int64_t to, int64_t step, int64_t max, int64_t *count, cq_err *err)
{
	char a[RFC3339_BUFLEN], b[RFC3339_BUFLEN];

	if (step <= 0)
		return cq_fail(err, EX_USAGE, "the step must be positive");
	if (to < from) {
		rfc3339_format(from, a, sizeof a);
		rfc3339_format(to, b, sizeof b);
		return cq_fail(err, EX_USAGE, "the end of the range (%s) is before its start (%s)", b, a);
	}
	/* No overflow: both ends are within the years 1 to 9999. */
	*count = (to - from) / step + 1;
	if (*count > max) {
		cq_fail(err, EX_USAGE, "the range holds %" PRId64 " steps; a backfill enqueues at most %" PRId64,
				*count, max);
		cq_hint(err, "Use a longer step, or split the range.");
		return err->code;
	}
	return 0;
}

/* Does the payload change from step to step? */
static bool
templated(const backfill_req *req)
{
	return req->payload && (backfill_uses(req->payload, "date") || backfill_uses(req->payload, "ts"));
}

/* The key template in force. */
static char *
key_template(const backfill_req *req)
{
	return req->key ? xstrdup(req->key) : xasprintf("backfill:%s:{ts}", req->type);
}

int
backfill_check(const backfill_req *req, cq_err *err)
{
	char why[1024];
	char *key = key_template(req);
	buf k = BUF_INIT, p = BUF_INIT;
	int rc = 0;

	if (req->payload) {
		json_t *v = payload_parse(req->payload, strlen(req->payload), why, sizeof why);

		if (v == NULL) {
			rc = cq_fail(err, EX_DATAERR, "%s", why);
			goto out;
		}
		json_decref(v);
	}
	if (backfill_expand(key, 0, &k, why, sizeof why) != 0) {
		rc = cq_fail(err, EX_DATAERR, "invalid key template \"%s\": %s", key, why);
		cq_hint(err, TEMPLATE_HINT);
		goto out;
	}
	if (req->payload && backfill_expand_json(req->payload, 0, &p, why, sizeof why) != 0) {
		rc = cq_fail(err, EX_DATAERR, "invalid payload template: %s", why);
		cq_hint(err, TEMPLATE_HINT);
		goto out;
	}
	/* Steps under one key would be one job: refuse rather than lose them. */
	if (req->count > 1 && !backfill_uses(key, "ts") &&
		!(backfill_uses(key, "date") && req->step >= 86400)) {
		rc = cq_fail(err, EX_DATAERR, "key template \"%s\" gives several steps the same key", key);
		cq_hint(err, "Put {ts} in the key%s.", backfill_uses(key, "date") ? " ({date} repeats at steps under 1d)" : "");
		goto out;
	}
	/* An unknown type is the same error at every step: say it without one. */
	if (task_find(req->type) == NULL) {
		enqueue_req bare;

		memset(&bare, 0, sizeof bare);
		bare.type = req->type;
		bare.in_ms = -1;
		rc = enqueue_check(&bare, payload_validate, err);
		goto out;
	}
	/* Without a count the times are not known yet: check what does not depend on them. */
	if (req->count > 0 || !templated(req)) {
		buf_reset(&k);
		buf_reset(&p);
		rc = backfill_job(req, 0, &k, &p, err);
	}
out:
	free(key);
	buf_free(&k);
	buf_free(&p);
	return rc;
}

int
backfill_job(const backfill_req *req, int64_t i, buf *key, buf *payload, cq_err *err)
{
	int64_t t = req->from + i * req->step;
	char why[1024], ts[RFC3339_BUFLEN];
	char *tmpl = key_template(req);
	enqueue_req job;
	size_t key_at = key->len, payload_at = payload->len;
	int rc;

	rc = backfill_expand(tmpl, t, key, why, sizeof why);
	free(tmpl);
	if (rc != 0)
		return cq_fail(err, EX_DATAERR, "invalid key template: %s", why);
	if (backfill_expand_json(req->payload ? req->payload : "{}", t, payload, why, sizeof why) != 0)
		return cq_fail(err, EX_DATAERR, "invalid payload template: %s", why);
	memset(&job, 0, sizeof job);
	job.key = key->data + key_at;
	job.opts = req->opts;
	job.in_ms = -1;
	/* The fields but type and payload first (noop takes no payload): a bad
	 * queue is not a step's fault, so its message names none. */
	job.type = "noop";
	if ((rc = enqueue_check(&job, payload_validate, err)) != 0)
		return rc;
	job.type = req->type;
	job.payload = payload->data + payload_at;
	if ((rc = enqueue_check(&job, payload_validate, err)) != 0 && templated(req)) {
		rfc3339_format(t, ts, sizeof ts);
		cq_prefix(err, "step %s: ", ts);
	}
	return rc;
}

int
backfill_occurrences(const fire_def *times, int64_t from, int64_t to,
					 int64_t max, int64_t **out, int64_t *n, cq_err *err)
{
	fire_clock clock;
	int64_t t, cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (to < from) {
		int64_t ignored;

		return backfill_count(from, to, 1, max, &ignored, err);
	}
	if ((rc = fire_open(times, &clock, err)) != 0)
		return rc;
	t = from - 1;
	while (fire_next(&clock, t, &t) == 0 && t <= to) {
		if (*n == max) {
			rc = cq_fail(err, EX_USAGE, "the range holds more than %" PRId64 " occurrences; "
						 "a backfill enqueues at most %" PRId64, max, max);
			cq_hint(err, "Split the range.");
			break;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = xrealloc(*out, (size_t) cap * sizeof **out);
		}
		(*out)[(*n)++] = t;
	}
	fire_close(&clock);
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int
backfill_parse_time(PGconn *conn, const char *text, int64_t *t, cq_err *err)
{
	static const char sql[] =
		"select case when isfinite(x.t) then floor(extract(epoch from x.t))::bigint end"
		" from (select $1::timestamptz as t) x";
	const char *params[1] = {text};
	PGresult *res = pg_exec(conn, sql, 1, params, PG_ONE, err);
	int rc = 0;

	if (res == NULL)
		return err->code;
	if (PQgetisnull(res, 0, 0))
		rc = cq_fail(err, EX_DATAERR, "\"%s\" is not a finite time", text);
	else {
		*t = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		if (*t < CRON_TIME_MIN || *t > CRON_TIME_MAX)
			rc = cq_fail(err, EX_DATAERR, "time \"%s\" is out of range (years 1 to 9999)", text);
	}
	PQclear(res);
	return rc;
}

/* The jobs of one batch, as PostgreSQL array literals, with their times. */
typedef struct batch {
	buf			keys;
	buf			payloads;
	int64_t    *times;
	int			n;
} batch;

static void
batch_reset(batch *b)
{
	buf_reset(&b->keys);
	buf_reset(&b->payloads);
	pg_array_begin(&b->keys);
	pg_array_begin(&b->payloads);
	b->n = 0;
}

static void
batch_free(batch *b)
{
	buf_free(&b->keys);
	buf_free(&b->payloads);
	free(b->times);
}

/* Does the batch hold enough to be sent? */
static bool
batch_full(const batch *b)
{
	return b->n == BACKFILL_BATCH || b->keys.len + b->payloads.len > BATCH_BYTES;
}

/*
 * Dry run of one batch: which of its keys exist already. "= any" keeps to
 * the key index whatever the batch's size; a join of the unnested array
 * may be planned as a scan of every job.
 */
static const char existing_keys_sql[] =
	"select j.idempotency_key from cronq.jobs j where j.idempotency_key = any ($1::text[])";

static int
compare_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Report through line() each job of the batch whose key is new. */
static int
dry_batch(PGconn *conn, const batch *b, char **keys, char **payloads, backfill_line_fn line,
		  void *arg, backfill_out *out, cq_err *err)
{
	const char *params[1] = {buf_str(&b->keys)};
	PGresult *res = pg_exec(conn, existing_keys_sql, 1, params, PG_ANY, err);
	char **found;
	int nfound;

	if (res == NULL)
		return err->code;
	nfound = PQntuples(res);
	found = xcalloc((size_t) nfound + 1, sizeof *found);
	for (int r = 0; r < nfound; r++)
		found[r] = PQgetvalue(res, r, 0);
	qsort(found, (size_t) nfound, sizeof *found, compare_str);
	for (int k = 0; k < b->n; k++) {
		if (bsearch(&keys[k], found, (size_t) nfound, sizeof *found, compare_str)) {
			out->existing++;
			continue;
		}
		out->created++;
		if (line)
			line(b->times[k], keys[k], payloads[k], arg);
	}
	free(found);
	PQclear(res);
	return 0;
}

static void
rollback(PGconn *conn)
{
	if (pg_alive(conn)) {
		PGresult *r = PQexec(conn, "rollback");

		PQclear(r);
	}
}

/* Keep each job's key and payload of a dry batch for line(). */
typedef struct strings {
	char	  **v;
	int			n;
} strings;

static void
strings_add(strings *s, const char *text, size_t len)
{
	s->v[s->n++] = xstrndup(text, len);
}

static void
strings_clear(strings *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

/*
 * The then job: after every job whose key is in all (an array literal),
 * found by key whether this run wrote it or an earlier one did. Its key
 * names the backfill (what: its type or schedule:NAME, and its range).
 */
static const char then_sql[] =
	"insert into cronq.jobs as j (type, payload, queue, priority, max_attempts, timeout,"
	"  idempotency_key, depends_on)"
	" values ($1, $2::jsonb, $3, $4::int, $5::int, $6::bigint * interval '1 millisecond', $7,"
	"  array(select p.id from cronq.jobs p where p.idempotency_key = any($8::text[]) order by p.id))"
	" on conflict (idempotency_key) where idempotency_key is not null do nothing"
	" returning j.id";

static int
then_insert(PGconn *conn, const backfill_then *then, const char *what, buf *all, backfill_out *out,
			cq_err *err)
{
	char f[RFC3339_BUFLEN], t[RFC3339_BUFLEN], prio[16], attempts[16], timeout[32];
	char *key;
	const char *params[8];
	PGresult *res;

	rfc3339_format(then->from, f, sizeof f);
	rfc3339_format(then->to, t, sizeof t);
	key = xasprintf("backfill:then:%s:%s..%s:%s", what, f, t, then->type);
	snprintf(prio, sizeof prio, "%d", then->opts.priority);
	snprintf(attempts, sizeof attempts, "%d", then->opts.max_attempts);
	snprintf(timeout, sizeof timeout, "%" PRId64, then->opts.timeout_ms);
	if (all->len == 0)
		pg_array_begin(all);	/* no job in the range: nothing to wait for */
	pg_array_end(all);
	params[0] = then->type;
	params[1] = then->payload ? then->payload : "{}";
	params[2] = then->opts.queue;
	params[3] = then->opts.has_priority ? prio : NULL;
	params[4] = then->opts.max_attempts > 0 ? attempts : NULL;
	params[5] = then->opts.timeout_ms > 0 ? timeout : NULL;
	params[6] = key;
	params[7] = buf_str(all);
	res = pg_exec(conn, then_sql, 8, params, PG_MAYBE_ONE, err);
	if (res != NULL && PQntuples(res) == 0) {
		PQclear(res);
		out->then_existed = true;
		res = pg_exec(conn, "select id from cronq.jobs where idempotency_key = $1", 1,
					  (const char *[]) {key}, PG_ONE, err);
	}
	free(key);
	if (res == NULL)
		return err->code;
	out->then_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

/* What a then job follows: the jobs of the backfill's keys, all. */
typedef struct then_ctx {
	const backfill_then *then;	/* NULL, or then->type NULL: none */
	char	   *what;			/* the backfill's type, or schedule:NAME */
	buf			all;			/* every key of the backfill, an array literal */
} then_ctx;

static bool
then_wanted(const then_ctx *tc, bool dry)
{
	return !dry && tc->then && tc->then->type;
}

/* Note a key of the backfill, for the then job. */
static void
then_key(then_ctx *tc, bool dry, const char *key)
{
	if (!then_wanted(tc, dry))
		return;
	if (tc->all.len == 0)
		pg_array_begin(&tc->all);
	pg_array_text(&tc->all, key);
}

/*
 * The end of both backfill paths: the then job, and commit what a good run
 * inserted (every failure arrives with rc set), or roll it back and report
 * nothing; free the batch and its strings.
 */
static int
run_end(PGconn *conn, bool dry, int rc, then_ctx *tc, batch *b, strings *keys, strings *payloads,
		backfill_out *out, cq_err *err)
{
	if (rc == 0 && then_wanted(tc, dry))
		rc = then_insert(conn, tc->then, tc->what, &tc->all, out, err);
	buf_free(&tc->all);
	free(tc->what);
	if (rc == 0 && !dry)
		rc = pg_run(conn, "commit", 0, NULL, err);
	if (rc != 0) {
		if (!dry)
			rollback(conn);
		memset(out, 0, sizeof *out);
	}
	strings_clear(keys);
	strings_clear(payloads);
	free(keys->v);
	free(payloads->v);
	batch_free(b);
	return rc;
}

static const char insert_sql[] =
	"insert into cronq.jobs (type, payload, queue, priority, max_attempts, timeout, idempotency_key)"
	" select $1, u.payload::jsonb, $2, $3::int, $4::int, $5::bigint * interval '1 millisecond', u.key"
	" from unnest($6::text[], $7::text[]) with ordinality as u(payload, key, n)"
	" order by u.n";

/* Send one batch: insert it, or in a dry run ask which keys are new. */
static int
flush(PGconn *conn, const backfill_req *req, batch *b, bool dry, strings *keys,
	  strings *payloads, backfill_line_fn line, void *arg, backfill_out *out, cq_err *err)
{
	char prio[16], attempts[16], timeout[32];
	const char *params[7];
	PGresult *res;
	int64_t created;

	pg_array_end(&b->keys);
	pg_array_end(&b->payloads);
	if (dry)
		return dry_batch(conn, b, keys->v, payloads->v, line, arg, out, err);
	snprintf(prio, sizeof prio, "%d", req->opts.priority);
	snprintf(attempts, sizeof attempts, "%d", req->opts.max_attempts);
	snprintf(timeout, sizeof timeout, "%" PRId64, req->opts.timeout_ms);
	params[0] = req->type;
	params[1] = req->opts.queue;
	params[2] = req->opts.has_priority ? prio : NULL;
	params[3] = req->opts.max_attempts > 0 ? attempts : NULL;
	params[4] = req->opts.timeout_ms > 0 ? timeout : NULL;
	params[5] = buf_str(&b->payloads);
	params[6] = buf_str(&b->keys);
	if ((res = pg_exec(conn, insert_sql, 7, params, PG_NONE, err)) == NULL)
		return err->code;
	created = strtoll(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	out->created += created;
	out->existing += b->n - created;
	return 0;
}

int
backfill_run(PGconn *conn, const backfill_req *req, const backfill_then *then, bool dry,
			 backfill_line_fn line, backfill_progress_fn progress, void *arg, backfill_out *out,
			 cq_err *err)
{
	then_ctx tc = {then, xstrdup(req->type), BUF_INIT};
	batch b = {BUF_INIT, BUF_INIT, NULL, 0};
	strings keys = {NULL, 0}, payloads = {NULL, 0};
	buf key = BUF_INIT, payload = BUF_INIT;
	int rc = 0;

	memset(out, 0, sizeof *out);
	b.times = xcalloc(BACKFILL_BATCH, sizeof *b.times);
	if (dry) {
		keys.v = xcalloc(BACKFILL_BATCH, sizeof *keys.v);
		payloads.v = xcalloc(BACKFILL_BATCH, sizeof *payloads.v);
	}
	batch_reset(&b);
	if (!dry && (rc = pg_run(conn, "begin", 0, NULL, err)) != 0)
		goto out;
	for (int64_t i = 0; i < req->count; i++) {
		buf_reset(&key);
		buf_reset(&payload);
		if ((rc = backfill_job(req, i, &key, &payload, err)) != 0)
			goto out;
		pg_array_text(&b.keys, key.data);
		pg_array_text(&b.payloads, payload.data);
		then_key(&tc, dry, key.data);
		b.times[b.n++] = req->from + i * req->step;
		if (dry) {
			strings_add(&keys, key.data, key.len);
			strings_add(&payloads, payload.data, payload.len);
		}
		if (batch_full(&b) || i == req->count - 1) {
			if ((rc = flush(conn, req, &b, dry, &keys, &payloads, line, arg, out, err)) != 0)
				goto out;
			batch_reset(&b);
			strings_clear(&keys);
			strings_clear(&payloads);
			if (progress)
				progress(i + 1, req->count);
		}
	}
out:
	buf_free(&key);
	buf_free(&payload);
	return run_end(conn, dry, rc, &tc, &b, &keys, &payloads, out, err);
}

int
backfill_schedule_get(PGconn *conn, const char *name, char **cron, char **zone, fire_def *times,
					  int64_t *now, cq_err *err)
{
	const char *params[1] = {name};
	PGresult *res = pg_exec(conn, "select cron, timezone, floor(extract(epoch from anchor))::bigint,"
							" coalesce(floor(extract(epoch from spread)), 0)::bigint,"
							" floor(extract(epoch from now()))::bigint"
							" from cronq.schedules where name = $1",
							1, params, PG_MAYBE_ONE, err);

	*cron = *zone = NULL;
	if (res == NULL)
		return err->code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return cq_fail(err, EX_DATAERR, "schedule \"%s\" does not exist", name);
	}
	*cron = xstrdup(PQgetvalue(res, 0, 0));
	*zone = xstrdup(PQgetvalue(res, 0, 1));
	*times = (fire_def) {name, *cron, *zone, !PQgetisnull(res, 0, 2),
		strtoll(PQgetvalue(res, 0, 2), NULL, 10), strtoll(PQgetvalue(res, 0, 3), NULL, 10)};
	*now = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
	PQclear(res);
	return 0;
}

/*
 * Occurrences go through the function every runner's materialisation
 * uses, so a backfilled job is the very job the live schedule would have
 * made, but for its start deadline: a backfill, asked for explicitly, has
 * none (false). It runs with the caller's rights: an author backfills its
 * own schedules, the owner any.
 */
static const char materialise_sql[] =
	"select count(*) from cronq.enqueue_occurrences($1::text[], $2::timestamptz[], false)";

int
backfill_schedule_run(PGconn *conn, const char *name, const int64_t *fires, int64_t n,
					  const backfill_then *then, bool dry, backfill_line_fn line,
					  backfill_progress_fn progress, void *arg, backfill_out *out, cq_err *err)
{
	then_ctx tc = {then, NULL, BUF_INIT};
	batch b = {BUF_INIT, BUF_INIT, NULL, 0};
	buf names = BUF_INIT, times = BUF_INIT;
	strings keys = {NULL, 0}, payloads = {NULL, 0};
	char *payload = NULL;
	PGresult *res;
	int rc;

	memset(out, 0, sizeof *out);
	res = pg_exec(conn, "select payload::text from cronq.schedules where name = $1",
				  1, (const char *[]) {name}, PG_MAYBE_ONE, err);
	if (res == NULL)
		return err->code;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return cq_fail(err, EX_DATAERR, "schedule \"%s\" does not exist", name);
	}
	payload = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	tc.what = xasprintf("schedule:%s", name);

	b.times = xcalloc(BACKFILL_BATCH, sizeof *b.times);
	keys.v = xcalloc(BACKFILL_BATCH, sizeof *keys.v);
	payloads.v = xcalloc(BACKFILL_BATCH, sizeof *payloads.v);
	batch_reset(&b);
	/*
	 * The schedule's row held until the commit, whoever backfills: a wake
	 * passes over the schedule meanwhile (it locks due schedules SKIP
	 * LOCKED) rather than meet keys this transaction is writing, which it
	 * took for the schedule's own fault (refused, an hour on). Under
	 * row-level security, jobs_occurrence_lock takes it too.
	 */
	if (!dry && ((rc = pg_run(conn, "begin", 0, NULL, err)) != 0 ||
				 (rc = pg_run(conn, "select from cronq.schedules where name = $1 for no key update", 1,
							  (const char *[]) {name}, err)) != 0))
		goto out;
	rc = 0;
	for (int64_t i = 0; i < n; i++) {
		char ts[RFC3339_BUFLEN];
		char *key;

		rfc3339_format(fires[i], ts, sizeof ts);
		key = xasprintf("schedule:%s:%s", name, ts);
		if (b.n == 0) {
			buf_reset(&names);
			buf_reset(&times);
			pg_array_begin(&names);
			pg_array_begin(&times);
		}
		pg_array_text(&b.keys, key);
		then_key(&tc, dry, key);
		pg_array_text(&names, name);
		pg_array_text(&times, ts);
		b.times[b.n++] = fires[i];
		keys.v[keys.n++] = key;
		if (dry)
			strings_add(&payloads, payload, strlen(payload));
		if (b.n == BACKFILL_BATCH || i == n - 1) {
			pg_array_end(&names);
			pg_array_end(&times);
			if (dry) {
				pg_array_end(&b.keys);
				rc = dry_batch(conn, &b, keys.v, payloads.v, line, arg, out, err);
			} else {
				const char *params[2] = {buf_str(&names), buf_str(&times)};

				if ((res = pg_exec(conn, materialise_sql, 2, params, PG_ONE, err)) == NULL)
					rc = err->code;
				else {
					int64_t created = strtoll(PQgetvalue(res, 0, 0), NULL, 10);

					out->created += created;
					out->existing += b.n - created;
					PQclear(res);
				}
			}
			batch_reset(&b);
			strings_clear(&keys);
			strings_clear(&payloads);
			if (rc != 0)
				goto out;
			if (progress)
				progress(i + 1, n);
		}
	}
out:
	free(payload);
	buf_free(&names);
	buf_free(&times);
	return run_end(conn, dry, rc, &tc, &b, &keys, &payloads, out, err);
}

/* Read from and to with the database; 0, or the code with err filled. */
static int
read_range(PGconn *conn, const char *from_text, const char *to_text, int64_t *from, int64_t *to,
		   cq_err *err)
{
	int rc;

	if ((rc = backfill_parse_time(conn, from_text, from, err)) != 0) {
		cq_prefix(err, "invalid value \"%s\" for --from: ", from_text);
		return rc;
	}
	if ((rc = backfill_parse_time(conn, to_text, to, err)) != 0) {
		cq_prefix(err, "invalid value \"%s\" for --to: ", to_text);
		return rc;
	}
	if (*to < *from) {
		char f[RFC3339_BUFLEN], t[RFC3339_BUFLEN];

		rfc3339_format(*from, f, sizeof f);
		rfc3339_format(*to, t, sizeof t);
		return cq_fail(err, EX_USAGE, "--to %s is before --from %s", t, f);
	}
	return 0;
}

/*
 * Refuse occurrences later than the database's now: a schedule enqueues
 * those itself once due, and a job holding one's key ahead of time would
 * outlive its author's hold on the name (the database refuses such keys to
 * a member of cronq_user as well: 0036).
 */
static int
check_due(const int64_t *fires, int64_t n, int64_t now, cq_err *err)
{
	char first[RFC3339_BUFLEN], at[RFC3339_BUFLEN];
	int64_t i = 0;

	while (i < n && fires[i] <= now)
		i++;
	if (i == n)
		return 0;
	rfc3339_format(fires[i], first, sizeof first);
	rfc3339_format(now, at, sizeof at);
	cq_fail(err, EX_USAGE, "the range holds occurrences not due yet (the first at %s; the database's clock says %s)",
			first, at);
	cq_hint(err, "A backfill enqueues occurrences already due; the schedule enqueues the later ones itself. End the range at or before now.");
	return err->code;
}

/* One job per occurrence of schedule name from `from` to `to`. */
static int
perform_schedule(PGconn *conn, const char *name, const backfill_then *then, int64_t from,
				 int64_t to, bool dry, backfill_line_fn line, backfill_progress_fn progress,
				 void *arg, backfill_out *out, cq_err *err)
{
	char *cron = NULL, *zone = NULL;
	fire_def times;
	int64_t *fires = NULL, n = 0, now = 0;
	int rc;

	if ((rc = backfill_schedule_get(conn, name, &cron, &zone, &times, &now, err)) == 0 &&
		(rc = backfill_occurrences(&times, from, to, BACKFILL_MAX_STEPS, &fires, &n, err)) == 0 &&
		(rc = check_due(fires, n, now, err)) == 0)
		rc = backfill_schedule_run(conn, name, fires, n, then, dry, line, progress, arg, out, err);
	free(cron);
	free(zone);
	free(fires);
	return rc;
}

int
backfill_perform(PGconn *conn, backfill_req *req, const backfill_then *then_in,
				 const char *schedule, const char *from_text, const char *to_text, bool dry,
				 backfill_line_fn line, backfill_progress_fn progress, void *arg,
				 backfill_out *out, cq_err *err)
{
	backfill_then then = *then_in;
	int64_t from, to;
	int rc;

	if ((rc = read_range(conn, from_text, to_text, &from, &to, err)) != 0)
		return rc;
	then.from = from;
	then.to = to;
	if (schedule)
		return perform_schedule(conn, schedule, &then, from, to, dry, line, progress, arg, out, err);
	req->from = from;
	if ((rc = backfill_count(from, to, req->step, BACKFILL_MAX_STEPS, &req->count, err)) == 0 &&
		(rc = backfill_check(req, err)) == 0)
		rc = backfill_run(conn, req, &then, dry, line, progress, arg, out, err);
	return rc;
}
