/*
 * fire — see fire.h. The offset is the only arithmetic here: a fire clock
 * is the expression's clock shifted by it, so order, catch-up and pauses
 * work on spread instants exactly as on fire times.
 */
#include "sched/fire.h"

#include <string.h>

#include "util/err.h"

uint64_t
fire_hash(const char *name)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
		h ^= *p;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

int64_t
fire_offset(const char *name, int64_t spread)
{
	return spread > 0 ? (int64_t) (fire_hash(name) % (uint64_t) spread) : 0;
}

int
fire_open(const fire_def *d, fire_clock *c, cq_err *err)
{
	char why[512];
	const char *zone = d->zone ? d->zone : "UTC";

	memset(c, 0, sizeof *c);
	if ((c->expr = cron_parse(d->cron, why, sizeof why)) == NULL)
		return cq_fail(err, EX_DATAERR, "invalid cron expression \"%s\": %s", d->cron, why);
	if (d->has_anchor) {
		if (cron_every(c->expr) == 0) {
			fire_close(c);
			return cq_fail(err, EX_DATAERR, "an anchor applies only to @every expressions, not to \"%s\"",
						   d->cron);
		}
		if (d->anchor < CRON_TIME_MIN || d->anchor > CRON_TIME_MAX) {
			fire_close(c);
			return cq_fail(err, EX_DATAERR, "anchor out of range: years 1 to 9999");
		}
		cron_set_anchor(c->expr, d->anchor);
	}
	if ((c->zone = tz_open(zone, why, sizeof why)) == NULL) {
		fire_close(c);
		return cq_fail(err, EX_DATAERR, "%s", why);
	}
	if (d->spread < 0 || d->spread > FIRE_SPREAD_MAX) {
		fire_close(c);
		return cq_fail(err, EX_DATAERR, "invalid spread: must be at most 1 day");
	}
	c->offset = fire_offset(d->name ? d->name : "", d->spread);
	return 0;
}

void
fire_close(fire_clock *c)
{
	cron_free(c->expr);
	tz_free(c->zone);
	c->expr = NULL;
	c->zone = NULL;
}

int
fire_next(const fire_clock *c, int64_t after, int64_t *next)
{
	int64_t t;

	if (cron_next(c->expr, c->zone, after - c->offset, &t) != 0)
		return -1;
	*next = t + c->offset;
	return 0;
}
