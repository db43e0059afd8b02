/*
 * wakes — see wakes.h. Every statement on cronq.wakes that a runner
 * executes after the wake's first one.
 */
#include "queue/wakes.h"

#include <inttypes.h>
#include <stdio.h>

#include "pg/pg.h"

static const char wake_trim_sql[] =
	"delete from cronq.wakes where id <= $1::bigint - $2::bigint";

/* The wake's end, when its first statement could not record it finished. */
static const char wake_end_sql[] =
	"update cronq.wakes set finished_at = clock_timestamp(), jobs_run = $2::int,"
	"   jobs_failed = $3::int, exit_status = $4::int where id = $1::bigint";

int
wakes_trim(PGconn *conn, int64_t wake_id, int kept, cq_err *err)
{
	char id[32], k[16];
	const char *p[2] = {id, k};

	snprintf(id, sizeof id, "%" PRId64, wake_id);
	snprintf(k, sizeof k, "%d", kept);
	return pg_run(conn, wake_trim_sql, 2, p, err);
}

int
wakes_finish(PGconn *conn, int64_t wake_id, int64_t run, int64_t failed, int exit_status,
			 cq_err *err)
{
	char id[32], r[32], f[32], status[16];
	const char *p[4] = {id, r, f, status};

	snprintf(id, sizeof id, "%" PRId64, wake_id);
	snprintf(r, sizeof r, "%" PRId64, run);
	snprintf(f, sizeof f, "%" PRId64, failed);
	snprintf(status, sizeof status, "%d", exit_status);
	return pg_run(conn, wake_end_sql, 4, p, err);
}
