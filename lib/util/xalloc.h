/*
 * xalloc — allocation that cannot fail. cronq is a short-lived program: when
 * memory runs out there is nothing sensible left to do, so these print one
 * line and exit 70 instead of making every caller check for NULL.
 */
#ifndef CRONQ_XALLOC_H
#define CRONQ_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
