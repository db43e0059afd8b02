/*
 * redact — keeping a connection string's password out of what cronq
 * prints. A conninfo may hold one as a URI's "user:PASSWORD@", a URI
 * parameter "password=…" or a keyword "password=…" (quoted or not); libpq's
 * message about a string it cannot parse quotes the whole string, or the
 * token it choked on. Knows libpq's conninfo grammar; needs no libpq.
 */
#ifndef CRONQ_REDACT_H
#define CRONQ_REDACT_H

#include <stdbool.h>

/* What a password is replaced with. */
#define PG_REDACTED "****"

/* Whether libpq reads s as a connection string (a URI, or keyword=value
 * pairs) rather than as a database name. */
bool pg_conninfo_is_string(const char *s);

/* A new string: conninfo with every password's text replaced by PG_REDACTED. */
char *pg_redact_conninfo(const char *conninfo);

/*
 * A new string: text (a message about conninfo, e.g. libpq's) without
 * conninfo's passwords: conninfo quoted whole becomes its redacted form,
 * and each password, as written, percent-decoded or unquoted, and for a
 * URI password holding "@" each part of it, is replaced where it stands
 * as a token of its own (not inside a longer word: a password "port" does
 * not garble the word "port" in a message). conninfo may be NULL (libpq's
 * defaults: nothing to redact).
 */
char *pg_redact(const char *text, const char *conninfo);

#endif
