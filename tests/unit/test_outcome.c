/*
 * Unit tests of lib/run/outcome: outcome_for(), the policy from (stop
 * reason, task result) to the outcome an attempt records, one row each.
 */
#include <string.h>

#include "check.h"
#include "run/outcome.h"

#define NO_CODE NULL
#define KEEP NULL				/* the task's own result stands */

int
main(void)
{
	static const struct {
		const char *name;
		task_stop	stop;
		task_status status;		/* the task's result */
		bool		took_effect;
		/* expected */
		task_stop	counts;
		bool		record;
		run_outcome outcome;
		bool		permanent;
		const char *code;		/* the error code replacing the task's */
		const char *message;	/* KEEP: no replacement */
	} rows[] = {
		{"succeeded", TASK_GO, TASK_SUCCEEDED, false,
		 TASK_GO, true, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		{"failed, retryable", TASK_GO, TASK_FAILED, false,
		 TASK_GO, true, OUTCOME_FAILED, false, NO_CODE, KEEP},
		{"failed, permanent", TASK_GO, TASK_PERMANENT, false,
		 TASK_GO, true, OUTCOME_FAILED, true, NO_CODE, KEEP},
		{"timed out", TASK_STOP_TIMEOUT, TASK_FAILED, false,
		 TASK_STOP_TIMEOUT, true, OUTCOME_TIMEOUT, false, "timeout", "timed out after 1m30s"},
		{"timed out, permanent failure", TASK_STOP_TIMEOUT, TASK_PERMANENT, false,
		 TASK_STOP_TIMEOUT, true, OUTCOME_TIMEOUT, false, "timeout", "timed out after 1m30s"},
		{"shutdown", TASK_STOP_SHUTDOWN, TASK_FAILED, false,
		 TASK_STOP_SHUTDOWN, true, OUTCOME_GIVEN_BACK, false, NO_CODE, "given back at shutdown"},
		{"unavailable", TASK_STOP_UNAVAILABLE, TASK_FAILED, false,
		 TASK_STOP_UNAVAILABLE, true, OUTCOME_GIVEN_BACK, false, NO_CODE, "given back: server full"},
		{"cancelled", TASK_STOP_CANCELLED, TASK_FAILED, false,
		 TASK_STOP_CANCELLED, true, OUTCOME_CANCELLED, false, "cancelled", "cancelled while running"},
		{"lease lost", TASK_STOP_LOST, TASK_FAILED, false,
		 TASK_STOP_LOST, true, OUTCOME_LEASE_LOST, false, NO_CODE, KEEP},
		{"disconnected", TASK_STOP_DISCONNECTED, TASK_FAILED, false,
		 TASK_STOP_DISCONNECTED, false, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		/* Work that took effect stands however late the stop came. */
		{"committed, then timed out", TASK_STOP_TIMEOUT, TASK_SUCCEEDED, true,
		 TASK_GO, true, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		{"committed, then shutdown", TASK_STOP_SHUTDOWN, TASK_SUCCEEDED, true,
		 TASK_GO, true, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		{"committed, then cancelled", TASK_STOP_CANCELLED, TASK_SUCCEEDED, true,
		 TASK_GO, true, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		{"committed, then unavailable", TASK_STOP_UNAVAILABLE, TASK_SUCCEEDED, true,
		 TASK_GO, true, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		/* ...but not a lost lease (fenced anyway) nor a lost connection. */
		{"committed, then lease lost", TASK_STOP_LOST, TASK_SUCCEEDED, true,
		 TASK_STOP_LOST, true, OUTCOME_LEASE_LOST, false, NO_CODE, KEEP},
		{"committed, then disconnected", TASK_STOP_DISCONNECTED, TASK_SUCCEEDED, true,
		 TASK_STOP_DISCONNECTED, false, OUTCOME_SUCCEEDED, false, NO_CODE, KEEP},
		/* Effect without success, or success without effect: the stop counts. */
		{"failed after effect, timed out", TASK_STOP_TIMEOUT, TASK_FAILED, true,
		 TASK_STOP_TIMEOUT, true, OUTCOME_TIMEOUT, false, "timeout", "timed out after 1m30s"},
		{"succeeded without effect, shutdown", TASK_STOP_SHUTDOWN, TASK_SUCCEEDED, false,
		 TASK_STOP_SHUTDOWN, true, OUTCOME_GIVEN_BACK, false, NO_CODE, "given back at shutdown"},
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		task_result r;
		outcome_decision d;

		memset(&r, 0, sizeof r);
		r.status = rows[i].status;
		r.took_effect = rows[i].took_effect;
		d = outcome_for(rows[i].stop, &r, 90 * 1000, "server full");

		CHECK(d.stop == rows[i].counts, "%s: the stop that counts is %d, expected %d",
			  rows[i].name, (int) d.stop, (int) rows[i].counts);
		CHECK(d.record == rows[i].record, "%s: record is %d", rows[i].name, d.record);
		if (!rows[i].record)
			continue;
		CHECK(d.outcome == rows[i].outcome, "%s: outcome %s, expected %s", rows[i].name,
			  run_outcome_sql(d.outcome), run_outcome_sql(rows[i].outcome));
		CHECK(d.permanent == rows[i].permanent, "%s: permanent is %d", rows[i].name, d.permanent);
		CHECK(d.replace == (rows[i].message != KEEP), "%s: replace is %d", rows[i].name, d.replace);
		if (rows[i].message == KEEP)
			continue;
		CHECK(d.status == TASK_FAILED, "%s: a replaced result is a failure", rows[i].name);
		CHECK(rows[i].code ? d.error_code && strcmp(d.error_code, rows[i].code) == 0 : d.error_code == NULL,
			  "%s: error code %s, expected %s", rows[i].name, d.error_code ? d.error_code : "(none)",
			  rows[i].code ? rows[i].code : "(none)");
		CHECK(strcmp(d.message, rows[i].message) == 0, "%s: message \"%s\", expected \"%s\"",
			  rows[i].name, d.message, rows[i].message);
	}

	/* The text the database stores, and back. */
	CHECK(strcmp(run_outcome_sql(OUTCOME_GIVEN_BACK), "given_back") == 0, "given_back's text");
	CHECK(strcmp(run_outcome_sql(OUTCOME_LEASE_EXPIRED), "lease_expired") == 0, "lease_expired's text");
	CHECK(strcmp(job_status_sql(JOB_STATUS_NONE), "") == 0, "no status is \"\"");
	for (int s = JOB_STATUS_QUEUED; s <= JOB_STATUS_CANCELLED; s++) {
		const char *text = job_status_sql((job_status) s);

		CHECK(job_status_parse(text, strlen(text)) == (job_status) s, "status %s parses back", text);
	}
	CHECK(job_status_parse("dead,", 4) == JOB_STATUS_DEAD, "a status is parsed by its length");
	CHECK(job_status_parse("deadx", 5) == JOB_STATUS_NONE, "an unknown status is none");
	return check_done("outcome");
}
