/*
 * tz — see tz.h. Reads TZif version 1 to 4 (the 64-bit block when there is
 * one) and evaluates the POSIX TZ footer past the last transition. Every
 * length and count in a file is checked before use: a file is untrusted
 * input. Time zone abbreviations and leap seconds are deliberately ignored.
 */
#include "time/tz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/xalloc.h"

#define TZ_DEFAULT_DIR	"/usr/share/zoneinfo"
#define TZ_NAME_MAX		255
#define TZ_FILE_MAX		(1024 * 1024)	/* real files are under 4 kB */
#define TZ_OFFSET_MAX	(26 * 3600)		/* RFC 8536: -25:59:59 to 25:59:59 */

/*
 * Instants are clamped to +-2^55 s (about a billion years) so that every sum
 * of an instant, an offset and a few days' worth of seconds stays far from
 * int64_t overflow, and every year fits an int.
 */
#define TZ_TIME_LIMIT	(INT64_C(1) << 55)

#define SECS_PER_DAY	86400

/* One end of a daylight saving period in a POSIX TZ rule. */
typedef struct tz_rule_date {
	char		kind;			/* 'J' (1-365, no 29 Feb), 'D' (0-365), 'M' */
	int			n;				/* day for 'J' and 'D' */
	int			mon;			/* 'M': month 1-12 */
	int			week;			/* 'M': week 1-5, 5 = last */
	int			wday;			/* 'M': weekday 0-6, 0 = Sunday */
	int32_t		secs;			/* local time of day, -167h to 167h */
} tz_rule_date;

typedef struct tz_rule {
	int32_t		std_off;		/* seconds east of UTC */
	int32_t		dst_off;
	bool		has_dst;
	tz_rule_date start;			/* switch to dst_off, read on std time */
	tz_rule_date end;			/* switch back, read on daylight time */
} tz_rule;

struct tz {
	char	   *name;
	size_t		ntrans;
	int64_t    *trans;			/* strictly ascending transition instants */
	int32_t    *trans_off;		/* offset in effect from trans[i] on */
	int32_t		initial_off;	/* before the first transition */
	bool		has_rule;		/* footer rule applies from trans[ntrans-1] */
	tz_rule		rule;
};

int64_t
tz_floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if ((a % b) < 0)
		q--;
	return q;
}

static int64_t
clamp_time(int64_t t)
{
	if (t > TZ_TIME_LIMIT)
		return TZ_TIME_LIMIT;
	if (t < -TZ_TIME_LIMIT)
		return -TZ_TIME_LIMIT;
	return t;
}

bool
tz_is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int
tz_month_days(int64_t y, int m)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && tz_is_leap(y) ? 29 : days[m - 1];
}

/* Howard Hinnant's days_from_civil, on int64_t. */
int64_t
tz_days_from_civil(int64_t year, int mon, int mday)
{
	int64_t		y = year - (mon <= 2);
	int64_t		era = (y >= 0 ? y : y - 399) / 400;
	int64_t		yoe = y - era * 400;
	int64_t		doy = (153 * (mon > 2 ? mon - 3 : mon + 9) + 2) / 5 + mday - 1;
	int64_t		doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

void
tz_civil_from_days(int64_t days, int64_t *year, int *mon, int *mday)
{
	int64_t		z = days + 719468;
	int64_t		era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t		doe = z - era * 146097;
	int64_t		yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t		doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t		mp = (5 * doy + 2) / 153;
	int			m = (int) (mp < 10 ? mp + 3 : mp - 9);

	*mday = (int) (doy - (153 * mp + 2) / 5 + 1);
	*mon = m;
	*year = yoe + era * 400 + (m <= 2);
}

void
tz_break_down(int64_t t, int utoff, struct tz_tm *out)
{
	int64_t		local = clamp_time(t) + utoff;
	int64_t		days = tz_floor_div(local, SECS_PER_DAY);
	int64_t		secs = local - days * SECS_PER_DAY;
	int64_t		year;

	tz_civil_from_days(days, &year, &out->mon, &out->mday);
	out->year = (int) year;
	out->hour = (int) (secs / 3600);
	out->min = (int) (secs / 60 % 60);
	out->sec = (int) (secs % 60);
	out->wday = (int) (days + 4 - tz_floor_div(days + 4, 7) * 7);
	out->yday = (int) (days - tz_days_from_civil(year, 1, 1));
	out->utoff = utoff;
}

/* ---- POSIX TZ rules ---------------------------------------------------- */

/* Instant at which a rule date falls in `year`, read on a clock at utoff. */
static int64_t
rule_instant(const tz_rule_date *r, int64_t year, int32_t utoff)
{
	int64_t		day;

	switch (r->kind) {
		case 'J':
			day = tz_days_from_civil(year, 1, 1) + r->n - 1;
			if (tz_is_leap(year) && r->n >= 60)
				day++;
			break;
		case 'D':
			day = tz_days_from_civil(year, 1, 1) + r->n;
			break;
		default:
			{
				int64_t		first = tz_days_from_civil(year, r->mon, 1);
				int			first_wday = (int) (first + 4 - tz_floor_div(first + 4, 7) * 7);
				int			mday = 1 + (r->wday - first_wday + 7) % 7 + 7 * (r->week - 1);

				if (mday > tz_month_days(year, r->mon))
					mday -= 7;
				day = first + mday - 1;
			}
			break;
	}
	return day * SECS_PER_DAY + r->secs - utoff;
}

typedef struct rule_event {
	int64_t		at;
	bool		to_dst;
} rule_event;

/*
 * Offset the rule gives at t, with the next instant after t at which it
 * changes. Transitions of the years around t are listed in rule order and
 * stably sorted, so that a DST period ending exactly where the next begins
 * (all-year DST, "EST5EDT,0/0,J365/25") never shows a spurious change.
 */
static int
rule_offset_until(const tz_rule *r, int64_t t, int64_t *until)
{
	rule_event	ev[8];
	int64_t		year;
	int			mon,
				mday;
	bool		dst = false;
	int			off;

	*until = INT64_MAX;
	if (!r->has_dst || r->std_off == r->dst_off)
		return r->std_off;

	tz_civil_from_days(tz_floor_div(t + r->std_off, SECS_PER_DAY), &year, &mon, &mday);
	for (int k = 0; k < 4; k++) {
		ev[2 * k].at = rule_instant(&r->start, year - 1 + k, r->std_off);
		ev[2 * k].to_dst = true;
		ev[2 * k + 1].at = rule_instant(&r->end, year - 1 + k, r->dst_off);
		ev[2 * k + 1].to_dst = false;
	}
	for (int i = 1; i < 8; i++) {
		rule_event	e = ev[i];
		int			j = i;

		while (j > 0 && ev[j - 1].at > e.at) {
			ev[j] = ev[j - 1];
			j--;
		}
		ev[j] = e;
	}

	for (int i = 0; i < 8 && ev[i].at <= t; i++)
		dst = ev[i].to_dst;
	off = dst ? r->dst_off : r->std_off;
	for (int i = 0; i < 8; i++) {
		if (ev[i].at > t && ev[i].to_dst != dst) {
			*until = ev[i].at;
			break;
		}
	}
	return off;
}

/* A cursor over a rule string that need not be NUL-terminated. */
typedef struct rule_cursor {
	const char *s;
	size_t		len;
	size_t		pos;
} rule_cursor;

static int
cur_peek(const rule_cursor *c)
{
	return c->pos < c->len ? (unsigned char) c->s[c->pos] : -1;
}

static bool
cur_is_digit(const rule_cursor *c)
{
	int			ch = cur_peek(c);

	return ch >= '0' && ch <= '9';
}

static bool
cur_is_alpha(const rule_cursor *c)
{
	int			ch = cur_peek(c);

	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* An unsigned number of at most `maxdigits` digits, no larger than max. */
static bool
parse_uint(rule_cursor *c, int maxdigits, int max, int *out)
{
	int			v = 0;
	int			n = 0;

	while (cur_is_digit(c)) {
		if (++n > maxdigits)
			return false;
		v = v * 10 + (cur_peek(c) - '0');
		c->pos++;
	}
	if (n == 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* A zone abbreviation: at least three letters, or <...> of [A-Za-z0-9+-]. */
static bool
parse_abbr(rule_cursor *c)
{
	size_t		start;

	if (cur_peek(c) == '<') {
		c->pos++;
		start = c->pos;
		while (c->pos < c->len && c->s[c->pos] != '>') {
			int			ch = cur_peek(c);

			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				  (ch >= '0' && ch <= '9') || ch == '+' || ch == '-'))
				return false;
			c->pos++;
		}
		if (cur_peek(c) != '>' || c->pos - start < 3)
			return false;
		c->pos++;
		return true;
	}
	start = c->pos;
	while (cur_is_alpha(c))
		c->pos++;
	return c->pos - start >= 3;
}

/* [+-]hh[:mm[:ss]] with hh <= maxhours, as seconds. */
static bool
parse_hms(rule_cursor *c, int maxhours, int32_t *out)
{
	int			sign = 1;
	int			h,
				m = 0,
				s = 0;

	if (cur_peek(c) == '+' || cur_peek(c) == '-') {
		sign = cur_peek(c) == '-' ? -1 : 1;
		c->pos++;
	}
	if (!parse_uint(c, 3, maxhours, &h))
		return false;
	if (cur_peek(c) == ':') {
		c->pos++;
		if (!parse_uint(c, 2, 59, &m))
			return false;
		if (cur_peek(c) == ':') {
			c->pos++;
			if (!parse_uint(c, 2, 59, &s))
				return false;
		}
	}
	*out = sign * (h * 3600 + m * 60 + s);
	return true;
}

static bool
parse_rule_date(rule_cursor *c, tz_rule_date *d)
{
	d->secs = 2 * 3600;
	if (cur_peek(c) == 'J') {
		c->pos++;
		d->kind = 'J';
		if (!parse_uint(c, 3, 365, &d->n) || d->n < 1)
			return false;
	} else if (cur_peek(c) == 'M') {
		c->pos++;
		d->kind = 'M';
		if (!parse_uint(c, 2, 12, &d->mon) || d->mon < 1 || cur_peek(c) != '.')
			return false;
		c->pos++;
		if (!parse_uint(c, 1, 5, &d->week) || d->week < 1 || cur_peek(c) != '.')
			return false;
		c->pos++;
		if (!parse_uint(c, 1, 6, &d->wday))
			return false;
	} else {
		d->kind = 'D';
		if (!parse_uint(c, 3, 365, &d->n))
			return false;
	}
	if (cur_peek(c) == '/') {
		c->pos++;
		if (!parse_hms(c, 167, &d->secs))
			return false;
	}
	return true;
}

/*
 * Parse a POSIX TZ rule such as "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0".
 * A daylight name without dates takes the US rules, as glibc does.
 */
static bool
parse_rule(const char *s, size_t len, tz_rule *r)
{
	rule_cursor c = {s, len, 0};
	int32_t		off;

	memset(r, 0, sizeof(*r));
	if (!parse_abbr(&c) || !parse_hms(&c, 24, &off))
		return false;
	r->std_off = -off;
	r->dst_off = r->std_off;
	if (c.pos == c.len)
		return true;

	if (!parse_abbr(&c))
		return false;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (cur_is_digit(&c) || cur_peek(&c) == '+' || cur_peek(&c) == '-') {
		if (!parse_hms(&c, 24, &off))
			return false;
		r->dst_off = -off;
	}
	if (c.pos == c.len) {
		r->start = (tz_rule_date) {'M', 0, 3, 2, 0, 2 * 3600};
		r->end = (tz_rule_date) {'M', 0, 11, 1, 0, 2 * 3600};
		return true;
	}
	if (cur_peek(&c) != ',')
		return false;
	c.pos++;
	if (!parse_rule_date(&c, &r->start) || cur_peek(&c) != ',')
		return false;
	c.pos++;
	if (!parse_rule_date(&c, &r->end))
		return false;
	return c.pos == c.len;
}

/* ---- TZif files --------------------------------------------------------- */

typedef struct tzif_header {
	uint32_t	isutcnt;
	uint32_t	isstdcnt;
	uint32_t	leapcnt;
	uint32_t	timecnt;
	uint32_t	typecnt;
	uint32_t	charcnt;
} tzif_header;

#define TZIF_HEADER_LEN 44

static uint32_t
get_be32(const unsigned char *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static int64_t
get_be64(const unsigned char *p)
{
	return (int64_t) ((uint64_t) get_be32(p) << 32 | get_be32(p + 4));
}

static bool
read_header(const unsigned char *p, size_t len, tzif_header *h)
{
	if (len < TZIF_HEADER_LEN || memcmp(p, "TZif", 4) != 0)
		return false;
	h->isutcnt = get_be32(p + 20);
	h->isstdcnt = get_be32(p + 24);
	h->leapcnt = get_be32(p + 28);
	h->timecnt = get_be32(p + 32);
	h->typecnt = get_be32(p + 36);
	h->charcnt = get_be32(p + 40);
	return true;
}

/* Length of the data block after a header, with times of `tsize` bytes. */
static uint64_t
block_len(const tzif_header *h, int tsize)
{
	return (uint64_t) h->timecnt * (uint64_t) (tsize + 1) +
		(uint64_t) h->typecnt * 6 +
		(uint64_t) h->charcnt +
		(uint64_t) h->leapcnt * (uint64_t) (tsize + 4) +
		(uint64_t) h->isstdcnt +
		(uint64_t) h->isutcnt;
}

/*
 * Fill zone from TZif bytes; on failure return a short reason for the
 * caller's message (arrays already allocated are freed by tz_free).
 */
static const char *
parse_tzif(tz *zone, const unsigned char *p, size_t len)
{
	tzif_header h;
	const unsigned char *data;
	const unsigned char *types;
	uint64_t	blen;
	int			tsize = 4;
	int32_t		offs[256];

	if (!read_header(p, len, &h))
		return "not a TZif file";
	blen = block_len(&h, 4);
	if (blen > len - TZIF_HEADER_LEN)
		return "truncated data";
	data = p + TZIF_HEADER_LEN;

	if (p[4] != '\0') {
		/* Version 2 and later: skip to the second, 64-bit, header. */
		size_t		off2 = TZIF_HEADER_LEN + (size_t) blen;

		if (p[4] < '2')
			return "unknown version";
		if (!read_header(p + off2, len - off2, &h))
			return "missing second header";
		blen = block_len(&h, 8);
		if (blen > len - off2 - TZIF_HEADER_LEN)
			return "truncated data";
		data = p + off2 + TZIF_HEADER_LEN;
		tsize = 8;
	}

	if (h.typecnt == 0 || h.typecnt > 256 || h.charcnt == 0)
		return "bad counts";
	if ((h.isstdcnt != 0 && h.isstdcnt != h.typecnt) ||
		(h.isutcnt != 0 && h.isutcnt != h.typecnt))
		return "bad counts";
	if (h.leapcnt != 0)
		return "leap seconds are not supported";

	types = data + (size_t) h.timecnt * (size_t) (tsize + 1);
	for (uint32_t i = 0; i < h.typecnt; i++) {
		int32_t		utoff = (int32_t) get_be32(types + 6 * i);

		if (utoff < -TZ_OFFSET_MAX || utoff > TZ_OFFSET_MAX)
			return "offset out of range";
		if (types[6 * i + 4] > 1 || types[6 * i + 5] >= h.charcnt)
			return "bad time type";
		offs[i] = utoff;
	}
	zone->initial_off = offs[0];

	zone->ntrans = h.timecnt;
	zone->trans = xmalloc(sizeof(int64_t) * (h.timecnt ? h.timecnt : 1));
	zone->trans_off = xmalloc(sizeof(int32_t) * (h.timecnt ? h.timecnt : 1));
	for (uint32_t i = 0; i < h.timecnt; i++) {
		const unsigned char *tp = data + (size_t) i * (size_t) tsize;
		uint8_t		idx = data[(size_t) h.timecnt * (size_t) tsize + i];

		zone->trans[i] = tsize == 8 ? get_be64(tp) : (int32_t) get_be32(tp);
		if (i > 0 && zone->trans[i] <= zone->trans[i - 1])
			return "transitions out of order";
		if (idx >= h.typecnt)
			return "bad time type index";
		zone->trans_off[i] = offs[idx];
	}

	if (tsize == 8) {
		/* The footer: "\n" rule "\n", the rule possibly empty. */
		const unsigned char *f = data + blen;
		size_t		flen = len - (size_t) (f - p);
		const unsigned char *nl;

		if (flen < 2 || f[0] != '\n')
			return "missing footer";
		nl = memchr(f + 1, '\n', flen - 1);
		if (nl == NULL)
			return "unterminated footer";
		if (nl > f + 1) {
			if (!parse_rule((const char *) f + 1, (size_t) (nl - f - 1), &zone->rule))
				return "invalid TZ rule in footer";
			zone->has_rule = true;
		}
	}
	return NULL;
}

static tz *
zone_new(const char *name)
{
	tz		   *zone = xcalloc(1, sizeof(tz));

	zone->name = xstrdup(name);
	return zone;
}

void
tz_free(tz *zone)
{
	if (zone == NULL)
		return;
	free(zone->name);
	free(zone->trans);
	free(zone->trans_off);
	free(zone);
}

tz *
tz_open_tzif(const char *name, const void *data, size_t len,
			 char *err, size_t errlen)
{
	tz		   *zone = zone_new(name);
	const char *why = parse_tzif(zone, data, len);

	if (why != NULL) {
		cq_errbuf(err, errlen, "invalid time zone data for \"%s\": %s", name, why);
		tz_free(zone);
		return NULL;
	}
	return zone;
}

tz *
tz_open_posix(const char *rule, char *err, size_t errlen)
{
	tz		   *zone;

	if (strlen(rule) > TZ_NAME_MAX) {
		cq_errbuf(err, errlen, "invalid TZ rule: too long");
		return NULL;
	}
	zone = zone_new(rule);
	if (!parse_rule(rule, strlen(rule), &zone->rule)) {
		cq_errbuf(err, errlen, "invalid TZ rule \"%s\"", rule);
		tz_free(zone);
		return NULL;
	}
	zone->has_rule = true;
	zone->initial_off = zone->rule.std_off;
	return zone;
}

/* Names as the tz database spells them: [A-Za-z0-9._+-] in /-separated parts. */
static bool
valid_zone_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > TZ_NAME_MAX || name[0] == '/' || name[len - 1] == '/' ||
		strstr(name, "..") != NULL || strstr(name, "//") != NULL)
		return false;
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char) *p;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '/' || ch == '_' ||
			  ch == '-' || ch == '+' || ch == '.'))
			return false;
		/* no part may start with '.' or '-': no hidden files, no options */
		if ((p == name || p[-1] == '/') && (ch == '.' || ch == '-'))
			return false;
	}
	return true;
}

/*
 * Read a whole regular file of at most TZ_FILE_MAX bytes. Returns 0, or an
 * errno value (EISDIR/EINVAL for something that is not a regular file,
 * EFBIG when too large).
 */
static int
read_file(const char *path, unsigned char **data, size_t *len)
{
	int			fd;
	struct stat st;
	unsigned char *buf = NULL;
	size_t		n = 0;
	int			rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0) {
		rc = errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		goto out;
	}
	if (st.st_size > TZ_FILE_MAX) {
		rc = EFBIG;
		goto out;
	}
	buf = xmalloc((size_t) st.st_size + 1);
	while (n < (size_t) st.st_size) {
		ssize_t		r = read(fd, buf + n, (size_t) st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t) r;
	}
out:
	close(fd);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*data = buf;
	*len = n;
	return 0;
}

/*
 * Names whose meaning is the host's, not the IANA database's: the system's
 * own zone, the template for POSIX rules, the "Factory" placeholder, and
 * the posix/ and right/ copies of the database (right/ counts leap
 * seconds). Two runners could read them differently, so they are refused.
 */
static bool
host_zone_name(const char *name)
{
	return strcmp(name, "localtime") == 0 || strcmp(name, "posixrules") == 0 ||
		strcmp(name, "Factory") == 0 || strncmp(name, "posix/", 6) == 0 ||
		strncmp(name, "right/", 6) == 0;
}

tz *
tz_open(const char *name, char *err, size_t errlen)
{
	const char *dir;
	char	   *path;
	unsigned char *data = NULL;
	size_t		len = 0;
	int			rc;
	tz		   *zone = NULL;

	if (strcmp(name, "UTC") == 0) {
		return zone_new(name);
	}
	if (!valid_zone_name(name)) {
		cq_errbuf(err, errlen, "invalid time zone name \"%.64s%s\"", name,
				strlen(name) > 64 ? "..." : "");
		return NULL;
	}
	if (host_zone_name(name)) {
		cq_errbuf(err, errlen, "time zone \"%s\" depends on the host: use an IANA name such as Europe/Paris",
				  name);
		return NULL;
	}

	dir = getenv("TZDIR");
	if (dir == NULL || dir[0] == '\0')
		dir = TZ_DEFAULT_DIR;
	path = xasprintf("%s/%s", dir, name);
	rc = read_file(path, &data, &len);
	if (rc == ENOENT || rc == ENOTDIR || rc == EISDIR || rc == EINVAL ||
		rc == ENAMETOOLONG || rc == ELOOP)
		cq_errbuf(err, errlen, "unrecognized time zone \"%s\"", name);
	else if (rc == EFBIG)
		cq_errbuf(err, errlen, "time zone file \"%s\" is too large", path);
	else if (rc == EACCES || rc == EPERM)
		cq_errbuf(err, errlen, "could not open time zone file \"%s\": permission denied", path);
	else if (rc != 0)
		cq_errbuf(err, errlen, "could not read time zone file \"%s\" (errno %d)", path, rc);
	else if (len < 5 || memcmp(data, "TZif", 4) != 0)
		cq_errbuf(err, errlen, "unrecognized time zone \"%s\": not a TZif file", name);
	else
		zone = tz_open_tzif(name, data, len, err, errlen);
	free(data);
	free(path);
	return zone;
}

const char *
tz_name(const tz *zone)
{
	return zone->name;
}

/* tz_offset_until for an instant already within +-TZ_TIME_LIMIT. */
static int
offset_until(const tz *zone, int64_t t, int64_t *until)
{
	size_t		lo,
				hi;

	if (zone->ntrans == 0 || t >= zone->trans[zone->ntrans - 1]) {
		if (zone->has_rule)
			return rule_offset_until(&zone->rule, t, until);
		*until = INT64_MAX;
		return zone->ntrans == 0 ? zone->initial_off : zone->trans_off[zone->ntrans - 1];
	}
	if (t < zone->trans[0]) {
		*until = zone->trans[0];
		return zone->initial_off;
	}
	/* invariant: trans[lo] <= t < trans[hi] */
	lo = 0;
	hi = zone->ntrans - 1;
	while (hi - lo > 1) {
		size_t		mid = lo + (hi - lo) / 2;

		if (zone->trans[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	*until = zone->trans[hi];
	return zone->trans_off[lo];
}

int
tz_offset_until(const tz *zone, int64_t t, int64_t *until)
{
	int			off = offset_until(zone, clamp_time(t), until);

	/* past the clamp the offset is taken as constant, so *until stays > t */
	if (t >= TZ_TIME_LIMIT)
		*until = INT64_MAX;
	return off;
}

int
tz_offset_at(const tz *zone, int64_t t)
{
	int64_t		until;

	return tz_offset_until(zone, t, &until);
}

void
tz_local(const tz *zone, int64_t t, struct tz_tm *out)
{
	tz_break_down(t, tz_offset_at(zone, t), out);
}
