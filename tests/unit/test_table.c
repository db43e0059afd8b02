/*
 * Unit tests of the text for people: utf8_clip (both ways a line is cut:
 * cells in characters, results in bytes), utf8_width, util/term (widths
 * that skip SGR codes, lines cut to a width), and lib/report/table (cells
 * clipped and escaped, columns sized in characters, right alignment,
 * shrinking to a width, colour, CSV quoting).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/term.h"
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
	CHECK(utf8_width("\xc3\xa9t\xc3\xa9 \xe2\x82\xac") == 5, "width counts characters, not bytes");
	/* Terminal columns: wide characters take two, combining marks none. */
	CHECK(utf8_width("\xf0\x9f\x98\x80") == 2, "an emoji takes two columns");
	CHECK(utf8_width("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e") == 6, "three CJK characters take six");
	CHECK(utf8_width("\xea\xb0\x80\xef\xbc\xa1") == 4, "Hangul and a fullwidth letter take two each");
	CHECK(utf8_width("e\xcc\x81") == 1, "e and a combining acute accent take one");
	CHECK(utf8_width("a\xe2\x80\x8d" "b") == 2, "a zero-width joiner takes none");
	CHECK(utf8_width("\xff") == 1, "a byte that is not UTF-8 takes one (it is shown escaped)");
	{
		/* 日本語テキスト (14 columns) into 8: 日本 and "..." (7), never half a character */
		char *got = utf8_clip("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88", 8, 0);

		CHECK(strcmp(got, "\xe6\x97\xa5\xe6\x9c\xac...") == 0 && utf8_width(got) <= 8,
			  "clip of wide characters counts columns: got [%s]", got);
		free(got);
	}
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
	table t = {.ncols = 3, .head = head, .right = 0x02};
	table_mode plain = TABLE_MODE_PLAIN;
	buf out = BUF_INIT;

	table_cell(&t, "%s", "alpha");
	table_cell(&t, "%d", 7);
	table_cell(&t, "%s", "x");
	table_cell(&t, "%s", "\xc3\xa9t\xc3\xa9");	/* 3 characters, 5 bytes */
	table_cell(&t, "%d", 1234);
	table_cell(&t, "%s", "last\tcolumn");
	table_flush(&t, &out, &plain);
	CHECK(strcmp(buf_str(&out),
				 "NAME      N  NOTE\n"
				 "alpha     7  x\n"
				 "\xc3\xa9t\xc3\xa9    1234  last column\n") == 0, "fitted table:\n%s", buf_str(&out));
	CHECK(t.n == 0 && t.cells == NULL, "flushed table is empty");
	buf_reset(&out);
	table_flush(&t, &out, &plain);
	CHECK(strcmp(buf_str(&out), "NAME  N  NOTE\n") == 0, "no rows: the header alone: [%s]", buf_str(&out));
	buf_free(&out);
}

/* The widths table_fit leaves, from widths and floors, for a limit. */
static const struct {
	size_t		width[4], floor[4];
	unsigned	shrink;
	size_t		gap, limit;
	size_t		want[4], total;
} fits[] = {
	/* fits already: nothing moves */
	{{10, 5, 20, 3}, {8, 5, 8, 3}, 0x5, 2, 80, {10, 5, 20, 3}, 44},
	/* the widest shrinkable column gives first, then both in turn */
	{{10, 5, 20, 3}, {8, 5, 8, 3}, 0x5, 2, 40, {10, 5, 16, 3}, 40},
	{{10, 5, 20, 3}, {8, 5, 8, 3}, 0x5, 2, 28, {8, 5, 8, 3}, 30},
	{{10, 5, 20, 3}, {8, 5, 8, 3}, 0x5, 2, 31, {8, 5, 9, 3}, 31},
	/* a column not marked never shrinks, whatever its width */
	{{40, 5, 10, 3}, {8, 5, 8, 3}, 0x4, 2, 40, {40, 5, 8, 3}, 62},
	/* floors stop it: the total stays over the limit */
	{{10, 10, 0, 0}, {9, 9, 0, 0}, 0x3, 1, 5, {9, 9, 0, 0}, 19},
};

static void
test_fit(void)
{
	for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
		size_t w[4];
		int ncols = fits[i].width[3] || fits[i].floor[3] ? 4 : 2;
		size_t total;

		memcpy(w, fits[i].width, sizeof w);
		total = table_fit(w, fits[i].floor, ncols, fits[i].shrink, fits[i].gap, fits[i].limit);
		CHECK(total == fits[i].total && memcmp(w, fits[i].want, sizeof(size_t) * (size_t) ncols) == 0,
			  "fit %zu: got %zu %zu %zu %zu = %zu, want %zu %zu %zu %zu = %zu", i, w[0], w[1], w[2], w[3],
			  total, fits[i].want[0], fits[i].want[1], fits[i].want[2], fits[i].want[3], fits[i].total);
	}
}

/* Every line of s at most width characters (SGR codes not counted). */
static bool
lines_within(const char *s, size_t width)
{
	char *copy = strdup(s), *save = NULL;
	bool ok = true;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (term_width(line) > width)
			ok = false;
	free(copy);
	return ok;
}

static void
test_shrunk(void)
{
	static const char *const head[] = {"ID", "QUEUE", "COUNT", "ERROR"};
	table t = {.ncols = 4, .head = head, .right = 0x5, .shrink = 0xA};
	table_mode narrow = {TABLE_TEXT, false, 30}, colour = {TABLE_TEXT, true, 30};
	buf out = BUF_INIT, plain = BUF_INIT;

	for (int pass = 0; pass < 2; pass++) {
		table_cell(&t, "%d", 1);
		table_cell(&t, "%s", "\xc3\xbc\xc3\xb1\xc3\xaf\xc3\xa7\xc3\xb8\xc3\xb0\xc3\xa9-queue");	/* 13 characters */
		table_cell(&t, "%d", 12345);
		table_cell(&t, "%s", "it broke, badly, again and again");
		table_style(&t, TERM_RED);
		table_cell(&t, "%d", 22);
		table_cell(&t, "%s", "q");
		table_cell(&t, "%d", 0);
		table_cell(&t, "%s", "-");
		table_flush(&t, pass == 0 ? &out : &plain, pass == 0 ? &narrow : &colour);
	}
	CHECK(strcmp(buf_str(&out),
				 "ID  QUEUE     COUNT  ERROR\n"
				 " 1  \xc3\xbc\xc3\xb1\xc3\xaf\xc3\xa7\xc3\xb8...  12345  it bro...\n"
				 "22  q             0  -\n") == 0, "shrunk to 30 columns, in characters:\n%s", buf_str(&out));
	CHECK(lines_within(buf_str(&out), 30), "no line over 30 columns:\n%s", buf_str(&out));
	CHECK(strstr(buf_str(&plain), "\033[1mQUEUE\033[0m") && strstr(buf_str(&plain), "\033[31mit bro...\033[0m"),
		  "colour: a bold header, a red cell: %s", buf_str(&plain));
	CHECK(lines_within(buf_str(&plain), 30) && term_width(buf_str(&plain)) == utf8_width(buf_str(&out)),
		  "colour codes take no width");
	buf_free(&out);
	buf_free(&plain);
}

/* Counts under long headers: at a narrow width the headers are abbreviated. */
static void
test_abbreviated(void)
{
	static const char *const head[] = {"QUEUE", "SUCCEEDED", "CANCELLED", "DEAD"};
	table t = {.ncols = 4, .head = head, .right = 0xE, .shrink = 0x1};
	table_mode narrow = {TABLE_TEXT, false, 22}, narrower = {TABLE_TEXT, false, 12};
	buf out = BUF_INIT;

	for (int pass = 0; pass < 2; pass++) {
		table_cell(&t, "%s", "default");
		table_cell(&t, "%d", 120);
		table_cell(&t, "%d", 0);
		table_cell(&t, "%d", 7);
		table_flush(&t, &out, pass == 0 ? &narrow : &narrower);
	}
	CHECK(strcmp(buf_str(&out),
				 "QUEUE   SUC. CAN. DEAD\n"
				 "default  120    0    7\n"
				 "QUEUE   S...\n"
				 "default  ...\n") == 0,
		  "headers abbreviated to fit 22 columns; at 12 lines are cut:\n%s", buf_str(&out));
	buf_free(&out);
}

static const struct {
	const char *in, *want;
} csv_fields[] = {
	{"plain", "plain"},
	{"", ""},
	{"\xc3\xa9t\xc3\xa9 x", "\xc3\xa9t\xc3\xa9 x"},
	{"a,b", "\"a,b\""},
	{"say \"hi\"", "\"say \"\"hi\"\"\""},
	{"\"", "\"\"\"\""},
	{"two\nlines", "\"two\nlines\""},
	{"cr\r", "cr "},
	{"tab\tgoes", "tab goes"},
	{"esc \x1b[2J, c1 \xc2\x9b, rlo \xe2\x80\xae", "\"esc \\x1b[2J, c1 \\x9b, rlo \\u202e\""},
	/* what a spreadsheet would run as a formula is shown as text; numbers and "-" are not */
	{"=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""},
	{"+1+2", "'+1+2"},
	{"-2+3", "'-2+3"},
	{"@SUM(A1)", "'@SUM(A1)"},
	{"-cmd", "'-cmd"},
	{"+", "'+"},
	{"-5", "-5"},
	{"+7", "+7"},
	{"-1.25", "-1.25"},
	{"-", "-"},
	{"a=b", "a=b"},
};

static void
test_csv(void)
{
	static const char *const head[] = {"ID", "OLDEST DUE", "MAX-RUNNING"};
	table t = {.ncols = 3, .head = head, .shrink = 0x2};
	table_mode csv = {TABLE_CSV, true, 10};
	buf out = BUF_INIT;
	char long_value[200];

	for (size_t i = 0; i < sizeof csv_fields / sizeof csv_fields[0]; i++) {
		buf_reset(&out);
		table_csv_field(&out, csv_fields[i].in);
		CHECK(strcmp(buf_str(&out), csv_fields[i].want) == 0, "csv field %zu: got [%s], want [%s]", i,
			  buf_str(&out), csv_fields[i].want);
	}
	memset(long_value, 'v', sizeof long_value - 1);
	long_value[sizeof long_value - 1] = '\0';
	buf_reset(&out);
	table_cell(&t, "%d", 1);
	table_cell(&t, "%s", long_value);
	table_style(&t, TERM_RED);
	table_cell(&t, "%s", "x, \"y\"\nz");
	table_flush(&t, &out, &csv);
	CHECK(strncmp(buf_str(&out), "id,oldest_due,max_running\r\n1,vvv", 32) == 0 &&
		  strstr(buf_str(&out), long_value) && strstr(buf_str(&out), ",\"x, \"\"y\"\"\nz\"\r\n") &&
		  !strchr(buf_str(&out), '\033'), "a CSV table: no colour, no clipping, fields quoted:\n%s", buf_str(&out));
	buf_free(&out);
}

static void
test_term(void)
{
	buf b = BUF_INIT;

	CHECK(term_width("\033[1mab\033[0m\xc3\xa9") == 3, "term_width skips SGR codes");
	buf_puts(&b, "keep\n0123456789\n\033[31m0123456789abc\033[0m\nshort");
	term_fit(&b, 5, 10);
	CHECK(strcmp(buf_str(&b), "keep\n0123456789\n\033[31m0123456\033[0m...\nshort") == 0,
		  "term_fit cuts long lines only, closing a style: [%s]", buf_str(&b));
	buf_reset(&b);
	buf_puts(&b, "0123456789abc");
	term_fit(&b, 0, 0);
	CHECK(strcmp(buf_str(&b), "0123456789abc") == 0, "term_fit to 0: no limit");
	term_fit(&b, 0, 8);
	CHECK(strcmp(buf_str(&b), "01234...") == 0, "term_fit: [%s]", buf_str(&b));
	buf_free(&b);
}

int
main(void)
{
	test_clip();
	test_cell();
	test_fitted();
	test_fit();
	test_shrunk();
	test_abbreviated();
	test_csv();
	test_term();
	return check_done("table");
}
