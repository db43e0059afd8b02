/*
 * backoff — how long a failed job waits before its next attempt:
 * exponential, capped, with "equal jitter" (half fixed, half random).
 *
 *   d(n)     = min(BACKOFF_CAP, BACKOFF_BASE * 2^(n-1))     n = attempts made
 *   delay(n) = d(n)/2 + r * d(n)/2,   r uniform in [0, 1]
 *
 * r comes from a hash of (seed, job id, attempt), so a given seed gives the
 * same delays whatever the order jobs run in. Pure; no clock, no database.
 */
#ifndef CRONQ_BACKOFF_H
#define CRONQ_BACKOFF_H

#include <stdint.h>

#define BACKOFF_BASE_MS 10000			/* 10 s */
#define BACKOFF_CAP_MS  (3600 * 1000)	/* 1 h */

/* The un-jittered ceiling d(n) in ms, for attempt >= 1. */
int64_t backoff_ceiling_ms(int attempt);
/* The delay after the attempt-th failed attempt of job_id, in ms. */
int64_t backoff_delay_ms(int attempt, int64_t job_id, uint64_t seed);

#endif
