/*
 * exec — {"command": "NAME", "args": ["..."], "env": {"K": "V"}}: runs the
 * program NAME found directly in the exec directory, with no shell. Exit 0
 * succeeds, 75 (EX_TEMPFAIL) is a retryable failure, any other status is a
 * permanent one; death by a signal is retryable. The tail of stdout and
 * stderr (64 KiB) is kept. A stop (timeout, cancel, shutdown, lost lease)
 * sends SIGTERM to the program's process group, then SIGKILL after the
 * grace period; when the program ends, what is left of its group is
 * killed, so no orphan survives it.
 *
 * The program's environment is built, not inherited: PATH, HOME, LANG,
 * LC_ALL, TZ and TMPDIR from the runner, the payload's env, and the
 * CRONQ_* variables. Database credentials in the runner's environment are
 * not passed on.
 */
#include "tasks/exec.h"
#include "tasks/task.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg/pg.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define OUTPUT_TAIL (64 * 1024)

static bool
valid_command(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 255)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '_' || (i > 0 && (c == '.' || c == '+' || c == '-'));

		if (!ok)
			return false;
	}
	return true;
}

static bool
valid_env_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return strncmp(s, "CRONQ_", 6) != 0;
}

static int
exec_validate(const json_t *payload, char *err, size_t errlen)
{
	static const char *const allowed[] = {"command", "args", "env", NULL};
	const char *key = task_unknown_key(payload, allowed);
	json_t *cmd = json_object_get(payload, "command");
	json_t *args = json_object_get(payload, "args");
	json_t *env = json_object_get(payload, "env");
	json_t *v;
	size_t i;

	if (key) {
		snprintf(err, errlen, "unknown key \"%s\"", key);
		return -1;
	}
	if (cmd == NULL) {
		snprintf(err, errlen, "\"command\" is required");
		return -1;
	}
	if (!json_is_string(cmd) || !valid_command(json_string_value(cmd))) {
		snprintf(err, errlen, "\"command\" must be a program name in the exec directory: letters, digits and _.+- with no \"/\"");
		return -1;
	}
	if (args) {
		bool ok = json_is_array(args);

		json_array_foreach(args, i, v)
			ok = ok && json_is_string(v);
		if (!ok) {
			snprintf(err, errlen, "\"args\" must be an array of strings");
			return -1;
		}
	}
	if (env) {
		bool ok = json_is_object(env);

		json_object_foreach(env, key, v)
			ok = ok && json_is_string(v) && valid_env_name(key);
		if (!ok) {
			snprintf(err, errlen, "\"env\" must map variable names (not CRONQ_*) to strings");
			return -1;
		}
	}
	return 0;
}

/* dir with symlinks resolved into real_dir (PATH_MAX bytes), when it is a
 * directory we may search; else -1 with the reason in why. */
static int
dir_resolve(const char *dir, char *real_dir, char *why, size_t len)
{
	struct stat st;

	if (realpath(dir, real_dir) != NULL && stat(real_dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			errno = ENOTDIR;
		else if (access(real_dir, X_OK) == 0)
			return 0;
	}
	snprintf(why, len, "exec directory \"%.600s\" is not usable: %s", dir, strerror(errno));
	return -1;
}

int
exec_dir_check(const char *dir, char *why, size_t len)
{
	char real_dir[PATH_MAX];

	return dir_resolve(dir, real_dir, why, len);
}

/*
 * The program's path: a regular executable file directly inside the exec
 * directory, symlinks resolved and required to stay there. Returns a new
 * string, or NULL with the refusal in why.
 */
static char *
resolve(const char *dir, const char *command, char *why, size_t len)
{
	char real_dir[PATH_MAX], real_path[PATH_MAX], path[PATH_MAX];
	struct stat st;
	char *slash;

	if (dir_resolve(dir, real_dir, why, len) != 0)
		return NULL;
	if ((size_t) snprintf(path, sizeof path, "%s/%s", real_dir, command) >= sizeof path ||
		realpath(path, real_path) == NULL) {
		snprintf(why, len, "no program \"%.255s\" in the exec directory %.600s", command, real_dir);
		return NULL;
	}
	slash = strrchr(real_path, '/');
	if (slash == NULL || (size_t) (slash - real_path) != strlen(real_dir) ||
		strncmp(real_path, real_dir, strlen(real_dir)) != 0) {
		snprintf(why, len, "program \"%.255s\" leads outside the exec directory %.600s", command, real_dir);
		return NULL;
	}
	if (stat(real_path, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "program \"%s\" is not a regular file", command);
		return NULL;
	}
	if (access(real_path, X_OK) != 0 || (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0) {
		snprintf(why, len, "program \"%s\" is not executable", command);
		return NULL;
	}
	return xstrdup(real_path);
}

/* Whether the job's author may run programs now (membership is re-checked
 * before every run: a revoked grant takes effect at once). */
static int
author_may_exec(const task_ctx *ctx, const task_job *job, char *why, size_t len)
{
	PGconn *conn = ctx->session(ctx->arg, why, len);
	const char *params[1] = {job->enqueued_by};
	PGresult *r;
	int ok;

	if (conn == NULL)
		return -1;
	r = PQexecParams(conn,
					 "select exists (select 1 from pg_catalog.pg_roles where rolname = 'cronq_exec')"
					 " and exists (select 1 from pg_catalog.pg_roles where rolname = $1)"
					 " and pg_catalog.pg_has_role($1, 'cronq_exec', 'MEMBER')",
					 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		snprintf(why, len, "could not check the role of the job: %s", PQerrorMessage(conn));
		PQclear(r);
		return -1;
	}
	ok = PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return ok ? 1 : 0;
}

typedef struct strvec {
	char	  **v;
	size_t		n, cap;
} strvec;

static void
strvec_push(strvec *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xrealloc(sv->v, sv->cap * sizeof *sv->v);
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

static void
strvec_free(strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
}

static void
build_env(const task_job *job, strvec *env)
{
	static const char *const kept[] = {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", NULL};
	json_t *extra = json_object_get(job->payload, "env");
	const char *key;
	json_t *v;

	for (const char *const *k = kept; *k; k++) {
		const char *val = getenv(*k);

		if (val)
			strvec_push(env, xasprintf("%s=%s", *k, val));
		else if (strcmp(*k, "PATH") == 0)
			strvec_push(env, xstrdup("PATH=/usr/local/bin:/usr/bin:/bin"));
	}
	json_object_foreach(extra, key, v)
		strvec_push(env, xasprintf("%s=%s", key, json_string_value(v)));
	strvec_push(env, xasprintf("CRONQ_JOB_ID=%lld", (long long) job->id));
	strvec_push(env, xasprintf("CRONQ_ATTEMPT=%d", job->attempt));
	strvec_push(env, xasprintf("CRONQ_PAYLOAD=%s", job->payload_text));
	strvec_push(env, xasprintf("CRONQ_IDEMPOTENCY_KEY=%s", job->idempotency_key ? job->idempotency_key : ""));
	strvec_push(env, xasprintf("CRONQ_SCHEDULED_FOR=%s", job->scheduled_for ? job->scheduled_for : ""));
}

/* In the child: never returns. */
static void
child(const char *dir, const char *path, char **argv, char **envp, int out)
{
	sigset_t none;
	int devnull = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	if (chdir(dir) != 0)
		_exit(126);
	execve(path, argv, envp);
	dprintf(STDERR_FILENO, "cronq: could not run %s: %s\n", path, strerror(errno));
	_exit(127);
}

/* Keep the last OUTPUT_TAIL bytes of what the program wrote. */
typedef struct tail {
	char		data[OUTPUT_TAIL];
	size_t		len;			/* bytes held, <= OUTPUT_TAIL */
	size_t		start;			/* ring start */
	bool		cut;			/* earlier output was dropped */
} tail;

static void
tail_add(tail *t, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (t->len < OUTPUT_TAIL)
			t->data[(t->start + t->len++) % OUTPUT_TAIL] = p[i];
		else {
			t->data[t->start] = p[i];
			t->start = (t->start + 1) % OUTPUT_TAIL;
			t->cut = true;
		}
	}
}

static char *
tail_text(const tail *t)
{
	char *flat = xmalloc(t->len + 1);
	char *clean;

	for (size_t i = 0; i < t->len; i++)
		flat[i] = t->data[(t->start + i) % OUTPUT_TAIL];
	clean = utf8_sanitize(flat, t->len);
	free(flat);
	return clean;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
exec_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	const char *command = json_string_value(json_object_get(job->payload, "command"));
	json_t *args = json_object_get(job->payload, "args");
	strvec argv = {NULL, 0, 0}, envp = {NULL, 0, 0};
	tail *out = NULL;
	char why[1024];
	char *path = NULL;
	int pipefd[2] = {-1, -1}, status = 0, may;
	pid_t pid;
	int64_t term_at = 0, exited_at = 0;
	bool exited = false, eof = false;
	size_t i;
	json_t *v;

	if (ctx->exec_dir == NULL || ctx->exec_dir[0] == '\0') {
		task_result_set(res, TASK_PERMANENT, "exec_refused",
						"exec jobs are refused: no exec directory is configured (--exec-dir or CRONQ_EXEC_DIR)");
		return;
	}
	if ((may = author_may_exec(ctx, job, why, sizeof why)) < 0) {
		task_result_set(res, TASK_FAILED, "connection", "%s", why);
		return;
	}
	if (may == 0) {
		task_result_set(res, TASK_PERMANENT, "permission_denied",
						"role \"%s\" may not run programs: it is not a member of cronq_exec", job->enqueued_by);
		return;
	}
	if ((path = resolve(ctx->exec_dir, command, why, sizeof why)) == NULL) {
		task_result_set(res, TASK_PERMANENT, "exec_refused", "%s", why);
		return;
	}

	strvec_push(&argv, xstrdup(command));
	json_array_foreach(args, i, v)
		strvec_push(&argv, xstrdup(json_string_value(v)));
	build_env(job, &envp);
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		task_result_set(res, TASK_FAILED, "exec_failed", "could not create a pipe: %s", strerror(errno));
		goto out;
	}
	if ((pid = fork()) < 0) {
		task_result_set(res, TASK_FAILED, "exec_failed", "could not start a process: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(ctx->exec_dir, path, argv.v, envp.v, pipefd[1]);
	setpgid(pid, pid);			/* both sides, so no signal races the child's own call */
	close(pipefd[1]);
	pipefd[1] = -1;
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	out = xcalloc(1, sizeof *out);

	while (!exited || !eof) {
		struct pollfd pfd = {pipefd[0], POLLIN, 0};
		char chunk[8192];
		ssize_t n;

		if (!eof && poll(&pfd, 1, 50) > 0) {
			while ((n = read(pipefd[0], chunk, sizeof chunk)) > 0)
				tail_add(out, chunk, (size_t) n);
			if (n == 0)
				eof = true;
		} else if (eof) {
			struct timespec nap = {0, 20 * 1000000};

			nanosleep(&nap, NULL);
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			exited_at = now_ms();
			/* What is left of its group (e.g. a "sleep &") goes with it. */
			kill(-pid, SIGKILL);
		}
		/* A process that left the group may hold the pipe: stop reading. */
		if (exited && !eof && now_ms() - exited_at > 1000)
			break;
		if (!exited && term_at == 0 && task_tick(ctx) != TASK_GO) {
			kill(-pid, SIGTERM);
			term_at = now_ms();
		}
		if (!exited && term_at && now_ms() - term_at >= ctx->kill_grace_ms)
			kill(-pid, SIGKILL);
	}

	res->output = tail_text(out);
	if (term_at)
		;						/* stopped: the runner records why */
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 75)
		task_result_set(res, TASK_FAILED, "tempfail", "%s exited with status 75 (temporary failure)", command);
	else if (WIFEXITED(status))
		task_result_set(res, TASK_PERMANENT, "exit_status", "%s exited with status %d", command, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		task_result_set(res, TASK_FAILED, "signal", "%s was killed by signal %d (%s)", command,
						WTERMSIG(status), strsignal(WTERMSIG(status)));

out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free(out);
	free(path);
	strvec_free(&argv);
	strvec_free(&envp);
}

const task_def task_exec = {"exec", exec_validate, exec_run};
