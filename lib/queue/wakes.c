/*
 * wakes — see wakes.h. Every statement a runner executes on cronq.wakes.
 */
#include "queue/wakes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/literal.h"
#include "pg/pg.h"

/*
 * A wake's first statement, read-only but for the wake's row: the schema
 * version and the oldest binary it declares compatible
 * (cronq.schema_version() and cronq.schema_compatible_from(), constants
 * that migrate writes: no table to open, folded when the statement is
 * planned), and whether any lease has expired or any blocked job waits
 * to be settled (cronq.settle_later, 0017; cronq.settle_parents, 0025), any waiting job is past
 * its deadline (jobs_expiring, an empty index's probe when no job has
 * one), any schedule is due, any job is due (under the claim's filters). Ordering by jobs_due's first
 * column keeps that last check on jobs_due whatever the statistics say: a
 * bare exists() takes a sequential scan of the whole history when stale
 * statistics still count a drained backlog as due, and the index's full
 * order costs more planning. When this binary may use the schema (the
 * version is $4, or newer and compatible from $4 or earlier: the rule of
 * migrate_compatible() in schema/migrate.c) it records the wake,
 * already finished when there is nothing to do and $5 allows it: an idle
 * wake is this one statement. With work to do, it also asks whether
 * any limit is defined (cronq.limited(), not inlined: an idle wake
 * neither plans nor opens cronq.limits). A new server process pays for the first use
 * of every relation, function and operator a statement names, so the text
 * stays as plain as it can: the filters are there only when given.
 */
#define WAKE_SQL(filters) \
	"with v as (select cronq.schema_version() as version, cronq.schema_compatible_from() as compat)," \
	" f as (select v.version, v.compat," \
	"   v.version = $4::int or (v.version > $4::int and v.compat <= $4::int) as current," \
	"   (exists (select 1 from cronq.jobs where status = 'running' and locked_until < now())" \
	"    or exists (select 1 from cronq.settle_later) or exists (select 1 from cronq.settle_parents))" \
	"    as rescue," \
	"   exists (select 1 from cronq.jobs where status in ('queued', 'failed') and expires_at <= now())" \
	"    as expire," \
	"   (exists (select 1 from cronq.schedules where enabled and next_run_at <= now())" \
	"    or exists (select 1 from cronq.schedules where enabled and next_run_at is null)) as due," \
	"   (select true from cronq.jobs where status in ('queued', 'failed') and run_at <= now()" filters \
	"    order by priority limit 1) is not null as work" \
	"   from v)," \
	" w as (insert into cronq.wakes (worker, host, pid, finished_at, exit_status)" \
	"   select $1, $2, $3::int, case when $5 and not (rescue or expire or due or work) then now() end," \
	"     case when $5 and not (rescue or expire or due or work) then 0 end" \
	"   from f where current returning id, exit_status)" \
	" select version, w.id, rescue, due, w.exit_status is not null, compat, expire," \
	"   case when work then cronq.limited() else false end" \
	" from f left join w on true"

static const char wake_sql[] = WAKE_SQL("");
static const char wake_filtered_sql[] = WAKE_SQL(
	" and ($6::text[] is null or queue = any($6::text[]))"
	" and ($7::text[] is null or type = any($7::text[]))"
	" and ($8::text[] is null or queue <> all($8::text[]))");

static const char wake_trim_sql[] =
	"delete from cronq.wakes where id <= $1::bigint - $2::bigint";

/* The wake's end, when its first statement could not record it finished. */
static const char wake_end_sql[] =
	"update cronq.wakes set finished_at = clock_timestamp(), jobs_run = $2::int,"
	"   jobs_failed = $3::int, exit_status = $4::int where id = $1::bigint";

int
wakes_start(PGconn *conn, const wake_args *a, const claim_filter *filter, wake_info *info,
			cq_err *err)
{
	char pid[16], version[16];
	char *queues = pg_text_array(filter->queues, filter->nqueues);
	char *types = pg_text_array(filter->types, filter->ntypes);
	char *excluded = pg_text_array(filter->exclude_queues, filter->nexclude_queues);
	const char *params[8] = {a->worker, a->host, pid, version, a->finish_if_idle ? "t" : "f",
							 queues, types, excluded};
	bool filtered = queues || types || excluded;
	PGresult *res;

	memset(info, 0, sizeof *info);
	snprintf(pid, sizeof pid, "%d", a->pid);
	snprintf(version, sizeof version, "%d", a->version);
	res = pg_exec(conn, filtered ? wake_filtered_sql : wake_sql, filtered ? 8 : 5, params,
				  PG_ONE, err);
	free(queues);
	free(types);
	free(excluded);
	if (res == NULL)
		return err->code;
	info->version = atoi(PQgetvalue(res, 0, 0));
	info->compatible_from = atoi(PQgetvalue(res, 0, 5));
	info->wake_id = PQgetisnull(res, 0, 1) ? 0 : strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	info->need_rescue = PQgetvalue(res, 0, 2)[0] == 't';
	info->need_materialise = PQgetvalue(res, 0, 3)[0] == 't';
	info->need_expire = PQgetvalue(res, 0, 6)[0] == 't';
	info->finished = info->wake_id != 0 && PQgetvalue(res, 0, 4)[0] == 't';
	info->limited = PQgetvalue(res, 0, 7)[0] == 't';
	PQclear(res);
	return 0;
}

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
