/*
 * supervisor — the process that stands between the runner and an exec
 * job's program, so that nothing the program starts outlives its job. The
 * runner forks it (exec.c) and talks to it over a socket; it forks the
 * program and, as a child subreaper, inherits every descendant the program
 * orphans, those that called setsid() or forked twice included. When the
 * program ends, when the runner says so, or when the runner is gone (the
 * socket closes, even after a SIGKILL), it kills every descendant it has
 * and exits once none is left.
 *
 * It does not contain a program that changes its user (a set-user-ID
 * program in the exec directory), nor a descendant that another service
 * starts on its behalf; and it needs /proc to find what is left.
 */
#ifndef CRONQ_SUPERVISOR_H
#define CRONQ_SUPERVISOR_H

#include <stdint.h>

/* The runner's requests, one byte each on the socket. */
#define SUPERVISOR_TERM 'T'		/* SIGTERM to the program's process group */
#define SUPERVISOR_KILL 'K'		/* SIGKILL to the program and its group */

/* What the supervisor reports, once, before it cleans up and exits. */
typedef enum supervisor_event {
	SUPERVISOR_EXITED = 1,		/* the program ended: value is its wait status */
	SUPERVISOR_NO_CHDIR,		/* could not enter the directory: value is errno */
	SUPERVISOR_NO_EXEC,			/* execve() failed: value is errno */
	SUPERVISOR_NO_FORK,			/* could not start the program: value is errno */
	SUPERVISOR_NO_USER,			/* could not become the exec user: value is errno */
} supervisor_event;

typedef struct supervisor_report {
	int32_t		event;			/* a supervisor_event */
	int32_t		value;
} supervisor_report;

/* What to run. All of it is the runner's memory, inherited by the fork. */
typedef struct supervisor_job {
	const char *dir;			/* the program's working directory */
	const char *path;			/* the program */
	char	   *const *argv;
	char	   *const *envp;
	int			out;			/* becomes the program's stdout */
	int			err;			/* becomes the program's stderr */
	int			result;			/* becomes the program's descriptor 3 (its result) */
	int			ctl;			/* the supervisor's end of the runner's socket */
	int64_t		uid, gid;		/* the program's user and group (-1: unchanged) */
} supervisor_job;

/*
 * The supervisor's whole life, in the child of fork(): never returns. The
 * runner may have other threads, so this uses only async-signal-safe
 * calls (no allocation, no stdio, no locks).
 */
void supervisor_main(const supervisor_job *job) __attribute__((noreturn));

#endif
