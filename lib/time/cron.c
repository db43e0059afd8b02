/*
 * cron — see cron.h. Each field becomes a bit set; cron_next walks local
 * wall time a field at a time (month, day, hour, minute), never minute by
 * minute, and maps wall time back to instants one stretch of constant UTC
 * offset at a time. No parsing of crontab lines (commands, users, env).
 */
#include "time/cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/duration.h"
#include "util/err.h"
#include "util/xalloc.h"

#define SECS_PER_DAY	86400
#define SEARCH_SECS		(INT64_C(100) * 366 * SECS_PER_DAY)		/* 100 years */
#define OFFSET_MAX		(26 * 3600)		/* no zone is further from UTC */

struct cron_expr {
	uint64_t	minutes;		/* bit m: minute m, 0-59 */
	uint32_t	hours;			/* bit h: hour h, 0-23 */
	uint32_t	mdays;			/* bit d: day of month d, 1-31 */
	uint32_t	months;			/* bit m: month m, 1-12 */
	uint32_t	wdays;			/* bit w: weekday w, 0-6, 0 = Sunday */
	bool		day_and;		/* a day field starts with '*': days must match both */
	bool		never;			/* no date can match (30 February) */
	bool		fixed;			/* one minute and one hour */
	int64_t		every;			/* @every: the period in seconds; 0 for a cron expression */
	int64_t		anchor;			/* @every: an instant it fires at (0: the epoch) */
};

typedef struct field_spec {
	const char *name;
	int			low;
	int			high;
	const char *const *names;	/* three-letter names, or NULL */
	int			names_base;		/* value of names[0] */
} field_spec;

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL
};

static const char *const wday_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL
};

enum {
	F_MINUTE, F_HOUR, F_MDAY, F_MONTH, F_WDAY, NFIELDS
};

static const field_spec fields[NFIELDS] = {
	{"minute", 0, 59, NULL, 0},
	{"hour", 0, 23, NULL, 0},
	{"day of month", 1, 31, NULL, 0},
	{"month", 1, 12, month_names, 1},
	{"day of week", 0, 7, wday_names, 0},
};

static const struct
{
	const char *name;
	const char *expansion;
}			macros[] = {
	{"@yearly", "0 0 1 1 *"},
	{"@annually", "0 0 1 1 *"},
	{"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"},
	{"@daily", "0 0 * * *"},
	{"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
};

static bool
is_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static bool
is_alpha(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int
to_lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static bool
equal_nocase(const char *a, size_t alen, const char *b)
{
	size_t		blen = strlen(b);

	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (to_lower((unsigned char) a[i]) != to_lower((unsigned char) b[i]))
			return false;
	return true;
}

/*
 * Copy user text into out for a message: at most 32 bytes of it, bytes
 * outside printable ASCII as \xNN, "..." when cut.
 */
static void
quote_text(char *out, size_t outlen, const char *s, size_t len)
{
	size_t		o = 0;
	size_t		n = len > 32 ? 32 : len;

	for (size_t i = 0; i < n && o + 5 < outlen; i++) {
		unsigned char ch = (unsigned char) s[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
			out[o++] = (char) ch;
		else
			o += (size_t) snprintf(out + o, outlen - o, "\\x%02x", ch);
	}
	if (n < len && o + 4 <= outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* State while parsing one field; `err` messages get the field name prefixed. */
typedef struct field_parser {
	const field_spec *spec;
	const char *s;
	size_t		len;
	size_t		pos;
	char	   *err;
	size_t		errlen;
} field_parser;

static bool fail(field_parser *fp, const char *fmt, ...)
			__attribute__((format(printf, 2, 3)));

/* Report a field error; always returns false. */
static bool
fail(field_parser *fp, const char *fmt, ...)
{
	char		msg[160];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cq_errbuf(fp->err, fp->errlen, "%s: %s", fp->spec->name, msg);
	return false;
}

static int
peek(const field_parser *fp)
{
	return fp->pos < fp->len ? (unsigned char) fp->s[fp->pos] : -1;
}

/* Explain a character that cannot start or continue what was expected. */
static bool
fail_char(field_parser *fp, const char *context)
{
	int			ch = peek(fp);
	char		q[8];

	switch (ch) {
		case -1:
		case ',':
			return fail(fp, "%s", context);
		case '~':
			return fail(fp, "\"~\" random ranges are not supported");
		case '#':
		case '?':
			return fail(fp, "\"%c\" is not supported", ch);
		default:
			{
				char		c = (char) ch;

				quote_text(q, sizeof(q), &c, 1);
				return fail(fp, "unexpected character \"%s\"", q);
			}
	}
}

/* Is s[0..len) a Quartz day letter: L, W or LW, in any case? */
static bool
is_quartz_letters(const char *s, size_t len)
{
	return equal_nocase(s, len, "L") || equal_nocase(s, len, "W") ||
		equal_nocase(s, len, "LW");
}

/*
 * One value: a number or, where the field has them, a name. *text and *tlen
 * receive the token as written, for messages about ranges.
 */
static bool
parse_value(field_parser *fp, const char *context, int *value,
			const char **text, int *tlen)
{
	const field_spec *f = fp->spec;
	size_t		start = fp->pos;
	size_t		ndigits = 0;
	size_t		len;
	const char *tok = fp->s + start;
	int			shown;

	while (fp->pos < fp->len && (is_digit(peek(fp)) || is_alpha(peek(fp)))) {
		if (is_digit(peek(fp)) && ndigits == fp->pos - start)
			ndigits++;
		fp->pos++;
	}
	len = fp->pos - start;
	if (len == 0)
		return fail_char(fp, context);
	shown = len > 32 ? 32 : (int) len;
	*text = tok;
	*tlen = shown;

	if (ndigits == len) {
		long		v = 0;

		for (size_t i = 0; i < len && v <= 1000; i++)
			v = v * 10 + (tok[i] - '0');
		if (v < f->low || v > f->high)
			return fail(fp, "%.*s%s is out of range %d-%d", shown, tok,
						len > 32 ? "..." : "", f->low, f->high);
		*value = (int) v;
		return true;
	}
	if (ndigits > 0 && is_quartz_letters(tok + ndigits, len - ndigits))
		return fail(fp, "\"%.*s\" is not supported", (int) (len - ndigits), tok + ndigits);
	if (ndigits == 0 && f->names != NULL) {
		for (int i = 0; f->names[i] != NULL; i++) {
			if (equal_nocase(tok, len, f->names[i])) {
				*value = f->names_base + i;
				return true;
			}
		}
	}
	if (ndigits == 0 && is_quartz_letters(tok, len))
		return fail(fp, "\"%.*s\" is not supported", (int) len, tok);
	if (f->names != NULL)
		return fail(fp, "\"%.*s%s\" is not a valid name", shown, tok, len > 32 ? "..." : "");
	return fail(fp, "\"%.*s%s\" is not a number", shown, tok, len > 32 ? "..." : "");
}

/*
 * A step after '/': from 1 to the width of the field. A step of 60 on the
 * minutes is allowed and means minute 0 alone, as in Vixie cron; a larger
 * one is surely a mistake.
 */
static bool
parse_step(field_parser *fp, int *step)
{
	const field_spec *f = fp->spec;
	size_t		start = fp->pos;
	size_t		len;
	long		v = 0;
	int			width = f->high - f->low + 1;

	while (fp->pos < fp->len && (is_digit(peek(fp)) || is_alpha(peek(fp))))
		fp->pos++;
	len = fp->pos - start;
	if (len == 0)
		return fail_char(fp, "missing step after \"/\"");
	for (size_t i = 0; i < len; i++) {
		if (!is_digit((unsigned char) fp->s[start + i]))
			return fail(fp, "step \"%.*s%s\" is not a number", len > 32 ? 32 : (int) len,
						fp->s + start, len > 32 ? "..." : "");
		if (v <= 1000)
			v = v * 10 + (fp->s[start + i] - '0');
	}
	if (v < 1 || v > width)
		return fail(fp, "step %.*s%s is out of range 1-%d", len > 32 ? 32 : (int) len,
					fp->s + start, len > 32 ? "..." : "", width);
	*step = (int) v;
	return true;
}

/*
 * field = item {"," item}; item = ("*" | value ["-" value]) ["/" step].
 * As in cronie, "N/step" means N to the field's maximum, by step.
 */
static bool
parse_field(field_parser *fp, uint64_t *bits)
{
	const field_spec *f = fp->spec;

	*bits = 0;
	for (;;) {
		int			lo,
					hi,
					step = 1;

		if (peek(fp) == '*') {
			fp->pos++;
			lo = f->low;
			hi = f->high;
			if (peek(fp) != '/' && peek(fp) != ',' && peek(fp) != -1)
				return fail_char(fp, "");
		} else {
			const char *t1;
			int			l1;

			if (!parse_value(fp, "empty item in list", &lo, &t1, &l1))
				return false;
			hi = lo;
			if (peek(fp) == '-') {
				const char *t2;
				int			l2;
				char		ctx[64];

				snprintf(ctx, sizeof(ctx), "range \"%.*s-\" has no end", l1, t1);
				fp->pos++;
				if (!parse_value(fp, ctx, &hi, &t2, &l2))
					return false;
				if (lo > hi)
					return fail(fp, "range %.*s-%.*s is reversed", l1, t1, l2, t2);
			} else if (peek(fp) == '/')
				hi = f->high;
		}
		if (peek(fp) == '/') {
			fp->pos++;
			if (!parse_step(fp, &step))
				return false;
		}
		for (int v = lo; v <= hi; v += step)
			*bits |= UINT64_C(1) << v;

		if (peek(fp) == -1)
			return true;
		if (peek(fp) != ',')
			return fail_char(fp, "");
		fp->pos++;
		if (peek(fp) == -1 || peek(fp) == ',')
			return fail(fp, "empty item in list");
	}
}

/* Can some month in the set hold some day of month in the set? */
static bool
dates_possible(uint32_t months, uint32_t mdays)
{
	static const int max_days[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	for (int m = 1; m <= 12; m++) {
		uint32_t	upto = (uint32_t) ((UINT64_C(1) << (max_days[m] + 1)) - 2);

		if ((months & (UINT32_C(1) << m)) && (mdays & upto))
			return true;
	}
	return false;
}

static int
popcount64(uint64_t x)
{
	int			n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/*
 * "@every D": D the rest of the expression, any duration duration_parse
 * reads ("90m", "1.5h", "2 hours 30 minutes"; a run of whitespace counts as
 * one space), whole seconds, from CRON_EVERY_MIN up. NULL d: no duration.
 * The database's check (cronq.cron_error, 0020) reads the same grammar.
 */
static cron_expr *
parse_every(const char *d, char *err, size_t errlen)
{
	char		text[64];
	char		q[160];
	char		why[256];
	size_t		n = 0;
	int64_t		ms;
	cron_expr  *e;

	if (d == NULL) {
		cq_errbuf(err, errlen, "@every needs a duration, such as @every 90m");
		return NULL;
	}
	for (const char *p = d; *p; p++) {
		bool		space = is_space((unsigned char) *p);

		if (space && (p[1] == '\0' || is_space((unsigned char) p[1])))
			continue;
		if (n + 1 >= sizeof(text)) {
			quote_text(q, sizeof(q), d, strlen(d));
			cq_errbuf(err, errlen, "@every: invalid duration \"%s\"", q);
			return NULL;
		}
		text[n++] = space ? ' ' : *p;
	}
	text[n] = '\0';
	quote_text(q, sizeof(q), text, n);
	if (duration_parse(text, &ms, why, sizeof(why)) != 0) {
		cq_errbuf(err, errlen, "@every: %s", why);
		return NULL;
	}
	if (ms % 1000 != 0) {
		cq_errbuf(err, errlen, "@every: %s is not a whole number of seconds", q);
		return NULL;
	}
	if (ms < CRON_EVERY_MIN * 1000) {
		cq_errbuf(err, errlen, "@every: %s is shorter than 1 minute", q);
		return NULL;
	}
	e = xcalloc(1, sizeof(cron_expr));
	e->every = ms / 1000;
	return e;
}

cron_expr *
cron_parse(const char *text, char *err, size_t errlen)
{
	const char *tok[NFIELDS];
	size_t		toklen[NFIELDS];
	size_t		ntok = 0;
	uint64_t	bits[NFIELDS];
	cron_expr  *e;

	for (const char *p = text; *p;) {
		const char *start;

		while (*p && is_space((unsigned char) *p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p && !is_space((unsigned char) *p))
			p++;
		if (ntok < NFIELDS) {
			tok[ntok] = start;
			toklen[ntok] = (size_t) (p - start);
		}
		ntok++;
	}
	if (ntok == 0) {
		cq_errbuf(err, errlen, "empty expression");
		return NULL;
	}

	if (tok[0][0] == '@') {
		char		q[160];

		if (equal_nocase(tok[0], toklen[0], "@every"))
			return parse_every(ntok > 1 ? tok[1] : NULL, err, errlen);

		for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++) {
			if (!equal_nocase(tok[0], toklen[0], macros[i].name))
				continue;
			if (ntok > 1) {
				cq_errbuf(err, errlen, "unexpected text after %s", macros[i].name);
				return NULL;
			}
			return cron_parse(macros[i].expansion, err, errlen);
		}
		if (equal_nocase(tok[0], toklen[0], "@reboot")) {
			cq_errbuf(err, errlen, "@reboot is not supported");
			return NULL;
		}
		quote_text(q, sizeof(q), tok[0], toklen[0]);
		cq_errbuf(err, errlen, "unrecognized macro \"%s\"", q);
		return NULL;
	}

	if (ntok != NFIELDS) {
		cq_errbuf(err, errlen, "expected 5 fields, got %zu", ntok);
		return NULL;
	}
	for (int i = 0; i < NFIELDS; i++) {
		field_parser fp = {&fields[i], tok[i], toklen[i], 0, err, errlen};

		if (!parse_field(&fp, &bits[i]))
			return NULL;
	}

	e = xcalloc(1, sizeof(cron_expr));
	e->minutes = bits[F_MINUTE];
	e->hours = (uint32_t) bits[F_HOUR];
	e->mdays = (uint32_t) bits[F_MDAY];
	e->months = (uint32_t) bits[F_MONTH];
	e->wdays = (uint32_t) (bits[F_WDAY] & 0x7f);
	if (bits[F_WDAY] & (1u << 7))
		e->wdays |= 1;			/* 7 is Sunday too */
	e->day_and = tok[F_MDAY][0] == '*' || tok[F_WDAY][0] == '*';
	e->never = e->day_and && !dates_possible(e->months, e->mdays);
	e->fixed = popcount64(e->minutes) == 1 && popcount64(e->hours) == 1;
	return e;
}

void
cron_free(cron_expr *e)
{
	free(e);
}

bool
cron_is_fixed_time(const cron_expr *e)
{
	return e->fixed;
}

int64_t
cron_every(const cron_expr *e)
{
	return e->every;
}

void
cron_set_anchor(cron_expr *e, int64_t anchor)
{
	e->anchor = anchor;
}

/* ---- matching and searching --------------------------------------------- */

static bool
day_matches(const cron_expr *e, int mday, int wday)
{
	bool		dm = (e->mdays >> mday) & 1;
	bool		wm = (e->wdays >> wday) & 1;

	return e->day_and ? dm && wm : dm || wm;
}

bool
cron_matches_local(const cron_expr *e, const struct tz_tm *local)
{
	if (e->every > 0) {
		int64_t		t = tz_days_from_civil(local->year, local->mon, local->mday) * SECS_PER_DAY +
			local->hour * 3600 + local->min * 60 - local->utoff;

		/* The minute holds a fire time when one falls in [t, t + 60). */
		return tz_floor_div(t + 59 - e->anchor, e->every) * e->every + e->anchor >= t;
	}
	if (local->mon < 1 || local->mon > 12 || local->mday < 1 || local->mday > 31 ||
		local->wday < 0 || local->wday > 6 || local->hour < 0 || local->hour > 23 ||
		local->min < 0 || local->min > 59)
		return false;
	return ((e->months >> local->mon) & 1) &&
		day_matches(e, local->mday, local->wday) &&
		((e->hours >> local->hour) & 1) &&
		((e->minutes >> local->min) & 1);
}

/* A calendar day being walked forward. */
typedef struct day_cursor {
	int64_t		days;			/* since 1970-01-01 */
	int64_t		year;
	int			mon;
	int			mday;
} day_cursor;

static void
next_day(day_cursor *d)
{
	d->days++;
	if (++d->mday > tz_month_days(d->year, d->mon)) {
		d->mday = 1;
		if (++d->mon > 12) {
			d->mon = 1;
			d->year++;
		}
	}
}

static void
next_month(day_cursor *d)
{
	d->days += tz_month_days(d->year, d->mon) - d->mday + 1;
	d->mday = 1;
	if (++d->mon > 12) {
		d->mon = 1;
		d->year++;
	}
}

/*
 * The first wall time (seconds since the epoch read on the local clock) at
 * or after `from`, on a whole minute, that matches e and is not after
 * `limit`. Walks a month, a day or an hour at a time when a field fails.
 */
static bool
next_wall(const cron_expr *e, int64_t from, int64_t limit, int64_t *out)
{
	day_cursor	d;
	int64_t		secs;
	int64_t		limit_days = tz_floor_div(limit, SECS_PER_DAY);
	int			hour,
				min;

	from = tz_floor_div(from + 59, 60) * 60;
	d.days = tz_floor_div(from, SECS_PER_DAY);
	secs = from - d.days * SECS_PER_DAY;
	hour = (int) (secs / 3600);
	min = (int) (secs / 60 % 60);
	tz_civil_from_days(d.days, &d.year, &d.mon, &d.mday);

	while (d.days <= limit_days) {
		uint32_t	hours;
		uint64_t	mins;
		int64_t		wall;

		if (!((e->months >> d.mon) & 1)) {
			next_month(&d);
			hour = min = 0;
			continue;
		}
		if (!day_matches(e, d.mday, (int) (d.days + 4 - tz_floor_div(d.days + 4, 7) * 7))) {
			next_day(&d);
			hour = min = 0;
			continue;
		}
		hours = e->hours & (UINT32_MAX << hour);
		if (hours == 0) {
			next_day(&d);
			hour = min = 0;
			continue;
		}
		if (__builtin_ctz(hours) != hour) {
			hour = __builtin_ctz(hours);
			min = 0;
		}
		mins = e->minutes & (UINT64_MAX << min);
		if (mins == 0) {
			min = 0;
			if (++hour == 24) {
				next_day(&d);
				hour = 0;
			}
			continue;
		}
		min = __builtin_ctzll(mins);
		wall = d.days * SECS_PER_DAY + hour * 3600 + min * 60;
		if (wall > limit)
			return false;
		*out = wall;
		return true;
	}
	return false;
}

/*
 * The first instant at which the local clock reads `wall` or later: the
 * first of two when the wall time repeats, the end of the gap when it is
 * skipped. Offsets stay within OFFSET_MAX, so no instant before
 * wall - OFFSET_MAX - 1h can qualify.
 */
static int64_t
first_reach(const tz *zone, int64_t wall)
{
	int64_t		t = wall - OFFSET_MAX - 3600;

	for (;;) {
		int64_t		until;
		int			off = tz_offset_until(zone, t, &until);

		if (t + off >= wall)
			return t;
		if (wall - off < until)
			return wall - off;
		t = until;
	}
}

/* cron_next for fixed-time expressions: one fire per matching local day. */
static int
next_fixed(const cron_expr *e, const tz *zone, int64_t after, int64_t limit,
		   int64_t *next)
{
	/*
	 * Any wall time the clock had reached by `after` first occurred by then,
	 * so the search starts past the wall time of `after`; a fall-back can
	 * still put the first occurrence of a later wall time before `after`.
	 */
	int64_t		from = after + tz_offset_at(zone, after) + 1;
	int64_t		wall;

	while (next_wall(e, from, limit + OFFSET_MAX, &wall)) {
		int64_t		t = first_reach(zone, wall);

		if (t > limit)
			return -1;
		if (t > after) {
			*next = t;
			return 0;
		}
		from = wall + 60;
	}
	return -1;
}

/* cron_next for the rest: every instant whose wall time matches. */
static int
next_any(const cron_expr *e, const tz *zone, int64_t after, int64_t limit,
		 int64_t *next)
{
	int64_t		t = after + 1;

	while (t <= limit) {
		int64_t		until;
		int			off = tz_offset_until(zone, t, &until);
		int64_t		last = until - 1 < limit ? until - 1 : limit;
		int64_t		wall;

		if (next_wall(e, t + off, last + off, &wall)) {
			*next = wall - off;
			return 0;
		}
		if (until > limit)
			break;
		t = until;
	}
	return -1;
}

/* cron_next for @every: the next anchor + k * every, whatever the zone. */
static int
next_every(const cron_expr *e, int64_t after, int64_t *next)
{
	int64_t		t = (tz_floor_div(after - e->anchor, e->every) + 1) * e->every + e->anchor;

	if (t > CRON_TIME_MAX || t - after > SEARCH_SECS)
		return -1;
	*next = t;
	return 0;
}

int
cron_next(const cron_expr *e, const tz *zone, int64_t after, int64_t *next)
{
	int64_t		limit;

	if (e->every > 0) {
		if (after >= CRON_TIME_MAX)
			return -1;
		if (after < CRON_TIME_MIN)
			after = CRON_TIME_MIN - 1;
		return next_every(e, after, next);
	}
	if (e->never || after >= CRON_TIME_MAX)
		return -1;
	if (after < CRON_TIME_MIN)
		after = CRON_TIME_MIN - 1;
	limit = after > CRON_TIME_MAX - SEARCH_SECS ? CRON_TIME_MAX : after + SEARCH_SECS;
	if (e->fixed)
		return next_fixed(e, zone, after, limit, next);
	return next_any(e, zone, after, limit, next);
}

