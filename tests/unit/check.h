/*
 * check.h — the whole unit-test "framework": CHECK(cond, fmt, ...) counts a
 * pass or prints a failure with its place; check_done() prints the closing
 * "N passed, N failed" line and gives the exit status. Header-only on purpose.
 */
#ifndef CRONQ_CHECK_H
#define CRONQ_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int check_passed;
static int check_failed;

static void check_report(bool ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
check_report(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		check_passed++;
		return;
	}
	check_failed++;
	printf("not ok %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

#define CHECK(cond, ...) check_report((cond), __FILE__, __LINE__, __VA_ARGS__)

static inline int
check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
