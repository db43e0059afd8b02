/*
 * err — how lib/ reports failure: a status that is already the sysexits(3)
 * exit code the program should end with, plus a one-line message, an
 * optional detail and an optional hint (PostgreSQL's three parts of an
 * error), in a caller-owned struct. lib/ never exits or prints.
 */
#ifndef CRONQ_ERR_H
#define CRONQ_ERR_H

#include <stddef.h>
#include <sysexits.h>

typedef struct cq_err {
	int			code;			/* 0, or an EX_* value from sysexits.h */
	char		msg[1024];
	char		detail[512];
	char		hint[512];
	/*
	 * A server's error (a statement's, or its refusal of a new session):
	 * its SQLSTATE and the server function that raised it, neither ever
	 * translated, where the message is in the server's lc_messages. What
	 * cronq judges an error by; both empty for an error not the server's.
	 */
	char		sqlstate[6];
	char		routine[48];
} cq_err;

/* Fill err (when not NULL) and return code, so callers can `return cq_fail(…)`. */
int cq_fail(cq_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Set the detail, or the hint, of an already filled error. */
void cq_detail(cq_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cq_hint(cq_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cq_clear(cq_err *err);
/* Format a message into a caller's buffer (err may be NULL or errlen 0). */
void cq_errbuf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Put a prefix ("line 7: ") before an already filled message. */
void cq_prefix(cq_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
