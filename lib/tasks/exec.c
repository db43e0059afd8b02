/*
 * exec — {"command": "NAME", "args": ["..."], "env": {"K": "V"}}: runs the
 * program NAME found directly in the exec directory, with no shell. Exit 0
 * succeeds, 75 (EX_TEMPFAIL) is a retryable failure, any other status is a
 * permanent one; death by a signal is retryable. The tails of stdout and of
 * stderr (64 KiB each) are kept apart. What the program writes to its
 * descriptor 3 is its result: one JSON value of at most RESULT_MAX bytes;
 * anything else there fails a program that exited 0, for good
 * (bad_result, result_too_large): it would write the same again.
 *
 * The program runs under a supervisor process of its own (supervisor.c):
 * a stop (timeout, cancel, shutdown, lost lease) has it send SIGTERM to the
 * program's process group, then SIGKILL after the grace period; when the
 * program ends, or the runner dies, it kills every descendant left, those
 * that left the group (setsid) or forked twice included.
 *
 * The program's environment is built, not inherited: PATH, HOME, LANG,
 * LC_ALL, TZ and TMPDIR from the runner, the payload's env (which may
 * replace LANG, LC_ALL, TZ and TMPDIR, and may set nothing that changes how
 * a program is loaded or interpreted: exec_env_denied[]), and the CRONQ_*
 * variables. Database credentials in the runner's environment are not
 * passed on. A payload the kernel could not pass to execve() is refused
 * when validated (EXEC_PAYLOAD_MAX, EXEC_ARGS_MAX).
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg/pg.h"
#include "tasks/supervisor.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define OUTPUT_TAIL (64 * 1024)
/* The largest result a program may write to its descriptor 3. */
#define RESULT_MAX (1024 * 1024)
/* How long a program's end may take to clean up before the job is recorded
 * anyway (its supervisor goes on alone). */
#define CLEANUP_WAIT_MS 5000

/*
 * Variables a payload's env may not set, because they change how a program
 * is loaded or interpreted: a name, or a prefix ending in "*", compared
 * without regard to (ASCII) case. sudo's env_reset and env_delete lists,
 * the shells' and the interpreters' own. Mirrored, entry for entry and in
 * this order, by cronq.exec_env_denied() in sql/0007_exec_limits.sql;
 * tests/unit/test_payload.c fails when the two differ.
 */
const char *const exec_env_denied[] = {
	/* the dynamic loader and the C library */
	"LD_*", "DYLD_*", "_RLD*", "LDR_*", "LIBPATH", "SHLIB_PATH", "GCONV_PATH", "GETCONF_DIR",
	"GLIBC_TUNABLES", "MALLOC_*", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "RESOLV_HOST_CONF",
	"NIS_PATH", "LOCPATH", "NLSPATH", "PATH_LOCALE", "TZDIR", "AUTHSTATE", "VAR_ACE", "USR_ACE",
	"DLC_ACE",
	/* shells */
	"PATH", "IFS", "CDPATH", "ENV", "BASH*", "SHELLOPTS", "PS4", "GLOBIGNORE", "PROMPT_COMMAND",
	"FPATH", "NULLCMD", "READNULLCMD", "ZDOTDIR", "TMPPREFIX", "SHELL", "HOME", "XDG_*",
	/* terminal descriptions */
	"TERMINFO", "TERMINFO_DIRS", "TERMPATH", "TERMCAP",
	/* interpreters, their module paths and package managers */
	"PERL*", "PYTHON*", "RUBY*", "GEM_*", "BUNDLE_*", "NODE_*", "NPM_CONFIG_*", "JAVA_*", "_JAVA_*",
	"JDK_*", "CLASSPATH", "DOTNET_*", "CORECLR_*", "COMPLUS_*", "LUA_*", "PHPRC", "PHP_INI_SCAN_DIR",
	"TCLLIBPATH", "TCL_LIBRARY", "TK_LIBRARY", "AWKPATH", "AWKLIBPATH", "PIP_*", "GOFLAGS",
	"GOTOOLCHAIN",
	/* programs that other programs start */
	"EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "GIT_*", "SSH_ASKPASS*",
	"SUDO_ASKPASS", "MAKEFLAGS", "MAKEFILES", "MFLAGS",
	/* credentials and whom to trust */
	"PG*", "KRB5*", "OPENSSL_*", "SSL_CERT_*", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
	/* programs' own options, start-up commands and configuration files */
	"TAR_OPTIONS", "ZIPOPT", "ZIP", "UNZIP", "UNZIPOPT", "ZIPINFO", "GZIP", "BZIP", "BZIP2", "XZ_OPT",
	"XZ_DEFAULTS", "LESS", "LESSKEY*", "MORE", "VIMINIT", "EXINIT", "MYVIMRC", "VIMRUNTIME", "GREP_OPTIONS",
	"RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "BROWSER", "SUDO_EDITOR", "SYSTEMD_*", "WGETRC",
	"CURL_HOME", "GNUPGHOME", "SSLKEYLOGFILE", "R_PROFILE*", "R_ENVIRON*", "R_LIBS*", "JULIA_*", "GUILE_*",
	"ERL_*", "CC", "CXX", "CPP", "CGO_*", "GOENV", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOINSECURE",
	"GOPRIVATE", "GOSUMDB", "GOPATH", "GOROOT",
	/* where the network goes */
	"HTTPS_CA_FILE", "HTTPS_CA_DIR", "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY",
	NULL
};

/*
 * Whether a payload may not give the variable name this value: the locale
 * and terminal variables are names, never paths or formats (LANGUAGE=../x
 * makes gettext load a message catalog from anywhere, and catalogs hold
 * printf formats); TZ may name a zone but no file outside the zone
 * database. As sudo's env_check. Mirrored by cronq.exec_env_value_refused().
 */
bool
exec_env_value_refused(const char *name, const char *value)
{
	static const char *const names[] = {"LANG", "LANGUAGE", "LINGUAS", "TERM", "COLORTERM", NULL};
	bool locale = strncmp(name, "LC_", 3) == 0;

	for (const char *const *n = names; *n && !locale; n++)
		locale = strcmp(name, *n) == 0;
	if (locale)
		return strpbrk(value, "/%") != NULL;
	if (strcmp(name, "TZ") == 0)
		return strstr(value, "..") || strchr(value, '%') || value[0] == '/' ||
			(value[0] == ':' && value[1] == '/');
	return false;
}

static char
ascii_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
}

bool
exec_env_is_denied(const char *name)
{
	for (const char *const *d = exec_env_denied; *d; d++) {
		size_t n = strlen(*d);
		bool prefix = (*d)[n - 1] == '*';
		size_t i;

		if (prefix)
			n--;
		for (i = 0; i < n && name[i] && ascii_upper(name[i]) == (*d)[i]; i++)
			;
		if (i == n && (prefix || name[i] == '\0'))
			return true;
	}
	return false;
}

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

/* The length of s (n bytes) as a JSON string in jsonb's text, quotes included
 * (PostgreSQL's escape_json()). */
static size_t
jsonb_string_len(const char *s, size_t n)
{
	size_t len = 2;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char) s[i];

		if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
			len += 2;
		else if (c < 0x20)
			len += 6;			/* backslash, u, four hex digits */
		else
			len++;
	}
	return len;
}

/*
 * The length of v as PostgreSQL prints a jsonb value: {"k": v, …} and
 * [v, …]. What a program gets in CRONQ_PAYLOAD is that text, whatever
 * spacing the payload was written with. Exact for strings, arrays and
 * objects, all that an exec payload holds once its shape is checked.
 */
static size_t
jsonb_text_len(const json_t *v)
{
	size_t len = 0, i;
	const char *key;
	json_t *e;

	switch (json_typeof(v)) {
		case JSON_STRING:
			return jsonb_string_len(json_string_value(v), json_string_length(v));
		case JSON_ARRAY:
			json_array_foreach(v, i, e)
				len += (i > 0 ? 2 : 0) + jsonb_text_len(e);
			return len + 2;
		case JSON_OBJECT:
			i = 0;
			json_object_foreach((json_t *) v, key, e)
				len += (i++ > 0 ? 2 : 0) + jsonb_string_len(key, strlen(key)) + 2 + jsonb_text_len(e);
			return len + 2;
		default:
			{
				/* Not in an exec payload; roughly right for the rest. */
				char *t = json_dumps(v, JSON_ENCODE_ANY);

				len = t ? strlen(t) : 0;
				free(t);
				return len;
			}
	}
}

/*
 * The payload's share of what execve() copies for the program (the
 * kernel's count, fs/exec.c): every string of argv (the command, then
 * args) and of the environment (K=V for each of env, and CRONQ_PAYLOAD=
 * with the payload's text_len bytes), each with its NUL and an 8-byte
 * pointer. Never more than 4 × text_len: every string is in the payload's
 * text too, inside at least 4 bytes of quotes and separators per pointer.
 */
static size_t
exec_args_bytes(const json_t *payload, size_t text_len)
{
	size_t n = strlen(json_string_value(json_object_get(payload, "command"))) + 1 + 8;
	const char *key;
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(payload, "args"), i, v)
		n += json_string_length(v) + 1 + 8;
	json_object_foreach(json_object_get(payload, "env"), key, v)
		n += strlen(key) + 1 + json_string_length(v) + 1 + 8;
	return n + strlen("CRONQ_PAYLOAD=") + text_len + 1 + 8;
}

/* The denied name of env that comes first by length, then bytes (the
 * database's order), or NULL when there is none. */
static const char *
first_denied(const json_t *env, bool by_value)
{
	const char *key, *first = NULL;
	json_t *v;

	json_object_foreach((json_t *) env, key, v)
		if ((by_value ? exec_env_value_refused(key, json_string_value(v)) : exec_env_is_denied(key)) &&
			(first == NULL || strlen(key) < strlen(first) ||
			 (strlen(key) == strlen(first) && strcmp(key, first) < 0)))
			first = key;
	return first;
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
	size_t i, text_len;

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
		if ((key = first_denied(env, false)) != NULL) {
			snprintf(err, errlen, "\"env\" may not set \"%s\": it changes how a program is loaded or interpreted",
					 key);
			return -1;
		}
		if ((key = first_denied(env, true)) != NULL) {
			snprintf(err, errlen, "\"env\" may not set \"%s\" to a path or a format (\"/\", \"..\" or \"%%\")",
					 key);
			return -1;
		}
	}
	text_len = jsonb_text_len(payload);
	if (text_len > EXEC_PAYLOAD_MAX) {
		snprintf(err, errlen, "larger than %d bytes as JSON text, too large for the CRONQ_PAYLOAD variable "
				 "(the kernel passes none over 128 KiB)", EXEC_PAYLOAD_MAX);
		return -1;
	}
	if (exec_args_bytes(payload, text_len) > EXEC_ARGS_MAX) {
		snprintf(err, errlen, "arguments and environment larger than %d bytes (strings with their NULs and "
				 "8-byte pointers, CRONQ_PAYLOAD included)", EXEC_ARGS_MAX);
		return -1;
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
build_env(const task_ctx *ctx, const task_job *job, strvec *env)
{
	static const char *const kept[] = {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", NULL};
	json_t *extra = json_object_get(job->payload, "env");
	const char *key;
	json_t *v;

	for (const char *const *k = kept; *k; k++) {
		const char *val = strcmp(*k, "HOME") == 0 && ctx->exec_home ? ctx->exec_home : getenv(*k);

		/* The payload's own LANG, LC_ALL, TZ or TMPDIR instead (never PATH or HOME). */
		if (json_object_get(extra, *k) != NULL)
			continue;
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

/* What the program writes to its descriptor 3: RESULT_MAX bytes at most,
 * the rest read and dropped (a program must never block on it). */
typedef struct result_in {
	buf			text;
	bool		too_large;
} result_in;

static void
result_add(result_in *ri, const char *p, size_t n)
{
	if (ri->too_large || ri->text.len + n > RESULT_MAX) {
		ri->too_large = true;
		return;
	}
	buf_append(&ri->text, p, n);
}

/*
 * The program's result into res: none when it wrote nothing; a program
 * that exited 0 fails for good when what it wrote is too large or not one
 * JSON value that jsonb can store (jansson's parser refuses \u0000, lone
 * surrogates and bad UTF-8 as jsonb does). Sent to the database as the
 * program wrote it, so that no number loses a digit.
 */
static void
result_take(result_in *ri, const char *command, task_result *res)
{
	json_error_t jerr;
	json_t *v;
	bool ok = res->status == TASK_SUCCEEDED;

	if (ri->too_large) {
		if (ok)
			task_result_set(res, TASK_PERMANENT, "result_too_large",
							"%s wrote more than %d bytes to descriptor 3 (its result)", command, RESULT_MAX);
		return;
	}
	if (ri->text.len == 0)
		return;
	v = json_loadb(ri->text.data, ri->text.len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &jerr);
	if (v == NULL) {
		if (ok)
			task_result_set(res, TASK_PERMANENT, "bad_result",
							"%s wrote a result that is not JSON to descriptor 3: %s (at byte %d)", command,
							jerr.text, jerr.position);
		return;
	}
	json_decref(v);
	res->result = buf_steal(&ri->text);
}

/* Ask the supervisor to signal the program (SUPERVISOR_TERM or _KILL). */
static void
tell(int ctl, char what)
{
	if (send(ctl, &what, 1, MSG_NOSIGNAL) < 0) {
		/* It is gone, and the program with it. */
	}
}

static bool
transient(int e)
{
	return e == EAGAIN || e == ENOMEM || e == ETXTBSY || e == EMFILE || e == ENFILE || e == EINTR;
}

/* res from the supervisor's report of how the program ended. */
static void
set_result(const task_ctx *ctx, const char *command, const supervisor_report *rep, task_result *res)
{
	int st = rep->value;

	switch (rep->event) {
		case SUPERVISOR_NO_CHDIR:
			task_result_set(res, transient(rep->value) ? TASK_FAILED : TASK_PERMANENT, "exec_failed",
							"could not enter the exec directory %s: %s", ctx->exec_dir, strerror(rep->value));
			return;
		case SUPERVISOR_NO_EXEC:
			if (rep->value == E2BIG)
				task_result_set(res, TASK_PERMANENT, "payload_too_large",
								"could not run %s: its arguments and environment are more than this system "
								"passes to a program (%s)", command, strerror(E2BIG));
			else
				task_result_set(res, transient(rep->value) ? TASK_FAILED : TASK_PERMANENT, "exec_failed",
								"could not run %s: %s", command, strerror(rep->value));
			return;
		case SUPERVISOR_NO_USER:
			task_result_set(res, TASK_PERMANENT, "exec_failed", "could not run %s as the exec user (uid %lld): %s",
							command, (long long) ctx->exec_uid, strerror(rep->value));
			return;
		case SUPERVISOR_NO_FORK:
			task_result_set(res, TASK_FAILED, "exec_failed", "could not start a process for %s: %s", command,
							strerror(rep->value));
			return;
		case SUPERVISOR_EXITED:
			break;
		default:
			task_result_set(res, TASK_FAILED, "exec_failed", "the supervisor of %s sent an unknown report", command);
			return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		task_result_set(res, TASK_SUCCEEDED, NULL, NULL);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 75)
		task_result_set(res, TASK_FAILED, "tempfail", "%s exited with status 75 (temporary failure)", command);
	else if (WIFEXITED(st))
		task_result_set(res, TASK_PERMANENT, "exit_status", "%s exited with status %d", command, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		task_result_set(res, TASK_FAILED, "signal", "%s was killed by signal %d (%s)", command,
						WTERMSIG(st), strsignal(WTERMSIG(st)));
}

/* The program's three outputs, in the order of exec_run's pipes. */
enum { STREAM_OUT, STREAM_ERR, STREAM_RESULT, NSTREAMS };

static void
exec_run(const task_ctx *ctx, const task_job *job, task_result *res)
{
	const char *command = json_string_value(json_object_get(job->payload, "command"));
	json_t *args = json_object_get(job->payload, "args");
	strvec argv = {NULL, 0, 0}, envp = {NULL, 0, 0};
	supervisor_report rep = {0, 0};
	size_t got = 0;				/* bytes of rep read */
	tail *out = NULL, *err = NULL;
	result_in ri = {BUF_INIT, false};
	char why[1024];
	char *path = NULL;
	int pipes[NSTREAMS][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, ctl[2] = {-1, -1}, st, may;
	pid_t sup;
	int64_t term_at = 0, ended_at = 0;
	bool sup_done = false, eof[NSTREAMS] = {false, false, false}, ctl_eof = false, killed = false;
	size_t i;
	json_t *v;

	if (ctx->exec_dir == NULL || ctx->exec_dir[0] == '\0') {
		task_result_set(res, TASK_PERMANENT, "exec_refused",
						"exec jobs are refused: no exec directory is configured (--exec-dir or CRONQ_EXEC_DIR)");
		return;
	}
	if ((may = task_author_may(ctx, job, why, sizeof why)) < 0) {
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
	build_env(ctx, job, &envp);
	if (pipe2(pipes[STREAM_OUT], O_CLOEXEC) != 0 || pipe2(pipes[STREAM_ERR], O_CLOEXEC) != 0 ||
		pipe2(pipes[STREAM_RESULT], O_CLOEXEC) != 0 ||
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0) {
		task_result_set(res, TASK_FAILED, "exec_failed", "could not create a pipe: %s", strerror(errno));
		goto out;
	}
	if ((sup = fork()) < 0) {
		task_result_set(res, TASK_FAILED, "exec_failed", "could not start a process: %s", strerror(errno));
		goto out;
	}
	if (sup == 0) {
		supervisor_job sj = {ctx->exec_dir, path, argv.v, envp.v, pipes[STREAM_OUT][1], pipes[STREAM_ERR][1],
							 pipes[STREAM_RESULT][1], ctl[1], ctx->exec_uid, ctx->exec_gid};

		supervisor_main(&sj);
	}
	for (int k = 0; k < NSTREAMS; k++) {
		close(pipes[k][1]);
		pipes[k][1] = -1;
		fcntl(pipes[k][0], F_SETFL, O_NONBLOCK);
	}
	close(ctl[1]);
	ctl[1] = -1;
	fcntl(ctl[0], F_SETFL, O_NONBLOCK);
	out = xcalloc(1, sizeof *out);
	err = xcalloc(1, sizeof *err);

	/*
	 * Until the supervisor has exited (every process of the job is gone:
	 * its end of the socket closes as it exits) and the three pipes are at
	 * their end; but once the program has ended, the job's outcome waits
	 * at most CLEANUP_WAIT_MS for that.
	 */
	while (!sup_done || !eof[STREAM_OUT] || !eof[STREAM_ERR] || !eof[STREAM_RESULT]) {
		struct pollfd pfd[NSTREAMS + 1];
		char chunk[8192];
		ssize_t n;
		int64_t now;

		for (int k = 0; k < NSTREAMS; k++)
			pfd[k] = (struct pollfd) {eof[k] ? -1 : pipes[k][0], POLLIN, 0};
		pfd[NSTREAMS] = (struct pollfd) {ctl_eof ? -1 : ctl[0], POLLIN, 0};
		if (poll(pfd, NSTREAMS + 1, 50) > 0) {
			for (int k = 0; k < NSTREAMS; k++) {
				if (!pfd[k].revents)
					continue;
				while ((n = read(pipes[k][0], chunk, sizeof chunk)) > 0)
					if (k == STREAM_RESULT)
						result_add(&ri, chunk, (size_t) n);
					else
						tail_add(k == STREAM_OUT ? out : err, chunk, (size_t) n);
				if (n == 0)
					eof[k] = true;
			}
			if (pfd[NSTREAMS].revents) {
				n = read(ctl[0], chunk, sizeof chunk);
				if (n > 0 && got < sizeof rep) {
					size_t take = (size_t) n < sizeof rep - got ? (size_t) n : sizeof rep - got;

					memcpy((char *) &rep + got, chunk, take);
					got += take;
				} else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
					ctl_eof = true;
			}
		}
		/* Its socket closed: it is exiting, and is reaped without a wait. */
		if (!sup_done && waitpid(sup, &st, ctl_eof ? 0 : WNOHANG) == sup)
			sup_done = true;
		now = mono_ms();
		if (got >= sizeof rep || sup_done) {
			if (ended_at == 0)
				ended_at = now;
			else if (now - ended_at > CLEANUP_WAIT_MS)
				break;
			continue;
		}
		if (term_at == 0 && task_tick(ctx) != TASK_GO) {
			tell(ctl[0], SUPERVISOR_TERM);
			term_at = now;
		} else if (term_at && !killed && now - term_at >= ctx->kill_grace_ms) {
			tell(ctl[0], SUPERVISOR_KILL);
			killed = true;
		} else if (killed && now - term_at >= 2 * ctx->kill_grace_ms + CLEANUP_WAIT_MS) {
			/*
			 * No answer: the supervisor was stopped (the program may send
			 * it SIGSTOP). It is this process's unreaped child, so its pid
			 * is still its own; the program dies with it (PDEATHSIG).
			 */
			kill(sup, SIGCONT);
			kill(sup, SIGKILL);
			waitpid(sup, &st, 0);
			sup_done = true;
		}
	}

	/*
	 * The supervisor may have written its report and exited between the
	 * last poll and waitpid(): the loop ends then with the report unread.
	 */
	while (got < sizeof rep && !ctl_eof) {
		ssize_t n = read(ctl[0], (char *) &rep + got, sizeof rep - got);

		if (n <= 0)
			break;
		got += (size_t) n;
	}
	res->output = tail_text(out);
	res->err_output = tail_text(err);
	if (term_at)
		;						/* stopped: the runner records why */
	else if (got != sizeof rep)
		task_result_set(res, TASK_FAILED, "exec_failed", "the process supervising %s ended without a report", command);
	else {
		set_result(ctx, command, &rep, res);
		result_take(&ri, command, res);
	}

out:
	for (int k = 0; k < 2; k++) {
		for (int p = 0; p < NSTREAMS; p++)
			if (pipes[p][k] >= 0)
				close(pipes[p][k]);
		if (ctl[k] >= 0)
			close(ctl[k]);
	}
	buf_free(&ri.text);
	free(out);
	free(err);
	free(path);
	strvec_free(&argv);
	strvec_free(&envp);
}

const task_def task_exec = {"exec", exec_validate, exec_run};
