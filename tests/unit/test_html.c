/*
 * Unit tests of lib/report/html (escaping, timeline geometry) and of
 * status_html's page for documents with hostile names: tables of inputs and
 * what must come out.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/html.h"
#include "report/stats.h"
#include "report/status_html.h"

static const struct {
	const char *in;
	const char *out;
} escapes[] = {
	{"", ""},
	{"plain queue", "plain queue"},
	{"<script>alert(\"x\")</script>", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"},
	{"a & b", "a &amp; b"},
	{"it's", "it&#39;s"},
	{"&amp;", "&amp;amp;"},
	{"tab\there\nline\r", "tab\there\nline\r"},
	{"bell\a esc\x1b[31m del\x7f", "bell&#xFFFD; esc&#xFFFD;[31m del&#xFFFD;"},
	{"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"},	/* UTF-8 kept as it is */
	{"\" onmouseover=\"x", "&quot; onmouseover=&quot;x"},
};

/* html_stack: counts, max, height -> heights */
static const struct {
	int64_t		counts[4];
	int64_t		max;
	int			height;
	int			heights[4];
} stacks[] = {
	{{0, 0, 0, 0}, 0, 48, {0, 0, 0, 0}},		/* nothing at all */
	{{5, 0, 0, 0}, 0, 48, {0, 0, 0, 0}},		/* max 0: draws nothing */
	{{10, 0, 0, 0}, 10, 48, {48, 0, 0, 0}},		/* the busiest bucket fills the chart */
	{{5, 5, 0, 0}, 10, 48, {24, 24, 0, 0}},
	{{1, 0, 0, 0}, 1000, 48, {2, 0, 0, 0}},		/* tiny but visible */
	{{0, 0, 0, 3}, 12, 48, {0, 0, 0, 12}},
	{{997, 1, 1, 1}, 1000, 48, {42, 2, 2, 2}},	/* minima taken from the tallest */
	{{1, 1, 1, 1}, 4, 4, {1, 1, 1, 1}},			/* a chart too short for the minima */
	{{3, 1, 0, 0}, 4, 40, {30, 10, 0, 0}},
};

static void
check_columns(int n, int width)
{
	int prev_end = 0;

	for (int i = 0; i < n; i++) {
		int x, w;

		html_column(n, width, i, &x, &w);
		CHECK(x >= prev_end, "column %d of %d over %d: x %d overlaps the previous (ends %d)", i, n, width, x,
			  prev_end);
		CHECK(w >= 1, "column %d of %d over %d: width %d", i, n, width, w);
		CHECK(x + w <= width, "column %d of %d over %d: ends at %d, past the chart", i, n, width, x + w);
		prev_end = x + w;
	}
	{
		int x, w;

		html_column(n, width, n - 1, &x, &w);
		CHECK(x + w + 1 >= width, "the last of %d columns over %d ends at %d: the chart is not filled", n,
			  width, x + w);
	}
}

static const char hostile[] =
	"{\"generated_at\":\"2026-01-02T03:04:05Z\",\"due\":1,\"lag_seconds\":90,"
	"\"oldest_due_at\":\"2026-01-02T03:02:35Z\","
	"\"queues\":[{\"queue\":\"<script>q</script>\",\"due\":1}],"
	"\"types\":[{\"queue\":\"<script>q</script>\",\"type\":\"noop\",\"queued\":1,\"total\":1}],"
	"\"schedules\":[{\"name\":\"s\\\"'\",\"cron\":\"* * * * *\",\"timezone\":\"UTC\",\"queue\":\"<q>\","
	"\"enabled\":true,\"error\":null}],"
	"\"dead\":{\"count\":1,\"jobs\":[{\"id\":7,\"queue\":\"q\",\"type\":\"fail\",\"attempts\":1,"
	"\"last_error\":\"</td><script>alert(1)</script>\"}]},"
	"\"expired_leases\":{\"count\":0,\"jobs\":[]},"
	"\"paused\":[{\"key\":\"queue:<i>\"}],\"limits\":[{\"key\":\"type:a&b\",\"running\":1,\"max_running\":1,"
	"\"full\":true}]}";

static const char timelines[] =
	"{\"now\":1767323045,\"queues\":[{\"name\":\"<script>q</script>\",\"windows\":["
	"{\"ran\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,3],\"failed\":[],\"skipped\":[],"
	"\"missed\":[],\"finished\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,4]},"
	"{\"ran\":[],\"failed\":[],\"skipped\":[],\"missed\":[],\"finished\":[]}]}],"
	"\"schedules\":[{\"name\":\"s\\\"'\",\"queue\":\"<q>\",\"windows\":[{},{}]}]}";

/* How many times needle occurs in hay. */
static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void
check_page(void)
{
	json_error_t jerr;
	json_t *doc = json_loads(hostile, 0, &jerr), *tl = json_loads(timelines, 0, &jerr);
	buf out = BUF_INIT;
	const char *page;

	if (doc == NULL || tl == NULL) {
		printf("bad test document: %s\n", jerr.text);
		exit(2);
	}
	status_html(&out, doc, tl);
	page = buf_str(&out);
	CHECK(strncmp(page, "<!DOCTYPE html>\n", 16) == 0, "the page starts with its doctype");
	CHECK(strstr(page, "<meta charset=\"utf-8\">") != NULL, "the page declares UTF-8");
	CHECK(count(page, "<script") == 0, "no <script> in the page, whatever the names hold");
	CHECK(count(page, "&lt;script&gt;q&lt;/script&gt;") >= 3, "the queue's name escaped wherever it shows");
	CHECK(strstr(page, "&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != NULL, "a dead job's error escaped");
	CHECK(strstr(page, "data-schedule=\"s&quot;&#39;\"") != NULL, "a name in an attribute escaped");
	CHECK(strstr(page, "queue:&lt;i&gt;") != NULL && strstr(page, "type:a&amp;b") != NULL,
		  "paused keys and limits escaped");
	CHECK(strstr(page, "http://") == NULL || count(page, "http://") == count(page, "xmlns=\"http://www.w3.org/2000/svg\""),
		  "no address but the SVG namespace");
	for (int w = 0; w < STATS_WINDOWS; w++) {
		char attr[64];

		snprintf(attr, sizeof attr, "data-window=\"%s\"", stats_windows[w].name);
		CHECK(count(page, attr) == 2, "one %s timeline per queue and per schedule", stats_windows[w].name);
	}
	CHECK(count(page, "<g class=\"bucket\">") == 2 * (stats_windows[0].buckets + stats_windows[1].buckets),
		  "one bucket group per bucket of every timeline");
	CHECK(count(page, "class=\"mark ran\"") == 2, "a mark for each nonzero count (got %d)",
		  count(page, "class=\"mark ran\""));
	CHECK(strstr(page, "<dd id=\"throughput\">4 jobs finished in the last hour; 0.2 per hour over 24 hours</dd>")
		  != NULL, "the throughput from the 24-hour window");
	CHECK(strstr(page, "2026-01-02T02:04:05Z to 2026-01-02T03:04:05Z: 3 ran, 0 failed") != NULL,
		  "the last bucket ends now, its title tells its counts");
	buf_free(&out);
	json_decref(doc);
	json_decref(tl);
}

int
main(void)
{
	for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
		buf out = BUF_INIT;

		html_escape(&out, escapes[i].in);
		CHECK(strcmp(buf_str(&out), escapes[i].out) == 0, "escape \"%s\": expected \"%s\", got \"%s\"",
			  escapes[i].in, escapes[i].out, buf_str(&out));
		buf_free(&out);
	}
	for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
		int h[4];

		html_stack(stacks[i].counts, 4, stacks[i].max, stacks[i].height, h);
		CHECK(memcmp(h, stacks[i].heights, sizeof h) == 0,
			  "stack %zu: expected %d %d %d %d, got %d %d %d %d", i, stacks[i].heights[0],
			  stacks[i].heights[1], stacks[i].heights[2], stacks[i].heights[3], h[0], h[1], h[2], h[3]);
	}
	check_columns(24, 480);
	check_columns(28, 480);
	check_columns(7, 100);
	check_columns(100, 100);
	check_page();
	return check_done("test_html");
}
