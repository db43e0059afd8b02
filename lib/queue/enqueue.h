/*
 * enqueue — adding jobs: one at a time through cronq.enqueue_job() (the
 * same function the SQL API uses), or in bulk from JSON lines streamed
 * into COPY, all or nothing. Every job is validated here before anything
 * is sent (the limits, and its task's rules through the enqueue_rules_fn
 * the caller passes: the tasks sit above the queue), and again by the
 * database.
 */
#ifndef CRONQ_ENQUEUE_H
#define CRONQ_ENQUEUE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* What a job may set besides its type, payload and time; unset fields
 * take the table's defaults. Shared by enqueue, backfill and schedules. */
typedef struct job_opts {
	const char *queue;			/* NULL: "default" */
	bool		has_priority;
	int			priority;
	int			max_attempts;	/* 0: the default (10) */
	int64_t		timeout_ms;		/* 0: the default (1h) */
} job_opts;

typedef struct enqueue_req {
	const char *type;
	const char *payload;		/* JSON text; NULL means {} */
	const char *run_at;			/* any timestamptz input; NULL: now */
	int64_t		in_ms;			/* with run_at NULL: run this long from now; <0: unset */
	job_opts	opts;
	const char *key;			/* idempotency key, NULL: none */
	const char *limit_key;		/* the job's own key of flow control (tenant:42), NULL: none */
	const char *expires_at;		/* start deadline, any timestamptz input; NULL: none */
	int64_t		expires_ms;		/* with expires_at NULL: deadline this long after run_at; 0: none */
	const char *unique_key;		/* at most one active job with it; NULL: none */
	bool		replace;		/* with unique_key: a waiting holder takes this job's place */
	const char *history;		/* history policy, "all" or "errors"; NULL: all */
	const char *hooks;			/* its hooks, a JSON object's text (queue/compose.h); NULL: none */
	const char *depends_on;		/* the jobs it waits for, an array literal "{12,13}"; NULL: none */
} enqueue_req;

/* What enqueue_parse_line allocated for a request: free with enqueue_owned_free. */
typedef struct enqueue_owned {
	char	   *payload;		/* the payload's exact text */
	char	   *hooks;
	char	   *depends_on;
} enqueue_owned;

void enqueue_owned_free(enqueue_owned *own);

/* What became of a request that wrote no new job (enqueue_one). */
typedef enum enqueue_note {
	ENQUEUE_CREATED,			/* a new job */
	ENQUEUE_KEY_EXISTS,			/* the idempotency key's job: nothing written */
	ENQUEUE_UNIQUE_WAITING,		/* an active job holds the unique key: left alone */
	ENQUEUE_UNIQUE_RUNNING,		/* the holder is running: left alone (replace or not) */
	ENQUEUE_REPLACED,			/* the waiting holder took the payload, run time, deadline */
} enqueue_note;

#define ENQUEUE_MAX_PRIORITY 1000000
#define ENQUEUE_MAX_ATTEMPTS 1000
#define ENQUEUE_MAX_NAME 200
#define ENQUEUE_MAX_KEY 1000

/*
 * A job's task rules: 0, or -1 with the reason in err. payload may be NULL
 * for "{}". tasks/payload.h's payload_validate is the one cronq uses.
 */
typedef int (*enqueue_rules_fn) (const char *type, const json_t *payload, char *err, size_t errlen);

/*
 * Whether s holds a control character, C0, DEL or C1 (as PostgreSQL's
 * [[:cntrl:]] in UTF-8), or a character that is invisible yet reorders or
 * hides what a terminal shows around it: zero-width (U+200B-U+200F) and
 * bidirectional embeddings, overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069).
 */
bool enqueue_has_control(const char *s);

/*
 * Whether s is a history policy: "all" (every attempt leaves a job_runs
 * row) or "errors" (a succeeded attempt with no output leaves none).
 */
bool enqueue_history_valid(const char *s);

/*
 * Check a request without the database: payload limits, task type and
 * rules (by rules), queue, key, history policy and numbers. 0, or
 * EX_DATAERR with the reason in err.
 */
int enqueue_check(const enqueue_req *req, enqueue_rules_fn rules, cq_err *err)
	__attribute__((warn_unused_result));

/*
 * Enqueue one job. *note says what became of it: unless ENQUEUE_CREATED,
 * *id is the job holding the key (or the unique key, then *status its
 * status, "queued" or "failed" or "running", in a buffer of 16).
 */
int enqueue_one(PGconn *conn, const enqueue_req *req, enqueue_rules_fn rules, int64_t *id,
				enqueue_note *note, char status[16], cq_err *err) __attribute__((warn_unused_result));

/*
 * Read one --jsonl line into req (its strings borrowed from *obj, or held
 * by *own: the payload's exact text, the hooks and dependencies built from
 * on_success… and depends_on; the caller json_decref()s *obj and calls
 * enqueue_owned_free(own), both set even on failure). 0, or EX_DATAERR
 * with the reason, without the line number, in err.
 */
int enqueue_parse_line(const char *line, size_t len, enqueue_rules_fn rules, json_t **obj,
					   enqueue_owned *own, enqueue_req *req, cq_err *err)
	__attribute__((warn_unused_result));

/* Progress callback for long operations: lines read so far. */
typedef void (*enqueue_progress) (int64_t lines, bool done);

/*
 * Enqueue one job per line of in (blank lines are skipped), all or nothing:
 * the first bad line is named ("line 7: …") and nothing is written. Lines
 * whose key already exists are skipped. *created gets how many were written,
 * *lines how many jobs were read.
 */
int enqueue_jsonl(PGconn *conn, FILE *in, enqueue_rules_fn rules, enqueue_progress progress,
				  int64_t *lines, int64_t *created, cq_err *err)
	__attribute__((warn_unused_result));

#endif
