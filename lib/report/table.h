/*
 * table — text tables for people (`cronq status`, `cronq list`, `cronq
 * schedule list`). Every cell is one line, its control characters escaped
 * (job errors hold programs' output, which must not drive the operator's
 * terminal; queue names are anyone's).
 *
 * Two kinds: a table whose columns fit their widest cell (cells collected
 * with table_cell, laid out by table_flush), and rows whose columns have
 * fixed widths, printed as they come (table_row).
 */
#ifndef CRONQ_TABLE_H
#define CRONQ_TABLE_H

#include <stddef.h>

#include "util/buf.h"

/* Widest cell of a fitted table, in characters; longer values are clipped. */
#define TABLE_CELL_MAX 48

typedef struct table {
	int			ncols;			/* at most 16 */
	const char *const *head;
	unsigned	right;			/* bit i: column i is right-aligned */
	char	  **cells;			/* row-major, ncols per row */
	size_t		n, cap;
} table;

/*
 * A copy of s fit for one cell of a fitted table (xmalloc): its first line,
 * at most TABLE_CELL_MAX characters, "..." marking any cut, control
 * characters escaped as \xNN.
 */
char *table_clip(const char *s);

/* Add the next cell (row by row), printf-style, clipped by table_clip. */
void table_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Append the table to out: the header and the rows, columns two spaces
 * apart, each as wide as its widest cell in characters, the last one not
 * padded. Then empty it, ready for new rows.
 */
void table_flush(table *t, buf *out);

/*
 * Append one row of fixed-width columns to out, one space apart: each cell
 * but the last padded with spaces to widths[i] bytes (a longer cell pushes
 * the rest on), then a newline. Cells are taken as they are.
 */
void table_row(buf *out, int n, const int *widths, const char *const *cells);

#endif
