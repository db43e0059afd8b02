/*
 * fuzz_cron — libFuzzer target for lib/sched: cron_parse and cron_next over
 * five real zones, and two ways in for hostile zone data: "TZ:<rule>\n<expr>"
 * feeds a POSIX TZ rule, input starting "TZif" feeds a whole zone file.
 * Beyond crashes it checks what cron_next promises; it does not compare
 * results with another implementation (tests/unit/test_cron.c does that).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "time/cron.h"
#include "time/tz.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NZONES 5

static tz  *zones[NZONES];

static void
open_zones(void)
{
	static const char *const names[NZONES] = {
		"UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"
	};
	char		err[256];

	if (zones[0] != NULL)
		return;
	for (int i = 0; i < NZONES; i++) {
		zones[i] = tz_open(names[i], err, sizeof(err));
		/* without zone files, fall back to UTC rather than test nothing */
		if (zones[i] == NULL)
			zones[i] = tz_open("UTC", err, sizeof(err));
	}
}

static uint64_t
hash(const uint8_t *data, size_t size)
{
	uint64_t	h = UINT64_C(1469598103934665603);

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * UINT64_C(1099511628211);
	return h;
}

/* Follow a few fire times from `start` and check what cron_next promises. */
static void
walk(const cron_expr *e, const tz *zone, int64_t start)
{
	int64_t		t = start;

	for (int i = 0; i < 4; i++) {
		int64_t		next;
		struct tz_tm tm;

		if (cron_next(e, zone, t, &next) != 0)
			return;
		if (next <= t || next > CRON_TIME_MAX || next < CRON_TIME_MIN)
			abort();
		tz_local(zone, next, &tm);
		if (!cron_is_fixed_time(e) && !cron_matches_local(e, &tm))
			abort();
		/* "@every 90s" fires on the half minute: only cron fields are whole minutes. */
		if (tm.sec != 0 && !cron_is_fixed_time(e) && cron_every(e) == 0)
			abort();
		t = next;
	}
}

static void
walk_all(const cron_expr *e, const tz *zone, uint64_t h)
{
	static const int64_t starts[] = {
		INT64_C(1772928000),	/* 2026-03-08, New York springs forward */
		INT64_C(1793491200),	/* 2026-11-01, and falls back */
		INT64_C(1774742400),	/* 2026-03-29, Paris */
		INT64_C(1775314800),	/* 2026-04-04 14:00, Lord Howe */
		INT64_C(-2208988800),	/* 1900-01-01 */
		INT64_C(253402300000),	/* near the end of year 9999 */
		INT64_MIN,
	};

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		walk(e, zone, starts[i]);
	/* and somewhere between 1900 and 2100 chosen by the input */
	walk(e, zone, (int64_t) (h % (UINT64_C(200) * 366 * 86400)) - INT64_C(2208988800));
}

/* Offsets stay bounded and every stretch ends after it starts. */
static void
check_zone(const tz *zone, uint64_t h)
{
	int64_t		t = (int64_t) (h % (UINT64_C(400) * 366 * 86400)) - INT64_C(2208988800);

	for (int i = 0; i < 8; i++) {
		int64_t		until;
		int			off = tz_offset_until(zone, t, &until);

		if (off < -26 * 3600 || off > 26 * 3600 || until <= t)
			abort();
		if (until == INT64_MAX)
			break;
		t = until;
	}
	(void) tz_offset_at(zone, INT64_MAX);
	(void) tz_offset_at(zone, INT64_MIN);
}

static char *
cstring(const uint8_t *data, size_t size)
{
	char	   *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		err[256];
	uint64_t	h = hash(data, size);

	open_zones();

	if (size >= 4 && memcmp(data, "TZif", 4) == 0) {
		tz		   *zone = tz_open_tzif("fuzz", data, size, err, sizeof(err));
		cron_expr  *fixed = cron_parse("30 2 * * *", err, sizeof(err));
		cron_expr  *any = cron_parse("*/7 1-3 * * *", err, sizeof(err));

		if (zone != NULL) {
			check_zone(zone, h);
			walk_all(fixed, zone, h);
			walk_all(any, zone, h);
		}
		cron_free(fixed);
		cron_free(any);
		tz_free(zone);
		return 0;
	}

	if (size >= 3 && memcmp(data, "TZ:", 3) == 0) {
		const uint8_t *nl = memchr(data + 3, '\n', size - 3);
		size_t		rule_len = nl ? (size_t) (nl - data - 3) : size - 3;
		char	   *rule = cstring(data + 3, rule_len);
		char	   *text = nl ? cstring(nl + 1, size - (size_t) (nl + 1 - data)) : cstring(data, 0);
		tz		   *zone = tz_open_posix(rule, err, sizeof(err));
		cron_expr  *e = cron_parse(text[0] ? text : "*/30 * * * *", err, sizeof(err));

		if (zone != NULL) {
			check_zone(zone, h);
			if (e != NULL)
				walk_all(e, zone, h);
		}
		cron_free(e);
		tz_free(zone);
		free(rule);
		free(text);
		return 0;
	}

	{
		char	   *text = cstring(data, size);
		cron_expr  *e = cron_parse(text, err, sizeof(err));

		if (e == NULL) {
			/* a failure always explains itself on one line */
			if (err[0] == '\0' || strchr(err, '\n') != NULL)
				abort();
		} else {
			for (int i = 0; i < NZONES; i++)
				walk_all(e, zones[i], h);
		}
		cron_free(e);
		free(text);
	}
	return 0;
}
