/*
 * embedded — the SQL migrations compiled into the binary (generated from
 * sql/ by scripts/embed-sql.sh), in version order, and the scripts that
 * are not migrations.
 */
#ifndef CRONQ_EMBEDDED_H
#define CRONQ_EMBEDDED_H

typedef struct sql_migration {
	int			version;
	const char *name;
	const char *sql;
} sql_migration;

extern const sql_migration sql_migrations[];
extern const int sql_migration_count;

/* sql/grants.sql: the roles' privileges, applied by every migrate. */
extern const char sql_grants[];

#endif
