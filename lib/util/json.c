/* json — see json.h. */
#include "util/json.h"

const char *
cq_json_str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

int64_t
cq_json_int(const json_t *o, const char *key)
{
	return (int64_t) json_integer_value(json_object_get(o, key));
}
