/*
 * literal — PostgreSQL's text syntax for values sent as parameters: array
 * literals ({"a","b",NULL}) and COPY's text format, appended to a buf.
 */
#ifndef CRONQ_LITERAL_H
#define CRONQ_LITERAL_H

#include <stdint.h>

#include "util/buf.h"

/*
 * Array literals, built element by element: pg_array_begin, then
 * pg_array_text/pg_array_raw…, then pg_array_end.
 */
void pg_array_begin(buf *b);
void pg_array_text(buf *b, const char *s);		/* NULL appends NULL */
void pg_array_raw(buf *b, const char *s);		/* numbers: no quoting */
void pg_array_end(buf *b);
/* A whole text[] literal of items, or NULL when n is 0 (the caller frees it). */
char *pg_text_array(const char *const *items, int n);
/* A whole bigint[] literal: {1,2,3}. */
void pg_array_ids(buf *b, const int64_t *ids, int n);

/* COPY text format: one field's escaped value (NULL appends \N). */
void pg_copy_field(buf *b, const char *s);

#endif
