/*
 * utf8 — make arbitrary bytes (a program's output) storable as PostgreSQL
 * text: invalid UTF-8 sequences become U+FFFD and NUL bytes are dropped.
 */
#ifndef CRONQ_UTF8_H
#define CRONQ_UTF8_H

#include <stddef.h>

/* A new NUL-terminated string (xmalloc) holding the cleaned bytes. */
char *utf8_sanitize(const char *s, size_t len);

#endif
