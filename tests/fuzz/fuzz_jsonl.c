/*
 * fuzz_jsonl — libFuzzer target for `cronq enqueue --jsonl` line parsing
 * (enqueue_parse_line: JSON, fields, the payload's exact text, every
 * check before COPY), without a database.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queue/enqueue.h"
#include "tasks/payload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enqueue_req req;
	json_t *obj = NULL;
	enqueue_owned own;
	cq_err err;

	if (enqueue_parse_line((const char *) data, size, payload_validate, &obj, &own, &req, &err) == 0) {
		/* An accepted line names a type and its payload, if any, is valid JSON text. */
		if (req.type == NULL)
			abort();
		if (own.payload) {
			json_t *p = json_loads(own.payload, JSON_DECODE_ANY, NULL);

			if (p == NULL)
				abort();
			json_decref(p);
		}
	}
	json_decref(obj);
	enqueue_owned_free(&own);
	return 0;
}
