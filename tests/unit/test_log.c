/*
 * Unit tests of lib/util/log: what a text line and a JSON line say, from a
 * table — the message once, then only the fields it does not already say
 * (text), every field (JSON). stderr is sent to a file to be read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/log.h"

/* What one log_full() call wrote to stderr. */
static char *
captured(log_format format, const log_field *fields, const char *msg)
{
	static char text[4096];
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	log_set_format(format);
	log_full(LOG_WARNING, fields, NULL, NULL, "%s", msg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static const log_field dead[] = {
	{"job", "2", true}, {"type", "fail", false}, {"queue", "default", false}, {"attempt", "1", true},
	{"duration_ms", "12", true}, {"outcome", "failed", false}, {"status", "dead", false},
	{NULL, NULL, false},
};

static const log_field dead_in_1ms[] = {
	{"job", "2", true}, {"type", "fail", false}, {"queue", "default", false}, {"attempt", "1", true},
	{"duration_ms", "1", true}, {"outcome", "failed", false}, {"status", "dead", false},
	{NULL, NULL, false},
};

static const log_field dead_in_2ms[] = {
	{"job", "2", true}, {"type", "fail", false}, {"queue", "default", false}, {"attempt", "1", true},
	{"duration_ms", "2", true}, {"outcome", "failed", false}, {"status", "dead", false},
	{NULL, NULL, false},
};

static const struct {
	const char *msg;
	const log_field *fields;
	const char *text;			/* the whole text line */
} cases[] = {
	{"job 2 (fail) is dead after attempt 1: boom", dead,
	 "cronq: warning: job 2 (fail) is dead after attempt 1: boom queue=default duration_ms=12 outcome=failed\n"},
	/* A value inside a longer word is not said: "12" in "123", "fail" in "failure". */
	{"job 123 (failure) is dead after attempt 21: boom", dead,
	 "cronq: warning: job 123 (failure) is dead after attempt 21: boom job=2 type=fail queue=default attempt=1"
	 " duration_ms=12 outcome=failed\n"},
	/* A number is said only after its key's name: "attempt 1" does not say duration_ms=1
	 * (the line lost the job's duration whenever it took 1 ms). */
	{"job 2 (fail) is dead after attempt 1: boom", dead_in_1ms,
	 "cronq: warning: job 2 (fail) is dead after attempt 1: boom queue=default duration_ms=1 outcome=failed\n"},
	{"job 2 (fail) is dead after attempt 2: boom", dead_in_2ms,
	 "cronq: warning: job 2 (fail) is dead after attempt 2: boom queue=default attempt=1 duration_ms=2"
	 " outcome=failed\n"},
	{"no fields at all", NULL, "cronq: warning: no fields at all\n"},
	/* What a job wrote is quoted (log_quote), and says no field: each is shown. */
	{"job 2 (fail) is dead after attempt 1: \"boom queue=billing outcome=succeeded default failed 12\"", dead,
	 "cronq: warning: job 2 (fail) is dead after attempt 1: \"boom queue=billing outcome=succeeded default failed"
	 " 12\" queue=default duration_ms=12 outcome=failed\n"},
	{"job 2 (fail) is dead after attempt 1: \"a \\\" default \\\\\" failed", dead,
	 "cronq: warning: job 2 (fail) is dead after attempt 1: \"a \\\" default \\\\\" failed queue=default"
	 " duration_ms=12\n"},
};

int
main(void)
{
	char *got;

	log_set_level(LOG_DEBUG);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got = captured(LOG_FORMAT_TEXT, cases[i].fields, cases[i].msg);
		CHECK(strcmp(got, cases[i].text) == 0, "text %zu: expected [%s], got [%s]", i, cases[i].text, got);
	}
	got = log_quote("say \"hi\" \\ bye");
	CHECK(strcmp(got, "\"say \\\"hi\\\" \\\\ bye\"") == 0, "log_quote escapes quotes and backslashes: %s", got);
	free(got);
	got = captured(LOG_FORMAT_JSON, dead, cases[0].msg);
	CHECK(strstr(got, "\"msg\":\"job 2 (fail) is dead after attempt 1: boom\",\"job\":2,\"type\":\"fail\","
				 "\"queue\":\"default\",\"attempt\":1,\"duration_ms\":12,\"outcome\":\"failed\","
				 "\"status\":\"dead\"}\n") != NULL, "JSON keeps every field: %s", got);
	return check_done("log");
}
