/*
 * exec — what the exec task (exec.c) shares with the program that starts
 * the runner (the check of the exec directory, so that a runner given an
 * unusable one can refuse to start instead of failing every exec job) and
 * with the tests (the payload limits and the variables env may not set).
 */
#ifndef CRONQ_EXEC_H
#define CRONQ_EXEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The most JSON text an exec payload may have: the program gets it in
 * CRONQ_PAYLOAD, and Linux passes no argument or variable longer than
 * MAX_ARG_STRLEN (131072 bytes with its NUL) to a program. Every string of
 * argv and env is part of that text, so it bounds them too.
 */
#define EXEC_PAYLOAD_MAX (131072 - (int) sizeof "CRONQ_PAYLOAD=")
/*
 * The most of execve()'s argument space a payload may take (argv and
 * environment strings with their NULs and 8-byte pointers, CRONQ_PAYLOAD
 * included): 3 × MAX_ARG_STRLEN. The kernel's limit is a quarter of the
 * stack limit (2 MiB under the usual 8 MiB), and at least 128 KiB.
 */
#define EXEC_ARGS_MAX (3 * 131072)

/*
 * The variables a payload's env may not set: exact names, and prefixes
 * ending in "*", upper case, NULL-terminated. The same list, in the same
 * order, as cronq.exec_env_denied() in sql/0007_exec_limits.sql.
 */
extern const char *const exec_env_denied[];

/* Whether env may not set name: a match in exec_env_denied, ignoring ASCII case. */
bool exec_env_is_denied(const char *name);

/* Whether env may not give name (case as written) this value: a path or a
 * format in a locale or terminal variable, a file outside the zone
 * database in TZ. As cronq.exec_env_value_refused() in the database. */
bool exec_env_value_refused(const char *name, const char *value);

/*
 * 0 when dir is an existing directory programs can be found in; else -1
 * with the reason in why ("exec directory \"DIR\" is not usable: …").
 */
int exec_dir_check(const char *dir, char *why, size_t len) __attribute__((warn_unused_result));

#endif
