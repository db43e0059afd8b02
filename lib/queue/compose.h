/*
 * compose — what a job may carry besides its own work: hooks (job specs
 * enqueued when it succeeds, fails, goes dead or recovers) and the jobs
 * it waits for. The database enforces the same rules (sql/0017); these
 * give the command line its messages before anything is sent.
 */
#ifndef CRONQ_COMPOSE_H
#define CRONQ_COMPOSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The hook events, as the keys of a job's hooks: on_success, on_failure,
 * on_dead, on_recover; NULL-terminated. */
extern const char *const compose_events[];

/* A job spec's rules for its type and payload (payload NULL for {}): 0, or
 * -1 with the reason in why. The same as enqueue_rules_fn. */
typedef int (*compose_rules_fn) (const char *type, const json_t *payload, char *why, size_t len);

/*
 * Add the hook event ("on_failure") with spec to *hooks (created when
 * NULL): spec is a JSON object ({"type": "exec", "payload": {…}}) or a
 * bare task name ("noop"). 0, or -1 with the reason in why (bad JSON, an
 * event given twice). The spec's content is compose_hooks_check's.
 */
int compose_hook_add(json_t **hooks, const char *event, const char *spec, char *why, size_t len);

/*
 * Whether hooks (a JSON object) is one cronq stores: known events, each a
 * spec with type (required), payload, queue, priority, max_attempts and
 * timeout (whole seconds), the payload valid for its type by rules. 0, or
 * -1 with the reason, naming the event, in why.
 */
int compose_hooks_check(const json_t *hooks, compose_rules_fn rules, char *why, size_t len);

/*
 * Append the job ids in arg ("12", or "12,13") to ids (*n of them, grown
 * as needed). 0, or -1 with the reason in why.
 */
int compose_ids_add(int64_t **ids, size_t *n, const char *arg, char *why, size_t len);

#endif
