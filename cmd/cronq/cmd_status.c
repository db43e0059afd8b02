/*
 * cmd_status — "cronq status [--json | --prometheus | --html | --csv]
 * [--output FILE]": options, then lib/report/stats, then one of the
 * renderings of the same document: JSON, lib/report/prometheus,
 * lib/report/status_html (with the timelines of stats_timelines), or
 * lib/report/status_text for people (or its jobs table as CSV).
 * Judges nothing (that is `cronq check`) and changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "report/prometheus.h"
#include "report/stats.h"
#include "report/status_html.h"
#include "report/status_text.h"
#include "report/table.h"
#include "schema/migrate.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/json.h"

enum {
	OPT_JSON = OPT_FIRST_CMD, OPT_PROMETHEUS, OPT_HTML, OPT_OUTPUT, OPT_CSV, OPT_LIMIT,
};

/* The most status --limit takes (0: all). */
#define MAX_LIMIT 1000000

typedef struct status_args {
	bool		json;
	bool		prometheus;
	bool		html;
	bool		csv;
	const char *output;
	int64_t		limit;
} status_args;

static void
help(void)
{
	printf("cronq status shows the state of the queue: jobs by queue, type and status,\n"
		   "the lag of each queue, running jobs whose lease expired, dead jobs,\n"
		   "schedules with their next run and last outcome, and the last runner wake.\n\n"
		   "Usage:\n"
		   "  cronq status [OPTION]...\n\n"
		   "Options:\n"
		   "      --json                JSON output (keys listed in cronq(1))\n"
		   "      --prometheus          Prometheus text format for node_exporter's\n"
		   "                            textfile collector (metrics cronq_*)\n"
		   "      --html                one self-contained HTML page (tables, and a\n"
		   "                            timeline per queue and schedule for the last\n"
		   "                            24 hours and 7 days): no script, no external asset\n"
		   "      --csv                 the table of jobs by queue, type and status as\n"
		   "                            CSV (RFC 4180: a header row, values whole)\n"
		   "      --output FILE         write to FILE, atomically (a temporary file in the\n"
		   "                            same directory, then rename), not standard output\n"
		   "      --limit N             list at most N queues and N schedules, those in\n"
		   "                            trouble first (default %d; 0: all); the totals\n"
		   "                            count all, and a line says how many are not listed\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Lag is the age of the oldest due job (queued or failed, run_at <= now).\n"
		   "A schedule is overdue when its next run is more than %ds in the past.\n"
		   "On a terminal the text output ends with the last 24 hours of each queue,\n"
		   "one character per hour, oldest first, from the attempts that finished:\n"
		   "  .  none finished   o  all succeeded   x  some failed (failed, timeout,\n"
		   "                                           lease expired)\n"
		   "On a terminal the text is coloured (not when NO_COLOR is set) and fitted\n"
		   "to its width (or to COLUMNS), long values clipped with \"...\".\n",
		   STATS_LIST_MAX, STATS_OVERDUE_GRACE_S);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	status_args *a = state;

	(void) src;
	switch (opt) {
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_PROMETHEUS:
			a->prometheus = true;
			break;
		case OPT_HTML:
			a->html = true;
			break;
		case OPT_OUTPUT:
			a->output = arg;
			break;
		case OPT_CSV:
			a->csv = true;
			break;
		case OPT_LIMIT:
			return cli_int(src, arg, 0, MAX_LIMIT, &a->limit);
	}
	return 0;
}

int
cmd_status(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"json", no_argument, OPT_JSON, 0, "prometheus html csv"},
		{"prometheus", no_argument, OPT_PROMETHEUS, 0, "html csv"},
		{"html", no_argument, OPT_HTML, 0, "csv"},
		{"csv", no_argument, OPT_CSV, 0, NULL},
		{"output", required_argument, OPT_OUTPUT, 0, NULL},
		{"limit", required_argument, OPT_LIMIT, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	status_args a = {.limit = STATS_LIST_MAX};
	cli_common common;
	cq_err err = {0};
	buf out = BUF_INIT;
	PGconn *conn;
	json_t *doc = NULL, *tl = NULL;
	int first, rc;

	if ((rc = cli_parse("status", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("status", NULL, argc, argv, first, 0, 0)) != 0)
		return rc;
	if (a.json && a.prometheus)
		return cli_usage_error("status", "--json and --prometheus cannot be used together");
	if (a.html && (a.json || a.prometheus))
		return cli_usage_error("status", a.json ? "--json and --html cannot be used together"
							   : "--prometheus and --html cannot be used together");
	if (a.csv && (a.json || a.prometheus || a.html))
		return cli_usage_error("status", "--%s and --csv cannot be used together",
							   a.json ? "json" : a.prometheus ? "prometheus" : "html");
	if (a.output && a.output[0] == '\0')
		return cli_usage_error("status", "--output needs a file name");

	/*
	 * No JIT: each statement runs once, and compiling the timelines' took
	 * longer than running them (0.5 s of 1.3 s over a week of 120,000 jobs).
	 */
	if ((conn = pg_connect_with(cli_conninfo(&common), "-c jit=off", &err)) == NULL)
		return cli_report(&err);
	if ((rc = migrate_check(conn, &err)) == 0 && (doc = stats_status(conn, (int) a.limit, &err)) == NULL)
		rc = err.code;
	if (rc == 0 && a.html && (tl = stats_timelines(conn, doc, &err)) == NULL)
		rc = err.code;
	pg_close(conn);
	if (rc != 0) {
		json_decref(doc);
		return cli_report(&err);
	}

	if (a.json) {
		char *text = cq_json_text(doc);

		buf_puts(&out, text);
		free(text);
	} else if (a.prometheus)
		prometheus_render(&out, doc);
	else if (a.html)
		status_html(&out, doc, tl);
	else {
		table_mode mode = table_mode_for(a.output ? -1 : STDOUT_FILENO, a.csv);

		status_text(&out, doc, !a.csv && a.output == NULL && isatty(STDOUT_FILENO), &mode);
	}
	json_decref(doc);
	json_decref(tl);

	if (a.output) {
		if ((rc = file_write_atomic(a.output, buf_str(&out), out.len, &err)) != 0)
			cli_report(&err);
	} else
		fwrite(buf_str(&out), 1, out.len, stdout);
	buf_free(&out);
	return rc;
}
