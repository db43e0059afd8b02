/*
 * file — replace a file's contents atomically, for files another program
 * reads at any moment (node_exporter's textfile collector).
 */
#ifndef CRONQ_FILE_H
#define CRONQ_FILE_H

#include <stddef.h>

#include "util/err.h"

/*
 * Replace path with data[0..len) atomically: a temporary file in the same
 * directory (so rename(2) cannot cross file systems), mode 0644, flushed to
 * disk, then renamed over path. Readers never see a partial file, and the
 * temporary file never outlives a failure. 0, EX_CANTCREAT (no temporary
 * file) or EX_IOERR, with the message in err.
 */
int file_write_atomic(const char *path, const char *data, size_t len, cq_err *err)
	__attribute__((warn_unused_result));

#endif
