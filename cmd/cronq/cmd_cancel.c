/* cmd_cancel — "cronq cancel ID…": options, then lib/queue/admin. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/admin.h"
#include "util/log.h"
#include "util/xalloc.h"

static void
help(void)
{
	printf("cronq cancel cancels jobs: queued or failed ones at once; a running one is\n"
		   "stopped by its worker at its next heartbeat and ends cancelled.\n\n"
		   "Usage:\n"
		   "  cronq cancel ID... [OPTION]...\n\n"
		   "Options:\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "On a terminal (or with -v) says what it did, one line per job; silent\n"
		   "otherwise (under cron). Exits 65 when an ID does not exist, and then cancels\n"
		   "none (all or nothing). A member of cronq_user cancels only the jobs it\n"
		   "enqueued (another role's do not exist for it); cronq_admin, any.\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	(void) opt;
	(void) arg;
	(void) src;
	(void) state;
	return 0;
}

int
cmd_cancel(int argc, char **argv)
{
	static const cli_option opts[] = {
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	int64_t *ids = NULL;
	cancel_result *result;
	int first, rc, n;

	if ((rc = cli_parse("cancel", argc, argv, "d:vh", opts, on_opt, NULL, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("cancel", "ID", argc, argv, first, 1, 100000)) != 0)
		return rc;
	result = xcalloc((size_t) (argc - first), sizeof *result);
	if ((rc = cli_job_ids(argc, argv, first, &ids, &n)) != 0)
		goto out_free;
	if ((rc = cli_connect(&common, &conn, &err)) == 0)
		rc = jobs_cancel(conn, ids, n, result, &err);
	pg_close(conn);
	if (rc != 0) {
		rc = cli_report(&err);
		goto out_free;
	}
	for (int i = 0; i < n; i++) {
		switch (result[i]) {
			case CANCEL_DONE:
				cli_tell("%" PRId64 " cancelled", ids[i]);
				break;
			case CANCEL_REQUESTED:
				cli_tell("%" PRId64 " cancelling: running; its worker stops it at its next heartbeat", ids[i]);
				break;
			case CANCEL_FINISHED:
				log_warning("job %" PRId64 " has already finished; not cancelled", ids[i]);
				break;
			case CANCEL_NOT_FOUND:
				log_error("job %" PRId64 " does not exist; nothing cancelled", ids[i]);
				rc = EX_DATAERR;
				break;
			case CANCEL_UNDONE:
				break;
		}
	}
out_free:
	free(ids);
	free(result);
	return rc;
}
