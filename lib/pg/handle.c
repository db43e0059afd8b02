/*
 * handle — see handle.h: a connection and its reconnection, in one place.
 */
#include "pg/handle.h"

#include "pg/pg.h"
#include "util/log.h"

PGconn *
pg_handle_open(pg_handle *h, const char *conninfo, cq_err *err)
{
	h->conninfo = conninfo;
	h->conn = pg_connect(conninfo, err);
	return h->conn;
}

bool
pg_handle_repair(pg_handle *h, const char *worker, const char *why)
{
	cq_err err = {0};
	PGconn *conn;

	if (pg_alive(h->conn) || (conn = pg_connect(h->conninfo, &err)) == NULL)
		return false;
	log_full(LOG_WARNING, (log_field[]) {{"worker", worker, false}, {NULL, NULL, false}}, NULL, NULL,
			 "the connection to the database was lost (%s); reconnected", why);
	pg_close(h->conn);
	h->conn = conn;
	return true;
}

void
pg_handle_close(pg_handle *h)
{
	pg_close(h->conn);
	h->conn = NULL;
}
