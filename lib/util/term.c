/* term — see term.h. */
#include "util/term.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/utf8.h"

bool
term_colour(int fd)
{
	const char *no = getenv("NO_COLOR");

	return isatty(fd) && (no == NULL || no[0] == '\0');
}

size_t
term_columns(int fd)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	char *end;
	long n;

	/* A pseudo-terminal nobody sized (script(1), some CI runners) says 0. */
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols == NULL || cols[0] < '0' || cols[0] > '9')
		return 0;
	n = strtol(cols, &end, 10);
	return *end == '\0' && n > 0 && n < 100000 ? (size_t) n : 0;
}

const char *
term_sgr(term_style s)
{
	switch (s) {
		case TERM_PLAIN:
			break;
		case TERM_BOLD:
			return "\033[1m";
		case TERM_DIM:
			return "\033[2m";
		case TERM_RED:
			return "\033[31m";
		case TERM_GREEN:
			return "\033[32m";
		case TERM_YELLOW:
			return "\033[33m";
		case TERM_CYAN:
			return "\033[36m";
	}
	return "";
}

void
term_paint(buf *out, bool colour, term_style s, const char *text)
{
	if (!colour || s == TERM_PLAIN) {
		buf_puts(out, text);
		return;
	}
	buf_puts(out, term_sgr(s));
	buf_puts(out, text);
	buf_puts(out, TERM_RESET);
}

/* Bytes of the escape sequence at s (ESC [ parameters final), or 0. */
static size_t
sgr_len(const char *s, size_t len)
{
	size_t i = 2;

	if (len < 2 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < len && !((unsigned char) s[i] >= 0x40 && (unsigned char) s[i] <= 0x7e))
		i++;
	return i < len ? i + 1 : len;
}

/* Display width of s[0..len): its columns (utf8_columns), escape sequences left out. */
static size_t
width_of(const char *s, size_t len)
{
	size_t w = 0, i = 0;

	while (i < len) {
		size_t n = sgr_len(s + i, len - i);

		if (n > 0) {
			i += n;
			continue;
		}
		w += utf8_columns(s + i, len - i, &n);
		i += n;
	}
	return w;
}

size_t
term_width(const char *s)
{
	return width_of(s, strlen(s));
}

/* Append line s[0..len) to out, cut to width columns when wider. */
static void
fit_line(buf *out, const char *s, size_t len, size_t width)
{
	size_t room = width > 3 ? width - 3 : width, cols = 0, i = 0;
	bool styled = false;

	if (width_of(s, len) <= width) {
		buf_append(out, s, len);
		return;
	}
	while (i < len) {
		size_t n = sgr_len(s + i, len - i);

		if (n > 0) {
			if (cols == room)
				break;			/* a style of the cut part: nothing to show */
			buf_append(out, s + i, n);
			styled = true;
			i += n;
			continue;
		}
		size_t c = utf8_columns(s + i, len - i, &n);

		if (cols + c > room)
			break;
		cols += c;
		buf_append(out, s + i, n);
		i += n;
	}
	if (styled)
		buf_puts(out, TERM_RESET);
	if (width > 3)
		buf_puts(out, "...");
}

void
term_fit(buf *out, size_t from, size_t width)
{
	buf fitted = BUF_INIT;
	const char *p, *end;

	if (width == 0 || from >= out->len)
		return;
	p = out->data + from;
	end = out->data + out->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		const char *eol = nl ? nl : end;

		fit_line(&fitted, p, (size_t) (eol - p), width);
		if (nl)
			buf_putc(&fitted, '\n');
		p = nl ? nl + 1 : end;
	}
	out->len = from;
	out->data[from] = '\0';
	buf_append(out, buf_str(&fitted), fitted.len);
	buf_free(&fitted);
}
