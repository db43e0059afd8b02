/*
 * sleep — {"seconds": N}: sleeps N seconds (0 to 86400, fractions allowed),
 * ticking so that timeouts, shutdown and lost leases stop it promptly.
 */
#include "tasks/task.h"

#include <stdio.h>

static int
sleep_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {"seconds", NULL};
	const char *key = task_unknown_key(payload, allowed);
	json_t *seconds = json_object_get(payload, "seconds");

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	if (seconds == NULL) {
		snprintf(err, errlen, "\"seconds\" is required");
		return -1;
	}
	if (!json_is_number(seconds)) {
		snprintf(err, errlen, "\"seconds\" must be a number");
		return -1;
	}
	if (json_number_value(seconds) < 0 || json_number_value(seconds) > 86400) {
		snprintf(err, errlen, "\"seconds\" must be between 0 and 86400");
		return -1;
	}
	return 0;
}

static void
sleep_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	double seconds = json_number_value(json_object_get(job->payload, "seconds"));

	if (task_sleep_ms(ctx, (int64_t) (seconds * 1000.0)) != TASK_GO)
		return;					/* stopped: the runner records why */
	task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
}

const task_def task_sleep = {"sleep", sleep_validate, sleep_run};
