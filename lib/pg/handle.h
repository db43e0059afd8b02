/*
 * handle — a session that reopens itself: the connection a runner's worker
 * claims and records on. When a statement fails because the connection is
 * gone (a restarted server, a terminated backend), pg_handle_repair()
 * opens a new one in its place; whoever holds the handle keeps using
 * h->conn. The handle owns its connection: pg_handle_close() closes it.
 */
#ifndef CRONQ_PG_HANDLE_H
#define CRONQ_PG_HANDLE_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "util/err.h"

typedef struct pg_handle {
	const char *conninfo;
	PGconn	   *conn;			/* NULL: not open */
} pg_handle;

/* Open the handle's session; NULL with err filled (see pg_connect). */
PGconn *pg_handle_open(pg_handle *h, const char *conninfo, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * A statement on h->conn failed with why: if the connection is gone, open
 * a new one in its place (logged as a warning naming worker). Whether it
 * did; false when the old one is still alive or no new one could be opened.
 */
bool pg_handle_repair(pg_handle *h, const char *worker, const char *why);

void pg_handle_close(pg_handle *h);

#endif
