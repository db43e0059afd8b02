/*
 * Unit tests of lib/queue/flow's key rules, which mirror
 * cronq.flow_key_error() and cronq.limit_key_error() (sql/0012_limits.sql;
 * t_pause and t_limits send the same kinds of keys to the database).
 */
#include <string.h>

#include "check.h"
#include "queue/flow.h"

int
main(void)
{
	static const struct {
		const char *key;
		const char *flow;		/* NULL: a key of flow control; else the start of why */
		const char *limit;		/* NULL: a job's own limit key; else the start of why */
	} cases[] = {
		{"queue:reports", NULL, "queue:reports cannot be a limit key"},
		{"type:exec", NULL, "type:exec cannot be a limit key"},
		{"schedule:nightly", NULL, "schedule:nightly cannot be a limit key"},
		{"tenant:42", NULL, NULL},
		{"api.v2-x_1:stripe:charges", NULL, NULL},
		{"tenant:", "tenant: names nothing", "tenant: names nothing"},
		{"queue:", "queue: names nothing", "queue: names nothing"},
		{"tenant", "tenant is not a key", "tenant is not a key"},
		{":42", ":42 is not a key", ":42 is not a key"},
		{"tenant 1:42", "tenant 1:42 is not a key", "tenant 1:42 is not a key"},
		{"tënant:42", "tënant:42 is not a key", "tënant:42 is not a key"},
		{"", "a key is required", "a key is required"},
		{"tenant:4\t2", "a key may not contain control characters", "a key may not contain"},
		{"tenant:4\302\2052", "a key may not contain control characters", "a key may not contain"},
	};
	char why[512], big[1024];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool bad = flow_key_invalid(cases[i].key, why, sizeof why);

		CHECK(bad == (cases[i].flow != NULL), "flow key \"%s\": %s", cases[i].key, bad ? why : "accepted");
		if (bad && cases[i].flow)
			CHECK(strncmp(why, cases[i].flow, strlen(cases[i].flow)) == 0, "flow key \"%s\": %s",
				  cases[i].key, why);
		bad = flow_limit_key_invalid(cases[i].key, why, sizeof why);
		CHECK(bad == (cases[i].limit != NULL), "limit key \"%s\": %s", cases[i].key, bad ? why : "accepted");
		if (bad && cases[i].limit)
			CHECK(strncmp(why, cases[i].limit, strlen(cases[i].limit)) == 0, "limit key \"%s\": %s",
				  cases[i].key, why);
	}
	/* 255 characters, not bytes: 250 two-byte ones after "tenant:" are too many, 248 are not. */
	strcpy(big, "tenant:");
	for (int i = 0; i < 248; i++)
		strcat(big, "\303\251");
	CHECK(!flow_key_invalid(big, why, sizeof why), "255 characters: %s", why);
	strcat(big, "\303\251");
	CHECK(flow_key_invalid(big, why, sizeof why) && strcmp(why, "a key is at most 255 characters") == 0,
		  "256 characters: refused");
	return check_done("flow");
}
