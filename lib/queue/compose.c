/*
 * compose — see compose.h.
 */
#include "queue/compose.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/enqueue.h"
#include "util/xalloc.h"

const char *const compose_events[] = {"on_success", "on_failure", "on_dead", "on_recover", NULL};

static const char *const spec_fields[] = {
	"type", "payload", "queue", "priority", "max_attempts", "timeout", NULL,
};

static bool
listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

int
compose_hook_add(json_t **hooks, const char *event, const char *spec, char *why, size_t len)
{
	json_t *v;

	if (*hooks && json_object_get(*hooks, event)) {
		snprintf(why, len, "%s given twice", event);
		return -1;
	}
	if (spec[strspn(spec, " \t\r\n")] == '{') {
		json_error_t jerr;

		if ((v = json_loads(spec, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
			snprintf(why, len, "%s: malformed JSON at column %d: %s", event, jerr.column, jerr.text);
			return -1;
		}
	} else
		v = json_pack("{ss}", "type", spec);
	if (*hooks == NULL)
		*hooks = json_object();
	json_object_set_new(*hooks, event, v);
	return 0;
}

/* Whether v is a JSON integer from min to max. */
static bool
integer_in(const json_t *v, json_int_t min, json_int_t max)
{
	return json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max;
}

/* Whether s holds a placeholder a hook's payload may use ({job_id}…). */
static bool
has_placeholder(const char *s)
{
	static const char *const names[] = {"{job_id}", "{type}", "{schedule}", "{status}", "{error}", NULL};

	for (int i = 0; s && names[i]; i++)
		if (strstr(s, names[i]))
			return true;
	return false;
}

/* One spec: 0, or -1 with the reason (without the event) in why. */
static int
spec_check(const json_t *spec, compose_rules_fn rules, char *why, size_t len)
{
	const char *key;
	const json_t *v, *type, *payload, *queue;

	if (!json_is_object(spec)) {
		snprintf(why, len, "a hook is a job spec, a JSON object such as {\"type\": \"noop\"}");
		return -1;
	}
	json_object_foreach((json_t *) spec, key, v) {
		if (!listed(spec_fields, key)) {
			snprintf(why, len, "unrecognized field \"%.100s\" (a hook has type, payload, queue, "
					 "priority, max_attempts, timeout)", key);
			return -1;
		}
	}
	type = json_object_get(spec, "type");
	payload = json_object_get(spec, "payload");
	queue = json_object_get(spec, "queue");
	if (!json_is_string(type)) {
		snprintf(why, len, "\"type\" is required and must be a string");
		return -1;
	}
	if (payload && !json_is_object(payload)) {
		snprintf(why, len, "\"payload\" must be a JSON object");
		return -1;
	}
	if (queue && (!json_is_string(queue) || json_string_length(queue) == 0 ||
				  json_string_length(queue) > 200 || enqueue_has_control(json_string_value(queue)))) {
		snprintf(why, len, "\"queue\" must be printable text of 1 to 200 bytes");
		return -1;
	}
	if ((v = json_object_get(spec, "priority")) && !integer_in(v, -1000000, 1000000)) {
		snprintf(why, len, "\"priority\" must be an integer from -1000000 to 1000000");
		return -1;
	}
	if ((v = json_object_get(spec, "max_attempts")) && !integer_in(v, 1, 1000)) {
		snprintf(why, len, "\"max_attempts\" must be an integer from 1 to 1000");
		return -1;
	}
	if ((v = json_object_get(spec, "timeout")) && !integer_in(v, 1, 31536000)) {
		snprintf(why, len, "\"timeout\" must be a whole number of seconds from 1 to 31536000");
		return -1;
	}
	/*
	 * The placeholders' values are set by a statement put before the
	 * hook's SQL (cronq.hook_payload), and "transaction": false runs one.
	 */
	if (strcmp(json_string_value(type), "sql") == 0 && payload &&
		json_is_false(json_object_get(payload, "transaction")) &&
		has_placeholder(json_string_value(json_object_get(payload, "sql")))) {
		snprintf(why, len, "an sql hook with placeholders must run in a transaction: its values are set by a "
				 "statement before the SQL, and \"transaction\": false runs one statement");
		return -1;
	}
	return rules(json_string_value(type), payload, why, len);
}

int
compose_hooks_check(const json_t *hooks, compose_rules_fn rules, char *why, size_t len)
{
	const char *event;
	const json_t *spec;

	if (!json_is_object(hooks)) {
		snprintf(why, len, "hooks must be a JSON object");
		return -1;
	}
	json_object_foreach((json_t *) hooks, event, spec) {
		char reason[1024];

		if (!listed(compose_events, event)) {
			snprintf(why, len, "unknown hook \"%.100s\": must be on_success, on_failure, on_dead "
					 "or on_recover", event);
			return -1;
		}
		if (spec_check(spec, rules, reason, sizeof reason) != 0) {
			snprintf(why, len, "%s: %s", event, reason);
			return -1;
		}
	}
	return 0;
}

int
compose_ids_add(int64_t **ids, size_t *n, const char *arg, char *why, size_t len)
{
	const char *p = arg;

	for (;;) {
		char *end;
		long long id;

		errno = 0;
		id = (*p >= '0' && *p <= '9') ? strtoll(p, &end, 10) : 0;
		if (id <= 0 || errno != 0 || (*end != ',' && *end != '\0')) {
			snprintf(why, len, "\"%.100s\" is not a job id (a positive integer, or several "
					 "separated by commas)", arg);
			return -1;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof **ids);
		(*ids)[(*n)++] = id;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}
