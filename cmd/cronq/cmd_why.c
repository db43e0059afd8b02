/* cmd_why — "cronq why NAME [--at TIME] [--json]": options, then lib/sched/why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "sched/why.h"
#include "util/json.h"
#include "util/utf8.h"

enum { OPT_AT = OPT_FIRST_CMD, OPT_JSON };

typedef struct why_args {
	const char *at;
	bool		json;
} why_args;

static void
help(void)
{
	printf("cronq why says whether a schedule's occurrence ran, and if not, why: its job\n"
		   "and outcome, or the decision the runners recorded (skipped by overlap, by\n"
		   "catch-up, while paused or disabled, refused, expired), or what the record\n"
		   "of wakes tells (no runner woke between two times).\n\n"
		   "Usage:\n"
		   "  cronq why NAME [--at TIME] [--json]\n\n"
		   "Options:\n"
		   "      --at TIME             the occurrence at or before TIME (RFC 3339 or any\n"
		   "                            PostgreSQL timestamptz; default: the latest due)\n"
		   "      --json                JSON output\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Exits 0 with an answer, 65 when the schedule does not exist (a member of\n"
		   "cronq_user sees only its own) or TIME is not a time.\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	why_args *a = state;

	(void) src;
	if (opt == OPT_AT)
		a->at = arg;
	else if (opt == OPT_JSON)
		a->json = true;
	return 0;
}

int
cmd_why(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"at", required_argument, OPT_AT, 0, NULL},
		{"json", no_argument, OPT_JSON, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	why_args a = {NULL, false};
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	json_t *why = NULL;
	int first, rc;

	if ((rc = cli_parse("why", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("why", "NAME", argc, argv, first, 1, 1)) != 0)
		return rc;
	if ((rc = cli_connect(&common, &conn, &err)) == 0 &&
		(why = schedule_why(conn, argv[first], a.at, &err)) == NULL)
		rc = err.code;
	pg_close(conn);
	if (rc != 0)
		return cli_report(&err);
	if (a.json) {
		char *text = cq_json_text(why);

		fputs(text, stdout);
		free(text);
	} else {
		char line[2048], *shown;

		/* A job's error and the ledger's detail are its author's words. */
		schedule_why_text(why, line, sizeof line);
		shown = utf8_printable(line, false);
		printf("%s\n", shown);
		free(shown);
	}
	json_decref(why);
	return 0;
}
