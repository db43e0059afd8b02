/*
 * log — see log.h. Text lines look like PostgreSQL's client programs
 * ("cronq: error: could not connect…", then "detail:" and "hint:" lines),
 * followed by the structured fields the message does not already say
 * ("job 2 (fail) is dead after attempt 1: boom queue=default …", not
 * "job=2 type=fail" again); JSON lines carry time, level, msg and every
 * structured field.
 */
#include "util/log.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/utf8.h"
#include "util/xalloc.h"

static log_level current_level = LOG_WARNING;
static log_format current_format = LOG_FORMAT_TEXT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"debug", "info", "warning", "error"};

void
log_set_level(log_level level)
{
	current_level = level;
}

log_level
log_get_level(void)
{
	return current_level;
}

void
log_set_format(log_format format)
{
	current_format = format;
}

log_format
log_get_format(void)
{
	return current_format;
}

bool
log_enabled(log_level level)
{
	return level >= current_level;
}

/* Cut trailing newlines and spaces in place (libpq ends its messages so). */
static void
trim_end(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* A JSON string of s, whatever bytes it holds (jansson refuses invalid UTF-8). */
static json_t *
json_text(const char *s)
{
	char *clean = utf8_sanitize(s, strlen(s));
	json_t *j = json_string(clean);

	free(clean);
	return j;
}

static bool
word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		(unsigned char) c >= 0x80;
}

char *
log_quote(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 3), *o = out;

	*o++ = '"';
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

/* A copy of msg with its quoted parts (log_quote's) blanked out. */
static char *
unquoted(const char *msg)
{
	char *out = xstrdup(msg);
	bool in = false;

	for (char *p = out; *p; p++) {
		if (in && *p == '\\' && p[1]) {
			*p++ = ' ';
			*p = ' ';
		} else if (*p == '"') {
			in = !in;
			*p = ' ';
		} else if (in)
			*p = ' ';
	}
	return out;
}

/* Whether msg holds text as whole words. */
static bool
has_words(const char *msg, const char *text)
{
	size_t n = strlen(text);

	if (n == 0)
		return true;
	for (const char *p = msg; (p = strstr(p, text)) != NULL; p++)
		if ((p == msg || !word_char(p[-1])) && !word_char(p[n]))
			return true;
	return false;
}

/*
 * Whether msg already says field key=value: the value as a whole word
 * ("job 2 (fail)" says type=fail), a number only after its key's name
 * ("job 2" says job=2; "attempt 1" does not say duration_ms=1).
 */
static bool
says(const char *msg, const char *key, const char *value)
{
	bool number = value[0] != '\0' && strspn(value, "0123456789") == strlen(value);
	char *named;
	bool r;

	if (!number)
		return has_words(msg, value);
	named = xasprintf("%s %s", key, value);
	r = has_words(msg, named);
	free(named);
	return r;
}

static void
emit(log_level level, const log_field *fields, const char *detail,
	 const char *hint, char *msg)
{
	trim_end(msg);

	pthread_mutex_lock(&log_lock);
	if (current_format == LOG_FORMAT_JSON) {
		json_t *o = json_object();
		char ts[80];
		struct timespec now;
		struct tm tm;
		char *line;

		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				 tm.tm_min, tm.tm_sec, now.tv_nsec / 1000000);
		json_object_set_new(o, "time", json_string(ts));
		json_object_set_new(o, "level", json_string(level_names[level]));
		json_object_set_new(o, "msg", json_text(msg));
		for (const log_field *f = fields; f && f->key; f++) {
			if (f->value == NULL)
				continue;
			if (f->numeric) {
				json_t *num = json_loads(f->value, JSON_DECODE_ANY, NULL);

				json_object_set_new(o, f->key, num ? num : json_text(f->value));
			} else
				json_object_set_new(o, f->key, json_text(f->value));
		}
		if (detail)
			json_object_set_new(o, "detail", json_text(detail));
		if (hint)
			json_object_set_new(o, "hint", json_text(hint));
		line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (line) {
			fprintf(stderr, "%s\n", line);
			free(line);
		}
		json_decref(o);
	} else {
		char *clean = utf8_printable(msg, false), *own;

		fprintf(stderr, "cronq: %s: %s", level_names[level], clean);
		free(clean);
		/* Said once: only the fields the message does not already say. */
		own = unquoted(msg);
		for (const log_field *f = fields; f && f->key; f++)
			if (f->value && !says(own, f->key, f->value)) {
				clean = utf8_printable(f->value, false);
				fprintf(stderr, " %s=%s", f->key, clean);
				free(clean);
			}
		free(own);
		fputc('\n', stderr);
		if (detail) {
			char *d = xstrdup(detail);

			trim_end(d);
			clean = utf8_printable(d, false);
			fprintf(stderr, "cronq: detail: %s\n", clean);
			free(clean);
			free(d);
		}
		if (hint) {
			clean = utf8_printable(hint, false);
			fprintf(stderr, "cronq: hint: %s\n", clean);
			free(clean);
		}
	}
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

void
log_msg(log_level level, const char *fmt, ...)
{
	va_list ap;
	char buf[4096];

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	emit(level, NULL, NULL, NULL, buf);
}

/* A copy of s of at most max bytes, cut on a character when cut at all. */
static char *
clipped(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	return xstrndup(s, n > max ? utf8_cut(s, max) : n);
}

void
log_full(log_level level, const log_field *fields, const char *detail,
		 const char *hint, const char *fmt, ...)
{
	va_list ap;
	char buf[4096];
	char *d, *h;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	/* A detail or hint comes from the server, a job's RAISE included:
	 * kept to the message's 4 KiB too, cut on a character. */
	d = detail ? clipped(detail, sizeof buf - 1) : NULL;
	h = hint ? clipped(hint, sizeof buf - 1) : NULL;
	emit(level, fields, d, h, buf);
	free(d);
	free(h);
}
