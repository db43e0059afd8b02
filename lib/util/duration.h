/*
 * duration — parse and format the durations cronq's flags and payloads take:
 * "90s", "5m", "2h", "1d", "1h30m", "250ms", decimals ("1.5h", "0.5d"),
 * PostgreSQL's unit words ("1 hour", "2 hours 30 minutes"), or a bare
 * number of seconds. The grammar is at the top of duration.c.
 * Pure; knows nothing of PostgreSQL intervals beyond printing one.
 */
#ifndef CRONQ_DURATION_H
#define CRONQ_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The longest duration accepted anywhere: 100 years, in milliseconds. */
#define DURATION_MAX_MS ((int64_t) 100 * 366 * 24 * 3600 * 1000)

/* What to say to someone whose duration was refused. */
#define DURATION_HINT "A duration is numbers with units (ms, s, m, h, d, w or their words), largest first: 90s, 1h30m, 1.5h, \"2 hours 30 minutes\"."

/*
 * Parse text into milliseconds. Returns 0, or -1 with a one-line reason in
 * err ("unrecognized unit \"x\"", "empty duration"…). Negative durations are refused.
 */
int duration_parse(const char *text, int64_t *ms, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* Format ms as the shortest unit string ("1h30m", "90s" → "1m30s", "250ms"). */
void duration_format(int64_t ms, char *buf, size_t len);

#endif
