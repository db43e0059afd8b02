/*
 * payload — see payload.h. The size and depth limits are checked on the
 * text before jansson parses it, so a hostile payload costs one linear scan.
 */
#include "queue/payload.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Deepest bracket nesting of JSON text, ignoring brackets inside strings. */
static int
text_depth(const char *s, size_t len)
{
	int depth = 0, max = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[') {
			if (++depth > max)
				max = depth;
		} else if (c == '}' || c == ']')
			depth--;
	}
	return max;
}

json_t *
payload_parse(const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *v;

	if (len > PAYLOAD_MAX_BYTES) {
		snprintf(err, errlen, "invalid payload: larger than 1 MiB");
		return NULL;
	}
	if (text_depth(text, len) > PAYLOAD_MAX_DEPTH) {
		snprintf(err, errlen, "invalid payload: nested deeper than %d levels", PAYLOAD_MAX_DEPTH);
		return NULL;
	}
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (v == NULL) {
		/* jansson's own wording names a C flag; say what the rule is instead. */
		if (strstr(jerr.text, "\\u0000") != NULL)
			snprintf(err, errlen, "invalid payload: \\u0000 is not allowed in strings (PostgreSQL cannot store it)");
		else
			snprintf(err, errlen, "invalid payload: malformed JSON at line %d, column %d: %s",
					 jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	return v;
}

static int
depth_of(const json_t *v)
{
	int max = 0;

	if (json_is_object(v)) {
		const char *key;
		json_t *e;

		json_object_foreach((json_t *) v, key, e) {
			int d = depth_of(e);

			if (d > max)
				max = d;
			if (max > PAYLOAD_MAX_DEPTH)
				break;
		}
		return max + 1;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *e;

		json_array_foreach(v, i, e) {
			int d = depth_of(e);

			if (d > max)
				max = d;
			if (max > PAYLOAD_MAX_DEPTH)
				break;
		}
		return max + 1;
	}
	return 0;
}

int
payload_check_depth(const json_t *value, char *err, size_t errlen)
{
	if (depth_of(value) > PAYLOAD_MAX_DEPTH) {
		snprintf(err, errlen, "invalid payload: nested deeper than %d levels", PAYLOAD_MAX_DEPTH);
		return -1;
	}
	return 0;
}
