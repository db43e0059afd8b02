/* next — see next.h. */
#include "sched/next.h"

#include <stdlib.h>

#include "time/cron.h"
#include "time/rfc3339.h"
#include "time/tz.h"
#include "util/err.h"
#include "util/xalloc.h"

int
sched_next(const char *expr, const char *zone_name, const char *from, int64_t now, int64_t count,
		   int64_t **times, int64_t *n, cq_err *err)
{
	char why[512];
	cron_expr *e;
	tz *zone;
	int64_t t = now;
	int rc = 0;

	*times = NULL;
	*n = 0;
	if ((e = cron_parse(expr, why, sizeof why)) == NULL)
		return cq_fail(err, EX_DATAERR, "invalid cron expression \"%s\": %s", expr, why);
	if ((zone = tz_open(zone_name ? zone_name : "UTC", why, sizeof why)) == NULL) {
		cron_free(e);
		return cq_fail(err, EX_DATAERR, "%s", why);
	}
	if (from && rfc3339_parse(from, &t, why, sizeof why) != 0)
		rc = cq_fail(err, EX_DATAERR, "%s", why);
	if (rc == 0 && count > 0)
		*times = xcalloc((size_t) count, sizeof **times);
	for (int64_t i = 0; rc == 0 && i < count; i++) {
		if (cron_next(e, zone, t, &t) != 0) {
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
	cron_free(e);
	tz_free(zone);
	return rc;
}
