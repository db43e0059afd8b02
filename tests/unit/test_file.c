/*
 * Unit tests of lib/util/file: file_write_atomic writes, replaces, gives
 * the file mode 0644, and leaves no temporary file behind, on success or
 * failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/file.h"
#include "util/xalloc.h"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *data = xmalloc(4096);
	size_t n;

	if (f == NULL) {
		free(data);
		return NULL;
	}
	n = fread(data, 1, 4095, f);
	data[n] = '\0';
	fclose(f);
	return data;
}

/* Entries of dir other than . and .. */
static int
entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

int
main(void)
{
	char dir[] = "/tmp/cronq-test-file.XXXXXX";
	char *path, *sub, *data;
	cq_err err = {0};
	struct stat st;
	int rc;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	path = xasprintf("%s/metrics.prom", dir);

	rc = file_write_atomic(path, "first\n", 6, &err);
	data = slurp(path);
	CHECK(rc == 0 && data && strcmp(data, "first\n") == 0, "writes a new file: rc %d, [%s]", rc, data ? data : "(none)");
	free(data);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644, not mkstemp's 0600: %o",
		  (unsigned) (st.st_mode & 0777));

	rc = file_write_atomic(path, "second, longer\n", 15, &err);
	data = slurp(path);
	CHECK(rc == 0 && data && strcmp(data, "second, longer\n") == 0, "replaces it: [%s]", data ? data : "(none)");
	free(data);
	rc = file_write_atomic(path, "", 0, &err);
	data = slurp(path);
	CHECK(rc == 0 && data && data[0] == '\0', "an empty document empties it");
	free(data);
	CHECK(entries(dir) == 1, "no temporary file left: %d entries", entries(dir));

	/* The target is a directory: the rename fails, the temporary file goes. */
	sub = xasprintf("%s/sub", dir);
	mkdir(sub, 0755);
	rc = file_write_atomic(sub, "x", 1, &err);
	CHECK(rc == EX_IOERR && strstr(err.msg, "could not rename file") != NULL, "rename failure: %d %s", rc, err.msg);
	CHECK(entries(dir) == 2, "no temporary file after a failure: %d entries", entries(dir));
	rmdir(sub);
	free(sub);

	/* No such directory: no temporary file can be made. */
	sub = xasprintf("%s/missing/metrics.prom", dir);
	rc = file_write_atomic(sub, "x", 1, &err);
	CHECK(rc == EX_CANTCREAT && strstr(err.msg, "could not create a temporary file for") != NULL,
		  "missing directory: %d %s", rc, err.msg);
	free(sub);

	unlink(path);
	free(path);
	rmdir(dir);
	return check_done("file");
}
