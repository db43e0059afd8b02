/* backoff — see backoff.h. */
#include "queue/backoff.h"

/* splitmix64's finaliser: a good 64-bit mix, enough for jitter. */
static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int64_t
backoff_ceiling_ms(int attempt)
{
	int64_t d = BACKOFF_BASE_MS;

	if (attempt < 1)
		attempt = 1;
	for (int i = 1; i < attempt && d < BACKOFF_CAP_MS; i++)
		d *= 2;
	return d < BACKOFF_CAP_MS ? d : BACKOFF_CAP_MS;
}

int64_t
backoff_delay_ms(int attempt, int64_t job_id, uint64_t seed)
{
	int64_t d = backoff_ceiling_ms(attempt);
	int64_t half = d / 2;
	uint64_t h = mix64(seed ^ mix64((uint64_t) job_id ^ ((uint64_t) attempt << 48)));

	return half + (int64_t) (h % (uint64_t) (d - half + 1));
}
