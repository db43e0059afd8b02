/*
 * why — `cronq why NAME [--at TIME]`: did a schedule's occurrence run, and
 * if not, why. Reads the occurrence ledger (cronq.occurrences), the job,
 * the schedule's disabled spell and pause, and cronq.wakes, as the caller
 * may see them (row-level security: its own schedules).
 *
 * Ownership: schedule_why() returns a new jansson object the caller
 * json_decref()s.
 */
#ifndef CRONQ_WHY_H
#define CRONQ_WHY_H

#include <jansson.h>
#include <libpq-fe.h>

#include "util/err.h"

/*
 * The answer for schedule name's occurrence at or before at (any
 * timestamptz text; NULL: now): an object with "schedule", "fire_at"
 * (RFC 3339 UTC), "zone", "fire_local" (the wall time there), "decision"
 * (the ledger's: enqueued, expired, overlap, catchup, paused, disabled,
 * refused; or, with no ledger row: not_due, backfill, not_created,
 * disabled, paused, waiting, no_wake, unrecorded), "reason" (one line for
 * a person), "job_id" and "job_status" when a job is involved, and
 * "decided_at" when the ledger has it. NULL and err (65: no such schedule
 * or a bad time) otherwise.
 */
json_t *schedule_why(PGconn *conn, const char *name, const char *at, cq_err *err);

/* One line: "NAME FIRE_AT (LOCAL ZONE): REASON". */
void schedule_why_text(const json_t *why, char *out, size_t len);

#endif
