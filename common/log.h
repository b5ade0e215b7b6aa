/* JSON-lines logging on stderr: one object per line. */
#ifndef GOBOXD_LOG_H
#define GOBOXD_LOG_H

#include <stdarg.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_init(const char *role, enum log_level min);
void log_set_role(const char *role);
int log_parse_level(const char *s, enum log_level *out);

/* A free-form message: {"ts":..,"level":..,"role":..,"pid":..,"msg":..} */
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
