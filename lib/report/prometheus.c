/*
 * prometheus — see prometheus.h. Names follow Prometheus's conventions:
 * base units (seconds), no time window in a name (the window is a label),
 * _total only on counters (there are none: every number is read afresh from
 * the tables, which purge shrinks). Reads only the keys of the document it
 * needs; a key that is missing reads as 0 or "", so an older or newer
 * document still gives well-formed output.
 */
#include "report/prometheus.h"

#include <inttypes.h>
#include <stdio.h>

#include "report/stats.h"
#include "time/rfc3339.h"
#include "util/json.h"

/* One metric family's HELP and TYPE lines; its samples must follow at once. */
static void
prom_family_typed(buf *out, const char *name, const char *type, const char *help_text)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help_text, name, type);
}

/* A gauge: every family but the job durations. */
static void
prom_family(buf *out, const char *name, const char *help_text)
{
	prom_family_typed(out, name, "gauge", help_text);
}

/* A sample value that may have a fraction, shortest form ("0.25", "12"); 15 digits drop double noise. */
static void
prom_number(buf *out, double v)
{
	char text[64];

	snprintf(text, sizeof text, "%.15g", v);
	buf_puts(out, text);
}

/* A label value, escaped as the exposition format wants: \\, \" and \n. */
static void
prom_value(buf *out, const char *s)
{
	buf_putc(out, '"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_putc(out, '\\');
		if (*s == '\n')
			buf_puts(out, "\\n");
		else
			buf_putc(out, *s);
	}
	buf_putc(out, '"');
}

/*
 * A family with one sample per element of arr: labelled by its member
 * label (a string), valued by its member field (an integer).
 */
static void
prom_each(buf *out, const char *name, const char *help_text, const json_t *arr, const char *label,
		  const char *field)
{
	const json_t *o;
	size_t i;

	prom_family(out, name, help_text);
	json_array_foreach(arr, i, o) {
		buf_printf(out, "%s{%s=", name, label);
		prom_value(out, cq_json_str(o, label, ""));
		buf_printf(out, "} %" PRId64 "\n", cq_json_int(o, field));
	}
}

/* Epoch seconds of an RFC 3339 field, or -1 when absent. */
static int64_t
epoch_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	char why[128];
	int64_t t;

	return s && rfc3339_parse(s, &t, why, sizeof why) == 0 ? t : -1;
}

/* The hours of history behind the recent counts: the document's, or what the hourly arrays hold. */
static size_t
window_hours(const json_t *doc, size_t hours)
{
	json_int_t h = cq_json_int(json_object_get(doc, "durations"), "window_hours");

	return h > 0 ? (size_t) h : hours > 0 ? hours : 24;
}

/*
 * The attempts' durations as a summary per (queue, type): quantiles 0.5,
 * 0.9 and 0.99, with _sum and _count, all over the attempts that finished
 * within the window (so _sum and _count fall as attempts leave it). A
 * summary because the numbers come from the rows of a sliding window, not
 * from counters kept since a process began: quantiles over a sliding window
 * are what a summary means, while a histogram's buckets are counters that
 * rate() would misread each time an attempt left the window.
 */
static void
prom_durations(buf *out, const json_t *doc)
{
	static const struct { const char *q, *key; } quantiles[] = {
		{"0.5", "p50_seconds"}, {"0.9", "p90_seconds"}, {"0.99", "p99_seconds"},
	};
	const json_t *d = json_object_get(doc, "durations");
	size_t hours = window_hours(doc, 0), i;
	json_t *o;

	prom_family_typed(out, "cronq_job_duration_seconds", "summary", "How long attempts ran (succeeded,"
					  " failed or timed out) within the window (a label: the last hours counted), by queue"
					  " and type.");
	json_array_foreach(json_object_get(d, "runs"), i, o) {
		buf labels = BUF_INIT;

		buf_puts(&labels, "{queue=");
		prom_value(&labels, cq_json_str(o, "queue", ""));
		buf_puts(&labels, ",type=");
		prom_value(&labels, cq_json_str(o, "type", ""));
		buf_printf(&labels, ",window=\"%zuh\"", hours);
		for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++) {
			buf_printf(out, "cronq_job_duration_seconds%s,quantile=\"%s\"} ", buf_str(&labels), quantiles[k].q);
			prom_number(out, json_number_value(json_object_get(o, quantiles[k].key)));
			buf_putc(out, '\n');
		}
		buf_printf(out, "cronq_job_duration_seconds_sum%s} ", buf_str(&labels));
		prom_number(out, json_number_value(json_object_get(o, "sum_seconds")));
		buf_printf(out, "\ncronq_job_duration_seconds_count%s} %" PRId64 "\n", buf_str(&labels),
				   cq_json_int(o, "count"));
		buf_free(&labels);
	}
}

void
prometheus_render(buf *out, const json_t *doc)
{
	static const char *const statuses[] = {"queued", "blocked", "running", "succeeded", "failed", "dead", "cancelled"};
	const json_t *types = json_object_get(doc, "types");
	const json_t *queues = json_object_get(doc, "queues");
	const json_t *scheds = json_object_get(doc, "schedules");
	const json_t *wake = json_object_get(doc, "last_wake");
	char line[128];
	size_t i;
	json_t *o;

	prom_family(out, "cronq_jobs", "Jobs by queue, type and status.");
	json_array_foreach(types, i, o) {
		for (size_t k = 0; k < sizeof statuses / sizeof statuses[0]; k++) {
			buf_puts(out, "cronq_jobs{queue=");
			prom_value(out, cq_json_str(o, "queue", ""));
			buf_puts(out, ",type=");
			prom_value(out, cq_json_str(o, "type", ""));
			buf_printf(out, ",status=\"%s\"} %" PRId64 "\n", statuses[k], cq_json_int(o, statuses[k]));
		}
	}
	prom_each(out, "cronq_due_jobs", "Jobs due now (queued or failed, run_at in the past, not held"
				" by a pause), by queue.", queues, "queue", "due");
	prom_each(out, "cronq_held_jobs", "Jobs due but held by a pause (of their queue, type or limit key),"
			  " by queue.", queues, "queue", "held");
	prom_family(out, "cronq_paused", "Keys paused now (queue:NAME, type:NAME, schedule:NAME, limit keys),"
				" 1 each.");
	json_array_foreach(json_object_get(doc, "paused"), i, o) {
		buf_puts(out, "cronq_paused{key=");
		prom_value(out, cq_json_str(o, "key", ""));
		buf_puts(out, "} 1\n");
	}
	prom_each(out, "cronq_limit_running", "Jobs running now of each limited key.",
			  json_object_get(doc, "limits"), "key", "running");
	prom_each(out, "cronq_limit_room", "How many more jobs of each limited key may start now"
			  " (0: the limit is full).", json_object_get(doc, "limits"), "key", "room");
	prom_each(out, "cronq_lag_seconds", "Age of the oldest due job, by queue (0 when none is due).",
			  queues, "queue", "lag_seconds");
	prom_each(out, "cronq_oldest_running_job_age_seconds", "Age of the oldest running job's attempt, by"
			  " queue (0 when none runs).", queues, "queue", "oldest_running_seconds");
	prom_family(out, "cronq_job_runs_recent", "Attempts finished within the window (a label: the last"
				" hours counted), by queue and outcome (failed: failed, timeout or lease expired).");
	json_array_foreach(queues, i, o) {
		const json_t *runs = json_object_get(o, "runs_24h");
		static const char *const outcomes[] = {"succeeded", "failed"};

		for (size_t k = 0; k < 2; k++) {
			const json_t *hours = json_object_get(runs, outcomes[k]);
			int64_t sum = 0;

			for (size_t h = 0; h < json_array_size(hours); h++)
				sum += (int64_t) json_integer_value(json_array_get(hours, h));
			buf_puts(out, "cronq_job_runs_recent{queue=");
			prom_value(out, cq_json_str(o, "queue", ""));
			buf_printf(out, ",outcome=\"%s\",window=\"%zuh\"} %" PRId64 "\n", outcomes[k],
					   window_hours(doc, json_array_size(hours)), sum);
		}
	}
	prom_durations(out, doc);
	prom_family(out, "cronq_expired_leases", "Running jobs whose lease expired (their worker is gone).");
	buf_printf(out, "cronq_expired_leases %" PRId64 "\n", cq_json_int(json_object_get(doc, "expired_leases"), "count"));
	prom_family(out, "cronq_dead_jobs", "Dead jobs, all queues.");
	buf_printf(out, "cronq_dead_jobs %" PRId64 "\n", cq_json_int(json_object_get(doc, "dead"), "count"));
	prom_family(out, "cronq_last_wake_timestamp_seconds",
				"Start of the newest runner wake, Unix time (0 when none was recorded).");
	buf_printf(out, "cronq_last_wake_timestamp_seconds %" PRId64 "\n",
			   json_is_object(wake) ? epoch_of(wake, "started_at") : 0);
	snprintf(line, sizeof line, "Enabled schedules more than %ds past their next run.", STATS_OVERDUE_GRACE_S);
	prom_family(out, "cronq_overdue_schedules", line);
	buf_printf(out, "cronq_overdue_schedules %" PRId64 "\n", cq_json_int(doc, "overdue_schedules"));
	prom_family(out, "cronq_unplannable_schedules", "Enabled schedules a wake cannot plan (they never run).");
	buf_printf(out, "cronq_unplannable_schedules %" PRId64 "\n", cq_json_int(doc, "unplannable_schedules"));
	prom_family(out, "cronq_refused_schedules",
				"Enabled schedules whose jobs are refused since their last job (they never run).");
	buf_printf(out, "cronq_refused_schedules %" PRId64 "\n", cq_json_int(doc, "refused_schedules"));
	prom_family(out, "cronq_omitted_queues",
				"Queues left out of the per-queue series (status --limit; the totals count them).");
	buf_printf(out, "cronq_omitted_queues %" PRId64 "\n", cq_json_int(doc, "queues_omitted"));
	prom_family(out, "cronq_omitted_schedules", "Schedules left out of the listing (status --limit).");
	buf_printf(out, "cronq_omitted_schedules %" PRId64 "\n", cq_json_int(doc, "schedules_omitted"));
	prom_family(out, "cronq_omitted_paused_keys", "Paused keys left out of cronq_paused (status --limit).");
	buf_printf(out, "cronq_omitted_paused_keys %" PRId64 "\n", cq_json_int(doc, "paused_omitted"));
	prom_family(out, "cronq_schedule_enabled", "1 when the schedule is enabled.");
	json_array_foreach(scheds, i, o) {
		buf_puts(out, "cronq_schedule_enabled{schedule=");
		prom_value(out, cq_json_str(o, "name", ""));
		buf_printf(out, "} %d\n", json_is_true(json_object_get(o, "enabled")) ? 1 : 0);
	}
	prom_family(out, "cronq_schedule_next_run_timestamp_seconds", "Next run of the schedule, Unix time.");
	json_array_foreach(scheds, i, o) {
		int64_t t = epoch_of(o, "next_run_at");

		if (t < 0)
			continue;
		buf_puts(out, "cronq_schedule_next_run_timestamp_seconds{schedule=");
		prom_value(out, cq_json_str(o, "name", ""));
		buf_printf(out, "} %" PRId64 "\n", t);
	}
	prom_family(out, "cronq_schedule_overdue_seconds",
				"How far an enabled schedule's next run is in the past (0 when it is not).");
	json_array_foreach(scheds, i, o) {
		buf_puts(out, "cronq_schedule_overdue_seconds{schedule=");
		prom_value(out, cq_json_str(o, "name", ""));
		buf_printf(out, "} %" PRId64 "\n", cq_json_int(o, "overdue_seconds"));
	}
	prom_family(out, "cronq_schedule_last_job_status",
				"1 for the status of the schedule's last job (absent when it has none).");
	json_array_foreach(scheds, i, o) {
		const char *st = cq_json_str(o, "last_job_status", NULL);

		if (st == NULL)
			continue;
		buf_puts(out, "cronq_schedule_last_job_status{schedule=");
		prom_value(out, cq_json_str(o, "name", ""));
		buf_puts(out, ",status=");
		prom_value(out, st);
		buf_puts(out, "} 1\n");
	}
	prom_family(out, "cronq_status_timestamp_seconds", "When these numbers were read, Unix time (database clock).");
	buf_printf(out, "cronq_status_timestamp_seconds %" PRId64 "\n", epoch_of(doc, "generated_at"));
}
