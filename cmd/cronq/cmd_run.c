/*
 * cmd_run — "cronq run": options and signals, then lib/run/runner.
 * Silent when all is well; problems go to stderr.
 */
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "pg/pg.h"
#include "queue/enqueue.h"
#include "run/runner.h"
#include "tasks/exec.h"
#include "tasks/task.h"
#include "util/log.h"
#include "util/xalloc.h"

enum {
	OPT_BATCH = OPT_FIRST_CMD, OPT_MAX_JOBS, OPT_MAX_RUNTIME, OPT_CONCURRENCY,
	OPT_QUEUE = 'q', OPT_TYPE = 't', OPT_LEASE = OPT_FIRST_CMD + 10, OPT_WORKER_ID,
	OPT_LINGER, OPT_POLL, OPT_GRACE, OPT_SEED, OPT_FAIL_ON_ERROR, OPT_EXEC_DIR, OPT_KILL_GRACE, OPT_EXEC_USER,
	OPT_EXCLUDE_QUEUE,
};


typedef struct run_args {
	run_opts	o;
	const char *queues[CLI_MAX_FILTERS];
	const char *types[CLI_MAX_FILTERS];
	const char *exclude_queues[CLI_MAX_FILTERS];
	bool		fail_on_error;
	bool		poll_set;
	const char *exec_user;
} run_args;

static void
help(void)
{
	printf("cronq run claims due jobs, runs them, records their outcomes, and exits.\n\n"
		   "Usage:\n"
		   "  cronq run [OPTION]...\n\n"
		   "Options:\n"
		   "      --batch N             at most N jobs per claim (default %d); the claim\n"
		   "                            starts at 1 and grows while jobs are quick\n"
		   "      --max-jobs N          run at most N jobs, then exit\n"
		   "      --max-runtime DURATION  stop claiming and starting jobs after DURATION\n"
		   "                            (started jobs finish; unstarted ones are given back)\n"
		   "      --concurrency N       parallel workers, each with its own connection (default 1)\n"
		   "  -q, --queue NAME          only this queue (repeatable)\n"
		   "      --exclude-queue NAME  never this queue (repeatable); wins over --queue\n"
		   "  -t, --type NAME           only this task type (repeatable; a built-in task)\n"
		   "      --lease DURATION      lease on claimed jobs, renewed while they run\n"
		   "                            (default 60s); also the longest the run waits for\n"
		   "                            the answer to a statement of its own (at least\n"
		   "                            2s): then the connection counts as lost\n"
		   "      --worker-id ID        name recorded in locked_by (default host:pid:random)\n"
		   "      --linger DURATION     keep polling for new jobs until DURATION after start\n"
		   "      --poll DURATION       poll interval while lingering (default 1s)\n"
		   "      --grace DURATION      on SIGTERM/SIGINT, time running jobs get to finish\n"
		   "                            before they are given back (default 10s)\n"
		   "      --exec-dir DIR        where the programs of exec jobs live (none: exec is refused)\n"
		   "      --exec-user USER      run programs as USER (its group, no other group, its\n"
		   "                            home as HOME): cronq run must be started as root\n"
		   "      --kill-grace DURATION a stopped program gets SIGTERM, then SIGKILL after\n"
		   "                            DURATION; a stopped SQL statement is given up after\n"
		   "                            DURATION (default 5s)\n"
		   "      --seed N              seed of the backoff jitter (for tests)\n"
		   "      --fail-on-error       exit 1 when a job failed during this run\n"
		   "  -v, --verbose             log claims and every job outcome (twice: debug)\n"
		   "      --log-format FORMAT   text (default) or json\n"
		   "  -h, --help                show this help, then exit\n\n"
		   "Connection options:\n"
		   "  -d, --db CONNINFO         libpq connection string or URI; connecting gives up\n"
		   "                            after 10s unless it sets connect_timeout (or\n"
		   "                            PGCONNECT_TIMEOUT does); SIGTERM/SIGINT while\n"
		   "                            connecting ends the run at once\n\n"
		   "Every option can also be set as CRONQ_<OPTION> (CRONQ_BATCH=100, CRONQ_QUEUE=a,b);\n"
		   "an option given on the command line wins. Silent when all is well; when\n"
		   "standard error is a terminal, one line at the end says what the run came to.\n",
		   RUN_DEFAULT_BATCH);
}

static int
on_opt(int opt, const char *arg, const cli_src *src, void *state)
{
	run_args *a = state;
	run_opts *o = &a->o;
	int64_t v;
	int rc = 0;

	switch (opt) {
		case OPT_BATCH:
			if ((rc = cli_int(src, arg, 1, 10000, &v)) == 0)
				o->batch = (int) v;
			break;
		case OPT_MAX_JOBS:
			rc = cli_int(src, arg, 1, INT64_MAX, &o->max_jobs);
			break;
		case OPT_MAX_RUNTIME:
			rc = cli_duration(src, arg, 1, &o->max_runtime_ms);
			break;
		case OPT_CONCURRENCY:
			if ((rc = cli_int(src, arg, 1, 64, &v)) == 0)
				o->concurrency = (int) v;
			break;
		case OPT_QUEUE:
			rc = cli_add_filter(a->queues, &o->filter.nqueues, CLI_MAX_FILTERS, arg, src);
			break;
		case OPT_EXCLUDE_QUEUE:
			rc = cli_add_filter(a->exclude_queues, &o->filter.nexclude_queues, CLI_MAX_FILTERS,
								arg, src);
			break;
		case OPT_TYPE:
			/* A type no task has would match nothing, silently: a typo. */
			if (arg[0] != '\0' && task_find(arg) == NULL) {
				char names[256];

				cli_task_names(names, sizeof names);
				log_error("invalid value \"%s\" for %s: unrecognized task type (known tasks: %s)",
						  arg, src->name, names);
				rc = EX_USAGE;
			} else
				rc = cli_add_filter(a->types, &o->filter.ntypes, CLI_MAX_FILTERS, arg, src);
			break;
		case OPT_LEASE:
			rc = cli_duration(src, arg, 1000, &o->lease_ms);
			break;
		case OPT_WORKER_ID:
			/* Printed by status, logged, compared: no control character. */
			if (arg[0] == '\0' || strlen(arg) > 200 || enqueue_has_control(arg)) {
				log_error("invalid value for %s: must be 1 to 200 bytes of printable text without control"
						  " characters", src->name);
				rc = EX_USAGE;
			} else
				o->worker_id = arg;
			break;
		case OPT_LINGER:
			rc = cli_duration(src, arg, 0, &o->linger_ms);
			break;
		case OPT_POLL:
			rc = cli_duration(src, arg, 10, &o->poll_ms);
			break;
		case OPT_GRACE:
			rc = cli_duration(src, arg, 0, &o->grace_ms);
			break;
		case OPT_SEED:
			if ((rc = cli_int(src, arg, 0, INT64_MAX, &v)) == 0)
				o->seed = (uint64_t) v;
			break;
		case OPT_FAIL_ON_ERROR:
			a->fail_on_error = true;
			break;
		case OPT_EXEC_DIR:
			o->exec_dir = arg;
			break;
		case OPT_KILL_GRACE:
			rc = cli_duration(src, arg, 0, &o->kill_grace_ms);
			break;
		case OPT_EXEC_USER:
			a->exec_user = arg;
			break;
	}
	return rc;
}

/*
 * --exec-user: the user's uid, gid and home into o. Programs then run
 * without the runner's identity: none of its files (~/.pgpass, client
 * keys), none of its processes. Only root may start processes as another
 * user, and root itself is refused.
 */
static int
exec_user_resolve(const char *name, run_opts *o)
{
	struct passwd *pw = getpwnam(name);

	if (pw == NULL) {
		log_error("--exec-user: no such user \"%s\"", name);
		return EX_CONFIG;
	}
	if (pw->pw_uid == 0) {
		log_error("--exec-user: programs may not run as root (\"%s\")", name);
		return EX_USAGE;
	}
	if (geteuid() != 0) {
		log_error("--exec-user: cronq run must be started as root to run programs as \"%s\"", name);
		return EX_CONFIG;
	}
	o->exec_uid = pw->pw_uid;
	o->exec_gid = pw->pw_gid;
	o->exec_home = xstrdup(pw->pw_dir);
	return 0;
}

static void
on_signal(int sig)
{
	(void) sig;
	runner_request_stop();
}

int
cmd_run(int argc, char **argv)
{
	static const cli_option opts[] = {
		{"batch", required_argument, OPT_BATCH, 0, NULL},
		{"max-jobs", required_argument, OPT_MAX_JOBS, 0, NULL},
		{"max-runtime", required_argument, OPT_MAX_RUNTIME, 0, NULL},
		{"concurrency", required_argument, OPT_CONCURRENCY, 0, NULL},
		{"queue", required_argument, OPT_QUEUE, CLI_REPEATS, NULL},
		{"exclude-queue", required_argument, OPT_EXCLUDE_QUEUE, CLI_REPEATS, NULL},
		{"type", required_argument, OPT_TYPE, CLI_REPEATS, NULL},
		{"lease", required_argument, OPT_LEASE, 0, NULL},
		{"worker-id", required_argument, OPT_WORKER_ID, 0, NULL},
		{"linger", required_argument, OPT_LINGER, 0, NULL},
		{"poll", required_argument, OPT_POLL, 0, NULL},
		{"grace", required_argument, OPT_GRACE, 0, NULL},
		{"seed", required_argument, OPT_SEED, 0, NULL},
		{"fail-on-error", no_argument, OPT_FAIL_ON_ERROR, 0, NULL},
		{"exec-dir", required_argument, OPT_EXEC_DIR, 0, NULL},
		{"kill-grace", required_argument, OPT_KILL_GRACE, 0, NULL},
		{"exec-user", required_argument, OPT_EXEC_USER, 0, NULL},
		CLI_COMMON_OPTIONS,
		{NULL, 0, 0, 0, NULL},
	};
	run_args a;
	cli_common common;
	run_summary sum;
	cq_err err = {0};
	struct sigaction sa;
	char why[1024];
	int first, rc;

	memset(&a, 0, sizeof a);
	a.o.batch = RUN_DEFAULT_BATCH;
	a.o.concurrency = 1;
	a.o.lease_ms = RUN_DEFAULT_LEASE_MS;
	a.o.poll_ms = RUN_DEFAULT_POLL_MS;
	a.o.grace_ms = RUN_DEFAULT_GRACE_MS;
	a.o.kill_grace_ms = RUN_DEFAULT_KILL_GRACE_MS;
	a.o.exec_uid = a.o.exec_gid = -1;
	if (getrandom(&a.o.seed, sizeof a.o.seed, 0) != (ssize_t) sizeof a.o.seed)
		a.o.seed = (uint64_t) time(NULL) ^ ((uint64_t) getpid() << 32);
	a.o.filter.queues = a.queues;
	a.o.filter.types = a.types;
	a.o.filter.exclude_queues = a.exclude_queues;
	if ((rc = cli_parse("run", argc, argv, "d:vhq:t:", opts, on_opt, &a, &common, &first)) != 0)
		return rc;
	/* A runner logs in as the schema's owner: no grant makes one. */
	pg_set_needed_role(NULL);
	if (common.help) {
		help();
		return 0;
	}
	if ((rc = cli_check_args("run", NULL, argc, argv, first, 0, 0)) != 0)
		return rc;
	/* Refuse to start rather than let every exec job it claims go dead. */
	if (a.o.exec_dir && a.o.exec_dir[0] != '\0' && exec_dir_check(a.o.exec_dir, why, sizeof why) != 0) {
		log_error("%s", why);
		return EX_CONFIG;
	}
	if (a.exec_user && (rc = exec_user_resolve(a.exec_user, &a.o)) != 0)
		return rc;
	a.o.conninfo = cli_conninfo(&common);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* A closed pipe to a task must not kill the runner. */
	signal(SIGPIPE, SIG_IGN);

	rc = runner_run(&a.o, &sum, &err);
	free((char *) a.o.exec_home);
	log_info("run finished: %" PRId64 " job%s, %" PRId64 " succeeded, %" PRId64 " failed, %"
			 PRId64 " given back, %d lease%s rescued, %d expired",
			 sum.run, sum.run == 1 ? "" : "s", sum.succeeded, sum.failed, sum.given_back, sum.rescued,
			 sum.rescued == 1 ? "" : "s", sum.expired);
	/* Silent under cron; on a terminal what the run came to, unless -v said it all. */
	if (rc == 0 && !log_enabled(LOG_INFO))
		cli_confirm("ran %" PRId64 " job%s: %" PRId64 " succeeded, %" PRId64 " failed, %" PRId64 " given back",
					sum.run, sum.run == 1 ? "" : "s", sum.succeeded, sum.failed, sum.given_back);
	if (rc != 0)
		return cli_report(&err);
	if (a.fail_on_error && sum.failed > 0)
		return 1;
	return 0;
}
