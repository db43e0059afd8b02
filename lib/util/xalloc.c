/*
 * xalloc — see xalloc.h. The one place in lib/ allowed to exit(): running out
 * of memory is not a condition any caller can recover from.
 */
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
out_of_memory(void)
{
	fputs("cronq: error: out of memory\n", stderr);
	exit(70);
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	int len;
	char *p;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		out_of_memory();
	p = xmalloc((size_t) len + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t) len + 1, fmt, ap);
	va_end(ap);
	return p;
}
