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
} cases[] = {
	{"0 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2, 0,
	 "2026-03-08T07:00:00Z 2026-03-09T06:00:00Z"},
	{"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2, 0,
	 "2026-11-01T05:30:00Z 2026-11-02T06:30:00Z"},
	{"0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3, 0,
	 "2026-11-01T05:00:00Z 2026-11-01T06:00:00Z 2026-11-01T07:00:00Z"},
	{"30 * * * *", "Europe/Paris", "2026-03-29T00:00:00Z", 2, 0, "2026-03-29T00:30:00Z 2026-03-29T01:30:00Z"},
	{"@hourly", NULL, "2026-01-01 10:15", 2, 0, "2026-01-01T11:00:00Z 2026-01-01T12:00:00Z"},
	{"0 0 * * *", NULL, "2026-01-01T00:00:00Z", 1, 0, "2026-01-02T00:00:00Z"},	/* strictly after */
	{"@hourly", NULL, NULL, 2, 0, "2026-05-01T11:00:00Z 2026-05-01T12:00:00Z"},	/* from "now" */
	{"0 0 29 2 *", NULL, "2026-01-01T00:00:00Z", 2, 0, "2028-02-29T00:00:00Z 2032-02-29T00:00:00Z"},
	{"61 * * * *", NULL, NULL, 5, EX_DATAERR, "invalid cron expression \"61 * * * *\": minute: 61 is out of range 0-59"},
	{"0 0 * * *", "Mars/Olympus_Mons", NULL, 5, EX_DATAERR, NULL},
	{"0 0 * * *", NULL, "yesterday", 5, EX_DATAERR,
	 "invalid time \"yesterday\": expected RFC 3339, such as 2026-03-08T10:00:00Z"},
	{"0 0 30 2 *", NULL, NULL, 5, EX_DATAERR, "cron expression \"0 0 30 2 *\" never fires"},
};

int
main(void)
{
	int64_t now;

	if (rfc3339_parse("2026-05-01T10:20:30Z", &now, NULL, 0) != 0)
		return 2;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cq_err err = {0};
		int64_t *times = NULL, n = -1;
		int rc = sched_next(cases[i].expr, cases[i].zone, cases[i].from, now, cases[i].count, &times, &n, &err);
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
