/* schedules_text — see schedules_text.h. */
#include "report/schedules_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/json.h"
#include "util/utf8.h"

void
schedules_show_text(buf *out, const json_t *s)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *) s, key, v) {
		if (strcmp(key, "next_fire_times") == 0 && json_is_array(v)) {
			size_t i;
			json_t *f;

			/* One line each: UTC, then the schedule's own clock. */
			json_array_foreach(v, i, f)
				buf_printf(out, "%-17s %s  %s\n", "next_fire_time", cq_json_str(f, "utc", "-"),
						   cq_json_str(f, "local", "-"));
			continue;
		}
		/* The JSON's durations are seconds; people read "1h30m". */
		if (json_is_number(v) && (strcmp(key, "timeout") == 0 || strcmp(key, "start_deadline") == 0 ||
								  strcmp(key, "spread") == 0)) {
			char d[64];

			duration_format((int64_t) (json_number_value(v) * 1000 + 0.5), d, sizeof d);
			buf_printf(out, "%-17s %s\n", key, d);
			continue;
		}
		char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		char *clean = utf8_printable(json_is_null(v) ? "" : text ? text : json_string_value(v), false);

		buf_printf(out, "%-17s %s\n", key, clean);
		free(clean);
		free(text);
	}
}

void
schedules_list_text(buf *out, const json_t *list, const table_mode *mode)
{
	static const char *const head[] = {"NAME", "CRON", "TIMEZONE", "TYPE", "QUEUE", "ENABLED", "NEXT RUN",
									   "LAST JOB"};
	static const char *const names[] = {"name", "cron", "timezone", "type", "queue"};
	table t = {.ncols = 8, .head = head, .shrink = 0x1F};
	size_t i;
	json_t *s;

	json_array_foreach(list, i, s) {
		json_t *last = json_object_get(s, "last_job_id");

		for (size_t c = 0; c < sizeof names / sizeof names[0]; c++)
			table_cell(&t, "%s", cq_json_str(s, names[c], "-"));
		table_cell(&t, "%s", json_is_true(json_object_get(s, "enabled")) ? "yes" : "no");
		if (!json_is_true(json_object_get(s, "enabled")))
			table_style(&t, TERM_DIM);
		table_cell(&t, "%s", cq_json_str(s, "next_run_at", "-"));
		if (json_is_integer(last)) {
			table_cell(&t, "%" JSON_INTEGER_FORMAT " %s", json_integer_value(last),
					   cq_json_str(s, "last_job_status", "-"));
			table_style(&t, table_status_style(cq_json_str(s, "last_job_status", "")));
		} else
			table_cell(&t, "-");
	}
	table_flush(&t, out, mode);
}
