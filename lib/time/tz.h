/*
 * tz — IANA time zones read from the system's TZif files (RFC 8536), with the
 * POSIX TZ rule at the end of each file for instants past its table. A zone
 * is immutable once opened, so threads may share one; nothing here touches
 * the TZ variable or localtime(). Leap-second ("right/") zones are refused.
 *
 * Ownership: tz_open* return a zone the caller frees with tz_free.
 */
#ifndef CRONQ_TZ_H
#define CRONQ_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A local broken-down time, like struct tm but with a full year and 1-12 months. */
struct tz_tm {
	int			year;			/* full year, e.g. 2026 */
	int			mon;			/* 1-12 */
	int			mday;			/* 1-31 */
	int			hour;			/* 0-23 */
	int			min;			/* 0-59 */
	int			sec;			/* 0-59 */
	int			wday;			/* 0-6, 0 = Sunday */
	int			yday;			/* 0-365, 0 = 1 January */
	int			utoff;			/* seconds east of UTC in effect */
};

typedef struct tz tz;

/*
 * Open zone `name` (e.g. "Europe/Paris") from $TZDIR or /usr/share/zoneinfo.
 * "UTC" always works, even without any zone files. Names that are absolute,
 * contain "..", or hold unusual characters are refused before any file is
 * touched, and so are the host-dependent names (localtime, posixrules,
 * Factory, posix/..., right/...), so that every runner computes the same
 * instants. On failure: NULL and a one-line message in err.
 */
tz		   *tz_open(const char *name, char *err, size_t errlen)
			__attribute__((warn_unused_result));

/*
 * A zone made of a POSIX TZ rule alone, e.g. "CET-1CEST,M3.5.0,M10.5.0/3",
 * with RFC 8536's extensions (hours -167..167 in transition times). Meant for
 * tests and for checking a rule; tz_name() returns the rule.
 */
tz		   *tz_open_posix(const char *rule, char *err, size_t errlen)
			__attribute__((warn_unused_result));

/* A zone parsed from TZif bytes already in memory, named `name`. */
tz		   *tz_open_tzif(const char *name, const void *data, size_t len,
						 char *err, size_t errlen)
			__attribute__((warn_unused_result));

void		tz_free(tz *zone);
const char *tz_name(const tz *zone);

/* Offset, in seconds east of UTC, in effect at UTC instant t. */
int			tz_offset_at(const tz *zone, int64_t t);

/*
 * Offset in effect at t, and in *until the first instant after t at which it
 * may change (INT64_MAX if it never does): the offset is constant over
 * [t, *until). A change that turns out to keep the same offset is allowed.
 */
int			tz_offset_until(const tz *zone, int64_t t, int64_t *until);

/* Local broken-down time of instant t in zone. */
void		tz_local(const tz *zone, int64_t t, struct tz_tm *out);

/*
 * The proleptic Gregorian calendar, for years within +-10^12: days since
 * 1970-01-01 of a date, and the date of a day.
 */
int64_t		tz_days_from_civil(int64_t year, int mon, int mday);
/* Floor division (rounds toward minus infinity), and the Gregorian leap rule. */
int64_t		tz_floor_div(int64_t a, int64_t b);
bool		tz_is_leap(int64_t year);
/* Days in month mon (1-12) of year. */
int			tz_month_days(int64_t year, int mon);
void		tz_civil_from_days(int64_t days, int64_t *year, int *mon, int *mday);

/*
 * Broken-down time of instant t on a clock utoff seconds east of UTC (0 for
 * UTC itself). Instants beyond about a billion years either side are clamped.
 */
void		tz_break_down(int64_t t, int utoff, struct tz_tm *out);

#endif
