/*
 * Unit tests of lib/report/check: health figures and thresholds in, the
 * monitoring-plugin state and line out. A table: each case changes a few
 * figures or limits of a healthy queue and names the whole line expected.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/check.h"

#define S(ms) ((ms) * 1000)

static const struct {
	const char *what;
	stats_health h;				/* woke and silence are set below when silence_ms is 0 */
	check_limits lim;
	int			state;
	const char *line;
} cases[] = {
	{"healthy, no limits: OK", {.woke = true, .silence_ms = S(12)}, {.lag = {0}}, CHECK_OK,
	 "CRONQ OK - lag 0s, dead 0, failed 0, stuck 0, last wake 12s ago, overdue 0s"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=12s overdue=0s"},
	{"no wake ever is CRITICAL without limits", {.woke = false}, {.lag = {0}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake never, overdue 0s"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=U overdue=0s"},
	{"no wake ever exceeds every level given", {.woke = false}, {.silence = {false, true, 0, S(120)}},
	 CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake never, overdue 0s"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=U;;120 overdue=0s"},
	{"a count above the critical level", {.woke = true, .silence_ms = S(1), .dead = 7},
	 {.dead = {false, true, 0, 5}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 7 > 5, failed 0, stuck 0, last wake 1s ago, overdue 0s"
	 " | lag=0s dead=7;;5 failed=0 stuck=0 silence=1s overdue=0s"},
	{"a count at the level is not above it", {.woke = true, .silence_ms = S(1), .dead = 5},
	 {.dead = {true, true, 5, 5}}, CHECK_OK,
	 "CRONQ OK - lag 0s, dead 5, failed 0, stuck 0, last wake 1s ago, overdue 0s"
	 " | lag=0s dead=5;5;5 failed=0 stuck=0 silence=1s overdue=0s"},
	{"between the levels: WARNING, the warning level shown", {.woke = true, .silence_ms = S(1), .dead = 6},
	 {.dead = {true, true, 5, 10}}, CHECK_WARNING,
	 "CRONQ WARNING - lag 0s, dead 6 > 5, failed 0, stuck 0, last wake 1s ago, overdue 0s"
	 " | lag=0s dead=6;5;10 failed=0 stuck=0 silence=1s overdue=0s"},
	{"durations: whole seconds in the line and perfdata, levels exact",
	 {.woke = true, .silence_ms = 1999, .lag_ms = 90500, .due = 3},
	 {.lag = {true, true, S(30), S(3600)}, .silence = {true, false, 1500, 0}}, CHECK_WARNING,
	 "CRONQ WARNING - lag 1m30s > 30s, dead 0, failed 0, stuck 0, last wake 1s ago > 1s500ms, overdue 0s"
	 " | lag=90s;30;3600 dead=0 failed=0 stuck=0 silence=1s;1.500 overdue=0s"},
	{"the worst item decides: a warning and a critical",
	 {.woke = true, .silence_ms = S(1), .failed = 3, .stuck = 1},
	 {.failed = {true, true, 2, 10}, .stuck = {false, true, 0, 0}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 3 > 2, stuck 1 > 0, last wake 1s ago, overdue 0s"
	 " | lag=0s dead=0 failed=3;2;10 stuck=1;;0 silence=1s overdue=0s"},
	{"the overdue schedule is named", {.woke = true, .silence_ms = S(1), .overdue_ms = S(600),
	 .overdue_name = "nightly"}, {.overdue = {false, true, 0, S(300)}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 10m > 5m (nightly)"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=1s overdue=600s;;300"},
	{"an unplannable schedule is CRITICAL without limits",
	 {.woke = true, .silence_ms = S(1), .unplannable = 1, .unplannable_name = "legacy: expected 5 fields, got 4"},
	 {.lag = {0}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 0s,"
	 " 1 schedule cannot run (legacy: expected 5 fields, got 4)"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=1s overdue=0s unplannable=1"},
	{"several unplannable schedules", {.woke = true, .silence_ms = S(1), .unplannable = 2,
	 .unplannable_name = "a: bad zone"}, {.lag = {0}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 0s,"
	 " 2 schedules cannot run (a: bad zone)"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=1s overdue=0s unplannable=2"},
	{"a schedule whose jobs are refused is CRITICAL, its reason on one line, escaped",
	 {.woke = true, .silence_ms = S(1), .refused = 1, .refused_name = "backup: unknown key \"a\nb\x1b\""},
	 {.lag = {0}}, CHECK_CRITICAL,
	 "CRONQ CRITICAL - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 0s,"
	 " 1 schedule's jobs are refused (backup: unknown key \"a b\\x1b\")"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=1s overdue=0s refused=1"},
	{"a paused key is said, not judged", {.woke = true, .silence_ms = S(1), .paused = 1,
	 .paused_key = "queue:reports"}, {.lag = {true, true, S(30), S(60)}}, CHECK_OK,
	 "CRONQ OK - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 0s, 1 key paused (queue:reports)"
	 " | lag=0s;30;60 dead=0 failed=0 stuck=0 silence=1s overdue=0s paused=1"},
	{"several paused keys: the first, and more", {.woke = true, .silence_ms = S(1), .paused = 3,
	 .paused_key = "queue:a"}, {.lag = {0}}, CHECK_OK,
	 "CRONQ OK - lag 0s, dead 0, failed 0, stuck 0, last wake 1s ago, overdue 0s, 3 keys paused (queue:a, ...)"
	 " | lag=0s dead=0 failed=0 stuck=0 silence=1s overdue=0s paused=3"},
};

static void
test_verdicts(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf out = BUF_INIT;
		int state = check_verdict(&cases[i].h, &cases[i].lim, &out);

		CHECK(state == cases[i].state, "%s: state %d, expected %d", cases[i].what, state, cases[i].state);
		CHECK(strcmp(buf_str(&out), cases[i].line) == 0, "%s:\n  got      %s\n  expected %s",
			  cases[i].what, buf_str(&out), cases[i].line);
		buf_free(&out);
	}
}

static void
test_unknown(void)
{
	static const struct {
		const char *msg, *line;
	} u[] = {
		{"could not connect", "CRONQ UNKNOWN - could not connect"},
		{"  connection refused\n\tIs the server running?\n", "CRONQ UNKNOWN - connection refused Is the server running?"},
		{"bad \x1b[2J value", "CRONQ UNKNOWN - bad \\x1b[2J value"},
		{"", "CRONQ UNKNOWN - "},
	};

	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
		buf out = BUF_INIT;

		CHECK(check_unknown(u[i].msg, &out) == CHECK_UNKNOWN, "UNKNOWN is state 3");
		CHECK(strcmp(buf_str(&out), u[i].line) == 0, "unknown line: got \"%s\", expected \"%s\"",
			  buf_str(&out), u[i].line);
		buf_free(&out);
	}
}

int
main(void)
{
	test_verdicts();
	test_unknown();
	return check_done("check");
}
