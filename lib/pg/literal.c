/* literal — see literal.h. */
#include "pg/literal.h"

#include <stddef.h>

void
pg_array_begin(buf *b)
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
pg_array_text(buf *b, const char *s)
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
pg_array_raw(buf *b, const char *s)
{
	array_sep(b);
	buf_puts(b, s ? s : "NULL");
}

void
pg_array_end(buf *b)
{
	buf_putc(b, '}');
}

void
pg_array_ids(buf *b, const int64_t *ids, int n)
{
	pg_array_begin(b);
	for (int i = 0; i < n; i++)
		buf_printf(b, "%s%lld", i ? "," : "", (long long) ids[i]);
	pg_array_end(b);
}

void
pg_copy_field(buf *b, const char *s)
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

char *
pg_text_array(const char *const *items, int n)
{
	buf b = BUF_INIT;

	if (n == 0)
		return NULL;
	pg_array_begin(&b);
	for (int i = 0; i < n; i++)
		pg_array_text(&b, items[i]);
	pg_array_end(&b);
	return buf_steal(&b);
}
