/*
 * Unit tests of lib/tasks/payload and the tasks' validators: the limits
 * every payload obeys and each task's rules, messages compared in full
 * (they must match the database's cronq.payload_error()); and that the
 * variables an exec payload may not set are the same list in C and in the
 * migration that the database runs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "schema/embedded.h"
#include "tasks/exec.h"
#include "queue/payload.h"
#include "tasks/payload.h"
#include "util/buf.h"
#include "util/xalloc.h"

#define DENIED_MSG(name) \
	"invalid payload for task \"exec\": \"env\" may not set \"" name "\": it changes how a program is loaded or interpreted"
#define TEXT_MSG "invalid payload for task \"exec\": larger than 131057 bytes as JSON text, too large for the " \
	"CRONQ_PAYLOAD variable (the kernel passes none over 128 KiB)"
#define ARGS_MSG "invalid payload for task \"exec\": arguments and environment larger than 393216 bytes " \
	"(strings with their NULs and 8-byte pointers, CRONQ_PAYLOAD included)"

/*
 * The cases both implementations must agree on are in tests/payload_cases.tsv
 * (t_payload runs them against the database). Here only what a text file
 * cannot hold: a byte that is not UTF-8.
 */
static const struct {
	const char *type;
	const char *payload;		/* NULL: none given ({}) */
	const char *error;			/* NULL: accepted */
} cases[] = {
	{"noop", "{\"a\": \"\xff\"}", "invalid payload: malformed JSON at line 1, column 7: unable to decode byte 0xff near '\"'"},
};

#define CASES_FILE "tests/payload_cases.tsv"

/* exec_env_is_denied(): exact names, prefixes, ASCII case. */
static const struct {
	const char *name;
	bool		denied;
} env_names[] = {
	{"LD_PRELOAD", true}, {"ld_preload", true}, {"Ld_Audit", true}, {"LD_", true}, {"LD", false},
	{"OLD_PRELOAD", false}, {"PATH", true}, {"path", true}, {"Path", true}, {"PATHX", false},
	{"MYPATH", false}, {"PATH_LOCALE", true}, {"PERL", true}, {"PERL5OPT", true}, {"perl5lib", true},
	{"PERLIO", true}, {"BASH_ENV", true}, {"bash_func_x%%", true}, {"BASHOPTS", true}, {"ENV", true},
	{"env", true}, {"ENVIRONMENT", false}, {"IFS", true}, {"ifs", true}, {"HOME", true}, {"HOMER", false},
	{"XDG_CONFIG_HOME", true}, {"PYTHONSTARTUP", true}, {"RUBYOPT", true}, {"NODE_OPTIONS", true},
	{"JAVA_TOOL_OPTIONS", true}, {"_JAVA_OPTIONS", true}, {"JAVA", false}, {"SSH_ASKPASS", true},
	{"SSH_ASKPASS_REQUIRE", true}, {"PGPASSWORD", true}, {"pgservicefile", true}, {"GLIBC_TUNABLES", true},
	{"LANG", false}, {"LC_ALL", false}, {"TZ", false}, {"TMPDIR", false}, {"COLOUR", false},
	{"CRONQ_X", false}, {"", false},
};

static char *
nested(int depth)
{
	buf b = BUF_INIT;

	buf_puts(&b, "{\"a\": ");
	for (int i = 1; i < depth; i++)
		buf_putc(&b, '[');
	for (int i = 1; i < depth; i++)
		buf_putc(&b, ']');
	buf_putc(&b, '}');
	return buf_steal(&b);
}

static const char *
check_one(const char *type, const char *text, char *err, size_t errlen)
{
	json_t *p = NULL;

	err[0] = '\0';
	if (text && (p = payload_parse(text, strlen(text), err, errlen)) == NULL)
		return err;
	if (payload_validate(type, p, err, errlen) != 0) {
		json_decref(p);
		return err;
	}
	json_decref(p);
	return NULL;
}

/*
 * The denylist as the database has it: the pattern of the last migration's
 * cronq.exec_env_denied(), its string literals joined, "^(" and ")$"
 * removed, split at "|", a trailing ".*" written "*". NULL-terminated, or
 * NULL (with why) when it is not in that form.
 */
static char **
sql_denylist(const char **why)
{
	const char *fn = NULL, *p;
	buf pattern = BUF_INIT;
	char **list = NULL, *inner, *tok, *save = NULL;
	size_t n = 0;

	for (int m = sql_migration_count - 1; m >= 0 && fn == NULL; m--)
		fn = strstr(sql_migrations[m].sql, "function cronq.exec_env_denied(");
	if (fn == NULL || (p = strstr(fn, "\nreturn ")) == NULL) {
		*why = "no migration defines cronq.exec_env_denied() with a RETURN body";
		return NULL;
	}
	for (; *p && *p != ';'; p++) {
		if (*p != '\'')
			continue;
		for (p++; *p && !(*p == '\'' && p[1] != '\''); p++) {
			if (*p == '\'')
				p++;			/* '' in a literal */
			buf_putc(&pattern, *p);
		}
	}
	inner = (char *) buf_str(&pattern);
	if (strncmp(inner, "^(", 2) != 0 || pattern.len < 4 || strcmp(inner + pattern.len - 2, ")$") != 0) {
		*why = "the pattern is not ^(...)$";
		buf_free(&pattern);
		return NULL;
	}
	inner[pattern.len - 2] = '\0';
	for (tok = strtok_r(inner + 2, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		size_t len = strlen(tok);

		if (len > 2 && strcmp(tok + len - 2, ".*") == 0)
			strcpy(tok + len - 2, "*");
		len = strlen(tok);
		if (strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*") != len ||
			(strchr(tok, '*') && strchr(tok, '*') != tok + len - 1)) {
			*why = "an entry is more than a name, or a prefix followed by .*";
			for (size_t i = 0; i < n; i++)
				free(list[i]);
			free(list);
			buf_free(&pattern);
			return NULL;
		}
		list = xrealloc(list, (n + 2) * sizeof *list);
		list[n++] = xstrdup(tok);
		list[n] = NULL;
	}
	buf_free(&pattern);
	return list;
}

/*
 * The text, as jsonb prints it, of an exec payload with command "x" and
 * args: empties empty strings, then one of filler bytes c.
 */
static char *
args_payload(size_t empties, size_t filler, char c)
{
	buf b = BUF_INIT;

	buf_puts(&b, "{\"args\": [");
	for (size_t i = 0; i < empties; i++)
		buf_puts(&b, "\"\", ");
	buf_putc(&b, '"');
	for (size_t i = 0; i < filler; i++) {
		if (c == '"')
			buf_putc(&b, '\\');
		buf_putc(&b, c);
	}
	buf_puts(&b, "\"], \"command\": \"x\"}");
	return buf_steal(&b);
}

/* What exec's rule counts for args_payload(): argv (x, the args) and CRONQ_PAYLOAD. */
static size_t
args_bytes(size_t empties, size_t filler, size_t text_len)
{
	return (1 + 9) + empties * 9 + (filler + 9) + strlen("CRONQ_PAYLOAD=") + text_len + 9;
}

/* p with s inserted before its last 18 bytes ("], "command": "x"}). */
static char *
insert_at_end(const char *p, const char *s)
{
	size_t n = strlen(p) - strlen("\"], \"command\": \"x\"}");

	return xasprintf("%.*s%s%s", (int) n, p, s, p + n);
}

/*
 * Check every case of CASES_FILE (see its header) through payload_parse and
 * payload_validate; returns how many lines were cases.
 */
static int
check_cases_file(void)
{
	FILE *f = fopen(CASES_FILE, "r");
	char line[8192], err[1024];
	int lineno = 0, n = 0;

	CHECK(f != NULL, "cannot open %s (run from the top of the tree)", CASES_FILE);
	while (f && fgets(line, sizeof line, f)) {
		char *field[4] = {NULL, NULL, NULL, NULL}, *p = line;
		const char *got, *payload;
		bool well_formed;
		int k = 0;

		lineno++;
		CHECK(strchr(line, '\n') != NULL, "%s:%d: line too long", CASES_FILE, lineno);
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		for (field[k++] = p; k < 4 && (p = strchr(p, '\t')) != NULL; field[k++] = p)
			*p++ = '\0';
		well_formed = field[2] != NULL && (field[3] == NULL || strcmp(field[3], "c-only") == 0);
		CHECK(well_formed, "%s:%d: expected type, payload, expected and an optional c-only", CASES_FILE, lineno);
		if (!well_formed)
			continue;
		n++;
		payload = strcmp(field[1], "-") == 0 ? NULL : field[1];
		got = check_one(field[0], payload, err, sizeof err);
		if (strcmp(field[2], "ok") == 0)
			CHECK(got == NULL, "%s:%d: %s %s: expected accepted, got [%s]", CASES_FILE, lineno, field[0],
				  field[1], err);
		else
			CHECK(got && strcmp(got, field[2]) == 0, "%s:%d: %s %s: expected [%s], got [%s]", CASES_FILE,
				  lineno, field[0], field[1], field[2], got ? got : "accepted");
	}
	if (f)
		fclose(f);
	return n;
}

int
main(void)
{
	char err[1024];

	CHECK(check_cases_file() >= 40, "%s: fewer than 40 cases", CASES_FILE);

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = check_one(cases[i].type, cases[i].payload, err, sizeof err);

		if (cases[i].error == NULL)
			CHECK(got == NULL, "%s %s: expected accepted, got [%s]", cases[i].type,
				  cases[i].payload ? cases[i].payload : "(none)", err);
		else
			CHECK(got && strcmp(got, cases[i].error) == 0, "%s %s: expected [%s], got [%s]",
				  cases[i].type, cases[i].payload ? cases[i].payload : "(none)", cases[i].error,
				  got ? got : "accepted");
	}

	/* 64 levels pass the depth limit (then fail on the noop key), 65 do not. */
	{
		char *ok = nested(64), *deep = nested(65);

		CHECK(strcmp(check_one("noop", ok, err, sizeof err), "invalid payload for task \"noop\": unknown key \"a\"") == 0,
			  "64 levels: got [%s]", err);
		CHECK(strcmp(check_one("noop", deep, err, sizeof err), "invalid payload: nested deeper than 64 levels") == 0,
			  "65 levels: got [%s]", err);
		free(ok);
		free(deep);
	}
	/* Exactly 1 MiB is allowed; one byte more is not. */
	{
		size_t n = PAYLOAD_MAX_BYTES;
		char *big = malloc(n + 2);
		json_t *v;

		memset(big, ' ', n + 1);
		memcpy(big, "{}", 2);
		big[n + 1] = '\0';
		v = payload_parse(big, n, err, sizeof err);
		CHECK(v != NULL, "1 MiB payload refused: %s", err);
		json_decref(v);
		v = payload_parse(big, n + 1, err, sizeof err);
		CHECK(v == NULL && strcmp(err, "invalid payload: larger than 1 MiB") == 0,
			  "1 MiB + 1 accepted or wrong message: %s", err);
		json_decref(v);
		free(big);
	}
	for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++)
		CHECK(exec_env_is_denied(env_names[i].name) == env_names[i].denied, "env name \"%s\": expected %s",
			  env_names[i].name, env_names[i].denied ? "denied" : "allowed");

	/* Values: locale and terminal names are no paths or formats; TZ no file. */
	{
		static const struct {
			const char *name, *value;
			bool refused;
		} values[] = {
			{"LANG", "fr_FR.UTF-8", false}, {"LANGUAGE", "../../../../tmp/evil", true},
			{"LC_MESSAGES", "/tmp/x", true}, {"LC_ALL", "C%n", true}, {"TERM", "xterm-256color", false},
			{"TERM", "../x", true}, {"TZ", "Europe/Paris", false}, {"TZ", "UTC", false},
			{"TZ", "/tmp/zone", true}, {"TZ", ":/tmp/zone", true}, {"TZ", "Europe/../../tmp/z", true},
			{"TZ", ":Europe/Paris", false}, {"lang", "/tmp/x", false}, {"COLOUR", "/x/%s", false},
		};

		for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
			CHECK(exec_env_value_refused(values[i].name, values[i].value) == values[i].refused,
				  "env %s=%s: expected %s", values[i].name, values[i].value,
				  values[i].refused ? "refused" : "allowed");
		CHECK(check_one("exec", "{\"command\": \"x\", \"env\": {\"TZ\": \"/etc/z\", \"LANGUAGE\": \"a/b\"}}",
						err, sizeof err) != NULL &&
			  strstr(err, "\"env\" may not set \"TZ\" to a path or a format") != NULL,
			  "the shortest refused name is named: %s", err);
	}

	/* The C table and the database's pattern: the same entries, in the same order. */
	{
		const char *why = NULL;
		char **sql = sql_denylist(&why);
		size_t n_c = 0, n_sql = 0;

		CHECK(sql != NULL, "migrations: %s", why ? why : "?");
		while (exec_env_denied[n_c])
			n_c++;
		while (sql && sql[n_sql])
			n_sql++;
		CHECK(n_c == n_sql, "denylist: %zu entries in exec.c, %zu in the migration", n_c, n_sql);
		for (size_t i = 0; i < n_c && i < n_sql; i++)
			CHECK(strcmp(exec_env_denied[i], sql[i]) == 0, "denylist entry %zu: exec.c has %s, the migration %s",
				  i, exec_env_denied[i], sql[i]);
		for (size_t i = 0; i < n_sql; i++)
			free(sql[i]);
		free(sql);
		CHECK(n_c > 80, "denylist: only %zu entries", n_c);
	}

	/*
	 * exec: 131057 bytes of payload text pass, 131058 do not; the text is
	 * counted as jsonb prints it (escapes included, the payload's own
	 * spacing not).
	 */
	{
		char *at = args_payload(0, 131057 - 30, 'a'), *over = args_payload(0, 131058 - 30, 'a');
		char *spaced = xasprintf("\n{   %s\n", at + 1), *quotes = args_payload(0, 65513, '"'), *q;

		CHECK(strlen(at) == 131057 && strlen(over) == 131058, "payload texts of %zu and %zu bytes",
			  strlen(at), strlen(over));
		CHECK(check_one("exec", at, err, sizeof err) == NULL, "131057 bytes refused: %s", err);
		CHECK(check_one("exec", over, err, sizeof err) && strcmp(err, TEXT_MSG) == 0, "131058 bytes: got [%s]", err);
		/* Written with more spaces, it passes: it is stored without them. */
		CHECK(check_one("exec", spaced, err, sizeof err) == NULL, "spacing counted: %s", err);
		/* A quote is two bytes of text: 65513 of them and a letter are 131057 bytes, with a tab 131058. */
		q = insert_at_end(quotes, "a");
		CHECK(strlen(q) == 131057 && check_one("exec", q, err, sizeof err) == NULL, "quotes and a letter: %s", err);
		free(q);
		q = insert_at_end(quotes, "\\t");
		CHECK(check_one("exec", q, err, sizeof err) && strcmp(err, TEXT_MSG) == 0, "quotes and a tab: got [%s]", err);
		free(q);
		free(at);
		free(over);
		free(spaced);
		free(quotes);
	}

	/*
	 * exec: at most 393216 bytes of argv and environment. 26218 empty args
	 * and one of 26155 bytes are exactly that (in 131057 bytes of text);
	 * 26219 and 26149 one byte more (in 131055).
	 */
	{
		char *at = args_payload(26218, 26155, 'a'), *over = args_payload(26219, 26149, 'a');

		CHECK(strlen(at) == 131057 && args_bytes(26218, 26155, strlen(at)) == EXEC_ARGS_MAX,
			  "at the limit: %zu bytes of text, %zu of arguments", strlen(at), args_bytes(26218, 26155, strlen(at)));
		CHECK(strlen(over) == 131055 && args_bytes(26219, 26149, strlen(over)) == EXEC_ARGS_MAX + 1,
			  "over the limit: %zu bytes of text, %zu of arguments", strlen(over),
			  args_bytes(26219, 26149, strlen(over)));
		CHECK(check_one("exec", at, err, sizeof err) == NULL, "393216 bytes of arguments refused: %s", err);
		CHECK(check_one("exec", over, err, sizeof err) && strcmp(err, ARGS_MSG) == 0, "393217 bytes: got [%s]", err);
		free(at);
		free(over);
	}
	/* The densest payload under 98304 bytes of text stays under the limit (the database skips the sum there). */
	{
		size_t empties = (98304 - 30) / 4;
		char *many = args_payload(empties, 0, 'a');

		CHECK(strlen(many) <= 98304 && args_bytes(empties, 0, strlen(many)) <= 4 * strlen(many) &&
			  check_one("exec", many, err, sizeof err) == NULL, "%zu empty args: %s", empties + 1, err);
		free(many);
	}
	return check_done("payload");
}
