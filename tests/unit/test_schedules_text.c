/*
 * Unit tests of lib/report/schedules_text: what `cronq schedule list` and
 * `cronq schedule show` print — a fitted table, the last job or "-",
 * an author's text escaped, every field of one schedule on its line, its
 * durations (seconds in the JSON) as durations.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"
#include "report/schedules_text.h"
#include "report/table.h"
#include "util/buf.h"

static void
list(buf *out, const json_t *doc, void *mode)
{
	schedules_list_text(out, doc, mode);
}

int
main(void)
{
	table_mode plain = TABLE_MODE_PLAIN;
	char *got = render_with("[{\"name\": \"nightly\", \"cron\": \"0 2 * * *\", \"timezone\": \"Europe/Paris\", \"type\": \"exec\","
					   " \"queue\": \"maint\", \"enabled\": true, \"next_run_at\": \"2026-03-09T01:00:00Z\","
					   " \"last_job_id\": 42, \"last_job_status\": \"succeeded\"},"
					   " {\"name\": \"evil\\u001b[2J\", \"cron\": \"@hourly\", \"timezone\": \"UTC\", \"type\": \"noop\","
					   " \"queue\": \"default\", \"enabled\": false, \"next_run_at\": null}]", list, &plain);

	CHECK(strcmp(got,
				 "NAME         CRON       TIMEZONE      TYPE  QUEUE    ENABLED  NEXT RUN              LAST JOB\n"
				 "nightly      0 2 * * *  Europe/Paris  exec  maint    yes      2026-03-09T01:00:00Z  42 succeeded\n"
				 "evil\\x1b[2J  @hourly    UTC           noop  default  no       -                     -\n") == 0,
		  "list:\n%s", got);
	free(got);

	got = render_doc("{\"name\": \"nightly\", \"cron\": \"0 2 * * *\", \"enabled\": true, \"payload\": {\"a\": 1},"
				 " \"last_job_id\": null, \"queue\": \"two\\nlines\"}", schedules_show_text);
	CHECK(strcmp(got,
				 "name              nightly\n"
				 "cron              0 2 * * *\n"
				 "enabled           true\n"
				 "payload           {\"a\":1}\n"
				 "last_job_id       \n"
				 "queue             two lines\n") == 0, "show:\n%s", got);
	free(got);

	/* The JSON's durations are seconds; show prints them as durations. */
	got = render_doc("{\"timeout\": 5400, \"start_deadline\": 90, \"spread\": 0.5, \"keep\": 3}",
					 schedules_show_text);
	CHECK(strcmp(got,
				 "timeout           1h30m\n"
				 "start_deadline    1m30s\n"
				 "spread            500ms\n"
				 "keep              3\n") == 0, "show, durations:\n%s", got);
	free(got);
	return check_done("schedules_text");
}
