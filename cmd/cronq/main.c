/*
 * main — dispatches "cronq COMMAND …" to cmd_<command>() and checks that
 * standard output was written. Nothing else lives here.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"

typedef struct command {
	const char *name;
	int			(*fn) (int argc, char **argv);
	const char *summary;
} command;

static const command commands[] = {
	{"migrate", cmd_migrate, "install or upgrade the cronq schema"},
	{"enqueue", cmd_enqueue, "add jobs to the queue"},
	{"run", cmd_run, "run due jobs, then exit (what cron calls every minute)"},
	{"schedule", cmd_schedule, "manage named cron schedules; print fire times"},
	{"cancel", cmd_cancel, "cancel jobs (running ones at their next heartbeat)"},
	{"retry", cmd_retry, "queue dead, failed or finished jobs again"},
	{"pause", cmd_pause, "stop claiming a queue's or a type's jobs, or a schedule"},
	{"resume", cmd_resume, "undo pause"},
	{"limit", cmd_limit, "cap how many jobs of a key run at once, or start per window"},
	{"list", cmd_list, "list jobs"},
	{"show", cmd_show, "show a job with every attempt"},
	{"wait", cmd_wait, "wait until jobs are finished; exit 0 when all succeeded"},
	{"status", cmd_status, "counts, lag, dead jobs, schedules, last wake"},
	{"check", cmd_check, "one-line health check for monitoring (exit 0/1/2/3)"},
	{"purge", cmd_purge, "delete old finished jobs and their runs"},
	{"backfill", cmd_backfill, "enqueue one job per step or schedule occurrence in a range"},
	{"why", cmd_why, "did a schedule's occurrence run, and if not, why"},
	{NULL, NULL, NULL},
};

static void
usage(void)
{
	printf("cronq runs scheduled and background jobs from PostgreSQL.\n\n"
		   "Usage:\n"
		   "  cronq COMMAND [OPTION]... [ARG]...\n\n"
		   "Commands:\n");
	for (const command *c = commands; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\nOptions:\n"
		   "  -h, --help     show this help, then exit\n"
		   "      --version  output version information, then exit\n\n"
		   "Run \"cronq COMMAND --help\" for a command's options.\n"
		   "When standard error is a terminal, commands that change something confirm it\n"
		   "there in one line; under cron, or redirected, they add nothing.\n"
		   "Connection: a command's --db CONNINFO (cronq list --db URL), else\n"
		   "$CRONQ_DATABASE_URL, else $DATABASE_URL, else libpq's defaults (PGHOST,\n"
		   "PGDATABASE, ~/.pgpass, ...).\n");
}

static int
finish(int rc)
{
	/* EX_IOERR: the command said what it could not write. */
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc != EX_IOERR) {
		fputs("cronq: error: could not write to standard output\n", stderr);
		return rc ? rc : EX_IOERR;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	const char *name;

	/* Both before any thread starts: jansson seeds its hash function
	 * lazily, and libpq reads $PGTZ at every connection. */
	json_object_seed(0);
	pg_init();

	if (argc < 2)
		return cli_usage_error(NULL, "no command given");
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		usage();
		return finish(0);
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		if (argc > 2)
			return finish(cli_usage_error(NULL, "too many command-line arguments (first is \"%s\")", argv[2]));
		printf("cronq %s\n", CRONQ_VERSION);
		return finish(0);
	}
	for (const command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return finish(c->fn(argc - 1, argv + 1));
	/* cronq --db URL list: the options of a command go after it. */
	if (name[0] == '-')
		return cli_usage_error(NULL, "unrecognized option \"%s\" before the command: a command's options"
							   " go after it (cronq COMMAND %s ...)", name, name);
	return cli_usage_error(NULL, "unrecognized command \"%s\"", name);
}
