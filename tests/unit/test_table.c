/*
 * Unit tests of the text for people: utf8_clip (both ways a line is cut:
 * cells in characters, list errors in bytes), utf8_width, and
 * lib/report/table (cells clipped and escaped, columns fitted in
 * characters, right alignment, fixed-width rows).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/utf8.h"

static const struct {
	const char *in;
	size_t		width;
	unsigned	flags;
	const char *want;
} clips[] = {
	/* characters, "..." included, first line only */
	{"short", 10, UTF8_CLIP_FIRST_LINE, "short"},
	{"exactly10!", 10, UTF8_CLIP_FIRST_LINE, "exactly10!"},
	{"eleven char", 10, UTF8_CLIP_FIRST_LINE, "eleven ..."},
	{"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10,
	 UTF8_CLIP_FIRST_LINE, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"},
	{"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10,
	 UTF8_CLIP_FIRST_LINE, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9..."},
	{"first\nsecond", 10, UTF8_CLIP_FIRST_LINE, "first..."},
	{"first\r\nsecond", 10, UTF8_CLIP_FIRST_LINE, "first..."},
	{"ninechars\nmore", 10, UTF8_CLIP_FIRST_LINE, "ninecha..."},
	{"sevench\nmore", 10, UTF8_CLIP_FIRST_LINE, "sevench..."},
	{"", 10, UTF8_CLIP_FIRST_LINE, ""},
	/* characters, line breaks become spaces */
	{"a\nb\tc", 10, 0, "a b c"},
	/* bytes, "..." after them, line breaks and tabs become spaces */
	{"abcdef", 6, UTF8_CLIP_BYTES, "abcdef"},
	{"abcdefg", 6, UTF8_CLIP_BYTES, "abcdef..."},
	{"a\nb\r\tc", 10, UTF8_CLIP_BYTES, "a b  c"},
	{"abcd\xc3\xa9xyz", 5, UTF8_CLIP_BYTES, "abcd..."},	/* half of é goes */
	{"abcd\xc3\xa9xyz", 6, UTF8_CLIP_BYTES, "abcd..."},	/* a whole é before the cut goes too */
	{"abcd\xe2\x82\xac", 6, UTF8_CLIP_BYTES, "abcd..."},	/* two of three bytes of € */
	{"abcde\xe2\x82\xac", 7, UTF8_CLIP_BYTES, "abcde..."},
	{"", 6, UTF8_CLIP_BYTES, ""},
};

static void
test_clip(void)
{
	for (size_t i = 0; i < sizeof clips / sizeof clips[0]; i++) {
		char *got = utf8_clip(clips[i].in, clips[i].width, clips[i].flags);

		CHECK(strcmp(got, clips[i].want) == 0, "clip %zu of [%s] to %zu: got [%s], want [%s]", i,
			  clips[i].in, clips[i].width, got, clips[i].want);
		free(got);
	}
	CHECK(utf8_width("") == 0 && utf8_width("abc") == 3, "width of ASCII");
	CHECK(utf8_width("\xc3\xa9t\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80") == 6, "width counts characters");
}

static void
test_cell(void)
{
	char long_name[100], *got;

	memset(long_name, 'q', 60);
	long_name[60] = '\0';
	got = table_clip(long_name);
	CHECK(strlen(got) == TABLE_CELL_MAX && strcmp(got + TABLE_CELL_MAX - 3, "...") == 0,
		  "a long cell is cut to %d characters with ...: [%s]", TABLE_CELL_MAX, got);
	free(got);
	got = table_clip("boom\x1b[2J\nsecond line");
	CHECK(strcmp(got, "boom\\x1b[2J...") == 0, "first line, escaped: [%s]", got);
	free(got);
}

static void
test_fitted(void)
{
	static const char *const head[] = {"NAME", "N", "NOTE"};
	table t = {3, head, 0x02, NULL, 0, 0};
	buf out = BUF_INIT;

	table_cell(&t, "%s", "alpha");
	table_cell(&t, "%d", 7);
	table_cell(&t, "%s", "x");
	table_cell(&t, "%s", "\xc3\xa9t\xc3\xa9");	/* 3 characters, 5 bytes */
	table_cell(&t, "%d", 1234);
	table_cell(&t, "%s", "last\tcolumn");
	table_flush(&t, &out);
	CHECK(strcmp(buf_str(&out),
				 "NAME      N  NOTE\n"
				 "alpha     7  x\n"
				 "\xc3\xa9t\xc3\xa9    1234  last column\n") == 0, "fitted table:\n%s", buf_str(&out));
	CHECK(t.n == 0 && t.cells == NULL, "flushed table is empty");
	buf_reset(&out);
	table_flush(&t, &out);
	CHECK(strcmp(buf_str(&out), "NAME  N  NOTE\n") == 0, "no rows: the header alone: [%s]", buf_str(&out));
	buf_free(&out);
}

static void
test_row(void)
{
	static const int widths[] = {4, 3, 0};
	const char *const a[] = {"ID", "ST", "ERROR"};
	const char *const b[] = {"12345", "x", ""};
	buf out = BUF_INIT;

	table_row(&out, 3, widths, a);
	table_row(&out, 3, widths, b);
	CHECK(strcmp(buf_str(&out), "ID   ST  ERROR\n12345 x   \n") == 0, "fixed rows: [%s]", buf_str(&out));
	buf_free(&out);
}

int
main(void)
{
	test_clip();
	test_cell();
	test_fitted();
	test_row();
	return check_done("table");
}
