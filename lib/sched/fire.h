/*
 * fire — when a schedule's occurrences are due: its expression's fire
 * times (cron.c: in its zone, an "@every" from its anchor) each moved later
 * by the schedule's spread offset, a fixed part of its --spread derived from
 * its name alone. Every caller that asks when a schedule runs
 * (materialisation, schedule add/enable/next/show, backfill --schedule)
 * asks a fire clock, so the spread instant is the occurrence's time
 * everywhere: next_run_at, its job's run_at and scheduled_for, and its key.
 * Knows nothing of the database.
 *
 * Ownership: fire_open() gives the clock its own expression and zone, which
 * fire_close() frees; a clock filled by hand (materialisation shares its
 * zones) is not closed, and its owner frees what it put in.
 */
#ifndef CRONQ_FIRE_H
#define CRONQ_FIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "time/cron.h"
#include "time/tz.h"
#include "util/err.h"

/*
 * The longest spread, in seconds: a day. A wider one would move an
 * occurrence past the next day's, which no one reading a schedule expects.
 */
#define FIRE_SPREAD_MAX (24 * 3600)

typedef struct fire_clock {
	cron_expr  *expr;			/* its anchor set */
	tz		   *zone;
	int64_t		offset;			/* seconds, in [0, spread) */
} fire_clock;

/* What a schedule says about its times. */
typedef struct fire_def {
	const char *name;			/* the spread offset's seed */
	const char *cron;
	const char *zone;			/* NULL: UTC */
	bool		has_anchor;
	int64_t		anchor;			/* epoch seconds; "@every" only */
	int64_t		spread;			/* seconds, 0 to FIRE_SPREAD_MAX; 0: none */
} fire_def;

/* FNV-1a, 64 bits, of the bytes of name: the same on every platform. */
uint64_t fire_hash(const char *name);

/* The spread offset of a schedule named name: fire_hash mod spread; 0 when spread <= 0. */
int64_t fire_offset(const char *name, int64_t spread);

/*
 * Parse and open d into c: EX_DATAERR for a bad expression or zone, an
 * anchor on a cron expression, or a spread out of range, with the message
 * a user sees.
 */
int fire_open(const fire_def *d, fire_clock *c, cq_err *err) __attribute__((warn_unused_result));
void fire_close(fire_clock *c);

/*
 * The first due instant strictly after `after`: the expression's next fire
 * time after after - offset, plus offset. 0, or -1 when there is none
 * (cron_next's rule).
 */
int fire_next(const fire_clock *c, int64_t after, int64_t *next) __attribute__((warn_unused_result));

#endif
