/*
 * attempt — one attempt of one job: find its task, parse and check its
 * payload, run it (the task calls worker_tick and borrows sessions from
 * sessions.c), ask outcome_for() what the way it ended means, and leave
 * the outcome pending in the job's slot for slots.c to record.
 */
#include <jansson.h>
#include <string.h>

#include "pg/pg.h"
#include "queue/backoff.h"
#include "run/outcome.h"
#include "run/run_int.h"
#include "tasks/payload.h"
#include "util/clock.h"

/* Run job i of the batch and leave its outcome pending. */
void
attempt_run(worker *w, int i)
{
	slot *s = &w->slots[i];
	const claimed_job *j = s->job;
	task_result *r = &s->res;
	job_outcome *o = &s->out;
	const task_def *t = task_find(j->type);
	task_ctx ctx = {worker_tick, w, worker_session, worker_author_session, worker_author_release,
					worker_session_lost,
					w->sh->o->exec_dir, w->sh->o->kill_grace_ms, w->sh->o->exec_uid, w->sh->o->exec_gid,
					w->sh->o->exec_home};
	/* Parsed only now, and freed after: one payload alive at a time. */
	json_t *payload = json_loads(j->payload_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	task_job tj = {j->id, j->attempt, j->type, j->queue, payload, j->payload_text,
				   j->idempotency_key, j->scheduled_for, j->enqueued_by};
	char why[1024];
	int64_t start = mono_ms();
	outcome_decision d;

	w->cur = i;
	w->cur_start = start;
	w->stopped = TASK_GO;
	w->deadline = j->timeout_ms > 0 ? start + j->timeout_ms : 0;
	memset(r, 0, sizeof *r);

	if (s->cancel)
		w->stopped = TASK_STOP_CANCELLED;
	else if (t == NULL)
		task_result_set(r, TASK_PERMANENT, "unknown_task", "unrecognized task type \"%s\"", j->type);
	else if (payload == NULL || payload_validate(j->type, payload, why, sizeof why) != 0)
		task_result_set(r, TASK_PERMANENT, "bad_payload", "%s",
						payload ? why : "stored payload is not valid JSON");
	else
		t->run(&ctx, &tj, r);
	json_decref(payload);

	d = outcome_for(w->stopped, r, j->timeout_ms, w->unavailable);
	w->cur = -1;
	w->deadline = 0;
	/*
	 * A stopped task may have cancelled a query; libpq's cancel request can
	 * arrive late and hit whatever runs next on that session. Never reuse it.
	 */
	if (d.stop != TASK_GO && w->session) {
		pg_close(w->session);
		w->session = NULL;
	}

	memset(o, 0, sizeof *o);
	o->id = j->id;
	o->attempt = j->attempt;
	o->worker = w->id;
	o->base_time = w->batch.claimed_at;
	o->start_ms = start - w->batch_mono;
	o->end_ms = mono_ms() - w->batch_mono;
	o->delay_ms = backoff_delay_ms(j->attempt, j->id, w->sh->o->seed);
	o->others = others_job(w, j);

	if (!d.record) {
		/* Nothing can be recorded; a later run rescues the lease. */
		s->state = SLOT_DONE;
		task_result_clear(r);
		return;
	}
	if (d.replace)
		task_result_set(r, d.status, d.error_code, "%s", d.message);
	o->outcome = d.outcome;
	o->permanent = d.permanent;
	o->error_code = r->error_code[0] ? r->error_code : NULL;
	o->error = r->error;
	o->output = r->output;
	o->err_output = r->err_output;
	o->result = r->result;
	s->state = SLOT_PENDING;
}
