/*
 * Unit tests of lib/sched/next: `cronq schedule next` without its printing
 * — fire times across daylight-saving changes, the defaults (UTC, now), and
 * the refusals with their messages.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/next.h"
#include "time/rfc3339.h"

static const struct {
	const char *expr, *zone, *from;
	int64_t		count;
	int			rc;
	const char *want;			/* the times, space-separated, or the error message */
	const char *anchor;
} cases[] = {
	{"0 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2, 0,
	 "2026-03-08T07:00:00Z 2026-03-09T06:00:00Z", NULL},
	{"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2, 0,
	 "2026-11-01T05:30:00Z 2026-11-02T06:30:00Z", NULL},
	{"0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3, 0,
	 "2026-11-01T05:00:00Z 2026-11-01T06:00:00Z 2026-11-01T07:00:00Z", NULL},
	{"30 * * * *", "Europe/Paris", "2026-03-29T00:00:00Z", 2, 0, "2026-03-29T00:30:00Z 2026-03-29T01:30:00Z", NULL},
	{"@hourly", NULL, "2026-01-01 10:15", 2, 0, "2026-01-01T11:00:00Z 2026-01-01T12:00:00Z", NULL},
	{"0 0 * * *", NULL, "2026-01-01T00:00:00Z", 1, 0, "2026-01-02T00:00:00Z", NULL},	/* strictly after */
	{"@hourly", NULL, NULL, 2, 0, "2026-05-01T11:00:00Z 2026-05-01T12:00:00Z", NULL},	/* from "now" */
	{"0 0 29 2 *", NULL, "2026-01-01T00:00:00Z", 2, 0, "2028-02-29T00:00:00Z 2032-02-29T00:00:00Z", NULL},
	{"61 * * * *", NULL, NULL, 5, EX_DATAERR, "invalid cron expression \"61 * * * *\": minute: 61 is out of range 0-59", NULL},
	{"0 0 * * *", "Mars/Olympus_Mons", NULL, 5, EX_DATAERR, NULL, NULL},
	{"0 0 * * *", NULL, "yesterday", 5, EX_DATAERR,
	 "invalid time \"yesterday\": expected RFC 3339, such as 2026-03-08T10:00:00Z", NULL},
	{"0 0 30 2 *", NULL, NULL, 5, EX_DATAERR, "cron expression \"0 0 30 2 *\" never fires", NULL},
	/* @every: multiples of the period from the epoch, or from the anchor, across days. */
	{"@every 90m", NULL, "2026-03-07T22:00:00Z", 3, 0, "2026-03-07T22:30:00Z 2026-03-08T00:00:00Z 2026-03-08T01:30:00Z", NULL},
	{"@every 90m", NULL, "2026-03-07T22:00:00Z", 3, 0,
	 "2026-03-07T22:50:00Z 2026-03-08T00:20:00Z 2026-03-08T01:50:00Z", "2026-03-01T00:20:00Z"},
	{"@every 7m", NULL, "2026-03-07T23:55:00Z", 3, 0, "2026-03-07T23:59:00Z 2026-03-08T00:06:00Z 2026-03-08T00:13:00Z", NULL},
	{"@every 7m", NULL, "2026-03-07T23:55:00Z", 2, 0, "2026-03-07T23:55:30Z 2026-03-08T00:02:30Z",
	 "2000-01-01T00:00:30Z"},
	/* Real instants, not wall times: a DST change moves nothing (New York springs forward at 07:00Z). */
	{"@every 90m", "America/New_York", "2026-03-08T05:00:00Z", 3, 0,
	 "2026-03-08T06:00:00Z 2026-03-08T07:30:00Z 2026-03-08T09:00:00Z", NULL},
	{"@every 7m", "America/New_York", "2026-03-08T06:55:00Z", 3, 0,
	 "2026-03-08T06:59:00Z 2026-03-08T07:06:00Z 2026-03-08T07:13:00Z", NULL},
	{"@every 90m", "Europe/Paris", "2026-10-25T00:00:00Z", 2, 0, "2026-10-25T01:20:00Z 2026-10-25T02:50:00Z",
	 "2026-10-24T23:50:00Z"},
	{"@every 1m30s", NULL, "2026-01-01T00:00:00Z", 2, 0, "2026-01-01T00:01:30Z 2026-01-01T00:03:00Z", NULL},
	{"@every 30s", NULL, NULL, 5, EX_DATAERR, "invalid cron expression \"@every 30s\": @every: 30s is shorter than 1 minute", NULL},
	{"@every", NULL, NULL, 5, EX_DATAERR, "invalid cron expression \"@every\": @every needs a duration, such as @every 90m", NULL},
	{"@every 0m", NULL, NULL, 5, EX_DATAERR, "invalid cron expression \"@every 0m\": @every: 0m is shorter than 1 minute", NULL},
	{"@every 5x", NULL, NULL, 5, EX_DATAERR,
	 "invalid cron expression \"@every 5x\": @every: invalid duration \"5x\": unrecognized unit \"x\"", NULL},
	{"@every 90500ms", NULL, NULL, 5, EX_DATAERR,
	 "invalid cron expression \"@every 90500ms\": @every: 90500ms is not a whole number of seconds", NULL},
	{"@every 1h 30m", NULL, "2026-01-01T00:00:00Z", 2, 0, "2026-01-01T01:30:00Z 2026-01-01T03:00:00Z", NULL},
	{"@every 1.5 hours", NULL, "2026-01-01T00:00:00Z", 2, 0, "2026-01-01T01:30:00Z 2026-01-01T03:00:00Z", NULL},
	{"@every 1h 30m x", NULL, NULL, 5, EX_DATAERR,
	 "invalid cron expression \"@every 1h 30m x\": @every: invalid duration \"1h 30m x\": expected a number at \"x\"", NULL},
	{"0 * * * *", NULL, NULL, 5, EX_DATAERR, "an anchor applies only to @every expressions, not to \"0 * * * *\"",
	 "2026-01-01T00:00:00Z"},
	{"@every 1h", "localtime", NULL, 5, EX_DATAERR,
	 "time zone \"localtime\" depends on the host: use an IANA name such as Europe/Paris", NULL},
	{"@every 1h", "right/UTC", NULL, 5, EX_DATAERR,
	 "time zone \"right/UTC\" depends on the host: use an IANA name such as Europe/Paris", NULL},
};

int
main(void)
{
	int64_t now;

	if (rfc3339_parse("2026-05-01T10:20:30Z", &now, NULL, 0) != 0)
		return 2;
	{
		/* 24:00:00 is the next day's midnight, as PostgreSQL reads it; 24:00:01 and 24:00:00.5 are not times */
		int64_t a, b;
		char why[128];

		CHECK(rfc3339_parse("2026-12-01 24:00:00", &a, why, sizeof why) == 0 &&
			  rfc3339_parse("2026-12-02T00:00:00Z", &b, why, sizeof why) == 0 && a == b, "24:00:00 is midnight after");
		CHECK(rfc3339_parse("2026-12-31T24:00Z", &a, why, sizeof why) == 0 &&
			  rfc3339_parse("2027-01-01T00:00:00Z", &b, why, sizeof why) == 0 && a == b, "24:00 at the year's end");
		CHECK(rfc3339_parse("2026-12-01 24:00:01", &a, why, sizeof why) == RFC3339_IMPOSSIBLE &&
			  rfc3339_parse("2026-12-01 24:00:00.5", &a, why, sizeof why) == RFC3339_IMPOSSIBLE &&
			  rfc3339_parse("2026-12-01 24:00:00.000", &a, why, sizeof why) == 0, "24:00 and nothing past it");
		/* a fraction whose digits follow one not zero (an endless loop once) */
		CHECK(rfc3339_parse("2026-11-30 01:07:25.499889+00", &a, why, sizeof why) == 0 &&
			  rfc3339_parse("2026-11-30T01:07:25Z", &b, why, sizeof why) == 0 && a == b, "a fraction of many digits");
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cq_err err = {0};
		int64_t *times = NULL, n = -1;
		int rc = sched_next(cases[i].expr, cases[i].zone, cases[i].anchor, cases[i].from, now, cases[i].count, &times, &n, &err);
		char got[1024] = "";

		CHECK(rc == cases[i].rc, "[%s]: rc %d, expected %d (%s)", cases[i].expr, rc, cases[i].rc, err.msg);
		if (rc != 0) {
			CHECK(times == NULL && n == 0, "[%s]: no times on an error", cases[i].expr);
			if (cases[i].want)
				CHECK(strcmp(err.msg, cases[i].want) == 0, "[%s]: message [%s], expected [%s]", cases[i].expr,
					  err.msg, cases[i].want);
			else
				CHECK(strstr(err.msg, cases[i].zone) != NULL, "[%s]: message [%s] names the zone", cases[i].expr,
					  err.msg);
			continue;
		}
		for (int64_t k = 0; k < n; k++) {
			char ts[RFC3339_BUFLEN];

			rfc3339_format(times[k], ts, sizeof ts);
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", k ? " " : "", ts);
		}
		CHECK(strcmp(got, cases[i].want) == 0, "[%s]: got [%s], expected [%s]", cases[i].expr, got, cases[i].want);
		free(times);
	}
	return check_done("next");
}
