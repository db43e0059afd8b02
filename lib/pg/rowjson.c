/*
 * rowjson — see rowjson.h. Type OIDs are PostgreSQL's fixed ones for the
 * built-in types (pg_type.dat); a domain over one of them, or any other
 * type, reads as text.
 */
#include "pg/rowjson.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

enum {
	OID_BOOL = 16,
	OID_INT8 = 20,
	OID_INT2 = 21,
	OID_INT4 = 23,
	OID_OID = 26,
	OID_JSON = 114,
	OID_FLOAT4 = 700,
	OID_FLOAT8 = 701,
	OID_NUMERIC = 1700,
	OID_JSONB = 3802,
};

static bool
digits(const char **p)
{
	const char *s = *p;

	while (**p >= '0' && **p <= '9')
		(*p)++;
	return *p > s;
}

bool
rowjson_is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (!(*s >= '1' && *s <= '9') || !digits(&s))
		return false;
	if (*s == '.') {
		s++;
		if (!digits(&s))
			return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!digits(&s))
			return false;
	}
	return *s == '\0';
}

void
rowjson_string(buf *b, const char *s)
{
	/* Whatever a job's session sent: it may have set a client_encoding that is not UTF-8. */
	char *clean = utf8_sanitize(s, strlen(s));

	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *) clean; *p; p++) {
		switch (*p) {
			case '"':
				buf_puts(b, "\\\"");
				break;
			case '\\':
				buf_puts(b, "\\\\");
				break;
			case '\n':
				buf_puts(b, "\\n");
				break;
			case '\r':
				buf_puts(b, "\\r");
				break;
			case '\t':
				buf_puts(b, "\\t");
				break;
			default:
				if (*p < 0x20)
					buf_printf(b, "\\u%04x", *p);
				else
					buf_putc(b, (char) *p);
		}
	}
	buf_putc(b, '"');
	free(clean);
}

/* Whether a json value's text is one jsonb takes as it is (jansson's
 * parser refuses \u0000, lone surrogates and bad UTF-8, as jsonb does).
 * Not exactly: jansson takes a number too small for jsonb's numeric
 * (1e-20000), which then fails the outcome statement, and jobs_record's
 * fallback records that one job without its result. */
static bool
json_embeddable(const char *s, size_t len)
{
	json_t *v = json_loadb(s, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, NULL);

	json_decref(v);
	return v != NULL;
}

static void
value(buf *b, const char *s, size_t len, Oid type)
{
	switch (type) {
		case OID_BOOL:
			buf_puts(b, s[0] == 't' ? "true" : "false");
			return;
		case OID_INT2:
		case OID_INT4:
		case OID_INT8:
		case OID_OID:
		case OID_FLOAT4:
		case OID_FLOAT8:
		case OID_NUMERIC:
			if (rowjson_is_number(s)) {
				buf_append(b, s, len);
				return;
			}
			break;
		case OID_JSON:
		case OID_JSONB:
			/* jsonb's text too: a job that sets its session's client_encoding
			 * gets it in that encoding, which may not be UTF-8. */
			if (json_embeddable(s, len)) {
				buf_append(b, s, len);
				return;
			}
			break;
		default:
			break;
	}
	rowjson_string(b, s);
}

char *
rowjson_text(const PGresult *r, int row, size_t cap)
{
	buf b = BUF_INIT;
	int n = PQnfields(r);
	bool fits = true;

	buf_putc(&b, '{');
	for (int c = 0; c < n && fits; c++) {
		size_t len = (size_t) PQgetlength(r, row, c);

		if (c > 0)
			buf_puts(&b, ", ");
		rowjson_string(&b, PQfname(r, c));
		buf_puts(&b, ": ");
		if (PQgetisnull(r, row, c))
			buf_puts(&b, "null");
		else if (b.len + len > cap)
			/* No value's JSON is shorter than its text: the row is too
			 * large, known without parsing megabytes of json. */
			fits = false;
		else
			value(&b, PQgetvalue(r, row, c), len, PQftype(r, c));
		fits = fits && b.len <= cap;
	}
	buf_putc(&b, '}');
	if (!fits || b.len > cap) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}
