/*
 * flow — flow control: pausing and resuming keys (queue:NAME, type:NAME,
 * schedule:NAME, a job's own limit key PREFIX:NAME) through cronq.pause()
 * and cronq.resume() (sql/0011_pause.sql), and limiting them through
 * cronq.set_limit() and cronq.clear_limit() (sql/0012_limits.sql). The
 * claim and the schedules' materialisation read cronq.pauses and
 * cronq.limits themselves.
 */
#ifndef CRONQ_FLOW_H
#define CRONQ_FLOW_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Why key is not a key of flow control (written into why), or false when it is. */
bool flow_key_invalid(const char *key, char *why, size_t len);

/* Why key is not a job's own limit key (queue:, type: and schedule: are not), or false. */
bool flow_limit_key_invalid(const char *key, char *why, size_t len);

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

/*
 * Set key's limits: at most max_running of its jobs at once, at most rate
 * starts in any window of per_ms (0: that limit as it was). A key the
 * caller may not limit is EX_CONFIG, a key's first limit without either
 * EX_DATAERR.
 */
int flow_set_limit(PGconn *conn, const char *key, int64_t max_running, int64_t rate,
				   int64_t per_ms, cq_err *err) __attribute__((warn_unused_result));

/* Remove key's limits; *had says whether it had some. */
int flow_clear_limit(PGconn *conn, const char *key, bool *had, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * The limits (key's, or every one when key is NULL) as a JSON array of
 * objects: key, max_running, rate, per_seconds, running, started, room,
 * full, set_by, set_at (cronq.limits_now). The caller json_decref()s *out.
 */
int flow_limits(PGconn *conn, const char *key, json_t **out, cq_err *err)
	__attribute__((warn_unused_result));

#endif
