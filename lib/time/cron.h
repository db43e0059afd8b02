/*
 * cron — five-field cron expressions as cronie reads them, and the next fire
 * time of one in a time zone, with cronq's daylight saving rules (SPEC 5);
 * and interval expressions, "@every 90m": real instants anchor + k * 90m,
 * the anchor the Unix epoch unless cron_set_anchor() says otherwise, which
 * no zone or clock change moves. Not supported, on purpose: @reboot,
 * cronie's "~" random ranges, Quartz extensions (L W # ?), seconds or year
 * fields.
 *
 * Ownership: cron_parse returns an expression the caller frees with
 * cron_free. Once its anchor is set an expression is not changed, so
 * threads may share one.
 */
#ifndef CRONQ_CRON_H
#define CRONQ_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time/tz.h"

typedef struct cron_expr cron_expr;


/*
 * Instants cron_next works with: 0001-01-01T00:00:00Z to
 * 9999-12-31T23:59:59Z. It reports no fire time outside them.
 */
#define CRON_TIME_MIN	INT64_C(-62135596800)
#define CRON_TIME_MAX	INT64_C(253402300799)

/* The shortest period "@every" takes, in seconds. */
#define CRON_EVERY_MIN	60

/*
 * Parse text ("30 2 * * 1-5", "@daily", "@every 90m": a duration as
 * lib/util/duration reads it, whole seconds, at least 1 minute). On failure: NULL, and err receives
 * one line naming the field at fault: `minute: 61 is out of range 0-59`.
 */
cron_expr  *cron_parse(const char *text, char *err, size_t errlen)
			__attribute__((warn_unused_result));

void		cron_free(cron_expr *e);

/*
 * True when the expression names a single minute and a single hour (after
 * expansion: "30 2 * * *", "0 0-0 * * 1"): such an expression fires once on
 * every matching day whatever daylight saving does.
 */
bool		cron_is_fixed_time(const cron_expr *e);

/* The period of an "@every" expression in seconds; 0 for the others. */
int64_t		cron_every(const cron_expr *e);

/*
 * Count an "@every" expression's periods from instant anchor (epoch
 * seconds) instead of the epoch. No effect on other expressions.
 */
void		cron_set_anchor(cron_expr *e, int64_t anchor);

/*
 * The first fire instant strictly after `after`, in *next; 0 on success, -1
 * when there is none: the expression can never fire (30 February), or its
 * next fire time is more than 100 years away or past CRON_TIME_MAX.
 *
 * Fixed-time expressions fire once per matching local day, at the first
 * instant the local clock reads their time or later (so at the end of a
 * spring-forward gap, and only in the first pass of a fall-back hour).
 * Others fire at every instant whose local wall time matches, to the minute:
 * wall times that do not exist are skipped, repeated ones fire twice.
 * "@every" expressions ignore the zone.
 */
int			cron_next(const cron_expr *e, const tz *zone, int64_t after, int64_t *next)
			__attribute__((warn_unused_result));

/*
 * Does a local wall time match, to the minute (seconds ignored)? For
 * "@every": does a fire instant fall in that minute (local->utoff says
 * which instant it is)?
 */
bool		cron_matches_local(const cron_expr *e, const struct tz_tm *local);


#endif
