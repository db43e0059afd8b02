/*
 * Unit tests of lib/report/prometheus: a status document in, the exposition
 * format out — families and their types, label escaping, sums over the
 * window, the duration summary, and
 * the samples left out when the document has no value for them.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"
#include "report/prometheus.h"
#include "report/stats.h"

static char *
render(const char *json)
{
	return render_doc(json, prometheus_render);
}

/* Whether text has line as one whole line. */
static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int
count_lines(const char *text, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);

	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		if (strncmp(p, prefix, len) == 0)
			n++;
		if (strchr(p, '\n') == NULL)
			break;
	}
	return n;
}

static void
test_full_document(void)
{
	static const char *const want[] = {
		"# TYPE cronq_jobs gauge",
		"cronq_jobs{queue=\"mail\",type=\"noop\",status=\"queued\"} 3",
		"cronq_jobs{queue=\"mail\",type=\"noop\",status=\"succeeded\"} 40",
		"cronq_jobs{queue=\"mail\",type=\"noop\",status=\"cancelled\"} 0",
		"cronq_due_jobs{queue=\"mail\"} 3",
		"cronq_lag_seconds{queue=\"mail\"} 95",
		"cronq_held_jobs{queue=\"mail\"} 2",
		"cronq_paused{key=\"type:exec\"} 1",
		"cronq_job_runs_recent{queue=\"mail\",outcome=\"succeeded\",window=\"24h\"} 6",
		"cronq_job_runs_recent{queue=\"mail\",outcome=\"failed\",window=\"24h\"} 4",
		"cronq_oldest_running_job_age_seconds{queue=\"mail\"} 310",
		"# TYPE cronq_job_duration_seconds summary",
		"cronq_job_duration_seconds{queue=\"mail\",type=\"noop\",window=\"24h\",quantile=\"0.5\"} 0.25",
		"cronq_job_duration_seconds{queue=\"mail\",type=\"noop\",window=\"24h\",quantile=\"0.9\"} 1.5",
		"cronq_job_duration_seconds{queue=\"mail\",type=\"noop\",window=\"24h\",quantile=\"0.99\"} 12",
		"cronq_job_duration_seconds_sum{queue=\"mail\",type=\"noop\",window=\"24h\"} 20.125",
		"cronq_job_duration_seconds_count{queue=\"mail\",type=\"noop\",window=\"24h\"} 10",
		"cronq_expired_leases 1",
		"cronq_dead_jobs 7",
		"cronq_overdue_schedules 2",
		"cronq_unplannable_schedules 1",
		"cronq_refused_schedules 3",
		"cronq_last_wake_timestamp_seconds 1795427970",
		"cronq_status_timestamp_seconds 1795428000",
		"cronq_schedule_enabled{schedule=\"nightly\"} 1",
		"cronq_schedule_enabled{schedule=\"off\"} 0",
		"cronq_schedule_next_run_timestamp_seconds{schedule=\"nightly\"} 1795489200",
		"cronq_schedule_last_job_status{schedule=\"nightly\",status=\"succeeded\"} 1",
		"cronq_limit_running{key=\"tenant:42\"} 2",
		"cronq_limit_room{key=\"tenant:42\"} 0",
	};
	char *t = render(
		"{\"generated_at\": \"2026-11-23T10:00:00Z\","
		" \"types\": [{\"queue\": \"mail\", \"type\": \"noop\", \"queued\": 3, \"running\": 1,"
		"   \"succeeded\": 40, \"failed\": 2, \"dead\": 1, \"cancelled\": 0}],"
		" \"paused\": [{\"key\": \"type:exec\", \"until\": null}],"
		" \"limits\": [{\"key\": \"tenant:42\", \"running\": 2, \"room\": 0}],"
		" \"queues\": [{\"queue\": \"mail\", \"due\": 3, \"held\": 2, \"lag_seconds\": 95,"
		"   \"oldest_running_seconds\": 310,"
		"   \"runs_24h\": {\"succeeded\": [1, 2, 3], \"failed\": [0, 4]}}],"
		" \"durations\": {\"window_hours\": 24, \"runs\": [{\"queue\": \"mail\", \"type\": \"noop\","
		"   \"count\": 10, \"sum_seconds\": 20.125, \"p50_seconds\": 0.25, \"p90_seconds\": 1.5,"
		"   \"p99_seconds\": 12}]},"
		" \"expired_leases\": {\"count\": 1}, \"dead\": {\"count\": 7}, \"overdue_schedules\": 2,"
		" \"unplannable_schedules\": 1, \"refused_schedules\": 3,"
		" \"last_wake\": {\"started_at\": \"2026-11-23T09:59:30Z\"},"
		" \"schedules\": ["
		"   {\"name\": \"nightly\", \"enabled\": true, \"next_run_at\": \"2026-11-24T03:00:00Z\","
		"    \"overdue_seconds\": 0, \"last_job_status\": \"succeeded\"},"
		"   {\"name\": \"off\", \"enabled\": false, \"next_run_at\": null, \"overdue_seconds\": 0}]}");

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(has_line(t, want[i]), "missing line: %s\n%s", want[i], t);
	CHECK(count_lines(t, "cronq_jobs{") == 7, "one sample per status: %d", count_lines(t, "cronq_jobs{"));
	CHECK(strstr(t, "cronq_schedule_next_run_timestamp_seconds{schedule=\"off\"}") == NULL,
		  "no next-run sample for a schedule without a next run");
	CHECK(strstr(t, "cronq_schedule_last_job_status{schedule=\"off\"") == NULL,
		  "no last-job sample for a schedule that never enqueued");
	CHECK(count_lines(t, "# HELP ") == count_lines(t, "# TYPE "), "every family has HELP and TYPE");
	CHECK(count_lines(t, "# TYPE ") == 24, "24 families: %d", count_lines(t, "# TYPE "));
	CHECK(count_lines(t, "cronq_job_duration_seconds") == 5, "3 quantiles, _sum and _count: %d",
		  count_lines(t, "cronq_job_duration_seconds"));
	CHECK(strstr(t, "_24h") == NULL, "no window in a metric name");
	CHECK(t[strlen(t) - 1] == '\n', "ends with a newline");
	free(t);
}

static void
test_escaping(void)
{
	char *t = render("{\"types\": [{\"queue\": \"a\\\"b\\\\c\\nd\", \"type\": \"noop\", \"queued\": 1}],"
					 " \"queues\": [], \"schedules\": []}");

	CHECK(has_line(t, "cronq_jobs{queue=\"a\\\"b\\\\c\\nd\",type=\"noop\",status=\"queued\"} 1"),
		  "quote, backslash and newline escaped in a label value:\n%s", t);
	free(t);
}

static void
test_empty_document(void)
{
	char *t = render("{}");
	char grace[128];

	CHECK(has_line(t, "cronq_last_wake_timestamp_seconds 0"), "no wake recorded reads 0:\n%s", t);
	CHECK(has_line(t, "cronq_dead_jobs 0"), "missing counts read 0");
	CHECK(count_lines(t, "cronq_jobs{") == 0, "no job samples without types");
	snprintf(grace, sizeof grace, "# HELP cronq_overdue_schedules Enabled schedules more than %ds past their next run.",
			 STATS_OVERDUE_GRACE_S);
	CHECK(has_line(t, grace), "the overdue grace is named in the help text");
	free(t);
}

int
main(void)
{
	test_full_document();
	test_escaping();
	test_empty_document();
	return check_done("prometheus");
}
