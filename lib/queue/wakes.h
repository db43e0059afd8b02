/*
 * wakes — the statements on cronq.wakes, one row per `cronq run`, that the
 * run loop executes after the wake's first statement: keep the table to
 * its newest rows, and record a wake's end. (The row itself is inserted by
 * jobs_wake() in queue/jobs.c: that one statement also reads what the wake
 * has to do, rescue and claim, so it stays with the jobs statements.)
 */
#ifndef CRONQ_WAKES_H
#define CRONQ_WAKES_H

#include <libpq-fe.h>
#include <stdint.h>

#include "util/err.h"

/* Delete the wakes older than the kept newest, counting back from wake_id. */
int wakes_trim(PGconn *conn, int64_t wake_id, int kept, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Record the end of wake_id (when its first statement could not record it
 * finished): jobs run, jobs failed and the exit status.
 */
int wakes_finish(PGconn *conn, int64_t wake_id, int64_t run, int64_t failed, int exit_status,
				 cq_err *err) __attribute__((warn_unused_result));

#endif
