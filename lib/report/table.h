/*
 * table — the tables printed for people (`cronq status`, `cronq list`,
 * `cronq schedule list`, `cronq limit list`), and the same tables as CSV.
 * Cells are gathered whole; table_flush lays them out as the table_mode
 * says: text, each cell on one line with its control characters escaped
 * (job errors hold programs' output, which must not drive the operator's
 * terminal; queue names are anyone's), columns as wide as their widest
 * cell in terminal columns (util/utf8: utf8_columns), fitted to the terminal and coloured when it is one;
 * or RFC 4180 CSV, every value whole, nothing escaped or coloured.
 */
#ifndef CRONQ_TABLE_H
#define CRONQ_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/term.h"

/* Widest cell of a text table, in terminal columns; longer values are clipped. */
#define TABLE_CELL_MAX 48
/* Widest cell of a column of free text (see table.wide). */
#define TABLE_WIDE_MAX 80
/* A column that shrinks to fit the width keeps at least this many characters. */
#define TABLE_SHRINK_MIN 8
/* A header abbreviated to fit keeps at least this many ("SUC."). */
#define TABLE_HEAD_MIN 4

typedef enum table_format {
	TABLE_TEXT = 0,
	TABLE_CSV,
} table_format;

/* How a command's tables come out: decided once (table_mode_for). */
typedef struct table_mode {
	table_format format;
	bool		colour;			/* SGR styles (text only) */
	size_t		width;			/* text fitted to this many columns; 0: no limit */
} table_mode;

/* Plain text: no colour, no width limit (files, tests). */
#define TABLE_MODE_PLAIN ((table_mode) {TABLE_TEXT, false, 0})

typedef struct table {
	int			ncols;			/* at most 16 */
	const char *const *head;
	unsigned	right;			/* bit i: column i is right-aligned */
	unsigned	shrink;			/* bit i: column i may be clipped to fit the width */
	unsigned	wide;			/* bit i: column i is free text: TABLE_WIDE_MAX, its lines
								 * joined by spaces (not only its first line shown) */
	char	  **cells;			/* row-major, ncols per row, as given */
	unsigned char *styles;		/* a term_style per cell */
	size_t		n, cap;
} table;

/*
 * The mode for output to fd: CSV when csv, else text coloured and fitted
 * as util/term decides for fd. fd < 0: a file (--output): plain text.
 */
table_mode table_mode_for(int fd, bool csv);

/*
 * A copy of s fit for one text cell (xmalloc): its first line, at most
 * TABLE_CELL_MAX characters, "..." marking any cut, control characters
 * escaped as \xNN.
 */
char *table_clip(const char *s);

/* Add the next cell (row by row), printf-style, kept whole. */
void table_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Give the last cell added style s (shown when the mode has colour). */
void table_style(table *t, term_style s);

/* The style of a job status (succeeded green, dead red, …); "" is plain. */
term_style table_status_style(const char *status);

/*
 * Append the table to out as mode says, then empty it, ready for new rows.
 * Text: the header (bold) and the rows, columns two spaces apart (one when
 * that fits and two does not), each as wide as its widest cell in
 * characters, the last one not padded; wider than mode->width, the
 * shrinkable columns give up characters, the widest first, down to
 * TABLE_SHRINK_MIN, then headers wider than their column's values
 * ("SUCCEEDED" over counts) are abbreviated ("SUCCE."), the widest first,
 * down to TABLE_HEAD_MIN; what still does not fit is cut at the width (never
 * wrapped). CSV: a header row (lower case, words joined by "_"), then one
 * record per row, CRLF after each.
 */
void table_flush(table *t, buf *out, const table_mode *mode);

/*
 * Append s to out as one CSV field: as it is, or in double quotes (inner
 * quotes doubled) when it holds a comma, a quote or LF. What a terminal
 * would obey or not show (utf8_printable: C0 but LF, C1, bidirectional
 * and other invisible characters, bytes that are not UTF-8) is escaped as
 * in the tables, tabs and CRs made spaces: a file read later with cat is
 * read on a terminal too.
 */
void table_csv_field(buf *out, const char *s);

/*
 * The widths of the columns of a text table wider than limit: width[c]
 * lowered for the columns whose bit is set in shrink, the widest first,
 * never below floor[c], until the columns and their gaps (gap characters
 * each) fit, or none can give more. Returns the total width then.
 */
size_t table_fit(size_t *width, const size_t *floor, int ncols, unsigned shrink, size_t gap, size_t limit);

#endif
