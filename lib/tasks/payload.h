/*
 * payload — a payload against its task's rules: the type names a task, the
 * payload is a JSON object, and the task's validator accepts it. The limits
 * every payload obeys are the queue's (queue/payload.h). Messages are
 * worded exactly as the database's cronq.payload_error().
 */
#ifndef CRONQ_TASKS_PAYLOAD_H
#define CRONQ_TASKS_PAYLOAD_H

#include <jansson.h>
#include <stddef.h>

/*
 * Check that type names a task and payload suits it. payload may be NULL
 * for "{}". 0, or -1 with the reason in err. An enqueue_rules_fn.
 */
int payload_validate(const char *type, const json_t *payload, char *err, size_t errlen);

#endif
