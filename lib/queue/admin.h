/*
 * admin — cancelling jobs by id, queued ones at once and running ones
 * through their worker's heartbeat (list, show and retry are inspect.h's).
 */
#ifndef CRONQ_ADMIN_H
#define CRONQ_ADMIN_H

#include <libpq-fe.h>
#include <stdint.h>

#include "util/err.h"

typedef enum cancel_result {
	CANCEL_DONE,				/* queued or failed: now cancelled */
	CANCEL_REQUESTED,			/* running: its worker stops it at its next heartbeat */
	CANCEL_FINISHED,			/* already succeeded, dead or cancelled: unchanged */
	CANCEL_NOT_FOUND,
	CANCEL_UNDONE,				/* would have been cancelled, but another id was not found */
} cancel_result;

/*
 * Cancel each job; result[i] says what happened to ids[i]. All or nothing:
 * when one of them does not exist (for the caller), none is cancelled
 * (each result then CANCEL_NOT_FOUND or CANCEL_UNDONE).
 */
int jobs_cancel(PGconn *conn, const int64_t *ids, int n, cancel_result *result, cq_err *err)
	__attribute__((warn_unused_result));

#endif
