/* cmd_migrate — "cronq migrate [--status]": options, then lib/schema/migrate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "schema/migrate.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xalloc.h"

enum { OPT_STATUS = OPT_FIRST_CMD };

typedef struct migrate_args {
	bool		status;
} migrate_args;

static void
help(void)
{
	printf("cronq migrate installs or upgrades the cronq schema in the database.\n\n"
		   "Usage:\n"
		   "  cronq migrate [OPTION]...\n\n"
		   "Options:\n"
		   "      --status              list applied and pending migrations, change nothing\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Migrations run in order, each once, in one transaction under an advisory lock;\n"
		   "then the roles cronq_user, cronq_exec and cronq_admin are created when this role\n"
		   "may, and given their privileges (again on every run). A schema newer than this\n"
		   "cronq is never downgraded: migrate does nothing when its migrations declare this\n"
		   "cronq compatible (a rolling upgrade), and exits 78 otherwise.\n"
		   "Silent unless standard error is a terminal (or -v): then it names each\n"
		   "migration it applies, and ends with the schema's version.\n");
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	migrate_args *a = state;

	(void) arg;
	(void) src;
	if (opt == OPT_STATUS)
		a->status = true;
	return 0;
}

static void
progress(const char *name)
{
	if (isatty(STDERR_FILENO) || log_enabled(LOG_INFO))
		fprintf(stderr, "cronq: applying %s\n", name);
}

/*
 * What the grants did, like progress (on a terminal or with -v); roles
 * that do not exist always, with what a superuser must run.
 */
static void
report_grants(const migrate_grants *g)
{
	if (g->changed && g->present[0] && (isatty(STDERR_FILENO) || log_enabled(LOG_INFO)))
		fprintf(stderr, "cronq: granted %s the privileges of their roles\n", g->present);
	if (g->missing[0]) {
		buf sql = BUF_INIT;
		char *names = xstrdup(g->missing);

		for (char *r = strtok(names, ", "); r; r = strtok(NULL, ", "))
			buf_printf(&sql, "CREATE ROLE %s NOLOGIN; ", r);
		log_full(LOG_WARNING, NULL, NULL, NULL,
				 "roles %s do not exist, and this role may not create them; "
				 "a superuser must run: %sthen \"cronq migrate\" again", g->missing, buf_str(&sql));
		buf_free(&sql);
		free(names);
	}
}

/* --status on a newer schema: say so, and whether this binary may use it. */
static int
newer_status(PGconn *conn, int db_version, cq_err *err)
{
	int rc = migrate_check(conn, err);

	if (rc != 0 && rc != EX_CONFIG)
		return rc;
	printf("database is at version %d, newer than this cronq (version %d)%s\n",
		   db_version, migrate_latest_version(), rc ? "" : " and compatible with it");
	cq_clear(err);
	return 0;
}

int
cmd_migrate(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"status", no_argument, OPT_STATUS, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	migrate_args a = {false};
	cli_common common;
	cq_err err = {0};
	PGconn *conn;
	int first, rc;

	if ((rc = cli_parse("migrate", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	pg_set_needed_role(NULL);	/* the schema's owner */
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("migrate", NULL, argc, argv, first, 0, 0)) != 0)
		return rc;
	if ((conn = pg_connect(cli_conninfo(&common), &err)) == NULL)
		return cli_report(&err);

	if (a.status) {
		migrate_state *states = xcalloc((size_t) migrate_count(), sizeof *states);
		int db_version;

		rc = migrate_status(conn, states, &db_version, &err);
		for (int i = 0; rc == 0 && i < migrate_count(); i++)
			printf("%-28s %s\n", states[i].name,
				   states[i].applied ? states[i].applied_at : "pending");
		if (rc == 0 && db_version > migrate_latest_version())
			rc = newer_status(conn, db_version, &err);
		free(states);
	} else {
		migrate_grants grants;
		int applied, db_version;

		rc = migrate_apply(conn, &applied, &db_version, &grants, progress, &err);
		if (rc == 0 && db_version > migrate_latest_version())
			fprintf(stderr, "cronq: database schema is at version %d, newer than this cronq (version %d)"
					" and compatible with it: nothing to do\n", db_version, migrate_latest_version());
		else if (rc == 0) {
			/* What the "applying" lines came to: -v's line, or on a terminal ours. */
			if (applied == 0 && !log_enabled(LOG_INFO))
				cli_confirm("schema is up to date (version %d); nothing applied", migrate_latest_version());
			else
				cli_tell("applied %d migration%s; schema is at version %d", applied, applied == 1 ? "" : "s",
						 migrate_latest_version());
			report_grants(&grants);
		}
	}
	pg_close(conn);
	return rc ? cli_report(&err) : 0;
}
