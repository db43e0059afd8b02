/* Unit tests of lib/queue/backoff: the formula, its bounds and determinism. */
#include <stdint.h>

#include "check.h"
#include "queue/backoff.h"

int
main(void)
{
	static const struct {
		int			attempt;
		int64_t		ceiling;
	} ceilings[] = {
		{0, 10000}, {1, 10000}, {2, 20000}, {3, 40000}, {4, 80000}, {5, 160000},
		{6, 320000}, {7, 640000}, {8, 1280000}, {9, 2560000}, {10, 3600000},
		{11, 3600000}, {50, 3600000}, {1000, 3600000},
	};
	bool in_bounds = true, spread = false;
	int64_t first = backoff_delay_ms(3, 1, 42);

	for (size_t i = 0; i < sizeof ceilings / sizeof ceilings[0]; i++)
		CHECK(backoff_ceiling_ms(ceilings[i].attempt) == ceilings[i].ceiling,
			  "ceiling(%d): expected %lld, got %lld", ceilings[i].attempt,
			  (long long) ceilings[i].ceiling, (long long) backoff_ceiling_ms(ceilings[i].attempt));

	/* Every delay lies in [d/2, d], and the jitter really varies. */
	for (int attempt = 1; attempt <= 15; attempt++)
		for (int64_t job = 1; job <= 2000; job++) {
			int64_t d = backoff_ceiling_ms(attempt);
			int64_t v = backoff_delay_ms(attempt, job, 12345);

			if (v < d / 2 || v > d) {
				in_bounds = false;
				printf("attempt %d job %lld: %lld outside [%lld, %lld]\n", attempt,
					   (long long) job, (long long) v, (long long) d / 2, (long long) d);
			}
			if (attempt == 3 && v != first)
				spread = true;
		}
	CHECK(in_bounds, "delays must lie within [d/2, d]");
	CHECK(spread, "jitter must differ between jobs");

	/* Deterministic under a seed, and the seed matters. */
	CHECK(backoff_delay_ms(3, 1, 42) == first, "same seed, job and attempt: same delay");
	CHECK(backoff_delay_ms(3, 1, 43) != first || backoff_delay_ms(3, 2, 43) != backoff_delay_ms(3, 2, 42),
		  "another seed gives other delays");
	/* The mean is near 3/4 of the ceiling. */
	{
		double sum = 0;

		for (int64_t job = 1; job <= 10000; job++)
			sum += (double) backoff_delay_ms(1, job, 99);
		sum /= 10000;
		CHECK(sum > 7300 && sum < 7700, "mean delay of attempt 1 should be about 7500 ms, is %.0f", sum);
	}
	return check_done("backoff");
}
