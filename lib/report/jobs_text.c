/* jobs_text — see jobs_text.h. */
#include "report/jobs_text.h"

#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* How much of an output show prints. */
#define TAIL_LINES 10
#define TAIL_BYTES 4096
#define RESULT_BYTES 4096

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

/* What a blocked job waits for: "waiting for 12 (running), 13 (queued)". */
static void
waiting_text(buf *out, const json_t *waiting_on)
{
	size_t i, n = json_array_size(waiting_on);
	json_t *p;

	if (!json_is_array(waiting_on))
		return;
	buf_puts(out, "waiting for ");
	json_array_foreach(waiting_on, i, p) {
		if (i == 5) {
			buf_printf(out, " and %zu more", n - i);
			break;
		}
		buf_printf(out, "%s%" JSON_INTEGER_FORMAT " (%s)", i ? ", " : "",
				   json_integer_value(json_object_get(p, "id")), cq_json_str(p, "status", "?"));
	}
}

void
jobs_list_text(buf *out, const json_t *list, const table_mode *mode)
{
	static const char *const head[] = {"ID", "STATUS", "TYPE", "QUEUE", "ATTEMPTS", "RUN AT", "FINISHED AT",
									   "ERROR"};
	table t = {.ncols = 8, .head = head, .shrink = 0x8C, .wide = 0x80};
	size_t i;
	json_t *job;

	json_array_foreach(list, i, job) {
		buf error = BUF_INIT;

		if (cq_json_str(job, "error_code", "")[0])
			buf_printf(&error, "%s: ", cq_json_str(job, "error_code", ""));
		waiting_text(&error, json_object_get(job, "waiting_on"));
		buf_puts(&error, cq_json_str(job, "last_error", ""));
		table_cell(&t, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(job, "id")));
		table_cell(&t, "%s", cq_json_str(job, "status", ""));
		table_style(&t, table_status_style(cq_json_str(job, "status", "")));
		table_cell(&t, "%s", cq_json_str(job, "type", ""));
		table_cell(&t, "%s", cq_json_str(job, "queue", ""));
		table_cell(&t, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				   json_integer_value(json_object_get(job, "attempts")),
				   json_integer_value(json_object_get(job, "max_attempts")));
		table_cell(&t, "%s", cq_json_str(job, "run_at", ""));
		table_cell(&t, "%s", cq_json_str(job, "finished_at", ""));
		table_cell(&t, "%s", buf_str(&error));
		buf_free(&error);
	}
	table_flush(&t, out, mode);
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

/* Append text, its later lines indented by indent spaces, and a newline;
 * control characters escaped (utf8_printable). */
static void
put_indented(buf *out, const char *text, int indent)
{
	char *clean = utf8_printable(text, true);

	for (const char *p = clean; *p; p++) {
		buf_putc(out, *p);
		if (*p == '\n' && p[1])
			buf_printf(out, "%*s", indent, "");
	}
	buf_putc(out, '\n');
	free(clean);
}

/* The last TAIL_LINES lines (at most TAIL_BYTES) of output, indented. */
static void
put_tail(buf *out, const char *output)
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
		buf_printf(out, "    ...\n");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);

		char *line = xstrndup(p, n), *clean = utf8_printable(line, false);

		buf_printf(out, "    %s\n", clean);
		free(clean);
		free(line);
		p += n + (nl ? 1 : 0);
	}
}

/* A result (compact JSON) on one line, its first RESULT_BYTES at most. */
static void
put_result(buf *out, const char *text)
{
	char *clipped = utf8_clip(text, RESULT_BYTES, UTF8_CLIP_BYTES);
	char *clean = utf8_printable(clipped, false);

	buf_printf(out, "%s\n", clean);
	free(clean);
	free(clipped);
}

void
jobs_show_text(buf *out, const json_t *job)
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
			buf_printf(out, "%-17s %s\n", key, dur);
			continue;
		}
		if (strcmp(key, "waiting_on") == 0) {
			buf w = BUF_INIT;

			waiting_text(&w, v);
			buf_printf(out, "%-17s %s\n", key, buf_str(&w));
			buf_free(&w);
			continue;
		}
		text = value_text(v);
		buf_printf(out, "%-17s ", key);
		if (strcmp(key, "last_error") == 0)
			put_indented(out, text, 18);
		else if (strcmp(key, "result") == 0)
			put_result(out, text);
		else {
			/* One line each: a queue or key holding a line break stays on its own. */
			char *clean = utf8_printable(text, false);

			buf_printf(out, "%s\n", clean);
			free(clean);
		}
		free(text);
	}
	buf_printf(out, "\n%s (%zu):\n", "runs", json_array_size(runs));
	json_array_foreach(runs, i, run) {
		char dur[64];
		const char *output = cq_json_str(run, "output", "");
		const char *err_output = cq_json_str(run, "stderr", "");
		json_t *result = json_object_get(run, "result");

		seconds_text(json_object_get(run, "duration"), false, dur, sizeof dur);
		buf_printf(out, "  attempt %" JSON_INTEGER_FORMAT ": %s", json_integer_value(json_object_get(run, "attempt")),
			   cq_json_str(run, "outcome", ""));
		if (cq_json_str(run, "started_at", "")[0])
			buf_printf(out, ", started %s", cq_json_str(run, "started_at", ""));
		if (dur[0])
			buf_printf(out, ", took %s", dur);
		if (cq_json_str(run, "worker", "")[0]) {
			char *worker = utf8_printable(cq_json_str(run, "worker", ""), false);

			buf_printf(out, ", worker %s", worker);
			free(worker);
		}
		buf_putc(out, '\n');
		if (cq_json_str(run, "error", "")[0] || cq_json_str(run, "error_code", "")[0]) {
			buf_printf(out, "    error: %s%s", cq_json_str(run, "error_code", ""),
				   cq_json_str(run, "error_code", "")[0] && cq_json_str(run, "error", "")[0] ? ": " : "");
			put_indented(out, cq_json_str(run, "error", ""), 11);
		}
		if (output[0]) {
			buf_printf(out, "    output:\n");
			put_tail(out, output);
		}
		if (err_output[0]) {
			buf_printf(out, "    stderr:\n");
			put_tail(out, err_output);
		}
		if (result && !json_is_null(result)) {
			char *text = value_text(result);

			buf_printf(out, "    result: ");
			put_result(out, text);
			free(text);
		}
	}
}

