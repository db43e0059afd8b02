/* Unit tests of lib/util/duration: a table of inputs and what they mean. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "util/duration.h"

static const struct {
	const char *text;
	int64_t		ms;				/* -1: must be refused */
	const char *error;			/* the refusal, when ms is -1 */
} cases[] = {
	{"90s", 90000, NULL},
	{"5m", 300000, NULL},
	{"2h", 7200000, NULL},
	{"1d", 86400000, NULL},
	{"1w", 604800000, NULL},
	{"1h30m", 5400000, NULL},
	{"1d2h3m4s", 93784000, NULL},
	{"1s500ms", 1500, NULL},
	{"250ms", 250, NULL},
	{"0s", 0, NULL},
	{"30", 30000, NULL},
	{"0", 0, NULL},
	{"", -1, "empty duration"},
	{"5x", -1, "invalid duration \"5x\": unrecognized unit \"x\""},
	{"5y", -1, "invalid duration \"5y\": unrecognized unit \"y\""},
	{"-5s", -1, "duration \"-5s\" must not be negative"},
	{"m", -1, "invalid duration \"m\": expected a number at \"m\""},
	{"1h30", -1, "invalid duration \"1h30\": missing unit after 30"},
	{"30m1h", -1, "invalid duration \"30m1h\": units must go from largest to smallest, each once"},
	{"1m1m", -1, "invalid duration \"1m1m\": units must go from largest to smallest, each once"},
	{"1.5.h", -1, "invalid duration \"1.5.h\": unrecognized unit \".h\""},
	{"1.h", -1, "invalid duration \"1.h\": expected digits after \".\" at \".h\""},
	{".5h", -1, "invalid duration \".5h\": expected a number at \".5h\""},
	{" 5s", -1, "invalid duration \" 5s\": expected a number at \" 5s\""},
	{"5s ", -1, "invalid duration \"5s \": trailing blanks"},
	{"5 ", -1, "invalid duration \"5 \": trailing blanks"},
	{"-1 hour", -1, "duration \"-1 hour\" must not be negative"},
	{"1 hour -5 minutes", -1, "duration \"1 hour -5 minutes\" must not be negative"},
	{"1 hour 30", -1, "invalid duration \"1 hour 30\": missing unit after 30"},
	{"1.5h 30", -1, "invalid duration \"1.5h 30\": missing unit after 30"},
	{"2 hours 3 hours", -1, "invalid duration \"2 hours 3 hours\": units must go from largest to smallest, each once"},
	{"1 fortnight", -1, "invalid duration \"1 fortnight\": unrecognized unit \"fortnight\""},
	{"1 hourly", -1, "invalid duration \"1 hourly\": unrecognized unit \"hourly\""},
	{"1e3s", -1, "invalid duration \"1e3s\": unrecognized unit \"e3s\""},
	{"99999999999999999999s", -1, "duration \"99999999999999999999s\" is too long"},
	{"5300w", -1, "duration \"5300w\" is too long"},
	{"5299.9w", -1, "duration \"5299.9w\" is too long"},
	{"36600 days 1 second", -1, "duration \"36600 days 1 second\" is too long"},
	{"5 mi", -1, "invalid duration \"5 mi\": unrecognized unit \"mi\""},
	/* Decimals and PostgreSQL's unit words. */
	{"1.5h", 5400000, NULL},
	{"0.5d", 43200000, NULL},
	{"1.25m", 75000, NULL},
	{"0.001s", 1, NULL},
	{"0.0004s", 0, NULL},
	{"1.5", 1500, NULL},
	{"1.5h30m", 7200000, NULL},
	{"1 hour", 3600000, NULL},
	{"1 HOUR", 3600000, NULL},
	{"2 hours 30 minutes", 9000000, NULL},
	{"90 seconds", 90000, NULL},
	{"1 day 2 hours", 93600000, NULL},
	{"1 week", 604800000, NULL},
	{"3 weeks 1 day", 1900800000, NULL},
	{"5 mins", 300000, NULL},
	{"5mins", 300000, NULL},
	{"5 min 10 sec", 310000, NULL},
	{"2 hrs", 7200000, NULL},
	{"1h 30m", 5400000, NULL},
	{"1 h\t30 m", 5400000, NULL},
	{"250 milliseconds", 250, NULL},
	{"1 second 500 msec", 1500, NULL},
	{"1.5 hours", 5400000, NULL},
};

static const struct {
	int64_t		ms;
	const char *text;
} formats[] = {
	{0, "0s"}, {250, "250ms"}, {1500, "1s500ms"}, {90000, "1m30s"},
	{5400000, "1h30m"}, {86400000, "1d"}, {93784000, "1d2h3m4s"},
};

int
main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t ms = -7;
		char err[256] = "";
		int rc = duration_parse(cases[i].text, &ms, err, sizeof err);

		if (cases[i].ms >= 0)
			CHECK(rc == 0 && ms == cases[i].ms, "\"%s\": expected %lld ms, got rc %d, %lld (%s)",
				  cases[i].text, (long long) cases[i].ms, rc, (long long) ms, err);
		else
			CHECK(rc == -1 && strcmp(err, cases[i].error) == 0, "\"%s\": expected error [%s], got rc %d [%s]",
				  cases[i].text, cases[i].error, rc, err);
	}
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		char buf[64];
		int64_t back;
		char err[128];

		duration_format(formats[i].ms, buf, sizeof buf);
		CHECK(strcmp(buf, formats[i].text) == 0, "format %lld: expected %s, got %s",
			  (long long) formats[i].ms, formats[i].text, buf);
		CHECK(duration_parse(buf, &back, err, sizeof err) == 0 && back == formats[i].ms,
			  "format of %lld does not parse back", (long long) formats[i].ms);
	}
	return check_done("duration");
}
