/*
 * supervisor — see supervisor.h. Descendants are killed a generation at a
 * time: the supervisor's own children, whose process IDs cannot be reused
 * before it reaps them, so it never signals a process that is not its
 * job's; the children of those it killed become its own (it is their
 * subreaper) and go in the next round, until it has no child left.
 */
#include "tasks/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The standard descriptors, then the runner's socket, then the result
 * pipe (which the program gets as its descriptor 3). */
#define CTL_FD 3
#define RESULT_FD 4
#define PROGRAM_RESULT_FD 3

/* The write end of the SIGCHLD self-pipe (the handler's only state). */
static int chld_w = -1;

static void
on_chld(int sig)
{
	int saved = errno;

	(void) sig;
	if (write(chld_w, "", 1) < 0) {
		/* Full: a wake-up is pending anyway. */
	}
	errno = saved;
}

static void
set_signal(int sig, void (*handler) (int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* The signals the runner's terminal or service manager may send a group. */
static const int quiet_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

static void
close_from(int low)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned) low, ~0U, 0) == 0)
		return;
#endif
	{
		struct rlimit rl;
		int high = 65536;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t) high)
			high = (int) rl.rlim_cur;
		for (int fd = low; fd < high; fd++)
			close(fd);
	}
}

/* dst = prefix followed by n in decimal; dst must hold 64 bytes. */
static void
path_with_pid(char *dst, const char *prefix, long n, const char *suffix)
{
	char digits[24];
	int k = 0;
	size_t len = strlen(prefix);

	memcpy(dst, prefix, len);
	do {
		digits[k++] = (char) ('0' + n % 10);
		n /= 10;
	} while (n > 0 && k < (int) sizeof digits);
	while (k > 0)
		dst[len++] = digits[--k];
	memcpy(dst + len, suffix, strlen(suffix) + 1);
}

/* The parent of process pid (from /proc/PID/stat), or -1. */
static long
parent_of(long pid)
{
	char path[64], buf[256], *p = NULL;
	ssize_t n;
	long ppid = 0;
	int fd;

	path_with_pid(path, "/proc/", pid, "/stat");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "PID (COMM) S PPID …": COMM may hold anything, ')' too. */
	for (char *q = buf; *q; q++)
		if (*q == ')')
			p = q;
	if (p == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
		return -1;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		ppid = ppid * 10 + (*p - '0');
	return ppid;
}

/* Without /proc/thread-self/children: every process's parent, from /proc. */
static void
kill_children_by_scan(pid_t self)
{
	struct proc_dirent {
		uint64_t	d_ino;
		int64_t		d_off;
		unsigned short d_reclen;
		unsigned char d_type;
		char		d_name[];
	};
	char buf[4096] __attribute__((aligned(8)));
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dir < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			struct proc_dirent *d = (struct proc_dirent *) (void *) (buf + off);
			long pid = 0;
			const char *c = d->d_name;

			off += d->d_reclen;
			for (; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			if (*c == '\0' && pid > 0 && pid != self && parent_of(pid) == self)
				kill((pid_t) pid, SIGKILL);
		}
	}
	close(dir);
}

/*
 * SIGKILL to every child of this (single-threaded) process. Only children:
 * their IDs stay theirs until we reap them, which we do not do meanwhile.
 */
static void
kill_children(pid_t self)
{
	char buf[1024];
	long pid = -1;
	ssize_t n;
	int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		kill_children_by_scan(self);
		return;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9')
				pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
			else if (pid > 0) {
				kill((pid_t) pid, SIGKILL);
				pid = -1;
			}
		}
	if (pid > 0)
		kill((pid_t) pid, SIGKILL);
	close(fd);
}

/* Kill every descendant and reap them all: returns when there is no child. */
static void
kill_all(pid_t self)
{
	long nap_ns = 1000000;

	for (;;) {
		struct timespec ts;
		pid_t w;
		int st;

		kill_children(self);
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (w < 0 && errno == ECHILD)
			return;
		ts.tv_sec = 0;
		ts.tv_nsec = nap_ns;
		nanosleep(&ts, NULL);
		if (nap_ns < 100000000)
			nap_ns *= 2;
	}
}

/* sig to the program's process group, and to the program if it left it. */
static void
signal_program(pid_t prog, int sig)
{
	kill(-prog, sig);
	if (getpgid(prog) != prog)
		kill(prog, sig);
}

static void __attribute__((noreturn))
report_and_exit(int fd, int32_t event, int32_t value)
{
	supervisor_report r = {event, value};

	if (write(fd, &r, sizeof r) < 0) {
		/* Nobody to tell. */
	}
	_exit(127);
}

/* In the program's process, between fork and exec: never returns. */
static void __attribute__((noreturn))
program(const supervisor_job *job, int report_fd, pid_t supervisor)
{
	sigset_t none;

	/* The result pipe in place of the runner's socket (dup2 clears close-on-exec). */
	if (dup2(RESULT_FD, PROGRAM_RESULT_FD) < 0)
		report_and_exit(report_fd, SUPERVISOR_NO_FORK, errno);
	for (size_t i = 0; i < sizeof quiet_signals / sizeof quiet_signals[0]; i++)
		set_signal(quiet_signals[i], SIG_DFL, 0);
	set_signal(SIGCHLD, SIG_DFL, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	/* The exec user, with no supplementary group of the runner's. */
	if (job->uid >= 0 && (setgroups(0, NULL) != 0 || setresgid((gid_t) job->gid, (gid_t) job->gid, (gid_t) job->gid) != 0 ||
						  setresuid((uid_t) job->uid, (uid_t) job->uid, (uid_t) job->uid) != 0))
		report_and_exit(report_fd, SUPERVISOR_NO_USER, errno);
	/* Should the supervisor itself be killed, the program goes with it
	 * (set after the change of user, which clears it). */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != supervisor)
		_exit(127);
	if (chdir(job->dir) != 0)
		report_and_exit(report_fd, SUPERVISOR_NO_CHDIR, errno);
	execve(job->path, job->argv, job->envp);
	report_and_exit(report_fd, SUPERVISOR_NO_EXEC, errno);
}

void
supervisor_main(const supervisor_job *job)
{
	pid_t self = getpid(), prog;
	int out = fcntl(job->out, F_DUPFD_CLOEXEC, 10);
	int err = fcntl(job->err, F_DUPFD_CLOEXEC, 10);
	int result = fcntl(job->result, F_DUPFD_CLOEXEC, 10);
	int ctl = fcntl(job->ctl, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDWR);
	int chld[2], rep[2];
	supervisor_report r = {0, 0};
	bool ctl_open = true, rep_open = true;
	int status = 0;
	sigset_t none;

	if (out < 0 || err < 0 || result < 0 || ctl < 0)
		_exit(1);
	/*
	 * 0: /dev/null, 1 and 2: the output pipes (for the program), 3: the
	 * runner, 4: the result pipe (for the program, as its 3).
	 */
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(err, STDERR_FILENO);
	dup2(ctl, CTL_FD);
	fcntl(CTL_FD, F_SETFD, FD_CLOEXEC);
	dup2(result, RESULT_FD);
	fcntl(RESULT_FD, F_SETFD, FD_CLOEXEC);
	/* What other workers opened: their runner's socket must close when it dies. */
	close_from(RESULT_FD + 1);

	/* Out of the runner's group: a kill of that group must leave us to clean up. */
	setpgid(0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	for (size_t i = 0; i < sizeof quiet_signals / sizeof quiet_signals[0]; i++)
		set_signal(quiet_signals[i], SIG_IGN, 0);
	if (pipe2(chld, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(rep, O_CLOEXEC) != 0)
		report_and_exit(CTL_FD, SUPERVISOR_NO_FORK, errno);
	chld_w = chld[1];
	set_signal(SIGCHLD, on_chld, SA_RESTART | SA_NOCLDSTOP);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if ((prog = fork()) < 0)
		report_and_exit(CTL_FD, SUPERVISOR_NO_FORK, errno);
	if (prog == 0)
		program(job, rep[1], self);
	setpgid(prog, prog);		/* as the program does: no signal races its own call */
	close(rep[1]);
	fcntl(rep[0], F_SETFL, O_NONBLOCK);
	/* The pipes are the program's now: their end means the program's end. */
	close(RESULT_FD);
	if (null >= 0) {
		dup2(STDIN_FILENO, STDOUT_FILENO);
		dup2(STDIN_FILENO, STDERR_FILENO);
	} else {
		close(STDOUT_FILENO);
		close(STDERR_FILENO);
	}

	for (;;) {
		struct pollfd p[3] = {
			{ctl_open ? CTL_FD : -1, POLLIN, 0},
			{chld[0], POLLIN, 0},
			{rep_open ? rep[0] : -1, POLLIN, 0},
		};
		char c[64];
		ssize_t n;
		pid_t w;
		int st;
		bool ended = false;

		/* The timeout only guards against a lost wake-up. */
		poll(p, 3, 1000);
		if (ctl_open && p[0].revents) {
			n = read(CTL_FD, c, sizeof c);
			if (n > 0) {
				for (ssize_t i = 0; i < n; i++)
					if (c[i] == SUPERVISOR_TERM)
						signal_program(prog, SIGTERM);
					else if (c[i] == SUPERVISOR_KILL)
						signal_program(prog, SIGKILL);
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				/* The runner is gone: so is its job. */
				ctl_open = false;
				signal_program(prog, SIGKILL);
			}
		}
		while (read(chld[0], c, sizeof c) > 0)
			;
		if (rep_open && p[2].revents) {
			supervisor_report got;

			n = read(rep[0], &got, sizeof got);
			if (n == (ssize_t) sizeof got)
				r = got;
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				rep_open = false;	/* closed by execve(): the program runs */
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == prog) {
				status = st;
				ended = true;
			}
		if (ended)
			break;
	}
	/* A failure report, if any, was written before the program's process ended. */
	if (rep_open && r.event == 0) {
		supervisor_report got;

		if (read(rep[0], &got, sizeof got) == (ssize_t) sizeof got)
			r = got;
	}
	if (r.event == 0) {
		r.event = SUPERVISOR_EXITED;
		r.value = status;
	}
	if (ctl_open && send(CTL_FD, &r, sizeof r, MSG_NOSIGNAL) < 0) {
		/* The runner is gone; clean up all the same. */
	}
	kill_all(self);
	_exit(0);
}
