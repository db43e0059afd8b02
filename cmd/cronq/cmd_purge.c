/*
 * cmd_purge — "cronq purge [--older-than D] [--status S]…": what the purge
 * task does, on demand: options, then purge_run() of lib/queue/purge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/purge.h"
#include "util/log.h"

enum {
	OPT_OLDER_THAN = OPT_FIRST_CMD, OPT_STATUS,
};

/* The purge task's defaults: 14 days of succeeded and cancelled jobs. */
#define DEFAULT_OLDER_THAN_MS ((int64_t) 14 * 86400 * 1000)

typedef struct purge_args {
	int64_t		older_than_ms;
	const char *statuses[PURGE_MAX_RULES];
	int			nstatuses;
} purge_args;

static void
help(void)
{
	printf("cronq purge deletes finished jobs and their runs (cronq.job_runs), oldest\n"
		   "first, in batches of %d, each its own short transaction.\n\n"
		   "Usage:\n"
		   "  cronq purge [OPTION]...\n\n"
		   "Options:\n"
		   "      --older-than DURATION only jobs finished longer ago than DURATION\n"
		   "                            (default 14d; 90s, 1h30m, 1.5h, \"2 days\")\n"
		   "      --status STATUS       only jobs in STATUS: succeeded, dead or cancelled;\n"
		   "                            repeatable (default: succeeded and cancelled)\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "On a terminal (or with -v) says \"purged N jobs\", with progress before it;\n"
		   "silent otherwise (under cron).\n",
		   PURGE_BATCH);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	purge_args *a = state;

	switch (opt) {
		case OPT_OLDER_THAN:
			return cli_duration(src, arg, 0, &a->older_than_ms);
		case OPT_STATUS:
			if (!purge_status_valid(arg)) {
				log_error("invalid value \"%s\" for %s: must be succeeded, dead or cancelled", arg, src->name);
				return EX_USAGE;
			}
			for (int i = 0; i < a->nstatuses; i++)
				if (strcmp(a->statuses[i], arg) == 0)
					return 0;
			a->statuses[a->nstatuses++] = arg;	/* at most the three valid ones */
			return 0;
	}
	return 0;
}

static bool progress_shown;

static void
progress(int64_t deleted)
{
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rcronq: purge: %" PRId64 " job%s deleted", deleted, deleted == 1 ? "" : "s");
	progress_shown = true;
}

int
cmd_purge(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"older-than", required_argument, OPT_OLDER_THAN, 0, NULL},
		{"status", required_argument, OPT_STATUS, CLI_REPEATS, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	purge_args a;
	purge_rule rules[PURGE_MAX_RULES];
	cli_common common;
	cq_err err = {0};
	PGconn *conn;
	int64_t deleted = 0;
	int first, rc, n = 0;

	memset(&a, 0, sizeof a);
	a.older_than_ms = DEFAULT_OLDER_THAN_MS;
	if ((rc = cli_parse("purge", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	/* Purging every role's jobs is cronq_admin's. */
	pg_set_needed_role("cronq_admin");
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("purge", NULL, argc, argv, first, 0, 0)) != 0)
		return rc;
	if (a.nstatuses == 0) {
		a.statuses[a.nstatuses++] = "succeeded";
		a.statuses[a.nstatuses++] = "cancelled";
	}
	for (int i = 0; i < a.nstatuses; i++)
		rules[n++] = (purge_rule) {a.statuses[i], a.older_than_ms};

	if ((rc = cli_connect(&common, &conn, &err)) == 0)
		rc = purge_run(conn, rules, n, NULL, NULL, progress, &deleted, &err);
	pg_close(conn);
	if (progress_shown)
		fputc('\n', stderr);
	/* Batches commit one by one: what was deleted before a failure stays deleted. */
	if (rc != 0) {
		if (deleted > 0)
			log_warning("%" PRId64 " job%s purged before the error", deleted,
						deleted == 1 ? " was" : "s were");
		return cli_report(&err);
	}
	cli_tell("purged %" PRId64 " job%s", deleted, deleted == 1 ? "" : "s");
	return 0;
}
