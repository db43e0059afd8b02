/*
 * purge — deleting finished jobs and their runs, oldest first, in small
 * batches (each its own short transaction), so runners claiming new jobs
 * never wait on it. Used by the purge task (tasks/purge.c) and by
 * `cronq purge`.
 */
#ifndef CRONQ_PURGE_H
#define CRONQ_PURGE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

typedef struct purge_rule {
	const char *status;			/* succeeded, dead or cancelled */
	int64_t		older_than_ms;	/* finished longer ago than this */
} purge_rule;

#define PURGE_MAX_RULES 3
#define PURGE_BATCH 1000

/* The terminal statuses, and whether s is one. */
bool purge_status_valid(const char *s);

/*
 * Read a purge task's payload into rules: {"older_than": D, "statuses": [...]}
 * (statuses default to succeeded and cancelled) or {"older_than": {status: D}}.
 * 0, or -1 with the reason worded as the database's payload rules.
 */
int purge_rules_from_payload(const json_t *payload, purge_rule *rules, int *n,
							 char *err, size_t errlen);

/*
 * Delete, rule by rule, every job of that status finished longer ago than
 * its duration, with its runs; but for the jobs of a schedule with a keep
 * of N (cronq.schedules.keep), whose age does not count: its newest N
 * finished jobs stay, and those beyond them of that status go. stop (may
 * be NULL) is asked between batches. *deleted counts jobs. Then the
 * occurrence ledger's rows of the jobs gone, and the dependency links a
 * statement left behind (cronq.sweep_links(), sql/0032).
 */
int purge_run(PGconn *conn, const purge_rule *rules, int n, bool (*stop) (void *arg),
			  void *arg, void (*progress) (int64_t deleted), int64_t *deleted, cq_err *err)
	__attribute__((warn_unused_result));

#endif
