/*
 * log — the one logging module: error, warning, info and debug lines on
 * stderr, as "cronq: error: text" or as one JSON object per line. A message
 * is a primary line plus an optional detail and hint; trailing newlines (as
 * libpq leaves them) are trimmed here and nowhere else. Thread-safe.
 */
#ifndef CRONQ_LOG_H
#define CRONQ_LOG_H

#include <stdbool.h>

typedef enum log_level {
	LOG_DEBUG = 0,
	LOG_INFO,
	LOG_WARNING,
	LOG_ERROR,
} log_level;

typedef enum log_format {
	LOG_FORMAT_TEXT = 0,
	LOG_FORMAT_JSON,
} log_format;

/*
 * A key/value pair for structured fields (job id, type…); key NULL ends a
 * list, value NULL is left out. JSON lines carry every field; text lines
 * only those whose value the message does not say as a whole word outside
 * its quoted parts (log_quote: what an author wrote never stands for a
 * field).
 */
typedef struct log_field {
	const char *key;
	const char *value;
	bool		numeric;		/* emit the value unquoted in JSON */
} log_field;

void log_set_level(log_level level);
log_level log_get_level(void);
void log_set_format(log_format format);
log_format log_get_format(void);
bool log_enabled(log_level level);

/*
 * A new string (xmalloc): s in double quotes, its backslashes and double
 * quotes escaped with a backslash: how a message quotes what a job or its
 * author wrote, so that no such text reads as the line's own words or
 * fields ("boom queue=billing" is not queue=billing).
 */
char *log_quote(const char *s);

void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* detail and hint may be NULL; fields may be NULL or end with a {NULL} entry. */
void log_full(log_level level, const log_field *fields, const char *detail,
			  const char *hint, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define log_error(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
