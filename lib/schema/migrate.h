/*
 * migrate — applies the migrations compiled into the binary and checks that
 * a database's schema is the one this binary speaks. Knows the cronq schema
 * only as numbered SQL files; the tables themselves are the queue's concern.
 */
#ifndef CRONQ_MIGRATE_H
#define CRONQ_MIGRATE_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "util/err.h"

/* The schema version this binary speaks: the newest embedded migration. */
int migrate_latest_version(void);

/*
 * The oldest binary (the schema version it was built for) that works with
 * the schema this binary's migrations make: the highest compatible-from
 * they declare (see scripts/embed-sql.sh). migrate writes it as
 * cronq.schema_compatible_from().
 */
int migrate_compatible_from(void);

/*
 * The rule of rolling upgrades: whether this binary works with a schema at
 * db_version whose migrations declare compatible_from. The same version,
 * or a newer one that declares this binary's version or an older one
 * compatible; never an older schema. (The wake's first statement,
 * queue/wakes.c, says the same in SQL.)
 */
bool migrate_compatible(int db_version, int compatible_from);

/* What the grants step of a migrate did (sql/grants.sql). */
typedef struct migrate_grants {
	bool		changed;		/* some privilege of a cronq role changed */
	char		present[64];	/* the cronq roles that exist, ", "-separated */
	char		missing[64];	/* those that do not, and could not be created */
} migrate_grants;

/*
 * Apply every pending migration in order, then the roles' grants, in one
 * transaction under a transaction-level advisory lock, so concurrent
 * migrates serialise and a failure leaves nothing half-applied. *applied
 * receives how many migrations ran, *db_version the schema's version
 * after, *grants what the grants did. progress (may be NULL) is called
 * with each migration's name before it runs. A schema newer than the
 * binary's is never downgraded: when it declares this binary compatible it
 * is left as it is (0, nothing applied, no grants, *db_version the newer
 * version), otherwise EX_CONFIG.
 */
int migrate_apply(PGconn *conn, int *applied, int *db_version, migrate_grants *grants,
				  void (*progress)(const char *name), cq_err *err)
			__attribute__((warn_unused_result));

/* One migration's state, for `cronq migrate --status`. */
typedef struct migrate_state {
	int			version;
	const char *name;
	bool		applied;
	char		applied_at[64];
} migrate_state;

/*
 * Fill states[0..count) with every known migration (callers pass an array of
 * migrate_latest_count() entries). *db_version receives the newest version
 * applied in the database (0 when none).
 */
int migrate_status(PGconn *conn, migrate_state *states, int *db_version,
				   cq_err *err) __attribute__((warn_unused_result));
int migrate_count(void);

/*
 * Check a version read from the database, and the compatible-from its
 * migrations declare, against the binary's (migrate_compatible): 0, or
 * EX_CONFIG with a message naming the command to run.
 */
int migrate_check_version(int db_version, int compatible_from, cq_err *err);

/*
 * Read the database's schema version and check it (one query; a second,
 * cronq.schema_compatible_from(), only when the schema is newer): 0,
 * EX_CONFIG when missing, older or newer and not compatible, or the
 * query's error.
 */
int migrate_check(PGconn *conn, cq_err *err) __attribute__((warn_unused_result));

/*
 * Explain a query failure that means a cronq object is missing (schema,
 * table or function): EX_CONFIG naming `cronq migrate`, with the schema's
 * version read from conn when it is older or newer than this binary's.
 * Other failures are left as they are. Returns err->code.
 */
int migrate_explain_missing(PGconn *conn, cq_err *err);

#endif
