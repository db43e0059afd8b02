/*
 * Unit tests of lib/queue/wait's pure parts: which statuses are finished,
 * the pauses between polls, and how the pending jobs are named.
 */
#include <string.h>

#include "check.h"
#include "queue/wait.h"

int
main(void)
{
	static const struct {
		const char *status;
		bool		finished;
	} statuses[] = {
		{"succeeded", true}, {"dead", true}, {"cancelled", true}, {"queued", false},
		{"running", false}, {"failed", false}, {"blocked", false}, {"", false},
	};
	static const int64_t delays[] = {50, 100, 200, 400, 800, 1600, 2000, 2000};
	int64_t d = 0;
	char text[1024];
	wait_job jobs[3] = {{7, "running", false}, {8, "succeeded", true}, {9, "failed", false}};
	wait_job many[25];

	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		CHECK(wait_status_finished(statuses[i].status) == statuses[i].finished, "status [%s]",
			  statuses[i].status);
	for (size_t i = 0; i < sizeof delays / sizeof delays[0]; i++) {
		d = wait_next_delay_ms(d);
		CHECK(d == delays[i], "pause %zu: want %lld, got %lld", i, (long long) delays[i], (long long) d);
	}
	wait_pending_text(jobs, 3, text, sizeof text);
	CHECK(strcmp(text, "7 (running), 9 (failed)") == 0, "pending: %s", text);
	for (int i = 0; i < 25; i++)
		many[i] = (wait_job) {i + 1, "queued", false};
	wait_pending_text(many, 25, text, sizeof text);
	CHECK(strstr(text, "20 (queued) and 5 more") != NULL && strstr(text, "21 (") == NULL, "many pending: %s",
		  text);
	return check_done("wait");
}
