/*
 * next — when a cron expression fires, from a given time on (`cronq
 * schedule next 'EXPR'`): the expression and zone checked as a schedule's
 * are, no database. A stored schedule's next times are schedule_upcoming's.
 *
 * Ownership: sched_next() returns an array the caller free()s.
 */
#ifndef CRONQ_NEXT_H
#define CRONQ_NEXT_H

#include <stdint.h>

#include "util/err.h"

/*
 * The next count fire times (epoch seconds, ascending) of cron expression
 * expr in zone (NULL: UTC), an "@every" counted from anchor (RFC 3339;
 * NULL: the epoch; refused for other expressions), strictly after from
 * (RFC 3339; NULL: now, epoch seconds), in a new array *times of *n. Fewer than count when the
 * expression stops firing; none at all is an error. 0, or EX_DATAERR for a
 * bad expression, zone or time, or an expression that never fires.
 */
int sched_next(const char *expr, const char *zone, const char *anchor, const char *from, int64_t now,
			   int64_t count, int64_t **times, int64_t *n, cq_err *err) __attribute__((warn_unused_result));

#endif
