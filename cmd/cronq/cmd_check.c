/*
 * cmd_check — "cronq check [--max-lag D[,D]] …": one line and an exit code
 * in the monitoring-plugin convention (0 OK, 1 WARNING, 2 CRITICAL,
 * 3 UNKNOWN), whatever happens: a usage error or a check that outlives
 * --timeout is an UNKNOWN line too. Options, lib/report/stats, then the
 * verdict of lib/report/check; it changes nothing and prints nothing else.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "report/check.h"
#include "report/stats.h"
#include "schema/migrate.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/xalloc.h"

enum {
	OPT_MAX_LAG = OPT_FIRST_CMD, OPT_MAX_DEAD, OPT_MAX_FAILED, OPT_MAX_STUCK,
	OPT_MAX_SILENCE, OPT_MAX_OVERDUE, OPT_TIMEOUT,
};

/* How long a check may take when --timeout is not given. */
#define CHECK_DEFAULT_TIMEOUT_MS 10000

typedef struct check_args {
	check_limits lim;
	int64_t		timeout_ms;		/* the whole check, connecting included */
} check_args;

static void
help(void)
{
	printf("cronq check judges the health of the queue for a monitoring system: one\n"
		   "line on standard output and the exit status of a monitoring plugin\n"
		   "(0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN: database unreachable, schema\n"
		   "missing or not this version's, a bad option, out of time). With no\n"
		   "limits it still reports what is always wrong: no runner ever woke\n"
		   "(CRITICAL).\n\n"
		   "Usage:\n"
		   "  cronq check [OPTION]...\n\n"
		   "Thresholds: LIMIT is CRIT, or WARN,CRIT; a value greater than a level is at\n"
		   "that level. D is a duration (90s, 1h30m, 1.5h, \"2 hours\"), N a count.\n"
		   "      --max-lag D[,D]       age of the oldest due job (queued or failed,\n"
		   "                            run_at <= now)\n"
		   "      --max-dead N[,N]      dead jobs\n"
		   "      --max-failed N[,N]    failed jobs waiting for their retry\n"
		   "      --max-stuck N[,N]     running jobs whose lease expired\n"
		   "      --max-silence D[,D]   time since a runner last woke (\"cronq run\"); no\n"
		   "                            wake at all exceeds it\n"
		   "      --max-overdue D[,D]   how long the most overdue enabled schedule's next\n"
		   "                            run has been due without being enqueued\n"
		   "      --timeout D           give up after D, connecting included (default\n"
		   "                            10s): UNKNOWN\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Output: CRONQ STATE - lag 0s, dead 0, failed 0, stuck 0, last wake 12s ago,\n"
		   "overdue 0s | lag=0s;300;900 dead=0;;5 ... (a level exceeded is shown as\n"
		   "\"dead 7 > 5\"; perfdata: seconds and counts, then WARN;CRIT when given).\n");
}

/* Parse one level of a LIMIT: a duration (ms) or a count. */
static int
parse_level(const cli_src *src, const char *text, bool duration, int64_t *out)
{
	if (duration)
		return cli_duration(src, text, 0, out);
	return cli_int(src, text, 0, INT64_MAX, out);
}

/*
 * "CRIT" or "WARN,CRIT"; a warning level above the critical one is refused.
 * A message about one level of two says which level it is.
 */
static int
parse_limit(const cli_src *src, const char *arg, bool duration, check_limit *lim)
{
	const char *comma = strchr(arg, ',');
	cli_src level;
	int rc;

	memset(lim, 0, sizeof *lim);
	if (comma == NULL) {
		if ((rc = parse_level(src, arg, duration, &lim->crit)) != 0)
			return rc;
		lim->has_crit = true;
		return 0;
	}
	if (strchr(comma + 1, ',') != NULL) {
		cli_error("invalid value \"%s\" for %s: must be CRIT or WARN,CRIT (one or two levels)",
				  arg, src->name);
		return EX_USAGE;
	}
	{
		char *warn = xstrndup(arg, (size_t) (comma - arg));

		snprintf(level.name, sizeof level.name, "the warning level of %.64s", src->name);
		rc = parse_level(&level, warn, duration, &lim->warn);
		free(warn);
	}
	if (rc == 0) {
		snprintf(level.name, sizeof level.name, "the critical level of %.64s", src->name);
		rc = parse_level(&level, comma + 1, duration, &lim->crit);
	}
	if (rc != 0)
		return rc;
	lim->has_warn = lim->has_crit = true;
	if (lim->warn > lim->crit) {
		cli_error("invalid value \"%s\" for %s: the warning level must not exceed the critical level",
				  arg, src->name);
		return EX_USAGE;
	}
	return 0;
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	check_args *a = state;

	switch (opt) {
		case OPT_MAX_LAG:
			return parse_limit(src, arg, true, &a->lim.lag);
		case OPT_MAX_DEAD:
			return parse_limit(src, arg, false, &a->lim.dead);
		case OPT_MAX_FAILED:
			return parse_limit(src, arg, false, &a->lim.failed);
		case OPT_MAX_STUCK:
			return parse_limit(src, arg, false, &a->lim.stuck);
		case OPT_MAX_SILENCE:
			return parse_limit(src, arg, true, &a->lim.silence);
		case OPT_MAX_OVERDUE:
			return parse_limit(src, arg, true, &a->lim.overdue);
		case OPT_TIMEOUT:
			return cli_duration(src, arg, 1000, &a->timeout_ms);
	}
	return 0;
}

/* Print the UNKNOWN line for a message (which may quote anything the
 * command line or the server said, control characters included). */
static int
unknown_text(const char *msg)
{
	buf out = BUF_INIT;

	check_unknown(msg, &out);
	printf("%s\n", buf_str(&out));
	buf_free(&out);
	return CHECK_UNKNOWN;
}

/* An error's UNKNOWN line: its message, and its hint when it has one. */
static int
unknown(const cq_err *err)
{
	char *line = err->hint[0] ? xasprintf("%s; hint: %s", err->msg, err->hint) : xstrdup(err->msg);

	unknown_text(line);
	free(line);
	return CHECK_UNKNOWN;
}

/*
 * --timeout: an interval timer bounds the whole check, name resolution and
 * every host libpq tries included (which connect_timeout, per host and in
 * whole seconds, cannot). When it fires, the handler writes the line made
 * ready for the current phase and exits: write(2) and _exit(2) are safe in
 * a signal handler, and nothing else has been printed yet.
 */
enum { PHASE_CONNECT, PHASE_QUERY, N_PHASES };

static char timeout_line[N_PHASES][128];
static size_t timeout_len[N_PHASES];
static volatile sig_atomic_t phase = PHASE_CONNECT;

static void
on_timeout(int sig)
{
	ssize_t n;

	(void) sig;
	n = write(STDOUT_FILENO, timeout_line[phase], timeout_len[phase]);
	(void) n;
	_exit(CHECK_UNKNOWN);
}

static void
set_timer(int64_t ms)
{
	struct itimerval t = {{0, 0}, {(time_t) (ms / 1000), (suseconds_t) (ms % 1000 * 1000)}};

	setitimer(ITIMER_REAL, &t, NULL);
}

/* Make the timeout lines ready, then start the timer. */
static void
arm_timeout(int64_t ms)
{
	static const char *const doing[N_PHASES] = {"connecting to the database", "waiting for the database"};
	struct sigaction sa;
	char d[64];

	duration_format(ms, d, sizeof d);
	for (int i = 0; i < N_PHASES; i++) {
		snprintf(timeout_line[i], sizeof timeout_line[i], "CRONQ UNKNOWN - timed out after %s %s\n", d, doing[i]);
		timeout_len[i] = strlen(timeout_line[i]);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_timeout;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	set_timer(ms);
}

/*
 * Read the numbers within the timeout. The session asks the server to give
 * up any statement of its own after the same time (statement_timeout), so
 * that a statement waiting for a lock does not wait on once the check has
 * gone.
 */
static int
read_health(const check_args *a, const char *conninfo, stats_health *h, cq_err *err)
{
	char settings[64];
	PGconn *conn;
	int rc;

	snprintf(settings, sizeof settings, "-c statement_timeout=%" PRId64, a->timeout_ms);
	/* The timer ends the check first; no statement needs a limit of its own beyond it. */
	pg_set_answer_limit(a->timeout_ms, "--timeout");
	arm_timeout(a->timeout_ms);
	if ((conn = pg_connect_with(conninfo, settings, err)) == NULL)
		rc = err->code;
	else {
		phase = PHASE_QUERY;
		if ((rc = migrate_check(conn, err)) == 0)
			rc = stats_health_read(conn, h, err);
		pg_close(conn);
	}
	set_timer(0);
	return rc;
}

int
cmd_check(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"max-lag", required_argument, OPT_MAX_LAG, 0, NULL},
		{"max-dead", required_argument, OPT_MAX_DEAD, 0, NULL},
		{"max-failed", required_argument, OPT_MAX_FAILED, 0, NULL},
		{"max-stuck", required_argument, OPT_MAX_STUCK, 0, NULL},
		{"max-silence", required_argument, OPT_MAX_SILENCE, 0, NULL},
		{"max-overdue", required_argument, OPT_MAX_OVERDUE, 0, NULL},
		{"timeout", required_argument, OPT_TIMEOUT, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	check_args a;
	cli_common common;
	cq_err err = {0};
	stats_health h;
	buf out = BUF_INIT;
	char usage[1024];
	int first, rc, state;

	memset(&a, 0, sizeof a);
	a.timeout_ms = CHECK_DEFAULT_TIMEOUT_MS;
	/* A usage error is an UNKNOWN line too: a monitoring system shows it. */
	cli_capture_errors(usage, sizeof usage);
	rc = cli_parse("check", argc, argv, "d:vh", opts, on_opt, &a, &common, &first);
	if (rc == 0 && !common.help)
		rc = cli_check_args("check", NULL, argc, argv, first, 0, 0);
	cli_capture_errors(NULL, 0);
	if (rc != 0)
		return unknown_text(usage[0] ? usage : "invalid command line");
	if (common.help) {
		help();
		return 0;
	}

	if (read_health(&a, cli_conninfo(&common), &h, &err) != 0)
		return unknown(&err);

	state = check_verdict(&h, &a.lim, &out);
	printf("%s\n", buf_str(&out));
	buf_free(&out);
	return state;
}
