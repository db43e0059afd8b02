/*
 * stats — what `cronq status` and `cronq check` read about the whole queue:
 * counts, lag, expired leases, dead jobs, schedules, the newest wake and the
 * last 24 hours. Reads only; never changes a row, never formats for people.
 *
 * Ownership: stats_status() returns a new jansson reference the caller
 * json_decref()s. stats_health() fills a caller-owned struct.
 */
#ifndef CRONQ_STATS_H
#define CRONQ_STATS_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched/schedule.h"
#include "util/err.h"

/*
 * status marks an enabled schedule "overdue" when its next run is more than
 * this far in the past: a runner woken every minute enqueues an occurrence
 * within a minute, and this is when `cronq run` calls it missed (catchup
 * "skip"): one number for both.
 */
#define STATS_OVERDUE_GRACE_S SCHEDULE_SKIP_TOLERANCE_S

/* Hours of history in the "runs_24h" arrays of stats_status(). */
#define STATS_HISTORY_HOURS 24

/*
 * The most queues and schedules stats_status() lists unless told otherwise
 * (the counts overall are of all): one role's thousands of queue names made
 * the page take minutes and the metrics break every scrape's sample limit.
 */
#define STATS_LIST_MAX 200

/*
 * Everything `cronq status` shows, as one JSON object built by PostgreSQL in
 * one statement (the keys are documented in cronq(1) and docs/commands.md; they are an
 * interface: add keys freely, rename none). Counts over the whole jobs
 * table: an operator's command, not one to run every few seconds. At most
 * list_max queues (with their types and durations) and schedules are listed
 * (0: all), those in trouble first; "queues_omitted" and
 * "schedules_omitted" say how many were not.
 */
json_t *stats_status(PGconn *conn, int list_max, cq_err *err) __attribute__((warn_unused_result));

/*
 * The windows of the timelines of `cronq status --html`: each a number of
 * buckets of a length, a multiple of STATS_TIMELINE_STEP_S (the period the
 * database counts events by).
 */
typedef struct stats_window {
	const char *name;			/* "24h", "7d": the page's data-window */
	const char *title;			/* for people */
	int			buckets;
	int			bucket_seconds;
} stats_window;

#define STATS_WINDOWS 2
#define STATS_TIMELINE_STEP_S 3600
extern const stats_window stats_windows[STATS_WINDOWS];

/* The kinds of marks of a timeline bucket, in the order they stack. */
#define STATS_MARKS 4
extern const char *const stats_marks[STATS_MARKS];	/* ran, failed, skipped, missed */

/*
 * The timelines of every queue and schedule, for stats_windows, as a new
 * JSON object (the caller json_decref()s):
 *   {"now": epoch seconds,
 *    "queues": [{"name": Q, "windows": [W, ...]}, ...],
 *    "schedules": [{"name": S, "queue": Q, "windows": [W, ...]}, ...]}
 * sorted by name, one W per stats_windows entry: {"ran": [...], "failed":
 * [...], "skipped": [...], "missed": [...], "finished": [...]}, counts per
 * bucket, oldest first, the last bucket ending now. ran: jobs succeeded;
 * failed: attempts failed, timed out or lease-expired; skipped: ledger
 * decisions other than enqueued; missed: fire times no runner woke for
 * within STATS_OVERDUE_GRACE_S (a gap between the wakes kept), computed
 * here from each enabled schedule's expression; finished: jobs succeeded,
 * dead or cancelled (throughput). A queue's skipped and missed are its
 * schedules'. The queues and schedules are those status lists ("queues"
 * and "schedules" of stats_status()), and the queues of those schedules.
 */
json_t *stats_timelines(PGconn *conn, const json_t *status, cq_err *err) __attribute__((warn_unused_result));

/* The few numbers `cronq check` judges, read by cheap queries. */
typedef struct stats_health {
	int64_t		lag_ms;			/* age of the oldest due job; 0 when none is due */
	int64_t		due;			/* jobs due now (queued or failed, run_at <= now()) */
	int64_t		dead;
	int64_t		failed;			/* failed, waiting for a retry */
	int64_t		stuck;			/* running jobs whose lease expired */
	bool		woke;			/* some runner recorded a wake */
	int64_t		silence_ms;		/* since the newest wake started (when woke) */
	int64_t		overdue_ms;		/* lateness of the most overdue enabled schedule; 0 if none */
	char		overdue_name[256];	/* its name, "" when none */
	int64_t		unplannable;	/* enabled schedules a wake cannot plan */
	char		unplannable_name[512];	/* "NAME: why" of the first, "" when none */
	int64_t		paused;			/* keys paused now (their jobs count in neither lag nor due) */
	char		paused_key[256];	/* the first of them, "" when none */
	int64_t		full;			/* limits with no room now (their jobs wait, and count in lag) */
	char		full_key[256];	/* the first of them, "" when none */
	int64_t		refused;		/* enabled schedules whose jobs are refused */
	char		refused_name[512];	/* "NAME: why" of the first, "" when none */
} stats_health;

/*
 * Fill h in two round trips. Each part of the first reads a partial index
 * (jobs_due, jobs_leases, jobs_dead, schedules_due) or the newest wake by
 * id; the second reads the enabled schedules, to check each expression
 * and zone as a wake would.
 */
int stats_health_read(PGconn *conn, stats_health *h, cq_err *err) __attribute__((warn_unused_result));

#endif
