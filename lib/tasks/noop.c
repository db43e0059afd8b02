/* noop — succeeds at once. For diagnostics and benchmarks; takes {}. */
#include "tasks/task.h"

#include <stdio.h>

static int
noop_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {NULL};
	const char *key = task_unknown_key(payload, allowed);

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	return 0;
}

static void
noop_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	(void) ctx;
	(void) job;
	task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
}

const task_def task_noop = {"noop", noop_validate, noop_run};
