/* utf8 — see utf8.h. Follows the Unicode "maximal subpart" replacement rule
 * loosely: each invalid byte becomes one U+FFFD. */
#include "util/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t
valid_seq(const unsigned char *s, size_t len)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2, cp = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3, cp = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		(cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

size_t
utf8_cut(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t start = len, need;

	/* Back to the start of the last character: at most 3 continuation bytes. */
	while (start > 0 && len - start < 4 && (p[start - 1] & 0xC0) == 0x80)
		start--;
	if (start == 0 || p[start - 1] < 0xC0)
		return len;				/* ASCII or not UTF-8 at all: nothing to cut */
	start--;
	need = p[start] >= 0xF0 ? 4 : p[start] >= 0xE0 ? 3 : 2;
	return len - start < need ? start : len;
}

char *
utf8_sanitize(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	buf b = BUF_INIT;
	size_t i = 0;

	buf_reserve(&b, len);
	while (i < len) {
		size_t n = valid_seq(p + i, len - i);

		if (n == 0) {
			buf_append(&b, "\xEF\xBF\xBD", 3);
			i++;
		} else {
			if (!(n == 1 && p[i] == 0))
				buf_append(&b, s + i, n);
			i += n;
		}
	}
	return buf_steal(&b);
}

char *
utf8_printable(const char *s, bool keep_lines)
{
	size_t len = strlen(s);
	char *out = xmalloc(len * 4 + 1), *o = out;
	const unsigned char *end = (const unsigned char *) s + len;

	for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
		size_t n;

		if (*p == '\n' && keep_lines)
			*o++ = '\n';
		else if (*p == '\n' || *p == '\r' || *p == '\t')
			*o++ = ' ';
		else if (*p < 0x20 || *p == 0x7f)
			o += sprintf(o, "\\x%02x", *p);
		else if (*p < 0x80)
			*o++ = (char) *p;
		else if ((n = valid_seq(p, (size_t) (end - p))) == 0)
			o += sprintf(o, "\\x%02x", *p);	/* not UTF-8: a lone 0x9b is a CSI too */
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			o += sprintf(o, "\\x%02x", *++p);
		else {
			memcpy(o, p, n);
			o += n;
			p += n - 1;
		}
	}
	*o = '\0';
	return out;
}

/* Whether byte c continues a multibyte character. */
static bool
is_cont(char c)
{
	return ((unsigned char) c & 0xC0) == 0x80;
}

size_t
utf8_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (!is_cont(*s))
			w++;
	return w;
}

char *
utf8_clip(const char *s, size_t width, unsigned flags)
{
	size_t len, keep;
	bool more, cut;
	buf out = BUF_INIT;

	if (flags & UTF8_CLIP_FIRST_LINE) {
		len = strcspn(s, "\r\n");
		more = s[len] != '\0';
	} else {
		len = strlen(s);
		more = false;
	}
	if (flags & UTF8_CLIP_BYTES) {
		keep = len;
		cut = more;
		if (len > width) {
			/* Never end inside a UTF-8 sequence. */
			keep = width;
			while (keep > 0 && is_cont(s[keep - 1]))
				keep--;
			if (keep > 0 && ((unsigned char) s[keep - 1] & 0xC0) == 0xC0)
				keep--;
			cut = true;
		}
	} else {
		size_t chars = 0, room = width < 3 ? 0 : width - 3, at = 0;

		for (size_t i = 0; i < len; i++) {
			if (is_cont(s[i]))
				continue;
			if (chars == room)
				at = i;
			chars++;
		}
		keep = len;
		cut = more;
		if (chars > width || (more && chars > room))
			keep = at;
	}
	for (size_t i = 0; i < keep; i++)
		buf_putc(&out, s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i]);
	if (cut || keep < len)
		buf_puts(&out, "...");
	return buf_steal(&out);
}
