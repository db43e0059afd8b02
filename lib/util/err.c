/* err — see err.h. */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
cq_fail(cq_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	err->detail[0] = '\0';
	err->hint[0] = '\0';
	err->sqlstate[0] = '\0';
	err->routine[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

void
cq_detail(cq_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof err->detail, fmt, ap);
	va_end(ap);
}

void
cq_hint(cq_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof err->hint, fmt, ap);
	va_end(ap);
}

void
cq_clear(cq_err *err)
{
	if (err == NULL)
		return;
	err->code = 0;
	err->msg[0] = '\0';
	err->detail[0] = '\0';
	err->hint[0] = '\0';
	err->sqlstate[0] = '\0';
	err->routine[0] = '\0';
}

void
cq_prefix(cq_err *err, const char *fmt, ...)
{
	char pre[256];
	va_list ap;
	size_t plen, mlen;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	plen = strlen(pre);
	mlen = strlen(err->msg);
	if (plen + mlen >= sizeof err->msg)
		mlen = sizeof err->msg - 1 - plen;
	memmove(err->msg + plen, err->msg, mlen);
	memcpy(err->msg, pre, plen);
	err->msg[plen + mlen] = '\0';
}

void
cq_errbuf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
