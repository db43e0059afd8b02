/*
 * status_text — the status document of stats_status() for people, as
 * `cronq status` prints it: a summary (lag, expired leases, dead jobs, the
 * last wake, overdue schedules), then tables of jobs by queue and type, of
 * queues, of expired leases and dead jobs, of schedules, and optionally the
 * last 24 hours of each queue, one character per hour; or, as CSV, the
 * table of jobs by queue and type alone. Judges nothing.
 */
#ifndef CRONQ_STATUS_TEXT_H
#define CRONQ_STATUS_TEXT_H

#include <jansson.h>
#include <stdbool.h>

#include "report/table.h"
#include "util/buf.h"

/*
 * The newest wake (the document's "last_wake", which may be null) in one
 * line without its newline: "12s ago, at T by WORKER (3 jobs run, …)".
 */
void status_text_wake(buf *out, const json_t *wake);

/*
 * Append the text of doc to out, as mode says (coloured, fitted to its
 * width; CSV: the jobs table alone); chart: the 24-hour history too.
 */
void status_text(buf *out, const json_t *doc, bool chart, const table_mode *mode);

#endif
