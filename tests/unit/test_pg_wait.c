/* Unit tests of the answer limit (pg_set_answer_limit): against a fake
 * server in a thread of this process, which logs any client in and then
 * never answers, pg_exec() gives up after the limit, as on a lost
 * connection (EX_TEMPFAIL, one line saying why), whether the server reads
 * the statement and says nothing (a stopped backend behind its kernel, a
 * proxy that swallows bytes) or stops reading altogether (a statement too
 * big for the socket's buffers: the send is bounded too). The cancel
 * request sent on giving up is answered here at once; one nobody answers
 * is waited for a second at most. No database needed. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "pg/pg.h"
#include "util/clock.h"

typedef struct fake {
	int			listen_fd;
	int			port;
	bool		reads;			/* reads (and drops) what the client sends */
	bool		cancels;		/* accepts cancel requests (and closes them) */
	atomic_bool done;
	pthread_t	thread;
} fake;

static bool
read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *) buf + got, n - got);

		if (r <= 0)
			return false;
		got += (size_t) r;
	}
	return true;
}

/* The startup packet, then AuthenticationOk, BackendKeyData, ReadyForQuery. */
static bool
log_in(int fd)
{
	static const unsigned char hello[] = {
		'R', 0, 0, 0, 8, 0, 0, 0, 0,
		'K', 0, 0, 0, 12, 0, 0, 0, 42, 0, 0, 0, 7,
		'Z', 0, 0, 0, 5, 'I',
	};
	uint32_t len;
	char *rest;
	bool ok;

	if (!read_full(fd, &len, 4) || (len = ntohl(len)) < 8 || len > 10000)
		return false;
	rest = malloc(len - 4);
	ok = read_full(fd, rest, len - 4);
	free(rest);
	return ok && write(fd, hello, sizeof hello) == (ssize_t) sizeof hello;
}

static void *
fake_main(void *arg)
{
	fake *f = arg;
	int client = accept(f->listen_fd, NULL, NULL);
	char buf[65536];

	if (client < 0 || !log_in(client)) {
		if (client >= 0)
			close(client);
		return NULL;
	}
	while (!atomic_load(&f->done)) {
		struct pollfd p[2] = {{f->listen_fd, f->cancels ? POLLIN : 0, 0}, {client, f->reads ? POLLIN : 0, 0}};

		if (poll(p, 2, 20) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int c = accept(f->listen_fd, NULL, NULL);

			if (c >= 0) {
				read_full(c, buf, 16);	/* the cancel request: taken, never acted on */
				close(c);
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR) && read(client, buf, sizeof buf) <= 0)
			break;
	}
	close(client);
	return NULL;
}

static void
fake_start(fake *f, bool reads, bool cancels)
{
	struct sockaddr_in a = {0};
	socklen_t alen = sizeof a;

	memset(f, 0, sizeof *f);
	f->reads = reads;
	f->cancels = cancels;
	f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(f->listen_fd, (struct sockaddr *) &a, sizeof a);
	listen(f->listen_fd, 8);
	getsockname(f->listen_fd, (struct sockaddr *) &a, &alen);
	f->port = ntohs(a.sin_port);
	pthread_create(&f->thread, NULL, fake_main, f);
}

static void
fake_stop(fake *f)
{
	atomic_store(&f->done, true);
	pthread_join(f->thread, NULL);
	close(f->listen_fd);
}

/* pg_exec of sql (with one parameter, param) against a fake server; its time in ms. */
static int64_t
exec_against(const fake *f, const char *param, cq_err *err, bool *alive)
{
	char conninfo[200];
	const char *values[1] = {param};
	PGconn *conn;
	PGresult *res;
	int64_t t0;

	snprintf(conninfo, sizeof conninfo, "host=127.0.0.1 port=%d user=u dbname=d sslmode=disable "
			 "gssencmode=disable connect_timeout=5", f->port);
	if ((conn = pg_connect(conninfo, err)) == NULL)
		return -1;
	t0 = mono_ms();
	res = pg_exec(conn, "select $1::text", 1, values, PG_ONE, err);
	t0 = mono_ms() - t0;
	CHECK(res == NULL, "a server that never answers gives no result");
	PQclear(res);
	*alive = pg_alive(conn);
	pg_close(conn);
	return t0;
}

/* A wait that does not end fails here, by name, not at the suite's time limit. */
static void
on_alarm(int sig)
{
	static const char msg[] = "not ok test_pg_wait: a wait on a server that never answers did not end\n";

	(void) sig;
	if (write(STDOUT_FILENO, msg, sizeof msg - 1) < 0)
		_exit(2);
	_exit(1);
}

int
main(void)
{
	fake f;
	cq_err err = {0};
	bool alive = true;
	int64_t ms;
	char *big;
	const char *want = "connection to database lost: no answer from the database within 500ms (a test); "
		"the connection was given up";

	signal(SIGALRM, on_alarm);
	alarm(30);
	CHECK(pg_answer_limit() == PG_DEFAULT_ANSWER_LIMIT_MS, "the default limit: %lld ms",
		  (long long) pg_answer_limit());
	pg_set_answer_limit(500, "a test");

	/* A server that takes the statement and never answers. */
	fake_start(&f, true, true);
	ms = exec_against(&f, "x", &err, &alive);
	CHECK(ms >= 450 && ms < 2500, "silent server: given up after the limit (%lld ms)", (long long) ms);
	CHECK(err.code == EX_TEMPFAIL, "silent server: as a lost connection (code %d)", err.code);
	CHECK(strcmp(err.msg, want) == 0, "silent server: says why: [%s]", err.msg);
	CHECK(!alive, "silent server: the connection is given up");
	fake_stop(&f);

	/* A server that stops reading: a statement bigger than the socket buffers. */
	big = malloc(32 << 20);
	memset(big, 'x', (32 << 20) - 1);
	big[(32 << 20) - 1] = '\0';
	fake_start(&f, false, true);
	cq_clear(&err);
	ms = exec_against(&f, big, &err, &alive);
	CHECK(ms >= 450 && ms < 2500, "deaf server: the send is bounded too (%lld ms)", (long long) ms);
	CHECK(err.code == EX_TEMPFAIL && strcmp(err.msg, want) == 0, "deaf server: as a lost connection: %d [%s]",
		  err.code, err.msg);
	fake_stop(&f);
	free(big);

	/* A cancel request nobody answers: waited for a second at most. */
	fake_start(&f, true, false);
	cq_clear(&err);
	ms = exec_against(&f, "x", &err, &alive);
	CHECK(ms >= 1450 && ms < 3500, "unanswered cancel: the limit and a second more (%lld ms)", (long long) ms);
	CHECK(err.code == EX_TEMPFAIL && strcmp(err.msg, want) == 0, "unanswered cancel: as a lost connection: [%s]",
		  err.msg);
	fake_stop(&f);
	return check_done("pg_wait");
}
