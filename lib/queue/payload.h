/*
 * payload — the limits every job's payload obeys before anything is
 * written, whatever its task: at most 1 MiB, at most 64 levels deep, valid
 * JSON without \u0000. A task's own rules are the tasks' (tasks/payload.h).
 * Messages are worded exactly as the database's cronq.payload_error().
 */
#ifndef CRONQ_QUEUE_PAYLOAD_H
#define CRONQ_QUEUE_PAYLOAD_H

#include <jansson.h>
#include <stddef.h>

#define PAYLOAD_MAX_BYTES (1024 * 1024)
#define PAYLOAD_MAX_DEPTH 64

/*
 * Parse text (len bytes, need not be NUL-terminated) as a payload. Returns a
 * new reference, or NULL with the reason in err.
 */
json_t *payload_parse(const char *text, size_t len, char *err, size_t errlen);

/* Check the depth limit of an already parsed value: 0 or -1 with err. */
int payload_check_depth(const json_t *value, char *err, size_t errlen);

#endif
