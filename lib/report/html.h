/*
 * html — the pieces of an HTML page that must be right whatever the data:
 * text escaped for an element or a quoted attribute, and the geometry of a
 * timeline chart (where each bucket's column stands, how tall each of its
 * stacked marks is). Knows nothing of cronq's documents: status_html does.
 */
#ifndef CRONQ_HTML_H
#define CRONQ_HTML_H

#include <stdint.h>

#include "util/buf.h"

/*
 * Append s to out as HTML text, fit for element content and for an
 * attribute value in double or single quotes: & < > " ' as character
 * references, control characters other than tab, newline and carriage
 * return (which HTML forbids) as U+FFFD. Never markup, whatever s holds.
 */
void html_escape(buf *out, const char *s);

/*
 * Bucket i of n across a chart width wide: its left edge *x and its width
 * *w, one unit narrower than its share so that columns stay apart (at
 * least 1). The columns tile the width in order, without overlap.
 */
void html_column(int n, int width, int i, int *x, int *w);

/*
 * Heights of the k marks stacked in one column, for counts[0..k) when the
 * tallest column's total is max and the chart is height tall: each mark in
 * proportion, a nonzero count never under 2 units (visible), a zero count
 * 0, the column never taller than height. max <= 0 draws nothing.
 */
void html_stack(const int64_t *counts, int k, int64_t max, int height, int *heights);

#endif
