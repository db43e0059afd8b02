/*
 * fail — {"message": "...", "code": "...", "permanent": false}: fails with
 * that message and error code, retryable unless permanent. For diagnostics.
 */
#include "tasks/task.h"

#include <stdio.h>
#include <string.h>

static bool
valid_code(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int
fail_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {"message", "code", "permanent", NULL};
	const char *key = task_unknown_key(payload, allowed);
	json_t *v;

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	v = json_object_get(payload, "message");
	if (v && !json_is_string(v)) {
		snprintf(err, errlen, "\"message\" must be a string");
		return -1;
	}
	v = json_object_get(payload, "code");
	if (v && (!json_is_string(v) || !valid_code(json_string_value(v)))) {
		snprintf(err, errlen, "\"code\" must be 1 to 64 characters of a-z, 0-9 and _");
		return -1;
	}
	v = json_object_get(payload, "permanent");
	if (v && !json_is_boolean(v)) {
		snprintf(err, errlen, "\"permanent\" must be true or false");
		return -1;
	}
	return 0;
}

static void
fail_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	json_t *msg = json_object_get(job->payload, "message");
	json_t *code = json_object_get(job->payload, "code");

	(void) ctx;
	task_result_set(res, json_is_true(json_object_get(job->payload, "permanent")) ? TASK_PERMANENT : TASK_FAILED,
					code ? json_string_value(code) : "failed", "%s",
					msg ? json_string_value(msg) : "failed on purpose");
}

const task_def task_fail = {"fail", fail_validate, fail_run};
