/*
 * prometheus — the status document of stats_status() in the Prometheus text
 * exposition format, as node_exporter's textfile collector reads it: every
 * family a gauge but cronq_job_duration_seconds (a summary), each with its
 * HELP and TYPE lines, label values escaped, as `promtool check metrics`
 * wants. The metric names are an interface (cronq(1)): add freely, rename
 * none (issue 23 renamed cronq_job_runs_24h once, said in docs/commands.md).
 */
#ifndef CRONQ_PROMETHEUS_H
#define CRONQ_PROMETHEUS_H

#include <jansson.h>

#include "util/buf.h"

/* Append the metrics of doc (a stats_status() document) to out. */
void prometheus_render(buf *out, const json_t *doc);

#endif
