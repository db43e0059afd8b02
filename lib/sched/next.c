/* next — see next.h. */
#include "sched/next.h"

#include <stdlib.h>

#include "sched/fire.h"
#include "time/rfc3339.h"
#include "util/err.h"
#include "util/xalloc.h"

int
sched_next(const char *expr, const char *zone_name, const char *anchor, const char *from, int64_t now,
		   int64_t count, int64_t **times, int64_t *n, cq_err *err)
{
	char why[512];
	fire_def def = {"", expr, zone_name, anchor != NULL, 0, 0};
	fire_clock clock;
	int64_t t = now;
	int rc = 0;

	*times = NULL;
	*n = 0;
	if (anchor && rfc3339_parse(anchor, &def.anchor, why, sizeof why) != 0)
		return cq_fail(err, EX_DATAERR, "%s", why);
	if ((rc = fire_open(&def, &clock, err)) != 0)
		return rc;
	if (from && rfc3339_parse(from, &t, why, sizeof why) != 0)
		rc = cq_fail(err, EX_DATAERR, "%s", why);
	if (rc == 0 && count > 0)
		*times = xcalloc((size_t) count, sizeof **times);
	for (int64_t i = 0; rc == 0 && i < count; i++) {
		if (fire_next(&clock, t, &t) != 0) {
			if (i == 0)
				rc = cq_fail(err, EX_DATAERR, "cron expression \"%s\" never fires", expr);
			break;
		}
		(*times)[(*n)++] = t;
	}
	if (rc != 0) {
		free(*times);
		*times = NULL;
		*n = 0;
	}
	fire_close(&clock);
	return rc;
}
