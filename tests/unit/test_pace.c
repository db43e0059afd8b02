/*
 * Unit tests of lib/run/pace: pace_next(), the size of a worker's next
 * claim (fair sharing of slow work, large batches of quick work).
 */
#include "check.h"
#include "run/pace.h"

int
main(void)
{
	static const struct {
		const char *name;
		int			limit, max, started;
		int64_t		elapsed_ms;
		int			next;
	} rows[] = {
		/* quick jobs: the claim grows eightfold up to --batch */
		{"noops from one", 1, 10, 1, 1, 8},
		{"noops from eight: --batch caps", 8, 10, 8, 1, 10},
		{"noops at --batch stay", 10, 10, 10, 5, 10},
		{"a zero-length batch counts as 1 ms", 10, 10, 10, 0, 10},
		{"--batch 1000 from one", 1, 1000, 1, 1, 8},
		{"--batch 1000 from 64", 64, 1000, 64, 3, 512},
		{"--batch 1000 from 512", 512, 1000, 512, 20, 1000},
		{"--batch 1 stays 1", 1, 1, 1, 1, 1},
		/* jobs of 30 ms: about 125 ms of them */
		{"30 ms jobs from one", 1, 10, 1, 30, 4},
		{"30 ms jobs at four stay", 4, 10, 4, 120, 4},
		{"30 ms jobs at eight shrink", 8, 10, 8, 240, 4},
		/* jobs of 10 ms: growth capped on the way */
		{"10 ms jobs from one", 1, 100, 1, 10, 8},
		{"10 ms jobs from eight", 8, 100, 8, 80, 12},
		/* slow jobs: one at a time, whatever --batch */
		{"a 1 s job", 1, 10, 1, 1000, 1},
		{"a slow job behind quick ones", 10, 10, 4, 5000, 1},
		{"a 200 ms job", 1, 10, 1, 200, 1},
		{"jobs of 125 ms", 2, 10, 2, 250, 1},
		/* nothing started (given back, lost): the limit stays */
		{"none started", 8, 10, 0, 9000, 8},
		{"none started, limit above a lowered --batch", 8, 4, 0, 0, 4},
		{"a batch of fewer jobs than the limit", 8, 10, 2, 2, 10},
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int got = pace_next(rows[i].limit, rows[i].max, rows[i].started, rows[i].elapsed_ms);

		CHECK(got == rows[i].next, "%s: pace_next(%d, %d, %d, %lld) = %d, expected %d", rows[i].name,
			  rows[i].limit, rows[i].max, rows[i].started, (long long) rows[i].elapsed_ms, got,
			  rows[i].next);
	}
	return check_done("test_pace");
}
