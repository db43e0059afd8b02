/*
 * sessions — the sessions a running task borrows from its worker: the
 * runner's own (exec checks, purge), opened at first use, and an author's
 * (sql jobs run as the role that enqueued them), kept while the next job
 * has the same author and reset between jobs. A session that cannot be
 * opened for no fault of the job's stops the run's claiming (runner_fault).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg/pg.h"
#include "run/run_int.h"
#include "util/xalloc.h"

/* Lost sessions given back in a row, at most, before the next is counted. */
#define LOST_SESSION_GIVE_BACKS 3
/* How long after a kept runner's session it is asked again. */
#define SESSION_LOST_RECHECK_MS 300

/*
 * A session the running job needs could not be opened, for no fault of
 * the job's: the run stops claiming (runner_fault), and the job, unless
 * already stopped for another reason, is given back.
 */
void
worker_unavailable(worker *w, const char *msg)
{
	runner_fault(w->sh, msg);
	if (w->cur >= 0 && w->stopped == TASK_GO) {
		copy_message(w->unavailable, sizeof w->unavailable, msg);
		w->stopped = TASK_STOP_UNAVAILABLE;
	}
}

/*
 * How many of a job's latest attempts in a row were given back; -1 when
 * the question fails.
 */
static int
given_back_in_a_row(worker *w, int64_t job)
{
	char id[32], last[16];
	const char *params[] = {id, last};
	PGresult *r;
	int n;

	snprintf(id, sizeof id, "%" PRId64, job);
	snprintf(last, sizeof last, "%d", LOST_SESSION_GIVE_BACKS);
	r = pg_exec(w->db.conn,
				"select count(*) filter (where outcome = 'given_back') from"
				" (select r.outcome from cronq.job_runs r where r.job_id = $1"
				"  order by r.id desc limit $2::int) l",
				2, params, PG_ONE, NULL);
	if (r == NULL)
		return -1;
	n = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return n;
}

/*
 * A session lent to the running job was lost mid-statement (task.h): a
 * heartbeat asks at once whether the worker's own connection outlived it.
 * Kept, the server ended only the job's session: the job's failure. Lost
 * and opened again, the server ended every session (a restart, a crash, a
 * failover): the job is given back, unless its last
 * LOST_SESSION_GIVE_BACKS attempts were all given back already: a job
 * that crashes the server each time it runs is counted then, even where
 * the worker's new connection is accepted at once (PgBouncer keeps its
 * clients while the server recovers). Lost for good: nothing can be
 * recorded (TASK_STOP_DISCONNECTED), and a later run rescues the lease,
 * counting the attempt.
 */
task_stop
worker_session_lost(void *arg)
{
	worker *w = arg;
	PGconn *before = w->db.conn;
	task_stop stop;
	int job = w->cur;

	w->next_beat = 0;
	if ((stop = worker_await_connection(w)) != TASK_GO)
		return stop;
	/*
	 * Kept: asked again a moment later, since a server shutting down ends
	 * its sessions one by one (the runner's may answer just before its
	 * turn comes).
	 */
	if (w->db.conn == before) {
		struct timespec ts = {0, SESSION_LOST_RECHECK_MS * 1000000L};

		nanosleep(&ts, NULL);
		w->next_beat = 0;
		if ((stop = worker_await_connection(w)) != TASK_GO || w->db.conn == before)
			return stop;
	}
	if (job < 0 || given_back_in_a_row(w, w->slots[job].job->id) != LOST_SESSION_GIVE_BACKS) {
		copy_message(w->unavailable, sizeof w->unavailable,
					 "the server ended the job's session and the runner's (a restart or a failover)");
		return w->stopped = TASK_STOP_UNAVAILABLE;
	}
	return TASK_GO;
}

/*
 * The worker's task session: opened at first use, kept for the next jobs,
 * opened again when the server dropped it, as a failover or a restart
 * does while it waits between jobs (pg_idle_alive: no job is lent a
 * session the server has ended). It logs in as the runner's own
 * connection did: a failure is never the job's.
 */
PGconn *
worker_session(void *arg, char *why, size_t len)
{
	worker *w = arg;
	cq_err err = {0};

	if (w->session && !pg_idle_alive(w->session)) {
		pg_close(w->session);
		w->session = NULL;
	}
	if (w->session == NULL && (w->session = pg_connect(w->sh->o->conninfo, &err)) == NULL) {
		snprintf(why, len, "%s", err.msg);
		worker_unavailable(w, err.msg);
	}
	return w->session;
}

/*
 * Whether the server gives the runner a session now, and would give a
 * role without SUPERUSER one (a runner that has it may use the slots kept
 * for superusers, and is not held to the database's CONNECTION LIMIT): a
 * session of the runner's own, opened for the question and closed. The
 * count includes it, as the server's counts included the author's. Not
 * worker_session()'s, kept open: a server shutting down (or one a
 * failover left) still serves the sessions it has, and the question is
 * whether a new one is to be had.
 */
static bool
server_gives_sessions(worker *w)
{
	cq_err ignored = {0};
	PGconn *conn = pg_connect(w->sh->o->conninfo, &ignored);
	PGresult *res;
	bool gives;

	if (conn == NULL)
		return false;
	res = pg_exec(conn, "select count(*) <= pg_catalog.current_setting('max_connections')::int"
				  " - pg_catalog.current_setting('superuser_reserved_connections')::int"
				  " and (select d.datconnlimit from pg_catalog.pg_database d"
				  "      where d.datname = pg_catalog.current_database())"
				  "     not between 0 and count(*) filter (where a.datname = pg_catalog.current_database()) - 1"
				  " from pg_catalog.pg_stat_activity a where a.backend_type = 'client backend'",
				  0, NULL, PG_ONE, &ignored);
	gives = res && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	pg_close(conn);
	return gives;
}

/*
 * A new session logged in as role, or NULL with err. A failure is the
 * author's business, for the task to judge, when it is a refusal
 * (credentials, NOLOGIN, pg_hba.conf), the role's own CONNECTION LIMIT, or
 * any other failure of this login alone: none must hold up every other
 * author's jobs. One that says no session is to be had
 * (pg_server_unavailable) is asked of the server again, on a session of
 * the runner's, since the author shapes its own login's failure (a library
 * it sets for itself whose name quotes a code, its backends killed as they
 * start, its sessions read-only where the conninfo asks for read-write):
 * the runner's trouble when no session is to be had indeed (the run stops
 * claiming); else the author's. A failure that may have been a moment's
 * (libpq's own, or a server shutting down or starting: a failover, a
 * restart) is tried once more first, and that one's failure is the
 * author's. Not one a pooler gave (08P01): PgBouncer holds a login after
 * a failed one for its server_login_retry, longer than connect_timeout.
 */
static PGconn *
author_login(worker *w, const char *role, bool own_password, cq_err *err)
{
	PGconn *conn = pg_connect_as(w->sh->o->conninfo, role, own_password, err);

	if (conn || pg_login_refused(err) || pg_role_limit(err) || !pg_server_unavailable(err))
		return conn;
	if (!server_gives_sessions(w)) {
		worker_unavailable(w, err->msg);
		return NULL;
	}
	if (err->sqlstate[0] != '\0' && strncmp(err->sqlstate, "57", 2) != 0)
		return NULL;
	cq_clear(err);
	return pg_connect_as(w->sh->o->conninfo, role, own_password, err);
}

/*
 * A session logged in as role for a job's SQL: the previous job's when it
 * had the same author (reset by author_release), else a new one; the
 * session of another author is closed first, never lent.
 */
PGconn *
worker_author_session(void *arg, const char *role, cq_err *err)
{
	worker *w = arg;
	const char *login = PQuser(w->db.conn);

	if (w->author_conn && strcmp(w->author_role, role) == 0 && pg_idle_alive(w->author_conn))
		return w->author_conn;
	pg_close(w->author_conn);
	free(w->author_role);
	w->author_role = xstrdup(role);
	w->author_conn = author_login(w, role, login && strcmp(login, role) == 0, err);
	return w->author_conn;
}

/*
 * Take a job's session back: closed unless the task vouches for it and it
 * is idle (no transaction a job left open); else DISCARD ALL, which drops
 * temporary objects, resets every setting and the role, deallocates
 * prepared statements, closes cursors, unlistens and releases advisory
 * locks, so the next job of the author starts as on a new session.
 */
void
worker_author_release(void *arg, PGconn *conn, bool reusable)
{
	worker *w = arg;

	if (conn != w->author_conn)
		return;
	if (reusable && PQtransactionStatus(conn) == PQTRANS_IDLE && pg_run(conn, "discard all", 0, NULL, NULL) == 0)
		return;
	pg_close(w->author_conn);
	w->author_conn = NULL;
}

/* Close the sessions the worker lent its tasks. */
void
worker_sessions_close(worker *w)
{
	pg_close(w->session);
	pg_close(w->author_conn);
	free(w->author_role);
	w->session = NULL;
	w->author_conn = NULL;
	w->author_role = NULL;
}
