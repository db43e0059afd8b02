/*
 * cmd_enqueue — "cronq enqueue TYPE [PAYLOAD|-]" and "cronq enqueue --jsonl":
 * options, then lib/queue/enqueue.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/literal.h"
#include "pg/pg.h"
#include "queue/compose.h"
#include "queue/enqueue.h"
#include "tasks/payload.h"
#include "util/buf.h"
#include "util/log.h"

enum {
	OPT_RUN_AT = OPT_FIRST_CMD, OPT_IN, OPT_KEY, OPT_JSONL, OPT_LIMIT_KEY, OPT_EXPIRES,
	OPT_EXPIRES_AT, OPT_UNIQUE_KEY, OPT_REPLACE, OPT_HISTORY, OPT_AFTER,
};

typedef struct enqueue_args {
	enqueue_req req;
	bool		jsonl;
	bool		per_job_option;	/* an option --jsonl cannot take */
	json_t	   *hooks;			/* --on-success… */
	char	   *hooks_text;
	int64_t    *after;			/* --after */
	size_t		n_after;
	buf			after_text;
} enqueue_args;

static void
help(void)
{
	char names[256];

	cli_task_names(names, sizeof names);
	printf("cronq enqueue adds a job to the queue and prints its id (when standard\n"
		   "error is a terminal, with one line there saying what was enqueued).\n\n"
		   "Usage:\n"
		   "  cronq enqueue TYPE [PAYLOAD|-] [OPTION]...\n"
		   "  cronq enqueue --jsonl < FILE\n\n"
		   "PAYLOAD is a JSON object (default {}); \"-\" reads it from standard input.\n\n"
		   "Options:\n"
		   "      --run-at TIME         run at TIME (RFC 3339 or any PostgreSQL timestamptz;\n"
		   "                            a time without zone is UTC); default: now\n"
		   "      --in DURATION         run DURATION from now (90s, 1h30m, 1.5h, \"2 hours\")\n"
		   "      --queue NAME          queue (default \"default\")\n"
		   "      --priority N          lower runs first (default 0)\n"
		   "      --max-attempts N      attempts before the job is dead (default 10)\n"
		   "      --timeout DURATION    stop an attempt after DURATION (default 1h)\n"
		   "      --key KEY             idempotency key: with an existing key nothing is\n"
		   "                            written and the existing job's id is printed\n"
		   "      --limit-key KEY       the job's own key of flow control (PREFIX:NAME,\n"
		   "                            e.g. tenant:42): cronq pause and cronq limit\n"
		   "                            hold it as they hold its queue and type\n"
		   "      --expires DURATION    start deadline DURATION after the run time: a job\n"
		   "                            not started by then ends cancelled (expired)\n"
		   "      --expires-at TIME     start deadline at TIME\n"
		   "      --unique-key KEY      at most one queued, failed or running job with KEY:\n"
		   "                            while one is, nothing is written and its id printed\n"
		   "      --replace             with --unique-key: a waiting job holding KEY takes\n"
		   "                            this payload, run time and deadline instead\n"
		   "      --history POLICY      all (default: every attempt leaves a history row)\n"
		   "                            or errors (a success with no output leaves none)\n"
		   "      --after ID[,ID...]    blocked until these jobs (yours) have succeeded;\n"
		   "                            cancelled if one ends dead or cancelled; repeatable\n"
		   CLI_HOOK_HELP("the job")
		   "      --jsonl               read one job per line from standard input, all or\n"
		   "                            nothing: {\"type\", \"payload\", \"run_at\", \"queue\",\n"
		   "                            \"priority\", \"max_attempts\", \"key\", \"timeout\",\n"
		   "                            \"limit_key\", \"expires_at\", \"unique_key\",\n"
		   "                            \"history\", \"depends_on\", \"on_success\",\n"
		   "                            \"on_failure\", \"on_dead\", \"on_recover\"}\n"
		   "  -v, --verbose             say what is done\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI\n\n"
		   "Tasks: %s (their payloads: man cronq, TASKS).\n", names);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	enqueue_args *a = state;
	int rc = 0;

	if (opt != OPT_JSONL)
		a->per_job_option = true;
	if (cli_job_option(opt, arg, src, &a->req.opts, &rc) ||
		cli_hook_option(opt, arg, src, &a->hooks, &rc))
		return rc;
	switch (opt) {
		case OPT_RUN_AT:
			a->req.run_at = arg;
			break;
		case OPT_IN:
			rc = cli_duration(src, arg, 0, &a->req.in_ms);
			break;
		case OPT_KEY:
			a->req.key = arg;
			break;
		case OPT_EXPIRES:
			rc = cli_duration(src, arg, 1000, &a->req.expires_ms);
			break;
		case OPT_EXPIRES_AT:
			a->req.expires_at = arg;
			break;
		case OPT_UNIQUE_KEY:
			a->req.unique_key = arg;
			break;
		case OPT_REPLACE:
			a->req.replace = true;
			break;
		case OPT_HISTORY:
			rc = cli_history(src, arg, &a->req.history);
			break;
		case OPT_JSONL:
			a->jsonl = true;
			break;
		case OPT_LIMIT_KEY:
			a->req.limit_key = arg;
			break;
		case OPT_AFTER: {
			char why[256];

			if (compose_ids_add(&a->after, &a->n_after, arg, why, sizeof why) != 0) {
				cli_error("invalid value for %s: %s", src->name, why);
				rc = EX_DATAERR;
			}
			break;
		}
	}
	return rc;
}

static void
progress(int64_t lines, bool done)
{
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rcronq: enqueue: %" PRId64 " line%s read%s", lines, lines == 1 ? "" : "s", done ? "\n" : "");
}

/* Read all of standard input (a payload given as "-"). */
static char *
read_stdin(void)
{
	buf b = BUF_INIT;
	char chunk[65536];
	size_t n;

	while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
		buf_append(&b, chunk, n);
	return buf_steal(&b);
}

/* Say on stderr what became of a request that made no new job. */
static void
report_note(const enqueue_req *req, int64_t id, enqueue_note note, const char *status)
{
	switch (note) {
		case ENQUEUE_CREATED:
			break;
		case ENQUEUE_KEY_EXISTS:
			log_warning("job %" PRId64 " already exists with key \"%s\"; nothing enqueued", id, req->key);
			break;
		case ENQUEUE_UNIQUE_WAITING:
			log_warning("job %" PRId64 " with unique key \"%s\" is already %s; not enqueued again",
						id, req->unique_key, strcmp(status, "failed") == 0 ? "waiting to retry" : status);
			break;
		case ENQUEUE_UNIQUE_RUNNING:
			log_warning("job %" PRId64 " with unique key \"%s\" is already running; %s", id,
						req->unique_key, req->replace ? "left alone, not replaced" : "not enqueued again");
			break;
		case ENQUEUE_REPLACED:
			log_warning("job %" PRId64 " with unique key \"%s\" was waiting; replaced its payload and run time",
						id, req->unique_key);
			break;
	}
}

static int
enqueue_main(enqueue_args *a, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"run-at", required_argument, OPT_RUN_AT, 0, "in"},
		{"in", required_argument, OPT_IN, 0, NULL},
		{"key", required_argument, OPT_KEY, 0, NULL},
		{"limit-key", required_argument, OPT_LIMIT_KEY, 0, NULL},
		{"expires", required_argument, OPT_EXPIRES, 0, "expires-at"},
		{"expires-at", required_argument, OPT_EXPIRES_AT, 0, NULL},
		{"unique-key", required_argument, OPT_UNIQUE_KEY, 0, NULL},
		{"replace", no_argument, OPT_REPLACE, 0, NULL},
		{"history", required_argument, OPT_HISTORY, 0, NULL},
		{"after", required_argument, OPT_AFTER, CLI_REPEATS, NULL},
		{"jsonl", no_argument, OPT_JSONL, 0, "run-at in key queue priority max-attempts timeout"
			" limit-key expires expires-at unique-key replace history after on-success"
			" on-failure on-dead on-recover"},
		CLI_JOB_OPTIONS,
		CLI_HOOK_OPTIONS,
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	cli_common common;
	cq_err err = {0};
	char *stdin_payload = NULL;
	PGconn *conn = NULL;
	int first, rc;

	if ((rc = cli_parse("enqueue", argc, argv, "d:vh", opts, on_opt, a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		help();
		return 0;
	}
	if (a->jsonl) {
		if ((rc = cli_check_args("enqueue", NULL, argc, argv, first, 0, 0)) != 0)
			return rc;
		if (a->per_job_option)
			return cli_usage_error("enqueue", "--jsonl takes every job's fields from its line, not from options");
	} else {
		if ((rc = cli_check_args("enqueue", "TYPE", argc, argv, first, 1, 2)) != 0)
			return rc;
		if (a->req.run_at && a->req.in_ms >= 0)
			return cli_usage_error("enqueue", "--run-at and --in cannot be used together");
		if (a->req.expires_at && a->req.expires_ms > 0)
			return cli_usage_error("enqueue", "--expires and --expires-at cannot be used together");
		if (a->req.replace && a->req.unique_key == NULL)
			return cli_usage_error("enqueue", "--replace needs --unique-key");
		a->req.type = argv[first];
		if (first + 1 < argc)
			a->req.payload = argv[first + 1];
		if (a->req.payload && strcmp(a->req.payload, "-") == 0)
			a->req.payload = stdin_payload = read_stdin();
		if (a->hooks)
			a->req.hooks = a->hooks_text = json_dumps(a->hooks, JSON_COMPACT);
		if (a->n_after > 0) {
			pg_array_ids(&a->after_text, a->after, (int) a->n_after);
			a->req.depends_on = buf_str(&a->after_text);
		}
		/* Refuse bad input before connecting: nothing can be written. */
		if ((rc = enqueue_check(&a->req, payload_validate, &err)) != 0)
			goto out;
	}

	if ((rc = cli_connect(&common, &conn, &err)) != 0)
		goto out;

	if (a->jsonl) {
		int64_t lines, created;

		rc = enqueue_jsonl(conn, stdin, payload_validate, progress, &lines, &created, &err);
		/* One line for the whole input, not one per job: -v's, or on a terminal ours. */
		if (rc == 0)
			cli_tell("enqueued %" PRId64 " job%s (%" PRId64 " already existed)", created, created == 1 ? "" : "s",
					 lines - created);
	} else {
		int64_t id;
		enqueue_note note;
		char status[16];

		rc = enqueue_one(conn, &a->req, payload_validate, &id, &note, status, &err);
		if (rc == 0) {
			/* The id alone on stdout, for $(cronq enqueue …); a job not
			 * made new has its warning, and no confirmation besides. */
			printf("%" PRId64 "\n", id);
			/* Committed: a script that cannot read the id must not think nothing was. */
			if (fflush(stdout) != 0 || ferror(stdout))
				rc = cq_fail(&err, EX_IOERR, "job %" PRId64 " was enqueued, but its id could not be written to"
							 " standard output", id);
			else if (note == ENQUEUE_CREATED)
				cli_confirm("enqueued job %" PRId64 " (%s, queue %s)", id, a->req.type,
							a->req.opts.queue ? a->req.opts.queue : "default");
			else
				report_note(&a->req, id, note, status);
		}
	}

out:
	pg_close(conn);
	free(stdin_payload);
	return rc ? cli_report(&err) : 0;
}

int
cmd_enqueue(int argc, char **argv)
{
	enqueue_args a;
	int rc;

	memset(&a, 0, sizeof a);
	a.req.in_ms = -1;
	rc = enqueue_main(&a, argc, argv);
	json_decref(a.hooks);
	free(a.hooks_text);
	free(a.after);
	buf_free(&a.after_text);
	return rc;
}
