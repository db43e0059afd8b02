/*
 * handle — see handle.h: a connection and its reconnection, in one place.
 */
#include "pg/handle.h"

#include "pg/pg.h"
#include "util/log.h"

/*
 * A runner's claims, outcomes and heartbeats run without the role's or
 * the database's statement_timeout: one that cancelled an outcome
 * statement left the jobs it had run to the rescue (an attempt counted
 * each, dead for jobs of one attempt). cronq's answer limit bounds each
 * statement instead.
 */
#define RUNNER_SETTINGS "-c statement_timeout=0"

PGconn *
pg_handle_open(pg_handle *h, const char *conninfo, cq_err *err)
{
	h->conninfo = conninfo;
	h->conn = pg_connect_with(conninfo, RUNNER_SETTINGS, err);
	return h->conn;
}

bool
pg_handle_repair(pg_handle *h, const char *worker, const char *why)
{
	cq_err err = {0};
	PGconn *conn;

	if (pg_alive(h->conn) || (conn = pg_connect_with(h->conninfo, RUNNER_SETTINGS, &err)) == NULL)
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
