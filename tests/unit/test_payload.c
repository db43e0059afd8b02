/*
 * Unit tests of lib/tasks/payload and the tasks' validators: the limits
 * every payload obeys and each task's rules, messages compared in full
 * (they must match the database's cronq.payload_error()).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tasks/payload.h"
#include "util/buf.h"

static const struct {
	const char *type;
	const char *payload;		/* NULL: none given ({}) */
	const char *error;			/* NULL: accepted */
} cases[] = {
	{"noop", NULL, NULL},
	{"noop", "{}", NULL},
	{"noop", " { } ", NULL},
	{"noop", "{\"a\": 1}", "invalid payload for task \"noop\": unknown key \"a\""},
	{"noop", "[]", "invalid payload: must be a JSON object, not array"},
	{"noop", "\"x\"", "invalid payload: must be a JSON object, not string"},
	{"noop", "3", "invalid payload: must be a JSON object, not number"},
	{"noop", "null", "invalid payload: must be a JSON object, not null"},
	{"noop", "true", "invalid payload: must be a JSON object, not boolean"},
	{"sleep", "{\"seconds\": 1}", NULL},
	{"sleep", "{\"seconds\": 0}", NULL},
	{"sleep", "{\"seconds\": 0.25}", NULL},
	{"sleep", "{\"seconds\": 86400}", NULL},
	{"sleep", NULL, "invalid payload for task \"sleep\": \"seconds\" is required"},
	{"sleep", "{}", "invalid payload for task \"sleep\": \"seconds\" is required"},
	{"sleep", "{\"seconds\": -1}", "invalid payload for task \"sleep\": \"seconds\" must be between 0 and 86400"},
	{"sleep", "{\"seconds\": 86401}", "invalid payload for task \"sleep\": \"seconds\" must be between 0 and 86400"},
	{"sleep", "{\"seconds\": \"1\"}", "invalid payload for task \"sleep\": \"seconds\" must be a number"},
	{"sleep", "{\"seconds\": null}", "invalid payload for task \"sleep\": \"seconds\" must be a number"},
	{"sleep", "{\"seconds\": 1, \"x\": 2}", "invalid payload for task \"sleep\": unknown key \"x\""},
	{"fail", NULL, NULL},
	{"fail", "{\"message\": \"m\", \"code\": \"c_1\", \"permanent\": true}", NULL},
	{"fail", "{\"message\": 1}", "invalid payload for task \"fail\": \"message\" must be a string"},
	{"fail", "{\"code\": \"Bad Code\"}", "invalid payload for task \"fail\": \"code\" must be 1 to 64 characters of a-z, 0-9 and _"},
	{"fail", "{\"code\": \"\"}", "invalid payload for task \"fail\": \"code\" must be 1 to 64 characters of a-z, 0-9 and _"},
	{"fail", "{\"permanent\": \"yes\"}", "invalid payload for task \"fail\": \"permanent\" must be true or false"},
	{"nop", NULL, "unrecognized task type \"nop\""},
	{"", NULL, "task type must not be empty"},
	{"NOOP", "{}", "unrecognized task type \"NOOP\""},
	{"noop", "{\"a\": ", "invalid payload: malformed JSON at line 1, column 6: unexpected token near end of file"},
	{"noop", "{\"a\": \"\\u0000\"}", "invalid payload: \\u0000 is not allowed in strings (PostgreSQL cannot store it)"},
	{"noop", "{\"a\": \"\xff\"}", "invalid payload: malformed JSON at line 1, column 7: unable to decode byte 0xff near '\"'"},
	{"noop", "{\"a\": 1} {}", "invalid payload: malformed JSON at line 1, column 10: end of file expected near '{'"},
	{"noop", "{\"a\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}",
	 "invalid payload for task \"noop\": unknown key \"a\""},
};

static char *
nested(int depth)
{
	buf b = BUF_INIT;

	buf_puts(&b, "{\"a\": ");
	for (int i = 1; i < depth; i++)
		buf_putc(&b, '[');
	for (int i = 1; i < depth; i++)
		buf_putc(&b, ']');
	buf_putc(&b, '}');
	return buf_steal(&b);
}

static const char *
check_one(const char *type, const char *text, char *err, size_t errlen)
{
	json_t *p = NULL;

	err[0] = '\0';
	if (text && (p = payload_parse(text, strlen(text), err, errlen)) == NULL)
		return err;
	if (payload_validate(type, p, err, errlen) != 0) {
		json_decref(p);
		return err;
	}
	json_decref(p);
	return NULL;
}

int
main(void)
{
	char err[1024];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = check_one(cases[i].type, cases[i].payload, err, sizeof err);

		if (cases[i].error == NULL)
			CHECK(got == NULL, "%s %s: expected accepted, got [%s]", cases[i].type,
				  cases[i].payload ? cases[i].payload : "(none)", err);
		else
			CHECK(got && strcmp(got, cases[i].error) == 0, "%s %s: expected [%s], got [%s]",
				  cases[i].type, cases[i].payload ? cases[i].payload : "(none)", cases[i].error,
				  got ? got : "accepted");
	}

	/* 64 levels pass the depth limit (then fail on the noop key), 65 do not. */
	{
		char *ok = nested(64), *deep = nested(65);

		CHECK(strcmp(check_one("noop", ok, err, sizeof err), "invalid payload for task \"noop\": unknown key \"a\"") == 0,
			  "64 levels: got [%s]", err);
		CHECK(strcmp(check_one("noop", deep, err, sizeof err), "invalid payload: nested deeper than 64 levels") == 0,
			  "65 levels: got [%s]", err);
		free(ok);
		free(deep);
	}
	/* Exactly 1 MiB is allowed; one byte more is not. */
	{
		size_t n = PAYLOAD_MAX_BYTES;
		char *big = malloc(n + 2);
		json_t *v;

		memset(big, ' ', n + 1);
		memcpy(big, "{}", 2);
		big[n + 1] = '\0';
		v = payload_parse(big, n, err, sizeof err);
		CHECK(v != NULL, "1 MiB payload refused: %s", err);
		json_decref(v);
		v = payload_parse(big, n + 1, err, sizeof err);
		CHECK(v == NULL && strcmp(err, "invalid payload: larger than 1 MiB") == 0,
			  "1 MiB + 1 accepted or wrong message: %s", err);
		json_decref(v);
		free(big);
	}
	return check_done("payload");
}
