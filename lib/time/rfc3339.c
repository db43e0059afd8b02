/* rfc3339 — see rfc3339.h. */
#include "time/rfc3339.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>

#include "time/tz.h"

/* Read exactly n digits at *p into *v. */
static bool
digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char) **p))
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

static const char *const months[] = {
	"January", "February", "March", "April", "May", "June", "July", "August", "September",
	"October", "November", "December",
};

int
rfc3339_parse(const char *text, int64_t *t, char *err, size_t errlen)
{
	const char *p = text;
	int y, mo, d, h = 0, mi = 0, s = 0, oh = 0, om = 0, sign = 0;
	bool fraction = false;		/* a second's fraction other than zero */

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
		!digits(&p, 2, &d))
		goto bad;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			goto bad;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &s))
				goto bad;
			if (*p == '.') {
				p++;
				if (!isdigit((unsigned char) *p))
					goto bad;
				for (; isdigit((unsigned char) *p); p++)
					if (*p != '0')
						fraction = true;
			}
		}
		if (*p == 'Z' || *p == 'z')
			p++;
		else if (*p == '+' || *p == '-') {
			sign = *p++ == '+' ? 1 : -1;
			if (!digits(&p, 2, &oh))
				goto bad;
			if (*p == ':')
				p++;
			if (*p && !digits(&p, 2, &om))
				goto bad;
		}
	}
	if (*p != '\0')
		goto bad;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > tz_month_days(y, mo)) {
		if (y >= 1 && mo >= 1 && mo <= 12 && d > tz_month_days(y, mo))
			snprintf(err, errlen, "\"%s\" is not a valid date: %s %04d has %d days", text,
					 months[mo - 1], y, tz_month_days(y, mo));
		else
			snprintf(err, errlen, "\"%s\" is not a valid date", text);
		return RFC3339_IMPOSSIBLE;
	}
	/* 24:00:00 is the next day's midnight, as PostgreSQL reads it. */
	if ((h > 23 && !(h == 24 && mi == 0 && s == 0 && !fraction)) || mi > 59 || s > 60 || oh > 23 || om > 59) {
		snprintf(err, errlen, "\"%s\" is not a valid time of day", text);
		return RFC3339_IMPOSSIBLE;
	}
	*t = tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (s == 60 ? 59 : s)
		- sign * (oh * 3600 + om * 60);
	return 0;

bad:
	snprintf(err, errlen, "invalid time \"%s\": expected RFC 3339, such as 2026-03-08T10:00:00Z", text);
	return RFC3339_MALFORMED;
}

void
rfc3339_format(int64_t t, char *buf, size_t len)
{
	struct tz_tm tm;

	tz_break_down(t, 0, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec);
}
