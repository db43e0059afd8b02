/*
 * jobs_text — jobs for people, as `cronq list` and `cronq show` print them
 * from the JSON of lib/queue/inspect: a list as a table (lib/report/table:
 * text or CSV, each error on its line, clipped in text), one job as its fields then every attempt
 * (outcome, error, duration, the tails of its output and stderr, its result). Whatever a job or
 * its author wrote is escaped for the terminal.
 */
#ifndef CRONQ_JOBS_TEXT_H
#define CRONQ_JOBS_TEXT_H

#include <jansson.h>

#include "report/table.h"
#include "util/buf.h"

/* Append the rows of list (an inspect_list() array) to out, header first, as mode says. */
void jobs_list_text(buf *out, const json_t *list, const table_mode *mode);

/* Append one job (an inspect_show() object, its attempts in "runs") to out. */
void jobs_show_text(buf *out, const json_t *job);

#endif
