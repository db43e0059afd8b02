/*
 * test_cron — cron expressions and time zones: a table of next fire times
 * worked out by hand from crontab(5) and SPEC 5 (2026-01-01 is a Thursday),
 * a table of rejected expressions with their messages, properties checked
 * against a minute-by-minute brute force, and time zone offsets. Needs the
 * system tz database; no database server, no network.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "time/cron.h"
#include "time/rfc3339.h"
#include "time/tz.h"

#define ZONE_COUNT 5

static const char *const zone_names[ZONE_COUNT] = {
	"UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"
};

static tz  *zones[ZONE_COUNT];

static const tz *
zone(const char *name)
{
	for (int i = 0; i < ZONE_COUNT; i++)
		if (strcmp(zone_names[i], name) == 0)
			return zones[i];
	return NULL;
}

/* "2026-03-08T03:00:00-04:00" or "...Z" to seconds since the epoch. */
static bool
parse_time(const char *s, int64_t *out)
{
	int			y,
				mo,
				d,
				h,
				mi,
				sec,
				n = 0;
	int64_t		t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return false;
	t = tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (s[19] == 'Z' && s[20] == '\0') {
		*out = t;
		return true;
	}
	if ((s[19] == '+' || s[19] == '-') && strlen(s) == 25 && s[22] == ':') {
		int			oh = atoi(s + 20),
					om = atoi(s + 23),
					off = oh * 3600 + om * 60;

		*out = s[19] == '+' ? t - off : t + off;
		return true;
	}
	return false;
}

static const char *
fmt(int64_t t, char *buf)
{
	rfc3339_format(t, buf, RFC3339_BUFLEN);
	return buf;
}

/* ---- next fire times ---------------------------------------------------- */

typedef struct next_case {
	int			line;
	const char *expr;
	const char *zone;
	const char *start;
	const char *expect;			/* instants in order, space-separated; "none" */
} next_case;

#define NC(expr, zone, start, expect) {__LINE__, expr, zone, start, expect}
#define S0 "2026-01-01T00:00:00Z"

static const next_case next_cases[] = {
	/* every syntax form, in UTC, from a Thursday midnight */
	NC("* * * * *", "UTC", S0, "2026-01-01T00:01:00Z 2026-01-01T00:02:00Z 2026-01-01T00:03:00Z"),
	NC("* * * * *", "UTC", "2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z"),
	NC("* * * * *", "UTC", "2026-01-01T00:00:59Z", "2026-01-01T00:01:00Z"),
	NC("* * * * *", "UTC", "2025-12-31T23:59:59Z", "2026-01-01T00:00:00Z"),
	NC("* * * * *", "UTC", "1969-12-31T23:58:30Z", "1969-12-31T23:59:00Z 1970-01-01T00:00:00Z"),
	NC("0 * * * *", "UTC", S0, "2026-01-01T01:00:00Z 2026-01-01T02:00:00Z 2026-01-01T03:00:00Z"),
	NC("15 * * * *", "UTC", S0, "2026-01-01T00:15:00Z 2026-01-01T01:15:00Z 2026-01-01T02:15:00Z"),
	NC("59 * * * *", "UTC", S0, "2026-01-01T00:59:00Z 2026-01-01T01:59:00Z"),
	NC("*/15 * * * *", "UTC", S0, "2026-01-01T00:15:00Z 2026-01-01T00:30:00Z 2026-01-01T00:45:00Z"),
	NC("*/15 * * * *", "UTC", "2026-01-01T00:50:00Z", "2026-01-01T01:00:00Z 2026-01-01T01:15:00Z"),
	NC("0,30 * * * *", "UTC", S0, "2026-01-01T00:30:00Z 2026-01-01T01:00:00Z 2026-01-01T01:30:00Z"),
	NC("10-12 * * * *", "UTC", S0, "2026-01-01T00:10:00Z 2026-01-01T00:11:00Z 2026-01-01T00:12:00Z"),
	NC("10-12 * * * *", "UTC", "2026-01-01T00:12:00Z", "2026-01-01T01:10:00Z"),
	NC("10-40/15 * * * *", "UTC", S0, "2026-01-01T00:10:00Z 2026-01-01T00:25:00Z 2026-01-01T00:40:00Z"),
	NC("10-40/15 * * * *", "UTC", "2026-01-01T00:40:00Z", "2026-01-01T01:10:00Z"),
	NC("1-30/7 * * * *", "UTC", S0, "2026-01-01T00:01:00Z 2026-01-01T00:08:00Z 2026-01-01T00:15:00Z"),
	NC("1-30/7 * * * *", "UTC", "2026-01-01T00:22:00Z", "2026-01-01T00:29:00Z 2026-01-01T01:01:00Z"),
	NC("50/5 * * * *", "UTC", S0, "2026-01-01T00:50:00Z 2026-01-01T00:55:00Z 2026-01-01T01:50:00Z"),
	NC("5/20 * * * *", "UTC", S0, "2026-01-01T00:05:00Z 2026-01-01T00:25:00Z 2026-01-01T00:45:00Z"),
	NC("*/60 * * * *", "UTC", S0, "2026-01-01T01:00:00Z 2026-01-01T02:00:00Z"),
	NC("0-59/30 * * * *", "UTC", S0, "2026-01-01T00:30:00Z 2026-01-01T01:00:00Z"),
	NC("7,3,5 * * * *", "UTC", S0, "2026-01-01T00:03:00Z 2026-01-01T00:05:00Z 2026-01-01T00:07:00Z"),
	NC("5,5,5 * * * *", "UTC", S0, "2026-01-01T00:05:00Z 2026-01-01T01:05:00Z"),
	NC("1-3,7-9 * * * *", "UTC", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z 2026-01-01T00:07:00Z 2026-01-01T00:08:00Z"),
	NC("*/20,7 * * * *", "UTC", S0, "2026-01-01T00:07:00Z 2026-01-01T00:20:00Z 2026-01-01T00:40:00Z"),
	NC("0 */6 * * *", "UTC", S0, "2026-01-01T06:00:00Z 2026-01-01T12:00:00Z 2026-01-01T18:00:00Z"),
	NC("0 9-17/4 * * *", "UTC", S0, "2026-01-01T09:00:00Z 2026-01-01T13:00:00Z 2026-01-01T17:00:00Z"),
	NC("0 9-17/4 * * *", "UTC", "2026-01-01T17:00:00Z", "2026-01-02T09:00:00Z"),
	NC("0 20/2 * * *", "UTC", S0, "2026-01-01T20:00:00Z 2026-01-01T22:00:00Z 2026-01-02T20:00:00Z"),
	NC("30 23 * * *", "UTC", S0, "2026-01-01T23:30:00Z 2026-01-02T23:30:00Z"),
	NC("0 0 * * *", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z"),
	NC("05 07 * * *", "UTC", S0, "2026-01-01T07:05:00Z 2026-01-02T07:05:00Z"),
	NC("  0\t12  *  *  *  ", "UTC", S0, "2026-01-01T12:00:00Z"),
	NC("0 12 15 * *", "UTC", S0, "2026-01-15T12:00:00Z 2026-02-15T12:00:00Z 2026-03-15T12:00:00Z"),
	NC("0 0 1-3 * *", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z 2026-02-01T00:00:00Z"),
	NC("0 0 10/10 * *", "UTC", S0, "2026-01-10T00:00:00Z 2026-01-20T00:00:00Z 2026-01-30T00:00:00Z"),

	/* day 31, 30, 29 February and leap years */
	NC("0 0 31 * *", "UTC", S0, "2026-01-31T00:00:00Z 2026-03-31T00:00:00Z 2026-05-31T00:00:00Z"),
	NC("0 0 31 * *", "UTC", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z 2026-08-31T00:00:00Z 2026-10-31T00:00:00Z"),
	NC("0 0 30 * *", "UTC", S0, "2026-01-30T00:00:00Z 2026-03-30T00:00:00Z 2026-04-30T00:00:00Z"),
	NC("0 0 29 * *", "UTC", "2026-02-01T00:00:00Z", "2026-03-29T00:00:00Z"),
	NC("0 0 29 * *", "UTC", "2028-02-01T00:00:00Z", "2028-02-29T00:00:00Z 2028-03-29T00:00:00Z"),
	NC("0 0 29 2 *", "UTC", S0, "2028-02-29T00:00:00Z 2032-02-29T00:00:00Z 2036-02-29T00:00:00Z"),
	NC("0 0 29 feb *", "UTC", S0, "2028-02-29T00:00:00Z"),
	NC("0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z"),
	NC("0 0 29 2 *", "UTC", "1896-03-01T00:00:00Z", "1904-02-29T00:00:00Z"),
	NC("0 0 28 2 *", "UTC", "2028-02-28T00:00:00Z", "2029-02-28T00:00:00Z"),
	NC("0 0 * * 2", "UTC", "2028-02-28T00:00:00Z", "2028-02-29T00:00:00Z 2028-03-07T00:00:00Z"),
	NC("0 0 29 2 2", "UTC", "2028-02-20T00:00:00Z", "2028-02-22T00:00:00Z 2028-02-29T00:00:00Z 2029-02-06T00:00:00Z"),
	NC("59 23 31 12 *", "UTC", S0, "2026-12-31T23:59:00Z 2027-12-31T23:59:00Z"),
	NC("0 0 1 1 *", "UTC", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"),
	NC("0 0 30 2 *", "UTC", S0, "none"),
	NC("0 0 31 4,6,9,11 *", "UTC", S0, "none"),
	NC("0 0 31 2 */7", "UTC", S0, "none"),
	NC("0 0 31 2 1", "UTC", S0, "2026-02-02T00:00:00Z 2026-02-09T00:00:00Z"),
	NC("0 0 30 2 1-5", "UTC", S0, "2026-02-02T00:00:00Z 2026-02-03T00:00:00Z"),
	NC("0 0 1 1 *", "UTC", "9998-06-01T00:00:00Z", "9999-01-01T00:00:00Z none"),

	/* months, by number and by name */
	NC("0 0 1 */3 *", "UTC", S0, "2026-04-01T00:00:00Z 2026-07-01T00:00:00Z 2026-10-01T00:00:00Z"),
	NC("0 0 1 jan *", "UTC", S0, "2027-01-01T00:00:00Z 2028-01-01T00:00:00Z"),
	NC("0 0 1 JAN-MAR *", "UTC", S0, "2026-02-01T00:00:00Z 2026-03-01T00:00:00Z 2027-01-01T00:00:00Z"),
	NC("0 0 1 jun-aug/2 *", "UTC", S0, "2026-06-01T00:00:00Z 2026-08-01T00:00:00Z 2027-06-01T00:00:00Z"),
	NC("0 0 1 Dec *", "UTC", S0, "2026-12-01T00:00:00Z"),
	NC("0 0 1 may,Sep *", "UTC", S0, "2026-05-01T00:00:00Z 2026-09-01T00:00:00Z"),
	NC("0 0 1 2-12/5 *", "UTC", S0, "2026-02-01T00:00:00Z 2026-07-01T00:00:00Z 2026-12-01T00:00:00Z"),
	NC("0 0 1 oct/2 *", "UTC", S0, "2026-10-01T00:00:00Z 2026-12-01T00:00:00Z 2027-10-01T00:00:00Z"),
	NC("0 0 1 3-jun *", "UTC", S0, "2026-03-01T00:00:00Z 2026-04-01T00:00:00Z"),

	/* days of the week: names, 0 and 7, ranges, steps */
	NC("0 0 * * mon", "UTC", S0, "2026-01-05T00:00:00Z 2026-01-12T00:00:00Z 2026-01-19T00:00:00Z"),
	NC("0 0 * * mOn", "UTC", S0, "2026-01-05T00:00:00Z"),
	NC("0 0 * * MON-FRI", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-05T00:00:00Z 2026-01-06T00:00:00Z"),
	NC("0 0 * * 0", "UTC", S0, "2026-01-04T00:00:00Z 2026-01-11T00:00:00Z"),
	NC("0 0 * * 7", "UTC", S0, "2026-01-04T00:00:00Z 2026-01-11T00:00:00Z"),
	NC("0 0 * * sun", "UTC", S0, "2026-01-04T00:00:00Z"),
	NC("0 0 * * 5-7", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z 2026-01-04T00:00:00Z"),
	NC("0 0 * * 6,0", "UTC", S0, "2026-01-03T00:00:00Z 2026-01-04T00:00:00Z 2026-01-10T00:00:00Z"),
	NC("0 0 * * */2", "UTC", S0, "2026-01-03T00:00:00Z 2026-01-04T00:00:00Z 2026-01-06T00:00:00Z"),
	NC("0 0 * * 1-7/2", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-04T00:00:00Z 2026-01-05T00:00:00Z"),
	NC("0 0 * * mon/2", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-04T00:00:00Z 2026-01-05T00:00:00Z"),
	NC("0 0 * * 4", "UTC", S0, "2026-01-08T00:00:00Z"),
	NC("0 0 * * thu-sat", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z 2026-01-08T00:00:00Z"),
	NC("0 0 * * wed-wed", "UTC", S0, "2026-01-07T00:00:00Z"),
	NC("0 0 * * 6-7", "UTC", S0, "2026-01-03T00:00:00Z 2026-01-04T00:00:00Z 2026-01-10T00:00:00Z"),
	NC("0 0 * * 0-6/3", "UTC", S0, "2026-01-03T00:00:00Z 2026-01-04T00:00:00Z 2026-01-07T00:00:00Z"),
	NC("0 8 * * 1-5", "UTC", "2026-01-02T09:00:00Z", "2026-01-05T08:00:00Z 2026-01-06T08:00:00Z"),

	/* day of month OR day of week, and the '*' exception */
	NC("0 0 13 * 5", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-09T00:00:00Z 2026-01-13T00:00:00Z"),
	NC("0 0 13 * fri", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-09T00:00:00Z 2026-01-13T00:00:00Z"),
	NC("0 0 1,15 * 5", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-09T00:00:00Z 2026-01-15T00:00:00Z"),
	NC("30 4 1,15 * 5", "UTC", S0, "2026-01-01T04:30:00Z 2026-01-02T04:30:00Z 2026-01-09T04:30:00Z"),
	NC("0 0 1-7 * 1", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z 2026-01-04T00:00:00Z"),
	NC("0 0 1-7 * 1", "UTC", "2026-01-07T00:00:00Z", "2026-01-12T00:00:00Z 2026-01-19T00:00:00Z 2026-01-26T00:00:00Z"),
	NC("0 0 */2 * 1", "UTC", S0, "2026-01-05T00:00:00Z 2026-01-19T00:00:00Z 2026-02-09T00:00:00Z"),
	NC("0 0 1 * */7", "UTC", S0, "2026-02-01T00:00:00Z 2026-03-01T00:00:00Z 2026-11-01T00:00:00Z"),
	NC("0 0 13 * */7", "UTC", S0, "2026-09-13T00:00:00Z"),
	NC("0 0 * 2 1", "UTC", S0, "2026-02-02T00:00:00Z 2026-02-09T00:00:00Z 2026-02-16T00:00:00Z"),
	NC("0 0 *,15 * 1", "UTC", S0, "2026-01-05T00:00:00Z 2026-01-12T00:00:00Z"),
	NC("0 0 15,* * 1", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z"),
	NC("0 0 * * *,1", "UTC", S0, "2026-01-02T00:00:00Z"),
	NC("0 0 1 * 1", "UTC", "2026-01-25T00:00:00Z", "2026-01-26T00:00:00Z 2026-02-01T00:00:00Z 2026-02-02T00:00:00Z"),

	/* macros */
	NC("@yearly", "UTC", S0, "2027-01-01T00:00:00Z 2028-01-01T00:00:00Z"),
	NC("@annually", "UTC", S0, "2027-01-01T00:00:00Z"),
	NC("@monthly", "UTC", S0, "2026-02-01T00:00:00Z 2026-03-01T00:00:00Z"),
	NC("@weekly", "UTC", S0, "2026-01-04T00:00:00Z 2026-01-11T00:00:00Z"),
	NC("@daily", "UTC", S0, "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z"),
	NC("@midnight", "UTC", S0, "2026-01-02T00:00:00Z"),
	NC("@hourly", "UTC", S0, "2026-01-01T01:00:00Z 2026-01-01T02:00:00Z"),
	NC("@DAILY", "UTC", S0, "2026-01-02T00:00:00Z"),
	NC("@Hourly", "UTC", S0, "2026-01-01T01:00:00Z"),
	NC("  @weekly\t", "UTC", S0, "2026-01-04T00:00:00Z"),

	/* before 1970 and around the edges of the supported range */
	NC("0 0 * * 1", "UTC", "1899-12-31T00:00:00Z", "1900-01-01T00:00:00Z"),
	NC("0 12 * * *", "UTC", "1900-01-01T00:00:00Z", "1900-01-01T12:00:00Z"),

	/* Europe/Paris: CET +1, CEST +2; 2026-03-29 02:00 -> 03:00, 2026-10-25 03:00 -> 02:00 */
	NC("0 12 * * *", "Europe/Paris", S0, "2026-01-01T12:00:00+01:00 2026-01-02T12:00:00+01:00"),
	NC("0 12 * * *", "Europe/Paris", "2026-07-01T00:00:00Z", "2026-07-01T12:00:00+02:00"),
	NC("30 * * * *", "Europe/Paris", "2026-03-28T23:00:00Z", "2026-03-28T23:30:00Z 2026-03-29T00:30:00Z 2026-03-29T01:30:00Z"),
	NC("30 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-29T03:00:00+02:00 2026-03-30T02:30:00+02:00"),
	NC("0 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-29T03:00:00+02:00 2026-03-30T02:00:00+02:00"),
	NC("0 3 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-29T03:00:00+02:00 2026-03-30T03:00:00+02:00"),
	NC("59 1 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-29T01:59:00+01:00"),
	NC("30 2 * * *", "Europe/Paris", "2026-03-29T00:59:59Z", "2026-03-29T01:00:00Z"),
	NC("30 2 * * *", "Europe/Paris", "2026-03-29T01:00:00Z", "2026-03-30T02:30:00+02:00"),
	NC("*/30 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-30T02:00:00+02:00 2026-03-30T02:30:00+02:00"),
	NC("15 2 * * 0", "Europe/Paris", "2026-03-22T12:00:00Z", "2026-03-29T01:00:00Z 2026-04-05T02:15:00+02:00"),
	NC("0 0 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-29T00:00:00+01:00 2026-03-30T00:00:00+02:00"),
	NC("0 */2 * * *", "Europe/Paris", "2026-03-28T22:30:00Z", "2026-03-28T23:00:00Z 2026-03-29T02:00:00Z 2026-03-29T04:00:00Z"),
	NC("30 2 * * *", "Europe/Paris", "2026-10-24T12:00:00Z", "2026-10-25T02:30:00+02:00 2026-10-26T02:30:00+01:00"),
	NC("30 2 * * *", "Europe/Paris", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
	NC("30 2 * * *", "Europe/Paris", "2026-10-25T01:00:00Z", "2026-10-26T01:30:00Z"),
	NC("*/30 2 * * *", "Europe/Paris", "2026-10-24T23:59:00Z", "2026-10-25T00:00:00Z 2026-10-25T00:30:00Z 2026-10-25T01:00:00Z"),
	NC("*/30 2 * * *", "Europe/Paris", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z 2026-10-26T01:00:00Z"),
	NC("0 * * * *", "Europe/Paris", "2026-10-24T23:30:00Z", "2026-10-25T00:00:00Z 2026-10-25T01:00:00Z 2026-10-25T02:00:00Z"),
	NC("0 */2 * * *", "Europe/Paris", "2026-10-24T21:30:00Z", "2026-10-24T22:00:00Z 2026-10-25T00:00:00Z 2026-10-25T01:00:00Z"),
	NC("0 1 * * *", "Europe/Paris", "2026-10-24T12:00:00Z", "2026-10-24T23:00:00Z 2026-10-26T00:00:00Z"),
	NC("0 3 * * *", "Europe/Paris", "2026-10-24T12:00:00Z", "2026-10-25T03:00:00+01:00"),
	NC("@weekly", "Europe/Paris", "2026-03-22T12:00:00Z", "2026-03-29T00:00:00+01:00 2026-04-05T00:00:00+02:00"),
	NC("0 9 * * mon-fri", "Europe/Paris", "2026-03-27T09:00:00Z", "2026-03-30T09:00:00+02:00"),

	/* America/New_York: EST -5, EDT -4; 2026-03-08 02:00 -> 03:00, 2026-11-01 02:00 -> 01:00 */
	NC("0 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T07:00:00Z 2026-03-09T02:00:00-04:00"),
	NC("30 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T03:00:00-04:00 2026-03-09T02:30:00-04:00"),
	NC("0 2 * * *", "America/New_York", "2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z"),
	NC("0 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"),
	NC("0 3 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T07:00:00Z 2026-03-09T07:00:00Z"),
	NC("59 1 * * *", "America/New_York", "2026-03-08T00:00:00Z", "2026-03-08T06:59:00Z"),
	NC("* 2 * * *", "America/New_York", "2026-03-08T06:58:00Z", "2026-03-09T02:00:00-04:00 2026-03-09T02:01:00-04:00"),
	NC("0 1,2 * * *", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T06:00:00Z 2026-03-09T05:00:00Z 2026-03-09T06:00:00Z"),
	NC("@hourly", "America/New_York", "2026-03-08T05:30:00Z", "2026-03-08T06:00:00Z 2026-03-08T07:00:00Z 2026-03-08T08:00:00Z"),
	NC("0 0 * * *", "America/New_York", "2026-03-07T12:00:00Z", "2026-03-08T05:00:00Z 2026-03-09T04:00:00Z"),
	NC("0 12 * * 1-5", "America/New_York", "2026-03-06T18:00:00Z", "2026-03-09T16:00:00Z 2026-03-10T16:00:00Z"),
	NC("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-01T05:30:00Z 2026-11-02T06:30:00Z"),
	NC("30 1 * * *", "America/New_York", "2026-11-01T05:29:59Z", "2026-11-01T05:30:00Z"),
	NC("30 1 * * *", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"),
	NC("30 1 * * *", "America/New_York", "2026-11-01T05:45:00Z", "2026-11-02T06:30:00Z"),
	NC("0 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-01T05:00:00Z 2026-11-02T06:00:00Z"),
	NC("0 2 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-01T07:00:00Z 2026-11-02T07:00:00Z"),
	NC("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z 2026-11-01T06:00:00Z 2026-11-01T07:00:00Z"),
	NC("*/20 1 * * *", "America/New_York", "2026-11-01T04:59:00Z", "2026-11-01T05:00:00Z 2026-11-01T05:20:00Z 2026-11-01T05:40:00Z"),
	NC("*/20 1 * * *", "America/New_York", "2026-11-01T05:40:00Z", "2026-11-01T06:00:00Z 2026-11-01T06:20:00Z 2026-11-01T06:40:00Z"),
	NC("0 1,2 * * *", "America/New_York", "2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z 2026-11-01T06:00:00Z 2026-11-01T07:00:00Z"),
	NC("@daily", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-01T00:00:00-04:00 2026-11-02T00:00:00-05:00"),
	NC("30 1 * * 0", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-08T01:30:00-05:00"),
	NC("30 1 1 11 *", "America/New_York", "2026-06-01T00:00:00Z", "2026-11-01T05:30:00Z 2027-11-01T01:30:00-04:00"),
	NC("0 9 * * 1-5", "America/New_York", "2026-01-01T00:00:00Z", "2026-01-01T09:00:00-05:00 2026-01-02T09:00:00-05:00 2026-01-05T09:00:00-05:00"),

	/* Australia/Lord_Howe: +10:30 / +11; 2026-04-05 02:00 -> 01:30, 2026-10-04 02:00 -> 02:30 */
	NC("0 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-03T15:30:00Z 2026-10-05T02:00:00+11:00"),
	NC("15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-03T15:30:00Z 2026-10-05T02:15:00+11:00"),
	NC("45 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-04T02:45:00+11:00"),
	NC("*/15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-04T02:30:00+11:00 2026-10-04T02:45:00+11:00 2026-10-05T02:00:00+11:00"),
	NC("0 * * * *", "Australia/Lord_Howe", "2026-10-03T14:00:00Z", "2026-10-03T14:30:00Z 2026-10-03T16:00:00Z 2026-10-03T17:00:00Z"),
	NC("@daily", "Australia/Lord_Howe", "2026-10-02T12:00:00Z", "2026-10-03T00:00:00+10:30 2026-10-04T00:00:00+10:30 2026-10-05T00:00:00+11:00"),
	NC("45 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z", "2026-04-05T01:45:00+11:00 2026-04-06T01:45:00+10:30"),
	NC("45 1 * * *", "Australia/Lord_Howe", "2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"),
	NC("30 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z", "2026-04-04T14:30:00Z 2026-04-05T15:00:00Z"),
	NC("45 1,13 * * *", "Australia/Lord_Howe", "2026-04-04T14:00:00Z", "2026-04-04T14:45:00Z 2026-04-04T15:15:00Z 2026-04-05T03:15:00Z"),
	NC("0,30 * * * *", "Australia/Lord_Howe", "2026-04-04T14:20:00Z", "2026-04-04T14:30:00Z 2026-04-04T15:00:00Z 2026-04-04T15:30:00Z"),
	NC("0 * * * *", "Australia/Lord_Howe", "2026-04-04T13:30:00Z", "2026-04-04T14:00:00Z 2026-04-04T15:30:00Z 2026-04-04T16:30:00Z"),
	NC("30 * * * *", "Australia/Lord_Howe", "2026-04-04T13:30:00Z", "2026-04-04T14:30:00Z 2026-04-04T15:00:00Z 2026-04-04T16:00:00Z"),
	NC("0 12 * * *", "Australia/Lord_Howe", "2026-06-01T00:00:00Z", "2026-06-01T12:00:00+10:30 2026-06-02T12:00:00+10:30"),
	NC("0 12 * * *", "Australia/Lord_Howe", "2026-12-01T00:00:00Z", "2026-12-01T12:00:00+11:00"),
	NC("0 0 29 2 *", "Australia/Lord_Howe", S0, "2028-02-29T00:00:00+11:00"),

	/* Asia/Kolkata: +05:30 all year */
	NC("0 9 * * *", "Asia/Kolkata", S0, "2026-01-01T03:30:00Z 2026-01-02T03:30:00Z"),
	NC("30 0 * * *", "Asia/Kolkata", S0, "2026-01-01T19:00:00Z"),
	NC("0 0 * * *", "Asia/Kolkata", S0, "2026-01-01T18:30:00Z 2026-01-02T18:30:00Z"),
	NC("30 5 * * *", "Asia/Kolkata", S0, "2026-01-02T00:00:00Z"),
	NC("0 0 * * mon", "Asia/Kolkata", S0, "2026-01-04T18:30:00Z"),
	NC("*/45 * * * *", "Asia/Kolkata", S0, "2026-01-01T00:15:00Z 2026-01-01T00:30:00Z 2026-01-01T01:15:00Z"),
	NC("0 0 1 1 *", "Asia/Kolkata", "2026-06-01T00:00:00Z", "2026-12-31T18:30:00Z"),
	NC("0 0 29 2 *", "Asia/Kolkata", S0, "2028-02-28T18:30:00Z"),
	NC("@hourly", "Asia/Kolkata", "2026-01-01T00:10:00Z", "2026-01-01T00:30:00Z 2026-01-01T01:30:00Z"),
	NC("0 0 1 * *", "Asia/Kolkata", "2026-01-31T18:29:59Z", "2026-01-31T18:30:00Z"),
};

static void
test_next_table(void)
{
	char		err[256];
	char		b1[RFC3339_BUFLEN],
				b2[RFC3339_BUFLEN],
				b3[RFC3339_BUFLEN];

	for (size_t i = 0; i < sizeof(next_cases) / sizeof(next_cases[0]); i++) {
		const next_case *c = &next_cases[i];
		cron_expr  *e = cron_parse(c->expr, err, sizeof(err));
		const tz   *z = zone(c->zone);
		int64_t		t;
		char		expect[512];
		char	   *save = NULL;
		bool		ok = true;
		char		why[256] = "";

		if (e == NULL || z == NULL || !parse_time(c->start, &t)) {
			CHECK(false, "line %d: \"%s\": %s", c->line, c->expr, e ? "bad zone or start" : err);
			cron_free(e);
			continue;
		}
		snprintf(expect, sizeof(expect), "%s", c->expect);
		for (char *w = strtok_r(expect, " ", &save); w && ok; w = strtok_r(NULL, " ", &save)) {
			int64_t		want,
						got;
			int			rc = cron_next(e, z, t, &got);

			if (strcmp(w, "none") == 0) {
				if (rc != -1) {
					ok = false;
					snprintf(why, sizeof(why), "after %s want none, got %s", fmt(t, b1), fmt(got, b2));
				}
				break;
			}
			if (!parse_time(w, &want)) {
				ok = false;
				snprintf(why, sizeof(why), "bad expected time %s", w);
			} else if (rc != 0) {
				ok = false;
				snprintf(why, sizeof(why), "after %s want %s, got none", fmt(t, b1), w);
			} else if (got != want) {
				ok = false;
				snprintf(why, sizeof(why), "after %s want %s (%s), got %s",
						 fmt(t, b1), fmt(want, b2), w, fmt(got, b3));
			}
			t = got;
		}
		CHECK(ok, "line %d: \"%s\" in %s from %s: %s", c->line, c->expr, c->zone, c->start, why);
		cron_free(e);
	}
}

/* ---- rejected expressions ------------------------------------------------ */

typedef struct bad_case {
	int			line;
	const char *expr;
	const char *message;
} bad_case;

#define BC(expr, message) {__LINE__, expr, message}

static const bad_case bad_cases[] = {
	BC("", "empty expression"),
	BC(" \t ", "empty expression"),
	BC("* * * *", "expected 5 fields, got 4"),
	BC("*", "expected 5 fields, got 1"),
	BC("* * * * * *", "expected 5 fields, got 6"),
	BC("* * * * * echo hi", "expected 5 fields, got 7"),
	BC("@reboot", "@reboot is not supported"),
	BC("@REBOOT", "@reboot is not supported"),
	BC("@every 30s", "@every: 30s is shorter than 1 minute"),
	BC("@every 59s", "@every: 59s is shorter than 1 minute"),
	BC("@every", "@every needs a duration, such as @every 90m"),
	BC("@every 0m", "@every: 0m is shorter than 1 minute"),
	BC("@every 5x", "@every: invalid duration \"5x\": unrecognized unit \"x\""),
	BC("@every 1.5x", "@every: invalid duration \"1.5x\": unrecognized unit \"x\""),
	BC("@every 0.5 minutes", "@every: 0.5 minutes is shorter than 1 minute"),
	BC("@every 1.0005h", "@every: 1.0005h is not a whole number of seconds"),
	BC("@every 1 hour 1 hour", "@every: invalid duration \"1 hour 1 hour\": units must go from largest to smallest, each once"),
	BC("@every -5m", "@every: duration \"-5m\" must not be negative"),
	BC("@every 30m1h", "@every: invalid duration \"30m1h\": units must go from largest to smallest, each once"),
	BC("@every 60500ms", "@every: 60500ms is not a whole number of seconds"),
	BC("@every 5m x", "@every: invalid duration \"5m x\": expected a number at \"x\""),
	BC("@foo", "unrecognized macro \"@foo\""),
	BC("@", "unrecognized macro \"@\""),
	BC("@daily 1", "unexpected text after @daily"),
	BC("61 * * * *", "minute: 61 is out of range 0-59"),
	BC("60 * * * *", "minute: 60 is out of range 0-59"),
	BC("* 24 * * *", "hour: 24 is out of range 0-23"),
	BC("* * 0 * *", "day of month: 0 is out of range 1-31"),
	BC("* * 32 * *", "day of month: 32 is out of range 1-31"),
	BC("0 0 0-5 * *", "day of month: 0 is out of range 1-31"),
	BC("* * * 0 *", "month: 0 is out of range 1-12"),
	BC("* * * 13 *", "month: 13 is out of range 1-12"),
	BC("* * * * 8", "day of week: 8 is out of range 0-7"),
	BC("99999999999999999999999 * * * *", "minute: 99999999999999999999999 is out of range 0-59"),
	BC("* * * * FOO", "day of week: \"FOO\" is not a valid name"),
	BC("* * * * monday", "day of week: \"monday\" is not a valid name"),
	BC("* * * foo *", "month: \"foo\" is not a valid name"),
	BC("* * * january *", "month: \"january\" is not a valid name"),
	BC("* * * jan1 *", "month: \"jan1\" is not a valid name"),
	BC("abc * * * *", "minute: \"abc\" is not a number"),
	BC("* mon * * *", "hour: \"mon\" is not a number"),
	BC("5x * * * *", "minute: \"5x\" is not a number"),
	BC("* * 5-1 * *", "day of month: range 5-1 is reversed"),
	BC("* * * * fri-mon", "day of week: range fri-mon is reversed"),
	BC("* * * * 7-1", "day of week: range 7-1 is reversed"),
	BC("* * * 12-1 *", "month: range 12-1 is reversed"),
	BC("* * * dec-feb *", "month: range dec-feb is reversed"),
	BC("0~30 * * * *", "minute: \"~\" random ranges are not supported"),
	BC("~ * * * *", "minute: \"~\" random ranges are not supported"),
	BC("* * L * *", "day of month: \"L\" is not supported"),
	BC("* * 15W * *", "day of month: \"W\" is not supported"),
	BC("* * LW * *", "day of month: \"LW\" is not supported"),
	BC("* * * * 5L", "day of week: \"L\" is not supported"),
	BC("* * * * 5#3", "day of week: \"#\" is not supported"),
	BC("* * ? * *", "day of month: \"?\" is not supported"),
	BC("* * * * ?", "day of week: \"?\" is not supported"),
	BC("*/0 * * * *", "minute: step 0 is out of range 1-60"),
	BC("*/61 * * * *", "minute: step 61 is out of range 1-60"),
	BC("* */25 * * *", "hour: step 25 is out of range 1-24"),
	BC("0 0 * * 1-7/0", "day of week: step 0 is out of range 1-8"),
	BC("*/ * * * *", "minute: missing step after \"/\""),
	BC("*/x * * * *", "minute: step \"x\" is not a number"),
	BC("* * * */mon *", "month: step \"mon\" is not a number"),
	BC("1,,2 * * * *", "minute: empty item in list"),
	BC("1, * * * *", "minute: empty item in list"),
	BC(",1 * * * *", "minute: empty item in list"),
	BC("5- * * * *", "minute: range \"5-\" has no end"),
	BC("* * * * 1-", "day of week: range \"1-\" has no end"),
	BC("-5 * * * *", "minute: unexpected character \"-\""),
	BC("*-5 * * * *", "minute: unexpected character \"-\""),
	BC("5$ * * * *", "minute: unexpected character \"$\""),
	BC("** * * * *", "minute: unexpected character \"*\""),
	BC("1-2-3 * * * *", "minute: unexpected character \"-\""),
	BC("1/2/3 * * * *", "minute: unexpected character \"/\""),
	BC("1.5 * * * *", "minute: unexpected character \".\""),
	BC("* * * * -1", "day of week: unexpected character \"-\""),
	BC("0 0 * * \x01", "day of week: unexpected character \"\\x01\""),
	BC("\xc3\xa9 * * * *", "minute: unexpected character \"\\xc3\""),
	BC("0 \"1\" * * *", "hour: unexpected character \"\\x22\""),
	BC("@abcdefghijabcdefghijabcdefghijabcdefghij",
	   "unrecognized macro \"@abcdefghijabcdefghijabcdefghija...\""),
	BC("* * * * abcdefghijabcdefghijabcdefghijabcdefghij",
	   "day of week: \"abcdefghijabcdefghijabcdefghijab...\" is not a valid name"),
};

/* "@every D" takes every duration the flags take: decimals, unit words. */
static void
test_every_periods(void)
{
	static const struct {
		const char *expr;
		int64_t		period;
	}			cases[] = {
		{"@every 90m", 5400},
		{"@every 1.5h", 5400},
		{"@every 1h30m", 5400},
		{"@every 1 hour 30 minutes", 5400},
		{"@EVERY  2 Hours\t30\tmins ", 9000},
		{"@every 0.5d", 43200},
		{"@every 5mins", 300},
		{"@every 90", 90},
		{"@every 1.5 weeks", 907200},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char		err[256] = "";
		cron_expr  *e = cron_parse(cases[i].expr, err, sizeof(err));

		CHECK(e != NULL && cron_every(e) == cases[i].period, "\"%s\": period %lld, want %lld (%s)",
			  cases[i].expr, e ? (long long) cron_every(e) : -1LL, (long long) cases[i].period, err);
		cron_free(e);
	}
}

static void
test_bad_table(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const bad_case *c = &bad_cases[i];
		char		err[256] = "";
		cron_expr  *e = cron_parse(c->expr, err, sizeof(err));

		CHECK(e == NULL && strcmp(err, c->message) == 0,
			  "line %d: want error \"%s\", got %s \"%s\"", c->line, c->message,
			  e ? "success," : "", err);
		cron_free(e);
	}
}

static void
test_parse_misc(void)
{
	static const struct
	{
		const char *expr;
		bool		fixed;
	}			fixed_cases[] = {
		{"30 2 * * *", true},
		{"0 0-0 * * 1", true},
		{"@daily", true},
		{"@weekly", true},
		{"0 */24 * * *", true},
		{"@hourly", false},
		{"0,30 2 * * *", false},
		{"0 1,2 * * *", false},
		{"* 2 * * *", false},
		{"0 * * * *", false},
	};
	char		err[256];
	char		buf[RFC3339_BUFLEN];
	cron_expr  *e;

	for (size_t i = 0; i < sizeof(fixed_cases) / sizeof(fixed_cases[0]); i++) {
		e = cron_parse(fixed_cases[i].expr, err, sizeof(err));
		CHECK(e != NULL && cron_is_fixed_time(e) == fixed_cases[i].fixed,
			  "\"%s\" fixed-time should be %d", fixed_cases[i].expr, fixed_cases[i].fixed);
		cron_free(e);
	}

	/* a NULL or zero-length error buffer is allowed */
	CHECK(cron_parse("61 * * * *", NULL, 0) == NULL, "error without a buffer");
	e = cron_parse("61 * * * *", err, 8);
	CHECK(e == NULL && strcmp(err, "minute:") == 0, "short error buffer truncates: \"%s\"", err);
	cron_free(NULL);

	rfc3339_format(0, buf, sizeof(buf));
	CHECK(strcmp(buf, "1970-01-01T00:00:00Z") == 0, "format epoch: %s", buf);
	rfc3339_format(INT64_C(1772953200), buf, sizeof(buf));
	CHECK(strcmp(buf, "2026-03-08T07:00:00Z") == 0, "format 2026-03-08T07:00:00Z: %s", buf);
	rfc3339_format(-1, buf, sizeof(buf));
	CHECK(strcmp(buf, "1969-12-31T23:59:59Z") == 0, "format -1: %s", buf);

	/* next() refuses to go past year 9999 and accepts anything */
	e = cron_parse("* * * * *", err, sizeof(err));
	{
		int64_t		got;

		CHECK(cron_next(e, zones[0], CRON_TIME_MAX, &got) == -1, "nothing after CRON_TIME_MAX");
		CHECK(cron_next(e, zones[0], INT64_MAX, &got) == -1, "nothing after INT64_MAX");
		CHECK(cron_next(e, zones[0], INT64_MIN, &got) == 0 && got == CRON_TIME_MIN,
			  "from INT64_MIN the first minute of year 1");
	}
	cron_free(e);
}

/* ---- properties ------------------------------------------------------------ */

static uint64_t rng_state = UINT64_C(0x2545F4914F6CDD1D);

static uint64_t
rng(void)
{
	uint64_t	x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static int
rnd(int lo, int hi)
{
	return lo + (int) (rng() % (uint64_t) (hi - lo + 1));
}

static uint64_t
span(int a, int b, int step)
{
	uint64_t	m = 0;

	for (int v = a; v <= b; v += step)
		m |= UINT64_C(1) << v;
	return m;
}

/*
 * One random field, biased towards fields that match often; returns the set
 * of values it stands for, worked out here independently of the parser.
 */
static uint64_t
random_field(char *out, size_t len, int lo, int hi, int star_pct, const char *const *names, int names_base)
{
	int			kind = rnd(0, 99);
	int			a = rnd(lo, hi),
				b = rnd(lo, hi);
	int			step;

	if (a > b) {
		int			tmp = a;

		a = b;
		b = tmp;
	}
	if (kind < star_pct) {
		snprintf(out, len, "*");
		return span(lo, hi, 1);
	}
	if (kind < star_pct + 10) {
		step = rnd(1, (hi - lo + 1) / 2 > 1 ? (hi - lo + 1) / 2 : 1);
		snprintf(out, len, "*/%d", step);
		return span(lo, hi, step);
	}
	if (kind < star_pct + 20) {
		snprintf(out, len, "%d-%d", a, b);
		return span(a, b, 1);
	}
	if (kind < star_pct + 27) {
		step = rnd(1, 4);
		snprintf(out, len, "%d-%d/%d", a, b, step);
		return span(a, b, step);
	}
	if (kind < star_pct + 34) {
		int			c = rnd(lo, hi);

		snprintf(out, len, "%d,%d,%d", a, c, b);
		return span(a, a, 1) | span(b, b, 1) | span(c, c, 1);
	}
	if (kind < star_pct + 40) {
		step = rnd(1, 5);
		snprintf(out, len, "%d/%d", a, step);
		return span(a, hi, step);
	}
	if (names != NULL && kind < star_pct + 50 && names[b - names_base] != NULL) {
		snprintf(out, len, "%s-%s", names[a - names_base], names[b - names_base]);
		return span(a, b, 1);
	}
	snprintf(out, len, "%d", a);
	return span(a, a, 1);
}

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"
};
/* no name for 7: "sun" is 0, and "fri-sun" is reversed */
static const char *const wday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

/*
 * A random expression; when its minute and hour fields each stand for one
 * value, *h and *m receive them, otherwise -1.
 */
static void
random_expr(char *out, size_t len, int *h, int *m)
{
	char		f[5][32];
	uint64_t	mins,
				hours;

	if (rnd(0, 4) == 0) {
		/* a fixed-time expression, often at an hour DST likes to skip */
		int			mm = rnd(0, 3) == 0 ? rnd(0, 59) : 30 * rnd(0, 1) + 15 * rnd(0, 1);
		int			hh = rnd(0, 1) ? rnd(0, 3) : rnd(0, 23);

		snprintf(f[0], sizeof(f[0]), "%d", mm);
		snprintf(f[1], sizeof(f[1]), "%d", hh);
		mins = UINT64_C(1) << mm;
		hours = UINT64_C(1) << hh;
	} else {
		mins = random_field(f[0], sizeof(f[0]), 0, 59, 35, NULL, 0);
		hours = random_field(f[1], sizeof(f[1]), 0, 23, 45, NULL, 0);
	}
	random_field(f[2], sizeof(f[2]), 1, 31, 60, NULL, 0);
	random_field(f[3], sizeof(f[3]), 1, 12, 70, month_names, 1);
	random_field(f[4], sizeof(f[4]), 0, 7, 55, wday_names, 0);
	snprintf(out, len, "%s %s %s %s %s", f[0], f[1], f[2], f[3], f[4]);
	*m = (mins & (mins - 1)) == 0 ? __builtin_ctzll(mins) : -1;
	*h = (hours & (hours - 1)) == 0 ? __builtin_ctzll(hours) : -1;
}

/* Instants near the DST changes of the five zones in 2026-2029, or anywhere. */
static int64_t
random_instant(void)
{
	static const char *const near[] = {
		"2026-03-08T07:00:00Z", "2026-11-01T06:00:00Z",		/* New York */
		"2026-03-29T01:00:00Z", "2026-10-25T01:00:00Z",		/* Paris */
		"2026-04-04T15:00:00Z", "2026-10-03T15:30:00Z",		/* Lord Howe */
		"2027-03-14T07:00:00Z", "2027-10-31T01:00:00Z",
		"2028-02-29T00:00:00Z", "2028-12-31T23:00:00Z",
	};
	int64_t		t;

	if (rnd(0, 2) == 0) {
		(void) parse_time(near[rnd(0, (int) (sizeof(near) / sizeof(near[0])) - 1)], &t);
		return t + rnd(-3 * 86400, 86400);
	}
	(void) parse_time("2026-01-01T00:00:00Z", &t);
	return t + (int64_t) (rng() % (UINT64_C(4) * 365 * 86400));
}

static int64_t
wall_of(const tz *z, int64_t t)
{
	return t + tz_offset_at(z, t);
}

/* Does day `day` (days since the epoch) at h:m match e? */
static bool
day_time_matches(const cron_expr *e, int64_t day, int h, int m)
{
	struct tz_tm tm;

	tz_break_down(day * 86400 + h * 3600 + m * 60, 0, &tm);
	return cron_matches_local(e, &tm);
}

/*
 * The brute force answer for a fixed-time expression at h:m: the first
 * instant after `start` at which the running maximum of the wall clock
 * first reaches the time of a matching day. Scans minute by minute from
 * three days before start; gives up (returns INT64_MAX) past `stop`.
 */
static int64_t
brute_fixed(const cron_expr *e, const tz *z, int h, int m, int64_t start, int64_t stop)
{
	int64_t		t = (start - 3 * 86400) / 60 * 60;
	int64_t		runmax = wall_of(z, t);

	for (t += 60; t <= stop; t += 60) {
		int64_t		w = wall_of(z, t);

		if (w > runmax) {
			for (int64_t d = runmax / 86400 - 1; d <= w / 86400; d++) {
				int64_t		target = d * 86400 + h * 3600 + m * 60;

				if (target > runmax && target <= w && t > start && day_time_matches(e, d, h, m))
					return t;
			}
			runmax = w;
		}
	}
	return INT64_MAX;
}

/* The brute force answer for the rest: the first matching minute after start. */
static int64_t
brute_any(const cron_expr *e, const tz *z, int64_t start, int64_t stop)
{
	for (int64_t t = (start / 60 + 1) * 60; t <= stop; t += 60) {
		struct tz_tm tm;

		tz_local(z, t, &tm);
		if (cron_matches_local(e, &tm))
			return t;
	}
	return INT64_MAX;
}

static void
test_properties(void)
{
	const int	iterations = 8000;
	const int64_t window = 4 * 86400;	/* brute force looks this far ahead */
	char		first_after[512] = "",
				first_match[512] = "",
				first_brute[512] = "",
				first_stable[512] = "",
				first_fixed[512] = "";
	int			brute_checked = 0;
	char		err[256];
	char		b1[RFC3339_BUFLEN],
				b2[RFC3339_BUFLEN],
				b3[RFC3339_BUFLEN];

	for (int i = 0; i < iterations; i++) {
		char		text[200];
		cron_expr  *e;
		const tz   *z = zones[rnd(0, ZONE_COUNT - 1)];
		int64_t		start = random_instant();
		int64_t		next,
					brute,
					mid,
					again;
		struct tz_tm tm;
		int			h,
					m;

		random_expr(text, sizeof(text), &h, &m);
		e = cron_parse(text, err, sizeof(err));
		if (e == NULL) {
			CHECK(false, "generated \"%s\" rejected: %s", text, err);
			continue;
		}
		if (cron_next(e, z, start, &next) != 0) {
			/* no next time: then the brute force must find none either */
			brute = h >= 0 && m >= 0 ? brute_fixed(e, z, h, m, start, start + window)
				: brute_any(e, z, start, start + window);
			if (brute != INT64_MAX && first_brute[0] == '\0')
				snprintf(first_brute, sizeof(first_brute), "\"%s\" in %s from %s: no next, brute force %s",
						 text, tz_name(z), fmt(start, b1), fmt(brute, b3));
			cron_free(e);
			continue;
		}
		if (next <= start && first_after[0] == '\0')
			snprintf(first_after, sizeof(first_after), "\"%s\" in %s from %s gave %s",
					 text, tz_name(z), fmt(start, b1), fmt(next, b2));

		/* the wall time of next matches, except a fixed time moved out of a gap */
		tz_local(z, next, &tm);
		if (!cron_matches_local(e, &tm) && first_match[0] == '\0') {
			int64_t		before = wall_of(z, next - 1);
			bool		gap_end = wall_of(z, next) - before > 1;

			if (!(cron_is_fixed_time(e) && gap_end))
				snprintf(first_match, sizeof(first_match), "\"%s\" in %s from %s: %s does not match",
						 text, tz_name(z), fmt(start, b1), fmt(next, b2));
		}

		/* no earlier fire time, by brute force over a window */
		if (cron_is_fixed_time(e) != (h >= 0 && m >= 0) && first_fixed[0] == '\0')
			snprintf(first_fixed, sizeof(first_fixed), "\"%s\"", text);
		if (h >= 0 && m >= 0)
			brute = brute_fixed(e, z, h, m, start, start + window);
		else
			brute = brute_any(e, z, start, start + window);
		if (brute != INT64_MAX || next <= start + window) {
			brute_checked++;
			if (brute != next && first_brute[0] == '\0')
				snprintf(first_brute, sizeof(first_brute), "\"%s\" in %s from %s: next %s, brute force %s",
						 text, tz_name(z), fmt(start, b1), fmt(next, b2),
						 brute == INT64_MAX ? "none" : fmt(brute, b3));
		}

		/* any instant in [start, next) leads to the same next */
		mid = start + (int64_t) (rng() % (uint64_t) (next - start));
		if ((cron_next(e, z, mid, &again) != 0 || again != next) && first_stable[0] == '\0')
			snprintf(first_stable, sizeof(first_stable), "\"%s\" in %s: from %s next %s, from %s differs",
					 text, tz_name(z), fmt(start, b1), fmt(next, b2), fmt(mid, b3));
		cron_free(e);
	}
	CHECK(first_fixed[0] == '\0', "cron_is_fixed_time agrees with the fields: %s", first_fixed);
	CHECK(first_after[0] == '\0', "next > start: %s", first_after);
	CHECK(first_match[0] == '\0', "next matches: %s", first_match);
	CHECK(first_brute[0] == '\0', "brute force agrees: %s", first_brute);
	CHECK(first_stable[0] == '\0', "next is stable over [start, next): %s", first_stable);
	CHECK(brute_checked > iterations / 2, "brute force ran on %d of %d cases", brute_checked, iterations);
}

/* ---- time zones ------------------------------------------------------------ */

typedef struct offset_case {
	const char *zone;			/* name, or a POSIX rule when it has a ',' or digit */
	const char *at;
	int			offset;
} offset_case;

static const offset_case offset_cases[] = {
	{"UTC", "2026-07-01T00:00:00Z", 0},
	{"UTC", "1900-01-01T00:00:00Z", 0},
	{"Europe/Paris", "2026-01-15T12:00:00Z", 3600},
	{"Europe/Paris", "2026-07-15T12:00:00Z", 7200},
	{"Europe/Paris", "2026-03-29T00:59:59Z", 3600},
	{"Europe/Paris", "2026-03-29T01:00:00Z", 7200},
	{"Europe/Paris", "2026-10-25T00:59:59Z", 7200},
	{"Europe/Paris", "2026-10-25T01:00:00Z", 3600},
	{"Europe/Paris", "2100-07-01T00:00:00Z", 7200},		/* past the table: footer */
	{"Europe/Paris", "2100-12-01T00:00:00Z", 3600},
	{"Europe/Paris", "2500-03-28T01:00:00Z", 7200},		/* last Sunday of March 2500 */
	{"Europe/Paris", "2500-03-28T00:59:59Z", 3600},
	{"America/New_York", "2026-03-08T06:59:59Z", -18000},
	{"America/New_York", "2026-03-08T07:00:00Z", -14400},
	{"America/New_York", "2026-11-01T05:59:59Z", -14400},
	{"America/New_York", "2026-11-01T06:00:00Z", -18000},
	{"America/New_York", "2090-07-01T00:00:00Z", -14400},
	{"America/New_York", "2090-01-01T00:00:00Z", -18000},
	{"America/New_York", "2090-03-12T06:59:59Z", -18000},	/* 2nd Sunday of March 2090 */
	{"America/New_York", "2090-03-12T07:00:00Z", -14400},
	{"Australia/Lord_Howe", "2026-04-04T14:59:59Z", 39600},
	{"Australia/Lord_Howe", "2026-04-04T15:00:00Z", 37800},
	{"Australia/Lord_Howe", "2026-10-03T15:29:59Z", 37800},
	{"Australia/Lord_Howe", "2026-10-03T15:30:00Z", 39600},
	{"Australia/Lord_Howe", "2100-01-01T00:00:00Z", 39600},
	{"Australia/Lord_Howe", "2100-07-01T00:00:00Z", 37800},
	{"Asia/Kolkata", "2026-06-01T00:00:00Z", 19800},
	{"Asia/Kolkata", "1943-01-01T00:00:00Z", 23400},	/* war time, +06:30 */
	{"Asia/Kolkata", "2200-06-01T00:00:00Z", 19800},
	/* POSIX rules alone, RFC 8536 forms */
	{"AAA3BBB,J60,J300", "2028-03-01T04:59:59Z", -10800},	/* J60 is 1 March even in 2028 */
	{"AAA3BBB,J60,J300", "2028-03-01T05:00:00Z", -7200},
	{"AAA3BBB,J60,J300", "2028-10-27T03:59:59Z", -7200},
	{"AAA3BBB,J60,J300", "2028-10-27T04:00:00Z", -10800},
	{"AAA3BBB,59,299", "2028-02-29T04:59:59Z", -10800},	/* zero-based: 29 Feb in 2028 */
	{"AAA3BBB,59,299", "2028-02-29T05:00:00Z", -7200},
	{"AAA3BBB,59,299", "2027-03-01T05:00:00Z", -7200},
	{"AAA3BBB,59,299", "2027-03-01T04:59:59Z", -10800},
	{"AAA3BBB,59,299", "2028-10-26T04:00:00Z", -10800},
	{"AAA3BBB,M3.2.0/-1,M11.1.0/26", "2026-03-08T01:59:59Z", -10800},	/* Sat 23:00 */
	{"AAA3BBB,M3.2.0/-1,M11.1.0/26", "2026-03-08T02:00:00Z", -7200},
	{"AAA3BBB,M3.2.0/-1,M11.1.0/26", "2026-11-02T03:59:59Z", -7200},	/* Mon 02:00 */
	{"AAA3BBB,M3.2.0/-1,M11.1.0/26", "2026-11-02T04:00:00Z", -10800},
	{"AAA3BBB,M2.5.0/167,M11.1.0", "2026-03-01T01:59:59Z", -10800},	/* 22 Feb + 167 h */
	{"AAA3BBB,M2.5.0/167,M11.1.0", "2026-03-01T02:00:00Z", -7200},
	{"EST5EDT,0/0,J365/25", "2026-01-15T00:00:00Z", -14400},	/* DST all year */
	{"EST5EDT,0/0,J365/25", "2026-12-31T23:00:00Z", -14400},
	{"EST5EDT,0/0,J365/25", "2027-01-01T05:00:00Z", -14400},
	{"IST-1GMT0,M10.5.0,M3.5.0/1", "2026-01-15T00:00:00Z", 0},	/* Dublin: negative DST */
	{"IST-1GMT0,M10.5.0,M3.5.0/1", "2026-03-29T00:59:59Z", 0},
	{"IST-1GMT0,M10.5.0,M3.5.0/1", "2026-03-29T01:00:00Z", 3600},
	{"IST-1GMT0,M10.5.0,M3.5.0/1", "2026-10-25T00:59:59Z", 3600},
	{"IST-1GMT0,M10.5.0,M3.5.0/1", "2026-10-25T01:00:00Z", 0},
	{"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2026-04-04T14:59:59Z", 39600},
	{"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2026-04-04T15:00:00Z", 37800},
	{"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2026-10-03T15:30:00Z", 39600},
	{"<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "2026-03-29T00:59:59Z", -7200},	/* Nuuk */
	{"<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "2026-03-29T01:00:00Z", -3600},
	{"EST5EDT", "2026-03-08T07:00:00Z", -14400},	/* US rules by default */
	{"<+0545>-5:45", "2026-03-08T07:00:00Z", 20700},
	{"JST-9", "2026-03-08T07:00:00Z", 32400},
	{"PMT-0:09:21", "1900-01-01T00:00:00Z", 561},	/* seconds in an offset */
};

static tz  *
open_any(const char *name, char *err, size_t errlen)
{
	if (strpbrk(name, ",0123456789") != NULL)
		return tz_open_posix(name, err, errlen);
	return tz_open(name, err, errlen);
}

/* A minimal version 2 TZif image: one transition, one or two types, a footer. */
static size_t
build_tzif(unsigned char *buf, char version, int64_t trans, int32_t off0, int32_t off1,
		   const char *footer, uint32_t leapcnt)
{
	size_t		n = 0;

#define PUT32(v) do { uint32_t v_ = (uint32_t) (v); buf[n++] = (unsigned char) (v_ >> 24); \
		buf[n++] = (unsigned char) (v_ >> 16); buf[n++] = (unsigned char) (v_ >> 8); \
		buf[n++] = (unsigned char) v_; } while (0)
#define HEADER(ver) do { memcpy(buf + n, "TZif", 4); n += 4; buf[n++] = (unsigned char) (ver); \
		memset(buf + n, 0, 15); n += 15; PUT32(0); PUT32(0); PUT32(leapcnt); PUT32(1); \
		PUT32(2); PUT32(4); } while (0)

	HEADER(version);
	/* version 1 block: 32-bit times */
	PUT32(trans);
	buf[n++] = 1;
	PUT32(off0);
	buf[n++] = 0;
	buf[n++] = 0;
	PUT32(off1);
	buf[n++] = 0;
	buf[n++] = 0;
	memcpy(buf + n, "AAA", 4);
	n += 4;
	for (uint32_t i = 0; i < leapcnt; i++) {
		PUT32(0);
		PUT32(1);
	}
	if (version == 0)
		return n;
	HEADER(version);
	PUT32((uint64_t) trans >> 32);
	PUT32(trans);
	buf[n++] = 1;
	PUT32(off0);
	buf[n++] = 0;
	buf[n++] = 0;
	PUT32(off1);
	buf[n++] = 0;
	buf[n++] = 0;
	memcpy(buf + n, "AAA", 4);
	n += 4;
	for (uint32_t i = 0; i < leapcnt; i++) {
		PUT32(0);
		PUT32(0);
		PUT32(1);
	}
	buf[n++] = '\n';
	memcpy(buf + n, footer, strlen(footer));
	n += strlen(footer);
	buf[n++] = '\n';
	return n;
#undef PUT32
#undef HEADER
}

static void
test_tz(void)
{
	char		err[256];
	tz		   *z;
	int64_t		t,
				until;
	struct tz_tm tm;
	unsigned char img[512];
	size_t		len;

	for (size_t i = 0; i < sizeof(offset_cases) / sizeof(offset_cases[0]); i++) {
		const offset_case *c = &offset_cases[i];
		int			got = 0;

		z = open_any(c->zone, err, sizeof(err));
		if (z != NULL && parse_time(c->at, &t))
			got = tz_offset_at(z, t);
		CHECK(z != NULL && got == c->offset, "offset of %s at %s: want %d, got %d (%s)",
			  c->zone, c->at, c->offset, got, z ? "" : err);
		tz_free(z);
	}

	/* the footer rule alone agrees with the tables it summarises */
	{
		static const char *const pairs[][3] = {
			{"Europe/Paris", "CET-1CEST,M3.5.0,M10.5.0/3", "1997"},
			{"America/New_York", "EST5EDT,M3.2.0,M11.1.0", "2008"},
			{"Australia/Lord_Howe", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2009"},
		};
		char		first[256] = "";

		for (size_t p = 0; p < 3; p++) {
			tz		   *file = tz_open(pairs[p][0], err, sizeof(err));
			tz		   *rule = tz_open_posix(pairs[p][1], err, sizeof(err));
			int64_t		from = tz_days_from_civil(atoi(pairs[p][2]), 1, 1) * 86400;
			int64_t		to = tz_days_from_civil(2037, 1, 1) * 86400;

			for (t = from; file && rule && t < to; t += 3 * 3600 + 17) {
				if (tz_offset_at(file, t) != tz_offset_at(rule, t) && first[0] == '\0') {
					char		b[RFC3339_BUFLEN];

					snprintf(first, sizeof(first), "%s at %s: file %d, rule %d", pairs[p][0],
							 fmt(t, b), tz_offset_at(file, t), tz_offset_at(rule, t));
				}
			}
			CHECK(file && rule, "open %s and its rule", pairs[p][0]);
			tz_free(file);
			tz_free(rule);
		}
		CHECK(first[0] == '\0', "rule and table agree: %s", first);
	}

	/* tz_offset_until: the offset holds until the next change */
	z = tz_open("America/New_York", err, sizeof(err));
	(void) parse_time("2026-07-01T00:00:00Z", &t);
	CHECK(z && tz_offset_until(z, t, &until) == -14400 && until == INT64_C(1793512800),
		  "New York summer 2026 lasts until 2026-11-01T06:00:00Z");
	(void) parse_time("2095-07-01T00:00:00Z", &t);
	CHECK(z && tz_offset_until(z, t, &until) == -14400 &&
		  tz_offset_at(z, until - 1) == -14400 && tz_offset_at(z, until) == -18000,
		  "New York summer 2095 ends at its until");
	tz_local(z, INT64_C(1793512800), &tm);
	CHECK(tm.year == 2026 && tm.mon == 11 && tm.mday == 1 && tm.hour == 1 && tm.min == 0 &&
		  tm.wday == 0 && tm.yday == 304 && tm.utoff == -18000,
		  "New York local time at the fall-back: %d-%d-%d %d:%d wday %d yday %d",
		  tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.wday, tm.yday);
	CHECK(strcmp(tz_name(z), "America/New_York") == 0, "tz_name");
	tz_free(z);

	z = tz_open("Australia/Lord_Howe", err, sizeof(err));
	(void) parse_time("2026-04-04T15:00:00Z", &t);
	tz_local(z, t, &tm);
	CHECK(tm.year == 2026 && tm.mon == 4 && tm.mday == 5 && tm.hour == 1 && tm.min == 30 &&
		  tm.sec == 0 && tm.wday == 0 && tm.utoff == 37800,
		  "Lord Howe at the end of DST 2026 reads 01:30 +10:30");
	tz_free(z);
	z = tz_open("UTC", err, sizeof(err));
	CHECK(z && tz_offset_until(z, 0, &until) == 0 && until == INT64_MAX, "UTC never changes");
	tz_local(z, INT64_C(951782400), &tm);	/* 2000-02-29 */
	CHECK(tm.year == 2000 && tm.mon == 2 && tm.mday == 29 && tm.wday == 2 && tm.yday == 59,
		  "2000-02-29 is a Tuesday, day 59");
	tz_local(z, INT64_MAX, &tm);
	CHECK(tm.year > 1000000000, "INT64_MAX is clamped a billion years ahead: %d", tm.year);
	tz_local(z, INT64_MIN, &tm);
	CHECK(tm.year < -1000000000, "INT64_MIN is clamped a billion years back: %d", tm.year);
	tz_free(z);
	tz_free(NULL);

	/* bad names and unknown zones */
	{
		static const char *const bad[][2] = {
			{"../etc/passwd", "invalid time zone name \"../etc/passwd\""},
			{"/etc/passwd", "invalid time zone name \"/etc/passwd\""},
			{"Europe/../Europe/Paris", "invalid time zone name \"Europe/../Europe/Paris\""},
			{"", "invalid time zone name \"\""},
			{"Europe//Paris", "invalid time zone name \"Europe//Paris\""},
			{"Europe/Paris/", "invalid time zone name \"Europe/Paris/\""},
			{".hidden", "invalid time zone name \".hidden\""},
			{"Europe/Par is", "invalid time zone name \"Europe/Par is\""},
			{"Mars/Olympus_Mons", "unrecognized time zone \"Mars/Olympus_Mons\""},
			{"America", "unrecognized time zone \"America\""},
			{"europe/paris", "unrecognized time zone \"europe/paris\""},
			{"zone.tab", "unrecognized time zone \"zone.tab\": not a TZif file"},
			{"right/UTC", "time zone \"right/UTC\" depends on the host: use an IANA name such as Europe/Paris"},
			{"posix/Europe/Paris",
			 "time zone \"posix/Europe/Paris\" depends on the host: use an IANA name such as Europe/Paris"},
			{"localtime", "time zone \"localtime\" depends on the host: use an IANA name such as Europe/Paris"},
			{"posixrules", "time zone \"posixrules\" depends on the host: use an IANA name such as Europe/Paris"},
			{"Factory", "time zone \"Factory\" depends on the host: use an IANA name such as Europe/Paris"},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			err[0] = '\0';
			z = tz_open(bad[i][0], err, sizeof(err));
			CHECK(z == NULL && strcmp(err, bad[i][1]) == 0, "tz_open(\"%s\"): want \"%s\", got \"%s\"",
				  bad[i][0], bad[i][1], err);
			tz_free(z);
		}
	}

	/* an overlong name is cut in the message */
	{
		char		name[301];
		char		want[100];

		memset(name, 'A', 300);
		name[300] = '\0';
		snprintf(want, sizeof(want), "invalid time zone name \"%.64s...\"", name);
		z = tz_open(name, err, sizeof(err));
		CHECK(z == NULL && strcmp(err, want) == 0, "overlong zone name: %s", err);
		tz_free(z);
	}

	/* invalid POSIX rules */
	{
		static const char *const bad[] = {
			"", "EST", "5", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.2.0", "EST25",
			"<AB>5", "EST5EDT,J0,J365", "EST5EDT,366,1", "EST5EDT,M3.2.0/168,M11.1.0",
			"EST5 ", "EST5EDT,M3.6.0,M11.1.0", "EST5EDT,M3.2.7,M11.1.0", "EST5:60",
			"<+05", "EST5EDT,M3.2.0,M11.1.0,", "EST+", "EST5EDT4,",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			z = tz_open_posix(bad[i], err, sizeof(err));
			CHECK(z == NULL, "rule \"%s\" should be rejected", bad[i]);
			tz_free(z);
		}
	}

	/* "UTC" needs no files at all */
	{
		const char *old = getenv("TZDIR");
		char	   *saved = old ? strdup(old) : NULL;

		setenv("TZDIR", "/nonexistent/zoneinfo", 1);
		z = tz_open("UTC", err, sizeof(err));
		CHECK(z != NULL && tz_offset_at(z, 0) == 0, "UTC without zone files");
		tz_free(z);
		z = tz_open("Europe/Paris", err, sizeof(err));
		CHECK(z == NULL && strcmp(err, "unrecognized time zone \"Europe/Paris\"") == 0,
			  "TZDIR is honoured: %s", err);
		tz_free(z);
		if (saved)
			setenv("TZDIR", saved, 1);
		else
			unsetenv("TZDIR");
		free(saved);
	}

	/* TZif images in memory: slim files lean on the footer */
	len = build_tzif(img, '2', 0, 0, 3600, "CET-1CEST,M3.5.0,M10.5.0/3", 0);
	z = tz_open_tzif("slim", img, len, err, sizeof(err));
	CHECK(z && tz_offset_at(z, -1) == 0 && tz_offset_at(z, 100) == 3600 &&
		  tz_offset_at(z, INT64_C(1774746000)) == 7200 && tz_offset_at(z, INT64_C(1774745999)) == 3600,
		  "slim version 2 file uses its footer after the last transition: %s", z ? "" : err);
	tz_free(z);
	len = build_tzif(img, '3', 0, 0, 3600, "", 0);
	z = tz_open_tzif("nofooter", img, len, err, sizeof(err));
	CHECK(z && tz_offset_at(z, INT64_C(1774746000)) == 3600, "empty footer keeps the last type");
	tz_free(z);
	len = build_tzif(img, 0, 1000, -3600, 7200, "", 0);
	z = tz_open_tzif("v1", img, len, err, sizeof(err));
	CHECK(z && tz_offset_at(z, 999) == -3600 && tz_offset_at(z, 1000) == 7200, "version 1 file");
	tz_free(z);
	len = build_tzif(img, '2', 0, 0, 3600, "CET-1CEST,M3.5.0,M10.5.0/3", 0);
	for (size_t cut = 0; cut < len; cut++) {
		z = tz_open_tzif("cut", img, cut, err, sizeof(err));
		if (z != NULL)
			break;
	}
	CHECK(z == NULL, "every truncation of a TZif image is rejected");
	tz_free(z);
	len = build_tzif(img, '2', 0, 0, 3600, "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	z = tz_open_tzif("leap", img, len, err, sizeof(err));
	CHECK(z == NULL && strcmp(err, "invalid time zone data for \"leap\": leap seconds are not supported") == 0,
		  "leap seconds rejected: %s", err);
	len = build_tzif(img, '2', 0, 0, 999999, "", 0);
	z = tz_open_tzif("far", img, len, err, sizeof(err));
	CHECK(z == NULL, "an offset of 277 hours is rejected");
	len = build_tzif(img, '2', 0, 0, 3600, "CET-1CEST,M3.5.0", 0);
	z = tz_open_tzif("badfooter", img, len, err, sizeof(err));
	CHECK(z == NULL && strcmp(err, "invalid time zone data for \"badfooter\": invalid TZ rule in footer") == 0,
		  "bad footer rejected: %s", err);
}

/* Rough speed check: the benchmark wants well over 20,000 occurrences a second. */
static void
test_speed(void)
{
	static const char *const exprs[] = {"*/5 * * * *", "30 2 * * *", "0 9 * * 1-5", "0 0 29 2 *", "15 3 1 * *"};
	char		err[256];
	int			n = 0;
	clock_t		c0 = clock();
	double		secs;

	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		cron_expr  *e = cron_parse(exprs[i], err, sizeof(err));

		for (int zi = 0; zi < ZONE_COUNT; zi++) {
			int64_t		t = INT64_C(1767225600);

			for (int k = 0; k < 2000 && cron_next(e, zones[zi], t, &t) == 0; k++)
				n++;
		}
		cron_free(e);
	}
	secs = (double) (clock() - c0) / CLOCKS_PER_SEC;
	CHECK(n > 0 && secs / n < 20e-6, "%d occurrences took %.3f s (%.2f us each)", n, secs, secs / n * 1e6);
}

int
main(void)
{
	char		err[256];

	for (int i = 0; i < ZONE_COUNT; i++) {
		zones[i] = tz_open(zone_names[i], err, sizeof(err));
		if (zones[i] == NULL) {
			printf("not ok: cannot open %s: %s\n", zone_names[i], err);
			return 1;
		}
	}
	test_next_table();
	test_bad_table();
	test_every_periods();
	test_parse_misc();
	test_tz();
	test_properties();
	test_speed();
	for (int i = 0; i < ZONE_COUNT; i++)
		tz_free(zones[i]);
	return check_done("cron");
}
