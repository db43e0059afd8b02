/* cmd_limit — "cronq limit KEY [--max-running N] [--rate N/DURATION] [--clear]" and
 * "cronq limit list": options, then lib/queue/flow. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/flow.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/json.h"

enum {
	OPT_MAX_RUNNING = OPT_FIRST_CMD, OPT_RATE, OPT_CLEAR, OPT_JSON, OPT_CSV,
};

/* The most a limit allows (cronq.limits' checks). */
#define LIMIT_MAX 1000000
#define RATE_MAX 10000
#define PER_MIN_MS 1000
#define PER_MAX_MS (24 * 3600 * 1000LL)

typedef struct limit_args {
	int64_t		max_running;	/* 0: not given */
	int64_t		rate;			/* 0: not given */
	int64_t		per_ms;
	bool		clear;
	bool		json;
	bool		csv;
} limit_args;

static void
help(void)
{
	printf("cronq limit caps the jobs of a key across every runner and host: how many\n"
		   "run at once, how many start in any window of a duration. The claim decides,\n"
		   "counting the running jobs' own rows (a crashed runner's count until their\n"
		   "lease is rescued) and, for a rate, the starts it logged.\n\n"
		   "Usage:\n"
		   "  cronq limit KEY [--max-running N] [--rate N/DURATION]\n"
		   "  cronq limit KEY --clear\n"
		   "  cronq limit KEY               show KEY's limits\n"
		   "  cronq limit list [--json | --csv]\n"
		   "                                every limit, its running jobs and room\n\n"
		   "Keys:\n"
		   "  queue:NAME, type:NAME, schedule:NAME, or a limit key PREFIX:NAME that jobs\n"
		   "  carry (cronq enqueue --limit-key tenant:42)\n\n"
		   "Options:\n"
		   "      --max-running N       at most N jobs of KEY running at once (1-1000000)\n"
		   "      --rate N/DURATION     at most N starts (1-10000) in any window of\n"
		   "                            DURATION (1s to 1d; e.g. 50/1m, 10/2s, 1000/1d)\n"
		   "      --clear               remove KEY's limits\n"
		   "      --json                cronq limit list: a JSON array\n"
		   "      --csv                 cronq limit list: CSV (RFC 4180), a header row\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "A limit not given is kept: --max-running then --rate set both. Jobs waiting\n"
		   "for room are due (and count in the lag); a runner whose claim finds only\n"
		   "them waits for room until --max-runtime (55s without it). Members of\n"
		   "cronq_admin (and the owner of cronq's tables) set limits; everyone reads\n"
		   "them. Exits 64 on a malformed key or value, 78 on a key the role may not\n"
		   "limit. On a terminal the table is coloured (not when NO_COLOR is set) and\n"
		   "fitted to its width (or to COLUMNS).\n");
}

/* "N/DURATION" into *n and *per_ms: 0, or EX_USAGE with the error printed. */
static int
parse_rate(const cli_src *src, const char *arg, int64_t *n, int64_t *per_ms)
{
	const char *slash = strchr(arg, '/');
	char num[32], why[256];

	if (slash == NULL || (size_t) (slash - arg) >= sizeof num || slash == arg) {
		cli_error("invalid value for %s: \"%s\": a rate is N/DURATION, such as 50/1m", src->name, arg);
		return EX_USAGE;
	}
	memcpy(num, arg, (size_t) (slash - arg));
	num[slash - arg] = '\0';
	if (cli_int(src, num, 1, RATE_MAX, n) != 0)
		return EX_USAGE;
	/* Whole seconds: the window is shown, and read by scripts, in seconds. */
	if (duration_parse(slash + 1, per_ms, why, sizeof why) != 0 || *per_ms < PER_MIN_MS ||
		*per_ms > PER_MAX_MS || *per_ms % 1000 != 0) {
		cli_error("invalid value for %s: \"%s\": the window is a whole number of seconds from 1s to 1d",
				  src->name, slash + 1);
		return EX_USAGE;
	}
	return 0;
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	limit_args *a = state;

	switch (opt) {
		case OPT_MAX_RUNNING:
			return cli_int(src, arg, 1, LIMIT_MAX, &a->max_running);
		case OPT_RATE:
			return parse_rate(src, arg, &a->rate, &a->per_ms);
		case OPT_CLEAR:
			a->clear = true;
			return 0;
		case OPT_JSON:
			a->json = true;
			return 0;
		case OPT_CSV:
			a->csv = true;
			return 0;
	}
	return 0;
}

/* "N/W" with W the window in the duration syntax's largest whole unit. */
static void
put_rate(buf *out, int64_t n, int64_t per_s)
{
	static const struct {
		int64_t		secs;
		char		unit;
	} units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};

	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
		if (per_s % units[k].secs == 0) {
			buf_printf(out, "%" PRId64 "/%" PRId64 "%c", n, per_s / units[k].secs, units[k].unit);
			return;
		}
}

/* The limits as a table for people, or as CSV. */
static void
print_limits(const json_t *limits, bool csv)
{
	static const char *const head[] = {"KEY", "MAX-RUNNING", "RUNNING", "RATE", "STARTED", "ROOM",
									   "SET-BY"};
	table t = {.ncols = 7, .head = head, .right = 0x36u, .shrink = 0x41u};
	table_mode mode = table_mode_for(STDOUT_FILENO, csv);
	const json_t *l;
	size_t i;
	buf out = BUF_INIT;

	json_array_foreach(limits, i, l) {
		buf rate = BUF_INIT;

		table_cell(&t, "%s", cq_json_str(l, "key", "?"));
		if (json_is_integer(json_object_get(l, "max_running")))
			table_cell(&t, "%" PRId64, cq_json_int(l, "max_running"));
		else
			table_cell(&t, "-");
		table_cell(&t, "%" PRId64, cq_json_int(l, "running"));
		if (json_is_integer(json_object_get(l, "rate"))) {
			put_rate(&rate, cq_json_int(l, "rate"), cq_json_int(l, "per_seconds"));
			table_cell(&t, "%s", buf_str(&rate));
			table_cell(&t, "%" PRId64, cq_json_int(l, "started"));
		} else {
			table_cell(&t, "-");
			table_cell(&t, "-");
		}
		table_cell(&t, "%" PRId64 "%s", cq_json_int(l, "room"),
				   json_is_true(json_object_get(l, "full")) ? " (full)" : "");
		if (json_is_true(json_object_get(l, "full")))
			table_style(&t, TERM_YELLOW);
		table_cell(&t, "%s", cq_json_str(l, "set_by", ""));
		buf_free(&rate);
	}
	if (json_array_size(limits) == 0 && !csv)
		buf_puts(&out, "No limits.\n");
	else
		table_flush(&t, &out, &mode);
	fputs(buf_str(&out), stdout);
	buf_free(&out);
}

int
cmd_limit(int argc, char **argv)
{
	static const cli_option opts[] = {
		CLI_COMMON_OPTIONS,
		{"max-running", required_argument, OPT_MAX_RUNNING, 0, "clear"},
		{"rate", required_argument, OPT_RATE, 0, "clear"},
		{"clear", no_argument, OPT_CLEAR, 0, "max-running rate"},
		{"json", no_argument, OPT_JSON, 0, "csv"},
		{"csv", no_argument, OPT_CSV, 0, NULL},
		{NULL, 0, 0, 0, NULL},
	};
	cli_common common;
	limit_args a = {0};
	cq_err err = {0};
	PGconn *conn = NULL;
	json_t *limits = NULL;
	const char *key;
	char why[512];
	bool listing, showing, had = false;
	int first, rc;

	if ((rc = cli_parse("limit", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("limit", "KEY", argc, argv, first, 1, 1)) != 0)
		return rc;
	key = argv[first];
	listing = strcmp(key, "list") == 0;
	showing = listing || (!a.clear && a.max_running == 0 && a.rate == 0);
	if (a.clear && (a.max_running || a.rate))
		return cli_usage_error("limit", "--clear cannot be used with --max-running or --rate");
	if (listing && (a.clear || a.max_running || a.rate))
		return cli_usage_error("limit", "cronq limit list takes no limit: name a KEY to set one");
	if (a.json && a.csv)
		return cli_usage_error("limit", "--json and --csv cannot be used together");
	if ((a.json || a.csv) && !showing)
		return cli_usage_error("limit", "--%s goes with cronq limit list or cronq limit KEY",
							   a.json ? "json" : "csv");
	/* A limit set needs a key that can match; one shown or cleared, any. */
	if (!listing && !showing && !a.clear && (rc = cli_flow_key("limit", key)) != 0)
		return rc;
	if (!listing && flow_key_invalid(key, why, sizeof why))
		return cli_usage_error("limit", "%s", why);
	if ((rc = cli_connect(&common, &conn, &err)) != 0)
		goto out;
	if (a.clear)
		rc = flow_clear_limit(conn, key, &had, &err);
	else if (!showing)
		rc = flow_set_limit(conn, key, a.max_running, a.rate, a.per_ms, &err);
	if (rc == 0 && (showing || !a.clear))
		rc = flow_limits(conn, listing ? NULL : key, &limits, &err);
out:
	pg_close(conn);
	if (rc != 0)
		return cli_report(&err);
	if (a.clear)
		cli_tell("%s %s", key, had ? "limits cleared" : "had no limits");
	else if (a.json) {
		char *text = cq_json_text(limits);

		fputs(text, stdout);
		free(text);
	} else if (!listing && !a.csv && json_array_size(limits) == 0)
		printf("%s has no limits\n", key);
	else if (showing || listing || a.csv)
		print_limits(limits, a.csv);
	else {
		/* A limit set: one line for a person (silent under cron, SPEC 12). */
		const json_t *l = json_array_get(limits, 0);
		buf line = BUF_INIT;

		buf_printf(&line, "%s limited:", key);
		if (json_is_integer(json_object_get(l, "max_running")))
			buf_printf(&line, " at most %" PRId64 " running", cq_json_int(l, "max_running"));
		if (json_is_integer(json_object_get(l, "rate"))) {
			buf_puts(&line, json_is_integer(json_object_get(l, "max_running")) ? ", " : " ");
			put_rate(&line, cq_json_int(l, "rate"), cq_json_int(l, "per_seconds"));
			buf_puts(&line, " starts");
		}
		cli_tell("%s", buf_str(&line));
		buf_free(&line);
	}
	json_decref(limits);
	return 0;
}
