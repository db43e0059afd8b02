/*
 * wakes — the statements on cronq.wakes, one row per `cronq run`: the
 * wake's first statement (which also reads what the wake has to do), keep
 * the table to its newest rows, and record a wake's end.
 */
#ifndef CRONQ_WAKES_H
#define CRONQ_WAKES_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "queue/jobs.h"
#include "util/err.h"

/* A wake's identity (see wakes_start). */
typedef struct wake_args {
	const char *worker;			/* recorded in cronq.wakes */
	const char *host;
	int			pid;
	int			version;		/* the schema version this binary expects */
	bool		finish_if_idle;	/* record the wake finished when there is nothing to do */
} wake_args;

typedef struct wake_info {
	int			version;		/* the schema's version */
	int			compatible_from;	/* the oldest binary it declares compatible */
	int64_t		wake_id;		/* 0: not recorded (this binary may not use the schema) */
	bool		need_rescue;	/* some lease has expired, or a blocked job
								 * waits in cronq.settle_later */
	bool		need_expire;	/* some waiting job is past its deadline */
	bool		need_materialise;	/* some schedule is due */
	bool		finished;		/* nothing to do: the wake is recorded finished, exit 0 */
	bool		limited;		/* some limit is defined (cronq.limits): due jobs may wait for room */
} wake_info;

/*
 * A wake's first statement, one round trip: read the schema version and
 * compatible-from, learn what there is to do, and when the version is
 * a->version, or newer and compatible from a->version or earlier, record
 * the wake.
 */
int wakes_start(PGconn *conn, const wake_args *a, const claim_filter *filter, wake_info *info,
				cq_err *err) __attribute__((warn_unused_result));


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
