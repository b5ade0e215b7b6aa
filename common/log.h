/* JSON-lines logging on stderr (or --log-file): one object per line. */
#ifndef GOBOXD_LOG_H
#define GOBOXD_LOG_H

#include <stdarg.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_init(const char *role, enum log_level min);
void log_set_role(const char *role);
int log_parse_level(const char *s, enum log_level *out);
/*
 * Log to path (appended, created 0640) instead of stderr: the file becomes
 * fd 2. Call before forking. 0 or negative errno.
 */
int log_open_file(const char *path);
/*
 * The master on SIGUSR1: open the path again (after a rotation it is a new
 * file); processes forked since log_open_file follow at their next line.
 * 0, -ENOENT without a log file, or negative errno (the old file stays).
 */
int log_reopen(void);

/*
 * A free-form message: {"ts":..,"level":..,"role":..,"pid":..,"msg":..}.
 * Like log_json, it leaves errno as it found it, so "log, then return
 * -errno" reports the caller's error even when the line could not be
 * written.
 */
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A pre-built JSON object (cJSON *) gets ts/level/role/pid added and is
 * written as one line; the object is consumed. */
struct cJSON;
void log_json(enum log_level lvl, struct cJSON *obj);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
