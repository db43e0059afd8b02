/*
 * duration — see duration.h. Units: ms, s, m, h, d, w, each at most once and
 * in decreasing order ("1h30m" yes, "30m1h" no), so a typo is an error rather
 * than a surprising sum.
 */
#include "util/duration.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct unit {
	const char *name;
	int64_t		ms;
} unit;

/* Longest names first so "ms" is not read as "m" followed by "s". */
static const unit units[] = {
	{"ms", 1},
	{"w", 7 * 24 * 3600 * 1000LL},
	{"d", 24 * 3600 * 1000LL},
	{"h", 3600 * 1000LL},
	{"m", 60 * 1000LL},
	{"s", 1000LL},
};

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
		int64_t n = 0;
		const char *digits = p;
		const unit *u = NULL;

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
		if (*p == '\0') {
			/* A bare number is seconds, but only on its own: "1h30" is a typo. */
			if (any) {
				snprintf(err, errlen, "invalid duration \"%s\": missing unit after %lld", text, (long long) n);
				return -1;
			}
			u = &units[5];
		} else {
			for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
				size_t len = strlen(units[i].name);

				if (strncmp(p, units[i].name, len) == 0 &&
					!isalpha((unsigned char) p[len])) {
					u = &units[i];
					p += len;
					break;
				}
			}
			if (u == NULL) {
				snprintf(err, errlen, "invalid duration \"%s\": unrecognized unit \"%s\"", text, p);
				return -1;
			}
		}
		if (unit_rank(u->ms) >= last_rank) {
			snprintf(err, errlen, "invalid duration \"%s\": units must go from largest to smallest, each once", text);
			return -1;
		}
		last_rank = unit_rank(u->ms);
		if (n > DURATION_MAX_MS / u->ms || total > DURATION_MAX_MS - n * u->ms) {
			snprintf(err, errlen, "duration \"%s\" is too long", text);
			return -1;
		}
		total += n * u->ms;
		any = true;
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
