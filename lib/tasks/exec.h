/*
 * exec — what the exec task (exec.c) shares with the program that starts
 * the runner: the check of the exec directory, so that a runner given an
 * unusable one can refuse to start instead of failing every exec job.
 */
#ifndef CRONQ_EXEC_H
#define CRONQ_EXEC_H

#include <stddef.h>

/*
 * 0 when dir is an existing directory programs can be found in; else -1
 * with the reason in why ("exec directory \"DIR\" is not usable: …").
 */
int exec_dir_check(const char *dir, char *why, size_t len) __attribute__((warn_unused_result));

#endif
