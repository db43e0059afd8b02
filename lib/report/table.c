/*
 * table — see table.h. Cells are kept as given so that CSV carries whole
 * values; the text form (clipped, escaped, fitted) is made at flush time.
 * The table owns its cells until table_flush frees them.
 */
#include "report/table.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/term.h"
#include "util/utf8.h"
#include "util/xalloc.h"

table_mode
table_mode_for(int fd, bool csv)
{
	if (csv)
		return (table_mode) {TABLE_CSV, false, 0};
	if (fd < 0)
		return TABLE_MODE_PLAIN;
	return (table_mode) {TABLE_TEXT, term_colour(fd), term_columns(fd)};
}

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
		t->styles = xrealloc(t->styles, t->cap * sizeof *t->styles);
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
	t->styles[t->n] = TERM_PLAIN;
	t->cells[t->n++] = raw;
}

void
table_style(table *t, term_style s)
{
	if (t->n > 0)
		t->styles[t->n - 1] = (unsigned char) s;
}

term_style
table_status_style(const char *status)
{
	static const struct {
		const char *status;
		term_style	style;
	} styles[] = {
		{"succeeded", TERM_GREEN}, {"failed", TERM_RED}, {"dead", TERM_RED},
		{"running", TERM_CYAN}, {"queued", TERM_YELLOW}, {"blocked", TERM_YELLOW},
		{"cancelled", TERM_DIM},
	};

	for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
		if (strcmp(status, styles[i].status) == 0)
			return styles[i].style;
	return TERM_PLAIN;
}

size_t
table_fit(size_t *width, const size_t *floor, int ncols, unsigned shrink, size_t gap, size_t limit)
{
	size_t total = ncols > 0 ? gap * (size_t) (ncols - 1) : 0;

	for (int c = 0; c < ncols; c++)
		total += width[c];
	while (total > limit) {
		int widest = -1;

		for (int c = 0; c < ncols; c++)
			if ((shrink & (1u << c)) && width[c] > floor[c] && (widest < 0 || width[c] > width[widest]))
				widest = c;
		if (widest < 0)
			break;
		width[widest]--;
		total--;
	}
	return total;
}

/*
 * Whether a spreadsheet would read CSV cell s as a formula: it starts with
 * = + - or @ and is not a number (nor the "-" that stands for none).
 */
static bool
formula_like(const char *s)
{
	const char *p = s;

	if (strchr("=+-@", *s) == NULL || *s == '\0' || strcmp(s, "-") == 0)
		return false;
	if (*p == '-' || *p == '+')
		p++;
	p += strspn(p, "0123456789");
	if (*p == '.' && p > s + 1)
		p += 1 + strspn(p + 1, "0123456789");
	return *p != '\0' || p == s + 1;
}

void
table_csv_field(buf *out, const char *s)
{
	char *shown = utf8_printable(s, true);
	/* an author's "=HYPERLINK(…)" shown as text, not run by whoever opens the file */
	const char *mark = formula_like(shown) ? "'" : "";

	if (strpbrk(shown, ",\"\n") == NULL) {
		buf_puts(out, mark);
		buf_puts(out, shown);
	} else {
		buf_putc(out, '"');
		buf_puts(out, mark);
		for (const char *p = shown; *p; p++) {
			if (*p == '"')
				buf_putc(out, '"');
			buf_putc(out, *p);
		}
		buf_putc(out, '"');
	}
	free(shown);
}

/* "OLDEST DUE" as a CSV header: "oldest_due" (runs of other characters become one "_"). */
static void
csv_head(buf *out, const char *head)
{
	bool gap = false;

	for (const char *p = head; *p; p++) {
		if (isalnum((unsigned char) *p)) {
			if (gap && out->len > 0)
				buf_putc(out, '_');
			buf_putc(out, (char) tolower((unsigned char) *p));
			gap = false;
		} else
			gap = true;
	}
}

static void
flush_csv(const table *t, buf *out)
{
	for (int c = 0; c < t->ncols; c++) {
		buf name = BUF_INIT;

		csv_head(&name, t->head[c]);
		if (c > 0)
			buf_putc(out, ',');
		table_csv_field(out, buf_str(&name));
		buf_free(&name);
	}
	buf_puts(out, "\r\n");
	for (size_t i = 0; i < t->n; i++) {
		table_csv_field(out, t->cells[i]);
		buf_puts(out, (i + 1) % (size_t) t->ncols == 0 ? "\r\n" : ",");
	}
}

/* A header cut to width characters, "." marking the cut: "SUCCEEDED" to "SUCCE." (xmalloc). */
static char *
abbreviate(const char *head, size_t width)
{
	buf out = BUF_INIT;
	size_t chars = 0;

	for (const char *p = head; *p; p++) {
		if (((unsigned char) *p & 0xC0) != 0x80 && ++chars == width)
			break;
		buf_putc(&out, *p);
	}
	buf_putc(&out, '.');
	return buf_steal(&out);
}

/* Cell i as a text table shows it before fitting (xmalloc). */
static char *
shown(const table *t, size_t i)
{
	int c = (int) (i % (size_t) t->ncols);
	char *joined, *out;

	if (!(t->wide & (1u << c)))
		return table_clip(t->cells[i]);
	joined = utf8_clip(t->cells[i], TABLE_WIDE_MAX, 0);
	out = utf8_printable(joined, false);
	free(joined);
	return out;
}

static void
flush_text(const table *t, buf *out, const table_mode *mode)
{
	size_t width[16] = {0}, floor[16] = {0}, widest[16] = {0};
	size_t rows = t->n / (size_t) t->ncols, gap = 2, start = out->len;
	char **text = xcalloc(t->n + 1, sizeof *text);

	for (int c = 0; c < t->ncols; c++)
		width[c] = utf8_width(t->head[c]);
	for (size_t i = 0; i < t->n; i++) {
		int c = (int) (i % (size_t) t->ncols);
		size_t w;

		text[i] = shown(t, i);
		if ((w = utf8_width(text[i])) > widest[c])
			widest[c] = w;
		if (w > width[c])
			width[c] = w;
	}
	/* A shrinking column keeps its header whole, or TABLE_SHRINK_MIN. */
	for (int c = 0; c < t->ncols; c++) {
		size_t h = utf8_width(t->head[c]);

		floor[c] = h > TABLE_SHRINK_MIN ? h : TABLE_SHRINK_MIN;
		if (floor[c] > width[c])
			floor[c] = width[c];
	}
	if (mode->width > 0 && table_fit(width, floor, t->ncols, t->shrink, gap, mode->width) > mode->width &&
		table_fit(width, floor, t->ncols, t->shrink, gap = 1, mode->width) > mode->width) {
		/* Then headers wider than their values (counts) are abbreviated. */
		for (int c = 0; c < t->ncols; c++) {
			size_t h = utf8_width(t->head[c]), least = h < TABLE_HEAD_MIN ? h : TABLE_HEAD_MIN;

			floor[c] = t->shrink & (1u << c) ? width[c] : widest[c] > least ? widest[c] : least;
		}
		table_fit(width, floor, t->ncols, ~0u, 1, mode->width);
	}

	for (size_t r = 0; r <= rows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			size_t i = (r - 1) * (size_t) t->ncols + (size_t) c;
			const char *s = r == 0 ? t->head[c] : text[i];
			term_style style = r == 0 ? TERM_BOLD : (term_style) t->styles[i];
			char *cut = utf8_width(s) <= width[c] ? NULL : r == 0 ? abbreviate(s, width[c])
				: utf8_clip(s, width[c], 0);
			size_t pad = width[c] - utf8_width(cut ? cut : s);
			bool last = c == t->ncols - 1;

			if (c > 0)
				buf_printf(out, "%*s", (int) gap, "");
			if (t->right & (1u << c))
				buf_printf(out, "%*s", (int) pad, "");
			term_paint(out, mode->colour, style, cut ? cut : s);
			if (!(t->right & (1u << c)) && !last)
				buf_printf(out, "%*s", (int) pad, "");
			free(cut);
		}
		buf_putc(out, '\n');
	}
	/* Columns that cannot shrink (counts, times) may still be too wide. */
	term_fit(out, start, mode->width);
	for (size_t i = 0; i < t->n; i++)
		free(text[i]);
	free(text);
}

void
table_flush(table *t, buf *out, const table_mode *mode)
{
	if (mode->format == TABLE_CSV)
		flush_csv(t, out);
	else
		flush_text(t, out, mode);
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->styles);
	t->cells = NULL;
	t->styles = NULL;
	t->n = t->cap = 0;
}
