/*
 * outcome — see outcome.h: the table from (stop reason, task result) to
 * what the attempt records. attempt.c applies the decision.
 */
#include "run/outcome.h"

#include <stdio.h>
#include <string.h>

#include "util/duration.h"

outcome_decision
outcome_for(task_stop stop, const task_result *r, int64_t timeout_ms, const char *unavailable)
{
	outcome_decision d;

	memset(&d, 0, sizeof d);
	/*
	 * Work that took effect (a committed transaction) stands however late
	 * the stop came: recorded as a timeout or given back, it would run
	 * again. (A lost lease is fenced anyway; a lost connection records
	 * nothing.)
	 */
	if (r->took_effect && r->status == TASK_SUCCEEDED &&
		(stop == TASK_STOP_TIMEOUT || stop == TASK_STOP_SHUTDOWN || stop == TASK_STOP_CANCELLED ||
		 stop == TASK_STOP_UNAVAILABLE))
		stop = TASK_GO;
	d.stop = stop;
	d.record = true;
	d.status = TASK_FAILED;
	switch (stop) {
		case TASK_GO:
			d.outcome = r->status == TASK_SUCCEEDED ? OUTCOME_SUCCEEDED : OUTCOME_FAILED;
			d.permanent = r->status == TASK_PERMANENT;
			break;
		case TASK_STOP_TIMEOUT: {
			char t[32];

			duration_format(timeout_ms, t, sizeof t);
			d.outcome = OUTCOME_TIMEOUT;
			d.replace = true;
			d.error_code = "timeout";
			snprintf(d.message, sizeof d.message, "timed out after %s", t);
			break;
		}
		case TASK_STOP_SHUTDOWN:
			d.outcome = OUTCOME_GIVEN_BACK;
			d.replace = true;
			snprintf(d.message, sizeof d.message, "given back at shutdown");
			break;
		case TASK_STOP_UNAVAILABLE:
			d.outcome = OUTCOME_GIVEN_BACK;
			d.replace = true;
			snprintf(d.message, sizeof d.message, "given back: %s", unavailable);
			break;
		case TASK_STOP_CANCELLED:
			d.outcome = OUTCOME_CANCELLED;
			d.replace = true;
			d.error_code = "cancelled";
			snprintf(d.message, sizeof d.message, "cancelled while running");
			break;
		case TASK_STOP_LOST:
			d.outcome = OUTCOME_LEASE_LOST;
			break;
		case TASK_STOP_DISCONNECTED:
			d.record = false;
			break;
	}
	return d;
}
