/*
 * cmd_check — "cronq check [--max-lag D[,D]] …": one line and an exit code
 * in the monitoring-plugin convention (0 OK, 1 WARNING, 2 CRITICAL,
 * 3 UNKNOWN). Options, lib/queue/stats, a verdict; it changes nothing and
 * prints nothing else (usage errors aside, which exit 64 as everywhere).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/stats.h"
#include "schema/migrate.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/xalloc.h"

enum {
	OPT_MAX_LAG = OPT_FIRST_CMD, OPT_MAX_DEAD, OPT_MAX_FAILED, OPT_MAX_STUCK,
	OPT_MAX_SILENCE, OPT_MAX_OVERDUE,
};

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
} check_args;

static void
help(void)
{
	printf("cronq check judges the health of the queue for a monitoring system: one\n"
		   "line on standard output and the exit status of a monitoring plugin\n"
		   "(0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN: database unreachable, schema\n"
		   "missing or not this version's).\n\n"
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
		log_error("invalid value \"%s\" for %s: the warning level must not exceed the critical level",
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

static int
unknown(const cq_err *err)
{
	buf out = BUF_INIT;

	buf_puts(&out, "CRONQ UNKNOWN - ");
	put_one_line(&out, err->msg);
	printf("%s\n", buf_str(&out));
	buf_free(&out);
	return STATE_UNKNOWN;
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
		CLI_COMMON_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	check_args a;
	cli_common common;
	cq_err err = {0};
	stats_health h;
	PGconn *conn;
	buf out = BUF_INIT, perf = BUF_INIT;
	char detail[300] = "";
	int first, rc, state = STATE_OK;

	memset(&a, 0, sizeof a);
	if ((rc = cli_parse("check", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("check", argc, argv, first, 0, 0)) != 0)
		return rc;

	if ((conn = pg_connect(cli_conninfo(&common), &err)) == NULL)
		return unknown(&err);
	if ((rc = migrate_check(conn, &err)) == 0)
		rc = stats_health_read(conn, &h, &err);
	pg_close(conn);
	if (rc != 0)
		return unknown(&err);

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
	printf("CRONQ %s - %s |%s\n", state_names[state], buf_str(&out), buf_str(&perf));
	buf_free(&out);
	buf_free(&perf);
	return state;
}
