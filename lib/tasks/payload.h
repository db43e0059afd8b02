/*
 * payload — parsing and validating a job's payload before anything is
 * written: the limits every payload obeys (a JSON object, at most 1 MiB,
 * at most 64 levels deep, no \u0000) and then its task's own rules.
 * Messages are worded exactly as the database's cronq.payload_error().
 */
#ifndef CRONQ_PAYLOAD_H
#define CRONQ_PAYLOAD_H

#include <jansson.h>
#include <stddef.h>

#define PAYLOAD_MAX_BYTES (1024 * 1024)
#define PAYLOAD_MAX_DEPTH 64

/*
 * Parse text (len bytes, need not be NUL-terminated) as a payload. Returns a
 * new reference, or NULL with the reason in err.
 */
json_t *payload_parse(const char *text, size_t len, char *err, size_t errlen);

/*
 * Check that type names a task and payload suits it. payload may be NULL
 * for "{}". 0, or -1 with the reason in err.
 */
int payload_validate(const char *type, const json_t *payload, char *err, size_t errlen);

/* Check the depth limit of an already parsed value: 0 or -1 with err. */
int payload_check_depth(const json_t *value, char *err, size_t errlen);

#endif
