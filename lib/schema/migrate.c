/*
 * migrate — see migrate.h. The bookkeeping table cronq.schema_migrations is
 * created here rather than in a migration, since it must exist before the
 * first one runs.
 */
#include "schema/migrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg.h"
#include "schema/embedded.h"

/* An arbitrary constant: the advisory lock key shared by every migrate. */
#define MIGRATE_LOCK_KEY "7466726374707143"

static const char bootstrap_sql[] =
	"create schema if not exists cronq;\n"
	"create table if not exists cronq.schema_migrations (\n"
	"    version    integer primary key,\n"
	"    name       text not null,\n"
	"    applied_at timestamptz not null default now())";

static const char version_sql[] =
	"select coalesce(max(version), 0) from cronq.schema_migrations";

/*
 * The same version as a constant function, written at the end of a migrate
 * that applied anything or found it missing or stale: a wake reads it
 * instead of the table (one relation less for a new server process to
 * open). The binary's latest version follows. cronq.schema_compatible_from()
 * (0010_compat.sql) is written the same way, with the highest
 * compatible-from of the binary's migrations.
 */
static const char version_fn_sql[] =
	"create or replace function cronq.%s() returns integer"
	" language sql immutable parallel safe return %d";
/* Whether the function $1 is there and returns $2. */
static const char version_fn_current_sql[] =
	"select pg_get_function_sqlbody(to_regprocedure($1))"
	" is not distinct from 'RETURN ' || $2";
/* A schema newer than the binary: what its migrations declare. */
static const char compatible_from_sql[] = "select cronq.schema_compatible_from()";

int
migrate_latest_version(void)
{
	return sql_migration_count > 0 ? sql_migrations[sql_migration_count - 1].version : 0;
}

int
migrate_count(void)
{
	return sql_migration_count;
}

int
migrate_compatible_from(void)
{
	int from = 0;

	for (int i = 0; i < sql_migration_count; i++)
		if (sql_migrations[i].compatible_from > from)
			from = sql_migrations[i].compatible_from;
	return from;
}

bool
migrate_compatible(int db_version, int compatible_from)
{
	int latest = migrate_latest_version();

	return db_version == latest || (db_version > latest && compatible_from <= latest);
}

int
migrate_check_version(int db_version, int compatible_from, cq_err *err)
{
	int latest = migrate_latest_version();

	if (migrate_compatible(db_version, compatible_from))
		return 0;
	if (db_version == 0) {
		cq_fail(err, EX_CONFIG, "database has no cronq schema");
		cq_hint(err, "Run \"cronq migrate\" to install it.");
	} else if (db_version < latest) {
		cq_fail(err, EX_CONFIG, "database schema is at version %d, older than this cronq (version %d)",
				db_version, latest);
		cq_hint(err, "Run \"cronq migrate\" to upgrade it.");
	} else {
		cq_fail(err, EX_CONFIG, "database schema is at version %d, newer than this cronq (version %d)"
				" and not compatible with it", db_version, latest);
		cq_hint(err, "Upgrade cronq on this host: the schema works with a cronq for version %d or later.",
				compatible_from);
	}
	return EX_CONFIG;
}

static bool
missing_object(const cq_err *err)
{
	/* invalid_schema_name, undefined_table, undefined_function */
	return strcmp(err->sqlstate, "3F000") == 0 || strcmp(err->sqlstate, "42P01") == 0 ||
		strcmp(err->sqlstate, "42883") == 0;
}

/*
 * Read the applied version, or 0 when the bookkeeping table is missing, and
 * when it is newer than the binary's, what its migrations declare (a
 * second query, then only): *compatible_from is the version otherwise.
 */
static int
read_version(PGconn *conn, int *version, int *compatible_from, cq_err *err)
{
	PGresult *res = pg_exec(conn, version_sql, 0, NULL, PG_ONE, err);

	if (res == NULL) {
		if (missing_object(err)) {
			cq_clear(err);
			*version = *compatible_from = 0;
			return 0;
		}
		return err->code;
	}
	*version = *compatible_from = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (*version <= migrate_latest_version())
		return 0;
	if ((res = pg_exec(conn, compatible_from_sql, 0, NULL, PG_ONE, err)) == NULL) {
		/* A newer schema without the function declares no older binary. */
		if (missing_object(err)) {
			cq_clear(err);
			return 0;
		}
		return err->code;
	}
	*compatible_from = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

int
migrate_explain_missing(PGconn *conn, cq_err *err)
{
	cq_err verdict = {0};
	int version = 0, compatible_from = 0;

	if (!missing_object(err))
		return err->code;
	/* An older schema lacks what this binary's statements name: say so. */
	if (read_version(conn, &version, &compatible_from, &verdict) == 0 &&
		migrate_check_version(version, compatible_from, &verdict) != 0) {
		*err = verdict;
		return err->code;
	}
	err->code = EX_CONFIG;
	if (version > migrate_latest_version()) {
		/* A newer schema that declares this binary compatible, wrongly. */
		cq_prefix(err, "database schema is at version %d, newer than this cronq (version %d): ",
				  version, migrate_latest_version());
		cq_hint(err, "Upgrade cronq on this host.");
		return err->code;
	}
	cq_prefix(err, "database has no cronq schema: ");
	cq_hint(err, "Run \"cronq migrate\" to install it.");
	return err->code;
}

int
migrate_check(PGconn *conn, cq_err *err)
{
	int version, compatible_from;
	int rc = read_version(conn, &version, &compatible_from, err);

	return rc ? rc : migrate_check_version(version, compatible_from, err);
}

/* PQexec a multi-statement script; 0 or the error code. */
static int
exec_script(PGconn *conn, const char *sql, const char *what, cq_err *err)
{
	PGresult *res = PQexec(conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;

	/* A migration of comments only is empty, not a failure. */
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
		rc = pg_fail_result(conn, res, err);
		if (what) {
			cq_prefix(err, "migration %s failed: ", what);
			rc = err->code = rc == EX_TEMPFAIL ? rc : EX_SOFTWARE;
		}
	}
	PQclear(res);
	return rc;
}

/*
 * (Re)write the constant function cronq.NAME() returning value when forced
 * or when it is missing or returns another; otherwise write nothing.
 */
static int
write_constant_fn(PGconn *conn, const char *name, int value, bool force, cq_err *err)
{
	char sig[64], val[16], fn[sizeof version_fn_sql + 64 + 16];
	const char *params[2] = {sig, val};

	snprintf(sig, sizeof sig, "cronq.%s()", name);
	snprintf(val, sizeof val, "%d", value);
	if (!force) {
		PGresult *res = pg_exec(conn, version_fn_current_sql, 2, params, PG_ONE, err);

		if (res == NULL)
			return err->code;
		force = PQgetvalue(res, 0, 0)[0] != 't';
		PQclear(res);
	}
	if (!force)
		return 0;
	snprintf(fn, sizeof fn, version_fn_sql, name, value);
	return exec_script(conn, fn, NULL, err);
}

/*
 * (Re)write cronq.schema_version() and cronq.schema_compatible_from() when
 * forced or when either is missing or stale; a migrate with nothing to do
 * writes nothing.
 */
static int
write_version_fn(PGconn *conn, bool force, cq_err *err)
{
	int rc = write_constant_fn(conn, "schema_version", migrate_latest_version(), force, err);

	return rc ? rc : write_constant_fn(conn, "schema_compatible_from", migrate_compatible_from(),
									   force, err);
}

/*
 * The privileges of everything in schema cronq and which cronq roles exist,
 * as one digest: compared before and after the grants, it tells whether
 * they changed anything.
 */
static const char acl_digest_sql[] =
	"select pg_catalog.md5(coalesce(pg_catalog.string_agg(x, ';' order by x), '')) from ("
	" select c.relname operator(pg_catalog.||) coalesce(c.relacl::pg_catalog.text, '')"
	"  from pg_catalog.pg_class c where c.relnamespace operator(pg_catalog.=) 'cronq'::pg_catalog.regnamespace"
	" union all select c.relname operator(pg_catalog.||) '.' operator(pg_catalog.||) a.attname"
	"   operator(pg_catalog.||) a.attacl::pg_catalog.text"
	"  from pg_catalog.pg_attribute a join pg_catalog.pg_class c on c.oid operator(pg_catalog.=) a.attrelid"
	"  where c.relnamespace operator(pg_catalog.=) 'cronq'::pg_catalog.regnamespace and a.attacl is not null"
	" union all select p.oid::pg_catalog.regprocedure::pg_catalog.text"
	"   operator(pg_catalog.||) coalesce(p.proacl::pg_catalog.text, '')"
	"  from pg_catalog.pg_proc p where p.pronamespace operator(pg_catalog.=) 'cronq'::pg_catalog.regnamespace"
	" union all select coalesce(n.nspacl::pg_catalog.text, '') from pg_catalog.pg_namespace n"
	"  where n.nspname operator(pg_catalog.=) 'cronq'"
	" union all select rolname::pg_catalog.text from pg_catalog.pg_roles"
	"  where rolname operator(pg_catalog.=) any ('{cronq_user,cronq_exec,cronq_admin}')) t(x)";

/* Which cronq roles exist and which do not, in a fixed order. */
static const char roles_sql[] =
	"select coalesce(pg_catalog.string_agg(r, ', ' order by o) filter (where e), ''),"
	"  coalesce(pg_catalog.string_agg(r, ', ' order by o) filter (where not e), '')"
	" from (select r, o, exists (select 1 from pg_catalog.pg_roles where rolname operator(pg_catalog.=) r)"
	"  from pg_catalog.unnest('{cronq_user,cronq_exec,cronq_admin}'::pg_catalog.text[]) with ordinality u(r, o)) t(r, o, e)";

static int
query_text(PGconn *conn, const char *sql, char *out, size_t len, cq_err *err)
{
	PGresult *res = pg_exec(conn, sql, 0, NULL, PG_ONE, err);

	if (res == NULL)
		return err->code;
	snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

/*
 * Run sql/grants.sql and say what it did. Granting rewrites catalog rows
 * even when the privileges stay the same: when they do, the savepoint
 * takes it all back, and a migrate with nothing to do writes nothing.
 */
static int
apply_grants(PGconn *conn, migrate_grants *g, cq_err *err)
{
	char before[40], after[40];
	PGresult *res;
	int rc;

	memset(g, 0, sizeof *g);
	if ((rc = query_text(conn, acl_digest_sql, before, sizeof before, err)) != 0 ||
		(rc = exec_script(conn, "savepoint cronq_grants", NULL, err)) != 0 ||
		(rc = exec_script(conn, sql_grants, "grants.sql", err)) != 0 ||
		(rc = query_text(conn, acl_digest_sql, after, sizeof after, err)) != 0)
		return rc;
	g->changed = strcmp(before, after) != 0;
	if ((rc = exec_script(conn, g->changed ? "release savepoint cronq_grants"
						  : "rollback to savepoint cronq_grants", NULL, err)) != 0)
		return rc;
	if ((res = pg_exec(conn, roles_sql, 0, NULL, PG_ONE, err)) == NULL)
		return err->code;
	snprintf(g->present, sizeof g->present, "%s", PQgetvalue(res, 0, 0));
	snprintf(g->missing, sizeof g->missing, "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	return 0;
}

int
migrate_apply(PGconn *conn, int *applied, int *db_version, migrate_grants *grants,
			  void (*progress)(const char *name), cq_err *err)
{
	int version = 0, compatible_from = 0;
	int rc;

	*applied = 0;
	*db_version = migrate_latest_version();
	memset(grants, 0, sizeof *grants);
	/*
	 * SQL_ASCII checks no byte it stores: one role's queue name that is not
	 * UTF-8 would make every statement that reads it fail, the runners'
	 * claim included, for every role. Any other server encoding checks (and
	 * converts) what it is sent.
	 */
	{
		const char *enc = PQparameterStatus(conn, "server_encoding");

		if (enc && strcmp(enc, "SQL_ASCII") == 0) {
			cq_fail(err, EX_CONFIG, "the database's encoding is SQL_ASCII, which stores text unchecked: "
					"cronq needs a database that checks it");
			cq_hint(err, "Create one with ENCODING 'UTF8' (createdb -E UTF8 -T template0 NAME).");
			return err->code;
		}
	}
	/*
	 * Migrations name every object with its schema; pinning search_path
	 * also binds the SQL-standard function bodies they create to
	 * pg_catalog's operators and types, whoever runs migrate.
	 */
	if ((rc = exec_script(conn, "begin; set local search_path = pg_catalog, pg_temp", NULL, err)) != 0)
		return rc;
	/*
	 * One migrate at a time: a lock on cronq.schema_migrations that no role
	 * short of its owner can take (an advisory lock anyone can, and hold
	 * forever), or, before the table exists, the advisory lock. Then each
	 * lock a migration waits for (a transaction left open on cronq.jobs)
	 * is waited for 10 s at most, not forever with every runner queued
	 * behind it.
	 */
	if ((rc = pg_run(conn, "select pg_catalog.pg_advisory_xact_lock(" MIGRATE_LOCK_KEY ") "
					 "where pg_catalog.to_regclass('cronq.schema_migrations') is null", 0, NULL, err)) != 0 ||
		(rc = exec_script(conn, bootstrap_sql, NULL, err)) != 0 ||
		(rc = exec_script(conn, "lock table cronq.schema_migrations in share row exclusive mode; "
						  "set local lock_timeout = '10s'", NULL, err)) != 0 ||
		(rc = read_version(conn, &version, &compatible_from, err)) != 0)
		goto fail;
	/*
	 * Never downgrade: a newer schema is left as it is, functions and
	 * grants included (this binary's grants.sql may lack what the newer
	 * one gave), and refused unless it declares this binary compatible.
	 */
	if (version > migrate_latest_version()) {
		if ((rc = migrate_check_version(version, compatible_from, err)) != 0)
			goto fail;
		*db_version = version;
		return exec_script(conn, "rollback", NULL, err);
	}
	for (int i = 0; i < sql_migration_count; i++) {
		const sql_migration *m = &sql_migrations[i];
		char vbuf[16];
		const char *params[2] = {vbuf, m->name};

		if (m->version <= version)
			continue;
		if (progress)
			progress(m->name);
		snprintf(vbuf, sizeof vbuf, "%d", m->version);
		if ((rc = exec_script(conn, m->sql, m->name, err)) != 0 ||
			(rc = pg_run(conn, "insert into cronq.schema_migrations (version, name) values ($1, $2)",
						 2, params, err)) != 0)
			goto fail;
		(*applied)++;
	}
	if ((rc = write_version_fn(conn, *applied > 0, err)) != 0 ||
		(rc = apply_grants(conn, grants, err)) != 0)
		goto fail;
	if ((rc = exec_script(conn, "commit", NULL, err)) != 0)
		return rc;
	return 0;

fail:
	*applied = 0;
	if (err && strcmp(err->sqlstate, "55P03") == 0)
		cq_hint(err, "Another session holds a lock on a cronq object (see pg_locks); run \"cronq migrate\" again.");
	if (pg_alive(conn)) {
		PGresult *res = PQexec(conn, "rollback");

		PQclear(res);
	}
	return rc;
}

int
migrate_status(PGconn *conn, migrate_state *states, int *db_version, cq_err *err)
{
	PGresult *res;
	int rows = 0;

	*db_version = 0;
	res = pg_exec(conn, "select version, to_char(applied_at at time zone 'UTC', "
				  "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from cronq.schema_migrations order by version",
				  0, NULL, PG_ANY, err);
	if (res == NULL) {
		if (strcmp(err->sqlstate, "3F000") != 0 && strcmp(err->sqlstate, "42P01") != 0)
			return err->code;
		cq_clear(err);
	} else
		rows = PQntuples(res);

	for (int i = 0; i < sql_migration_count; i++) {
		states[i].version = sql_migrations[i].version;
		states[i].name = sql_migrations[i].name;
		states[i].applied = false;
		states[i].applied_at[0] = '\0';
		for (int r = 0; r < rows; r++) {
			if (atoi(PQgetvalue(res, r, 0)) == states[i].version) {
				states[i].applied = true;
				snprintf(states[i].applied_at, sizeof states[i].applied_at, "%s", PQgetvalue(res, r, 1));
			}
		}
	}
	for (int r = 0; r < rows; r++) {
		int v = atoi(PQgetvalue(res, r, 0));

		if (v > *db_version)
			*db_version = v;
	}
	PQclear(res);
	return 0;
}
