/*
 * pace — the size of a worker's next claim (see pace.h).
 */
#include "run/pace.h"

int
pace_next(int limit, int max, int started, int64_t elapsed_ms)
{
	int64_t next = limit, cap = PACE_GROWTH * (int64_t) limit;

	if (started > 0)
		next = (int64_t) (PACE_HOLD_MS / 2) * started / (elapsed_ms > 1 ? elapsed_ms : 1);
	if (cap > max)
		cap = max;
	if (next > cap)
		next = cap;
	return next < 1 ? 1 : (int) next;
}
