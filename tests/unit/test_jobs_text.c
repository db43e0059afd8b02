/*
 * Unit tests of lib/report/jobs_text: what `cronq list` and `cronq show`
 * print from the database's JSON — a fitted table, an error on one line
 * clipped to 80 characters, fields escaped; the same as CSV, whole; a
 * job's attempts with the last ten lines of their output.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "render.h"
#include "report/jobs_text.h"
#include "report/table.h"
#include "util/buf.h"

static void
list(buf *out, const json_t *doc, void *mode)
{
	jobs_list_text(out, doc, mode);
}

static void
test_list(void)
{
	table_mode plain = TABLE_MODE_PLAIN, csv = {TABLE_CSV, false, 0};
	char *got = render_with("[{\"id\": 12, \"status\": \"dead\", \"type\": \"exec\", \"queue\": \"q\\u001b]0;x\","
					   " \"attempts\": 3, \"max_attempts\": 3, \"run_at\": \"2026-03-08T10:00:00Z\","
					   " \"finished_at\": \"2026-03-08T10:05:00Z\", \"error_code\": \"exit\","
					   " \"last_error\": \"line one\\nline two 0123456789012345678901234567890123456789012345678901234567890123456789\"},"
					   " {\"id\": 13, \"status\": \"queued\", \"type\": \"noop\", \"queue\": \"default\","
					   " \"attempts\": 0, \"max_attempts\": 10, \"run_at\": \"2026-03-08T11:00:00Z\"}]",
					   list, &plain);

	CHECK(strcmp(got,
				 "ID  STATUS  TYPE  QUEUE      ATTEMPTS  RUN AT                FINISHED AT           ERROR\n"
				 "12  dead    exec  q\\x1b]0;x  3/3       2026-03-08T10:00:00Z  2026-03-08T10:05:00Z  "
				 "exit: line one line two 01234567890123456789012345678901234567890123456789012...\n"
				 "13  queued  noop  default    0/10      2026-03-08T11:00:00Z                        \n") == 0,
		  "list:\n%s", got);
	free(got);
	got = render_with("[{\"id\": 12, \"status\": \"dead\", \"type\": \"exec\", \"queue\": \"q, \\\"x\\\"\","
					  " \"attempts\": 3, \"max_attempts\": 3, \"run_at\": \"R\", \"finished_at\": null,"
					  " \"error_code\": \"exit\", \"last_error\": \"a\\nb\\u001b\"}]", list, &csv);
	CHECK(strcmp(got, "id,status,type,queue,attempts,run_at,finished_at,error\r\n"
				 "12,dead,exec,\"q, \"\"x\"\"\",3/3,R,,\"exit: a\nb\\x1b\"\r\n") == 0, "list as CSV:\n%s", got);
	free(got);
	got = render_with("[]", list, &plain);
	CHECK(strncmp(got, "ID  STATUS  TYPE", 16) == 0 && strchr(got, '\n') == got + strlen(got) - 1,
		  "no jobs: the header alone: [%s]", got);
	free(got);
}

static void
test_show(void)
{
	buf doc = BUF_INIT, want = BUF_INIT;
	char *got;

	buf_puts(&doc, "{\"id\": 5, \"queue\": \"a\\nb\", \"timeout\": 3600, \"last_error\": \"first\\nsecond\","
			 " \"payload\": {\"k\": [1, 2]}, \"key\": null, \"runs\": [{\"attempt\": 1, \"outcome\": \"failed\","
			 " \"started_at\": \"2026-03-08T10:00:00Z\", \"duration\": 0.0042, \"worker\": \"h:1\","
			 " \"error_code\": \"exit\", \"error\": \"status 1\\nmore\", \"output\": \"");
	for (int i = 1; i <= 12; i++)
		buf_printf(&doc, "out %d\\n", i);
	buf_puts(&doc, "\"}, {\"attempt\": 2, \"outcome\": \"running\"}]}");
	got = render_doc(buf_str(&doc), jobs_show_text);
	buf_puts(&want, "id                5\n"
			 "queue             a b\n"
			 "timeout           1h\n"
			 "last_error        first\n"
			 "                  second\n"
			 "payload           {\"k\":[1,2]}\n"
			 "key               \n"
			 "\n"
			 "runs (2):\n"
			 "  attempt 1: failed, started 2026-03-08T10:00:00Z, took 0.004s, worker h:1\n"
			 "    error: exit: status 1\n"
			 "           more\n"
			 "    output:\n"
			 "    ...\n");
	for (int i = 3; i <= 12; i++)
		buf_printf(&want, "    out %d\n", i);
	buf_puts(&want, "  attempt 2: running\n");
	CHECK(strcmp(got, buf_str(&want)) == 0, "show:\n%s--- expected:\n%s", got, buf_str(&want));
	free(got);
	buf_free(&doc);
	buf_free(&want);
}

int
main(void)
{
	test_list();
	test_show();
	return check_done("jobs_text");
}
