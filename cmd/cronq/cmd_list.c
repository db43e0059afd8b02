/*
 * cmd_list — "cronq list" (jobs, newest first, filtered) and "cronq show ID"
 * (one job with every attempt): options, then lib/queue/inspect. --json
 * prints the database's JSON untouched; lib/report/jobs_text lays out the
 * text for people (and list's CSV).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/inspect.h"
#include "report/jobs_text.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/log.h"

enum {
	OPT_STATUS = OPT_FIRST_CMD, OPT_QUEUE, OPT_TYPE, OPT_LIMIT, OPT_JSON, OPT_CSV,
};

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000000

typedef struct list_args {
	const char *statuses[CLI_MAX_FILTERS];
	const char *queues[CLI_MAX_FILTERS];
	const char *types[CLI_MAX_FILTERS];
	inspect_filter filter;
	bool		json;
	bool		csv;
} list_args;

static const char connection_help[] =
	"  -v, --verbose             say what is done\n"
	"      --log-format FORMAT   text (default) or json\n"
	"  -h, --help                show this help, then exit\n\n"
	"Connection options:\n"
	"  -d, --db CONNINFO         libpq connection string or URI\n";

static void
list_help(void)
{
	printf("cronq list shows jobs, newest (highest id) first.\n\n"
		   "Usage:\n"
		   "  cronq list [OPTION]...\n\n"
		   "Options:\n"
		   "      --status STATUS       only jobs in STATUS: queued, blocked, running,\n"
		   "                            succeeded, failed, dead or cancelled; repeatable\n"
		   "      --queue NAME          only jobs of queue NAME; repeatable\n"
		   "      --type TYPE           only jobs of task TYPE; repeatable\n"
		   "      --limit N             at most N jobs (default %d)\n"
		   "      --json                a JSON array, one job object per line\n"
		   "      --csv                 CSV (RFC 4180): a header row, then one row per\n"
		   "                            job, every value whole\n"
		   "%s\n"
		   "Repeated values of one option match any of them; different options must\n"
		   "all match. \"cronq show ID\" shows one job with every attempt.\n"
		   "On a terminal the table is coloured (not when NO_COLOR is set) and fitted\n"
		   "to its width (or to COLUMNS), long values clipped with \"...\".\n",
		   DEFAULT_LIMIT, connection_help);
}

static void
show_help(void)
{
	printf("cronq show shows one job and every attempt of it (outcome, error,\n"
		   "duration, the tails of its output and stderr, its result).\n\n"
		   "Usage:\n"
		   "  cronq show ID [OPTION]...\n\n"
		   "Options:\n"
		   "      --json                the job as a JSON object, its attempts in \"runs\"\n"
		   "%s\n"
		   "Exits 65 when the job does not exist.\n",
		   connection_help);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	list_args *a = state;
	inspect_filter *f = &a->filter;

	switch (opt) {
		case OPT_STATUS:
			if (!inspect_status_valid(arg)) {
				log_error("invalid value \"%s\" for %s: must be queued, blocked, running, succeeded, failed, dead or cancelled",
						  arg, src->name);
				return EX_USAGE;
			}
			return cli_add_filter(a->statuses, &f->nstatuses, CLI_MAX_FILTERS, arg, src);
		case OPT_QUEUE:
			return cli_add_filter(a->queues, &f->nqueues, CLI_MAX_FILTERS, arg, src);
		case OPT_TYPE:
			return cli_add_filter(a->types, &f->ntypes, CLI_MAX_FILTERS, arg, src);
		case OPT_LIMIT:
			return cli_int(src, arg, 1, MAX_LIMIT, &f->limit);
		case OPT_JSON:
			a->json = true;
			return 0;
		case OPT_CSV:
			a->csv = true;
			return 0;
	}
	return 0;
}

/* Decode the database's JSON for text output. */
static json_t *
decode(const char *text, cq_err *err)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);

	if (v == NULL)
		cq_fail(err, EX_SOFTWARE, "could not decode the database's answer: %s", jerr.text);
	return v;
}

/*
 * The database's JSON answer as it is (--json), or decoded and printed by
 * render, for people or as CSV (mode).
 */
static int
print_answer(const char *text, bool json, const table_mode *mode,
			 void (*render) (buf *, const json_t *, const table_mode *), cq_err *err)
{
	buf out = BUF_INIT;
	json_t *v;

	if (json) {
		char *safe = cq_json_safe(text);

		printf("%s\n", safe);
		free(safe);
		return 0;
	}
	if ((v = decode(text, err)) == NULL)
		return err->code;
	render(&out, v, mode);
	fwrite(buf_str(&out), 1, out.len, stdout);
	buf_free(&out);
	json_decref(v);
	return 0;
}

int
cmd_list(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"status", required_argument, OPT_STATUS, CLI_REPEATS, NULL},
		{"queue", required_argument, OPT_QUEUE, CLI_REPEATS, NULL},
		{"type", required_argument, OPT_TYPE, CLI_REPEATS, NULL},
		{"limit", required_argument, OPT_LIMIT, 0, NULL},
		{"json", no_argument, OPT_JSON, 0, "csv"},
		{"csv", no_argument, OPT_CSV, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	list_args a;
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	table_mode mode;
	char *text = NULL;
	int64_t count = 0;
	int first, rc;

	memset(&a, 0, sizeof a);
	a.filter.statuses = a.statuses;
	a.filter.queues = a.queues;
	a.filter.types = a.types;
	a.filter.limit = DEFAULT_LIMIT;
	if ((rc = cli_parse("list", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		list_help();
		return 0;
	}
	if ((rc = cli_check_args("list", NULL, argc, argv, first, 0, 0)) != 0)
		return rc;
	if (a.json && a.csv)
		return cli_usage_error("list", "--json and --csv cannot be used together");
	mode = table_mode_for(STDOUT_FILENO, a.csv);
	if ((rc = cli_connect(&common, &conn, &err)) != 0 ||
		(rc = inspect_list(conn, &a.filter, !a.json, &text, &count, &err)) != 0)
		goto out;
	rc = print_answer(text, a.json, &mode, jobs_list_text, &err);
out:
	pg_close(conn);
	free(text);
	return rc ? cli_report(&err) : 0;
}

/* jobs_show_text for print_answer: one job is no table. */
static void
show_text(buf *out, const json_t *job, const table_mode *mode)
{
	(void) mode;
	jobs_show_text(out, job);
}

int
cmd_show(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"json", no_argument, OPT_JSON, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	list_args a;
	cli_common common;
	cq_err err = {0};
	cli_src src = {"job id"};
	PGconn *conn = NULL;
	char *text = NULL;
	int64_t id;
	int first, rc;

	memset(&a, 0, sizeof a);
	if ((rc = cli_parse("show", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		show_help();
		return 0;
	}
	if ((rc = cli_check_args("show", "ID", argc, argv, first, 1, 1)) != 0 ||
		(rc = cli_int(&src, argv[first], 1, INT64_MAX, &id)) != 0)
		return rc;
	if ((rc = cli_connect(&common, &conn, &err)) != 0 ||
		(rc = inspect_show(conn, id, !a.json, &text, &err)) != 0)
		goto out;
	rc = print_answer(text, a.json, NULL, show_text, &err);
out:
	pg_close(conn);
	free(text);
	return rc ? cli_report(&err) : 0;
}
