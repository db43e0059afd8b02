/*
 * backfill — one job per step of a time range (`cronq backfill TYPE`), or
 * one per occurrence of a schedule (`cronq backfill --schedule`). The step
 * arithmetic and the {date}/{ts} templating are pure functions; the writes
 * go in batches through one transaction, so a backfill is all or nothing.
 * Prints nothing: dry-run lines and progress go to caller callbacks.
 *
 * Ownership: backfill_occurrences() returns an array the caller free()s.
 */
#ifndef CRONQ_BACKFILL_H
#define CRONQ_BACKFILL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "queue/enqueue.h"
#include "sched/fire.h"
#include "util/buf.h"
#include "util/err.h"

/* What to say to someone whose key or payload template was refused. */
#define TEMPLATE_HINT "A template may hold {date} (2026-03-08) and {ts} (2026-03-08T10:00:00Z), the time of each step in UTC; {{word} writes {word}."

/* The most jobs one backfill may enqueue. */
#define BACKFILL_MAX_STEPS 100000
/* Jobs per INSERT (or per cronq.materialise() call). */
#define BACKFILL_BATCH 1000

typedef struct backfill_req {
	const char *type;
	const char *payload;		/* JSON template; NULL means {} */
	const char *key;			/* key template; NULL means backfill:TYPE:{ts} */
	job_opts	opts;
	int64_t		from;			/* first step, epoch seconds */
	int64_t		step;			/* seconds, > 0 */
	int64_t		count;			/* steps: from, from + step, … (backfill_count) */
} backfill_req;

/*
 * Expand the placeholders of a template for instant t (epoch seconds, UTC):
 * {date} → 2026-03-08, {ts} → 2026-03-08T10:00:00Z, {{word} → {word}
 * (a literal); any other {word} (letters, digits, _) is refused; every
 * other character is copied. Appends to out; 0, or -1 with the reason.
 */
int backfill_expand(const char *tmpl, int64_t t, buf *out, char *err, size_t errlen);

/*
 * The same for a JSON text already known to be valid: placeholders are
 * expanded inside string values (at any depth), never in object keys, and
 * everything else, numbers included, is copied byte for byte.
 */
int backfill_expand_json(const char *json, int64_t t, buf *out, char *err, size_t errlen);

/* Does a template use {name}? (After a successful check; escapes are not uses.) */
bool backfill_uses(const char *tmpl, const char *name);

/*
 * How many steps from `from` to `to` (epoch seconds, both included) with
 * step seconds: 0 and *count, or EX_USAGE when to is before from or there
 * would be more than max steps.
 */
int backfill_count(int64_t from, int64_t to, int64_t step, int64_t max, int64_t *count,
				   cq_err *err) __attribute__((warn_unused_result));

/*
 * Check a request without the database, before anything is written: the
 * payload's JSON, the templates, the task type, that the key differs from
 * step to step, and the first step's job (payload, queue, numbers) as
 * enqueue would. With count 0 (the range not read yet) the step checks are
 * left out, and so is the first job when its payload depends on the time.
 * 0, or EX_DATAERR.
 */
int backfill_check(const backfill_req *req, cq_err *err) __attribute__((warn_unused_result));

/*
 * Step i's key and payload, expanded and checked as enqueue checks a job
 * (payloads whose strings became invalid are refused, the message then
 * naming the step's time). Appends to key and payload; 0 or EX_DATAERR.
 */
int backfill_job(const backfill_req *req, int64_t i, buf *key, buf *payload, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * The due instants of a schedule (its fire clock: expression, zone,
 * anchor, spread) from `from` to `to` (both included), ascending, in a new
 * array *out (NULL when none). EX_DATAERR for a bad expression or zone,
 * EX_USAGE for more than max.
 */
int backfill_occurrences(const fire_def *times, int64_t from, int64_t to,
						 int64_t max, int64_t **out, int64_t *n, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * A time in any form PostgreSQL's timestamptz input takes (no zone: UTC),
 * read by the database, to whole epoch seconds (fractions dropped).
 * EX_DATAERR with the server's message for a bad or infinite time.
 */
int backfill_parse_time(PGconn *conn, const char *text, int64_t *t, cq_err *err)
	__attribute__((warn_unused_result));

/* A dry run reports each job that would be enqueued: its time, key and payload. */
typedef void (*backfill_line_fn) (int64_t t, const char *key, const char *payload, void *arg);
/* Progress of a long backfill: jobs handled so far, of total. */
typedef void (*backfill_progress_fn) (int64_t done, int64_t total);

typedef struct backfill_out {
	int64_t		created;		/* jobs written (or, dry, that would be) */
	int64_t		existing;		/* steps skipped: their key exists */
	int64_t		then_id;		/* the --then job, 0: none (or dry) */
	bool		then_existed;	/* its key was held: nothing new written */
} backfill_out;

/*
 * backfill --then TYPE [PAYLOAD]: one job that depends on every job of
 * the backfill (new or already there), written in its transaction, key
 * backfill:then:WHAT:FROM..TO:TYPE (WHAT the backfill's type, or
 * schedule:NAME), so that running the same backfill again writes it once.
 */
typedef struct backfill_then {
	const char *type;			/* NULL: no --then */
	const char *payload;		/* JSON text; NULL: {} */
	job_opts	opts;			/* the backfill's queue, priority… */
	int64_t		from, to;		/* the backfill's range (backfill_perform sets them) */
} backfill_then;

/*
 * Enqueue every step of req in one transaction (batches of BACKFILL_BATCH
 * rows, due now), skipping steps whose key exists. With dry set nothing is
 * written: line() is called for each job that would be enqueued.
 */
int backfill_run(PGconn *conn, const backfill_req *req, const backfill_then *then, bool dry,
				 backfill_line_fn line, backfill_progress_fn progress, void *arg, backfill_out *out,
				 cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Enqueue the occurrences fires[0..n) of schedule name through
 * cronq.materialise() (the schedule's job fields, key schedule:NAME:TIME,
 * scheduled_for and run_at the fire time, its author as enqueued_by), in
 * one transaction, skipping occurrences already enqueued. The schedule's
 * next run is left alone. Dry: line() per occurrence that would be enqueued.
 * EX_DATAERR when the schedule does not exist.
 */
int backfill_schedule_run(PGconn *conn, const char *name, const int64_t *fires, int64_t n,
						  const backfill_then *then, bool dry, backfill_line_fn line,
						  backfill_progress_fn progress, void *arg, backfill_out *out, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Read a schedule's cron expression and zone (each a new string to free())
 * and its times: *times points at them, and at name; *now is the
 * database's clock (Unix seconds).
 */
int backfill_schedule_get(PGconn *conn, const char *name, char **cron, char **zone, fire_def *times,
						  int64_t *now, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * A whole backfill, as `cronq backfill` asks for it: read the range from
 * the texts from and to (backfill_parse_time; the error names --from or
 * --to, EX_USAGE when to is before from), then enqueue (or, dry, report)
 * one job per step of req (its type, templates, options and step; from and
 * count are set here) or, when schedule is not NULL, one per occurrence of
 * that schedule in the range; then the then job, when then->type is set.
 * req has passed backfill_check already.
 */
int backfill_perform(PGconn *conn, backfill_req *req, const backfill_then *then,
					 const char *schedule, const char *from, const char *to, bool dry,
					 backfill_line_fn line, backfill_progress_fn progress, void *arg,
					 backfill_out *out, cq_err *err)
	__attribute__((warn_unused_result));

#endif
