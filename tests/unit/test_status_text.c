/*
 * Unit tests of lib/report/status_text: a status document in, the text of
 * `cronq status` out — the summary lines, fitted tables with counts
 * right-aligned, a dead job's error clipped and escaped, a schedule that
 * cannot run, the empty cases, and the 24-hour chart only when asked;
 * fitted to a narrow width, coloured, and as CSV (the jobs table alone).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"
#include "report/status_text.h"
#include "util/term.h"

static void
call(buf *out, const json_t *doc, void *chart)
{
	table_mode plain = TABLE_MODE_PLAIN;

	status_text(out, doc, *(bool *) chart, &plain);
}

static void
call_mode(buf *out, const json_t *doc, void *mode)
{
	status_text(out, doc, true, mode);
}

static char *
render(const char *json, bool chart)
{
	return render_with(json, call, &chart);
}

static const char doc[] =
	"{\"due\": 3, \"lag_seconds\": 90, \"oldest_due_at\": \"2026-03-08T10:00:00Z\","
	" \"expired_leases\": {\"count\": 1, \"jobs\": [{\"id\": 7, \"queue\": \"mail\", \"type\": \"sleep\","
	"   \"attempts\": 2, \"max_attempts\": 10, \"locked_by\": \"host:42\", \"expired_seconds\": 65}]},"
	" \"dead\": {\"count\": 2, \"jobs\": [{\"id\": 9, \"queue\": \"default\", \"type\": \"exec\", \"attempts\": 10,"
	"   \"finished_at\": \"2026-03-08T09:00:00Z\", \"error_code\": \"exit\", \"last_error\": \"boom\\u001b[2J\\nmore\"}]},"
	" \"last_wake\": {\"seconds_ago\": 12, \"started_at\": \"2026-03-08T10:01:00Z\", \"worker\": \"host:1\\nx\\u001b\","
	"   \"exit_status\": 0, \"jobs_run\": 4, \"jobs_failed\": 1},"
	" \"types\": [{\"queue\": \"default\", \"type\": \"exec\", \"queued\": 3, \"running\": 0, \"succeeded\": 120,"
	"   \"failed\": 0, \"dead\": 2, \"cancelled\": 0}],"
	" \"queues\": [{\"queue\": \"default\", \"due\": 3, \"lag_seconds\": 90, \"oldest_due_at\": \"2026-03-08T10:00:00Z\","
	"   \"expired_leases\": 1, \"runs_24h\": {\"succeeded\": [0, 1, 2], \"failed\": [0, 0, 1]}}],"
	" \"schedules\": [{\"name\": \"nightly\", \"cron\": \"0 2 * * *\", \"timezone\": \"UTC\", \"enabled\": true,"
	"   \"next_run_at\": \"2026-03-09T02:00:00Z\", \"overdue\": true, \"overdue_seconds\": 600,"
	"   \"last_enqueued_at\": null, \"error\": \"expected 5 fields,\\ngot 4\\u001b[2J\"}]}";

static const char want[] =
	"Lag:                1m30s (3 jobs due, the oldest since 2026-03-08T10:00:00Z)\n"
	"Expired leases:     1\n"
	"Dead jobs:          2\n"
	"Last wake:          12s ago, at 2026-03-08T10:01:00Z by host:1 x\\x1b (4 jobs run, 1 failed, exit 0)\n"
	"Overdue schedules:  nightly (10m late)\n"
	"\n"
	"Jobs\n"
	"QUEUE    TYPE  QUEUED  BLOCKED  RUNNING  SUCCEEDED  FAILED  DEAD  CANCELLED\n"
	"default  exec       3        0        0        120       0     2          0\n"
	"\n"
	"Queues\n"
	"QUEUE    DUE  LAG    OLDEST DUE            EXPIRED LEASES\n"
	"default    3  1m30s  2026-03-08T10:00:00Z               1\n"
	"\n"
	"Expired leases (1; the next \"cronq run\" rescues them)\n"
	"ID  QUEUE  TYPE   ATTEMPT  LOCKED BY  EXPIRED\n"
	" 7  mail   sleep  2/10     host:42    1m5s ago\n"
	"\n"
	"Dead jobs (2; the newest 1)\n"
	"ID  QUEUE    TYPE  ATTEMPTS  FINISHED              ERROR\n"
	" 9  default  exec        10  2026-03-08T09:00:00Z  exit: boom\\x1b[2J...\n"
	"\n"
	"Schedules\n"
	"NAME     CRON       TIMEZONE  ENABLED  NEXT RUN              OVERDUE  LAST ENQUEUED  LAST JOB\n"
	"nightly  0 2 * * *  UTC       yes      2026-03-09T02:00:00Z  10m      -              -\n"
	"schedule nightly cannot run: expected 5 fields, got 4\\x1b[2J\n";

static const char chart[] =
	"\n"
	"Last 24 hours (one character per hour, oldest first: . none finished, o all succeeded, x some failed)\n"
	"QUEUE    -24h                 now\n"
	"default  .ox\n";

int
main(void)
{
	char *got = render(doc, false), *with;
	size_t n = strlen(want);

	CHECK(strcmp(got, want) == 0, "status text:\n%s\n--- expected:\n%s", got, want);
	with = render(doc, true);
	CHECK(strncmp(with, want, n) == 0 && strcmp(with + (strlen(with) >= n ? n : 0), chart) == 0,
		  "with the chart:\n%s", with);
	free(got);
	free(with);

	got = render("{\"due\": 0, \"expired_leases\": {\"count\": 0}, \"dead\": {\"count\": 0},"
				 " \"types\": [], \"queues\": [], \"schedules\": []}", true);
	CHECK(strcmp(got,
				 "Lag:                0s (nothing due)\n"
				 "Expired leases:     0\n"
				 "Dead jobs:          0\n"
				 "Last wake:          never (no \"cronq run\" has recorded a wake)\n"
				 "Overdue schedules:  none\n"
				 "\n"
				 "Jobs: none\n"
				 "\n"
				 "Schedules: none\n") == 0, "an empty queue:\n%s", got);
	free(got);

	{
		table_mode narrow = {TABLE_TEXT, true, 40}, csv = {TABLE_CSV, true, 40};
		char *line, *save = NULL;
		bool within = true;

		got = render_with(doc, call_mode, &narrow);
		with = strdup(got);
		for (line = strtok_r(with, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (term_width(line) > 40)
				within = false;
		CHECK(within, "every line within 40 columns:\n%s", got);
		CHECK(strstr(got, "Dead jobs:          \033[31m2\033[0m\n") && strstr(got, "\033[1mJobs\033[0m\n") &&
			  strstr(got, "\033[32mo\033[0m\033[31mx\033[0m"), "coloured: the dead count, titles, the chart:\n%s", got);
		free(with);
		free(got);
		got = render_with(doc, call_mode, &csv);
		CHECK(strcmp(got, "queue,type,queued,blocked,running,succeeded,failed,dead,cancelled\r\n"
					 "default,exec,3,0,0,120,0,2,0\r\n") == 0, "as CSV, the jobs table alone:\n%s", got);
		free(got);
	}
	return check_done("status_text");
}
