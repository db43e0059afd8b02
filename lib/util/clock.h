/*
 * clock — the monotonic clock in milliseconds, for timeouts, leases and
 * waits (never for times shown or stored).
 */
#ifndef CRONQ_CLOCK_H
#define CRONQ_CLOCK_H

#include <stdint.h>

int64_t mono_ms(void);

#endif
