/*
 * term — what text for people may assume of where it goes: whether to
 * colour it, how wide to make it, and the SGR codes of its few styles.
 * Decided here once, from the file descriptor and NO_COLOR / COLUMNS, so
 * that no command grows its own isatty rules. Knows nothing of tables.
 */
#ifndef CRONQ_TERM_H
#define CRONQ_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

typedef enum term_style {
	TERM_PLAIN = 0,
	TERM_BOLD,
	TERM_DIM,
	TERM_RED,
	TERM_GREEN,
	TERM_YELLOW,
	TERM_CYAN,
} term_style;

/* Ends every styled span. */
#define TERM_RESET "\033[0m"

/*
 * Whether text written to fd may carry colour: fd is a terminal and
 * NO_COLOR is unset or empty (no-color.org: any other value turns it off).
 */
bool term_colour(int fd);

/*
 * How many columns text written to fd should fit in: the terminal's width
 * (TIOCGWINSZ) when fd is one that knows it, else COLUMNS when it is a
 * positive number, else 0: no limit (a pipe gets whole lines).
 */
size_t term_columns(int fd);

/* The SGR sequence that starts style s ("" for TERM_PLAIN). */
const char *term_sgr(term_style s);

/* Append text to out in style s when colour is on (then reset), else as it is. */
void term_paint(buf *out, bool colour, term_style s, const char *text);

/* Display width of s in characters, SGR sequences (ESC [ … m) not counted. */
size_t term_width(const char *s);

/*
 * Cut every line of out from byte from on that is wider than width
 * (term_width) to width characters, "..." marking the cut (and a reset
 * when it falls inside a styled span). Lines are never wrapped. width 0:
 * nothing changes.
 */
void term_fit(buf *out, size_t from, size_t width);

#endif
