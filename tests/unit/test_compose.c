/*
 * test_compose — hooks and dependencies as the command line reads them:
 * specs from flags, the rules a hook set must follow (the same as
 * sql/0017's hooks_error), job id lists, and --jsonl's on_* and depends_on.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "queue/compose.h"
#include "queue/enqueue.h"
#include "tasks/payload.h"

static const struct {
	const char *hooks;
	const char *error;			/* NULL: accepted */
} sets[] = {
	{"{\"on_success\": {\"type\": \"noop\"}}", NULL},
	{"{\"on_failure\": {\"type\": \"sql\", \"payload\": {\"sql\": \"select {error}\"}, \"queue\": \"alerts\","
	 " \"priority\": -5, \"max_attempts\": 3, \"timeout\": 60}}", NULL},
	{"{\"on_dead\": {\"type\": \"noop\"}, \"on_recover\": {\"type\": \"noop\"}}", NULL},
	{"{}", NULL},
	{"[]", "hooks must be a JSON object"},
	{"{\"on_start\": {\"type\": \"noop\"}}",
	 "unknown hook \"on_start\": must be on_success, on_failure, on_dead or on_recover"},
	{"{\"on_success\": \"noop\"}",
	 "on_success: a hook is a job spec, a JSON object such as {\"type\": \"noop\"}"},
	{"{\"on_success\": {}}", "on_success: \"type\" is required and must be a string"},
	{"{\"on_success\": {\"type\": \"noop\", \"key\": \"k\"}}",
	 "on_success: unrecognized field \"key\" (a hook has type, payload, queue, priority, max_attempts, timeout)"},
	{"{\"on_dead\": {\"type\": \"nope\"}}", "on_dead: unrecognized task type \"nope\""},
	{"{\"on_dead\": {\"type\": \"sleep\", \"payload\": {\"seconds\": \"x\"}}}",
	 "on_dead: invalid payload for task \"sleep\": \"seconds\" must be a number"},
	{"{\"on_dead\": {\"type\": \"noop\", \"payload\": []}}", "on_dead: \"payload\" must be a JSON object"},
	{"{\"on_dead\": {\"type\": \"noop\", \"queue\": \"\"}}",
	 "on_dead: \"queue\" must be printable text of 1 to 200 bytes"},
	{"{\"on_dead\": {\"type\": \"noop\", \"queue\": \"a\\nb\"}}",
	 "on_dead: \"queue\" must be printable text of 1 to 200 bytes"},
	{"{\"on_dead\": {\"type\": \"noop\", \"priority\": 1.5}}",
	 "on_dead: \"priority\" must be an integer from -1000000 to 1000000"},
	{"{\"on_dead\": {\"type\": \"noop\", \"max_attempts\": 0}}",
	 "on_dead: \"max_attempts\" must be an integer from 1 to 1000"},
	{"{\"on_dead\": {\"type\": \"noop\", \"timeout\": \"5m\"}}",
	 "on_dead: \"timeout\" must be a whole number of seconds from 1 to 31536000"},
	{"{\"on_failure\": {\"type\": \"sql\", \"payload\": {\"sql\": \"vacuum {type}\", \"transaction\": false}}}",
	 "on_failure: an sql hook with placeholders must run in a transaction"},
	{"{\"on_failure\": {\"type\": \"sql\", \"payload\": {\"sql\": \"vacuum\", \"transaction\": false}}}", NULL},
	{"{\"on_failure\": {\"type\": \"sql\", \"payload\": {\"sql\": \"select {error}\", \"transaction\": true}}}", NULL},
};

static const struct {
	const char *arg;
	size_t		n;				/* ids after it, 0: refused */
	long long	last;
} id_args[] = {
	{"12", 1, 12},
	{"12,13", 2, 13},
	{"0", 0, 0},
	{"-3", 0, 0},
	{"12,", 0, 0},
	{"1 2", 0, 0},
	{"x", 0, 0},
	{"99999999999999999999", 0, 0},
};

static const struct {
	const char *line;
	const char *hooks;			/* the hooks text parse_line builds */
	const char *depends_on;
	const char *error;
} lines[] = {
	{"{\"type\": \"noop\", \"on_success\": {\"type\": \"noop\"}, \"depends_on\": [3, 4]}",
	 "{\"on_success\":{\"type\":\"noop\"}}", "{3,4}", NULL},
	{"{\"type\": \"noop\", \"on_dead\": {\"type\": \"noop\"}, \"on_failure\": null}",
	 "{\"on_dead\":{\"type\":\"noop\"}}", NULL, NULL},
	{"{\"type\": \"noop\", \"depends_on\": []}", NULL, "{}", NULL},
	{"{\"type\": \"noop\", \"depends_on\": 3}", NULL, NULL, "\"depends_on\" must be an array of job ids"},
	{"{\"type\": \"noop\", \"depends_on\": [0]}", NULL, NULL, "\"depends_on\" must be an array of job ids"},
	{"{\"type\": \"noop\", \"on_dead\": {\"type\": \"nope\"}}", NULL, NULL, "on_dead: unrecognized task type \"nope\""},
	{"{\"type\": \"noop\", \"hooks\": {}}", NULL, NULL, "unrecognized field \"hooks\""},
};

static bool
same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

int
main(void)
{
	json_t *hooks = NULL;
	char why[1024];

	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		json_t *h = json_loads(sets[i].hooks, JSON_DECODE_ANY, NULL);
		int rc = compose_hooks_check(h, payload_validate, why, sizeof why);

		if (sets[i].error == NULL)
			CHECK(rc == 0, "set %zu: refused: %s", i, why);
		else
			CHECK(rc == -1 && strncmp(why, sets[i].error, strlen(sets[i].error)) == 0,
				  "set %zu: expected \"%s\", got %d \"%s\"", i, sets[i].error, rc, rc ? why : "");
		json_decref(h);
	}

	CHECK(compose_hook_add(&hooks, "on_success", "noop", why, sizeof why) == 0, "bare type: %s", why);
	CHECK(compose_hook_add(&hooks, "on_dead", " {\"type\": \"fail\", \"payload\": {}}", why, sizeof why) == 0,
		  "spec: %s", why);
	CHECK(compose_hook_add(&hooks, "on_dead", "noop", why, sizeof why) == -1 &&
		  strcmp(why, "on_dead given twice") == 0, "twice: %s", why);
	CHECK(compose_hook_add(&hooks, "on_failure", "{\"type\": ", why, sizeof why) == -1 &&
		  strncmp(why, "on_failure: malformed JSON", 26) == 0, "bad JSON: %s", why);
	{
		char *text = json_dumps(hooks, JSON_COMPACT | JSON_SORT_KEYS);

		CHECK(strcmp(text, "{\"on_dead\":{\"payload\":{},\"type\":\"fail\"},\"on_success\":{\"type\":\"noop\"}}") == 0,
			  "hooks built: %s", text);
		free(text);
	}
	json_decref(hooks);

	for (size_t i = 0; i < sizeof id_args / sizeof id_args[0]; i++) {
		int64_t *ids = NULL;
		size_t n = 0;
		int rc = compose_ids_add(&ids, &n, id_args[i].arg, why, sizeof why);

		if (id_args[i].n == 0)
			CHECK(rc == -1 && strstr(why, "is not a job id") != NULL, "ids %zu: expected refusal, got %d",
				  i, rc);
		else
			CHECK(rc == 0 && n == id_args[i].n && ids[n - 1] == id_args[i].last, "ids %zu: rc %d n %zu",
				  i, rc, n);
		free(ids);
	}

	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		enqueue_req req;
		enqueue_owned own;
		cq_err err = {0};
		json_t *obj = NULL;
		int rc = enqueue_parse_line(lines[i].line, strlen(lines[i].line), payload_validate, &obj, &own,
									&req, &err);

		if (lines[i].error == NULL)
			CHECK(rc == 0 && same(req.hooks, lines[i].hooks) && same(req.depends_on, lines[i].depends_on),
				  "line %zu: rc %d \"%s\", hooks %s, depends_on %s", i, rc, err.msg,
				  req.hooks ? req.hooks : "null", req.depends_on ? req.depends_on : "null");
		else
			CHECK(rc == EX_DATAERR && strcmp(err.msg, lines[i].error) == 0,
				  "line %zu: expected 65 \"%s\", got %d \"%s\"", i, lines[i].error, rc, err.msg);
		json_decref(obj);
		enqueue_owned_free(&own);
	}
	return check_done("test_compose");
}
