/* file — see file.h. */
#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/xalloc.h"

int
file_write_atomic(const char *path, const char *data, size_t len, cq_err *err)
{
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd, rc = 0;
	size_t done = 0;

	if ((fd = mkstemp(tmp)) < 0) {
		cq_fail(err, EX_CANTCREAT, "could not create a temporary file for \"%s\": %s", path, strerror(errno));
		free(tmp);
		return EX_CANTCREAT;
	}
	/* mkstemp makes it 0600; the collector usually runs as another user. */
	if (fchmod(fd, 0644) != 0)
		rc = -1;
	while (rc == 0 && done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -1;
		else
			done += (size_t) n;
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = -1;
	if (rc != 0)
		cq_fail(err, EX_IOERR, "could not write file \"%s\": %s", tmp, strerror(errno));
	if (close(fd) != 0 && rc == 0) {
		cq_fail(err, EX_IOERR, "could not write file \"%s\": %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		cq_fail(err, EX_IOERR, "could not rename file \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlink(tmp);
	free(tmp);
	return rc ? EX_IOERR : 0;
}
