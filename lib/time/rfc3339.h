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

/* 0 and *t (epoch seconds), or -1 with the reason in err. */
int rfc3339_parse(const char *text, int64_t *t, char *err, size_t errlen);

/* Size rfc3339_format needs: "2026-03-08T07:00:00Z" and its NUL. */
#define RFC3339_BUFLEN 21

/* Format t as RFC 3339 UTC, "2026-03-08T07:00:00Z", into buf (truncated to len). */
void rfc3339_format(int64_t t, char *buf, size_t len);

#endif
