/*
 * Unit tests of lib/pg/rowjson: a result row as JSON text, one row of the
 * table per column type and value (built with libpq's PQsetvalue, no
 * server), then whole rows, the cap and rowjson_is_number's grammar.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pg/rowjson.h"

/* A one-row result of n columns (names, type oids, values; NULL: SQL NULL). */
static PGresult *
make_row(int n, const char *const *names, const Oid *types, const char *const *values)
{
	PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PGresAttDesc attrs[8];

	memset(attrs, 0, sizeof attrs);
	for (int c = 0; c < n; c++) {
		attrs[c].name = (char *) names[c];
		attrs[c].typid = types[c];
		attrs[c].typlen = -1;
		attrs[c].atttypmod = -1;
	}
	PQsetResultAttrs(r, n, attrs);
	for (int c = 0; c < n; c++)
		PQsetvalue(r, 0, c, (char *) values[c], values[c] ? (int) strlen(values[c]) : -1);
	return r;
}

int
main(void)
{
	static const struct {
		Oid			type;
		const char *value;		/* NULL: SQL NULL */
		const char *json;		/* the object's one member's value */
	} values[] = {
		{23, "42", "42"},
		{21, "-7", "-7"},
		{20, "9223372036854775807", "9223372036854775807"},
		{26, "16384", "16384"},
		{701, "0.1", "0.1"},
		{701, "1e+300", "1e+300"},
		{701, "NaN", "\"NaN\""},
		{701, "-Infinity", "\"-Infinity\""},
		{700, "1.5", "1.5"},
		{1700, "1.50", "1.50"},
		{1700, "123456789012345678901234567890.000001", "123456789012345678901234567890.000001"},
		{1700, "NaN", "\"NaN\""},
		{16, "t", "true"},
		{16, "f", "false"},
		{3802, "{\"a\": [1, 2]}", "{\"a\": [1, 2]}"},
		{3802, "{\"a\": \"caf\xc3\xa9\"}", "{\"a\": \"caf\xc3\xa9\"}"},
		/* jsonb takes it, jansson does not (beyond a double): kept as text */
		{3802, "1e400", "\"1e400\""},
		/* LATIN1, the job having set its session's client_encoding */
		{3802, "{\"a\": \"caf\xe9\"}", "\"{\\\"a\\\": \\\"caf\xef\xbf\xbd\\\"}\""},
		{114, "{\"a\": \"caf\xe9\"}", "\"{\\\"a\\\": \\\"caf\xef\xbf\xbd\\\"}\""},
		{114, "{\"k\" : 1}", "{\"k\" : 1}"},
		{114, "\"a\\u0000b\"", "\"\\\"a\\\\u0000b\\\"\""},
		{114, "[1,", "\"[1,\""},
		{25, "plain", "\"plain\""},
		{25, "q\"b\\s", "\"q\\\"b\\\\s\""},
		{25, "tab\tnl\ncr\r", "\"tab\\tnl\\ncr\\r\""},
		{25, "\x01\x1f", "\"\\u0001\\u001f\""},
		{25, "caf\xc3\xa9", "\"caf\xc3\xa9\""},
		{25, "bad\xff", "\"bad\xef\xbf\xbd\""},
		{1043, "12", "\"12\""},
		{1082, "2026-11-27", "\"2026-11-27\""},
		{23, NULL, "null"},
		{3802, NULL, "null"},
	};
	static const struct {
		const char *text;
		bool		number;
	} numbers[] = {
		{"0", true}, {"-0", true}, {"12", true}, {"1.5", true}, {"1e5", true}, {"1E+5", true},
		{"-2.5e-3", true}, {"01", false}, {"+1", false}, {"1.", false}, {".5", false},
		{"1e", false}, {"NaN", false}, {"Infinity", false}, {"", false}, {"-", false}, {"1 ", false},
	};

	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		const char *names[] = {"v"};
		PGresult *r = make_row(1, names, &values[i].type, &values[i].value);
		char *got = rowjson_text(r, 0, ROWJSON_MAX);
		char *want = malloc(strlen(values[i].json) + 16);

		strcpy(want, "{\"v\": ");
		strcat(want, values[i].json);
		strcat(want, "}");
		CHECK(got && strcmp(got, want) == 0, "type %u value [%s]: want %s, got %s", values[i].type,
			  values[i].value ? values[i].value : "NULL", want, got ? got : "NULL");
		free(want);
		free(got);
		PQclear(r);
	}

	{
		const char *names[] = {"n", "name with \"quote\"", "n"};
		const Oid types[] = {23, 25, 16};
		const char *vals[] = {"3", "x", "t"};
		const char *want = "{\"n\": 3, \"name with \\\"quote\\\"\": \"x\", \"n\": true}";
		PGresult *r = make_row(3, names, types, vals);
		char *got = rowjson_text(r, 0, ROWJSON_MAX);

		CHECK(got && strcmp(got, want) == 0, "several columns, names escaped, a name twice: %s", got ? got : "NULL");
		free(got);
		got = rowjson_text(r, 0, 20);
		CHECK(got == NULL, "over the cap: NULL");
		free(got);
		got = rowjson_text(r, 0, strlen(want));
		CHECK(got && strcmp(got, want) == 0, "exactly the cap: kept (%s)", got ? got : "NULL");
		free(got);
		got = rowjson_text(r, 0, strlen(want) - 1);
		CHECK(got == NULL, "one byte over the cap: NULL");
		free(got);
		PQclear(r);
	}
	{
		const char *names[] = {"caf\xe9"};
		const Oid types[] = {23};
		const char *vals[] = {"1"};
		PGresult *r = make_row(1, names, types, vals);
		char *got = rowjson_text(r, 0, ROWJSON_MAX);

		CHECK(got && strcmp(got, "{\"caf\xef\xbf\xbd\": 1}") == 0, "a name not UTF-8: U+FFFD (%s)",
			  got ? got : "NULL");
		free(got);
		PQclear(r);
	}
	{
		const char *names[] = {"j"};
		const Oid types[] = {3802};
		const char *vals[] = {"[1, 2, 3]"};
		PGresult *r = make_row(1, names, types, vals);
		char *got = rowjson_text(r, 0, strlen("{\"j\": [1, 2, 3]}") - 1);

		CHECK(got == NULL, "a value longer than the cap leaves is not parsed: NULL");
		free(got);
		PQclear(r);
	}
	{
		PGresult *r = make_row(0, NULL, NULL, NULL);
		char *got;

		PQsetvalue(r, 0, 0, NULL, -1);
		got = rowjson_text(r, 0, ROWJSON_MAX);
		CHECK(got && strcmp(got, "{}") == 0, "no column: {} (%s)", got ? got : "NULL");
		free(got);
		PQclear(r);
	}
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
		CHECK(rowjson_is_number(numbers[i].text) == numbers[i].number, "is_number [%s]", numbers[i].text);
	return check_done("rowjson");
}
