/*
 * json — reading members of a jansson object without a check at every
 * call: a member that is absent or of another type reads as the default.
 * For documents cronq built itself (the status document, list results).
 */
#ifndef CRONQ_JSON_H
#define CRONQ_JSON_H

#include <jansson.h>
#include <stdint.h>

/* The string member key of o, or dflt when it is absent, null or not a string. */
const char *cq_json_str(const json_t *o, const char *key, const char *dflt);

/* The integer member key of o, or 0 when it is absent or not an integer. */
int64_t cq_json_int(const json_t *o, const char *key);

/*
 * v in cronq's one JSON style (SPEC section 12): compact, keys in the order
 * built, reals to 15 significant digits (0.1 stays 0.1); an array of
 * objects one object a line between "[" and "]" lines, as "cronq list
 * --json" prints (an empty one "[]"). With a final newline; the caller
 * free()s it. Durations are seconds and times RFC 3339 UTC by the
 * documents' own making.
 */
char *cq_json_text(const json_t *v);

/*
 * A new string (xmalloc): the JSON text text (UTF-8) with the characters
 * a terminal obeys or a reader is not shown written as \u escapes: C1
 * controls (U+0080-009F) and utf8_invisible()'s (a surrogate pair past
 * U+FFFF). The same JSON value, safe to print where a person reads it
 * (jansson and PostgreSQL escape only C0 controls).
 */
char *cq_json_safe(const char *text);

#endif
