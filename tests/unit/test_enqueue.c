/*
 * Unit tests of lib/queue/enqueue's checks without the database: the
 * unique key's rules (1 to 1000 bytes, no control characters), replace
 * only with a unique key, a deadline that is a positive duration, the
 * history policy (all or errors, exactly), and the JSONL fields
 * expires_at, unique_key and history (replace has no JSONL form).
 * Messages compared in full.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "queue/enqueue.h"
#include "tasks/payload.h"

static char long_key[1002];

static const struct {
	const char *unique_key;
	bool		replace;
	int64_t		expires_ms;
	const char *error;			/* NULL: accepted */
} checks[] = {
	{"refresh-cache", false, 0, NULL},
	{"refresh-cache", true, 600000, NULL},
	{"tenant:42 é", false, 0, NULL},
	{"", false, 0, "unique key must be 1 to 1000 bytes"},
	{long_key, false, 0, "unique key must be 1 to 1000 bytes"},
	{"a\tb", false, 0, "unique key may not contain control characters"},
	{"a\nb", false, 0, "unique key may not contain control characters"},
	{"a\x7f", false, 0, "unique key may not contain control characters"},
	{NULL, true, 0, "replace needs a unique key"},
	{NULL, false, -1000, "expires must be positive"},
};

static const struct {
	const char *history;
	const char *error;			/* NULL: accepted */
} histories[] = {
	{NULL, NULL},
	{"all", NULL},
	{"errors", NULL},
	{"", "invalid history policy \"\": must be all or errors"},
	{"error", "invalid history policy \"error\": must be all or errors"},
	{"Errors", "invalid history policy \"Errors\": must be all or errors"},
	{"all ", "invalid history policy \"all \": must be all or errors"},
	{"none", "invalid history policy \"none\": must be all or errors"},
};

static const struct {
	const char *line;
	const char *expires_at;		/* expected fields, when accepted */
	const char *unique_key;
	const char *history;
	const char *error;			/* NULL: accepted */
} lines[] = {
	{"{\"type\": \"noop\", \"expires_at\": \"2026-11-26T06:00:00Z\", \"unique_key\": \"k\"}",
	 "2026-11-26T06:00:00Z", "k", NULL, NULL},
	{"{\"type\": \"noop\", \"expires_at\": null}", NULL, NULL, NULL, NULL},
	{"{\"type\": \"noop\", \"expires_at\": 60}", NULL, NULL, NULL, "\"expires_at\" must be a string"},
	{"{\"type\": \"noop\", \"unique_key\": \"\"}", NULL, NULL, NULL, "unique key must be 1 to 1000 bytes"},
	{"{\"type\": \"noop\", \"unique_key\": \"a\\u0001b\"}", NULL, NULL, NULL,
	 "unique key may not contain control characters"},
	{"{\"type\": \"noop\", \"unique_key\": \"k\", \"replace\": true}", NULL, NULL, NULL,
	 "unrecognized field \"replace\""},
	{"{\"type\": \"noop\", \"expires\": \"10m\"}", NULL, NULL, NULL, "unrecognized field \"expires\""},
	{"{\"type\": \"noop\", \"history\": \"errors\"}", NULL, NULL, "errors", NULL},
	{"{\"type\": \"noop\", \"history\": \"all\"}", NULL, NULL, "all", NULL},
	{"{\"type\": \"noop\", \"history\": null}", NULL, NULL, NULL, NULL},
	{"{\"type\": \"noop\", \"history\": true}", NULL, NULL, NULL, "\"history\" must be a string"},
	{"{\"type\": \"noop\", \"history\": \"none\"}", NULL, NULL, NULL,
	 "invalid history policy \"none\": must be all or errors"},
	{"{\"type\": \"noop\", \"keep\": 3}", NULL, NULL, NULL, "unrecognized field \"keep\""},
};

static bool
same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

int
main(void)
{
	memset(long_key, 'k', sizeof long_key - 1);
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		enqueue_req req;
		cq_err err = {0};
		int rc;

		memset(&req, 0, sizeof req);
		req.type = "noop";
		req.in_ms = -1;
		req.unique_key = checks[i].unique_key;
		req.replace = checks[i].replace;
		req.expires_ms = checks[i].expires_ms;
		rc = enqueue_check(&req, payload_validate, &err);
		if (checks[i].error == NULL)
			CHECK(rc == 0, "check %zu: refused: %s", i, err.msg);
		else
			CHECK(rc == EX_DATAERR && strcmp(err.msg, checks[i].error) == 0,
				  "check %zu: expected 65 \"%s\", got %d \"%s\"", i, checks[i].error, rc, err.msg);
	}
	for (size_t i = 0; i < sizeof histories / sizeof histories[0]; i++) {
		enqueue_req req;
		cq_err err = {0};
		int rc;

		memset(&req, 0, sizeof req);
		req.type = "noop";
		req.in_ms = -1;
		req.history = histories[i].history;
		rc = enqueue_check(&req, payload_validate, &err);
		if (histories[i].error == NULL)
			CHECK(rc == 0, "history %zu: refused: %s", i, err.msg);
		else
			CHECK(rc == EX_DATAERR && strcmp(err.msg, histories[i].error) == 0,
				  "history %zu: expected 65 \"%s\", got %d \"%s\"", i, histories[i].error, rc, err.msg);
	}
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		enqueue_req req;
		cq_err err = {0};
		json_t *obj = NULL;
		enqueue_owned own;
		int rc = enqueue_parse_line(lines[i].line, strlen(lines[i].line), payload_validate, &obj,
									&own, &req, &err);

		if (lines[i].error == NULL)
			CHECK(rc == 0 && same(req.expires_at, lines[i].expires_at) &&
				  same(req.unique_key, lines[i].unique_key) && same(req.history, lines[i].history),
				  "line %zu: rc %d \"%s\", expires_at %s, unique_key %s, history %s", i, rc, err.msg,
				  req.expires_at ? req.expires_at : "null", req.unique_key ? req.unique_key : "null",
				  req.history ? req.history : "null");
		else
			CHECK(rc == EX_DATAERR && strcmp(err.msg, lines[i].error) == 0,
				  "line %zu: expected 65 \"%s\", got %d \"%s\"", i, lines[i].error, rc, err.msg);
		json_decref(obj);
		enqueue_owned_free(&own);
	}
	return check_done("enqueue");
}
