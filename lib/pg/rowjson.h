/*
 * rowjson — one row of a query's result as a JSON object (column name to
 * value), as text that PostgreSQL's jsonb accepts: what a sql job keeps
 * of its last statement's first row. Knows libpq's results and the
 * built-in types' text output; nothing of the cronq schema.
 *
 * Values: integers, floating-point numbers and numerics are JSON numbers
 * (their text as PostgreSQL prints it, so none loses a digit; NaN and the
 * infinities, which JSON lacks, are strings), booleans true or false,
 * json and jsonb embedded as JSON (a json value jsonb cannot hold, such
 * as one with \u0000, is kept as a string), NULL null, anything else its
 * text output as a string. Bytes that are not UTF-8 (a job may set its
 * session's client_encoding) become U+FFFD, in names and strings alike;
 * json or jsonb text that is not UTF-8 is kept as a string so.
 */
#ifndef CRONQ_ROWJSON_H
#define CRONQ_ROWJSON_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* The largest row a sql job keeps: 64 KiB of JSON text. */
#define ROWJSON_MAX (64 * 1024)

/*
 * Row row of r as a JSON object's text (a new string, the caller frees
 * it), or NULL when that text would be longer than cap bytes.
 */
char *rowjson_text(const PGresult *r, int row, size_t cap);

/* s (NUL-terminated) appended to b as a JSON string, quoted; bytes that
 * are not UTF-8 become U+FFFD. */
void rowjson_string(buf *b, const char *s);

/* Whether s is a number in JSON's grammar (no NaN, no leading + or 0). */
bool rowjson_is_number(const char *s);

#endif
