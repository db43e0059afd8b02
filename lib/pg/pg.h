/*
 * pg — the connection wrapper: opening a session the same safe way every
 * time, running parameterised queries that state the shape they expect, and
 * turning libpq failures into cq_err codes. Knows libpq; knows nothing of the
 * cronq schema.
 */
#ifndef CRONQ_PG_H
#define CRONQ_PG_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

typedef enum pg_shape {
	PG_NONE,					/* a command: no rows expected (rows are ignored) */
	PG_ONE,						/* exactly one row */
	PG_MAYBE_ONE,				/* zero or one row */
	PG_ANY,						/* any number of rows */
} pg_shape;

/*
 * The connection string cronq uses when none is given: $CRONQ_DATABASE_URL,
 * else $DATABASE_URL, else NULL (libpq's own defaults).
 */
const char *pg_default_conninfo(void);

/*
 * Name where the connection string handed to pg_connect*() came from
 * ("--db", "CRONQ_DB"), for the message about one libpq refuses ("invalid
 * connection string in --db: …"); NULL or never called: the environment
 * variable pg_default_conninfo() read it from, if it did. Once, before any
 * thread starts.
 */
void pg_set_conninfo_origin(const char *name);

/*
 * Once, before the first connection and before any thread starts: sets
 * $PGTZ, which libpq reads at every connection (setenv while another
 * thread reads the environment is a data race).
 */
void pg_init(void);

/* connect_timeout when neither the conninfo nor $PGCONNECT_TIMEOUT sets one. */
#define PG_DEFAULT_CONNECT_TIMEOUT "10"

/*
 * Open a session: application_name "cronq" (unless the conninfo names one),
 * client_encoding UTF8, time zone UTC, nothing relying on search_path.
 * Never waits for ever: unless the conninfo or $PGCONNECT_TIMEOUT says
 * otherwise, an attempt gives up after PG_DEFAULT_CONNECT_TIMEOUT seconds,
 * and TCP keepalives and tcp_user_timeout are on, so that a server gone
 * silent later is noticed too. NULL with EX_USAGE when conninfo is a
 * connection string libpq cannot parse or whose option values it refuses
 * before it tries a server (port=abc, sslmode=foo), EX_TEMPFAIL when the stop
 * function (pg_set_wait_stop) said to give up, else EX_UNAVAILABLE on
 * failure. No message holds a password of conninfo (pg/redact.h).
 */
PGconn *pg_connect(const char *conninfo, cq_err *err) __attribute__((warn_unused_result));
/*
 * The same with more server settings for the session, in the form of the
 * "options" keyword ("-c statement_timeout=5000"), after cronq's own. Like
 * those, they are dropped where a pooler refuses the startup parameter.
 */
PGconn *pg_connect_with(const char *conninfo, const char *settings, cq_err *err)
	__attribute__((warn_unused_result));
void pg_close(PGconn *conn);

/*
 * stop(started_ms) is asked every ~100 ms (in any thread) while a
 * connection is being opened and while pg_exec(), pg_run() or
 * pg_exec_pair() wait for the server, started_ms being when that wait
 * began (mono_ms()). When it says so, the attempt is given up (NULL,
 * EX_TEMPFAIL), or the connection shut down (the statement fails as on a
 * lost connection, EX_TEMPFAIL): how a signal handler's flag reaches a
 * server that never answers. NULL (the default): no such check.
 */
void pg_set_wait_stop(bool (*stop)(int64_t started_ms));

/* The answer limit when the command sets none: see pg_set_answer_limit(). */
#define PG_DEFAULT_ANSWER_LIMIT_MS (60 * 1000)

/*
 * The longest pg_exec(), pg_run() and pg_exec_pair() wait for the server
 * to take a statement and answer it: a server that stops answering while
 * its kernel still acknowledges (a stopped or hung server process, a proxy
 * that takes bytes and never forwards them) is noticed neither by TCP
 * keepalives nor by tcp_user_timeout. Past it (and once the server's
 * kernel acknowledged every byte sent: bytes unacknowledged are the
 * network's silence, tcp_user_timeout's to bound) the statement is cancelled
 * on the server (if it listens), the connection shut down, and the
 * statement fails as on a lost connection (EX_TEMPFAIL, "connection to
 * database lost: no answer from the database within 3s (name); …"),
 * name telling what sets the limit. 0: no limit. Not for
 * pg_exec_watched() (a job's own SQL, which its timeout bounds). Set
 * before any thread starts; PG_DEFAULT_ANSWER_LIMIT_MS until then.
 */
void pg_set_answer_limit(int64_t ms, const char *name);
int64_t pg_answer_limit(void);

/*
 * Run one statement with text parameters (NULL values are SQL NULL). On
 * success returns a result the caller PQclear()s; on failure NULL with err
 * filled: EX_TEMPFAIL when the connection is gone, EX_DATAERR for data
 * errors (SQLSTATE classes 22 and 23), EX_CONFIG for a missing privilege
 * (42501), EX_SOFTWARE otherwise, and
 * err->msg "<libpq primary message>", err->sqlstate the SQLSTATE when
 * the server sent one (empty otherwise).
 */
PGresult *pg_exec(PGconn *conn, const char *sql, int nparams,
				  const char *const *values, pg_shape shape, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Run two statements in one round trip and one implicit transaction (libpq
 * pipeline mode): all or nothing, one commit, but each statement takes its
 * own snapshot, as statements do under READ COMMITTED. res[0] and res[1]
 * get their results (the caller PQclear()s both), or NULL with err filled
 * as by pg_exec() (from the first statement that failed, or the commit:
 * no success until the sync that ends the transaction is read).
 */
int pg_exec_pair(PGconn *conn, const char *const sql[2], const int nparams[2],
				 const char *const *const values[2], PGresult *res[2], cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Whether a statement failed for a time the server could not read (its
 * SQLSTATE: invalid_datetime_format, datetime_field_overflow,
 * invalid_time_zone_displacement_value): the input's fault, worth naming
 * the flag it came from.
 */
bool pg_bad_time(const char *sqlstate);

/* Run a statement whose result is not needed; 0 or the error code. */
int pg_run(PGconn *conn, const char *sql, int nparams,
		   const char *const *values, cq_err *err) __attribute__((warn_unused_result));

/*
 * End the transaction conn is in: commit, or roll back (keep false, or
 * res NULL: the statement failed); then res itself, or NULL with err
 * filled when the commit failed (res cleared).
 */
PGresult *pg_end_tx(PGconn *conn, PGresult *res, bool keep, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Copy the error state of a failed result or connection into err: the
 * server's message, and its hint; a statement the server refused for want
 * of a privilege (its own privilege checks, SQLSTATE 42501) and without a
 * hint gets the grant the command needs: see pg_set_needed_role().
 */
int pg_fail_result(PGconn *conn, const PGresult *res, cq_err *err);

/*
 * The role a command's statements need, for that hint: role (default
 * "cronq_user") gives "GRANT role TO login"; NULL means the owner of schema
 * cronq, which no grant makes ("Log in as the owner …"). Called once by a
 * command, before its first statement.
 */
void pg_set_needed_role(const char *role);

/*
 * Run sql while watching: every ~50 ms stop(arg) is asked whether to give
 * up, and when it says so the query is cancelled on the server, again
 * every second (a statement may catch the cancel), and abandon_ms later
 * given up, still running: the caller must then close conn. With
 * nparams < 0 the simple protocol is used, so sql may hold several
 * statements. Rows are read one at a time and dropped (their count stays
 * in the command tag), notifications (the SQL may LISTEN) freed as they
 * come, and a COPY to or from the client is ended, so that no statement's
 * output can fill memory or hold the caller. Returns the
 * first error result, else the last statement's result (the caller
 * PQclear()s it; NULL only when the connection failed before any result).
 * *failed_at gets the 0-based index of the statement that failed, or -1;
 * *stopped whether stop() cancelled it. With first_row, it gets the last
 * statement's first row (a PGRES_SINGLE_TUPLE result the caller
 * PQclear()s), or NULL when that statement returned none or one failed:
 * the one row kept.
 */
PGresult *pg_exec_watched(PGconn *conn, const char *sql, int nparams,
						  const char *const *values, bool (*stop) (void *arg),
						  void *arg, int64_t abandon_ms, int *failed_at, bool *stopped,
						  PGresult **first_row);

/*
 * Open a session logged in as role: the runner's conninfo with "user"
 * replaced, and its password kept only when own_password (the role is the
 * runner's own login), so that libpq finds the role's own credentials
 * (~/.pgpass, a client certificate, an ident map). Otherwise as
 * pg_connect(); EX_USAGE when conninfo does not parse.
 */
PGconn *pg_connect_as(const char *conninfo, const char *role, bool own_password, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Log a server notice: warnings are shown, the chatter of NOTICE and below
 * ("schema already exists, skipping") only with --verbose. Every session
 * cronq opens logs its notices so.
 */
void pg_log_notice(const PGresult *res);

/* Whether a failed connection says the server refused the login itself
 * (credentials, pg_hba.conf, no such role), not that it was away; in any
 * language the server speaks (cq_err's sqlstate). */
bool pg_login_refused(const cq_err *err);
/* Whether it says the role has as many sessions as its CONNECTION LIMIT
 * allows (not that the server is full). */
bool pg_role_limit(const cq_err *err);
/* Whether it says the server gives no session to anyone now (unreachable,
 * full, starting or shutting down), rather than something of this login's:
 * any other error the server answers with is the login's. */
bool pg_server_unavailable(const cq_err *err);

/* Whether a failed statement was cancelled (a cancel request: 57014) or
 * ended for its conflict with another transaction (40001, 40P01): nothing
 * of it committed, the connection is as it was, and the same statement
 * again may pass. */
bool pg_transient(const cq_err *err);

/* True when the connection is usable. */
bool pg_alive(PGconn *conn);

/*
 * The longest pg_connect() may take to open conn's connection again (its
 * connect_timeout, once per host listed), in ms; -1 when unbounded.
 */
int64_t pg_reconnect_limit_ms(PGconn *conn);

/*
 * pg_alive(), and for a connection at rest between statements, that the
 * server has not ended it meanwhile: an idle session is sent nothing
 * unasked but a notice or the error that ends it (a server shutting down,
 * pg_terminate_backend, a failover), so a readable or closed socket means
 * it is not worth lending. One poll(), no round trip. For the sessions
 * kept between jobs, which libpq would otherwise report open until a
 * statement failed on them.
 */
bool pg_idle_alive(PGconn *conn);

/*
 * Read text as PostgreSQL's timestamptz does (the session's zone, UTC,
 * for a time without one: "2026-03-08 10:00", "tomorrow", "now") into
 * epoch seconds (fractions dropped). 0, or EX_DATAERR with the server's
 * reason ("invalid input syntax for type timestamp with time zone: …"),
 * also for "infinity".
 */
int pg_timestamp(PGconn *conn, const char *text, int64_t *t, cq_err *err)
	__attribute__((warn_unused_result));

#endif
