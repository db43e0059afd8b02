/*
 * status_html — `cronq status --html`: one self-contained HTML5 page (inline
 * CSS and SVG, no script, no external asset) from the status document of
 * stats_status() and the timelines of stats_timelines(): the summary, the
 * tables `cronq status` prints, the paused keys and limits, and a timeline
 * per queue and per schedule for each of stats_windows. Every text from the
 * database goes through html_escape. Judges nothing.
 *
 * The page's structure is an interface for whoever scrapes or styles it
 * (and for tests/integration/t_html.sh): sections with ids summary, jobs,
 * queues, queue-timelines, schedules, schedule-timelines, dead,
 * expired-leases, paused, limits; one svg.timeline per entity and window
 * (data-window), one g.bucket per bucket, one rect.mark.KIND per nonzero
 * count.
 */
#ifndef CRONQ_STATUS_HTML_H
#define CRONQ_STATUS_HTML_H

#include <jansson.h>

#include "util/buf.h"

/* Append the page for doc and tl to out. */
void status_html(buf *out, const json_t *doc, const json_t *tl);

#endif
