/*
 * cmd_wait — "cronq wait ID… [--timeout D] [--json]": options, then
 * lib/queue/wait; the exit code says how the jobs ended. SIGINT and
 * SIGTERM end the wait at once, with their default action, even where
 * the caller ignored them (a shell's background job ignores SIGINT).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/wait.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/json.h"
#include "util/log.h"
#include "util/xalloc.h"

enum {
	OPT_TIMEOUT = OPT_FIRST_CMD, OPT_JSON,
};

/* Exit 1: a job ended dead or cancelled (as a failed check would). */
#define EXIT_JOB_FAILED 1

/* How long a statement sent at the deadline may take before it is given up. */
#define LAST_POLL_MS 250

typedef struct wait_args {
	int64_t		timeout_ms;		/* < 0: none; 0: one look */
	bool		json;
} wait_args;

/* When the wait gives up (mono_ms()), for pg_set_wait_stop; 0: never. */
static int64_t deadline;

static void
help(void)
{
	printf("cronq wait waits until jobs are finished (succeeded, dead or cancelled)\n"
		   "and prints how each ended.\n\n"
		   "Usage:\n"
		   "  cronq wait ID... [OPTION]...\n\n"
		   "Options:\n"
		   "      --timeout DURATION    give up after DURATION (0s: look once; default:\n"
		   "                            wait as long as it takes)\n"
		   "      --json                one JSON object per job and line: id, status,\n"
		   "                            error_code, last_error, result\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Prints \"ID STATUS\" per job, in the order given. A failed job is still\n"
		   "retrying, so not finished. Exits 0 when every job succeeded, 1 when one\n"
		   "ended dead or cancelled, 75 on timeout (the jobs still pending named on\n"
		   "stderr), 65 when an ID is not a job the caller can see.\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	wait_args *a = state;

	switch (opt) {
		case OPT_TIMEOUT:
			return cli_duration(src, arg, 0, &a->timeout_ms);
		case OPT_JSON:
			a->json = true;
			return 0;
	}
	return 0;
}

/* Nothing to undo: the wait writes nothing. Die of the signal, as the
 * default action would have. */
static void
on_signal(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The last poll, sent at the deadline, gets LAST_POLL_MS to answer. */
static bool
past_deadline(int64_t started_ms)
{
	int64_t now = mono_ms();

	return deadline > 0 && now >= deadline && now - started_ms >= LAST_POLL_MS;
}

/* Each job's line: "ID STATUS", or the database's JSON object. */
static int
print_jobs(PGconn *conn, const wait_job *jobs, int n, bool json, cq_err *err)
{
	char *text = NULL, *safe;
	int rc;

	if (!json) {
		for (int i = 0; i < n; i++)
			printf("%" PRId64 " %s\n", jobs[i].id, jobs[i].status);
		return 0;
	}
	if ((rc = wait_report_json(conn, jobs, n, &text, err)) != 0)
		return rc;
	safe = cq_json_safe(text);
	printf("%s\n", safe);
	free(safe);
	free(text);
	return 0;
}

int
cmd_wait(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"timeout", required_argument, OPT_TIMEOUT, 0, NULL},
		{"json", no_argument, OPT_JSON, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	wait_args a = {-1, false};
	cli_common common;
	cq_err err = {0}, scratch = {0};
	PGconn *conn = NULL;
	int64_t *ids = NULL;
	wait_job *jobs = NULL;
	int first, rc, n = 0, waited;
	bool missing = false, failed = false;

	if ((rc = cli_parse("wait", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("wait", "ID", argc, argv, first, 1, 100000)) != 0)
		return rc;
	/* An ID that is not a number is bad data, as one that is no job. */
	if ((rc = cli_job_ids(argc, argv, first, &ids, &n)) != 0) {
		rc = EX_DATAERR;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (a.timeout_ms >= 0) {
		deadline = mono_ms() + a.timeout_ms;
		pg_set_wait_stop(past_deadline);
	}
	jobs = xcalloc((size_t) n, sizeof *jobs);
	for (int i = 0; i < n; i++)
		jobs[i].id = ids[i];
	if ((rc = cli_connect(&common, &conn, &err)) != 0 || (rc = wait_poll(conn, jobs, n, &err)) != 0)
		goto report;
	for (int i = 0; i < n; i++)
		if (jobs[i].status[0] == '\0') {
			log_error("job %" PRId64 " does not exist", jobs[i].id);
			missing = true;
		}
	if (missing) {
		rc = EX_DATAERR;
		goto out;
	}
	waited = wait_until(conn, jobs, n, deadline, &err);
	if (waited == EX_TEMPFAIL && deadline > 0 && mono_ms() >= deadline) {
		char d[64], pending[1024];

		/* The deadline may have cut a statement short: say what was waited for. */
		duration_format(a.timeout_ms, d, sizeof d);
		wait_pending_text(jobs, n, pending, sizeof pending);
		cq_fail(&err, EX_TEMPFAIL, "timed out after %s; still pending: %s", d, pending);
	} else if (waited != 0)
		goto report;
	deadline = 0;				/* the report is read whatever the time */
	/* After a timeout, the timeout is what is reported, whatever the report did. */
	if (print_jobs(conn, jobs, n, a.json, waited ? &scratch : &err) != 0 || waited != 0)
		goto report;
	for (int i = 0; i < n; i++)
		failed = failed || strcmp(jobs[i].status, "succeeded") != 0;
	rc = failed ? EXIT_JOB_FAILED : 0;
	goto out;

report:
	rc = cli_report(&err);
out:
	pg_close(conn);
	free(jobs);
	free(ids);
	return rc;
}
