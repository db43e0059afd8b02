/* flow — see flow.h. */
#include "queue/flow.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "queue/enqueue.h"
#include "util/buf.h"

#define KEY_FORMS "keys are queue:NAME, type:NAME, schedule:NAME or a limit key PREFIX:NAME (such as tenant:42)"

/* The rules of cronq.flow_key_error() (sql/0012_limits.sql), checked before connecting. */
bool
flow_key_invalid(const char *key, char *why, size_t len)
{
	size_t prefix = strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
	size_t chars = 0;

	/* PostgreSQL's [[:cntrl:]], and the invisible characters that reorder a line */
	if (enqueue_has_control(key)) {
		snprintf(why, len, "a key may not contain control characters");
		return true;
	}
	for (const unsigned char *p = (const unsigned char *) key; *p; p++)
		chars += (*p & 0xc0) != 0x80;
	if (key[0] == '\0')
		snprintf(why, len, "a key is required");
	else if (prefix == 0 || key[prefix] != ':')
		snprintf(why, len, "%s is not a key: " KEY_FORMS, key);
	else if (key[prefix + 1] == '\0')
		snprintf(why, len, "%s names nothing: " KEY_FORMS, key);
	else if (chars > 255)
		snprintf(why, len, "a key is at most 255 characters");
	else
		return false;
	return true;
}

/* The rules of cronq.limit_key_error(): a key, none of the three a job has by itself. */
bool
flow_limit_key_invalid(const char *key, char *why, size_t len)
{
	static const char *const own[] = {"queue:", "type:", "schedule:"};

	if (flow_key_invalid(key, why, len))
		return true;
	for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
		if (strncmp(key, own[k], strlen(own[k])) == 0) {
			snprintf(why, len, "%s cannot be a limit key: a job has its queue:, type: and schedule: keys by itself", key);
			return true;
		}
	return false;
}

static const char pause_sql[] =
	"select cronq.pause(k, $2::timestamptz) from unnest($1::text[]) with ordinality as u(k, i) order by i";
static const char resume_sql[] =
	"select cronq.resume(k) from unnest($1::text[]) with ordinality as u(k, i) order by i";

/* One statement for all the keys: all change or none. */
static int
flow_call(PGconn *conn, const char *sql, const char *const *keys, int n, const char *until,
		  bool *changed, cq_err *err)
{
	buf arr = BUF_INIT;
	const char *params[2];
	PGresult *res;

	pg_array_begin(&arr);
	for (int i = 0; i < n; i++)
		pg_array_text(&arr, keys[i]);
	pg_array_end(&arr);
	params[0] = buf_str(&arr);
	params[1] = until;
	res = pg_exec(conn, sql, sql == pause_sql ? 2 : 1, params, PG_ANY, err);
	buf_free(&arr);
	if (res == NULL) {
		/* No such schedule (for this role): the input's fault. */
		if (strcmp(err->sqlstate, "P0002") == 0)
			err->code = EX_DATAERR;
		else if (until && pg_bad_time(err->sqlstate))
			cq_prefix(err, "invalid value \"%s\" for --until: ", until);
		return err->code;
	}
	for (int i = 0; i < n && i < PQntuples(res); i++)
		changed[i] = PQgetvalue(res, i, 0)[0] == 't';
	PQclear(res);
	return 0;
}

int
flow_pause(PGconn *conn, const char *const *keys, int n, const char *until, bool *changed,
		   cq_err *err)
{
	return flow_call(conn, pause_sql, keys, n, until, changed, err);
}

int
flow_resume(PGconn *conn, const char *const *keys, int n, bool *changed, cq_err *err)
{
	return flow_call(conn, resume_sql, keys, n, NULL, changed, err);
}

int
flow_set_limit(PGconn *conn, const char *key, int64_t max_running, int64_t rate, int64_t per_ms,
			   cq_err *err)
{
	char mr[32], r[32], per[48];
	const char *params[4] = {key, NULL, NULL, NULL};

	if (max_running > 0) {
		snprintf(mr, sizeof mr, "%" PRId64, max_running);
		params[1] = mr;
	}
	if (rate > 0) {
		snprintf(r, sizeof r, "%" PRId64, rate);
		snprintf(per, sizeof per, "%" PRId64 " milliseconds", per_ms);
		params[2] = r;
		params[3] = per;
	}
	return pg_run(conn, "select cronq.set_limit($1, $2::int, $3::int, $4::interval)", 4, params, err);
}

int
flow_clear_limit(PGconn *conn, const char *key, bool *had, cq_err *err)
{
	const char *params[1] = {key};
	PGresult *res = pg_exec(conn, "select cronq.clear_limit($1)", 1, params, PG_ONE, err);

	if (res == NULL)
		return err->code;
	*had = PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	return 0;
}

int
flow_limits(PGconn *conn, const char *key, json_t **out, cq_err *err)
{
	const char *params[1] = {key};
	PGresult *res = pg_exec(conn,
		"select coalesce(json_agg(json_build_object('key', l.key, 'max_running', l.max_running,"
		"   'rate', l.rate, 'per_seconds', l.per_seconds, 'running', l.running,"
		"   'started', l.started, 'room', l.room, 'full', l.full, 'set_by', l.set_by,"
		"   'set_at', to_char(l.set_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))"
		"   order by l.key), '[]')"
		" from cronq.limits_now l where $1::text is null or l.key = $1", 1, params, PG_ONE, err);
	json_error_t jerr;

	if (res == NULL)
		return err->code;
	*out = json_loads(PQgetvalue(res, 0, 0), 0, &jerr);
	PQclear(res);
	if (*out == NULL)
		return cq_fail(err, EX_SOFTWARE, "could not read the limits: %s", jerr.text);
	return 0;
}
