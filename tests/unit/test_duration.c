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
	{"1.5h", -1, "invalid duration \"1.5h\": unrecognized unit \".5h\""},
	{" 5s", -1, "invalid duration \" 5s\": expected a number at \" 5s\""},
	{"5 s", -1, "invalid duration \"5 s\": unrecognized unit \" s\""},
	{"99999999999999999999s", -1, "duration \"99999999999999999999s\" is too long"},
	{"5300w", -1, "duration \"5300w\" is too long"},
	{"5mins", -1, "invalid duration \"5mins\": unrecognized unit \"mins\""},
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
