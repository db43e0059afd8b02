/*
 * test_compat — the rule of rolling upgrades (schema/migrate.c): which
 * schema versions this binary uses, given what their migrations declare,
 * and what the binary's own migrations declare (embedded by
 * scripts/embed-sql.sh from their "-- compatible-from: N" lines).
 */
#include "check.h"
#include "schema/embedded.h"
#include "schema/migrate.h"

int
main(void)
{
	int b = migrate_latest_version();
	cq_err err = {0};

	CHECK(b >= 10, "latest version %d", b);
	CHECK(migrate_compatible(b, b), "the same version");
	CHECK(migrate_compatible(b, 1), "the same version, whatever it declares");
	CHECK(!migrate_compatible(b - 1, b - 1), "an older schema");
	CHECK(!migrate_compatible(b - 1, 1), "an older schema, whatever it declares");
	CHECK(!migrate_compatible(0, 0), "no schema");
	CHECK(migrate_compatible(b + 1, b), "newer, compatible from this version");
	CHECK(migrate_compatible(b + 5, b - 3), "newer, compatible from an older version");
	CHECK(!migrate_compatible(b + 1, b + 1), "newer, compatible from the next version only");

	CHECK(migrate_check_version(b + 1, b, &err) == 0, "newer, compatible: no error");
	CHECK(migrate_check_version(b + 1, b + 1, &err) == EX_CONFIG, "newer, incompatible: 78");
	CHECK(migrate_check_version(b - 1, b - 1, &err) == EX_CONFIG, "older: 78");

	/* Each migration declares a version from 1 to its own; up to 0010, its own. */
	for (int i = 0; i < sql_migration_count; i++) {
		const sql_migration *m = &sql_migrations[i];

		CHECK(m->compatible_from >= 1 && m->compatible_from <= m->version,
			  "%s: compatible from %d", m->name, m->compatible_from);
		if (m->version <= 10)
			CHECK(m->compatible_from == m->version, "%s: compatible from %d, not its own version",
				  m->name, m->compatible_from);
	}
	CHECK(migrate_compatible_from() >= 10 && migrate_compatible_from() <= b,
		  "the schema's compatible-from %d", migrate_compatible_from());
	return check_done("compat");
}
