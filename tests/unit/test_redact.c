/* Unit tests of pg/redact: every form of password a conninfo can hold is
 * hidden in the conninfo itself and in messages about it, libpq's own
 * messages about strings it cannot parse included, and nothing else is. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pg/redact.h"

static void
conninfo_case(const char *in, const char *want)
{
	char *got = pg_redact_conninfo(in);

	CHECK(strcmp(got, want) == 0, "redact_conninfo [%s]: got [%s], want [%s]", in, got, want);
	free(got);
}

static void
message_case(const char *msg, const char *conninfo, const char *want)
{
	char *got = pg_redact(msg, conninfo);

	CHECK(strcmp(got, want) == 0, "redact [%s] of [%s]: got [%s], want [%s]", msg, conninfo, got, want);
	free(got);
}

/* libpq's own message about conninfo, redacted, holds no secret. */
static void
libpq_case(const char *conninfo, const char *secret)
{
	char *why = NULL, *got;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &why);

	CHECK(opts == NULL && why != NULL, "libpq parses [%s]", conninfo);
	if (opts)
		PQconninfoFree(opts);
	if (why == NULL)
		return;
	got = pg_redact(why, conninfo);
	CHECK(strstr(got, secret) == NULL, "[%s]: [%s] still in [%s]", conninfo, secret, got);
	CHECK(strstr(got, PG_REDACTED) != NULL || strstr(why, secret) == NULL,
		  "[%s]: nothing redacted in [%s]", conninfo, got);
	free(got);
	PQfreemem(why);
}

int
main(void)
{
	/* Which strings libpq parses, and which it takes as a database name. */
	CHECK(pg_conninfo_is_string("postgresql://h/db"), "URI");
	CHECK(pg_conninfo_is_string("postgres://h"), "short URI");
	CHECK(pg_conninfo_is_string("host=h"), "keywords");
	CHECK(!pg_conninfo_is_string("mydb"), "a database name");
	CHECK(!pg_conninfo_is_string(NULL), "NULL");

	/* URIs. */
	conninfo_case("postgresql://u:S3cret@h/db", "postgresql://u:****@h/db");
	conninfo_case("postgres://u:S3cret@[bad", "postgres://u:****@[bad");
	conninfo_case("postgresql://u@h/db", "postgresql://u@h/db");
	conninfo_case("postgresql://h:5432/db", "postgresql://h:5432/db");
	conninfo_case("postgresql://u:p@ss@h/db", "postgresql://u:****@h/db");
	conninfo_case("postgresql://u:S3%63ret@h/db", "postgresql://u:****@h/db");
	conninfo_case("postgresql://u:@h/db", "postgresql://u:@h/db");
	conninfo_case("postgresql:///db?sslmode=off&password=S3cret&application_name=a",
				  "postgresql:///db?sslmode=off&password=****&application_name=a");
	conninfo_case("postgresql:///db?pass%77ord=S3cret", "postgresql:///db?pass%77ord=****");
	conninfo_case("postgresql://u:a?b@h/db?password=c", "postgresql://u:****@h/db?password=****");
	/* Keyword strings, quoted or not, escapes and blanks included. */
	conninfo_case("host=h password=S3cret dbname=d", "host=h password=**** dbname=d");
	conninfo_case("password='x y' host=h", "password=**** host=h");
	conninfo_case("password = 'it\\'s' host=h", "password = **** host=h");
	conninfo_case("password=a\\ b host=h", "password=**** host=h");
	conninfo_case("password='unterminated host=h", "password=****");
	conninfo_case("PASSWORD=x", "PASSWORD=****");
	conninfo_case("host=h passwordx=1 user=password", "host=h passwordx=1 user=password");
	conninfo_case("host=h", "host=h");
	conninfo_case("mydb", "mydb");
	conninfo_case("", "");

	/* Messages: the conninfo quoted whole, a password quoted alone, decoded
	 * or unquoted; never a word that merely holds the password's letters. */
	message_case("bad URI: \"postgresql://u:S3cret@[bad\"", "postgresql://u:S3cret@[bad",
				 "bad URI: \"postgresql://u:****@[bad\"");
	message_case("invalid percent-encoded token: \"S3%zzret\"", "postgresql://u:S3%zzret@h",
				 "invalid percent-encoded token: \"****\"");
	message_case("user \"u\" with \"S3cret\"", "postgresql://u:S3%63ret@h", "user \"u\" with \"****\"");
	message_case("got \"x y\" and x", "password='x y' host=h", "got \"****\" and x");
	message_case("got \"it's\"", "password='it\\'s'", "got \"****\"");
	message_case("could not translate host name \"ss@h\"", "postgresql://u:p@ss@h/db",
				 "could not translate host name \"****@h\"");
	message_case("report: port5, sport", "password=port", "report: port5, sport");
	message_case("password=port", "password=port", "password=****");
	message_case("S3cret S3cretly aS3cret S3cret", "password=S3cret", "**** S3cretly aS3cret ****");
	message_case("nothing to hide", "host=h", "nothing to hide");
	message_case("nothing to hide", NULL, "nothing to hide");

	/* libpq's messages about strings it cannot parse. */
	libpq_case("postgresql://u:S3cret@[bad", "S3cret");
	libpq_case("postgresql://u:S3cret@[]/db", "S3cret");
	libpq_case("postgresql://u:S3cret@h/db?sslmode", "S3cret");
	libpq_case("postgresql://u:S3cret@h/db?a=b=c", "S3cret");
	libpq_case("postgresql://u:S3cret@[::1]x/db", "S3cret");
	libpq_case("postgresql://u:S3%zzret@h/db", "S3%zzret");
	libpq_case("postgresql://u:S3cret%00@h/db", "S3cret");
	libpq_case("postgresql://u:S3cret@h/db?password=S3cret&bogus", "S3cret");
	libpq_case("postgresql://u@h/db?password=S3%zzcret", "S3%zzcret");
	libpq_case("host=h password='S3cret", "S3cret");
	libpq_case("password=S3cret bogus=1", "S3cret");
	libpq_case("password=S3cret junk", "S3cret");

	return check_done("redact");
}
