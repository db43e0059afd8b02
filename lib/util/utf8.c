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

bool
utf8_valid(const char *s)
{
	size_t len = strlen(s), n;

	for (size_t i = 0; i < len; i += n)
		if ((n = valid_seq((const unsigned char *) s + i, len - i)) == 0)
			return false;
	return true;
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

uint32_t
utf8_format_mark(const char *s)
{
	const unsigned char *p = (const unsigned char *) s;

	/* E2 80 8B-8F, E2 80 AA-AE, E2 81 A6-A9 */
	if (p[0] != 0xe2 || !((p[1] == 0x80 && ((p[2] >= 0x8b && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae))) ||
						  (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
		return 0;
	return (uint32_t) (p[0] & 0x0f) << 12 | (uint32_t) (p[1] & 0x3f) << 6 | (p[2] & 0x3f);
}

uint32_t
utf8_invisible(const char *s, size_t len, size_t *n)
{
	const unsigned char *p = (const unsigned char *) s;
	uint32_t cp;

	*n = valid_seq(p, len);
	if (*n < 2)
		return 0;
	cp = *n == 2 ? p[0] & 0x1F : *n == 3 ? p[0] & 0x0F : p[0] & 0x07;
	for (size_t i = 1; i < *n; i++)
		cp = (cp << 6) | (p[i] & 0x3F);
	if (cp == 0x00AD || cp == 0x034F || cp == 0x061C || cp == 0x115F || cp == 0x1160 || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) ||
		(cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp == 0x3164 || cp == 0xFEFF ||
		cp == 0xFFA0 || (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F))
		return cp;
	return 0;
}

char *
utf8_printable(const char *s, bool keep_lines)
{
	size_t len = strlen(s);
	char *out = xmalloc(len * 5 + 1), *o = out;
	const unsigned char *end = (const unsigned char *) s + len;

	for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
		size_t n;
		uint32_t cp;

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
		else if ((cp = utf8_invisible((const char *) p, (size_t) (end - p), &n)) != 0) {
			o += sprintf(o, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", (unsigned) cp);
			p += n - 1;
		} else {
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

typedef struct cp_range {
	uint32_t	lo, hi;
} cp_range;

/*
 * Code points a terminal shows in no column: combining marks, zero-width
 * spaces and joiners, variation selectors. Not every one of Unicode's
 * (Mn/Me/Cf), but those names and errors hold in practice.
 */
static const cp_range zero_width[] = {
	{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
	{0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
	{0x200B, 0x200F}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
	{0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

/* Code points shown in two columns: Unicode's East Asian Wide and Fullwidth, and emoji. */
static const cp_range double_width[] = {
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4}, {0x17000, 0x18AFF}, {0x1B000, 0x1B2FF},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
	{0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB},
	{0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static bool
in_ranges(uint32_t cp, const cp_range *r, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {			/* the ranges are sorted and apart */
		size_t mid = (lo + hi) / 2;

		if (cp < r[mid].lo)
			hi = mid;
		else if (cp > r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

size_t
utf8_columns(const char *s, size_t len, size_t *n)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t k = valid_seq(p, len);
	uint32_t cp;

	if (k <= 1) {
		*n = 1;					/* ASCII, or a byte that is not UTF-8 (shown escaped) */
		return 1;
	}
	*n = k;
	cp = p[0] & (k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07);
	for (size_t i = 1; i < k; i++)
		cp = (cp << 6) | (p[i] & 0x3F);
	if (in_ranges(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
		return 0;
	return in_ranges(cp, double_width, sizeof double_width / sizeof double_width[0]) ? 2 : 1;
}

size_t
utf8_width(const char *s)
{
	size_t w = 0, len = strlen(s), n;

	for (size_t i = 0; i < len; i += n)
		w += utf8_columns(s + i, len - i, &n);
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
		/* at: where the characters that fit room columns end */
		size_t cols = 0, room = width < 3 ? 0 : width - 3, at = 0, n;

		for (size_t i = 0; i < len; i += n) {
			size_t c = utf8_columns(s + i, len - i, &n);

			if (cols + c <= room)
				at = i + n;
			cols += c;
		}
		keep = len;
		cut = more;
		if (cols > width || (more && cols > room))
			keep = at;
	}
	for (size_t i = 0; i < keep; i++)
		buf_putc(&out, s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i]);
	if (cut || keep < len)
		buf_puts(&out, "...");
	return buf_steal(&out);
}
