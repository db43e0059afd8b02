/* buf — see buf.h. */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void
buf_reserve(buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->data = xrealloc(b->data, b->cap);
	b->data[b->len] = '\0';	/* the buffer is a string at every moment */
}

void
buf_append(buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_puts(buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_putc(buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void
buf_printf(buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	buf_reserve(b, (size_t) n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
}

void
buf_reset(buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void
buf_free(buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *
buf_steal(buf *b)
{
	char *s = b->data ? b->data : xstrdup("");

	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

const char *
buf_str(const buf *b)
{
	return b->data ? b->data : "";
}

void
buf_array_begin(buf *b)
{
	buf_putc(b, '{');
}

static void
array_sep(buf *b)
{
	if (b->len > 0 && b->data[b->len - 1] != '{')
		buf_putc(b, ',');
}

void
buf_array_text(buf *b, const char *s)
{
	array_sep(b);
	if (s == NULL) {
		buf_puts(b, "NULL");
		return;
	}
	buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *s);
	}
	buf_putc(b, '"');
}

void
buf_array_raw(buf *b, const char *s)
{
	array_sep(b);
	buf_puts(b, s ? s : "NULL");
}

void
buf_array_end(buf *b)
{
	buf_putc(b, '}');
}

void
buf_array_ids(buf *b, const int64_t *ids, int n)
{
	buf_array_begin(b);
	for (int i = 0; i < n; i++)
		buf_printf(b, "%s%lld", i ? "," : "", (long long) ids[i]);
	buf_array_end(b);
}

void
buf_copy_field(buf *b, const char *s)
{
	if (s == NULL) {
		buf_append(b, "\\N", 2);
		return;
	}
	for (; *s; s++) {
		switch (*s) {
			case '\\': buf_append(b, "\\\\", 2); break;
			case '\t': buf_append(b, "\\t", 2); break;
			case '\n': buf_append(b, "\\n", 2); break;
			case '\r': buf_append(b, "\\r", 2); break;
			default: buf_putc(b, *s);
		}
	}
}
