/*
 * cmd_retry — "cronq retry ID…" and "cronq retry --dead [--type T] [--queue Q]":
 * options, then lib/queue/inspect. Never touches a queued or running job.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/inspect.h"
#include "queue/status.h"
#include "util/log.h"
#include "util/xalloc.h"

enum {
	OPT_DEAD = OPT_FIRST_CMD, OPT_TYPE, OPT_QUEUE,
};

#define MAX_IDS 100000

typedef struct retry_args {
	const char *types[CLI_MAX_FILTERS];
	const char *queues[CLI_MAX_FILTERS];
	inspect_filter filter;
	bool		dead;
} retry_args;

static void
help(void)
{
	printf("cronq retry puts finished or failed jobs back in the queue, due now:\n"
		   "status queued, attempts 0, lock, cancel request, last error and finish\n"
		   "time cleared. Their history (cronq.job_runs) is kept.\n\n"
		   "Usage:\n"
		   "  cronq retry ID... [OPTION]...\n"
		   "  cronq retry --dead [--type TYPE]... [--queue NAME]... [OPTION]...\n\n"
		   "Options:\n"
		   "      --dead                retry every dead job (only those of the given\n"
		   "                            --type and --queue values, when given)\n"
		   "      --type TYPE           with --dead: only jobs of task TYPE; repeatable\n"
		   "      --queue NAME          with --dead: only jobs of queue NAME; repeatable\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "By ID, dead, failed, succeeded and cancelled jobs are retried; queued and\n"
		   "running ones are left alone, with a warning, and so is a job whose unique\n"
		   "key an active job holds (of several with one key, the first is retried).\n"
		   "On a terminal (or with -v) says \"retried N jobs\"; silent otherwise (under\n"
		   "cron). Exits 65 when an ID does not exist, and then retries none (all or\n"
		   "nothing). A member of cronq_user retries only the jobs it enqueued (another\n"
		   "role's do not exist for it); cronq_admin, any.\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	retry_args *a = state;

	switch (opt) {
		case OPT_DEAD:
			a->dead = true;
			return 0;
		case OPT_TYPE:
			return cli_add_filter(a->types, &a->filter.ntypes, CLI_MAX_FILTERS, arg, src);
		case OPT_QUEUE:
			return cli_add_filter(a->queues, &a->filter.nqueues, CLI_MAX_FILTERS, arg, src);
	}
	return 0;
}

int
cmd_retry(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"dead", no_argument, OPT_DEAD, 0, NULL},
		{"type", required_argument, OPT_TYPE, CLI_REPEATS, NULL},
		{"queue", required_argument, OPT_QUEUE, CLI_REPEATS, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	retry_args a;
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	int64_t *ids = NULL;
	retry_outcome *result = NULL;
	int64_t retried = 0,
				kept = 0;
	int first, rc, n;

	memset(&a, 0, sizeof a);
	a.filter.types = a.types;
	a.filter.queues = a.queues;
	if ((rc = cli_parse("retry", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	n = argc - first;
	if (a.dead && n > 0)
		return cli_usage_error("retry", "job IDs and --dead cannot be used together");
	if (!a.dead && (a.filter.ntypes > 0 || a.filter.nqueues > 0))
		return cli_usage_error("retry", "--type and --queue go with --dead");
	if (!a.dead && n == 0)
		return cli_usage_error("retry", "missing job IDs (or --dead)");
	if ((rc = cli_check_args("retry", NULL, argc, argv, first, 0, MAX_IDS)) != 0)
		return rc;
	result = xcalloc((size_t) (n > 0 ? n : 1), sizeof *result);
	if ((rc = cli_job_ids(argc, argv, first, &ids, &n)) != 0)
		goto out_free;

	if ((rc = cli_connect(&common, &conn, &err)) == 0)
		rc = a.dead ? inspect_retry_dead(conn, &a.filter, &retried, &kept, &err)
			: inspect_retry(conn, ids, n, result, &retried, &err);
	pg_close(conn);
	if (rc != 0) {
		rc = cli_report(&err);
		goto out_free;
	}
	/* All or nothing: an id that does not exist, and none was retried. */
	for (int i = 0; i < n; i++)
		if (result[i].status[0] == '\0') {
			log_error("job %" PRId64 " does not exist; nothing retried", ids[i]);
			rc = EX_DATAERR;
		}
	if (rc != 0)
		goto out_free;
	for (int i = 0; i < n; i++) {
		if (result[i].retried) {
			log_info("job %" PRId64 " retried", ids[i]);
			continue;
		} else {
			job_status st = job_status_parse(result[i].status, strlen(result[i].status));

			/* A finished job left alone: its unique key is another's. */
			log_warning("job %" PRId64 " is %s; not retried%s", ids[i], result[i].status,
						st == JOB_STATUS_QUEUED || st == JOB_STATUS_RUNNING ? ""
						: ": an active job holds its unique key");
		}
	}
	if (kept > 0)
		log_warning("%" PRId64 " dead job%s not retried: active jobs hold their unique keys",
					kept, kept == 1 ? "" : "s");
	cli_tell("retried %" PRId64 " job%s", retried, retried == 1 ? "" : "s");
out_free:
	free(ids);
	free(result);
	return rc;
}
