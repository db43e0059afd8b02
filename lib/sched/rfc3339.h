/*
 * rfc3339 — reading a time without the database, for commands that need
 * none (`schedule next --from`): RFC 3339 ("2026-03-08T10:00:00Z",
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

#endif
