/*
 * schedule — named schedules in cronq.schedules: checking and storing them,
 * listing them, and materialising their due occurrences into jobs exactly
 * once, however many runners wake at the same time. Knows the schema;
 * the cron arithmetic is cron.c's and tz.c's.
 *
 * Ownership: schedule_list() and schedule_get() return new jansson
 * references the caller json_decref()s.
 */
#ifndef CRONQ_SCHEDULE_H
#define CRONQ_SCHEDULE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "queue/enqueue.h"
#include "sched/fire.h"
#include "util/err.h"

typedef struct schedule_def {
	const char *name;
	const char *cron;
	const char *timezone;		/* NULL: UTC */
	const char *type;
	const char *payload;		/* JSON text; NULL: {} */
	job_opts	opts;			/* of its jobs */
	const char *catchup;		/* NULL: latest */
	const char *overlap;		/* NULL: skip */
	bool		disabled;
	int64_t		start_deadline_ms;	/* 0: none; else each job expires this long after its fire time */
	bool		has_anchor;		/* "@every" only: count periods from anchor, not the epoch */
	int64_t		anchor;			/* epoch seconds */
	int64_t		spread_ms;		/* 0: none; else whole seconds up to FIRE_SPREAD_MAX */
	const char *history;		/* its jobs' history policy, all or errors; NULL: all */
	int			keep;			/* 0: none; else purge keeps its newest keep finished jobs */
	const char *hooks;			/* its jobs' hooks, a JSON object's text (queue/compose.h); NULL: none */
} schedule_def;

/* How many missed occurrences catchup "all" enqueues at most (the newest). */
#define SCHEDULE_CATCHUP_CAP 100
/* The largest --keep. */
#define SCHEDULE_MAX_KEEP 10000
/* catchup "skip": an occurrence later than this is missed, not enqueued. */
#define SCHEDULE_SKIP_TOLERANCE_S 120

/* Validate without the database: name, expression, zone, task, payload, policies, keep. */
int schedule_check(const schedule_def *d, cq_err *err) __attribute__((warn_unused_result));

/*
 * Store a schedule (replacing one of that name when replace is set) with
 * next_run_at = its first occurrence after the database's now(). With
 * replace, *replaced (when not NULL) says whether one was replaced.
 */
int schedule_add(PGconn *conn, const schedule_def *d, bool replace, bool *replaced, cq_err *err)
	__attribute__((warn_unused_result));
int schedule_remove(PGconn *conn, const char *name, cq_err *err) __attribute__((warn_unused_result));
/*
 * Enabling leaves next_run_at: the next wake skips the fire times of the
 * disabled spell (cronq.schedules.disabled_from/until), recording them in
 * the ledger as "disabled", and catches up none of them. *changed (when
 * not NULL) says whether it was not already so.
 */
int schedule_set_enabled(PGconn *conn, const char *name, bool enabled, bool *changed, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * `cronq schedule run`: one job of schedule name now (cronq.run_schedule()),
 * its id in *job_id; *again when that job was enqueued by an earlier run
 * of the same second (the manual key's), not by this one. EX_DATAERR when
 * the caller sees no such schedule; EX_TEMPFAIL when overlap skip refuses
 * (its last job unfinished) and not force.
 */
int schedule_run(PGconn *conn, const char *name, bool force, int64_t *job_id, bool *again, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * The newest due instants of times (zone, anchor and spread applied) at or
 * before t (at most five years back), at most cap of them, ascending, into
 * out; *n gets how many. EX_DATAERR when the expression or the zone fails.
 */
int schedule_fires_upto(const fire_def *times, int64_t t, int cap, int64_t *out, int *n, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * The newest due instant of times at or before t (at most five years back),
 * in *fire; EX_DATAERR when the expression, the zone or the search fails.
 */
int schedule_fire_at_or_before(const fire_def *times, int64_t t, int64_t *fire, cq_err *err)
	__attribute__((warn_unused_result));

/* A name a schedule may have: 1 to 200 letters, digits and _.:@- */
bool schedule_name_valid(const char *name);

/* How many next fire times schedule_list() gives one schedule. */
#define SCHEDULE_SHOW_NEXT 3

/*
 * All schedules (an array of objects, by name), or one (NULL + err if
 * none), which then has "next_fire_times" too: schedule_upcoming's, each
 * {"utc", "local"} (RFC 3339 on its zone's clock); null when this host
 * cannot plan it. Durations (timeout, start_deadline, spread) are seconds,
 * times RFC 3339 UTC.
 */
json_t *schedule_list(PGconn *conn, const char *name, cq_err *err);

/*
 * The next count due instants (epoch seconds, ascending) of stored schedule
 * name after the database's now: its zone, anchor and spread applied, and
 * those inside its pause left out (none while it is paused for good or
 * disabled). A new array *times of *n the caller free()s; *zone gets its
 * zone's name, to free() too; *ended, when fewer than count came, why
 * ("is disabled: …", to follow the schedule's name), else NULL. Either may
 * be NULL when not wanted.
 */
int schedule_upcoming(PGconn *conn, const char *name, int64_t count, int64_t **times, int64_t *n,
					  char **zone, const char **ended, cq_err *err) __attribute__((warn_unused_result));

/*
 * Checks stored schedules the way a wake plans them, for status and check:
 * a row written behind the CLI's back, or a zone gone from this host's tz
 * database, is reported rather than silently never run. Zones are opened
 * once per checker.
 */
typedef struct schedule_checker schedule_checker;
schedule_checker *schedule_checker_new(void);
/* NULL when cron fires in zone; else why not (valid until the next call). */
const char *schedule_checker_why(schedule_checker *c, const char *cron, const char *zone);
void schedule_checker_free(schedule_checker *c);

/*
 * Enqueue the due occurrences of every enabled schedule (catchup and
 * overlap policies applied) and move each on to its next occurrence.
 * *enqueued and *skipped count occurrences. A schedule that cannot run (a
 * bad expression or zone, or jobs the database refuses: a payload the
 * rules no longer accept, an author who lost a privilege) affects only
 * itself: it is logged as a warning, enqueues nothing, and is looked at
 * again an hour later (its first occurrence an hour or more on); the call
 * still succeeds. Errors are the database's or the session's. stop (NULL:
 * none) is asked between batches, each a transaction of its own: once it
 * says so, the schedules not reached stay due, for the next wake.
 */
int schedule_materialise(PGconn *conn, bool (*stop)(void), int *enqueued, int *skipped, cq_err *err)
	__attribute__((warn_unused_result));

#endif
