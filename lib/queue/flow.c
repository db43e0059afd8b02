/* flow — see flow.h. */
#include "queue/flow.h"

#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "pg/literal.h"
#include "pg/pg.h"
#include "util/buf.h"

/* The rules of cronq.flow_key_error() (sql/0011_pause.sql), checked before connecting. */
bool
flow_key_invalid(const char *key, char *why, size_t len)
{
	static const char *const kinds[] = {"queue:", "type:", "schedule:"};
	size_t prefix = 0;

	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (strncmp(key, kinds[k], strlen(kinds[k])) == 0)
			prefix = strlen(kinds[k]);
	size_t chars = 0;

	for (const unsigned char *p = (const unsigned char *) key; *p; p++) {
		/* C0, DEL and C1 (U+0080-U+009F, as UTF-8): PostgreSQL's [[:cntrl:]] */
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
			snprintf(why, len, "a key may not contain control characters");
			return true;
		}
		chars += (*p & 0xc0) != 0x80;
	}
	if (key[0] == '\0')
		snprintf(why, len, "a key is required");
	else if (prefix == 0)
		snprintf(why, len, "%s is not a key: keys are queue:NAME, type:NAME or schedule:NAME", key);
	else if (key[prefix] == '\0')
		snprintf(why, len, "%s names nothing: keys are queue:NAME, type:NAME or schedule:NAME", key);
	else if (chars > 255)
		snprintf(why, len, "a key is at most 255 characters");
	else
		return false;
	return true;
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
	char sqlstate[6];
	PGresult *res;

	pg_array_begin(&arr);
	for (int i = 0; i < n; i++)
		pg_array_text(&arr, keys[i]);
	pg_array_end(&arr);
	params[0] = buf_str(&arr);
	params[1] = until;
	res = pg_exec(conn, sql, sql == pause_sql ? 2 : 1, params, PG_ANY, err, sqlstate);
	buf_free(&arr);
	if (res == NULL) {
		/* No such schedule (for this role): the input's fault. */
		if (strcmp(sqlstate, "P0002") == 0)
			err->code = EX_DATAERR;
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
