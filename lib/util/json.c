/* json — see json.h. */
#include "util/json.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/utf8.h"

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

#define CQ_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY)

/* Whether v is a non-empty array whose every element is an object. */
static bool
array_of_objects(const json_t *v)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return false;
	json_array_foreach(v, i, e)
		if (!json_is_object(e))
			return false;
	return true;
}

char *
cq_json_text(const json_t *v)
{
	buf out = BUF_INIT;
	char *text;
	size_t i;
	json_t *e;

	if (!array_of_objects(v)) {
		text = json_dumps(v, CQ_JSON_FLAGS);
		buf_puts(&out, text ? text : "null");
		free(text);
	} else {
		buf_puts(&out, "[\n");
		json_array_foreach(v, i, e) {
			text = json_dumps(e, CQ_JSON_FLAGS);
			buf_printf(&out, "%s%s\n", text ? text : "null", i + 1 < json_array_size(v) ? "," : "");
			free(text);
		}
		buf_puts(&out, "]");
	}
	buf_putc(&out, '\n');
	text = cq_json_safe(buf_str(&out));
	buf_free(&out);
	return text;
}

char *
cq_json_safe(const char *text)
{
	buf out = BUF_INIT;
	size_t len = strlen(text), n;
	const unsigned char *p = (const unsigned char *) text, *end = p + len;
	uint32_t cp;

	/* Outside strings JSON text is ASCII: these bytes are inside one. */
	while (p < end) {
		if (p[0] == 0xc2 && p + 1 < end && p[1] >= 0x80 && p[1] <= 0x9f) {
			buf_printf(&out, "\\u%04x", p[1]);
			p += 2;
		} else if (*p >= 0x80 && (cp = utf8_invisible((const char *) p, (size_t) (end - p), &n)) != 0) {
			if (cp > 0xFFFF)
				buf_printf(&out, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10),
						   0xDC00 + ((cp - 0x10000) & 0x3FF));
			else
				buf_printf(&out, "\\u%04x", cp);
			p += n;
		} else
			buf_putc(&out, (char) *p++);
	}
	return buf_steal(&out);
}
