/*
 * status_html — see status_html.h. Reads only the keys it needs; a key
 * that is missing reads as 0 or "-", as in status_text. Times are shown as
 * the database wrote them (RFC 3339 UTC).
 */
#include "report/status_html.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report/html.h"
#include "report/stats.h"
#include "report/status_text.h"
#include "time/rfc3339.h"
#include "util/duration.h"
#include "util/json.h"

/* A timeline's drawing, in SVG user units. */
#define TL_WIDTH 480
#define TL_HEIGHT 48
#define TL_AXIS 14

static const char page_css[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em auto;"
	"max-width:80em;padding:0 1em;color:#1b1f23;background:#fff}"
	"h1{font-size:1.6em;margin:0 0 .2em}h2{font-size:1.2em;margin:1.6em 0 .4em;"
	"border-bottom:1px solid #d0d7de;padding-bottom:.2em}"
	"table{border-collapse:collapse;margin:.3em 0}th,td{padding:.2em .6em;text-align:left;"
	"vertical-align:top;border-bottom:1px solid #eaeef2;white-space:nowrap}"
	"th{background:#f6f8fa;font-weight:600}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"td.error{max-width:40em;overflow-wrap:anywhere;white-space:pre-wrap;font-family:monospace}"
	"dl.summary{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}"
	"dl.summary dt{font-weight:600}dl.summary dd{margin:0}"
	".bad{color:#b42318;font-weight:600}.none{color:#57606a;font-style:italic}"
	"svg.timeline{width:100%;max-width:480px;height:auto;display:block}"
	"svg.timeline .slot{fill:#f6f8fa}svg.timeline .axis{font-size:10px;fill:#57606a}"
	".ran{fill:#2da44e;background:#2da44e}.failed{fill:#cf222e;background:#cf222e}"
	".skipped{fill:#d4a72c;background:#d4a72c}.missed{fill:#8250df;background:#8250df}"
	".legend span.key{display:inline-block;width:.8em;height:.8em;margin:0 .3em 0 1em;"
	"vertical-align:middle}"
	"footer{margin-top:2em;color:#57606a;font-size:.9em}";

/* ---- small pieces ---- */

static void
esc(buf *out, const char *s)
{
	html_escape(out, s);
}

/* "1m30s" for a count of seconds. */
static const char *
secs(int64_t s, char *out, size_t len)
{
	duration_format(s * 1000, out, len);
	return out;
}

static void
td_text(buf *out, const char *s)
{
	buf_puts(out, "<td>");
	esc(out, s);
	buf_puts(out, "</td>");
}

static void
td_int(buf *out, int64_t n)
{
	buf_printf(out, "<td class=\"n\">%" PRId64 "</td>", n);
}

/* <table class="cls"><thead>…</thead><tbody>: close with table_end. */
static void
table_begin(buf *out, const char *cls, const char *const *head, size_t n)
{
	buf_printf(out, "<table class=\"%s\"><thead><tr>", cls);
	for (size_t i = 0; i < n; i++)
		buf_printf(out, "<th scope=\"col\">%s</th>", head[i]);
	buf_puts(out, "</tr></thead><tbody>\n");
}

/*
 * <section id><h2>title</h2>; when empty, with the paragraph nothing (the
 * section then closed, and false returned), else open for a table that
 * section_end closes.
 */
static bool
section_begin(buf *out, const char *id, const char *title, bool empty, const char *nothing)
{
	buf_printf(out, "<section id=\"%s\">\n<h2>%s</h2>\n", id, title);
	if (empty)
		buf_printf(out, "<p class=\"none\">%s</p>\n</section>\n", nothing);
	return !empty;
}

/* The end of the table of a section, and of the section. */
static void
section_end(buf *out)
{
	buf_puts(out, "</tbody></table>\n</section>\n");
}

/* The same, saying how many of what the table leaves out (status --limit). */
static void
section_end_omitted(buf *out, int64_t omitted, const char *what)
{
	buf_puts(out, "</tbody></table>\n");
	if (omitted > 0)
		buf_printf(out, "<p class=\"none\">%" PRId64 " more %s not listed: those in trouble come"
				   " first (cronq status --limit 0 lists all).</p>\n", omitted, what);
	buf_puts(out, "</section>\n");
}

/* The sum of the integers of arr from index from on. */
static int64_t
sum_from(const json_t *arr, size_t from)
{
	int64_t n = 0;

	for (size_t i = from; i < json_array_size(arr); i++)
		n += json_integer_value(json_array_get(arr, i));
	return n;
}

/* The entity called name in tl's list key, or NULL. */
static const json_t *
tl_find(const json_t *tl, const char *key, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(tl, key), i, e)
		if (strcmp(cq_json_str(e, "name", ""), name) == 0)
			return e;
	return NULL;
}

/* Window w of entity e (NULL when none). */
static const json_t *
tl_window(const json_t *e, int w)
{
	return json_array_get(json_object_get(e, "windows"), (size_t) w);
}

/* ---- sections ---- */

static void
html_summary(buf *out, const json_t *doc, const json_t *tl)
{
	const json_t *wake = json_object_get(doc, "last_wake");
	const json_t *q;
	buf line = BUF_INIT;
	int64_t last_hour = 0, day = 0;
	char d[64];
	size_t i;

	/* throughput: jobs finished, from the 24-hour window's buckets */
	json_array_foreach(json_object_get(tl, "queues"), i, q) {
		const json_t *fin = json_object_get(tl_window(q, 0), "finished");

		if (json_array_size(fin) > 0)
			last_hour += sum_from(fin, json_array_size(fin) - 1);
		day += sum_from(fin, 0);
	}
	buf_puts(out, "<section id=\"summary\">\n<h2>Summary</h2>\n<dl class=\"summary\">\n");
	buf_puts(out, "<dt>Lag</dt><dd id=\"lag\">");
	if (cq_json_int(doc, "due") > 0) {
		buf_printf(out, "%s (%" PRId64 " job%s due, the oldest since ",
				   secs(cq_json_int(doc, "lag_seconds"), d, sizeof d), cq_json_int(doc, "due"),
				   cq_json_int(doc, "due") == 1 ? "" : "s");
		esc(out, cq_json_str(doc, "oldest_due_at", "-"));
		buf_puts(out, ")");
	} else
		buf_puts(out, "0s (nothing due)");
	buf_puts(out, "</dd>\n");
	buf_printf(out, "<dt>Throughput</dt><dd id=\"throughput\">%" PRId64 " job%s finished in the last hour;"
			   " %.1f per hour over %d hours</dd>\n", last_hour, last_hour == 1 ? "" : "s",
			   (double) day / stats_windows[0].buckets, stats_windows[0].buckets);
	buf_printf(out, "<dt>Expired leases</dt><dd%s>%" PRId64 "</dd>\n",
			   cq_json_int(json_object_get(doc, "expired_leases"), "count") ? " class=\"bad\"" : "",
			   cq_json_int(json_object_get(doc, "expired_leases"), "count"));
	buf_printf(out, "<dt>Dead jobs</dt><dd%s>%" PRId64 "</dd>\n",
			   cq_json_int(json_object_get(doc, "dead"), "count") ? " class=\"bad\"" : "",
			   cq_json_int(json_object_get(doc, "dead"), "count"));
	status_text_wake(&line, wake);
	buf_printf(out, "<dt>Last wake</dt><dd id=\"last-wake\"%s>", json_is_object(wake) ? "" : " class=\"bad\"");
	esc(out, buf_str(&line));
	buf_puts(out, "</dd>\n");
	buf_free(&line);
	buf_printf(out, "<dt>Overdue schedules</dt><dd%s>%" PRId64 "</dd>\n",
			   cq_json_int(doc, "overdue_schedules") ? " class=\"bad\"" : "",
			   cq_json_int(doc, "overdue_schedules"));
	buf_printf(out, "<dt>Unplannable schedules</dt><dd%s>%" PRId64 "</dd>\n",
			   cq_json_int(doc, "unplannable_schedules") ? " class=\"bad\"" : "",
			   cq_json_int(doc, "unplannable_schedules"));
	buf_puts(out, "</dl>\n</section>\n");
}

static void
html_jobs(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Queue", "Type", "Queued", "Blocked", "Running", "Succeeded",
									   "Failed", "Dead", "Cancelled", "Total"};
	static const char *const keys[] = {"queued", "blocked", "running", "succeeded", "failed", "dead",
									   "cancelled", "total"};
	const json_t *o;
	size_t i;

	if (!section_begin(out, "jobs", "Jobs by queue and type",
					   json_array_size(json_object_get(doc, "types")) == 0, "No jobs."))
		return;
	table_begin(out, "jobs", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(doc, "types"), i, o) {
		buf_puts(out, "<tr>");
		td_text(out, cq_json_str(o, "queue", "?"));
		td_text(out, cq_json_str(o, "type", "?"));
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			td_int(out, cq_json_int(o, keys[k]));
		buf_puts(out, "</tr>\n");
	}
	section_end(out);
}

static void
html_queues(buf *out, const json_t *doc, const json_t *tl)
{
	static const char *const head[] = {"Queue", "Due", "Held", "Running", "Lag", "Oldest due",
									   "Expired leases", "Finished last hour", "Per hour (24 h)",
									   "Paused"};
	const json_t *o;
	char d[64];
	size_t i;

	if (!section_begin(out, "queues", "Queues",
					   json_array_size(json_object_get(doc, "queues")) == 0, "No queues."))
		return;
	table_begin(out, "queues", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(doc, "queues"), i, o) {
		const json_t *fin = json_object_get(tl_window(tl_find(tl, "queues", cq_json_str(o, "queue", "")), 0),
											"finished");

		buf_puts(out, "<tr>");
		td_text(out, cq_json_str(o, "queue", "?"));
		td_int(out, cq_json_int(o, "due"));
		td_int(out, cq_json_int(o, "held"));
		td_int(out, cq_json_int(o, "running"));
		td_text(out, secs(cq_json_int(o, "lag_seconds"), d, sizeof d));
		td_text(out, cq_json_str(o, "oldest_due_at", "-"));
		td_int(out, cq_json_int(o, "expired_leases"));
		td_int(out, json_array_size(fin) ? sum_from(fin, json_array_size(fin) - 1) : 0);
		buf_printf(out, "<td class=\"n\">%.1f</td>", (double) sum_from(fin, 0) / stats_windows[0].buckets);
		td_text(out, json_is_true(json_object_get(o, "paused")) ? "yes" : "no");
		buf_puts(out, "</tr>\n");
	}
	section_end_omitted(out, cq_json_int(doc, "queues_omitted"), "queues");
}

static void
html_schedules(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Name", "Cron", "Time zone", "Queue", "Enabled", "Next run",
									   "Overdue", "Last enqueued", "Last job", "Cannot run"};
	const json_t *s;
	char d[64];
	size_t i;

	if (!section_begin(out, "schedules", "Schedules",
					   json_array_size(json_object_get(doc, "schedules")) == 0, "No schedules."))
		return;
	table_begin(out, "schedules", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(doc, "schedules"), i, s) {
		buf_puts(out, "<tr>");
		td_text(out, cq_json_str(s, "name", "?"));
		td_text(out, cq_json_str(s, "cron", "?"));
		td_text(out, cq_json_str(s, "timezone", "?"));
		td_text(out, cq_json_str(s, "queue", "?"));
		td_text(out, json_is_true(json_object_get(s, "enabled")) ?
				(json_is_true(json_object_get(s, "paused")) ? "paused" : "yes") : "no");
		td_text(out, cq_json_str(s, "next_run_at", "-"));
		if (json_is_true(json_object_get(s, "overdue")))
			buf_printf(out, "<td class=\"bad\">%s</td>", secs(cq_json_int(s, "overdue_seconds"), d, sizeof d));
		else
			td_text(out, "-");
		td_text(out, cq_json_str(s, "last_enqueued_at", "-"));
		if (json_is_integer(json_object_get(s, "last_job_id"))) {
			buf_printf(out, "<td>%" PRId64 " ", cq_json_int(s, "last_job_id"));
			esc(out, cq_json_str(s, "last_job_status", "(purged)"));
			buf_puts(out, "</td>");
		} else
			td_text(out, "-");
		if (json_is_string(json_object_get(s, "error"))) {
			buf_puts(out, "<td class=\"bad\">");
			esc(out, cq_json_str(s, "error", ""));
			buf_puts(out, "</td>");
		} else
			td_text(out, "");
		buf_puts(out, "</tr>\n");
	}
	section_end_omitted(out, cq_json_int(doc, "schedules_omitted"), "schedules");
}

static void
html_dead(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Id", "Queue", "Type", "Attempts", "Finished", "Error"};
	const json_t *dead = json_object_get(doc, "dead"), *o;
	size_t i, shown = json_array_size(json_object_get(dead, "jobs"));

	if (!section_begin(out, "dead", "Dead jobs", cq_json_int(dead, "count") == 0, "No dead jobs."))
		return;
	buf_printf(out, "<p>%" PRId64 " dead", cq_json_int(dead, "count"));
	if ((int64_t) shown < cq_json_int(dead, "count"))
		buf_printf(out, "; the newest %zu", shown);
	buf_puts(out, " (<code>cronq retry --dead</code> runs them again).</p>\n");
	table_begin(out, "dead", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(dead, "jobs"), i, o) {
		buf_puts(out, "<tr>");
		td_int(out, cq_json_int(o, "id"));
		td_text(out, cq_json_str(o, "queue", "?"));
		td_text(out, cq_json_str(o, "type", "?"));
		td_int(out, cq_json_int(o, "attempts"));
		td_text(out, cq_json_str(o, "finished_at", "-"));
		buf_puts(out, "<td class=\"error\">");
		if (json_is_string(json_object_get(o, "error_code"))) {
			esc(out, cq_json_str(o, "error_code", ""));
			buf_puts(out, ": ");
		}
		esc(out, cq_json_str(o, "last_error", "-"));
		buf_puts(out, "</td></tr>\n");
	}
	section_end(out);
}

static void
html_leases(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Id", "Queue", "Type", "Attempt", "Locked by", "Expired"};
	const json_t *leases = json_object_get(doc, "expired_leases"), *o;
	char d[64];
	size_t i;

	if (!section_begin(out, "expired-leases", "Expired leases",
					   cq_json_int(leases, "count") == 0, "No running job has outlived its lease."))
		return;
	buf_printf(out, "<p>%" PRId64 " running jobs whose lease expired; the next <code>cronq run</code>"
			   " rescues them.</p>\n", cq_json_int(leases, "count"));
	table_begin(out, "expired-leases", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(leases, "jobs"), i, o) {
		buf_puts(out, "<tr>");
		td_int(out, cq_json_int(o, "id"));
		td_text(out, cq_json_str(o, "queue", "?"));
		td_text(out, cq_json_str(o, "type", "?"));
		buf_printf(out, "<td class=\"n\">%" PRId64 "/%" PRId64 "</td>", cq_json_int(o, "attempts"),
				   cq_json_int(o, "max_attempts"));
		td_text(out, cq_json_str(o, "locked_by", "-"));
		buf_printf(out, "<td>%s ago</td>", secs(cq_json_int(o, "expired_seconds"), d, sizeof d));
		buf_puts(out, "</tr>\n");
	}
	section_end(out);
}

static void
html_paused(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Key", "Until", "Paused by", "Paused at"};
	const json_t *o;
	size_t i;

	if (!section_begin(out, "paused", "Paused keys",
					   json_array_size(json_object_get(doc, "paused")) == 0, "Nothing is paused."))
		return;
	buf_printf(out, "<p>%" PRId64 " due jobs held.</p>\n", cq_json_int(doc, "held"));
	table_begin(out, "paused", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(doc, "paused"), i, o) {
		buf_puts(out, "<tr>");
		td_text(out, cq_json_str(o, "key", "?"));
		td_text(out, cq_json_str(o, "until", "resumed by hand"));
		td_text(out, cq_json_str(o, "paused_by", "-"));
		td_text(out, cq_json_str(o, "paused_at", "-"));
		buf_puts(out, "</tr>\n");
	}
	section_end_omitted(out, cq_json_int(doc, "paused_omitted"), "keys");
}

static void
html_limits(buf *out, const json_t *doc)
{
	static const char *const head[] = {"Key", "Running", "Max running", "Started", "Rate", "Per",
									   "Full", "Set by"};
	const json_t *o;
	char d[64];
	size_t i;

	if (!section_begin(out, "limits", "Limits",
					   json_array_size(json_object_get(doc, "limits")) == 0, "No limits."))
		return;
	table_begin(out, "limits", head, sizeof head / sizeof head[0]);
	json_array_foreach(json_object_get(doc, "limits"), i, o) {
		bool rate = json_is_integer(json_object_get(o, "rate"));

		buf_puts(out, "<tr>");
		td_text(out, cq_json_str(o, "key", "?"));
		td_int(out, cq_json_int(o, "running"));
		if (json_is_integer(json_object_get(o, "max_running")))
			td_int(out, cq_json_int(o, "max_running"));
		else
			td_text(out, "-");
		td_int(out, cq_json_int(o, "started"));
		if (rate) {
			td_int(out, cq_json_int(o, "rate"));
			td_text(out, secs(cq_json_int(o, "per_seconds"), d, sizeof d));
		} else {
			td_text(out, "-");
			td_text(out, "-");
		}
		if (json_is_true(json_object_get(o, "full")))
			buf_puts(out, "<td class=\"bad\">full</td>");
		else
			td_text(out, "no");
		td_text(out, cq_json_str(o, "set_by", "-"));
		buf_puts(out, "</tr>\n");
	}
	section_end(out);
}

/* ---- timelines ---- */

/*
 * One window of one entity as an svg.timeline: a g.bucket per bucket (its
 * title says when and how many of each kind), the marks stacked from the
 * bottom in stats_marks order, scaled to the window's busiest bucket.
 */
static void
svg_timeline(buf *out, const char *kind, const char *name, const json_t *win, int w, int64_t now)
{
	const stats_window *sw = &stats_windows[w];
	const json_t *arr[STATS_MARKS];
	int64_t max = 0, total[STATS_MARKS] = {0};

	for (int k = 0; k < STATS_MARKS; k++)
		arr[k] = json_object_get(win, stats_marks[k]);
	for (int b = 0; b < sw->buckets; b++) {
		int64_t t = 0;

		for (int k = 0; k < STATS_MARKS; k++) {
			t += json_integer_value(json_array_get(arr[k], (size_t) b));
			total[k] += json_integer_value(json_array_get(arr[k], (size_t) b));
		}
		if (t > max)
			max = t;
	}
	buf_printf(out, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" data-window=\"%s\""
			   " data-buckets=\"%d\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\""
			   " aria-label=\"%s ", sw->name, sw->buckets, TL_WIDTH, TL_HEIGHT + TL_AXIS, TL_WIDTH,
			   TL_HEIGHT + TL_AXIS, kind);
	esc(out, name);
	buf_printf(out, ", %s: %" PRId64 " ran, %" PRId64 " failed, %" PRId64 " skipped, %" PRId64 " missed\">\n",
			   sw->title, total[0], total[1], total[2], total[3]);
	for (int b = 0; b < sw->buckets; b++) {
		int64_t counts[STATS_MARKS];
		int heights[STATS_MARKS], x, width, y = TL_HEIGHT;
		char from[RFC3339_BUFLEN], to[RFC3339_BUFLEN];
		int64_t end = now - (int64_t) (sw->buckets - 1 - b) * sw->bucket_seconds;

		for (int k = 0; k < STATS_MARKS; k++)
			counts[k] = json_integer_value(json_array_get(arr[k], (size_t) b));
		html_column(sw->buckets, TL_WIDTH, b, &x, &width);
		html_stack(counts, STATS_MARKS, max, TL_HEIGHT, heights);
		rfc3339_format(end - sw->bucket_seconds, from, sizeof from);
		rfc3339_format(end, to, sizeof to);
		buf_printf(out, "<g class=\"bucket\"><title>%s to %s: %" PRId64 " ran, %" PRId64 " failed, %"
				   PRId64 " skipped, %" PRId64 " missed</title>", from, to, counts[0], counts[1],
				   counts[2], counts[3]);
		buf_printf(out, "<rect class=\"slot\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>", x, width,
				   TL_HEIGHT);
		for (int k = 0; k < STATS_MARKS; k++) {
			if (heights[k] == 0)
				continue;
			y -= heights[k];
			buf_printf(out, "<rect class=\"mark %s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
					   stats_marks[k], x, y, width, heights[k]);
		}
		buf_puts(out, "</g>\n");
	}
	buf_printf(out, "<text class=\"axis\" x=\"0\" y=\"%d\">-%s</text>"
			   "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">now</text>\n</svg>",
			   TL_HEIGHT + TL_AXIS - 2, sw->name, TL_WIDTH, TL_HEIGHT + TL_AXIS - 2);
}

static void
html_timelines(buf *out, const json_t *tl, const char *key, const char *id, const char *title,
			   const char *kind)
{
	const json_t *e;
	size_t i;

	if (!section_begin(out, id, title, json_array_size(json_object_get(tl, key)) == 0,
					   kind[0] == 'q' ? "No queues." : "No schedules."))
		return;
	buf_puts(out, "<p class=\"legend\">Per bucket, oldest first:"
			 "<span class=\"key ran\"></span>ran (jobs succeeded)"
			 "<span class=\"key failed\"></span>failed (attempts failed, timed out or lease expired)"
			 "<span class=\"key skipped\"></span>skipped (overlap, catch-up, paused, disabled,"
			 " refused, expired)"
			 "<span class=\"key missed\"></span>missed (fire times no runner woke for)</p>\n");
	buf_printf(out, "<table class=\"timelines\"><thead><tr><th scope=\"col\">%s</th>",
			   kind[0] == 'q' ? "Queue" : "Schedule");
	for (int w = 0; w < STATS_WINDOWS; w++)
		buf_printf(out, "<th scope=\"col\">%s (%d buckets of %dh)</th>", stats_windows[w].title,
				   stats_windows[w].buckets, stats_windows[w].bucket_seconds / 3600);
	buf_puts(out, "</tr></thead><tbody>\n");
	json_array_foreach(json_object_get(tl, key), i, e) {
		buf_printf(out, "<tr class=\"timeline\" data-%s=\"", kind);
		esc(out, cq_json_str(e, "name", "?"));
		buf_puts(out, "\"><th scope=\"row\">");
		esc(out, cq_json_str(e, "name", "?"));
		buf_puts(out, "</th>");
		for (int w = 0; w < STATS_WINDOWS; w++) {
			buf_puts(out, "<td>");
			svg_timeline(out, kind, cq_json_str(e, "name", "?"), tl_window(e, w), w, cq_json_int(tl, "now"));
			buf_puts(out, "</td>");
		}
		buf_puts(out, "</tr>\n");
	}
	section_end(out);
}

void
status_html(buf *out, const json_t *doc, const json_t *tl)
{
	const char *at = cq_json_str(doc, "generated_at", "-");

	buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			 "<meta name=\"generator\" content=\"cronq status --html\">\n<title>cronq status, ");
	esc(out, at);
	buf_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>cronq status</h1>\n"
			   "<p>Generated at <time id=\"generated\" datetime=\"", page_css);
	esc(out, at);
	buf_puts(out, "\">");
	esc(out, at);
	buf_puts(out, "</time> (the database's clock, UTC).</p>\n</header>\n<main>\n");
	html_summary(out, doc, tl);
	html_queues(out, doc, tl);
	html_timelines(out, tl, "queues", "queue-timelines", "Queues over time", "queue");
	html_jobs(out, doc);
	html_schedules(out, doc);
	html_timelines(out, tl, "schedules", "schedule-timelines", "Schedules over time", "schedule");
	html_dead(out, doc);
	html_leases(out, doc);
	html_paused(out, doc);
	html_limits(out, doc);
	buf_puts(out, "</main>\n<footer>Made by <code>cronq status --html</code>. Times are UTC."
			 " A bucket's title (hover) gives its counts.</footer>\n</body>\n</html>\n");
}
