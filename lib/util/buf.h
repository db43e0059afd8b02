/*
 * buf — a growable byte buffer, always NUL-terminated. Allocation cannot
 * fail (xalloc), so appends return nothing. The buffer owns its data:
 * buf_free() releases it, buf_steal() hands it to the caller.
 */
#ifndef CRONQ_BUF_H
#define CRONQ_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct buf {
	char	   *data;
	size_t		len;
	size_t		cap;
} buf;

#define BUF_INIT {NULL, 0, 0}

void buf_reserve(buf *b, size_t extra);
void buf_append(buf *b, const char *s, size_t n);
void buf_puts(buf *b, const char *s);
void buf_putc(buf *b, char c);
void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_reset(buf *b);
void buf_free(buf *b);
char *buf_steal(buf *b);
/* The contents, "" when empty (never NULL). */
const char *buf_str(const buf *b);

#endif
