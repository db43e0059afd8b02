/*
 * cmd_schedule — "cronq schedule add|list|show|remove|enable|disable|next":
 * options, then lib/sched (next: lib/sched/next, no database needed unless
 * a TIME is not RFC 3339), and
 * lib/report/schedules_text for text output.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "report/schedules_text.h"
#include "report/table.h"
#include "sched/next.h"
#include "sched/schedule.h"
#include "time/rfc3339.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/log.h"

enum {
	OPT_TZ = OPT_FIRST_CMD, OPT_CATCHUP, OPT_OVERLAP, OPT_REPLACE, OPT_DISABLED, OPT_JSON,
	OPT_FROM, OPT_COUNT, OPT_START_DEADLINE, OPT_ANCHOR, OPT_SPREAD, OPT_FORCE, OPT_HISTORY,
	OPT_KEEP, OPT_CSV,
};

typedef struct sched_args {
	schedule_def def;
	bool		replace;
	bool		json;
	bool		csv;
	bool		force;
	const char *from;
	const char *anchor;			/* as given, for next */
	int64_t		count;
	json_t	   *hooks;			/* --on-success… */
} sched_args;

static const char connection_help[] =
	"  -v, --verbose             say what is done\n"
	"      --log-format FORMAT   text (default) or json\n"
	"  -h, --help                show this help, then exit\n\n"
	"Connection options:\n"
	"  -d, --db CONNINFO         libpq connection string or URI\n";

static void
help(void)
{
	printf("cronq schedule manages named cron schedules; every \"cronq run\" enqueues\n"
		   "their due occurrences, exactly once each.\n\n"
		   "Usage:\n"
		   "  cronq schedule add NAME 'EXPR' TYPE [PAYLOAD] [OPTION]...\n"
		   "  cronq schedule list [--json | --csv]\n"
		   "  cronq schedule show NAME [--json]\n"
		   "  cronq schedule remove NAME\n"
		   "  cronq schedule enable NAME\n"
		   "  cronq schedule disable NAME\n"
		   "  cronq schedule run NAME [--force]\n"
		   "  cronq schedule next 'EXPR' [--tz ZONE] [--anchor TIME] [--from TIME] [--count N]\n"
		   "  cronq schedule next NAME [--count N]\n\n"
		   "Options of add:\n"
		   "      --tz ZONE             IANA time zone of the expression (default UTC)\n"
		   "      --anchor TIME         @every only: count its periods from TIME\n"
		   "                            instead of the Unix epoch\n"
		   "      --spread DURATION     run each occurrence a fixed offset in [0, DURATION)\n"
		   "                            after its fire time, derived from NAME (at most 1d)\n"
		   "      --catchup POLICY      after downtime: latest (default: one job for the\n"
		   "                            newest missed occurrence), all (one per missed\n"
		   "                            occurrence, at most %d), skip (none)\n"
		   "      --overlap POLICY      skip (default: no new job while the previous one\n"
		   "                            is unfinished) or allow\n"
		   "      --queue NAME          queue of its jobs (default \"default\")\n"
		   "      --priority N          priority of its jobs (default 0)\n"
		   "      --max-attempts N      attempts of its jobs (default 10)\n"
		   "      --timeout DURATION    timeout of its jobs (default 1h)\n"
		   "      --start-deadline DURATION\n"
		   "                            a job not started DURATION after its fire time\n"
		   "                            ends cancelled (expired) instead of running late\n"
		   "      --history POLICY      all (default: every attempt of its jobs leaves a\n"
		   "                            history row) or errors (a success with no output\n"
		   "                            leaves none)\n"
		   "      --keep N              purge keeps its newest N finished jobs whatever\n"
		   "                            their age, and deletes the others whatever their age\n"
		   CLI_HOOK_HELP("one of its jobs")
		   "      --replace             replace a schedule of the same name\n"
		   "      --disabled            store it disabled\n"
		   "Options of run (one job now with the schedule's settings):\n"
		   "      --force               run it even while its last job is unfinished\n"
		   "                            (otherwise overlap skip refuses, exit 75)\n"
		   "Options of list and show:\n"
		   "      --json                JSON output\n"
		   "      --csv                 list only: CSV (RFC 4180), a header row, values whole\n"
		   "Options of next (EXPR needs no database unless a TIME is not RFC 3339):\n"
		   "      --tz ZONE             time zone (default UTC)\n"
		   "      --anchor TIME         @every only: count its periods from TIME\n"
		   "      --from TIME           start after TIME (default now)\n"
		   "      --count N             how many fire times (default 5)\n"
		   "%s\n"
		   "EXPR is a 5-field cron expression (Vixie cron/cronie syntax), a macro\n"
		   "(@yearly @annually @monthly @weekly @daily @midnight @hourly), or\n"
		   "@every DURATION (at least 1m, whole seconds: fires at the multiples of\n"
		   "DURATION from the Unix epoch or --anchor, whatever the zone). For next, an\n"
		   "argument with a space or starting with @ is an expression, anything else\n"
		   "the name of a stored schedule (its zone, anchor, spread and pause applied).\n"
		   "TIME is RFC 3339 or, with a database, anything PostgreSQL's timestamptz\n"
		   "accepts; a time without zone is UTC.\n"
		   "A member of cronq_user sees and manages only the schedules it created, and\n"
		   "their jobs run as it; cronq_admin sees and manages all.\n"
		   "add, remove, enable and disable print nothing, and run the new job's id; when\n"
		   "standard error is a terminal, each also says there what it did in one line.\n"
		   "On a terminal the list is coloured (not when NO_COLOR is set) and fitted to\n"
		   "its width (or to COLUMNS), long values clipped with \"...\".\n",
		   SCHEDULE_CATCHUP_CAP, connection_help);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	sched_args *a = state;
	int rc = 0;

	if (cli_job_option(opt, arg, src, &a->def.opts, &rc) ||
		cli_hook_option(opt, arg, src, &a->hooks, &rc))
		return rc;
	switch (opt) {
		case OPT_TZ:
			a->def.timezone = arg;
			break;
		case OPT_CATCHUP:
			if (strcmp(arg, "latest") && strcmp(arg, "all") && strcmp(arg, "skip")) {
				log_error("invalid value \"%s\" for %s: must be latest, all or skip", arg, src->name);
				rc = EX_USAGE;
			}
			a->def.catchup = arg;
			break;
		case OPT_OVERLAP:
			if (strcmp(arg, "skip") && strcmp(arg, "allow")) {
				log_error("invalid value \"%s\" for %s: must be skip or allow", arg, src->name);
				rc = EX_USAGE;
			}
			a->def.overlap = arg;
			break;
		case OPT_REPLACE:
			a->replace = true;
			break;
		case OPT_DISABLED:
			a->def.disabled = true;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_CSV:
			a->csv = true;
			break;
		case OPT_FROM:
			a->from = arg;
			break;
		case OPT_COUNT:
			rc = cli_int(src, arg, 1, 100000, &a->count);
			break;
		case OPT_START_DEADLINE:
			rc = cli_duration(src, arg, 1000, &a->def.start_deadline_ms);
			break;
		case OPT_FORCE:
			a->force = true;
			break;
		case OPT_ANCHOR:
			/* Read after parsing (resolve_time): it may need the database. */
			a->anchor = arg;
			a->def.has_anchor = true;
			break;
		case OPT_SPREAD:
			rc = cli_duration(src, arg, 0, &a->def.spread_ms);
			break;
		case OPT_HISTORY:
			rc = cli_history(src, arg, &a->def.history);
			break;
		case OPT_KEEP: {
			int64_t v;

			if ((rc = cli_int(src, arg, 1, SCHEDULE_MAX_KEEP, &v)) == 0)
				a->def.keep = (int) v;
			break;
		}
	}
	return rc;
}

/* Which options each subcommand takes, so that others are usage errors. */
static const cli_option add_opts[] = {
	{"tz", required_argument, OPT_TZ, 0, NULL},
	{"catchup", required_argument, OPT_CATCHUP, 0, NULL},
	{"overlap", required_argument, OPT_OVERLAP, 0, NULL},
	{"replace", no_argument, OPT_REPLACE, 0, NULL},
	{"disabled", no_argument, OPT_DISABLED, 0, NULL},
	{"start-deadline", required_argument, OPT_START_DEADLINE, 0, NULL},
	{"anchor", required_argument, OPT_ANCHOR, 0, NULL},
	{"spread", required_argument, OPT_SPREAD, 0, NULL},
	{"history", required_argument, OPT_HISTORY, 0, NULL},
	{"keep", required_argument, OPT_KEEP, 0, NULL},
	CLI_JOB_OPTIONS,
	CLI_HOOK_OPTIONS,
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};
static const cli_option list_opts[] = {
	{"json", no_argument, OPT_JSON, 0, "csv"},
	{"csv", no_argument, OPT_CSV, 0, NULL},
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};
static const cli_option show_opts[] = {
	{"json", no_argument, OPT_JSON, 0, NULL},
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};
static const cli_option run_opts[] = {
	{"force", no_argument, OPT_FORCE, 0, NULL},
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};
static const cli_option plain_opts[] = {
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};
/* next takes the common options too, as every command does; --db is unused. */
static const cli_option next_opts[] = {
	{"tz", required_argument, OPT_TZ, 0, NULL},
	{"anchor", required_argument, OPT_ANCHOR, 0, NULL},
	{"from", required_argument, OPT_FROM, 0, NULL},
	{"count", required_argument, OPT_COUNT, 0, NULL},
	CLI_COMMON_OPTIONS,
	{NULL, 0, 0, 0, NULL},
};

/*
 * Is next's argument an expression rather than a stored schedule's name?
 * Names hold no spaces; one that starts with "@" reads as a macro.
 */
static bool
next_is_expression(const char *arg)
{
	return arg[0] == '@' || !schedule_name_valid(arg);
}

/*
 * Read TIME given to option opt as every command does: RFC 3339 here, any
 * other PostgreSQL timestamptz input by the database (a time without zone
 * is UTC either way). The connection is opened on first need into *conn,
 * so that "schedule next 'EXPR'" needs none for RFC 3339. The time is
 * written back into out as RFC 3339 UTC.
 */
static int
resolve_time(const char *opt, const char *text, const cli_common *common, PGconn **conn, int64_t *t,
			 char out[RFC3339_BUFLEN])
{
	char why[256];
	cq_err err = {0};
	int rc;

	if ((rc = rfc3339_parse(text, t, why, sizeof why)) == RFC3339_IMPOSSIBLE) {
		log_error("invalid value \"%s\" for %s: %s", text, opt, why);
		return EX_DATAERR;
	}
	if (rc != 0) {
		if (*conn == NULL && (*conn = pg_connect(cli_conninfo(common), &err)) == NULL) {
			log_full(LOG_ERROR, NULL, err.msg, NULL, "invalid value \"%s\" for %s: not RFC 3339 (such as"
					 " 2026-03-08T10:00:00Z), and no database to read it as PostgreSQL's timestamptz",
					 text, opt);
			return EX_DATAERR;
		}
		if (pg_timestamp(*conn, text, t, &err) != 0) {
			log_error("invalid value \"%s\" for %s: %s", text, opt, err.msg);
			return err.code == EX_DATAERR ? EX_DATAERR : err.code;
		}
	}
	rfc3339_format(*t, out, RFC3339_BUFLEN);
	return 0;
}

/*
 * Print the next fire times of an expression (no database) or of a stored
 * schedule, one RFC 3339 time a line.
 */
static int
cmd_next(const sched_args *a, const cli_common *common, const char *arg)
{
	char ts[RFC3339_BUFLEN], anchor[RFC3339_BUFLEN], from[RFC3339_BUFLEN];
	const char *ended = NULL;
	cq_err err = {0};
	int64_t *times, n, t;
	int rc;

	if (next_is_expression(arg)) {
		PGconn *conn = NULL;

		rc = 0;
		if (a->anchor)
			rc = resolve_time("--anchor", a->anchor, common, &conn, &t, anchor);
		if (rc == 0 && a->from)
			rc = resolve_time("--from", a->from, common, &conn, &t, from);
		pg_close(conn);
		if (rc != 0)
			return rc;
		if (sched_next(arg, a->def.timezone, a->anchor ? anchor : NULL, a->from ? from : NULL,
					   (int64_t) time(NULL), a->count, &times, &n, &err) != 0)
			return cli_report(&err);
	} else {
		PGconn *conn = NULL;

		if (a->def.timezone || a->anchor || a->from) {
			log_error("--tz, --anchor and --from apply to an expression, not to schedule \"%s\"", arg);
			return EX_USAGE;
		}
		if ((rc = cli_connect(common, &conn, &err)) == 0)
			rc = schedule_upcoming(conn, arg, a->count, &times, &n, NULL, &ended, &err);
		pg_close(conn);
		if (rc != 0)
			return cli_report(&err);
	}
	/* Fewer times than asked for, or none: why, to a person (not to a pipe). */
	if (ended)
		cli_tell("schedule \"%s\" %s", arg, ended);
	for (int64_t i = 0; i < n; i++) {
		rfc3339_format(times[i], ts, sizeof ts);
		printf("%s\n", ts);
	}
	free(times);
	return 0;
}

/*
 * On a terminal, say what was done to schedule name (said) and when it
 * runs next: one more query, made only then. A schedule paused for good,
 * or one this host cannot plan, has no run planned.
 */
static void
confirm_next(PGconn *conn, const char *name, const char *said)
{
	char ts[RFC3339_BUFLEN];
	cq_err err = {0};
	int64_t *times = NULL, n = 0;

	if (!cli_confirming())
		return;
	if (schedule_upcoming(conn, name, 1, &times, &n, NULL, NULL, &err) == 0 && n > 0) {
		rfc3339_format(times[0], ts, sizeof ts);
		cli_confirm("%s; next run %s", said, ts);
	} else
		cli_confirm("%s; no run planned", said);
	free(times);
}

int
cmd_schedule(int argc, char **argv)
{
	static const struct {
		const char *name;
		const cli_option *opts;
		int			min, max;	/* positional arguments after the subcommand */
		const char *names;		/* the required ones' */
	} subs[] = {
		{"add", add_opts, 3, 4, "NAME EXPR TYPE"}, {"list", list_opts, 0, 0, NULL},
		{"show", show_opts, 1, 1, "NAME"}, {"remove", plain_opts, 1, 1, "NAME"},
		{"enable", plain_opts, 1, 1, "NAME"}, {"disable", plain_opts, 1, 1, "NAME"},
		{"next", next_opts, 1, 1, "NAME|EXPR"}, {"run", run_opts, 1, 1, "NAME"},
	};
	sched_args a;
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	char *hooks_text = NULL;
	char label[32];
	const char *sub;
	int first, rc, which = -1;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2)
			return cli_usage_error("schedule", "missing subcommand");
		help();
		return 0;
	}
	sub = argv[1];
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (strcmp(subs[i].name, sub) == 0)
			which = (int) i;
	if (which < 0)
		return cli_usage_error("schedule", "unrecognized subcommand \"%s\"", sub);

	memset(&a, 0, sizeof a);
	a.count = 5;
	snprintf(label, sizeof label, "schedule %s", sub);
	if ((rc = cli_parse(label, argc - 1, argv + 1, "d:vh", subs[which].opts, on_opt, &a, &common, &first)) != 0 ||
		common.help ||
		(rc = cli_check_args(label, subs[which].names, argc - 1, argv + 1, first, subs[which].min, subs[which].max)) != 0) {
		if (rc == 0)
			help();
		json_decref(a.hooks);
		return rc;
	}
	argv += 1 + first;			/* the positional arguments */
	if (a.json && a.csv) {
		json_decref(a.hooks);
		return cli_usage_error(label, "--json and --csv cannot be used together");
	}

	if (strcmp(sub, "next") == 0)
		return cmd_next(&a, &common, argv[0]);
	if (strcmp(sub, "add") == 0) {
		a.def.name = argv[0];
		a.def.cron = argv[1];
		a.def.type = argv[2];
		a.def.payload = argc - 1 - first > 3 ? argv[3] : NULL;
		if (a.hooks)
			a.def.hooks = hooks_text = json_dumps(a.hooks, JSON_COMPACT);
		if (a.anchor) {
			char anchor[RFC3339_BUFLEN];
			PGconn *plain = NULL;

			rc = resolve_time("--anchor", a.anchor, &common, &plain, &a.def.anchor, anchor);
			pg_close(plain);
			if (rc != 0) {
				json_decref(a.hooks);
				free(hooks_text);
				return rc;
			}
		}
		if ((rc = schedule_check(&a.def, &err)) != 0)
			goto out;	/* nothing written */
	}

	if ((rc = cli_connect(&common, &conn, &err)) != 0)
		goto out;
	if (strcmp(sub, "add") == 0) {
		bool replaced = false;
		buf said = BUF_INIT;

		rc = schedule_add(conn, &a.def, a.replace, cli_confirming() ? &replaced : NULL, &err);
		buf_printf(&said, "%s schedule %s (%s, %s)", replaced ? "replaced" : "added", a.def.name, a.def.cron,
				   a.def.timezone ? a.def.timezone : "UTC");
		if (rc == 0 && a.def.disabled)
			cli_confirm("%s, disabled", buf_str(&said));
		else if (rc == 0)
			confirm_next(conn, a.def.name, buf_str(&said));
		buf_free(&said);
	} else if (strcmp(sub, "remove") == 0) {
		if ((rc = schedule_remove(conn, argv[0], &err)) == 0)
			cli_confirm("removed schedule %s", argv[0]);
	} else if (strcmp(sub, "enable") == 0 || strcmp(sub, "disable") == 0) {
		bool on = strcmp(sub, "enable") == 0, changed = false;

		rc = schedule_set_enabled(conn, argv[0], on, &changed, &err);
		if (rc == 0 && !changed)
			cli_confirm("schedule %s was already %sd; nothing changed", argv[0], sub);
		else if (rc == 0 && on) {
			buf said = BUF_INIT;

			buf_printf(&said, "enabled schedule %s", argv[0]);
			confirm_next(conn, argv[0], buf_str(&said));
			buf_free(&said);
		} else if (rc == 0)
			cli_confirm("disabled schedule %s", argv[0]);
	} else if (strcmp(sub, "run") == 0) {
		int64_t id;
		bool again;

		if ((rc = schedule_run(conn, argv[0], a.force, &id, &again, &err)) == 0) {
			printf("%" PRId64 "\n", id);
			if (again)		/* nothing enqueued: as enqueue --key's, a warning */
				log_warning("job %" PRId64 " of schedule %s was enqueued by a run in this same second: "
							"one job a second, none more", id, argv[0]);
			else
				cli_tell("enqueued job %" PRId64 " of schedule %s", id, argv[0]);
		}
	} else {
		json_t *list = schedule_list(conn, strcmp(sub, "show") == 0 ? argv[0] : NULL, &err);

		if (list == NULL)
			rc = err.code;
		else if (a.json) {
			json_t *one = strcmp(sub, "show") == 0 ? json_array_get(list, 0) : list;
			char *text = cq_json_text(one);

			fputs(text, stdout);
			free(text);
		} else {
			buf out = BUF_INIT;

			if (strcmp(sub, "show") == 0)
				schedules_show_text(&out, json_array_get(list, 0));
			else {
				table_mode mode = table_mode_for(STDOUT_FILENO, a.csv);

				schedules_list_text(&out, list, &mode);
			}
			fwrite(buf_str(&out), 1, out.len, stdout);
			buf_free(&out);
		}
		json_decref(list);
	}
out:
	pg_close(conn);
	json_decref(a.hooks);
	free(hooks_text);
	return rc ? cli_report(&err) : 0;
}
