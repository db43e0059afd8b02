/*
 * cli — what every subcommand's option parsing shares: environment
 * variables CRONQ_<FLAG> for the options the command line neither gives nor
 * excludes (flags win), the common options (--db, --verbose, --log-format,
 * --help), range-checked numbers and durations, and the usage-error
 * conventions.
 */
#ifndef CRONQ_CLI_H
#define CRONQ_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/enqueue.h"
#include "util/err.h"

/*
 * Option ids above the printable range for long-only options: a long
 * option's id is its short option or not a character (cli_parse relies on
 * it to tell an unknown short option from a long one).
 */
enum {
	OPT_DB = 'd',
	OPT_HELP = 'h',
	OPT_VERBOSE = 'v',
	OPT_LOG_FORMAT = 256,
	OPT_JOB_QUEUE = 270,		/* the job options: see CLI_JOB_OPTIONS */
	OPT_JOB_PRIORITY,
	OPT_JOB_MAX_ATTEMPTS,
	OPT_JOB_TIMEOUT,
	OPT_ON_SUCCESS = 280,		/* the hooks: see CLI_HOOK_OPTIONS, in compose_events' order */
	OPT_ON_FAILURE,
	OPT_ON_DEAD,
	OPT_ON_RECOVER,
	OPT_FIRST_CMD = 300,
};

/*
 * One option of a command's table: getopt_long's name, has_arg and id
 * (its short option, or an id above the printable range), then its policy.
 * CLI_REPEATS: the option may be given many times, and the environment
 * gives it as a comma-separated list (elsewhere a value is taken whole, as
 * the flag would be). clashes: the options it cannot be used with,
 * space-separated, or NULL: when the command line gives one side, the
 * environment's values for the other side are not used (they are meant for
 * other invocations), so that flags win. The command still checks its own
 * clashes on the command line after parsing. A table ends with a NULL name.
 */
typedef struct cli_option {
	const char *name;
	int			has_arg;		/* no_argument or required_argument */
	int			id;
	unsigned	flags;			/* CLI_REPEATS or 0 */
	const char *clashes;
} cli_option;

#define CLI_REPEATS 1u

#define CLI_COMMON_OPTIONS \
	{"db", required_argument, OPT_DB, 0, NULL}, \
	{"verbose", no_argument, OPT_VERBOSE, 0, NULL}, \
	{"log-format", required_argument, OPT_LOG_FORMAT, 0, NULL}, \
	{"help", no_argument, OPT_HELP, 0, NULL}

/* --queue, --priority, --max-attempts, --timeout: what enqueue, backfill
 * and schedule add let a job set (filled by cli_job_option). */
#define CLI_JOB_OPTIONS \
	{"queue", required_argument, OPT_JOB_QUEUE, 0, NULL}, \
	{"priority", required_argument, OPT_JOB_PRIORITY, 0, NULL}, \
	{"max-attempts", required_argument, OPT_JOB_MAX_ATTEMPTS, 0, NULL}, \
	{"timeout", required_argument, OPT_JOB_TIMEOUT, 0, NULL}

/* --on-success, --on-failure, --on-dead, --on-recover SPEC: the hooks
 * enqueue and schedule add let a job carry (filled by cli_hook_option). */
#define CLI_HOOK_OPTIONS \
	{"on-success", required_argument, OPT_ON_SUCCESS, 0, NULL}, \
	{"on-failure", required_argument, OPT_ON_FAILURE, 0, NULL}, \
	{"on-dead", required_argument, OPT_ON_DEAD, 0, NULL}, \
	{"on-recover", required_argument, OPT_ON_RECOVER, 0, NULL}

/* Where a value came from, for messages: "--batch" or "CRONQ_BATCH". */
typedef struct cli_src {
	char		name[96];
} cli_src;

typedef struct cli_common {
	const char *conninfo;		/* NULL: pg_default_conninfo() */
	int			verbose;
	bool		help;
} cli_common;

/*
 * Called once per option occurrence (env first, then argv; an environment
 * variable only for an option the command line neither gives nor excludes).
 * Returns 0, or an exit code after printing the error.
 */
typedef int (*cli_handler) (int opt, const char *arg, const cli_src *src, void *state);

/*
 * Parse options of subcommand cmd ("run") by its table opts; on success
 * *first_arg is the index of the first positional argument. Common options
 * fill common; the rest go to handler. Returns 0, or an exit code with the
 * error printed.
 */
int cli_parse(const char *cmd, int argc, char **argv, const char *shortopts,
			  const cli_option *opts, cli_handler handler, void *state,
			  cli_common *common, int *first_arg);

/* Print an error and the "Try …" line; returns EX_USAGE (64). */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an error about an option's value ("invalid value …"), no "Try" line. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * From now on keep the usage errors of cli_parse, cli_check_args,
 * cli_error and the value parsers in buf (the first one, without the
 * "Try" line) instead of printing them: for `cronq check`, which reports
 * them on its one line. buf NULL: print them again.
 */
void cli_capture_errors(char *buf, size_t len);
/* Check the count of positional arguments; 0 or EX_USAGE with a message. */
int cli_check_args(const char *cmd, const char *names, int argc, char **argv, int first, int min, int max);

/* Range-checked values; on error print "invalid value …" and return EX_USAGE. */
int cli_int(const cli_src *src, const char *arg, int64_t min, int64_t max, int64_t *out);
int cli_duration(const cli_src *src, const char *arg, int64_t min_ms, int64_t *out_ms);
int cli_history(const cli_src *src, const char *arg, const char **out);

/*
 * When opt is one of CLI_JOB_OPTIONS, store arg in opts, set *rc (0 or the
 * exit code, the error printed) and return true; else return false.
 */
bool cli_job_option(int opt, const char *arg, const cli_src *src, job_opts *opts, int *rc);

/*
 * When opt is one of CLI_HOOK_OPTIONS, add arg (a job spec or a task name)
 * to *hooks, set *rc (0, or 65 with the error printed: bad data, as in
 * --jsonl) and return true; else return false.
 */
bool cli_hook_option(int opt, const char *arg, const cli_src *src, json_t **hooks, int *rc);

/* The help lines of CLI_HOOK_OPTIONS, for a job ("the job") or a schedule's jobs. */
#define CLI_HOOK_HELP(whose) \
	"      --on-success SPEC     enqueue SPEC when " whose " succeeds: a job spec\n" \
	"                            {\"type\", \"payload\", \"queue\", \"priority\",\n" \
	"                            \"max_attempts\", \"timeout\"} or a task name;\n" \
	"                            {job_id} {type} {schedule} {status} {error} in\n" \
	"                            its payload's strings are replaced\n" \
	"      --on-failure SPEC     likewise after each failed attempt\n" \
	"      --on-dead SPEC        likewise when it goes dead\n" \
	"      --on-recover SPEC     likewise when it succeeds after a failed attempt\n" \
	"                            (or after a failed or dead job of its schedule)\n"

/* The most values one repeatable filter option takes. */
#define CLI_MAX_FILTERS 64

/* Append a value of a repeatable filter (--queue, --type, --status) to
 * list[*n], at most max: 0 or EX_USAGE with the error printed. */
int cli_add_filter(const char **list, int *n, int max, const char *arg, const cli_src *src);

/* The built-in tasks' names, ", "-separated, into out (for help and errors). */
void cli_task_names(char *out, size_t len);

/*
 * A pause or limit key for cmd to write: 0, or EX_USAGE with the error
 * printed (malformed, or type: naming no task, which would hold back
 * nothing, silently: a typo).
 */
int cli_flow_key(const char *cmd, const char *key);

/* argv[first…argc) as job ids (positive integers) into a new *ids. */
int cli_job_ids(int argc, char **argv, int first, int64_t **ids, int *n);

/* Connect and check the schema version: 0, or the code with err filled. */
int cli_connect(const cli_common *common, PGconn **conn, cq_err *err);

/* The connection string to use: --db, else CRONQ_DATABASE_URL, DATABASE_URL. */
const char *cli_conninfo(const cli_common *common);

/*
 * The one line a command that changed something says to a person: on
 * standard error when it is a terminal and the log format is text
 * ("cronq: added schedule nightly …"). Elsewhere (cron, pipes, scripts,
 * --log-format json) nothing, so that what they read stays as it was.
 * cli_confirming() says beforehand whether cli_confirm() will print, for a
 * command that must fetch what it would say; cli_confirm() returns it too.
 */
bool cli_confirming(void);
bool cli_confirm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same line as -v's info line when -v is given, else as cli_confirm(). */
bool cli_tell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print a lib error (and its hint) the standard way; returns its code. */
int cli_report(const cq_err *err);

#endif
