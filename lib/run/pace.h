/*
 * pace — fair sharing, pure: how many jobs a worker claims next. A worker
 * never holds claimed jobs it cannot start soon: it starts by claiming one
 * job, claims more while its jobs finish quickly (up to --batch, which is
 * for draining many quick jobs), and one again after slow ones. Whatever
 * it claims, a job still waiting PACE_HOLD_MS after the claim is given
 * back (worker.c) for an idle worker to start. No I/O, no state: tested
 * by tests/unit/test_pace.c.
 */
#ifndef CRONQ_RUN_PACE_H
#define CRONQ_RUN_PACE_H

#include <stdint.h>

/* The longest a claimed job waits, running but not started, behind others. */
#define PACE_HOLD_MS 250
/* How much one claim may grow on the last: --batch 1000 in four claims. */
#define PACE_GROWTH 8

/*
 * The next claim's size, after a batch claimed with limit in which
 * started jobs ran in elapsed_ms: as many jobs as take about half
 * PACE_HOLD_MS at that pace, at most PACE_GROWTH times the last limit and
 * at most max (--batch), at least 1. Nothing started: the limit stays.
 */
int pace_next(int limit, int max, int started, int64_t elapsed_ms);

#endif
