/* check — see check.h. */
#include "report/check.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/stats.h"
#include "util/buf.h"
#include "util/duration.h"
#include "util/utf8.h"

static const char *const state_names[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};

/* One judged number: its words in the message and its perfdata entry. */
typedef struct item {
	const char *label;			/* "last wake" */
	const char *perf;			/* perfdata label, "silence" */
	const char *suffix;			/* after the value ("ago"), or NULL */
	bool		duration;
	bool		known;			/* false: no value (no wake ever) */
	int64_t		value;			/* count, or milliseconds */
	const check_limit *lim;
	const char *detail;			/* "(nightly)", or NULL */
} item;

/* The state an item is in: an unknown value exceeds every level given. */
static int
judge(const item *it, int64_t *level)
{
	const check_limit *l = it->lim;

	if (l->has_crit && (!it->known || it->value > l->crit)) {
		*level = l->crit;
		return CHECK_CRITICAL;
	}
	if (l->has_warn && (!it->known || it->value > l->warn)) {
		*level = l->warn;
		return CHECK_WARNING;
	}
	return CHECK_OK;
}

/* A human value: "1m30s" (whole seconds) or "7". */
static void
put_human(buf *out, int64_t v, bool duration, bool whole_seconds)
{
	char d[64];

	if (!duration) {
		buf_printf(out, "%" PRId64, v);
		return;
	}
	duration_format(whole_seconds ? v / 1000 * 1000 : v, d, sizeof d);
	buf_puts(out, d);
}

/* A perfdata number: seconds (with milliseconds when needed) or a count. */
static void
put_perf(buf *out, int64_t v, bool duration)
{
	if (!duration)
		buf_printf(out, "%" PRId64, v);
	else if (v % 1000 == 0)
		buf_printf(out, "%" PRId64, v / 1000);
	else
		buf_printf(out, "%" PRId64 ".%03" PRId64, v / 1000, v % 1000);
}

/* Flatten a message (libpq's are multi-line) onto one line. */
static void
put_one_line(buf *out, const char *s)
{
	bool space = false;

	while (isspace((unsigned char) *s))
		s++;
	for (; *s; s++) {
		if (isspace((unsigned char) *s)) {
			space = true;
			continue;
		}
		if (space)
			buf_putc(out, ' ');
		space = false;
		buf_putc(out, *s);
	}
}

/* s with its control characters escaped, flattened onto one line. */
static void
put_clean(buf *out, const char *s)
{
	char *clean = utf8_printable(s, false);

	put_one_line(out, clean);
	free(clean);
}

/*
 * ", N schedule(s) VERB (NAME: why)" on out and " KEY=N" on perf, when n >
 * 0. The reason is the database's or the planner's words, which may quote
 * an author's payload: escaped, on one line.
 */
static void
put_schedules(buf *out, buf *perf, int64_t n, const char *one, const char *many, const char *name,
			  const char *key)
{
	if (n <= 0)
		return;
	buf_printf(out, ", %" PRId64 " schedule%s (", n, n == 1 ? one : many);
	put_clean(out, name);
	buf_puts(out, ")");
	buf_printf(perf, " %s=%" PRId64, key, n);
}

/*
 * What is wrong whatever the limits given: no runner ever woke (cron does
 * not call "cronq run", or it never reached the database), or an enabled
 * schedule a wake cannot plan, or whose jobs are refused (it would never
 * run).
 */
static int
always_wrong(const stats_health *h)
{
	int state = CHECK_OK;

	if (!h->woke || h->unplannable > 0 || h->refused > 0)
		state = CHECK_CRITICAL;
	return state;
}

int
check_verdict(const stats_health *h, const check_limits *lim, buf *line)
{
	buf out = BUF_INIT, perf = BUF_INIT;
	char detail[300] = "";
	int state = always_wrong(h);

	if (h->overdue_name[0])
		snprintf(detail, sizeof detail, "(%.250s)", h->overdue_name);
	{
		const item items[] = {
			{"lag", "lag", NULL, true, true, h->lag_ms, &lim->lag, NULL},
			{"dead", "dead", NULL, false, true, h->dead, &lim->dead, NULL},
			{"failed", "failed", NULL, false, true, h->failed, &lim->failed, NULL},
			{"stuck", "stuck", NULL, false, true, h->stuck, &lim->stuck, NULL},
			{"last wake", "silence", "ago", true, h->woke, h->silence_ms, &lim->silence, NULL},
			{"overdue", "overdue", NULL, true, true, h->overdue_ms, &lim->overdue, detail[0] ? detail : NULL},
		};

		for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
			const item *it = &items[i];
			int64_t level = 0;
			int s = judge(it, &level);

			if (s > state)
				state = s;
			buf_printf(&out, "%s%s ", i ? ", " : "", it->label);
			if (it->known) {
				put_human(&out, it->value, it->duration, true);
				if (it->suffix)
					buf_printf(&out, " %s", it->suffix);
			} else
				buf_puts(&out, "never");
			if (s != CHECK_OK && it->known) {
				buf_puts(&out, " > ");
				put_human(&out, level, it->duration, false);
			}
			if (it->detail)
				buf_printf(&out, " %s", it->detail);

			buf_printf(&perf, " %s=", it->perf);
			if (it->known) {
				put_perf(&perf, it->duration ? it->value / 1000 * 1000 : it->value, it->duration);
				if (it->duration)
					buf_putc(&perf, 's');
			} else
				buf_putc(&perf, 'U');
			if (it->lim->has_warn || it->lim->has_crit) {
				buf_putc(&perf, ';');
				if (it->lim->has_warn)
					put_perf(&perf, it->lim->warn, it->duration);
				if (it->lim->has_crit) {
					buf_putc(&perf, ';');
					put_perf(&perf, it->lim->crit, it->duration);
				}
			}
		}
	}
	put_schedules(&out, &perf, h->unplannable, " cannot run", "s cannot run", h->unplannable_name, "unplannable");
	put_schedules(&out, &perf, h->refused, "'s jobs are refused", "s' jobs are refused", h->refused_name,
				  "refused");
	if (h->paused > 0) {
		buf_printf(&out, ", %" PRId64 " key%s paused (%s%s)", h->paused, h->paused == 1 ? "" : "s",
				   h->paused_key, h->paused > 1 ? ", ..." : "");
		buf_printf(&perf, " paused=%" PRId64, h->paused);
	}
	if (h->full > 0) {
		buf_printf(&out, ", %" PRId64 " limit%s full (%s%s)", h->full, h->full == 1 ? "" : "s",
				   h->full_key, h->full > 1 ? ", ..." : "");
		buf_printf(&perf, " limits_full=%" PRId64, h->full);
	}
	buf_printf(line, "CRONQ %s - %s |%s", state_names[state], buf_str(&out), buf_str(&perf));
	buf_free(&out);
	buf_free(&perf);
	return state;
}

int
check_unknown(const char *msg, buf *out)
{
	buf_puts(out, "CRONQ UNKNOWN - ");
	put_clean(out, msg);
	return CHECK_UNKNOWN;
}
