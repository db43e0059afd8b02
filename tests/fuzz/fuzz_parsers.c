/*
 * fuzz_parsers — libFuzzer target for the small parsers that read user
 * input without the database: durations, RFC 3339 times, and (first byte
 * 'P') payloads through payload_parse() and every task's validator. Checks
 * round trips where there is one; crashes and sanitizer reports are the
 * rest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "time/rfc3339.h"
#include "queue/payload.h"
#include "tasks/payload.h"
#include "tasks/task.h"
#include "util/duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char err[1024];

	memcpy(text, data, size);
	text[size] = '\0';
	if (size > 0 && text[0] == 'P') {
		json_t *p = payload_parse(text + 1, size - 1, err, sizeof err);

		for (const task_def *const *t = task_all(); *t; t++)
			(void) payload_validate((*t)->name, p, err, sizeof err);
		json_decref(p);
	} else {
		int64_t ms, back, t;
		char buf[64];

		if (duration_parse(text, &ms, err, sizeof err) == 0) {
			if (ms < 0 || ms > DURATION_MAX_MS)
				abort();
			duration_format(ms, buf, sizeof buf);
			if (duration_parse(buf, &back, err, sizeof err) != 0 || back != ms)
				abort();
		}
		(void) rfc3339_parse(text, &t, err, sizeof err);
	}
	free(text);
	return 0;
}
