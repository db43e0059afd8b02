/*
 * check — the verdict of `cronq check`: the health figures of
 * stats_health_read() judged against the operator's thresholds, as one line
 * and a state in the monitoring-plugin convention (0 OK, 1 WARNING,
 * 2 CRITICAL, 3 UNKNOWN), which is also the exit code. Pure: reads nothing,
 * prints nothing.
 */
#ifndef CRONQ_REPORT_CHECK_H
#define CRONQ_REPORT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "report/stats.h"
#include "util/buf.h"

/* The monitoring-plugin states, which are also the exit codes. */
enum {
	CHECK_OK = 0, CHECK_WARNING = 1, CHECK_CRITICAL = 2, CHECK_UNKNOWN = 3,
};

/* A threshold: a value greater than a level is at that level. */
typedef struct check_limit {
	bool		has_warn, has_crit;
	int64_t		warn, crit;		/* counts, or milliseconds for durations */
} check_limit;

/* The thresholds of each judged figure (none given: never exceeded). */
typedef struct check_limits {
	check_limit lag, dead, failed, stuck, silence, overdue;
} check_limits;

/*
 * The state of h under lim, and its line appended to out (no newline):
 * "CRONQ STATE - lag 0s, dead 7 > 5, … | lag=0s;300;900 dead=7;;5 …".
 * Each figure is at the highest level it exceeds (a missing wake exceeds
 * every level given); whatever the limits, no wake ever or an enabled
 * schedule a wake cannot plan is CRITICAL. The state is the worst of them.
 */
int check_verdict(const stats_health *h, const check_limits *lim, buf *out);

/*
 * The UNKNOWN line for a message (a usage error, the server's words):
 * control characters escaped and every run of white space, line breaks
 * included, one space, so that it stays one line. Appended to out, no
 * newline; returns CHECK_UNKNOWN.
 */
int check_unknown(const char *msg, buf *out);

#endif
