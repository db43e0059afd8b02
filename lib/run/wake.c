/*
 * wake — the lifecycle of a wake, one `cronq run`: its first statement
 * records it and tells what there is to do (queue/wakes.c, wakes_start), the
 * schema's version is checked, old wakes are trimmed (queue/wakes.c), the
 * due occurrences of schedules are enqueued, expired leases rescued and
 * waiting jobs past their deadline cancelled;
 * after the workers, its end is recorded with the run's counts.
 */
#include <inttypes.h>
#include <unistd.h>

#include "pg/pg.h"
#include "queue/wakes.h"
#include "run/run_int.h"
#include "sched/schedule.h"
#include "schema/migrate.h"
#include "util/log.h"

/* Wakes kept in cronq.wakes. */
#define WAKES_KEPT 10000

/* Whether a stop was asked (SIGTERM, SIGINT): the wake's loops end early. */
static bool
stop_asked(void)
{
	return run_stop_requests != 0;
}

/*
 * Start the wake on conn for worker_id: 0, or an EX_* code with err filled.
 * wake->finished: nothing to do, the wake is recorded finished. The due
 * schedules failing (one row no statement can read, a bug) must not stop
 * every runner from claiming the jobs of every role: that failure, on a
 * connection still usable, goes to *later and the wake goes on.
 */
int
wake_start(PGconn *conn, const run_opts *o, const char *worker_id, wake_info *wake,
		   run_summary *sum, cq_err *later, cq_err *err)
{
	char host[256] = "localhost";
	int code, settled = 0;

	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	{
		const wake_args a = {worker_id, host, (int) getpid(), migrate_latest_version(),
							 o->linger_ms <= 0};

		if (wakes_start(conn, &a, &o->filter, wake, err) != 0)
			return migrate_explain_missing(conn, err);
	}
	if ((code = migrate_check_version(wake->version, wake->compatible_from, err)) != 0)
		return code;
	/* Keep the newest WAKES_KEPT wakes (and up to 100 more). */
	if (wake->wake_id % 100 == 0 && (code = wakes_trim(conn, wake->wake_id, WAKES_KEPT, err)) != 0) {
		cq_prefix(err, "could not trim the wakes: ");
		return code;
	}
	if (wake->finished)
		return 0;

	if (wake->need_materialise &&
		(code = schedule_materialise(conn, stop_asked, &sum->scheduled, &sum->skipped, err)) != 0) {
		cq_prefix(err, "could not enqueue the due schedules: ");
		if (!pg_alive(conn))
			return code;
		log_warning("%s; claiming jobs all the same", err->msg);
		*later = *err;
		cq_clear(err);
	}
	if (wake->need_rescue && (code = jobs_rescue(conn, &sum->rescued, err)) != 0) {
		cq_prefix(err, "could not rescue the expired leases: ");
		return code;
	}
	/* Dependants an outcome (or the rescue just now) could not touch. */
	if (wake->need_rescue && (code = jobs_settle_later(conn, stop_asked, &settled, err)) != 0) {
		cq_prefix(err, "could not settle the blocked jobs: ");
		return code;
	}
	/* Occurrences just enqueued may be past their deadline already (catch-up). */
	if ((wake->need_expire || sum->scheduled > 0) &&
		(code = jobs_expire(conn, worker_id, stop_asked, &sum->expired, err)) != 0) {
		cq_prefix(err, "could not expire the jobs past their deadline: ");
		return code;
	}
	return 0;
}

/* Record the wake's end (unless its first statement did), if conn still can. */
void
wake_end(PGconn *conn, const wake_info *wake, const run_summary *sum, int code)
{
	cq_err ignored;

	if (wake->wake_id && !wake->finished && pg_alive(conn) &&
		wakes_finish(conn, wake->wake_id, sum->run, sum->failed, code, &ignored) != 0)
		log_debug("could not record the end of the wake: %s", ignored.msg);
}
