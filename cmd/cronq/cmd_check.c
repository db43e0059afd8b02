/*
 * cmd_check — "cronq check [--max-lag D[,D]] …": one line and an exit code
 * in the monitoring-plugin convention (0 OK, 1 WARNING, 2 CRITICAL,
 * 3 UNKNOWN), whatever happens: a usage error or a check that outlives
 * --timeout is an UNKNOWN line too. Options, lib/report/stats, a verdict; it
 * changes nothing and prints nothing else.
 */
#include <ctype.h>
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
#include "report/stats.h"
#include "schema/migrate.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/utf8.h"
#include "util/xalloc.h"

enum {
	OPT_MAX_LAG = OPT_FIRST_CMD, OPT_MAX_DEAD, OPT_MAX_FAILED, OPT_MAX_STUCK,
	OPT_MAX_SILENCE, OPT_MAX_OVERDUE, OPT_TIMEOUT,
};

/* How long a check may take when --timeout is not given. */
#define CHECK_DEFAULT_TIMEOUT_MS 10000

/* The monitoring-plugin states, which are also the exit codes. */
enum {
	STATE_OK = 0, STATE_WARNING = 1, STATE_CRITICAL = 2, STATE_UNKNOWN = 3,
};

static const char *const state_names[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};

/* A threshold: a value greater than a level is at that level. */
typedef struct limit {
	bool		has_warn, has_crit;
	int64_t		warn, crit;		/* counts, or milliseconds for durations */
} limit;

typedef struct check_args {
	limit		lag, dead, failed, stuck, silence, overdue;
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
		   "that level. D is a duration (90s, 5m, 1h30m), N a count.\n"
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

/* "CRIT" or "WARN,CRIT"; a warning level above the critical one is refused. */
static int
parse_limit(const cli_src *src, const char *arg, bool duration, limit *lim)
{
	const char *comma = strchr(arg, ',');
	int rc;

	memset(lim, 0, sizeof *lim);
	if (comma == NULL) {
		if ((rc = parse_level(src, arg, duration, &lim->crit)) != 0)
			return rc;
		lim->has_crit = true;
		return 0;
	}
	{
		char *warn = xstrndup(arg, (size_t) (comma - arg));

		rc = parse_level(src, warn, duration, &lim->warn);
		free(warn);
	}
	if (rc == 0)
		rc = parse_level(src, comma + 1, duration, &lim->crit);
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
			return parse_limit(src, arg, true, &a->lag);
		case OPT_MAX_DEAD:
			return parse_limit(src, arg, false, &a->dead);
		case OPT_MAX_FAILED:
			return parse_limit(src, arg, false, &a->failed);
		case OPT_MAX_STUCK:
			return parse_limit(src, arg, false, &a->stuck);
		case OPT_MAX_SILENCE:
			return parse_limit(src, arg, true, &a->silence);
		case OPT_MAX_OVERDUE:
			return parse_limit(src, arg, true, &a->overdue);
		case OPT_TIMEOUT:
			return cli_duration(src, arg, 1000, &a->timeout_ms);
	}
	return 0;
}

/* One judged number: its words in the message and its perfdata entry. */
typedef struct item {
	const char *label;			/* "last wake" */
	const char *perf;			/* perfdata label, "silence" */
	const char *suffix;			/* after the value ("ago"), or NULL */
	bool		duration;
	bool		known;			/* false: no value (no wake ever) */
	int64_t		value;			/* count, or milliseconds */
	const limit *lim;
	const char *detail;			/* "(nightly)", or NULL */
} item;

/* The state an item is in: an unknown value exceeds every level given. */
static int
judge(const item *it, int64_t *level)
{
	const limit *l = it->lim;

	if (l->has_crit && (!it->known || it->value > l->crit)) {
		*level = l->crit;
		return STATE_CRITICAL;
	}
	if (l->has_warn && (!it->known || it->value > l->warn)) {
		*level = l->warn;
		return STATE_WARNING;
	}
	return STATE_OK;
}

/* A human value: "1m30s" (whole seconds) or "7". */
static void
put_human(buf *out, int64_t v, bool duration, bool whole_seconds)
{
	char d[64];

	if (!duration) {
		buf_printf(out, "%" PRId64, v);
		return;
	}
	duration_format(whole_seconds ? v / 1000 * 1000 : v, d, sizeof d);
	buf_puts(out, d);
}

/* A perfdata number: seconds (with milliseconds when needed) or a count. */
static void
put_perf(buf *out, int64_t v, bool duration)
{
	if (!duration)
		buf_printf(out, "%" PRId64, v);
	else if (v % 1000 == 0)
		buf_printf(out, "%" PRId64, v / 1000);
	else
		buf_printf(out, "%" PRId64 ".%03" PRId64, v / 1000, v % 1000);
}

/* Flatten a message (libpq's are multi-line) onto one line. */
static void
put_one_line(buf *out, const char *s)
{
	bool space = false;

	while (isspace((unsigned char) *s))
		s++;
	for (; *s; s++) {
		if (isspace((unsigned char) *s)) {
			space = true;
			continue;
		}
		if (space)
			buf_putc(out, ' ');
		space = false;
		buf_putc(out, *s);
	}
}

/* Print the UNKNOWN line for a message (which may quote anything the
 * command line or the server said, control characters included). */
static int
unknown_text(const char *msg)
{
	buf out = BUF_INIT;
	char *clean = utf8_printable(msg, false);

	buf_puts(&out, "CRONQ UNKNOWN - ");
	put_one_line(&out, clean);
	printf("%s\n", buf_str(&out));
	buf_free(&out);
	free(clean);
	return STATE_UNKNOWN;
}

/* An error's UNKNOWN line: its message, and its hint when it has one. */
static int
unknown(const cq_err *err)
{
	char *line = err->hint[0] ? xasprintf("%s; hint: %s", err->msg, err->hint) : xstrdup(err->msg);

	unknown_text(line);
	free(line);
	return STATE_UNKNOWN;
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
	_exit(STATE_UNKNOWN);
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

/*
 * What is wrong whatever the limits given: no runner ever woke (cron does
 * not call "cronq run", or it never reached the database), or an enabled
 * schedule a wake cannot plan (it would never run).
 */
static int
always_wrong(const stats_health *h)
{
	int state = STATE_OK;

	if (!h->woke || h->unplannable > 0)
		state = STATE_CRITICAL;
	return state;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"max-lag", required_argument, NULL, OPT_MAX_LAG},
		{"max-dead", required_argument, NULL, OPT_MAX_DEAD},
		{"max-failed", required_argument, NULL, OPT_MAX_FAILED},
		{"max-stuck", required_argument, NULL, OPT_MAX_STUCK},
		{"max-silence", required_argument, NULL, OPT_MAX_SILENCE},
		{"max-overdue", required_argument, NULL, OPT_MAX_OVERDUE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	check_args a;
	cli_common common;
	cq_err err = {0};
	stats_health h;
	buf out = BUF_INIT, perf = BUF_INIT;
	char detail[300] = "", usage[1024];
	int first, rc, state;

	memset(&a, 0, sizeof a);
	a.timeout_ms = CHECK_DEFAULT_TIMEOUT_MS;
	/* A usage error is an UNKNOWN line too: a monitoring system shows it. */
	cli_capture_errors(usage, sizeof usage);
	rc = cli_parse("check", argc, argv, "d:vh", opts, on_opt, &a, &common, &first);
	if (rc == 0 && !common.help)
		rc = cli_check_args("check", argc, argv, first, 0, 0);
	cli_capture_errors(NULL, 0);
	if (rc != 0)
		return unknown_text(usage[0] ? usage : "invalid command line");
	if (common.help) {
		help();
		return 0;
	}

	if (read_health(&a, cli_conninfo(&common), &h, &err) != 0)
		return unknown(&err);

	state = always_wrong(&h);
	if (h.overdue_name[0])
		snprintf(detail, sizeof detail, "(%.250s)", h.overdue_name);
	{
		const item items[] = {
			{"lag", "lag", NULL, true, true, h.lag_ms, &a.lag, NULL},
			{"dead", "dead", NULL, false, true, h.dead, &a.dead, NULL},
			{"failed", "failed", NULL, false, true, h.failed, &a.failed, NULL},
			{"stuck", "stuck", NULL, false, true, h.stuck, &a.stuck, NULL},
			{"last wake", "silence", "ago", true, h.woke, h.silence_ms, &a.silence, NULL},
			{"overdue", "overdue", NULL, true, true, h.overdue_ms, &a.overdue, detail[0] ? detail : NULL},
		};

		for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
			const item *it = &items[i];
			int64_t level = 0;
			int s = judge(it, &level);

			if (s > state)
				state = s;
			buf_printf(&out, "%s%s ", i ? ", " : "", it->label);
			if (it->known) {
				put_human(&out, it->value, it->duration, true);
				if (it->suffix)
					buf_printf(&out, " %s", it->suffix);
			} else
				buf_puts(&out, "never");
			if (s != STATE_OK && it->known) {
				buf_puts(&out, " > ");
				put_human(&out, level, it->duration, false);
			}
			if (it->detail)
				buf_printf(&out, " %s", it->detail);

			buf_printf(&perf, " %s=", it->perf);
			if (it->known) {
				put_perf(&perf, it->duration ? it->value / 1000 * 1000 : it->value, it->duration);
				if (it->duration)
					buf_putc(&perf, 's');
			} else
				buf_putc(&perf, 'U');
			if (it->lim->has_warn || it->lim->has_crit) {
				buf_putc(&perf, ';');
				if (it->lim->has_warn)
					put_perf(&perf, it->lim->warn, it->duration);
				if (it->lim->has_crit) {
					buf_putc(&perf, ';');
					put_perf(&perf, it->lim->crit, it->duration);
				}
			}
		}
	}
	if (h.unplannable > 0) {
		buf_printf(&out, ", %" PRId64 " schedule%s cannot run (%s)", h.unplannable,
				   h.unplannable == 1 ? "" : "s", h.unplannable_name);
		buf_printf(&perf, " unplannable=%" PRId64, h.unplannable);
	}
	printf("CRONQ %s - %s |%s\n", state_names[state], buf_str(&out), buf_str(&perf));
	buf_free(&out);
	buf_free(&perf);
	return state;
}
