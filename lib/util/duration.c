/*
 * duration — see duration.h. The grammar, whitespace being spaces or tabs:
 *
 *   duration = number                      (seconds, on its own only)
 *            | part { [ws] part }
 *   part     = number [ws] unit
 *   number   = digits [ "." digits ]
 *   unit     = ms | msec | msecs | millisecond | milliseconds
 *            | s | sec | secs | second | seconds
 *            | m | min | mins | minute | minutes
 *            | h | hr | hrs | hour | hours
 *            | d | day | days | w | week | weeks
 *
 * Units are case-insensitive, each at most once and in decreasing order
 * ("1h30m" yes, "30m1h" no), so a typo is an error rather than a surprising
 * sum. Decimals are exact to the millisecond (finer is dropped): "1.5h" is
 * 5400000 ms. No sign, no leading or trailing blanks, no exponent.
 */
#include "util/duration.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct unit {
	const char *name;
	int64_t		ms;
} unit;

/* Every spelling of each unit; matched whole (the next character is not a letter). */
static const unit units[] = {
	{"ms", 1}, {"msec", 1}, {"msecs", 1}, {"millisecond", 1}, {"milliseconds", 1},
	{"s", 1000LL}, {"sec", 1000LL}, {"secs", 1000LL}, {"second", 1000LL}, {"seconds", 1000LL},
	{"m", 60 * 1000LL}, {"min", 60 * 1000LL}, {"mins", 60 * 1000LL}, {"minute", 60 * 1000LL},
	{"minutes", 60 * 1000LL},
	{"h", 3600 * 1000LL}, {"hr", 3600 * 1000LL}, {"hrs", 3600 * 1000LL}, {"hour", 3600 * 1000LL},
	{"hours", 3600 * 1000LL},
	{"d", 24 * 3600 * 1000LL}, {"day", 24 * 3600 * 1000LL}, {"days", 24 * 3600 * 1000LL},
	{"w", 7 * 24 * 3600 * 1000LL}, {"week", 7 * 24 * 3600 * 1000LL}, {"weeks", 7 * 24 * 3600 * 1000LL},
};

/* units[SECONDS] is "s", what a bare number means. */
#define SECONDS 5

/* Fraction digits read; more are checked to be digits and dropped. */
#define FRACTION_DIGITS 9

/* Rank of a unit, larger = bigger, for the decreasing-order rule. */
static int
unit_rank(int64_t ms)
{
	switch (ms) {
		case 1: return 0;
		case 1000LL: return 1;
		case 60 * 1000LL: return 2;
		case 3600 * 1000LL: return 3;
		case 24 * 3600 * 1000LL: return 4;
		default: return 5;
	}
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The unit spelled at p (its whole word), advancing *len, or NULL. */
static const unit *
unit_at(const char *p, size_t *len)
{
	size_t n = 0;

	while (isalpha((unsigned char) p[n]))
		n++;
	for (size_t i = 0; n > 0 && i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].name) == n && strncasecmp(p, units[i].name, n) == 0) {
			*len = n;
			return &units[i];
		}
	return NULL;
}

int
duration_parse(const char *text, int64_t *ms, char *err, size_t errlen)
{
	const char *p = text;
	int64_t total = 0;
	int last_rank = 6;
	bool any = false;

	if (text == NULL || *text == '\0') {
		snprintf(err, errlen, "empty duration");
		return -1;
	}
	while (*p) {
		int64_t n = 0, frac = 0, scale = 1, part;
		const char *digits = p, *numend;
		const unit *u = NULL;
		size_t len = 0;

		while (isdigit((unsigned char) *p)) {
			if (n > DURATION_MAX_MS / 10) {
				snprintf(err, errlen, "duration \"%s\" is too long", text);
				return -1;
			}
			n = n * 10 + (*p - '0');
			p++;
		}
		if (p == digits) {
			if (*p == '-')
				snprintf(err, errlen, "duration \"%s\" must not be negative", text);
			else
				snprintf(err, errlen, "invalid duration \"%s\": expected a number at \"%s\"", text, p);
			return -1;
		}
		if (*p == '.') {
			const char *dot = p++;

			if (!isdigit((unsigned char) *p)) {
				snprintf(err, errlen, "invalid duration \"%s\": expected digits after \".\" at \"%s\"", text, dot);
				return -1;
			}
			for (int k = 0; isdigit((unsigned char) *p); p++, k++)
				if (k < FRACTION_DIGITS) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
		}
		numend = p;
		while (is_blank(*p))
			p++;
		if (*p == '\0' && p != numend) {
			snprintf(err, errlen, "invalid duration \"%s\": trailing blanks", text);
			return -1;
		} else if (*p == '\0' && !any) {
			/* A bare number is seconds, but only on its own: "1h30" is a typo. */
			u = &units[SECONDS];
		} else if (*p == '\0') {
			snprintf(err, errlen, "invalid duration \"%s\": missing unit after %.*s", text,
					 (int) (numend - digits), digits);
			return -1;
		} else if ((u = unit_at(p, &len)) == NULL) {
			snprintf(err, errlen, "invalid duration \"%s\": unrecognized unit \"%s\"", text, p);
			return -1;
		}
		p += len;
		if (unit_rank(u->ms) >= last_rank) {
			snprintf(err, errlen, "invalid duration \"%s\": units must go from largest to smallest, each once", text);
			return -1;
		}
		last_rank = unit_rank(u->ms);
		/* frac < 10^9 and u->ms <= 6.1e8: the product fits. */
		if (n > DURATION_MAX_MS / u->ms ||
			(part = n * u->ms + frac * u->ms / scale) > DURATION_MAX_MS - total) {
			snprintf(err, errlen, "duration \"%s\" is too long", text);
			return -1;
		}
		total += part;
		any = true;
		if (*p && is_blank(*p)) {
			while (is_blank(*p))
				p++;
			if (*p == '\0') {
				snprintf(err, errlen, "invalid duration \"%s\": trailing blanks", text);
				return -1;
			}
		}
	}
	*ms = total;
	return 0;
}

void
duration_format(int64_t ms, char *buf, size_t len)
{
	static const struct { const char *name; int64_t ms; } parts[] = {
		{"d", 24 * 3600 * 1000LL}, {"h", 3600 * 1000LL}, {"m", 60 * 1000LL},
		{"s", 1000LL}, {"ms", 1},
	};
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (ms <= 0) {
		snprintf(buf, len, "0s");
		return;
	}
	for (size_t i = 0; i < sizeof parts / sizeof parts[0] && ms > 0; i++) {
		int64_t n = ms / parts[i].ms;

		if (n == 0)
			continue;
		ms -= n * parts[i].ms;
		if (used < len)
			used += (size_t) snprintf(buf + used, len - used, "%lld%s", (long long) n, parts[i].name);
	}
}
