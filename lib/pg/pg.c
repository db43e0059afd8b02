/*
 * pg — see pg.h. Every result is checked against the shape the caller asked
 * for and cleared on failure, so callers only ever hold good results.
 */
#include "pg/pg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pg/redact.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/xalloc.h"

const char *
pg_default_conninfo(void)
{
	const char *s = getenv("CRONQ_DATABASE_URL");

	if (s && *s)
		return s;
	s = getenv("DATABASE_URL");
	if (s && *s)
		return s;
	return NULL;
}

void
pg_log_notice(const PGresult *res)
{
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);

	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	/* A server going down warns before it closes; the error that follows says it all. */
	bool shutdown = state && strncmp(state, "57", 2) == 0;

	log_full(severity && strcmp(severity, "WARNING") == 0 && !shutdown ? LOG_WARNING : LOG_DEBUG,
			 NULL, NULL, hint, "%s", msg ? msg : PQresultErrorMessage(res));
}

PGresult *
pg_end_tx(PGconn *conn, PGresult *res, bool keep, cq_err *err)
{
	if (res && keep) {
		if (pg_run(conn, "commit", 0, NULL, err) == 0)
			return res;
		PQclear(res);
		return NULL;
	}
	if (pg_alive(conn))
		PQclear(PQexec(conn, "rollback"));
	return res;
}

static void
on_notice(void *arg, const PGresult *res)
{
	(void) arg;
	pg_log_notice(res);
}

/*
 * libpq sends $PGTZ as the session's TimeZone in the startup packet:
 * times without a zone are read as UTC and times are printed in UTC.
 * Poolers track it per client, so it survives transaction pooling.
 * Spelt "GMT" (the same zone): the one name a server knows without
 * reading its zoneinfo files, ~0.1 ms of every connection.
 */
void
pg_init(void)
{
	setenv("PGTZ", "GMT", 1);
}

/* How often a connection attempt asks whether to give up. */
#define CONNECT_TICK_MS 100

/*
 * What cronq sets when neither the conninfo nor the environment does: a
 * connection attempt that gives up (libpq's default waits for ever), and
 * TCP keepalives that notice a server gone silent mid-run within ~30 s
 * (an idle session: 15 s, then 3 probes 5 s apart; unacknowledged data:
 * tcp_user_timeout). libpq ignores the TCP ones on a Unix socket, and
 * they are settings of the client's socket, not startup parameters, so
 * PgBouncer never sees them.
 */
static const char *const connect_defaults[][2] = {
	{"connect_timeout", PG_DEFAULT_CONNECT_TIMEOUT},
	{"keepalives", "1"},
	{"keepalives_idle", "15"},
	{"keepalives_interval", "5"},
	{"keepalives_count", "3"},
	{"tcp_user_timeout", "30000"},
};

static bool (*wait_stop)(int64_t started_ms);

void
pg_set_wait_stop(bool (*stop)(int64_t started_ms))
{
	wait_stop = stop;
}

/* See pg_set_answer_limit(); set before any thread starts. */
static int64_t answer_limit_ms = PG_DEFAULT_ANSWER_LIMIT_MS;
static const char *answer_limit_name = "cronq's limit for one statement";

void
pg_set_answer_limit(int64_t ms, const char *name)
{
	answer_limit_ms = ms > 0 ? ms : 0;
	answer_limit_name = name;
}

int64_t
pg_answer_limit(void)
{
	return answer_limit_ms;
}

/* Whether the parsed conninfo opts (may be NULL) give keyword a value. */
static bool
conninfo_sets(const PQconninfoOption *opts, const char *keyword)
{
	for (const PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, keyword) == 0)
			return o->val != NULL && o->val[0] != '\0';
	return false;
}

/*
 * Append to keys and vals (room for N_CONNECT_DEFAULTS more) the defaults
 * that opts, the parsed conninfo, and $PGCONNECT_TIMEOUT leave unset.
 */
#define N_CONNECT_DEFAULTS (sizeof connect_defaults / sizeof connect_defaults[0])

static void
add_defaults(const PQconninfoOption *opts, const char **keys, const char **vals, size_t *n)
{
	const char *env = getenv("PGCONNECT_TIMEOUT");

	for (size_t i = 0; i < N_CONNECT_DEFAULTS; i++) {
		const char *key = connect_defaults[i][0];

		if (conninfo_sets(opts, key) || (strcmp(key, "connect_timeout") == 0 && env && *env))
			continue;
		keys[*n] = key;
		vals[(*n)++] = connect_defaults[i][1];
	}
	keys[*n] = NULL;
	vals[*n] = NULL;
}

/*
 * The attempt's time limit in ms, from the connect_timeout libpq settled
 * on (the conninfo's, $PGCONNECT_TIMEOUT or cronq's default), read as
 * libpq reads it: 0 or less is none, and 1 is 2 s. -1 when it is not an
 * integer.
 */
static int64_t
connect_timeout_ms(PGconn *conn, char *text, size_t len)
{
	PQconninfoOption *opts = PQconninfo(conn);
	int64_t ms = 0;

	text[0] = '\0';
	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, "connect_timeout") == 0 && o->val)
			snprintf(text, len, "%s", o->val);
	PQconninfoFree(opts);
	if (text[0] != '\0') {
		char *end;
		long v;

		errno = 0;
		v = strtol(text, &end, 10);
		while (isspace((unsigned char) *end))
			end++;
		if (errno != 0 || end == text || *end != '\0' || v > INT32_MAX)
			return -1;
		ms = v <= 0 ? 0 : v < 2 ? 2000 : (int64_t) v * 1000;
	}
	return ms;
}

/* Where the connection string came from: see pg_set_conninfo_origin(). */
static char conninfo_origin[96];

void
pg_set_conninfo_origin(const char *name)
{
	snprintf(conninfo_origin, sizeof conninfo_origin, "%s", name ? name : "");
}

/*
 * A connection string (or, conninfo NULL, libpq's PG* environment) that
 * cannot be used whatever the server does: EX_USAGE, naming where the
 * string came from and why (already without its passwords).
 */
static int
conninfo_refused(const char *conninfo, const char *why, cq_err *err)
{
	const char *env = NULL;

	if (conninfo == NULL)
		return cq_fail(err, EX_USAGE, "invalid connection settings: %s", why);
	if (conninfo_origin[0])
		env = conninfo_origin;
	else if (getenv("CRONQ_DATABASE_URL") && strcmp(getenv("CRONQ_DATABASE_URL"), conninfo) == 0)
		env = "CRONQ_DATABASE_URL";
	else if (getenv("DATABASE_URL") && strcmp(getenv("DATABASE_URL"), conninfo) == 0)
		env = "DATABASE_URL";
	if (env)
		return cq_fail(err, EX_USAGE, "invalid connection string in %s: %s", env, why);
	return cq_fail(err, EX_USAGE, "invalid connection string: %s", why);
}

/*
 * Whether libpq's message says it refused an option's value, which it does
 * before it tries to reach a server: a port or timeout that is no number
 * or out of range, a value outside a keyword's set (sslmode,
 * target_session_attrs…), hosts and ports that do not pair up. A usage
 * error, not an unreachable database. These are libpq's own words: cronq
 * never sets a locale for messages, so they are not translated.
 */
static bool
option_refused(const char *msg)
{
	static const char *const phrases[] = {
		"invalid integer value \"", "invalid port number", "could not match ",
		"invalid connection option \"", "invalid SSL protocol version range",
	};

	for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++)
		if (strstr(msg, phrases[i]))
			return true;
	/* "invalid sslmode value: \"x\"", and so for every keyword with a set of values */
	for (const char *p = msg; (p = strstr(p, "invalid ")) != NULL; p++) {
		const char *word = p + strlen("invalid ");
		size_t n = strspn(word, "abcdefghijklmnopqrstuvwxyz_");

		if (n > 0 && strncmp(word + n, " value: \"", strlen(" value: \"")) == 0)
			return true;
	}
	return false;
}

/*
 * A failed connection's message as libpq words it at PQERRORS_VERBOSE,
 * which connect_params asks for until the session is open: each error of a
 * server starts with a line "... SEVERITY:  SQLSTATE: text" and ends with
 * "LOCATION:  routine, file.c:line". Neither the code nor the routine is
 * ever translated, where the text is in the server's lc_messages. Takes
 * the last error's code and routine out of msg (libpq may try twice, with
 * SSL and without, and keep both errors), leaving it as libpq words it by
 * default, without its trailing newline. A code is the one after a line's
 * first ":  " (the severity's): a role's name quoted later on the line may
 * look like one. Its routine is its last LOCATION line, after any text.
 */
static void
take_server_fields(char *msg, char sqlstate[6], char *routine, size_t routine_len)
{
	static const char location[] = "LOCATION:  ";
	char *line = msg;

	sqlstate[0] = '\0';
	routine[0] = '\0';
	while (*line) {
		char *sev = strstr(line, ":  "), *nl = strchr(line, '\n');

		if (strncmp(line, location, strlen(location)) == 0) {
			snprintf(routine, routine_len, "%.*s", (int) strcspn(line + strlen(location), ",\n"),
					 line + strlen(location));
			memmove(line, nl ? nl + 1 : line + strlen(line), strlen(nl ? nl + 1 : "") + 1);
			continue;
		}
		if (sev && (nl == NULL || sev < nl) &&
			strspn(sev + 3, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 5 && sev[8] == ':' && sev[9] == ' ') {
			snprintf(sqlstate, 6, "%.5s", sev + 3);
			routine[0] = '\0';	/* a new error: its own, when it has one */
			memmove(sev + 3, sev + 10, strlen(sev + 10) + 1);
			nl = strchr(line, '\n');
		}
		line = nl ? nl + 1 : line + strlen(line);
	}
	for (size_t n = strlen(msg); n > 0 && isspace((unsigned char) msg[n - 1]); n--)
		msg[n - 1] = '\0';
}

/* The connection failed: err from libpq's message, without a password. */
static void
connect_failed(PGconn *conn, const char *conninfo, cq_err *err)
{
	char *msg = pg_redact(PQerrorMessage(conn), conninfo), sqlstate[6], routine[sizeof err->routine];

	take_server_fields(msg, sqlstate, routine, sizeof routine);
	if (option_refused(msg))
		conninfo_refused(conninfo, msg, err);
	else
		cq_fail(err, EX_UNAVAILABLE, "could not connect to database: %s", msg);
	if (err) {
		memcpy(err->sqlstate, sqlstate, sizeof sqlstate);
		memcpy(err->routine, routine, sizeof routine);
	}
	free(msg);
}

/*
 * Drive the attempt PQconnectStartParams began: poll its socket a tick at
 * a time, so that the time limit and wait_stop() are looked at however
 * silent the server is (libpq's own connect_timeout applies only to its
 * blocking PQconnectdb). The limit counts from the start of each host's
 * attempt, as libpq counts it. 0, or an error code with err filled.
 */
static int
connect_wait(PGconn *conn, const char *conninfo, cq_err *err)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	char text[32], host[300] = "", now_host[300];
	int64_t limit = connect_timeout_ms(conn, text, sizeof text), start = mono_ms(), began = start;

	if (limit < 0) {
		char why[128];

		snprintf(why, sizeof why, "invalid integer value \"%.32s\" for connection option \"connect_timeout\"",
				 text);
		return conninfo_refused(conninfo, why, err);
	}
	for (;;) {
		struct pollfd pfd;
		int64_t now, wait = CONNECT_TICK_MS;

		if (st == PGRES_POLLING_OK)
			return 0;
		if (st == PGRES_POLLING_FAILED) {
			connect_failed(conn, conninfo, err);
			return err ? err->code : EX_UNAVAILABLE;
		}
		if (wait_stop && wait_stop(began))
			return cq_fail(err, EX_TEMPFAIL, "could not connect to database: interrupted by a signal");
		now = mono_ms();
		snprintf(now_host, sizeof now_host, "%s:%s", PQhost(conn) ? PQhost(conn) : "",
				 PQport(conn) ? PQport(conn) : "");
		if (strcmp(now_host, host) != 0) {
			snprintf(host, sizeof host, "%s", now_host);
			start = now;
		}
		if (limit > 0 && now - start >= limit) {
			char *where = pg_redact(host, conninfo);
			int rc = cq_fail(err, EX_UNAVAILABLE, "could not connect to database: timeout expired: "
							 "no answer from %s within %" PRId64 " s (connect_timeout)", where, limit / 1000);

			free(where);
			return rc;
		}
		if (limit > 0 && start + limit - now < wait)
			wait = start + limit - now;
		pfd.fd = PQsocket(conn);
		pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		pfd.revents = 0;
		switch (poll(&pfd, 1, (int) wait)) {
		case -1:
			if (errno != EINTR)
				return cq_fail(err, EX_UNAVAILABLE, "could not connect to database: poll: %s",
							   strerror(errno));
			break;
		case 0:
			break;
		default:
			st = PQconnectPoll(conn);
		}
	}
}

static PGconn *
connect_params(const char *const *keys, const char *const *vals, int expand,
			   const char *conninfo, cq_err *err)
{
	PGconn *conn = PQconnectStartParams(keys, vals, expand);

	if (conn == NULL) {
		cq_fail(err, EX_SOFTWARE, "could not connect to database: out of memory");
		return NULL;
	}
	if (PQstatus(conn) == CONNECTION_BAD) {
		connect_failed(conn, conninfo, err);
		PQfinish(conn);
		return NULL;
	}
	/*
	 * The server's refusal with its SQLSTATE (take_server_fields); and
	 * the warnings it sends while the session starts (a role's own ALTER
	 * ROLE ... SET with a bad value) logged as every notice is, not
	 * printed raw by libpq.
	 */
	PQsetErrorVerbosity(conn, PQERRORS_VERBOSE);
	PQsetNoticeReceiver(conn, on_notice, NULL);
	if (connect_wait(conn, conninfo, err) != 0) {
		PQfinish(conn);
		return NULL;
	}
	PQsetErrorVerbosity(conn, PQERRORS_DEFAULT);
	return conn;
}

/*
 * The server options cronq's own sessions start with: whatever the conninfo
 * or $PGOPTIONS says, then search_path pinned to pg_catalog (and pg_temp
 * last), so that no object another role created in a schema of the login
 * role's search_path can stand in for a built-in function or operator in
 * cronq's statements, which name every table and function of theirs with
 * its schema; transactions READ COMMITTED, what cronq's statements are
 * written for (a claim skips the rows others lock and takes the rest as
 * they are now), whatever the database's or role's default: under
 * SERIALIZABLE, runners side by side failed each other's claims; and
 * string literals as written (standard_conforming_strings), which the
 * functions migrate creates are parsed with. A new string.
 */
static char *
own_options(const char *conninfo, const char *extra)
{
	PQconninfoOption *opts = conninfo ? PQconninfoParse(conninfo, NULL) : NULL;
	const char *base = getenv("PGOPTIONS");
	char *out;

	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, "options") == 0 && o->val)
			base = o->val;
	out = xasprintf("%s%s-c search_path=pg_catalog,pg_temp -c default_transaction_isolation=read\\ committed "
					"-c standard_conforming_strings=on%s%s",
					base ? base : "", base && *base ? " " : "", extra ? " " : "", extra ? extra : "");
	PQconninfoFree(opts);
	return out;
}

PGconn *
pg_connect(const char *conninfo, cq_err *err)
{
	return pg_connect_with(conninfo, NULL, err);
}

/*
 * Parse a connection string: NULL with EX_USAGE when libpq cannot, and
 * its message without the string's passwords (libpq quotes the string, or
 * the part it choked on).
 */
static PQconninfoOption *
parse_conninfo(const char *conninfo, cq_err *err)
{
	char *why = NULL, *msg;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &why);

	if (opts)
		return opts;
	msg = why ? pg_redact(why, conninfo) : NULL;
	conninfo_refused(conninfo, msg ? msg : "out of memory", err);
	free(msg);
	PQfreemem(why);
	return NULL;
}

PGconn *
pg_connect_with(const char *conninfo, const char *settings, cq_err *err)
{
	/*
	 * dbname comes first so the keywords after it override what it expands
	 * to: client_encoding must be ours; application_name is only a fallback.
	 */
	const char *keys[5 + N_CONNECT_DEFAULTS] = {"dbname", "fallback_application_name", "client_encoding", "options"};
	const char *vals[5 + N_CONNECT_DEFAULTS] = {conninfo, "cronq", "UTF8", NULL};
	PQconninfoOption *parsed = NULL;
	size_t n = 4;
	char *options;
	PGconn *conn;

	/* A database name is not parsed; a connection string must parse. */
	if (pg_conninfo_is_string(conninfo) && (parsed = parse_conninfo(conninfo, err)) == NULL)
		return NULL;
	add_defaults(parsed, keys, vals, &n);
	PQconninfoFree(parsed);
	vals[3] = options = own_options(conninfo, settings);
	conn = connect_params(keys, vals, 1, conninfo, err);

	/*
	 * PgBouncer (before 1.20's track_extra_parameters) refuses the startup
	 * parameter "options": there, the login role's search_path stands.
	 */
	if (conn == NULL && err && strstr(err->msg, "unsupported startup parameter")) {
		vals[3] = "";
		cq_clear(err);
		conn = connect_params(keys, vals, 1, conninfo, err);
	}
	free(options);
	return conn;
}

/*
 * What an author's session starts with beyond the conninfo's options: the
 * server looks every second, while a statement runs, whether the client
 * is still there, and ends the statement if not. A runner killed (-9)
 * while a job's SQL ran left it running to its end on the server, and
 * the rescue could start the job again beside it: two runs at once of a
 * "transaction": false job, both committing. Servers on platforms that
 * cannot tell (the setting must be 0 there) and poolers that refuse the
 * startup parameter "options" get the session without it; so does a
 * connection service (service=, $PGSERVICE) when neither the conninfo nor
 * $PGOPTIONS gives options: the service's own would be overridden.
 */
#define AUTHOR_OPTIONS "-c client_connection_check_interval=1000"

PGconn *
pg_connect_as(const char *conninfo, const char *role, bool own_password, cq_err *err)
{
	PQconninfoOption *opts = NULL;
	const char **keys, **vals;
	size_t n = 0, i = 0, at_options;
	const char *options = NULL;
	bool service = false, check;
	char *with_check;
	PGconn *conn;

	if (conninfo && (opts = parse_conninfo(conninfo, err)) == NULL)
		return NULL;
	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		n++;
	keys = xcalloc(n + 5 + N_CONNECT_DEFAULTS, sizeof *keys);
	vals = xcalloc(n + 5 + N_CONNECT_DEFAULTS, sizeof *vals);
	/*
	 * Everything the runner's conninfo says but who logs in: an explicit
	 * password is the runner's own, and would stand in for the role's line
	 * in ~/.pgpass (libpq reads the password file only when none is given).
	 */
	for (PQconninfoOption *o = opts; o && o->keyword; o++) {
		if (o->val && strcmp(o->keyword, "options") == 0)
			options = o->val;	/* sent below, with the check after it */
		if (o->val && strcmp(o->keyword, "service") == 0)
			service = true;
		if (o->val == NULL || strcmp(o->keyword, "user") == 0 || strcmp(o->keyword, "options") == 0 ||
			(!own_password && strcmp(o->keyword, "password") == 0))
			continue;
		keys[i] = o->keyword;
		vals[i++] = o->val;
	}
	if (options == NULL)
		options = getenv("PGOPTIONS");
	with_check = xasprintf("%s%s" AUTHOR_OPTIONS, options ? options : "", options && *options ? " " : "");
	at_options = i;
	check = options || !(service || getenv("PGSERVICE"));
	if (check) {
		keys[i] = "options";
		vals[i++] = with_check;
	}
	keys[i] = "user";
	vals[i++] = role;
	keys[i] = "fallback_application_name";
	vals[i++] = "cronq";
	keys[i] = "client_encoding";
	vals[i++] = "UTF8";
	add_defaults(opts, keys, vals, &i);
	conn = connect_params(keys, vals, 0, conninfo, err);
	if (conn == NULL && err && check &&
		(strstr(err->msg, "client_connection_check_interval") || strstr(err->msg, "unsupported startup parameter"))) {
		vals[at_options] = options ? options : "";
		cq_clear(err);
		conn = connect_params(keys, vals, 0, conninfo, err);
	}
	free(with_check);
	free(keys);
	free(vals);
	PQconninfoFree(opts);
	return conn;
}

bool
pg_transient(const cq_err *err)
{
	return strcmp(err->sqlstate, "57014") == 0 || strcmp(err->sqlstate, "40001") == 0 ||
		strcmp(err->sqlstate, "40P01") == 0;
}

bool
pg_login_refused(const cq_err *err)
{
	/*
	 * libpq's own words (never translated: cronq sets no locale) for "not
	 * this role, not this way", and a server's in English; a server in any
	 * language is judged by its SQLSTATE: class 28 (invalid authorization:
	 * credentials, pg_hba.conf, no such role, NOLOGIN), 42501 (no CONNECT
	 * on the database), 3D000 (no such database).
	 */
	static const char *const refusals[] = {
		"authentication failed", "no password supplied", "password is required",
		"does not exist", "is not permitted to log in", "pg_hba.conf",
		"certificate", "permission denied for database", NULL,
	};

	if (strncmp(err->sqlstate, "28", 2) == 0 || strcmp(err->sqlstate, "42501") == 0 ||
		strcmp(err->sqlstate, "3D000") == 0)
		return true;
	for (const char *const *r = refusals; *r; r++)
		if (strstr(err->msg, *r))
			return true;
	return false;
}

bool
pg_server_unavailable(const cq_err *err)
{
	/*
	 * No code: libpq's own failure (unreachable, timed out, SSL). Class 08
	 * (connection exceptions; PgBouncer gives 08P01 to every error it
	 * passes on, a server's refusal or its own trouble reaching one);
	 * class 53 (insufficient resources: no connection slot, memory, disk);
	 * class 57 (shutting down, starting up).
	 */
	return err->sqlstate[0] == '\0' || strncmp(err->sqlstate, "08", 2) == 0 ||
		strncmp(err->sqlstate, "53", 2) == 0 || strncmp(err->sqlstate, "57", 2) == 0;
}

bool
pg_role_limit(const cq_err *err)
{
	/*
	 * 53300 is also a full server's code ("too many clients already"); the
	 * role's own limit is the one InitializeSessionUserId raises.
	 */
	return (strcmp(err->sqlstate, "53300") == 0 && strcmp(err->routine, "InitializeSessionUserId") == 0) ||
		strstr(err->msg, "too many connections for role") != NULL;
}

void
pg_close(PGconn *conn)
{
	if (conn)
		PQfinish(conn);
}

bool
pg_alive(PGconn *conn)
{
	return conn && PQstatus(conn) == CONNECTION_OK;
}

int64_t
pg_reconnect_limit_ms(PGconn *conn)
{
	PQconninfoOption *opts = PQconninfo(conn);
	char text[32];
	int64_t ms = connect_timeout_ms(conn, text, sizeof text);
	int hosts = 1;

	/* libpq tries each host (or hostaddr, when no host is given) in turn. */
	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if ((strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0) && o->val) {
			int n = 1;

			for (const char *c = o->val; *c; c++)
				n += *c == ',';
			if (n > hosts)
				hosts = n;
		}
	PQconninfoFree(opts);
	return ms > 0 ? ms * hosts : -1;
}

bool
pg_idle_alive(PGconn *conn)
{
	struct pollfd pfd;

	if (!pg_alive(conn))
		return false;
	pfd.fd = PQsocket(conn);
	pfd.events = POLLIN;
	pfd.revents = 0;
	return pfd.fd >= 0 && poll(&pfd, 1, 0) == 0;
}

/* Map a SQLSTATE (or its absence) to the exit code a caller should use. */
static int
code_for(PGconn *conn, const char *state)
{
	if (!pg_alive(conn) || state == NULL)
		return EX_TEMPFAIL;
	if (strncmp(state, "08", 2) == 0 ||
		strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 ||
		strcmp(state, "57P03") == 0 || strcmp(state, "40001") == 0 ||
		strcmp(state, "40P01") == 0 || strcmp(state, "53300") == 0 ||
		/* a lock or statement timeout, a cancel */
		strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0)
		return EX_TEMPFAIL;
	/*
	 * A read-only server (a standby) takes no writes until someone acts:
	 * unavailable, not "try again" (which a unit counts as success).
	 */
	if (strcmp(state, "25006") == 0)
		return EX_UNAVAILABLE;
	if (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0)
		return EX_DATAERR;
	/* A missing grant is a matter of configuration, not of the input. */
	if (strcmp(state, "42501") == 0)
		return EX_CONFIG;
	return EX_SOFTWARE;
}

/*
 * The connection await_result() last gave up in this thread, and why; read
 * (once) by pg_fail_result(). Each connection is used by one thread at a
 * time, and its failure is reported right after, in the same thread.
 */
static _Thread_local struct {
	PGconn	   *conn;
	char		why[200];
} given_up;

/* The role a command's statements need: see pg_set_needed_role(). */
static const char *needed_role = "cronq_user";

void
pg_set_needed_role(const char *role)
{
	needed_role = role;
}

/*
 * Whether the server refused a statement in one of its own privilege
 * checks ("permission denied for schema cronq", "… for table jobs", "… for
 * sequence …"), not in a cronq function that raised 42501 with its own
 * reason. Told by the routine that reported it, whose name, unlike the
 * message, is not translated.
 */
static bool
missing_privilege(const PGresult *res)
{
	static const char *const checks[] = {"nextval_internal", "currval", "setval_internal", "lastval", NULL};
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *routine = PQresultErrorField(res, PG_DIAG_SOURCE_FUNCTION);

	if (state == NULL || strcmp(state, "42501") != 0 || routine == NULL)
		return false;
	if (strncmp(routine, "aclcheck_error", 14) == 0)
		return true;
	for (const char *const *c = checks; *c; c++)
		if (strcmp(routine, *c) == 0)
			return true;
	return false;
}

/* A role name as SQL would need it written: bare when it can be, else quoted. */
static void
put_role(char *out, size_t len, const char *name)
{
	bool plain = name[0] != '\0' && (islower((unsigned char) name[0]) || name[0] == '_');
	size_t k = 0;

	for (const char *p = name; *p && plain; p++)
		plain = islower((unsigned char) *p) || isdigit((unsigned char) *p) || *p == '_';
	if (plain) {
		snprintf(out, len, "%s", name);
		return;
	}
	for (const char *p = name; *p && k + 3 < len; p++) {
		if (k == 0)
			out[k++] = '"';
		if (*p == '"')
			out[k++] = '"';
		out[k++] = *p;
	}
	out[k++] = '"';
	out[k] = '\0';
}

/*
 * The hint of a statement refused for want of a privilege that has none of
 * its own: the grant the command needs (pg_set_needed_role), for the
 * session's login.
 */
static void
grant_hint(PGconn *conn, cq_err *err)
{
	const char *user = conn ? PQuser(conn) : NULL;
	char role[200];

	put_role(role, sizeof role, user && *user ? user : "LOGIN");
	if (needed_role)
		cq_hint(err, "GRANT %s TO %s", needed_role, role);
	else
		cq_hint(err, "Log in as the owner of schema cronq (the role that ran the first \"cronq migrate\", "
				"which needs CREATE on the database), not as %s.", role);
}

int
pg_fail_result(PGconn *conn, const PGresult *res, cq_err *err)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	int code = code_for(conn, state);

	if (primary == NULL)
		primary = PQerrorMessage(conn);
	if (code == EX_TEMPFAIL && !pg_alive(conn)) {
		/* Given up by await_result(): why, rather than libpq's "server closed the connection". */
		if (conn && conn == given_up.conn) {
			given_up.conn = NULL;
			return cq_fail(err, code, "connection to database lost: %s", given_up.why);
		}
		return cq_fail(err, code, "connection to database lost: %s", primary);
	}
	cq_fail(err, code, "%s", primary);
	if (err) {
		const char *routine = res ? PQresultErrorField(res, PG_DIAG_SOURCE_FUNCTION) : NULL;

		snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
		snprintf(err->routine, sizeof err->routine, "%s", routine ? routine : "");
	}
	if (detail)
		cq_detail(err, "%s", detail);
	if (hint)
		cq_hint(err, "%s", hint);
	else if (res && missing_privilege(res))
		grant_hint(conn, err);
	return code;
}

/* A cancel request being sent by its own thread (PQcancel blocks). */
typedef struct cancel_req {
	PGcancel   *cancel;
	atomic_int	refs;			/* the thread's and the waiter's */
	atomic_bool done;
} cancel_req;

static void
cancel_release(cancel_req *r)
{
	if (atomic_fetch_sub(&r->refs, 1) == 1) {
		PQfreeCancel(r->cancel);
		free(r);
	}
}

static void *
cancel_main(void *arg)
{
	cancel_req *r = arg;
	char buf[256];

	PQcancel(r->cancel, buf, sizeof buf);
	atomic_store(&r->done, true);
	cancel_release(r);
	return NULL;
}

/* How long a cancel request given up on may take to be delivered. */
#define CANCEL_WAIT_MS 1000

/*
 * Ask the server to cancel conn's statement, so that one still running
 * there is rolled back rather than committed after cronq has given it up.
 * PQcancel() opens a connection of its own and blocks on it (no
 * connect_timeout, and a silent proxy never closes it): it runs in a
 * thread of its own, with every signal blocked, waited for CANCEL_WAIT_MS
 * at most and then left to finish (or not) on its own.
 */
static void
cancel_bounded(PGconn *conn)
{
	PGcancel   *cancel = PQgetCancel(conn);
	cancel_req *r;
	pthread_t	t;
	pthread_attr_t attr;
	sigset_t	all, old;
	int64_t		t0 = mono_ms();
	int			rc;

	if (cancel == NULL)
		return;
	r = xcalloc(1, sizeof *r);
	r->cancel = cancel;
	atomic_init(&r->refs, 2);
	atomic_init(&r->done, false);
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, cancel_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		atomic_store(&r->refs, 1);
		cancel_release(r);
		return;
	}
	while (!atomic_load(&r->done) && mono_ms() - t0 < CANCEL_WAIT_MS)
		poll(NULL, 0, 10);
	cancel_release(r);
}

/*
 * Give conn up: its statement cancelled when the server still listens
 * (cancel), its socket shut down so that the result then read is libpq's
 * error and the connection is bad; why is what pg_fail_result() reports.
 */
static void
give_up(PGconn *conn, int fd, bool cancel, const char *why)
{
	snprintf(given_up.why, sizeof given_up.why, "%s", why);
	if (cancel)
		cancel_bounded(conn);
	given_up.conn = conn;
	shutdown(fd, SHUT_RDWR);
	PQconsumeInput(conn);
}

/*
 * Whether bytes sent on fd still wait for the server's kernel to
 * acknowledge them: the network is what is silent, and tcp_user_timeout is
 * what bounds that (cronq's default 30 s, or the conninfo's), so that a
 * link cut for a while and back carries on as before. False on a Unix
 * socket.
 */
static bool
unacknowledged(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;

	memset(&ti, 0, sizeof ti);
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_unacked > 0;
}

/*
 * Send conn's statement and wait until its next result can be read
 * without blocking: its socket polled a tick at a time (the statement's
 * bytes flushed as the socket takes them: conn is non-blocking while a
 * statement is sent, see begin_send()), so that neither a server that
 * stopped answering nor one that stopped reading holds cronq for good.
 * When wait_stop() says to give up, or nothing came within the answer
 * limit (pg_set_answer_limit) though the server's kernel took every byte,
 * the connection is given up: the result then read is libpq's error, and
 * the connection is bad.
 */
static void
await_result(PGconn *conn)
{
	int64_t since = mono_ms();

	given_up.conn = NULL;
	for (;;) {
		int flushing = PQflush(conn);	/* 1: bytes still to send */
		struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
		int64_t waited, wait = CONNECT_TICK_MS;
		char why[200];

		if (flushing < 0 || pfd.fd < 0 || (flushing == 0 && !PQisBusy(conn)))
			return;
		if (wait_stop && wait_stop(since)) {
			waited = mono_ms() - since;
			log_full(LOG_WARNING, NULL, NULL, NULL, "no answer from the database %" PRId64
					 " ms after the stop request; its connection is given up", waited);
			snprintf(why, sizeof why, "no answer from the database %" PRId64
					 " ms after the stop request; the connection was given up", waited);
			give_up(conn, pfd.fd, false, why);
			return;
		}
		waited = mono_ms() - since;
		if (answer_limit_ms > 0 && waited >= answer_limit_ms && !unacknowledged(pfd.fd)) {
			char d[32];

			duration_format(answer_limit_ms, d, sizeof d);
			snprintf(why, sizeof why, "no answer from the database within %s (%s); the connection was given up",
					 d, answer_limit_name);
			give_up(conn, pfd.fd, true, why);
			return;
		}
		if (answer_limit_ms > 0 && answer_limit_ms - waited < wait)
			wait = answer_limit_ms - waited;
		if (flushing)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, (int) wait) < 0 && errno != EINTR)
			return;
		if ((pfd.revents & (POLLIN | POLLERR | POLLHUP)) && !PQconsumeInput(conn))
			return;
	}
}

/*
 * Before a statement is sent: conn non-blocking, so that libpq queues what
 * the socket does not take at once and await_result() flushes it, watched.
 * end_send() makes it blocking again (its queue is empty by then, or the
 * connection bad) for the callers that use libpq's blocking calls.
 */
static void
begin_send(PGconn *conn)
{
	PQsetnonblocking(conn, 1);
}

static void
end_send(PGconn *conn)
{
	if (pg_alive(conn) && PQisnonblocking(conn) && PQsetnonblocking(conn, 0) != 0) {
		/* Bytes left unsent: the statement's result was read, so the connection is broken. */
		shutdown(PQsocket(conn), SHUT_RDWR);
		PQconsumeInput(conn);
	}
}

static PGresult *
next_result(PGconn *conn)
{
	await_result(conn);
	return PQgetResult(conn);
}

/*
 * PQexecParams(), waiting as await_result() does: the last result, where
 * a COPY or a broken connection stops, as PQexec's.
 */
static PGresult *
exec_params(PGconn *conn, const char *sql, int nparams, const char *const *values)
{
	PGresult *last = NULL, *r;

	while ((r = PQgetResult(conn)) != NULL)
		PQclear(r);
	begin_send(conn);
	if (!PQsendQueryParams(conn, sql, nparams, NULL, values, NULL, NULL, 0)) {
		end_send(conn);
		return NULL;
	}
	while ((r = next_result(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(r);

		PQclear(last);
		last = r;
		if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH ||
			PQstatus(conn) == CONNECTION_BAD)
			break;
	}
	end_send(conn);
	return last;
}

PGresult *
pg_exec(PGconn *conn, const char *sql, int nparams, const char *const *values,
		pg_shape shape, cq_err *err)
{
	PGresult *res;
	ExecStatusType st;
	int rows;

	res = exec_params(conn, sql, nparams, values);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		pg_fail_result(conn, res, err);
		PQclear(res);
		return NULL;
	}
	rows = st == PGRES_TUPLES_OK ? PQntuples(res) : 0;
	if ((shape == PG_ONE && rows != 1) || (shape == PG_MAYBE_ONE && rows > 1)) {
		cq_fail(err, EX_SOFTWARE, "query returned %d row%s where %s expected",
				rows, rows == 1 ? "" : "s", shape == PG_ONE ? "one was" : "at most one was");
		PQclear(res);
		return NULL;
	}
	return res;
}

int
pg_exec_pair(PGconn *conn, const char *const sql[2], const int nparams[2],
			 const char *const *const values[2], PGresult *res[2], cq_err *err)
{
	int rc = 0;
	bool synced = false;

	res[0] = res[1] = NULL;
	if (!PQenterPipelineMode(conn))
		return pg_fail_result(conn, NULL, err);
	begin_send(conn);
	for (int i = 0; i < 2 && rc == 0; i++)
		if (!PQsendQueryParams(conn, sql[i], nparams[i], NULL, values[i], NULL, NULL, 0))
			rc = pg_fail_result(conn, NULL, err);
	if (rc == 0 && !PQpipelineSync(conn))
		rc = pg_fail_result(conn, NULL, err);
	/* Each statement's result, then NULL; after both, the sync. */
	for (int i = 0; i < 2 && pg_alive(conn); i++) {
		PGresult *r = next_result(conn), *end;
		ExecStatusType st = PQresultStatus(r);

		if (r == NULL)
			break;
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
			res[i] = r;
		else {
			if (rc == 0 && st != PGRES_PIPELINE_ABORTED)
				rc = pg_fail_result(conn, r, err);
			PQclear(r);
		}
		while ((end = next_result(conn)) != NULL)
			PQclear(end);
	}
	/*
	 * The transaction commits at the sync: until the sync is read, the
	 * results are not done. (A server stopped while the commit waits for a
	 * synchronous standby has sent them all the same, then closes: acting
	 * on them would run jobs whose claim the new primary never saw.)
	 */
	for (int k = 0; k < 4 && pg_alive(conn) && !synced; k++) {
		PGresult *r = next_result(conn);

		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC)
			synced = true;
		else if (r != NULL && rc == 0)
			rc = pg_fail_result(conn, r, err);
		PQclear(r);
	}
	if (synced)
		PQexitPipelineMode(conn);
	else if (rc == 0)
		rc = pg_fail_result(conn, NULL, err);
	end_send(conn);
	if (rc == 0 && (res[0] == NULL || res[1] == NULL))
		rc = pg_fail_result(conn, NULL, err);
	if (rc != 0) {
		PQclear(res[0]);
		PQclear(res[1]);
		res[0] = res[1] = NULL;
	}
	return rc;
}

bool
pg_bad_time(const char *sqlstate)
{
	return strcmp(sqlstate, "22007") == 0 || strcmp(sqlstate, "22008") == 0 || strcmp(sqlstate, "22009") == 0;
}

int
pg_run(PGconn *conn, const char *sql, int nparams, const char *const *values,
	   cq_err *err)
{
	PGresult *res = pg_exec(conn, sql, nparams, values, PG_NONE, err);

	if (res == NULL)
		return err ? err->code : EX_SOFTWARE;
	PQclear(res);
	return 0;
}

/* A statement being watched, and what was done to stop it. */
typedef struct watcher {
	PGconn	   *conn;
	bool		(*stop) (void *arg);
	void	   *arg;
	int64_t		abandon_ms;
	bool	   *stopped;
	int64_t		cancelled_at, cancel_sent;
} watcher;

typedef enum watch_state { WATCH_GO, WATCH_BROKEN, WATCH_ABANDONED } watch_state;

static void
send_cancel(watcher *w, int64_t now)
{
	PGcancel *cancel = PQgetCancel(w->conn);
	char buf[256];

	if (cancel) {
		PQcancel(cancel, buf, sizeof buf);
		PQfreeCancel(cancel);
	}
	w->cancel_sent = now;
}

/*
 * Free the notifications libpq holds for conn. None of cronq's sessions
 * listens, but a job's SQL may (LISTEN, then pg_notify to itself), and
 * libpq keeps every one until asked for it, which DISCARD ALL does not.
 */
static void
drop_notifies(PGconn *conn)
{
	PGnotify *n;

	while ((n = PQnotifies(conn)) != NULL)
		PQfreemem(n);
}

/*
 * Wait up to 50 ms for input and read it, its notifications dropped as
 * they come. The first time stop(arg) says so, the statement is cancelled
 * on the server; again every second, since the statement may catch the
 * cancel and go on; and abandon_ms after the first cancel it is given up
 * (the caller closes the session).
 */
static watch_state
watch(watcher *w)
{
	struct pollfd pfd = {PQsocket(w->conn), POLLIN, 0};
	int64_t now;

	if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
		return WATCH_BROKEN;
	if (!PQconsumeInput(w->conn))
		return WATCH_BROKEN;
	drop_notifies(w->conn);
	now = mono_ms();
	if (!*w->stopped && w->stop && w->stop(w->arg)) {
		*w->stopped = true;
		w->cancelled_at = now;
		send_cancel(w, now);
	} else if (*w->stopped && now - w->cancelled_at >= w->abandon_ms)
		return WATCH_ABANDONED;
	else if (*w->stopped && now - w->cancel_sent >= 1000)
		send_cancel(w, now);
	return WATCH_GO;
}

/*
 * A COPY to or from the client started by the statement (a job's "COPY …
 * TO STDOUT"): libpq then hands out the same COPY result until the data is
 * exchanged, so it is ended here. Data sent to cronq is read and dropped,
 * still watched; a COPY that wants data from cronq is told there is none,
 * which makes the statement fail. False when the connection failed or the
 * statement was abandoned.
 */
static bool
end_copy(watcher *w, ExecStatusType status)
{
	char *data;
	int n;

	if (status == PGRES_COPY_IN)
		return PQputCopyEnd(w->conn, "cronq sends no data to COPY FROM STDIN") == 1;
	while ((n = PQgetCopyData(w->conn, &data, 1)) != -1) {
		if (n > 0)
			PQfreemem(data);
		else if (n == -2 || watch(w) != WATCH_GO)
			return false;
	}
	return true;
}

PGresult *
pg_exec_watched(PGconn *conn, const char *sql, int nparams, const char *const *values,
				bool (*stop) (void *arg), void *arg, int64_t abandon_ms, int *failed_at, bool *stopped,
				PGresult **first_row)
{
	watcher w = {conn, stop, arg, abandon_ms, stopped, 0, 0};
	PGresult *keep = NULL, *res, *first = NULL;
	int index = 0, sent;

	*failed_at = -1;
	*stopped = false;
	if (first_row)
		*first_row = NULL;
	sent = nparams < 0 ? PQsendQuery(conn, sql)
		: PQsendQueryParams(conn, sql, nparams, NULL, values, NULL, NULL, 0);
	if (!sent)
		return NULL;
	/* Rows one at a time, each dropped: a result is never held whole. */
	PQsetSingleRowMode(conn);
	for (;;) {
		while (PQisBusy(conn))
			if (watch(&w) != WATCH_GO)
				goto given_up;
		if ((res = PQgetResult(conn)) == NULL)
			break;
		switch (PQresultStatus(res)) {
		case PGRES_SINGLE_TUPLE:
			/* The statement's first row, kept until its end says whether it is the last's. */
			if (first_row && first == NULL)
				first = res;
			else
				PQclear(res);
			continue;
		case PGRES_COPY_IN:
		case PGRES_COPY_OUT:
		case PGRES_COPY_BOTH:
			/* The statement's own result follows the copy. */
			if (!end_copy(&w, PQresultStatus(res))) {
				PQclear(res);
				goto given_up;
			}
			PQclear(res);
			continue;
		default:
			break;
		}
		if (PQresultStatus(res) == PGRES_FATAL_ERROR && *failed_at < 0) {
			*failed_at = index;
			PQclear(keep);
			keep = res;
		} else if (*failed_at < 0) {
			PQclear(keep);
			keep = res;
			if (first_row) {
				PQclear(*first_row);
				*first_row = first;
				first = NULL;
			}
		} else
			PQclear(res);
		PQclear(first);
		first = NULL;
		index++;
		if (PQstatus(conn) == CONNECTION_BAD)
			break;
	}
	goto out;

given_up:
	/* The connection failed, or the statement is left running. */
	if (*failed_at < 0)
		*failed_at = index;
out:
	/* Those read with the last results too. */
	drop_notifies(conn);
	PQclear(first);
	if (first_row && *failed_at >= 0) {
		PQclear(*first_row);
		*first_row = NULL;
	}
	return keep;
}

int
pg_timestamp(PGconn *conn, const char *text, int64_t *t, cq_err *err)
{
	static const char sql[] =
		"select floor(extract(epoch from x))::bigint from (select $1::timestamptz as x) t where isfinite(x)";
	PGresult *res = pg_exec(conn, sql, 1, (const char *[]) {text}, PG_MAYBE_ONE, err);
	int rc = 0;

	if (res == NULL)
		return err->code;
	if (PQntuples(res) == 0)
		rc = cq_fail(err, EX_DATAERR, "time \"%s\" is not finite", text);
	else
		*t = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return rc;
}
