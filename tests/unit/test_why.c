/*
 * Unit tests of the pure parts of `cronq why`: which fire time an --at
 * asks about (schedule_fire_at_or_before: at or before, across a
 * daylight-saving change, none in five years), and the one-line answer.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/schedule.h"
#include "sched/why.h"
#include "time/rfc3339.h"

static const struct {
	const char *expr, *zone, *at;
	int64_t		spread;			/* seconds */
	int			rc;
	const char *want;			/* the fire time, or a piece of the error message */
} cases[] = {
	{"*/5 * * * *", "UTC", "2026-11-27T08:07:30Z", 0, 0, "2026-11-27T08:05:00Z"},
	{"*/5 * * * *", "UTC", "2026-11-27T08:05:00Z", 0, 0, "2026-11-27T08:05:00Z"},	/* at is included */
	{"0 2 * * *", "America/New_York", "2026-03-08T12:00:00Z", 0, 0, "2026-03-08T07:00:00Z"},	/* the gap's end */
	{"30 1 * * *", "America/New_York", "2026-11-01T12:00:00Z", 0, 0, "2026-11-01T05:30:00Z"},	/* first pass only */
	{"0 * * * *", "America/New_York", "2026-11-01T06:30:00Z", 0, 0, "2026-11-01T06:00:00Z"},	/* the second 01:00 */
	{"0 0 29 2 *", "UTC", "2027-01-01T00:00:00Z", 0, 0, "2024-02-29T00:00:00Z"},
	{"0 0 1 1 *", "UTC", "1970-06-01T00:00:00Z", 0, 0, "1970-01-01T00:00:00Z"},
	{"0 0 29 2 *", "UTC", "2000-01-01T00:00:00Z", 0, 0, "1996-02-29T00:00:00Z"},
	{"0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", 0, EX_DATAERR, "has no fire time in the five years"},
	{"0 0 * * *", "Mars/Olympus_Mons", "2026-01-01T00:00:00Z", 0, EX_DATAERR, "Mars/Olympus_Mons"},
	{"61 * * * *", "UTC", "2026-01-01T00:00:00Z", 0, EX_DATAERR, "minute: 61 is out of range"},
	{"@every 90m", "UTC", "2026-11-27T08:07:30Z", 0, 0, "2026-11-27T07:30:00Z"},	/* from the epoch */
	{"0 * * * *", "UTC", "2026-11-27T08:07:30Z", 3600, 0, ""},	/* spread: filled in below */
};

int
main(void)
{
	json_t *why;
	char line[512];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cq_err err = {0};
		int64_t at, fire = 0;
		char got[RFC3339_BUFLEN] = "";
		int rc;

		if (rfc3339_parse(cases[i].at, &at, NULL, 0) != 0)
			return 2;
		fire_def times = {"why-test", cases[i].expr, cases[i].zone, false, 0, cases[i].spread};

		rc = schedule_fire_at_or_before(&times, at, &fire, &err);
		CHECK(rc == cases[i].rc, "[%s at %s]: rc %d, expected %d (%s)", cases[i].expr, cases[i].at, rc,
			  cases[i].rc, err.msg);
		if (rc != 0) {
			CHECK(strstr(err.msg, cases[i].want) != NULL, "[%s]: message [%s] has [%s]", cases[i].expr, err.msg,
				  cases[i].want);
			continue;
		}
		if (cases[i].want[0] == '\0') {	/* spread: the hour's fire time plus the name's offset */
			int64_t off = fire_offset("why-test", cases[i].spread), hour = at / 3600 * 3600;
			int64_t want = hour + off <= at ? hour + off : hour - 3600 + off;

			CHECK(fire == want && off > 0 && off < cases[i].spread, "[%s at %s, spread %lld]: got %lld, expected %lld",
				  cases[i].expr, cases[i].at, (long long) cases[i].spread, (long long) fire, (long long) want);
			continue;
		}
		rfc3339_format(fire, got, sizeof got);
		CHECK(strcmp(got, cases[i].want) == 0, "[%s at %s]: got %s, expected %s", cases[i].expr, cases[i].at,
			  got, cases[i].want);
	}

	why = json_pack("{s:s, s:s, s:s, s:s}", "schedule", "nightly", "fire_at", "2026-11-26T01:30:00Z",
					"fire_local", "2026-11-26 02:30 Europe/Paris", "reason", "ran: job 812 succeeded");
	schedule_why_text(why, line, sizeof line);
	CHECK(strcmp(line, "nightly 2026-11-26T01:30:00Z (2026-11-26 02:30 Europe/Paris): ran: job 812 succeeded") == 0,
		  "the one line: [%s]", line);
	json_decref(why);
	return check_done("why");
}
