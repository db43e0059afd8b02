/*
 * flow — flow control: pausing and resuming keys (queue:NAME, type:NAME,
 * schedule:NAME) through cronq.pause() and cronq.resume()
 * (sql/0011_pause.sql), and the pauses in force. The claim and the
 * schedules' materialisation read cronq.pauses themselves.
 */
#ifndef CRONQ_FLOW_H
#define CRONQ_FLOW_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

/* Why key is not a key of flow control (written into why), or false when it is. */
bool flow_key_invalid(const char *key, char *why, size_t len);

/*
 * Pause each of the n keys until until (text PostgreSQL reads as a
 * timestamptz; NULL: until resumed), all or none; changed[i] says whether
 * keys[i] was not paused before. A schedule that does not exist (for the
 * caller) is EX_DATAERR, a key the caller may not pause EX_CONFIG.
 */
int flow_pause(PGconn *conn, const char *const *keys, int n, const char *until, bool *changed,
			   cq_err *err) __attribute__((warn_unused_result));

/* Resume each of the n keys; changed[i] says whether keys[i] was paused. */
int flow_resume(PGconn *conn, const char *const *keys, int n, bool *changed, cq_err *err)
	__attribute__((warn_unused_result));

#endif
