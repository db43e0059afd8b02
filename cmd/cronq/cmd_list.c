/*
 * cmd_list — "cronq list" (jobs, newest first, filtered) and "cronq show ID"
 * (one job with every attempt): options, then lib/queue/inspect. --json
 * prints the database's JSON untouched; text is laid out here for people.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/inspect.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/json.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"

enum {
	OPT_STATUS = OPT_FIRST_CMD, OPT_QUEUE, OPT_TYPE, OPT_LIMIT, OPT_JSON,
};

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 1000000
/* Text output: how much of an error a list line shows, and of an output show prints. */
#define ERROR_WIDTH 80
#define TAIL_LINES 10
#define TAIL_BYTES 4096

typedef struct list_args {
	const char *statuses[CLI_MAX_FILTERS];
	const char *queues[CLI_MAX_FILTERS];
	const char *types[CLI_MAX_FILTERS];
	inspect_filter filter;
	bool		json;
} list_args;

static const char connection_help[] =
	"  -v, --verbose             say what is done\n"
	"      --log-format FORMAT   text (default) or json\n"
	"  -h, --help                show this help, then exit\n\n"
	"Connection options:\n"
	"  -d, --db CONNINFO         libpq connection string or URI\n";

static void
list_help(void)
{
	printf("cronq list shows jobs, newest (highest id) first.\n\n"
		   "Usage:\n"
		   "  cronq list [OPTION]...\n\n"
		   "Options:\n"
		   "      --status STATUS       only jobs in STATUS: queued, running, succeeded,\n"
		   "                            failed, dead or cancelled; repeatable\n"
		   "      --queue NAME          only jobs of queue NAME; repeatable\n"
		   "      --type TYPE           only jobs of task TYPE; repeatable\n"
		   "      --limit N             at most N jobs (default %d)\n"
		   "      --json                a JSON array, one job object per line\n"
		   "%s\n"
		   "Repeated values of one option match any of them; different options must\n"
		   "all match. \"cronq show ID\" shows one job with every attempt.\n",
		   DEFAULT_LIMIT, connection_help);
}

static void
show_help(void)
{
	printf("cronq show shows one job and every attempt of it (outcome, error,\n"
		   "duration and the tail of its output).\n\n"
		   "Usage:\n"
		   "  cronq show ID [OPTION]...\n\n"
		   "Options:\n"
		   "      --json                the job as a JSON object, its attempts in \"runs\"\n"
		   "%s\n"
		   "Exits 65 when the job does not exist.\n",
		   connection_help);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	list_args *a = state;
	inspect_filter *f = &a->filter;

	switch (opt) {
		case OPT_STATUS:
			if (!inspect_status_valid(arg)) {
				log_error("invalid value \"%s\" for %s: must be queued, running, succeeded, failed, dead or cancelled",
						  arg, src->name);
				return EX_USAGE;
			}
			return cli_add_filter(a->statuses, &f->nstatuses, CLI_MAX_FILTERS, arg, src);
		case OPT_QUEUE:
			return cli_add_filter(a->queues, &f->nqueues, CLI_MAX_FILTERS, arg, src);
		case OPT_TYPE:
			return cli_add_filter(a->types, &f->ntypes, CLI_MAX_FILTERS, arg, src);
		case OPT_LIMIT:
			return cli_int(src, arg, 1, MAX_LIMIT, &f->limit);
		case OPT_JSON:
			a->json = true;
			return 0;
	}
	return 0;
}

/* The start of the last n bytes of s, not inside a UTF-8 sequence. */
static const char *
utf8_tail(const char *s, size_t n)
{
	size_t len = strlen(s);
	const char *p;

	if (len <= n)
		return s;
	p = s + len - n;
	while (*p && ((unsigned char) *p & 0xC0) == 0x80)
		p++;
	return p;
}

static void
print_list_text(const json_t *list)
{
	static const int widths[] = {8, 9, 8, 10, 8, 20, 20, 0};
	static const char *const head[] = {"ID", "STATUS", "TYPE", "QUEUE", "ATTEMPTS", "RUN AT", "FINISHED AT",
									   "ERROR"};
	buf line = BUF_INIT;
	size_t i;
	json_t *job;

	table_row(&line, 8, widths, head);
	fputs(buf_str(&line), stdout);
	json_array_foreach(list, i, job) {
		char id[32], attempts[32], *clean, *queue, *clipped;
		buf error = BUF_INIT;

		snprintf(id, sizeof id, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(job, "id")));
		snprintf(attempts, sizeof attempts, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(job, "attempts")),
				 json_integer_value(json_object_get(job, "max_attempts")));
		if (cq_json_str(job, "error_code", "")[0])
			buf_printf(&error, "%s: ", cq_json_str(job, "error_code", ""));
		clipped = utf8_clip(cq_json_str(job, "last_error", ""), ERROR_WIDTH, UTF8_CLIP_BYTES);
		buf_puts(&error, clipped);
		clean = utf8_printable(buf_str(&error), false);
		queue = utf8_printable(cq_json_str(job, "queue", ""), false);
		{
			const char *const cells[] = {id, cq_json_str(job, "status", ""), cq_json_str(job, "type", ""), queue,
										 attempts, cq_json_str(job, "run_at", ""),
										 cq_json_str(job, "finished_at", ""), clean};

			buf_reset(&line);
			table_row(&line, 8, widths, cells);
			fputs(buf_str(&line), stdout);
		}
		free(clipped);
		free(clean);
		free(queue);
		buf_free(&error);
	}
	buf_free(&line);
}

/* A JSON value for people: strings bare, null empty, the rest as compact JSON. */
static char *
value_text(const json_t *v)
{
	char *text;

	if (v == NULL || json_is_null(v))
		return xstrdup("");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	return text ? text : xstrdup("");
}

/* Seconds (a JSON number) for people: a timeout as "1h", a duration as "0.004s". */
static void
seconds_text(const json_t *v, bool as_duration, char *out, size_t len)
{
	if (!json_is_number(v))
		snprintf(out, len, "%s", "");
	else if (as_duration)
		duration_format((int64_t) (json_number_value(v) * 1000 + 0.5), out, len);
	else
		snprintf(out, len, "%.3fs", json_number_value(v));
}

/* Print text, its later lines indented by indent spaces, and a newline;
 * control characters escaped (utf8_printable). */
static void
print_indented(const char *text, int indent)
{
	char *clean = utf8_printable(text, true);

	for (const char *p = clean; *p; p++) {
		putchar(*p);
		if (*p == '\n' && p[1])
			printf("%*s", indent, "");
	}
	putchar('\n');
	free(clean);
}

/* The last TAIL_LINES lines (at most TAIL_BYTES) of output, indented. */
static void
print_tail(const char *output)
{
	const char *p = utf8_tail(output, TAIL_BYTES);
	const char *end = p + strlen(p);
	int lines = 0;

	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (const char *q = end; q > p; q--)
		if (q[-1] == '\n' && ++lines == TAIL_LINES) {
			p = q;
			break;
		}
	if (p != output)
		printf("    ...\n");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);

		char *line = xstrndup(p, n), *clean = utf8_printable(line, false);

		printf("    %s\n", clean);
		free(clean);
		free(line);
		p += n + (nl ? 1 : 0);
	}
}

static void
print_show_text(const json_t *job)
{
	json_t *runs = json_object_get(job, "runs");
	const char *key;
	json_t *v, *run;
	size_t i;

	json_object_foreach((json_t *) job, key, v) {
		char *text;
		char dur[64];

		if (strcmp(key, "runs") == 0)
			continue;
		if (strcmp(key, "timeout") == 0) {
			seconds_text(v, true, dur, sizeof dur);
			printf("%-17s %s\n", key, dur);
			continue;
		}
		text = value_text(v);
		printf("%-17s ", key);
		if (strcmp(key, "last_error") == 0)
			print_indented(text, 18);
		else {
			/* One line each: a queue or key holding a line break stays on its own. */
			char *clean = utf8_printable(text, false);

			printf("%s\n", clean);
			free(clean);
		}
		free(text);
	}
	printf("\n%s (%zu):\n", "runs", json_array_size(runs));
	json_array_foreach(runs, i, run) {
		char dur[64];
		const char *output = cq_json_str(run, "output", "");

		seconds_text(json_object_get(run, "duration"), false, dur, sizeof dur);
		printf("  attempt %" JSON_INTEGER_FORMAT ": %s", json_integer_value(json_object_get(run, "attempt")),
			   cq_json_str(run, "outcome", ""));
		if (cq_json_str(run, "started_at", "")[0])
			printf(", started %s", cq_json_str(run, "started_at", ""));
		if (dur[0])
			printf(", took %s", dur);
		if (cq_json_str(run, "worker", "")[0]) {
			char *worker = utf8_printable(cq_json_str(run, "worker", ""), false);

			printf(", worker %s", worker);
			free(worker);
		}
		putchar('\n');
		if (cq_json_str(run, "error", "")[0] || cq_json_str(run, "error_code", "")[0]) {
			printf("    error: %s%s", cq_json_str(run, "error_code", ""),
				   cq_json_str(run, "error_code", "")[0] && cq_json_str(run, "error", "")[0] ? ": " : "");
			print_indented(cq_json_str(run, "error", ""), 11);
		}
		if (output[0]) {
			printf("    output:\n");
			print_tail(output);
		}
	}
}

/* Decode the database's JSON for text output. */
static json_t *
decode(const char *text, cq_err *err)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);

	if (v == NULL)
		cq_fail(err, EX_SOFTWARE, "could not decode the database's answer: %s", jerr.text);
	return v;
}

/* The database's JSON answer as it is (--json), or decoded and printed for people. */
static int
print_answer(const char *text, bool json, void (*print_text) (const json_t *), cq_err *err)
{
	json_t *v;

	if (json) {
		printf("%s\n", text);
		return 0;
	}
	if ((v = decode(text, err)) == NULL)
		return err->code;
	print_text(v);
	json_decref(v);
	return 0;
}

int
cmd_list(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"status", required_argument, OPT_STATUS, CLI_REPEATS, NULL},
		{"queue", required_argument, OPT_QUEUE, CLI_REPEATS, NULL},
		{"type", required_argument, OPT_TYPE, CLI_REPEATS, NULL},
		{"limit", required_argument, OPT_LIMIT, 0, NULL},
		{"json", no_argument, OPT_JSON, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	list_args a;
	cli_common common;
	cq_err err = {0};
	PGconn *conn = NULL;
	char *text = NULL;
	int64_t count = 0;
	int first, rc;

	memset(&a, 0, sizeof a);
	a.filter.statuses = a.statuses;
	a.filter.queues = a.queues;
	a.filter.types = a.types;
	a.filter.limit = DEFAULT_LIMIT;
	if ((rc = cli_parse("list", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		list_help();
		return 0;
	}
	if ((rc = cli_check_args("list", argc, argv, first, 0, 0)) != 0)
		return rc;
	if ((rc = cli_connect(&common, &conn, &err)) != 0 ||
		(rc = inspect_list(conn, &a.filter, &text, &count, &err)) != 0)
		goto out;
	rc = print_answer(text, a.json, print_list_text, &err);
out:
	pg_close(conn);
	free(text);
	return rc ? cli_report(&err) : 0;
}

int
cmd_show(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"json", no_argument, OPT_JSON, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	list_args a;
	cli_common common;
	cq_err err = {0};
	cli_src src = {"job id"};
	PGconn *conn = NULL;
	char *text = NULL;
	int64_t id;
	int first, rc;

	memset(&a, 0, sizeof a);
	if ((rc = cli_parse("show", argc, argv, "d:vh", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	if (common.help) {
		show_help();
		return 0;
	}
	if ((rc = cli_check_args("show", argc, argv, first, 1, 1)) != 0 ||
		(rc = cli_int(&src, argv[first], 1, INT64_MAX, &id)) != 0)
		return rc;
	if ((rc = cli_connect(&common, &conn, &err)) != 0 ||
		(rc = inspect_show(conn, id, &text, &err)) != 0)
		goto out;
	rc = print_answer(text, a.json, print_show_text, &err);
out:
	pg_close(conn);
	free(text);
	return rc ? cli_report(&err) : 0;
}
