/*
 * embedded — the SQL migrations compiled into the binary (generated from
 * sql/ by scripts/embed-sql.sh), in version order, the scripts that are
 * not migrations, and the long statements of lib/, each from a .sql file
 * beside the C that sends it (without its comments and final semicolon).
 */
#ifndef CRONQ_EMBEDDED_H
#define CRONQ_EMBEDDED_H

typedef struct sql_migration {
	int			version;
	/*
	 * The oldest binary (the schema version it was built for) that still
	 * works once this migration is applied: its header's
	 * "-- compatible-from: N", else its own version.
	 */
	int			compatible_from;
	const char *name;
	const char *sql;
} sql_migration;

extern const sql_migration sql_migrations[];
extern const int sql_migration_count;

/* sql/grants.sql: the roles' privileges, applied by every migrate. */
extern const char sql_grants[];

/* The statements: lib/MODULE/NAME.sql is sql_MODULE_NAME. */
extern const char sql_queue_claim[];		/* lib/queue/claim.sql */
extern const char sql_queue_claim_plain[];	/* lib/queue/claim_plain.sql */
extern const char sql_queue_expire[];		/* lib/queue/expire.sql */
extern const char sql_queue_heartbeat[];	/* lib/queue/heartbeat.sql */
extern const char sql_queue_held[];		/* lib/queue/held.sql */
extern const char sql_queue_record[];		/* lib/queue/record.sql */
extern const char sql_queue_record_plain[];	/* lib/queue/record_plain.sql */
extern const char sql_queue_release[];		/* lib/queue/release.sql */
extern const char sql_queue_rescue[];		/* lib/queue/rescue.sql */
extern const char sql_queue_settle[];		/* lib/queue/settle.sql */
extern const char sql_report_status[];		/* lib/report/status.sql */
extern const char sql_report_health[];		/* lib/report/health.sql */
extern const char sql_report_timeline[];	/* lib/report/timeline.sql */
extern const char sql_sched_due_unplanned[];	/* lib/sched/due_unplanned.sql */
extern const char sql_sched_due[];			/* lib/sched/due.sql */

#endif
