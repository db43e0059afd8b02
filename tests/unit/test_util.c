/* Unit tests of small utilities: buf (strings at every moment, array and
 * COPY escaping), utf8_sanitize (what a program prints becomes text) and
 * the json member readers (absent or mistyped members read as defaults),
 * utf8_printable (what a job wrote, shown on a terminal). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pg/literal.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/utf8.h"

static void
sanitize_case(const char *in, size_t len, const char *want)
{
	char *got = utf8_sanitize(in, len);

	CHECK(strcmp(got, want) == 0, "sanitize of %zu bytes: got [%s], want [%s]", len, got, want);
	free(got);
}

static void
printable_case(const char *in, bool keep_lines, const char *want)
{
	char *got = utf8_printable(in, keep_lines);

	CHECK(strcmp(got, want) == 0, "printable of [%s]: got [%s], want [%s]", in, got, want);
	free(got);
}

int
main(void)
{
	buf b = BUF_INIT;
	json_t *o;
	char *s;

	/* A buffer is a string even when only reserved (the bug exec output hit). */
	buf_reserve(&b, 100);
	CHECK(b.data != NULL && b.data[0] == '\0', "reserved buffer must be an empty string");
	s = buf_steal(&b);
	CHECK(strcmp(s, "") == 0, "stolen empty buffer must be \"\"");
	free(s);
	s = buf_steal(&b);
	CHECK(strcmp(s, "") == 0, "never-used buffer steals as \"\"");
	free(s);

	pg_array_begin(&b);
	pg_array_text(&b, "a\"b\\c");
	pg_array_text(&b, NULL);
	pg_array_raw(&b, "42");
	pg_array_text(&b, "");
	pg_array_end(&b);
	CHECK(strcmp(buf_str(&b), "{\"a\\\"b\\\\c\",NULL,42,\"\"}") == 0, "array literal: %s", buf_str(&b));
	buf_reset(&b);
	pg_array_begin(&b);
	pg_array_end(&b);
	CHECK(strcmp(buf_str(&b), "{}") == 0, "empty array literal: %s", buf_str(&b));
	buf_reset(&b);
	pg_copy_field(&b, "t\tn\nr\rb\\");
	buf_putc(&b, '|');
	pg_copy_field(&b, NULL);
	CHECK(strcmp(buf_str(&b), "t\\tn\\nr\\rb\\\\|\\N") == 0, "COPY escaping: %s", buf_str(&b));
	buf_reset(&b);
	{
		const char *const items[] = {"queue a", "b,\"c\""};

		s = pg_text_array(items, 2);
		CHECK(s && strcmp(s, "{\"queue a\",\"b,\\\"c\\\"\"}") == 0, "text array: %s", s ? s : "NULL");
		free(s);
		CHECK(pg_text_array(items, 0) == NULL, "no items: no array (NULL, any)");
	}
	buf_printf(&b, "%d-%s", 7, "x");
	CHECK(strcmp(buf_str(&b), "7-x") == 0 && b.len == 3, "printf: %s", buf_str(&b));
	buf_free(&b);

	sanitize_case("", 0, "");
	sanitize_case("plain text\n", 11, "plain text\n");
	sanitize_case("caf\xc3\xa9", 5, "caf\xc3\xa9");
	sanitize_case("\xe2\x82\xac \xf0\x9f\x98\x80", 8, "\xe2\x82\xac \xf0\x9f\x98\x80");
	sanitize_case("a\0b", 3, "ab");
	sanitize_case("\xa0tail", 5, "\xef\xbf\xbdtail");
	sanitize_case("cut \xe2\x82", 6, "cut \xef\xbf\xbd\xef\xbf\xbd");
	sanitize_case("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
	sanitize_case("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	sanitize_case("\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	sanitize_case("\xff\xfe", 2, "\xef\xbf\xbd\xef\xbf\xbd");

	/* What a job wrote, shown on a terminal: no control character passes. */
	printable_case("plain caf\xc3\xa9", false, "plain caf\xc3\xa9");
	printable_case("a\nb\r\tc", false, "a b  c");
	printable_case("a\nb\r\tc", true, "a\nb  c");
	printable_case("\x1b]0;title\x07\x1b[31mred", false, "\\x1b]0;title\\x07\\x1b[31mred");
	printable_case("del\x7f nul-less \x01\x1f", false, "del\\x7f nul-less \\x01\\x1f");
	printable_case("c1 \xc2\x9b" "31m \xc2\xa0nbsp", false, "c1 \\x9b31m \xc2\xa0nbsp");
	printable_case("\\x1b stays text", false, "\\x1b stays text");
	CHECK(utf8_cut("ab\xc3\xa9", 4) == 4, "a whole character stays");
	CHECK(utf8_cut("ab\xc3\xa9", 3) == 2, "half of \xc3\xa9 goes");
	CHECK(utf8_cut("a\xf0\x9f\x98\x80", 4) == 1, "3 of 4 bytes go");
	CHECK(utf8_cut("a\xf0\x9f\x98\x80", 5) == 5, "4 of 4 stay");
	CHECK(utf8_cut("abc", 3) == 3 && utf8_cut("", 0) == 0, "ASCII stays");
	CHECK(utf8_cut("a\x80\x80\x80\x80", 5) == 5, "stray continuation bytes are left to sanitize");
	/* Bytes that are not UTF-8 (a job that set client_encoding to LATIN1). */
	printable_case("8-bit csi \x9b" "31m caf\xe9", false, "8-bit csi \\x9b31m caf\\xe9");
	printable_case("cut \xe2\x82", false, "cut \\xe2\\x82");
	printable_case("\xe2\x82\xac \xf0\x9f\x98\x80 ok", false, "\xe2\x82\xac \xf0\x9f\x98\x80 ok");
	/* format marks: shown as escapes, not obeyed (a right-to-left override reorders a name) */
	printable_case("job \xe2\x80\xae" "cba\xe2\x80\xac end", false, "job \\u202ecba\\u202c end");
	printable_case("de\xe2\x80\x8b" "fault \xe2\x81\xa6x\xe2\x81\xa9", false, "de\\u200bfault \\u2066x\\u2069");
	printable_case("\xe2\x80\x8a \xe2\x80\x90 \xe2\x80\xaf \xe2\x81\x9f", false,
				   "\xe2\x80\x8a \xe2\x80\x90 \xe2\x80\xaf \xe2\x81\x9f");
	/* and the other characters a reader is not shown, or shown as a line break */
	printable_case("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xef\xbb\xbf" "d\xd8\x9c" "e\xe3\x85\xa4" "f", false,
				   "a\\u2028b\\u2029c\\ufeffd\\u061ce\\u3164f");
	printable_case("tag\xf3\xa0\x81\x81 \xe2\x81\xa0\xe2\x81\xa4\xe2\x81\xaf", false,
				   "tag\\U000e0041 \\u2060\\u2064\\u206f");
	{
		size_t n;

		CHECK(utf8_invisible("\xf3\xa0\x81\x81", 4, &n) == 0xe0041 && n == 4 &&
			  utf8_invisible("\xef\xbb\xbf", 3, &n) == 0xfeff && n == 3 &&
			  utf8_invisible("\xd8\x9c", 2, &n) == 0x61c && n == 2 &&
			  utf8_invisible("\xe2\x80\xaf", 3, &n) == 0 && utf8_invisible("a", 1, &n) == 0 &&
			  utf8_invisible("\xef\xbb", 2, &n) == 0, "invisible characters' code points");
	}
	{
		/* JSON: the same value, C1 and invisible characters as \u escapes */
		char *safe = cq_json_safe("{\"e\":\"x\xc2\x9b" "1\xe2\x80\xae" "2\xf3\xa0\x81\x81" "3\xc3\xa9\"}");

		CHECK(strcmp(safe, "{\"e\":\"x\\u009b1\\u202e2\\udb40\\udc413\xc3\xa9\"}") == 0, "cq_json_safe escapes");
		free(safe);
	}
	CHECK(utf8_format_mark("\xe2\x80\x8f") == 0x200f && utf8_format_mark("\xe2\x81\xa9") == 0x2069 &&
		  utf8_format_mark("\xe2\x80\x8a") == 0 && utf8_format_mark("\xe2") == 0, "format marks' code points");

	o = json_pack("{s:s, s:i, s:n, s:s}", "name", "nightly", "count", 42, "none", "text", "7");

	CHECK(strcmp(cq_json_str(o, "name", "-"), "nightly") == 0, "string member");
	CHECK(strcmp(cq_json_str(o, "missing", "-"), "-") == 0, "absent string member reads as the default");
	CHECK(strcmp(cq_json_str(o, "none", "-"), "-") == 0, "null string member reads as the default");
	CHECK(strcmp(cq_json_str(o, "count", "-"), "-") == 0, "an integer is not a string");
	CHECK(cq_json_str(NULL, "name", NULL) == NULL, "no object: the default");
	CHECK(cq_json_int(o, "count") == 42, "integer member");
	CHECK(cq_json_int(o, "text") == 0, "a string is not an integer");
	CHECK(cq_json_int(o, "missing") == 0 && cq_json_int(NULL, "count") == 0, "absent reads as 0");
	json_decref(o);
	return check_done("util");
}
