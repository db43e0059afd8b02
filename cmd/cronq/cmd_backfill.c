/*
 * cmd_backfill — "cronq backfill TYPE --from T --to T" (one job per step)
 * and "cronq backfill --schedule NAME --from T --to T" (one per occurrence):
 * options, then lib/sched/backfill. Everything is checked before the first
 * write, and the writes are one transaction: all or nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "sched/backfill.h"
#include "tasks/payload.h"
#include "time/rfc3339.h"
#include "util/json.h"
#include "util/log.h"
#include "util/utf8.h"

enum {
	OPT_FROM = OPT_FIRST_CMD, OPT_TO, OPT_STEP, OPT_PAYLOAD, OPT_KEY, OPT_DRY_RUN,
	OPT_SCHEDULE, OPT_THEN,
};

typedef struct backfill_args {
	backfill_req req;
	const char *from;
	const char *to;
	const char *schedule;
	bool		dry;
	char		job_option[96];	/* the first option --schedule cannot take */
	backfill_then then;
} backfill_args;

static void
help(void)
{
	printf("cronq backfill enqueues one job per step of a time range, or one per\n"
		   "occurrence of a schedule in it. Jobs whose key exists are skipped, so\n"
		   "running a backfill again enqueues nothing twice.\n\n"
		   "Usage:\n"
		   "  cronq backfill TYPE --from TIME --to TIME [OPTION]... [THEN_PAYLOAD]\n"
		   "  cronq backfill --schedule NAME --from TIME --to TIME [--dry-run]\n"
		   "                 [--then TYPE [THEN_PAYLOAD]]\n\n"
		   "Options:\n"
		   "      --from TIME           first step (RFC 3339 or any PostgreSQL timestamptz;\n"
		   "                            a time without zone is UTC)\n"
		   "      --to TIME             last step, included\n"
		   "      --step DURATION       time between steps (default 1d; whole seconds)\n"
		   "      --payload JSON        payload template (default {}): {date} and {ts} are\n"
		   "                            replaced in every string value\n"
		   "      --key TEMPLATE        idempotency key template (default\n"
		   "                            backfill:TYPE:{ts})\n"
		   "      --queue NAME          queue (default \"default\")\n"
		   "      --priority N          lower runs first (default 0)\n"
		   "      --max-attempts N      attempts before a job is dead (default 10)\n"
		   "      --timeout DURATION    stop an attempt after DURATION (default 1h)\n"
		   "      --schedule NAME       one job per occurrence of schedule NAME, with its\n"
		   "                            job settings and its key schedule:NAME:FIRE_TIME\n"
		   "      --then TYPE           and one job of TYPE (payload THEN_PAYLOAD, default\n"
		   "                            {}) that runs after every job of the backfill has\n"
		   "                            succeeded (cancelled if one ends dead or cancelled)\n"
		   "      --dry-run             print the jobs that would be enqueued, one per line\n"
		   "                            (time, key, payload, tab-separated); write nothing\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Placeholders: {date} is the step's UTC date (2026-03-08), {ts} its time\n"
		   "(2026-03-08T10:00:00Z); {{word} is a literal {word}. Step jobs are due at\n"
		   "once; a schedule's jobs are due at their fire time, and a range holding\n"
		   "one not due yet is refused (the schedule enqueues it itself). At most %d\n"
		   "jobs.\n"
		   "On a terminal (or with -v) says \"enqueued N jobs (M already existed)\", and\n"
		   "with --then \"then: job ID after them\"; silent otherwise (under cron).\n"
		   "--dry-run prints its plan on standard output.\n",
		   BACKFILL_MAX_STEPS);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	backfill_args *a = state;
	int64_t v;
	int rc = 0;

	/* Only the command line: a CRONQ_QUEUE meant for other commands is no clash. */
	if (a->job_option[0] == '\0' && opt != OPT_FROM && opt != OPT_TO && opt != OPT_DRY_RUN &&
		opt != OPT_SCHEDULE && opt != OPT_THEN && strncmp(src->name, "--", 2) == 0)
		snprintf(a->job_option, sizeof a->job_option, "%s", src->name);
	if (cli_job_option(opt, arg, src, &a->req.opts, &rc))
		return rc;
	switch (opt) {
		case OPT_FROM:
			a->from = arg;
			break;
		case OPT_TO:
			a->to = arg;
			break;
		case OPT_STEP:
			if ((rc = cli_duration(src, arg, 1000, &v)) != 0)
				break;
			if (v % 1000 != 0) {
				log_error("invalid value \"%s\" for %s: must be a whole number of seconds", arg, src->name);
				rc = EX_USAGE;
			}
			a->req.step = v / 1000;
			break;
		case OPT_PAYLOAD:
			a->req.payload = arg;
			break;
		case OPT_KEY:
			a->req.key = arg;
			break;
		case OPT_DRY_RUN:
			a->dry = true;
			break;
		case OPT_SCHEDULE:
			a->schedule = arg;
			break;
		case OPT_THEN:
			a->then.type = arg;
			break;
	}
	return rc;
}

static void
print_line(int64_t t, const char *key, const char *payload, void *arg)
{
	char ts[RFC3339_BUFLEN];
	/* An author's text, for a person: JSON that says the same, escaped. */
	char *shown_key = utf8_printable(key, false), *shown = cq_json_safe(payload);

	(void) arg;
	rfc3339_format(t, ts, sizeof ts);
	printf("%s\t%s\t%s\n", ts, shown_key, shown);
	free(shown_key);
	free(shown);
}

static bool progress_shown;

static void
progress(int64_t done, int64_t total)
{
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rcronq: backfill: %" PRId64 " of %" PRId64 " job%s", done, total, total == 1 ? "" : "s");
	progress_shown = true;
}

int
cmd_backfill(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"from", required_argument, OPT_FROM, 0, NULL},
		{"to", required_argument, OPT_TO, 0, NULL},
		{"step", required_argument, OPT_STEP, 0, NULL},
		{"payload", required_argument, OPT_PAYLOAD, 0, NULL},
		{"key", required_argument, OPT_KEY, 0, NULL},
		{"dry-run", no_argument, OPT_DRY_RUN, 0, NULL},
		{"then", required_argument, OPT_THEN, 0, NULL},
		{"schedule", required_argument, OPT_SCHEDULE, 0, "step payload key queue priority max-attempts timeout"},
		CLI_JOB_OPTIONS,
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	backfill_args a;
	backfill_out out = {0, 0, 0, false};
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	int first, rc;

	memset(&a, 0, sizeof a);
	a.req.step = 86400;
	if ((rc = cli_parse("backfill", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	/* THEN_PAYLOAD: one more positional argument, with --then only. */
	if (a.schedule) {
		if ((rc = cli_check_args("backfill", NULL, argc, argv, first, 0, a.then.type ? 1 : 0)) != 0)
			return rc;
		if (a.job_option[0])
			return cli_usage_error("backfill", "%s cannot be used with --schedule: a schedule's jobs take its own settings",
								   a.job_option);
		if (first < argc)
			a.then.payload = argv[first];
	} else {
		if ((rc = cli_check_args("backfill", "TYPE", argc, argv, first, 1, a.then.type ? 2 : 1)) != 0)
			return rc;
		if (first + 1 < argc)
			a.then.payload = argv[first + 1];
	}
	if (a.from == NULL || a.to == NULL)
		return cli_usage_error("backfill", "--from and --to are required");
	if (!a.schedule) {
		/* Templates and payload first: a bad one is refused without the database. */
		a.req.type = argv[first];
		if ((rc = backfill_check(&a.req, &err)) != 0)
			return cli_report(&err);
		a.then.opts = a.req.opts;
	}
	if (a.then.type) {
		enqueue_req then = {.type = a.then.type, .payload = a.then.payload, .opts = a.then.opts,
			.in_ms = -1};

		if ((rc = enqueue_check(&then, payload_validate, &err)) != 0) {
			cq_prefix(&err, "--then: ");
			return cli_report(&err);
		}
	}

	if ((rc = cli_connect(&common, &conn, &err)) != 0)
		goto out;
	rc = backfill_perform(conn, &a.req, &a.then, a.schedule, a.from, a.to, a.dry, print_line, progress, NULL,
						  &out, &err);
	if (progress_shown)
		fputc('\n', stderr);
	if (rc == 0) {
		if (a.dry)
			printf("would enqueue %" PRId64 " job%s (%" PRId64 " already exist%s)\n", out.created,
				   out.created == 1 ? "" : "s", out.existing, out.existing == 1 ? "s" : "");
		else
			cli_tell("enqueued %" PRId64 " job%s (%" PRId64 " already existed)", out.created,
					 out.created == 1 ? "" : "s", out.existing);
		if (a.dry && a.then.type)
			printf("then: one %s job after them\n", a.then.type);
		else if (out.then_id)
			cli_tell("then: job %" PRId64 " after them%s", out.then_id,
					 out.then_existed ? " (already existed)" : "");
	}
out:
	pg_close(conn);
	return rc ? cli_report(&err) : 0;
}
