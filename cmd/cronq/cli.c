/*
 * cli — see cli.h. Messages follow PostgreSQL's client programs:
 * "cronq: error: …" then "Try \"cronq run --help\" for more information."
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "pg/pg.h"
#include "queue/compose.h"
#include "queue/enqueue.h"
#include "queue/flow.h"
#include "schema/migrate.h"
#include "tasks/task.h"
#include "util/duration.h"
#include "util/err.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Where usage errors go when cli_capture_errors() was called: the first one. */
static char *capture;
static size_t capture_len;

void
cli_capture_errors(char *buf, size_t len)
{
	capture = len > 0 ? buf : NULL;
	capture_len = len;
	if (capture)
		capture[0] = '\0';
}

/* Keep a message in the capture buffer, unless one is there already. */
static void capture_error(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void
capture_error(const char *fmt, va_list ap)
{
	if (capture[0] == '\0')
		vsnprintf(capture, capture_len, fmt, ap);
}

static void __attribute__((format(printf, 2, 0)))
verror(const char *hint, const char *fmt, va_list ap)
{
	char msg[4096];

	if (capture)
		capture_error(fmt, ap);
	else {
		vsnprintf(msg, sizeof msg, fmt, ap);
		log_full(LOG_ERROR, NULL, NULL, hint, "%s", msg);
	}
}

void
cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(NULL, fmt, ap);
	va_end(ap);
}

/* cli_error with a hint line (not part of a captured line). */
static void __attribute__((format(printf, 2, 3)))
cli_error_hint(const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(hint, fmt, ap);
	va_end(ap);
}

int
cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (capture) {
		capture_error(fmt, ap);
		va_end(ap);
		return EX_USAGE;
	}
	fputs("cronq: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cmd)
		fprintf(stderr, "Try \"cronq %s --help\" for more information.\n", cmd);
	else
		fputs("Try \"cronq --help\" for more information.\n", stderr);
	return EX_USAGE;
}

int
cli_check_args(const char *cmd, const char *names, int argc, char **argv, int first, int min, int max)
{
	int n = argc - first;

	/* Names and ids go to the server and back to terminals: text only. */
	for (int i = first; i < argc; i++)
		if (!utf8_valid(argv[i])) {
			cli_error("argument %d is not valid UTF-8", i - first + 1);
			return EX_USAGE;
		}
	if (n > max)
		return cli_usage_error(cmd, "too many command-line arguments (first is \"%s\")", argv[first + max]);
	if (n < min) {
		/* names' word n, the first one missing */
		const char *name = names ? names : "";
		int len;

		for (int i = 0; i < n && *name; i++) {
			name += strcspn(name, " ");
			name += strspn(name, " ");
		}
		len = (int) strcspn(name, " ");
		if (len == 0)
			return cli_usage_error(cmd, "missing required argument");
		return cli_usage_error(cmd, "missing required argument %.*s", len, name);
	}
	return 0;
}

int
cli_int(const cli_src *src, const char *arg, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	/* strtoll skips leading blanks; a flag's value may not have any. */
	if (!(isdigit((unsigned char) arg[0]) || (arg[0] == '-' && isdigit((unsigned char) arg[1]))) ||
		*end != '\0' || errno != 0 || v < min || v > max) {
		cli_error("invalid value \"%s\" for %s: must be an integer from %lld to %lld",
				  arg, src->name, (long long) min, (long long) max);
		return EX_USAGE;
	}
	*out = v;
	return 0;
}

/* A history policy given as a flag or variable: all or errors (64 otherwise, as any flag's value). */
int
cli_history(const cli_src *src, const char *arg, const char **out)
{
	if (!enqueue_history_valid(arg)) {
		log_error("invalid value \"%s\" for %s: must be all or errors", arg, src->name);
		return EX_USAGE;
	}
	*out = arg;
	return 0;
}

int
cli_duration(const cli_src *src, const char *arg, int64_t min_ms, int64_t *out_ms)
{
	char why[256], min[32];

	if (duration_parse(arg, out_ms, why, sizeof why) != 0) {
		cli_error_hint(DURATION_HINT, "invalid value \"%s\" for %s: %s", arg, src->name, why);
		return EX_USAGE;
	}
	if (*out_ms < min_ms) {
		duration_format(min_ms, min, sizeof min);
		cli_error("invalid value \"%s\" for %s: must be at least %s", arg, src->name, min);
		return EX_USAGE;
	}
	return 0;
}

const char *
cli_conninfo(const cli_common *common)
{
	return common->conninfo ? common->conninfo : pg_default_conninfo();
}

bool
cli_confirming(void)
{
	return log_get_format() == LOG_FORMAT_TEXT && isatty(STDERR_FILENO);
}

bool
cli_confirm(const char *fmt, ...)
{
	va_list ap;
	char line[1024];
	char *clean;

	if (!cli_confirming())
		return false;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* Names come from users and the database: no escape reaches the terminal. */
	clean = utf8_printable(line, false);
	fprintf(stderr, "cronq: %s\n", clean);
	free(clean);
	return true;
}

bool
cli_tell(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (log_enabled(LOG_INFO)) {
		log_info("%s", line);
		return true;
	}
	return cli_confirm("%s", line);
}

int
cli_report(const cq_err *err)
{
	log_full(LOG_ERROR, NULL, err->detail[0] ? err->detail : NULL, err->hint[0] ? err->hint : NULL,
			 "%s", err->msg);
	return err->code ? err->code : EX_SOFTWARE;
}

static bool
env_true(const char *v)
{
	return strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
		strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0;
}

static int
common_option(int opt, const char *arg, const cli_src *src, cli_common *common)
{
	switch (opt) {
		case OPT_DB:
			common->conninfo = arg;
			pg_set_conninfo_origin(src->name);
			return 0;
		case OPT_VERBOSE:
			common->verbose++;
			log_set_level(common->verbose > 1 ? LOG_DEBUG : LOG_INFO);
			return 0;
		case OPT_LOG_FORMAT:
			if (strcmp(arg, "text") == 0)
				log_set_format(LOG_FORMAT_TEXT);
			else if (strcmp(arg, "json") == 0)
				log_set_format(LOG_FORMAT_JSON);
			else {
				cli_error("invalid value \"%s\" for %s: must be \"text\" or \"json\"", arg, src->name);
				return EX_USAGE;
			}
			return 0;
		case OPT_HELP:
			common->help = true;
			return 0;
	}
	return -1;
}

static int
dispatch(int opt, const char *arg, const cli_src *src, cli_handler handler,
		 void *state, cli_common *common)
{
	int rc;

	/* Every value is text the server, a log line or a terminal gets. */
	if (arg && !utf8_valid(arg)) {
		cli_error("%s is not valid UTF-8", src->name);
		return EX_USAGE;
	}
	rc = common_option(opt, arg, src, common);
	return rc >= 0 ? rc : handler(opt, arg, src, state);
}

/* Whether name is a word of the space-separated list words. */
static bool
in_words(const char *words, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = words; (p = strstr(p, name)) != NULL; p += n)
		if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* Whether the command line gives the long option called name. */
static bool
argv_gives(const cli_option *opts, const bool *given, const char *name)
{
	for (size_t i = 0; opts[i].name; i++)
		if (strcmp(opts[i].name, name) == 0)
			return given[i];
	return false;
}

/* Whether the command line gives an option that clashes with option name. */
static bool
argv_excludes(const cli_option *opts, const bool *given, const char *name)
{
	for (size_t i = 0; opts[i].name; i++) {
		const char *others = opts[i].clashes;

		if (others == NULL)
			continue;
		if (strcmp(opts[i].name, name) == 0) {
			for (size_t j = 0; opts[j].name; j++)
				if (given[j] && in_words(others, opts[j].name))
					return true;
		} else if (in_words(others, name) && argv_gives(opts, given, opts[i].name))
			return true;
	}
	return false;
}

/* Handlers keep environment values by pointer: the copies live until exit. */
static char *env_copies[16];
static size_t n_env_copies;

static void
free_env_copies(void)
{
	while (n_env_copies > 0)
		free(env_copies[--n_env_copies]);
}

/*
 * CRONQ_<FLAG> for every option but --help that the command line neither
 * gives nor excludes (given[i] is whether argv gives opts[i]): a value,
 * split at commas for the options that repeat, or a boolean word for
 * switches. A value the command line overrides is never parsed.
 */
static int
apply_env(const cli_option *opts, const bool *given, cli_handler handler, void *state,
		  cli_common *common)
{
	/* --help shows the help whatever the environment holds. */
	for (size_t i = 0; opts[i].name; i++)
		if (opts[i].id == OPT_HELP && given[i])
			return 0;
	for (size_t i = 0; opts[i].name; i++) {
		const cli_option *o = &opts[i];
		cli_src src;
		const char *v;
		size_t k = 0;
		int rc = 0;

		if (o->id == OPT_HELP || given[i] || argv_excludes(opts, given, o->name))
			continue;
		k = (size_t) snprintf(src.name, sizeof src.name, "CRONQ_");
		for (const char *p = o->name; *p && k < sizeof src.name - 1; p++)
			src.name[k++] = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
		src.name[k] = '\0';
		v = getenv(src.name);
		if (v == NULL || *v == '\0')
			continue;
		if (o->has_arg == no_argument) {
			if (env_true(v))
				rc = dispatch(o->id, NULL, &src, handler, state, common);
		} else if (o->flags & CLI_REPEATS) {
			char *save;

			if (n_env_copies == sizeof env_copies / sizeof env_copies[0])
				continue;
			if (n_env_copies == 0)
				atexit(free_env_copies);
			save = env_copies[n_env_copies++] = xstrdup(v);
			/*
			 * Every item, empty ones too, which the option refuses as on the
			 * command line: "CRONQ_QUEUE=," dropped to no item at all would
			 * be no queue filter, every queue served.
			 */
			for (char *item = strsep(&save, ","); item && rc == 0; item = strsep(&save, ","))
				rc = dispatch(o->id, item, &src, handler, state, common);
		} else
			rc = dispatch(o->id, v, &src, handler, state, common);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * One pass of getopt_long over argv. The first pass (handler NULL) reports
 * the command line's syntax errors and only records in given which long
 * options it gives; the second dispatches each occurrence. Every long
 * option's id is either its short option or above the printable range
 * (cli.h), which is how an unknown short option is told from a long one.
 */
static int
scan_argv(const char *cmd, int argc, char **argv, const char *shortopts,
		  const struct option *longopts, bool *given, cli_handler handler,
		  void *state, cli_common *common)
{
	char optstring[64];
	int c, rc;

	snprintf(optstring, sizeof optstring, ":%s", shortopts);
	opterr = 0;
	optind = 0;					/* glibc: start afresh, as for a new argv */
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		const char *given_arg = argv[optind - 1];
		cli_src src;
		size_t i;

		if (c == '?') {
			if (optopt > 0 && optopt < 256 && (optopt == ':' || strchr(shortopts, optopt) == NULL))
				return cli_usage_error(cmd, "invalid option \"-%c\"", optopt);
			return cli_usage_error(cmd, "unrecognized option \"%s\"", given_arg);
		}
		if (c == ':') {
			/* A missing value ends argv: argv[optind - 1] holds the option. */
			if (strncmp(given_arg, "--", 2) != 0)
				return cli_usage_error(cmd, "option \"-%c\" requires a value", optopt);
			return cli_usage_error(cmd, "option \"%s\" requires a value", given_arg);
		}
		for (i = 0; longopts[i].name && longopts[i].val != c; i++)
			;
		if (handler == NULL) {
			if (longopts[i].name)
				given[i] = true;
			continue;
		}
		snprintf(src.name, sizeof src.name, "--%s", longopts[i].name ? longopts[i].name : "");
		if ((rc = dispatch(c, optarg, &src, handler, state, common)) != 0)
			return rc;
	}
	return 0;
}

/*
 * The command line is read twice: first to learn which options it gives,
 * so that the environment supplies only the others (flags win, and an
 * overridden environment value is never parsed), then to apply it after the
 * environment.
 */
int
cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
		  const cli_option *opts, cli_handler handler, void *state,
		  cli_common *common, int *first_arg)
{
	size_t n = 0;
	struct option *longopts;
	bool *given;
	int rc;

	memset(common, 0, sizeof *common);
	while (opts[n].name)
		n++;
	/* getopt_long's table: the same entries, in the same order. */
	longopts = xcalloc(n + 1, sizeof *longopts);
	for (size_t i = 0; i < n; i++)
		longopts[i] = (struct option) {opts[i].name, opts[i].has_arg, NULL, opts[i].id};
	given = xcalloc(n + 1, sizeof *given);
	if ((rc = scan_argv(cmd, argc, argv, shortopts, longopts, given, NULL, NULL, NULL)) == 0 &&
		(rc = apply_env(opts, given, handler, state, common)) == 0 &&
		(rc = scan_argv(cmd, argc, argv, shortopts, longopts, given, handler, state, common)) == 0)
		*first_arg = optind;
	free(given);
	free(longopts);
	return rc;
}

bool
cli_job_option(int opt, const char *arg, const cli_src *src, job_opts *opts, int *rc)
{
	int64_t v;

	*rc = 0;
	switch (opt) {
		case OPT_JOB_QUEUE:
			opts->queue = arg;
			return true;
		case OPT_JOB_PRIORITY:
			if ((*rc = cli_int(src, arg, -ENQUEUE_MAX_PRIORITY, ENQUEUE_MAX_PRIORITY, &v)) == 0) {
				opts->priority = (int) v;
				opts->has_priority = true;
			}
			return true;
		case OPT_JOB_MAX_ATTEMPTS:
			if ((*rc = cli_int(src, arg, 1, ENQUEUE_MAX_ATTEMPTS, &v)) == 0)
				opts->max_attempts = (int) v;
			return true;
		case OPT_JOB_TIMEOUT:
			*rc = cli_duration(src, arg, 1000, &opts->timeout_ms);
			return true;
	}
	return false;
}

bool
cli_hook_option(int opt, const char *arg, const cli_src *src, json_t **hooks, int *rc)
{
	char why[1024];

	*rc = 0;
	if (opt < OPT_ON_SUCCESS || opt > OPT_ON_RECOVER)
		return false;
	if (compose_hook_add(hooks, compose_events[opt - OPT_ON_SUCCESS], arg, why, sizeof why) != 0) {
		cli_error("invalid value for %s: %s", src->name, why);
		*rc = EX_DATAERR;
	}
	return true;
}

int
cli_add_filter(const char **list, int *n, int max, const char *arg, const cli_src *src)
{
	if (*n >= max) {
		cli_error("too many values for %s (at most %d)", src->name, max);
		return EX_USAGE;
	}
	if (arg[0] == '\0') {
		cli_error("invalid value \"\" for %s: must not be empty", src->name);
		return EX_USAGE;
	}
	list[(*n)++] = arg;
	return 0;
}

void
cli_task_names(char *out, size_t len)
{
	size_t k = 0;

	out[0] = '\0';
	for (const task_def *const *t = task_all(); *t && k < len; t++)
		k += (size_t) snprintf(out + k, len - k, "%s%s", k ? ", " : "", (*t)->name);
}

int
cli_flow_key(const char *cmd, const char *key)
{
	char why[256], names[256];

	if (flow_key_invalid(key, why, sizeof why))
		return cli_usage_error(cmd, "%s", why);
	if (strncmp(key, "type:", 5) == 0 && task_find(key + 5) == NULL) {
		cli_task_names(names, sizeof names);
		return cli_usage_error(cmd, "invalid key \"%s\": unrecognized task type (known tasks: %s)", key, names);
	}
	return 0;
}

int
cli_job_ids(int argc, char **argv, int first, int64_t **ids, int *n)
{
	cli_src src = {"job id"};
	int rc = 0;

	*n = argc - first;
	*ids = xcalloc((size_t) (*n > 0 ? *n : 1), sizeof **ids);
	for (int i = 0; i < *n && rc == 0; i++)
		rc = cli_int(&src, argv[first + i], 1, INT64_MAX, &(*ids)[i]);
	return rc;
}

int
cli_connect(const cli_common *common, PGconn **conn, cq_err *err)
{
	int rc;

	if ((*conn = pg_connect(cli_conninfo(common), err)) == NULL)
		return err->code;
	if ((rc = migrate_check(*conn, err)) != 0) {
		pg_close(*conn);
		*conn = NULL;
	}
	return rc;
}
