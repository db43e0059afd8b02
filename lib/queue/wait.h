/*
 * wait — "cronq wait": poll jobs until each is finished (succeeded, dead
 * or cancelled; failed means a retry is coming, and blocked or queued or
 * running are on their way). One indexed query per poll for the jobs still
 * pending, the polls spaced by wait_next_delay_ms(). Reading needs only
 * SELECT on cronq.jobs; row-level security hides another role's jobs from
 * a cronq_user, for which they do not exist.
 *
 * Ownership: the caller owns the wait_job array; the JSON text of
 * wait_report_json() is a new string the caller free()s.
 */
#ifndef CRONQ_WAIT_H
#define CRONQ_WAIT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The first pause between two polls, and the longest. */
#define WAIT_FIRST_DELAY_MS 50
#define WAIT_MAX_DELAY_MS 2000

typedef struct wait_job {
	int64_t		id;
	char		status[16];		/* as cronq.jobs.status; "" when not visible */
	bool		finished;
} wait_job;

/* Whether a job in status (cronq.jobs.status) is finished. */
bool wait_status_finished(const char *status);

/* The pause after one of prev_ms (0 before the first): doubling from
 * WAIT_FIRST_DELAY_MS up to WAIT_MAX_DELAY_MS. */
int64_t wait_next_delay_ms(int64_t prev_ms);

/*
 * Read the status of every job of jobs[] not yet finished, in one
 * statement. A job that is not visible (it does not exist, another
 * role's, or purged) gets status "".
 */
int wait_poll(PGconn *conn, wait_job *jobs, int n, cq_err *err) __attribute__((warn_unused_result));

/* The jobs not finished, as "3 (queued), 4 (running)", the first 20 named. */
void wait_pending_text(const wait_job *jobs, int n, char *out, size_t len);

/*
 * Poll until every job is finished, sleeping between polls, or until
 * deadline_ms (mono_ms(); 0: none) has passed: then EX_TEMPFAIL with the
 * pending jobs named. EX_DATAERR when a job stops being visible while
 * pending.
 */
int wait_until(PGconn *conn, wait_job *jobs, int n, int64_t deadline_ms, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * One JSON object per job of jobs[], one per line in their order: id,
 * status, error_code, last_error, result (null when absent), as the
 * database prints them.
 */
int wait_report_json(PGconn *conn, const wait_job *jobs, int n, char **json, cq_err *err)
	__attribute__((warn_unused_result));

#endif
