/*
 * schedules_text — schedules for people, as `cronq schedule list` and
 * `cronq schedule show` print them from the JSON of schedule_list(): a
 * list as a table (lib/report/table: text or CSV), one schedule as its
 * fields. Whatever an author wrote (names, expressions, zones, queues) is
 * escaped for the terminal (not in CSV, which carries values whole).
 */
#ifndef CRONQ_SCHEDULES_TEXT_H
#define CRONQ_SCHEDULES_TEXT_H

#include <jansson.h>

#include "report/table.h"
#include "util/buf.h"

/* Append the rows of list (a schedule_list() array) to out, header first, as mode says. */
void schedules_list_text(buf *out, const json_t *list, const table_mode *mode);

/* Append one schedule's fields to out, one "key value" line each. */
void schedules_show_text(buf *out, const json_t *s);

#endif
