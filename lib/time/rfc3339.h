/*
 * rfc3339 — the project's one way to write an instant (UTC, RFC 3339), and
 * reading one without the database, for commands that need none
 * (`schedule next --from`): RFC 3339 ("2026-03-08T10:00:00Z",
 * "…+05:30", fractions dropped), with "T" or a space, seconds optional, a
 * date alone meaning midnight; no zone means UTC. Other PostgreSQL input
 * forms need the database.
 */
#ifndef CRONQ_RFC3339_H
#define CRONQ_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/*
 * 0 and *t (epoch seconds); RFC3339_MALFORMED when text is not RFC 3339
 * (other input forms may still read it); RFC3339_IMPOSSIBLE when it is,
 * but names no instant ("2026-02-30", "25:00"): nothing reads it. The
 * reason in err either way.
 */
#define RFC3339_MALFORMED (-1)
#define RFC3339_IMPOSSIBLE (-2)
int rfc3339_parse(const char *text, int64_t *t, char *err, size_t errlen);

/* Size rfc3339_format needs: "2026-03-08T07:00:00Z" and its NUL. */
#define RFC3339_BUFLEN 21

/* Format t as RFC 3339 UTC, "2026-03-08T07:00:00Z", into buf (truncated to len). */
void rfc3339_format(int64_t t, char *buf, size_t len);

#endif
