/*
 * outcome — the policy of the run loop, pure: how the reason a running
 * task was stopped (or TASK_GO) and the task's own result make the
 * outcome recorded for the attempt. No I/O, no state: tested by
 * tests/unit/test_outcome.c.
 */
#ifndef CRONQ_RUN_OUTCOME_H
#define CRONQ_RUN_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/status.h"
#include "tasks/task.h"

typedef struct outcome_decision {
	/* The stop that counts: none when the work took effect before a late stop. */
	task_stop	stop;
	/* false: nothing can be recorded (connection lost); a later run rescues the lease */
	bool		record;
	run_outcome outcome;
	bool		permanent;		/* failed with no retry possible: dead now */
	/* true: the task's result is replaced by status, error_code and message */
	bool		replace;
	task_status status;
	const char *error_code;		/* NULL: none */
	char		message[1100];
} outcome_decision;

/*
 * The outcome of an attempt stopped for stop (TASK_GO: not stopped) whose
 * task left result r; timeout_ms is the job's timeout (for the message of
 * a timeout), unavailable why a session could not be opened (for
 * TASK_STOP_UNAVAILABLE).
 */
outcome_decision outcome_for(task_stop stop, const task_result *r, int64_t timeout_ms,
							 const char *unavailable);

#endif
