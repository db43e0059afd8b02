/* table — see table.h. */
#include "report/table.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

char *
table_clip(const char *s)
{
	char *cut = utf8_clip(s, TABLE_CELL_MAX, UTF8_CLIP_FIRST_LINE);
	char *out = utf8_printable(cut, false);

	free(cut);
	return out;
}

void
table_cell(table *t, const char *fmt, ...)
{
	va_list ap;
	char *raw;
	int need;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	va_start(ap, fmt);
	need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	raw = xmalloc((size_t) (need < 0 ? 0 : need) + 1);
	raw[0] = '\0';
	va_start(ap, fmt);
	if (need >= 0)
		vsnprintf(raw, (size_t) need + 1, fmt, ap);
	va_end(ap);
	t->cells[t->n++] = table_clip(raw);
	free(raw);
}

void
table_flush(table *t, buf *out)
{
	size_t width[16] = {0};
	size_t rows = t->n / (size_t) t->ncols;

	for (int c = 0; c < t->ncols; c++)
		width[c] = strlen(t->head[c]);
	for (size_t i = 0; i < t->n; i++) {
		size_t w = utf8_width(t->cells[i]);
		int c = (int) (i % (size_t) t->ncols);

		if (w > width[c])
			width[c] = w;
	}
	for (size_t r = 0; r <= rows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * (size_t) t->ncols + (size_t) c];
			size_t pad = width[c] - utf8_width(s);
			bool last = c == t->ncols - 1;

			if (c > 0)
				buf_puts(out, "  ");
			if (t->right & (1u << c))
				for (size_t k = 0; k < pad; k++)
					buf_putc(out, ' ');
			buf_puts(out, s);
			if (!(t->right & (1u << c)) && !last)
				for (size_t k = 0; k < pad; k++)
					buf_putc(out, ' ');
		}
		buf_putc(out, '\n');
	}
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->n = t->cap = 0;
}

void
table_row(buf *out, int n, const int *widths, const char *const *cells)
{
	for (int c = 0; c < n; c++) {
		if (c > 0)
			buf_putc(out, ' ');
		if (c < n - 1)
			buf_printf(out, "%-*s", widths[c], cells[c]);
		else
			buf_puts(out, cells[c]);
	}
	buf_putc(out, '\n');
}
