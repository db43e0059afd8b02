/* status_text — see status_text.h. */
#include "report/status_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/stats.h"
#include "report/table.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/term.h"

/* ---- reading the document ---- */

/* "1m30s" for a count of seconds. */
static const char *
secs(int64_t s, char *out, size_t len)
{
	duration_format(s * 1000, out, len);
	return out;
}

/* ---- text ---- */

#define STATUS_COLUMNS "QUEUED", "BLOCKED", "RUNNING", "SUCCEEDED", "FAILED", "DEAD", "CANCELLED"

static void
cell_counts(table *t, const json_t *o)
{
	static const char *const keys[] = {"queued", "blocked", "running", "succeeded", "failed", "dead", "cancelled"};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		table_cell(t, "%" PRId64, cq_json_int(o, keys[i]));
		if (cq_json_int(o, keys[i]) > 0)
			table_style(t, table_status_style(keys[i]));
	}
}

/* A section's title line, bold on a terminal. */
static void
title(buf *out, const table_mode *m, const char *text)
{
	buf_putc(out, '\n');
	term_paint(out, m->colour, TERM_BOLD, text);
	buf_putc(out, '\n');
}

void
status_text_wake(buf *out, const json_t *wake)
{
	char d[64];

	if (!json_is_object(wake)) {
		buf_puts(out, "never (no \"cronq run\" has recorded a wake)");
		return;
	}
	/* The worker's name is the runner's to choose, and older runners took any text. */
	char *by = utf8_printable(cq_json_str(wake, "worker", "-"), false);

	buf_printf(out, "%s ago, at %s by %s ", secs(cq_json_int(wake, "seconds_ago"), d, sizeof d),
			   cq_json_str(wake, "started_at", "-"), by);
	free(by);
	if (json_is_integer(json_object_get(wake, "exit_status")))
		buf_printf(out, "(%" PRId64 " job%s run, %" PRId64 " failed, exit %" PRId64 ")",
				   cq_json_int(wake, "jobs_run"), cq_json_int(wake, "jobs_run") == 1 ? "" : "s",
				   cq_json_int(wake, "jobs_failed"), cq_json_int(wake, "exit_status"));
	else
		buf_puts(out, "(still running)");
}

/* The k-th key of a summary line, escaped as the tables' cells are. */
static void
put_key(buf *out, size_t k, const char *key)
{
	char *shown = utf8_printable(key, false);

	buf_printf(out, "%s%s", k ? ", " : "", shown);
	free(shown);
}

static void
text_summary(buf *out, const json_t *doc, const table_mode *m)
{
	const json_t *wake = json_object_get(doc, "last_wake");
	const json_t *scheds = json_object_get(doc, "schedules");
	char d[64];
	size_t i, shown = 0;
	int64_t n;
	json_t *s;

	if (cq_json_int(doc, "due") > 0)
		buf_printf(out, "Lag:                %s (%" PRId64 " job%s due, the oldest since %s)\n",
				   secs(cq_json_int(doc, "lag_seconds"), d, sizeof d), cq_json_int(doc, "due"),
				   cq_json_int(doc, "due") == 1 ? "" : "s", cq_json_str(doc, "oldest_due_at", "-"));
	else
		buf_puts(out, "Lag:                0s (nothing due)\n");
	n = cq_json_int(json_object_get(doc, "expired_leases"), "count");
	snprintf(d, sizeof d, "%" PRId64, n);
	buf_puts(out, "Expired leases:     ");
	term_paint(out, m->colour, n > 0 ? TERM_YELLOW : TERM_PLAIN, d);
	n = cq_json_int(json_object_get(doc, "dead"), "count");
	snprintf(d, sizeof d, "%" PRId64, n);
	buf_puts(out, "\nDead jobs:          ");
	term_paint(out, m->colour, n > 0 ? TERM_RED : TERM_PLAIN, d);
	buf_putc(out, '\n');
	buf_puts(out, "Last wake:          ");
	status_text_wake(out, wake);
	buf_putc(out, '\n');
	if (json_array_size(json_object_get(doc, "paused")) > 0) {
		const json_t *pz = json_object_get(doc, "paused"), *p;
		size_t k;

		buf_puts(out, "Paused:             ");
		json_array_foreach(pz, k, p) {
			put_key(out, k, cq_json_str(p, "key", "?"));
			if (json_is_string(json_object_get(p, "until")))
				buf_printf(out, " until %s", cq_json_str(p, "until", "?"));
		}
		if (cq_json_int(doc, "paused_omitted") > 0)
			buf_printf(out, " and %" PRId64 " more", cq_json_int(doc, "paused_omitted"));
		buf_printf(out, " (%" PRId64 " due jobs held)\n", cq_json_int(doc, "held"));
	}
	if (json_array_size(json_object_get(doc, "limits")) > 0) {
		const json_t *lims = json_object_get(doc, "limits"), *l;
		size_t k;

		buf_puts(out, "Limits:             ");
		json_array_foreach(lims, k, l) {
			put_key(out, k, cq_json_str(l, "key", "?"));
			if (json_is_integer(json_object_get(l, "max_running")))
				buf_printf(out, " %" PRId64 "/%" PRId64 " running", cq_json_int(l, "running"),
						   cq_json_int(l, "max_running"));
			if (json_is_integer(json_object_get(l, "rate")))
				buf_printf(out, " %" PRId64 "/%" PRId64 " started in %s", cq_json_int(l, "started"),
						   cq_json_int(l, "rate"), secs(cq_json_int(l, "per_seconds"), d, sizeof d));
			if (json_is_true(json_object_get(l, "full")))
				buf_puts(out, " (full)");
		}
		buf_putc(out, '\n');
	}
	buf_puts(out, "Overdue schedules:  ");
	json_array_foreach(scheds, i, s) {
		if (!json_is_true(json_object_get(s, "overdue")))
			continue;
		buf_printf(out, "%s%.200s (%s late)", shown++ ? ", " : "", cq_json_str(s, "name", "?"),
				   secs(cq_json_int(s, "overdue_seconds"), d, sizeof d));
	}
	buf_puts(out, shown ? "\n" : "none\n");
}

/* How many of what a table leaves out (status --limit), when any. */
static void
say_omitted(buf *out, int64_t omitted, const char *what)
{
	if (omitted > 0)
		buf_printf(out, "(%" PRId64 " more %s not listed: those in trouble come first;"
				   " --limit 0 lists all)\n", omitted, what);
}

static void
text_jobs(buf *out, const json_t *doc, const table_mode *m)
{
	static const char *const head[] = {"QUEUE", "TYPE", STATUS_COLUMNS};
	static const char *const qhead[] = {"QUEUE", "DUE", "LAG", "OLDEST DUE", "EXPIRED LEASES"};
	table t = {.ncols = sizeof head / sizeof head[0], .head = head, .right = 0x1FC, .shrink = 0x3};
	table q = {.ncols = 5, .head = qhead, .right = 0x12, .shrink = 0x1};
	const json_t *types = json_object_get(doc, "types");
	const json_t *queues = json_object_get(doc, "queues");
	char d[64];
	size_t i;
	json_t *o;

	if (m->format == TABLE_CSV) {
		json_array_foreach(types, i, o) {
			table_cell(&t, "%s", cq_json_str(o, "queue", "?"));
			table_cell(&t, "%s", cq_json_str(o, "type", "?"));
			cell_counts(&t, o);
		}
		table_flush(&t, out, m);
		return;
	}
	if (json_array_size(types) == 0) {
		buf_puts(out, "\nJobs: none\n");
		return;
	}
	title(out, m, "Jobs");
	json_array_foreach(types, i, o) {
		table_cell(&t, "%s", cq_json_str(o, "queue", "?"));
		table_cell(&t, "%s", cq_json_str(o, "type", "?"));
		cell_counts(&t, o);
	}
	table_flush(&t, out, m);

	title(out, m, "Queues");
	json_array_foreach(queues, i, o) {
		table_cell(&q, "%s", cq_json_str(o, "queue", "?"));
		table_cell(&q, "%" PRId64, cq_json_int(o, "due"));
		table_cell(&q, "%s", secs(cq_json_int(o, "lag_seconds"), d, sizeof d));
		table_cell(&q, "%s", cq_json_str(o, "oldest_due_at", "-"));
		table_cell(&q, "%" PRId64, cq_json_int(o, "expired_leases"));
	}
	table_flush(&q, out, m);
	say_omitted(out, cq_json_int(doc, "queues_omitted"), "queues");
}

static void
text_problems(buf *out, const json_t *doc, const table_mode *m)
{
	static const char *const lhead[] = {"ID", "QUEUE", "TYPE", "ATTEMPT", "LOCKED BY", "EXPIRED"};
	static const char *const dhead[] = {"ID", "QUEUE", "TYPE", "ATTEMPTS", "FINISHED", "ERROR"};
	table l = {.ncols = 6, .head = lhead, .right = 0x01, .shrink = 0x16};
	table t = {.ncols = 6, .head = dhead, .right = 0x09, .shrink = 0x26};
	const json_t *leases = json_object_get(doc, "expired_leases");
	const json_t *dead = json_object_get(doc, "dead");
	char d[64], head[128];
	size_t i;
	json_t *o;

	if (cq_json_int(leases, "count") > 0) {
		snprintf(head, sizeof head, "Expired leases (%" PRId64 "; the next \"cronq run\" rescues them)",
				 cq_json_int(leases, "count"));
		title(out, m, head);
		json_array_foreach(json_object_get(leases, "jobs"), i, o) {
			table_cell(&l, "%" PRId64, cq_json_int(o, "id"));
			table_cell(&l, "%s", cq_json_str(o, "queue", "?"));
			table_cell(&l, "%s", cq_json_str(o, "type", "?"));
			table_cell(&l, "%" PRId64 "/%" PRId64, cq_json_int(o, "attempts"), cq_json_int(o, "max_attempts"));
			table_cell(&l, "%s", cq_json_str(o, "locked_by", "-"));
			table_cell(&l, "%s ago", secs(cq_json_int(o, "expired_seconds"), d, sizeof d));
		}
		table_flush(&l, out, m);
	}
	if (cq_json_int(dead, "count") > 0) {
		size_t shown = json_array_size(json_object_get(dead, "jobs"));

		if ((int64_t) shown < cq_json_int(dead, "count"))
			snprintf(head, sizeof head, "Dead jobs (%" PRId64 "; the newest %zu)", cq_json_int(dead, "count"), shown);
		else
			snprintf(head, sizeof head, "Dead jobs (%" PRId64 ")", cq_json_int(dead, "count"));
		title(out, m, head);
		json_array_foreach(json_object_get(dead, "jobs"), i, o) {
			table_cell(&t, "%" PRId64, cq_json_int(o, "id"));
			table_cell(&t, "%s", cq_json_str(o, "queue", "?"));
			table_cell(&t, "%s", cq_json_str(o, "type", "?"));
			table_cell(&t, "%" PRId64, cq_json_int(o, "attempts"));
			table_cell(&t, "%s", cq_json_str(o, "finished_at", "-"));
			if (json_is_string(json_object_get(o, "error_code")))
				table_cell(&t, "%s: %s", cq_json_str(o, "error_code", ""), cq_json_str(o, "last_error", ""));
			else
				table_cell(&t, "%s", cq_json_str(o, "last_error", "-"));
		}
		table_flush(&t, out, m);
	}
}

static void
text_schedules(buf *out, const json_t *doc, const table_mode *m)
{
	static const char *const head[] = {"NAME", "CRON", "TIMEZONE", "ENABLED", "NEXT RUN", "OVERDUE",
									   "LAST ENQUEUED", "LAST JOB"};
	table t = {.ncols = 8, .head = head, .shrink = 0x7};
	const json_t *scheds = json_object_get(doc, "schedules");
	char d[64];
	size_t i;
	json_t *s;

	if (json_array_size(scheds) == 0) {
		buf_puts(out, "\nSchedules: none\n");
		return;
	}
	title(out, m, "Schedules");
	json_array_foreach(scheds, i, s) {
		table_cell(&t, "%s", cq_json_str(s, "name", "?"));
		table_cell(&t, "%s", cq_json_str(s, "cron", "?"));
		table_cell(&t, "%s", cq_json_str(s, "timezone", "?"));
		table_cell(&t, "%s", json_is_true(json_object_get(s, "enabled")) ? "yes" : "no");
		table_cell(&t, "%s", cq_json_str(s, "next_run_at", "-"));
		table_cell(&t, "%s", json_is_true(json_object_get(s, "overdue")) ?
				   secs(cq_json_int(s, "overdue_seconds"), d, sizeof d) : "-");
		table_cell(&t, "%s", cq_json_str(s, "last_enqueued_at", "-"));
		if (json_is_integer(json_object_get(s, "last_job_id"))) {
			table_cell(&t, "%" PRId64 " %s", cq_json_int(s, "last_job_id"),
					   cq_json_str(s, "last_job_status", "(purged)"));
			table_style(&t, table_status_style(cq_json_str(s, "last_job_status", "")));
		} else
			table_cell(&t, "-");
	}
	table_flush(&t, out, m);
	say_omitted(out, cq_json_int(doc, "schedules_omitted"), "schedules");
	/* The reason is the database's words, which may quote an author's payload. */
	json_array_foreach(scheds, i, s)
		if (json_is_string(json_object_get(s, "error"))) {
			char *why = utf8_printable(cq_json_str(s, "error", "?"), false);

			buf_printf(out, "schedule %s cannot run: %s\n", cq_json_str(s, "name", "?"), why);
			free(why);
		}
}

/*
 * One line per queue, one character per hour, oldest first: '.' when no
 * attempt finished in that hour, 'o' when all succeeded, 'x' when any failed.
 */
static void
text_history(buf *out, const json_t *doc, const table_mode *m)
{
	const json_t *queues = json_object_get(doc, "queues");
	size_t i, w = strlen("QUEUE");
	json_t *q;

	if (json_array_size(queues) == 0)
		return;
	json_array_foreach(queues, i, q) {
		size_t qw = utf8_width(cq_json_str(q, "queue", "?"));

		if (qw > w)
			w = qw < TABLE_CELL_MAX ? qw : TABLE_CELL_MAX;
	}
	/* On a narrow terminal the names give way to the 24 hours. */
	if (m->width > 0 && w + 2 + STATS_HISTORY_HOURS > m->width)
		w = m->width > TABLE_SHRINK_MIN + 2 + STATS_HISTORY_HOURS ? m->width - 2 - STATS_HISTORY_HOURS
			: TABLE_SHRINK_MIN;
	title(out, m, "Last 24 hours (one character per hour, oldest first: . none finished,"
		  " o all succeeded, x some failed)");
	buf_printf(out, "%s%-*s  %-*s%s%s\n", m->colour ? term_sgr(TERM_BOLD) : "", (int) w, "QUEUE",
			   STATS_HISTORY_HOURS - 3, "-24h", "now", m->colour ? TERM_RESET : "");
	json_array_foreach(queues, i, q) {
		const json_t *runs = json_object_get(q, "runs_24h");
		const json_t *ok = json_object_get(runs, "succeeded");
		const json_t *bad = json_object_get(runs, "failed");
		char *clipped = table_clip(cq_json_str(q, "queue", "?"));
		char *name = utf8_clip(clipped, w, 0);

		free(clipped);
		buf_puts(out, name);
		for (size_t k = utf8_width(name); k < w + 2; k++)
			buf_putc(out, ' ');
		free(name);
		for (size_t h = 0; h < json_array_size(ok); h++) {
			if (json_integer_value(json_array_get(bad, h)) > 0)
				term_paint(out, m->colour, TERM_RED, "x");
			else if (json_integer_value(json_array_get(ok, h)) > 0)
				term_paint(out, m->colour, TERM_GREEN, "o");
			else
				term_paint(out, m->colour, TERM_DIM, ".");
		}
		buf_putc(out, '\n');
	}
}

void
status_text(buf *out, const json_t *doc, bool chart, const table_mode *m)
{
	size_t start = out->len;

	if (m->format == TABLE_CSV) {
		text_jobs(out, doc, m);
		return;
	}
	text_summary(out, doc, m);
	text_jobs(out, doc, m);
	text_problems(out, doc, m);
	text_schedules(out, doc, m);
	if (chart)
		text_history(out, doc, m);
	/* The tables fit already; this cuts the summary's long lines. */
	term_fit(out, start, m->width);
}

