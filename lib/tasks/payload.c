/* payload — see payload.h. */
#include "tasks/payload.h"

#include <stdio.h>

#include "tasks/task.h"

static const char *
json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
		case JSON_OBJECT: return "object";
		case JSON_ARRAY: return "array";
		case JSON_STRING: return "string";
		case JSON_INTEGER:
		case JSON_REAL: return "number";
		case JSON_TRUE:
		case JSON_FALSE: return "boolean";
		default: return "null";
	}
}

int
payload_validate(const char *type, const json_t *payload, char *err, size_t errlen)
{
	const task_def *t;
	char reason[512];

	if (type == NULL || *type == '\0') {
		snprintf(err, errlen, "task type must not be empty");
		return -1;
	}
	t = task_find(type);
	if (t == NULL) {
		snprintf(err, errlen, "unrecognized task type \"%s\"", type);
		return -1;
	}
	if (payload == NULL) {
		json_t *empty = json_object();
		int rc = payload_validate(type, empty, err, errlen);

		json_decref(empty);
		return rc;
	}
	if (!json_is_object(payload)) {
		snprintf(err, errlen, "invalid payload: must be a JSON object, not %s", json_kind(payload));
		return -1;
	}
	if (t->validate((json_t *) payload, reason, sizeof reason) != 0) {
		snprintf(err, errlen, "invalid payload for task \"%s\": %s", type, reason);
		return -1;
	}
	return 0;
}
