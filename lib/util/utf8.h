/*
 * utf8 — make arbitrary bytes (a program's output) storable as PostgreSQL
 * text: invalid UTF-8 sequences become U+FFFD and NUL bytes are dropped;
 * and make text safe to show on a terminal.
 */
#ifndef CRONQ_UTF8_H
#define CRONQ_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of s[0..len) without a multibyte character that the end
 * cuts short (len itself when the last character is whole). */
size_t utf8_cut(const char *s, size_t len);

/* Whether the NUL-terminated s is well-formed UTF-8 (no overlong forms,
 * surrogates or code points above U+10FFFF). */
bool utf8_valid(const char *s);

/* A new NUL-terminated string (xmalloc) holding the cleaned bytes. */
char *utf8_sanitize(const char *s, size_t len);

/*
 * The code point at s when it is one of the invisible format marks a name
 * may not hold and a terminal is not shown: U+200B-200F (zero-width
 * spaces and joiners, direction marks), U+202A-202E and U+2066-2069
 * (bidirectional embeddings, overrides and isolates); else 0.
 */
uint32_t utf8_format_mark(const char *s);

/*
 * The code point of the character at s (at most len bytes) when a reader
 * is not shown it, or shown it as something else: the format marks above,
 * U+00AD (soft hyphen), U+034F, U+061C, U+180E, U+2028-202E (line and paragraph separators too),
 * U+2060-206F, U+FEFF, U+FFF9-FFFB, the Hangul fillers (U+115F, U+1160,
 * U+3164, U+FFA0) and the tag characters (U+E0000-E007F); else 0. *n
 * gets its length in bytes.
 */
uint32_t utf8_invisible(const char *s, size_t len, size_t *n);

/*
 * A new string (xmalloc): s fit for a terminal, cron mail or a log line,
 * whatever a job wrote in it. Control characters (C0, DEL, and C1 as UTF-8,
 * which some terminals obey) and bytes that are not UTF-8 (a lone 0x9b is
 * an 8-bit CSI) become \xNN, so no text can move the cursor,
 * recolour or retitle the reader's terminal, or forge a line; the
 * characters a reader is not shown (utf8_invisible), which hide
 * characters, break lines or make a terminal that honours them show text
 * in another order, become \uNNNN (\UNNNNNNNN past U+FFFF).
 * Tabs become spaces; line breaks too unless keep_lines.
 */
char *utf8_printable(const char *s, bool keep_lines);

/*
 * The columns a terminal gives the character at s (at most len bytes): 0
 * (a combining mark, a zero-width joiner), 1, or 2 (East Asian wide and
 * fullwidth characters, emoji); its length in bytes in *n (1 for a byte
 * that is not UTF-8). An approximation of wcwidth() that needs no locale.
 */
size_t utf8_columns(const char *s, size_t len, size_t *n);

/* The columns UTF-8 text takes on a terminal (utf8_columns of each character). */
size_t utf8_width(const char *s);

/* How utf8_clip measures s, and what it does with line breaks. */
enum {
	/* width counts bytes and "..." comes after them; otherwise width counts
	 * terminal columns (utf8_columns), "..." included (width at least 3) */
	UTF8_CLIP_BYTES = 1 << 0,
	/* only the first line is kept, "..." marking the others; otherwise line
	 * breaks and tabs become spaces */
	UTF8_CLIP_FIRST_LINE = 1 << 1,
};

/*
 * A new string (xmalloc): s on one line, at most width long (flags), cut
 * on a character boundary with "..." marking any cut. In bytes, a cut also
 * drops the last multibyte character before it. Not made printable: pass
 * the result (or the text it ends) to utf8_printable.
 */
char *utf8_clip(const char *s, size_t width, unsigned flags);

#endif
