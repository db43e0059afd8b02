/* cmd_pause — "cronq pause KEY…" and "cronq resume KEY…": options, then lib/queue/flow. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/flow.h"
#include "util/log.h"
#include "util/xalloc.h"

enum {
	OPT_UNTIL = OPT_FIRST_CMD,
};

static void
help_pause(void)
{
	printf("cronq pause stops the claim from taking the jobs of a queue or a type, or a\n"
		   "schedule from enqueueing, until resumed (or until TIME). Running jobs finish;\n"
		   "a paused schedule's fire times pass, skipped.\n\n"
		   "Usage:\n"
		   "  cronq pause KEY... [OPTION]...\n\n"
		   "Keys:\n"
		   "  queue:NAME                the jobs of queue NAME\n"
		   "  type:NAME                 the jobs of type NAME (exec, sql, ...)\n"
		   "  schedule:NAME             the schedule NAME\n"
		   "  PREFIX:NAME               the jobs that carry this limit key (tenant:42;\n"
		   "                            cronq enqueue --limit-key)\n\n"
		   "Options:\n"
		   "      --until TIME          resume by itself at TIME (RFC 3339 or any\n"
		   "                            PostgreSQL timestamptz; without a zone, UTC)\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "All keys are paused or none. Pausing a paused key sets its new TIME.\n"
		   "Members of cronq_admin (and the owner of cronq's tables) pause any key; a\n"
		   "member of cronq_user only its own schedules. On a terminal (or with -v)\n"
		   "says what it did, one line per key; silent otherwise (under cron). Exits\n"
		   "64 on a malformed key, 65 on a time in the past or a schedule that does not\n"
		   "exist, 78 on a key the role may not pause.\n");
}

static void
help_resume(void)
{
	printf("cronq resume undoes cronq pause: the claim takes the key's jobs again, the\n"
		   "schedule enqueues again from its next fire time.\n\n"
		   "Usage:\n"
		   "  cronq resume KEY... [OPTION]...\n\n"
		   "Keys: queue:NAME, type:NAME, schedule:NAME, PREFIX:NAME (see cronq pause\n"
		   "--help).\n\n"
		   "Options:\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "On a terminal (or with -v) says what it did, one line per key (a key that\n"
		   "was not paused is said so, exit 0); silent otherwise (under cron).\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	(void) src;
	if (opt == OPT_UNTIL)
		*(const char **) state = arg;
	return 0;
}

/* pause (until is where --until goes) or resume (until NULL). */
static int
flow_cmd(const char *cmd, int argc, char **argv, const char **until)
{
	static const cli_option pause_opts[] = {
		CLI_COMMON_OPTIONS,
		{"until", required_argument, OPT_UNTIL, 0, NULL},
		{NULL, 0, 0, 0, NULL},
	};
	static const cli_option resume_opts[] = {
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	bool *changed;
	const char *const *keys;
	char why[512];
	int first, rc, n;

	if ((rc = cli_parse(cmd, argc, argv, "d:vh", until ? pause_opts : resume_opts, on_opt, until,
						&common, &first)) != 0)
		return rc;
	if (common.help) {
		until ? help_pause() : help_resume();
		return 0;
	}
	if ((rc = cli_check_args(cmd, "KEY", argc, argv, first, 1, 1000)) != 0)
		return rc;
	keys = (const char *const *) argv + first;
	n = argc - first;
	for (int i = 0; i < n; i++) {
		/* Any key may be resumed, a pause of a type since gone too. */
		if (until)
			rc = cli_flow_key(cmd, keys[i]);
		else if (flow_key_invalid(keys[i], why, sizeof why))
			rc = cli_usage_error(cmd, "%s", why);
		if (rc != 0)
			return rc;
	}
	changed = xcalloc((size_t) n, sizeof *changed);
	if ((rc = cli_connect(&common, &conn, &err)) == 0)
		rc = until ? flow_pause(conn, keys, n, *until, changed, &err)
			: flow_resume(conn, keys, n, changed, &err);
	pg_close(conn);
	if (rc != 0)
		rc = cli_report(&err);
	else
		for (int i = 0; i < n; i++) {
			if (until == NULL)
				cli_tell("%s %s", keys[i], changed[i] ? "resumed" : "was not paused");
			else if (*until)
				cli_tell("%s %s until %s", keys[i], changed[i] ? "paused" : "still paused, now", *until);
			else
				cli_tell("%s %s", keys[i], changed[i] ? "paused" : "still paused, now until resumed");
		}
	free(changed);
	return rc;
}

int
cmd_pause(int argc, char **argv)
{
	const char *until = NULL;

	return flow_cmd("pause", argc, argv, &until);
}

int
cmd_resume(int argc, char **argv)
{
	return flow_cmd("resume", argc, argv, NULL);
}
