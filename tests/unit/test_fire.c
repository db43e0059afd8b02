/*
 * test_fire — the fire clock (lib/sched/fire): spread offsets against
 * FNV-1a values worked out apart from the C (Python's arithmetic), always
 * in [0, spread); "@every" instants across days and daylight saving
 * changes with and without an anchor; due instants shifted by the offset;
 * the refusals. No database.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/fire.h"
#include "time/rfc3339.h"

static int64_t
at(const char *text)
{
	int64_t t = 0;

	if (rfc3339_parse(text, &t, NULL, 0) != 0)
		abort();
	return t;
}

/* The first n due instants of d after from, space-separated, into got. */
static int
next_times(const fire_def *d, const char *from, int n, char *got, size_t len)
{
	cq_err err = {0};
	fire_clock c;
	int64_t t = at(from);

	got[0] = '\0';
	if (fire_open(d, &c, &err) != 0) {
		snprintf(got, len, "%.200s", err.msg);
		return err.code;
	}
	for (int i = 0; i < n && fire_next(&c, t, &t) == 0; i++) {
		char ts[RFC3339_BUFLEN];

		rfc3339_format(t, ts, sizeof ts);
		snprintf(got + strlen(got), len - strlen(got), "%s%s", i ? " " : "", ts);
	}
	fire_close(&c);
	return 0;
}

static void
test_hash(void)
{
	/* FNV-1a 64 of the names' bytes, computed apart from this code. */
	CHECK(fire_hash("") == UINT64_C(0xcbf29ce484222325), "empty name: the offset basis");
	CHECK(fire_hash("nightly-report") == UINT64_C(4417635575514249131), "nightly-report: %llu",
		  (unsigned long long) fire_hash("nightly-report"));
	CHECK(fire_hash("every-spread") == UINT64_C(8668619211152085148), "every-spread: %llu",
		  (unsigned long long) fire_hash("every-spread"));
	CHECK(fire_offset("nightly-report", 3600) == 1931, "nightly-report in 1h: %lld",
		  (long long) fire_offset("nightly-report", 3600));
	CHECK(fire_offset("every-spread", 3600) == 748, "every-spread in 1h: %lld",
		  (long long) fire_offset("every-spread", 3600));
	CHECK(fire_offset("every-spread", 86400) == 69148, "every-spread in 1d: %lld",
		  (long long) fire_offset("every-spread", 86400));
	CHECK(fire_offset("every-spread", 0) == 0 && fire_offset("every-spread", -5) == 0, "no spread, no offset");

	/* Always in [0, spread), for names and spreads of every shape. */
	for (int s = 1; s <= 5000; s += 37) {
		char name[32];

		snprintf(name, sizeof name, "job-%d", s * 7919);
		for (int64_t spread = 1; spread <= FIRE_SPREAD_MAX; spread = spread * 3 + 1) {
			int64_t off = fire_offset(name, spread);

			if (off < 0 || off >= spread)
				CHECK(false, "%s in %lld: offset %lld out of range", name, (long long) spread, (long long) off);
		}
	}
	CHECK(true, "offsets in range");
}

static void
test_clock(void)
{
	static const struct {
		fire_def	d;
		const char *anchor, *from;
		int			n;
		const char *want;
	} cases[] = {
		/* @every: multiples of the period from the epoch, across a day boundary. */
		{{"a", "@every 90m", NULL, false, 0, 0}, NULL, "2026-03-07T22:00:00Z", 3,
		 "2026-03-07T22:30:00Z 2026-03-08T00:00:00Z 2026-03-08T01:30:00Z"},
		{{"a", "@every 7m", "Europe/Paris", false, 0, 0}, NULL, "2026-03-29T00:55:00Z", 3,
		 "2026-03-29T01:02:00Z 2026-03-29T01:09:00Z 2026-03-29T01:16:00Z"},
		/* From an anchor, through New York's fall back (06:00Z). */
		{{"a", "@every 90m", "America/New_York", true, 0, 0}, "2026-11-01T04:10:00Z", "2026-11-01T04:00:00Z", 3,
		 "2026-11-01T04:10:00Z 2026-11-01T05:40:00Z 2026-11-01T07:10:00Z"},
		/* An anchor in the future counts back as well. */
		{{"a", "@every 7m", NULL, true, 0, 0}, "2030-01-01T00:00:00Z", "2030-01-01T00:00:00Z", 1,
		 "2030-01-01T00:07:00Z"},
		/* Spread: every-spread's offset in 1h is 748s (12m28s). */
		{{"every-spread", "@every 1h", NULL, false, 0, 3600}, NULL, "2026-01-01T00:00:00Z", 2,
		 "2026-01-01T00:12:28Z 2026-01-01T01:12:28Z"},
		{{"every-spread", "@every 1h", NULL, false, 0, 3600}, NULL, "2026-01-01T00:12:28Z", 1,
		 "2026-01-01T01:12:28Z"},
		{{"every-spread", "@every 1h", NULL, false, 0, 3600}, NULL, "2026-01-01T00:12:27Z", 1,
		 "2026-01-01T00:12:28Z"},
		/* A cron expression spread: nightly-report's offset in 1h is 1931s (32m11s). */
		{{"nightly-report", "0 2 * * *", "America/New_York", false, 0, 3600}, NULL, "2026-03-07T12:00:00Z", 2,
		 "2026-03-08T07:32:11Z 2026-03-09T06:32:11Z"},
		/* Spread past midnight of a day: the offset is added to the instant. */
		{{"every-spread", "@daily", NULL, false, 0, 86400}, NULL, "2026-01-01T00:00:00Z", 1,
		 "2026-01-01T19:12:28Z"},
		/* Refusals. */
		{{"a", "@every 1h", NULL, false, 0, FIRE_SPREAD_MAX + 1}, NULL, "2026-01-01T00:00:00Z", 1,
		 "invalid spread: must be at most 1 day"},
		{{"a", "0 * * * *", NULL, true, 0, 0}, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 1,
		 "an anchor applies only to @every expressions, not to \"0 * * * *\""},
		{{"a", "@every 30s", NULL, false, 0, 0}, NULL, "2026-01-01T00:00:00Z", 1,
		 "invalid cron expression \"@every 30s\": @every: 30s is shorter than 1 minute"},
		{{"a", "@every 1h", "posixrules", false, 0, 0}, NULL, "2026-01-01T00:00:00Z", 1,
		 "time zone \"posixrules\" depends on the host: use an IANA name such as Europe/Paris"},
		{{"a", "@every 1h", "Factory", false, 0, 0}, NULL, "2026-01-01T00:00:00Z", 1,
		 "time zone \"Factory\" depends on the host: use an IANA name such as Europe/Paris"},
		{{"a", "@every 1h", "posix/Europe/Paris", false, 0, 0}, NULL, "2026-01-01T00:00:00Z", 1,
		 "time zone \"posix/Europe/Paris\" depends on the host: use an IANA name such as Europe/Paris"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fire_def d = cases[i].d;
		char got[512];

		if (cases[i].anchor)
			d.anchor = at(cases[i].anchor);
		(void) next_times(&d, cases[i].from, cases[i].n, got, sizeof got);
		CHECK(strcmp(got, cases[i].want) == 0, "[%s %s]: got [%s], expected [%s]", d.name, d.cron, got,
			  cases[i].want);
	}
}

/* An @every fires in the minute cron_matches_local says, whatever the zone. */
static void
test_every_matches(void)
{
	char err[256];
	cron_expr *e = cron_parse("@every 7m", err, sizeof err);
	tz *zone = tz_open("America/New_York", err, sizeof err);
	int64_t t = at("2026-03-08T06:00:00Z"), end = t + 4 * 3600, next;
	int fires = 0, matched = 0;

	CHECK(e && zone && cron_every(e) == 420 && !cron_is_fixed_time(e), "@every 7m parses: %s", err);
	if (!e || !zone)
		return;
	cron_set_anchor(e, 30);
	for (int64_t m = t; m < end; m += 60) {
		struct tz_tm tm;

		tz_local(zone, m, &tm);
		if (cron_matches_local(e, &tm))
			matched++;
	}
	/* New York springs forward at 07:00Z: 4 hours hold 34 fire times all the same. */
	while (cron_next(e, zone, t - 1, &next) == 0 && next < end) {
		CHECK((next - 30) % 420 == 0, "fire %lld on the anchored grid", (long long) next);
		fires++;
		t = next + 1;
	}
	CHECK(fires == matched && fires == 34, "fires %d, minutes matched %d", fires, matched);
	cron_free(e);
	tz_free(zone);
}

int
main(void)
{
	test_hash();
	test_clock();
	test_every_matches();
	return check_done("fire");
}
