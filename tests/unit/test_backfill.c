/*
 * Unit tests of lib/sched/backfill's pure parts: {date}/{ts} templating of
 * keys and payload texts (keys of objects and numbers untouched), step
 * counting, the checks made before anything is written, and a schedule's
 * occurrences in a range. Messages are compared in full.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sched/backfill.h"
#include "util/buf.h"
#include "util/err.h"

/* 2026-03-08T10:00:00Z */
#define T0 INT64_C(1772964000)
#define DAY 86400

static const struct {
	const char *tmpl;
	int64_t		t;
	const char *want;			/* NULL: refused with error */
	const char *error;
} key_cases[] = {
	{"backfill:noop:{ts}", T0, "backfill:noop:2026-03-08T10:00:00Z", NULL},
	{"{date}", T0, "2026-03-08", NULL},
	{"{date}/{ts}/{date}", T0, "2026-03-08/2026-03-08T10:00:00Z/2026-03-08", NULL},
	{"no placeholder", T0, "no placeholder", NULL},
	{"", T0, "", NULL},
	{"{date}", -1, "1969-12-31", NULL},
	{"{ts}", 0, "1970-01-01T00:00:00Z", NULL},
	{"{ts}", INT64_C(253402300799), "9999-12-31T23:59:59Z", NULL},
	{"{}", T0, "{}", NULL},
	{"{ date}", T0, "{ date}", NULL},
	{"{date", T0, "{date", NULL},
	{"date}", T0, "date}", NULL},
	{"x}{ts}{", T0, "x}2026-03-08T10:00:00Z{", NULL},
	{"{a,b}", T0, "{a,b}", NULL},
	{"{{1,2},{3,4}}", T0, "{{1,2},{3,4}}", NULL},
	{"a{{date}b", T0, "a{date}b", NULL},
	{"{{ts}={ts}", T0, "{ts}=2026-03-08T10:00:00Z", NULL},
	{"{{{ts}", T0, "{{ts}", NULL},
	{"{{nope}", T0, "{nope}", NULL},
	{"{foo}", T0, NULL, "unrecognized placeholder \"{foo}\""},
	{"k-{Date}", T0, NULL, "unrecognized placeholder \"{Date}\""},
	{"{ts}{x_1}", T0, NULL, "unrecognized placeholder \"{x_1}\""},
};

static const struct {
	const char *json;
	const char *want;			/* NULL: refused with error */
	const char *error;
} json_cases[] = {
	{"{}", "{}", NULL},
	{"{\"a\": \"{date}\"}", "{\"a\": \"2026-03-08\"}", NULL},
	/* Object keys are names, never templates; numbers are copied byte for byte. */
	{"{\"{ts}\": \"{ts}\", \"n\": 0.1, \"m\": 1.10e2}",
	 "{\"{ts}\": \"2026-03-08T10:00:00Z\", \"n\": 0.1, \"m\": 1.10e2}", NULL},
	{"{\"a\": [\"{date}\", {\"k{date}\": \"v{date}\"}, [\"{ts}\"]], \"b\": \"{date}\"}",
	 "{\"a\": [\"2026-03-08\", {\"k{date}\": \"v2026-03-08\"}, [\"2026-03-08T10:00:00Z\"]], \"b\": \"2026-03-08\"}", NULL},
	/* A key after a value that is an object or array is still a key. */
	{"{\"a\": {\"x\": 1}, \"{date}\": [1, 2], \"c\": \"{date}\"}",
	 "{\"a\": {\"x\": 1}, \"{date}\": [1, 2], \"c\": \"2026-03-08\"}", NULL},
	/* Escapes are copied whole: \" does not end the string, \\ is one backslash. */
	{"{\"q\": \"say \\\"{date}\\\"\", \"b\": \"\\\\{date}\"}",
	 "{\"q\": \"say \\\"2026-03-08\\\"\", \"b\": \"\\\\2026-03-08\"}", NULL},
	{"{\"sql\": \"select '{}'::jsonb, '{a,b}'::text[]\"}",
	 "{\"sql\": \"select '{}'::jsonb, '{a,b}'::text[]\"}", NULL},
	{"{\"sql\": \"select '{{a}'::text[]\"}", "{\"sql\": \"select '{a}'::text[]\"}", NULL},
	{"{\"t\": true, \"n\": null, \"s\": \"{ts}\"}", "{\"t\": true, \"n\": null, \"s\": \"2026-03-08T10:00:00Z\"}", NULL},
	{"{\"a\": \"{when}\"}", NULL, "unrecognized placeholder \"{when}\""},
	{"{\"a\": [[\"{bad}\"]]}", NULL, "unrecognized placeholder \"{bad}\""},
};

static void
test_templates(void)
{
	for (size_t i = 0; i < sizeof key_cases / sizeof key_cases[0]; i++) {
		buf out = BUF_INIT;
		char err[256] = "";
		int rc = backfill_expand(key_cases[i].tmpl, key_cases[i].t, &out, err, sizeof err);

		if (key_cases[i].want)
			CHECK(rc == 0 && strcmp(buf_str(&out), key_cases[i].want) == 0,
				  "expand [%s]: got rc %d [%s] (%s), want [%s]", key_cases[i].tmpl, rc,
				  buf_str(&out), err, key_cases[i].want);
		else
			CHECK(rc == -1 && strcmp(err, key_cases[i].error) == 0,
				  "expand [%s]: got rc %d [%s], want error [%s]", key_cases[i].tmpl, rc, err,
				  key_cases[i].error);
		buf_free(&out);
	}
	for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
		buf out = BUF_INIT;
		char err[256] = "";
		int rc = backfill_expand_json(json_cases[i].json, T0, &out, err, sizeof err);

		if (json_cases[i].want)
			CHECK(rc == 0 && strcmp(buf_str(&out), json_cases[i].want) == 0,
				  "expand json [%s]: got rc %d [%s] (%s), want [%s]", json_cases[i].json, rc,
				  buf_str(&out), err, json_cases[i].want);
		else
			CHECK(rc == -1 && strcmp(err, json_cases[i].error) == 0,
				  "expand json [%s]: got rc %d [%s], want error [%s]", json_cases[i].json, rc, err,
				  json_cases[i].error);
		buf_free(&out);
	}
	CHECK(backfill_uses("a{ts}", "ts"), "uses {ts}");
	CHECK(!backfill_uses("a{ts}", "date"), "does not use {date}");
	CHECK(!backfill_uses("a{{ts}", "ts"), "an escape is not a use");
	CHECK(backfill_uses("{{ts}{ts}", "ts"), "a use after an escape");
	CHECK(!backfill_uses("{ts", "ts"), "an unclosed brace is not a use");
}

static const struct {
	int64_t		from, to, step, max;
	int			rc;
	int64_t		count;
	const char *error;
} count_cases[] = {
	{T0, T0 + 30 * DAY, DAY, 100000, 0, 31, NULL},	/* 31 days, both ends included */
	{T0, T0, DAY, 100000, 0, 1, NULL},
	{0, 100, 30, 100000, 0, 4, NULL},				/* 0, 30, 60, 90: to need not be a step */
	{0, 99999, 1, 100000, 0, 100000, NULL},
	{0, 100000, 1, 100000, EX_USAGE, 0,
	 "the range holds 100001 steps; a backfill enqueues at most 100000"},
	{T0 + DAY, T0, DAY, 100000, EX_USAGE, 0,
	 "the end of the range (2026-03-08T10:00:00Z) is before its start (2026-03-09T10:00:00Z)"},
	{0, INT64_C(253402300799), 1, 100000, EX_USAGE, 0,
	 "the range holds 253402300800 steps; a backfill enqueues at most 100000"},
};

static void
test_count(void)
{
	for (size_t i = 0; i < sizeof count_cases / sizeof count_cases[0]; i++) {
		cq_err err = {0};
		int64_t n = 0;
		int rc = backfill_count(count_cases[i].from, count_cases[i].to, count_cases[i].step,
								count_cases[i].max, &n, &err);

		CHECK(rc == count_cases[i].rc, "count case %zu: rc %d, want %d (%s)", i, rc, count_cases[i].rc, err.msg);
		if (rc == 0)
			CHECK(n == count_cases[i].count, "count case %zu: %lld steps, want %lld", i,
				  (long long) n, (long long) count_cases[i].count);
		else
			CHECK(strcmp(err.msg, count_cases[i].error) == 0, "count case %zu: [%s], want [%s]", i,
				  err.msg, count_cases[i].error);
	}
}

/* backfill_check of one request: its code and message ("" when it passes). */
static void
check_req(const char *desc, const backfill_req *req, int want_rc, const char *want_msg)
{
	cq_err err = {0};
	int rc = backfill_check(req, &err);

	CHECK(rc == want_rc && strcmp(rc ? err.msg : "", want_msg) == 0,
		  "check %s: got %d [%s], want %d [%s]", desc, rc, rc ? err.msg : "", want_rc, want_msg);
}

static void
test_check(void)
{
	backfill_req r;

	memset(&r, 0, sizeof r);
	r.type = "noop";
	r.from = T0;
	r.step = DAY;
	r.count = 31;
	check_req("default key", &r, 0, "");
	r.key = "daily-{date}";
	check_req("{date} key, daily steps", &r, 0, "");
	r.step = 3600;
	check_req("{date} key, hourly steps", &r, EX_DATAERR, "key template \"daily-{date}\" gives several steps the same key");
	r.key = "fixed";
	check_req("key without placeholder", &r, EX_DATAERR, "key template \"fixed\" gives several steps the same key");
	r.count = 1;
	check_req("key without placeholder, one step", &r, 0, "");
	r.count = 0;
	check_req("key without placeholder, range not read yet", &r, 0, "");
	r.count = 31;
	r.key = "k-{nope}";
	check_req("bad key template", &r, EX_DATAERR,
			  "invalid key template \"k-{nope}\": unrecognized placeholder \"{nope}\"");
	r.key = NULL;
	r.payload = "{\"a\": \"{nope}\"}";
	check_req("bad payload template", &r, EX_DATAERR,
			  "invalid payload template: unrecognized placeholder \"{nope}\"");
	r.payload = "{\"a\": ";
	check_req("malformed payload", &r, EX_DATAERR,
			  "invalid payload: malformed JSON at line 1, column 6: unexpected token near end of file");
	r.payload = NULL;
	r.type = "nop";
	check_req("unknown type", &r, EX_DATAERR, "unrecognized task type \"nop\"");
	r.type = "sleep";
	check_req("payload the task refuses", &r, EX_DATAERR, "invalid payload for task \"sleep\": \"seconds\" is required");
	r.type = "fail";
	r.payload = "{\"code\": \"c_{date}\"}";
	check_req("payload made invalid by expansion: named by step", &r, EX_DATAERR,
			  "step 2026-03-08T10:00:00Z: invalid payload for task \"fail\": \"code\" must be 1 to 64 characters of a-z, 0-9 and _");
	r.count = 0;
	check_req("... not checked before the range is read", &r, 0, "");
	r.count = 31;
	r.payload = "{\"message\": \"day {date}\"}";
	r.opts.queue = "";
	check_req("empty queue", &r, EX_DATAERR, "queue name must be 1 to 200 bytes");
}

static void
test_job(void)
{
	backfill_req r;
	buf key = BUF_INIT, payload = BUF_INIT;
	cq_err err = {0};
	int rc;

	memset(&r, 0, sizeof r);
	r.type = "fail";
	r.payload = "{\"message\": \"report for {date}\", \"permanent\": false}";
	r.from = T0;
	r.step = DAY;
	r.count = 31;
	rc = backfill_job(&r, 30, &key, &payload, &err);
	CHECK(rc == 0, "job 30: rc %d (%s)", rc, err.msg);
	CHECK(strcmp(buf_str(&key), "backfill:fail:2026-04-07T10:00:00Z") == 0, "job 30 key: [%s]", buf_str(&key));
	CHECK(strcmp(buf_str(&payload), "{\"message\": \"report for 2026-04-07\", \"permanent\": false}") == 0,
		  "job 30 payload: [%s]", buf_str(&payload));
	buf_free(&key);
	buf_free(&payload);
}

/* A schedule's times with no anchor and no spread. */
#define TIMES(cron, zone) (&(fire_def) {"s", (cron), (zone), false, 0, 0})

static void
test_occurrences(void)
{
	cq_err err = {0};
	int64_t *fires = NULL, n = 0;
	int rc;

	/* 00:00 to 05:00 hourly, both ends included. */
	rc = backfill_occurrences(TIMES("0 * * * *", "UTC"), T0 - 10 * 3600, T0 - 5 * 3600, 100000, &fires, &n, &err);
	CHECK(rc == 0 && n == 6 && fires[0] == T0 - 10 * 3600 && fires[5] == T0 - 5 * 3600,
		  "hourly: rc %d, %lld fires (%s)", rc, (long long) n, err.msg);
	free(fires);

	/* The spec's daylight-saving example: 0 2 * * * in New York fires at 03:00 EDT on 8 March. */
	rc = backfill_occurrences(TIMES("0 2 * * *", "America/New_York"), T0 - 22 * 3600, T0 + 26 * 3600, 100000,
							  &fires, &n, &err);
	CHECK(rc == 0 && n == 2 && fires[0] == INT64_C(1772953200) && fires[1] == INT64_C(1773036000),
		  "New York spring forward: rc %d, %lld fires (%s)", rc, (long long) n, err.msg);
	free(fires);

	rc = backfill_occurrences(TIMES("* * * * *", "UTC"), T0, T0 + 3600, 60, &fires, &n, &err);
	CHECK(rc == EX_USAGE && fires == NULL && n == 0 &&
		  strcmp(err.msg, "the range holds more than 60 occurrences; a backfill enqueues at most 60") == 0,
		  "too many occurrences: rc %d [%s]", rc, err.msg);
	rc = backfill_occurrences(TIMES("0 0 30 2 *", "UTC"), T0, T0 + 366 * DAY, 100000, &fires, &n, &err);
	CHECK(rc == 0 && n == 0 && fires == NULL, "never fires: rc %d, %lld", rc, (long long) n);
	rc = backfill_occurrences(TIMES("61 * * * *", "UTC"), T0, T0 + DAY, 100000, &fires, &n, &err);
	CHECK(rc == EX_DATAERR && strcmp(err.msg, "invalid cron expression \"61 * * * *\": minute: 61 is out of range 0-59") == 0,
		  "bad expression: rc %d [%s]", rc, err.msg);
	rc = backfill_occurrences(TIMES("0 * * * *", "UTC"), T0 + DAY, T0, 100000, &fires, &n, &err);
	CHECK(rc == EX_USAGE, "reversed range: rc %d [%s]", rc, err.msg);

	/* An @every schedule's due instants: its anchor, then its spread, applied. */
	rc = backfill_occurrences(&(fire_def) {"s", "@every 90m", "Europe/Paris", true, T0 - 600, 0},
							  T0 - 3 * 3600, T0 + 3 * 3600, 100000, &fires, &n, &err);
	CHECK(rc == 0 && n == 4 && fires[0] == T0 - 600 - 5400 && fires[3] == T0 - 600 + 2 * 5400,
		  "@every 90m anchored: rc %d, %lld fires (%s)", rc, (long long) n, err.msg);
	free(fires);
	rc = backfill_occurrences(&(fire_def) {"s", "@every 1h", "UTC", false, 0, 600},
							  T0 - 3600, T0, 100000, &fires, &n, &err);
	CHECK(rc == 0 && n == 1 && fires[0] == T0 - 3600 + fire_offset("s", 600),
		  "@every 1h spread: rc %d, %lld fires (%s)", rc, (long long) n, err.msg);
	free(fires);
}

int
main(void)
{
	test_templates();
	test_count();
	test_check();
	test_job();
	test_occurrences();
	return check_done("backfill");
}
