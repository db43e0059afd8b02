/*
 * redact — see redact.h. The conninfo is read the way libpq reads it (a URI
 * when it starts with "postgresql://" or "postgres://", else keyword=value
 * pairs when it holds "="), but leniently: it is read precisely because it
 * may be malformed, so every password that can be found is, and a reading
 * that stops early keeps what it found.
 */
#include "pg/redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/xalloc.h"

/* At most this many passwords of one conninfo are looked for. */
#define MAX_SPANS 8

/* Where the passwords lie in the conninfo, in order. */
typedef struct spans {
	size_t		off[MAX_SPANS], len[MAX_SPANS];
	int			n;
	bool		uri;
} spans;

static void
add_span(spans *sp, size_t off, size_t len)
{
	if (len > 0 && sp->n < MAX_SPANS) {
		sp->off[sp->n] = off;
		sp->len[sp->n++] = len;
	}
}

/* The length of the URI scheme as libpq accepts it, or 0. */
static size_t
uri_prefix(const char *s)
{
	if (strncmp(s, "postgresql://", 13) == 0)
		return 13;
	if (strncmp(s, "postgres://", 11) == 0)
		return 11;
	return 0;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char) tolower((unsigned char) c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A new string: s[0..n) percent-decoded; a malformed escape stays as written. */
static char *
percent_decode(const char *s, size_t n)
{
	buf b = BUF_INIT;

	buf_reserve(&b, n);
	for (size_t i = 0; i < n; i++) {
		int hi = -1, lo = -1;

		if (s[i] == '%' && i + 2 < n) {
			hi = hex_digit(s[i + 1]);
			lo = hex_digit(s[i + 2]);
		}
		if (hi >= 0 && lo >= 0) {
			buf_putc(&b, (char) (hi * 16 + lo));
			i += 2;
		} else
			buf_putc(&b, s[i]);
	}
	return buf_steal(&b);
}

/*
 * A URI: the password of "user:password@" and of a "password=" parameter.
 * libpq ends the user info at the first "@" before any "/"; the last one is
 * taken here, so that a password holding an unencoded "@" is hidden whole.
 */
static void
uri_spans(const char *s, spans *sp)
{
	size_t start = uri_prefix(s), end = start + strcspn(s + start, "/"), at = 0;
	const char *q;

	sp->uri = true;
	for (size_t i = start; i < end; i++)
		if (s[i] == '@')
			at = i;
	if (at > 0) {
		const char *colon = memchr(s + start, ':', at - start);

		if (colon)
			add_span(sp, (size_t) (colon + 1 - s), at - (size_t) (colon + 1 - s));
	}
	/* Parameters, whose names libpq percent-decodes too. */
	for (q = strchr(s + (at > 0 ? at : start), '?'); q; ) {
		const char *name = q + 1, *amp = name + strcspn(name, "&");
		const char *eq = memchr(name, '=', (size_t) (amp - name));

		if (eq) {
			char *key = percent_decode(name, (size_t) (eq - name));

			if (strcasecmp(key, "password") == 0)
				add_span(sp, (size_t) (eq + 1 - s), (size_t) (amp - eq - 1));
			free(key);
		}
		q = *amp ? amp : NULL;
	}
}

/* The end of a keyword's value: '…' quoted, or up to a blank; a backslash
 * escapes the next character in both. */
static const char *
skip_value(const char *p)
{
	bool quoted = *p == '\'';

	if (quoted)
		p++;
	while (*p) {
		if (*p == '\\' && p[1]) {
			p += 2;
			continue;
		}
		if (quoted ? *p == '\'' : isspace((unsigned char) *p))
			break;
		p++;
	}
	if (quoted && *p == '\'')
		p++;
	return p;
}

/* keyword=value pairs, as libpq's parser walks them: the password values. */
static void
keyword_spans(const char *s, spans *sp)
{
	const char *p = s;

	while (*p) {
		const char *name, *name_end, *value;

		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			break;
		name = p;
		while (*p && *p != '=' && !isspace((unsigned char) *p))
			p++;
		name_end = p;
		while (isspace((unsigned char) *p))
			p++;
		if (*p != '=')
			break;				/* libpq reads no further either */
		p++;
		while (isspace((unsigned char) *p))
			p++;
		value = p;
		p = skip_value(p);
		if (name_end - name == 8 && strncasecmp(name, "password", 8) == 0)
			add_span(sp, (size_t) (value - s), (size_t) (p - value));
	}
}

bool
pg_conninfo_is_string(const char *s)
{
	return s && (uri_prefix(s) > 0 || strchr(s, '=') != NULL);
}

static void
find_spans(const char *conninfo, spans *sp)
{
	memset(sp, 0, sizeof *sp);
	if (conninfo == NULL)
		return;
	if (uri_prefix(conninfo))
		uri_spans(conninfo, sp);
	else if (strchr(conninfo, '='))
		keyword_spans(conninfo, sp);
	/* Anything else is a database name, which libpq does not parse. */
}

char *
pg_redact_conninfo(const char *conninfo)
{
	spans sp;
	buf b = BUF_INIT;
	size_t at = 0;

	find_spans(conninfo, &sp);
	if (conninfo == NULL)
		return xstrdup("");
	for (int i = 0; i < sp.n; i++) {
		buf_append(&b, conninfo + at, sp.off[i] - at);
		buf_puts(&b, PG_REDACTED);
		at = sp.off[i] + sp.len[i];
	}
	buf_puts(&b, conninfo + at);
	return buf_steal(&b);
}

/* The words of passwords to hide, longest first. */
typedef struct words {
	char	   *w[MAX_SPANS * 8];
	int			n;
} words;

static void
add_word(words *ws, char *w)
{
	if (w[0] != '\0' && ws->n < (int) (sizeof ws->w / sizeof ws->w[0]))
		ws->w[ws->n++] = w;
	else
		free(w);
}

/* A keyword value as libpq stores it: quotes removed, escapes undone. */
static char *
unquote(const char *s, size_t n)
{
	buf b = BUF_INIT;
	size_t i = 0;

	buf_reserve(&b, n);
	if (n >= 1 && s[0] == '\'') {
		i = 1;
		if (n >= 2 && s[n - 1] == '\'')
			n--;
	}
	for (; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		buf_putc(&b, s[i]);
	}
	return buf_steal(&b);
}

/* Each "@"-separated part of a URI password, as written and decoded. */
static void
add_parts(words *ws, const char *s, size_t n)
{
	const char *end = s + n;

	for (const char *p = s; p < end; ) {
		const char *at = memchr(p, '@', (size_t) (end - p));
		const char *stop = at ? at : end;

		add_word(ws, xstrndup(p, (size_t) (stop - p)));
		add_word(ws, percent_decode(p, (size_t) (stop - p)));
		p = at ? at + 1 : end;
	}
}

static int
longer_first(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *) a), lb = strlen(*(char *const *) b);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

static void
collect_words(const char *conninfo, const spans *sp, words *ws)
{
	ws->n = 0;
	for (int i = 0; i < sp->n; i++) {
		const char *s = conninfo + sp->off[i];
		size_t n = sp->len[i];

		add_word(ws, xstrndup(s, n));
		if (sp->uri) {
			add_word(ws, percent_decode(s, n));
			if (memchr(s, '@', n))
				add_parts(ws, s, n);
		} else
			add_word(ws, unquote(s, n));
	}
	qsort(ws->w, (size_t) ws->n, sizeof ws->w[0], longer_first);
}

static bool
word_char(char c)
{
	return isalnum((unsigned char) c) || (unsigned char) c >= 0x80;
}

/*
 * A new string: text with every occurrence of what replaced by with; when
 * alone, only occurrences that are not part of a longer word.
 */
static char *
replace(const char *text, const char *what, const char *with, bool alone)
{
	buf b = BUF_INIT;
	size_t n = strlen(what);
	const char *p = text, *hit;

	for (const char *from = text; (hit = strstr(from, what)) != NULL; ) {
		bool apart = (hit == text || !word_char(hit[-1])) && !word_char(hit[n]);

		if (alone && !apart) {
			from = hit + 1;
			continue;
		}
		buf_append(&b, p, (size_t) (hit - p));
		buf_puts(&b, with);
		p = from = hit + n;
	}
	buf_puts(&b, p);
	return buf_steal(&b);
}

char *
pg_redact(const char *text, const char *conninfo)
{
	spans sp;
	words ws;
	char *out, *next;

	find_spans(conninfo, &sp);
	if (sp.n == 0)
		return xstrdup(text);
	/* The conninfo quoted whole (libpq's URI errors), then each password. */
	{
		char *redacted = pg_redact_conninfo(conninfo);

		out = replace(text, conninfo, redacted, false);
		free(redacted);
	}
	collect_words(conninfo, &sp, &ws);
	for (int i = 0; i < ws.n; i++) {
		next = replace(out, ws.w[i], PG_REDACTED, true);
		free(out);
		out = next;
		free(ws.w[i]);
	}
	return out;
}
