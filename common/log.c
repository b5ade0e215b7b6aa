#include "autoconf.h"

#include "common/log.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/utf8.h"
#include "common/util.h"

static char log_role[32] = "goboxd";
static enum log_level log_min = LOG_INFO;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

/*
 * --log-file: the file takes stderr's place (fd 2) in every process. The
 * master reopens it on SIGUSR1 and counts the reopening in a page shared
 * with the processes it forks; each of them reopens the file before its
 * next line when the count has moved, so no process needs a signal of its
 * own and none writes to the rotated file for long.
 */
static char *log_path;
static _Atomic unsigned *log_generation;
/* atomic: a worker's loop and its job thread both log */
static _Atomic unsigned log_generation_seen;

void log_init(const char *role, enum log_level min)
{
	log_set_role(role);
	log_min = min;
}

void log_set_role(const char *role)
{
	snprintf(log_role, sizeof(log_role), "%s", role);
}

/* Open path onto fd 2. 0 or negative errno; fd 2 unchanged on failure. */
static int open_onto_stderr(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);

	if (fd < 0)
		return -errno;
	if (fd != STDERR_FILENO) {
		if (dup2(fd, STDERR_FILENO) < 0) {
			int rc = -errno;

			close(fd);
			return rc;
		}
		close(fd);
	}
	return 0;
}

int log_open_file(const char *path)
{
	void *page;
	char *copy;
	int rc;

	if ((rc = open_onto_stderr(path)) < 0)
		return rc;
	copy = xstrdup(path);
	free(log_path);
	log_path = copy;
	if (!log_generation) {
		page = mmap(NULL, sizeof(*log_generation), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			return -errno;
		log_generation = page;
	}
	return 0;
}

int log_reopen(void)
{
	int rc;

	if (!log_path)
		return -ENOENT;
	if ((rc = open_onto_stderr(log_path)) < 0)
		return rc;
	atomic_store(&log_generation_seen, atomic_fetch_add(log_generation, 1) + 1);
	return 0;
}

/* A forked process follows the master's reopening (see above). */
static void follow_reopen(void)
{
	unsigned g;

	if (!log_generation)
		return;
	g = atomic_load(log_generation);
	/* on failure the old file stays: better than losing the line */
	if (g != atomic_load(&log_generation_seen) && open_onto_stderr(log_path) == 0)
		atomic_store(&log_generation_seen, g);
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A new object with the common fields first, then the caller's fields. */
static cJSON *with_common(cJSON *o, enum log_level lvl)
{
	struct timespec ts;
	struct tm tm;
	char when[64];
	cJSON *out = cJSON_CreateObject();

	if (!out)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts.tv_nsec / 1000000);
	cJSON_AddStringToObject(out, "ts", when);
	cJSON_AddStringToObject(out, "level", level_names[lvl]);
	cJSON_AddStringToObject(out, "role", log_role);
	cJSON_AddNumberToObject(out, "pid", getpid());
	while (o->child) {
		cJSON *item = cJSON_DetachItemViaPointer(o, o->child);
		char *name = item->string;

		item->string = NULL;
		cJSON_AddItemToObject(out, name ? name : "?", item);
		free(name);
	}
	return out;
}

/*
 * A line that is not UTF-8 (a client's bytes in a path or a header,
 * which cJSON prints as they are) with each byte that starts no
 * well-formed sequence replaced by U+FFFD: every line stays JSON that a
 * log reader can parse. cJSON writes its structure in ASCII, so such
 * bytes are always inside a string.
 */
static char *valid_line(char *line)
{
	size_t len = strlen(line), at = 0;
	char *out;

	if (utf8_valid(line, len))
		return line;
	out = xmalloc(3 * len + 1);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_decode(line + i, len - i, NULL);

		if (n) {
			memcpy(out + at, line + i, n);
			at += n;
			i += n;
		} else {
			memcpy(out + at, "\xef\xbf\xbd", 3);
			at += 3;
			i++;
		}
	}
	out[at] = '\0';
	free(line);
	return out;
}

static void emit(cJSON *o)
{
	char *line = cJSON_PrintUnformatted(o);
	struct iovec iov[2];

	if (!line)
		return;
	line = valid_line(line);
	iov[0].iov_base = line;
	iov[0].iov_len = strlen(line);
	iov[1].iov_base = (void *)"\n";
	iov[1].iov_len = 1;
	follow_reopen();
	/* One writev per line keeps lines whole when processes share stderr. */
	if (writev(STDERR_FILENO, iov, 2) < 0) {
		/* nowhere left to report it */
	}
	free(line);
}

/*
 * Both entry points keep errno: callers log a failure and then return
 * -errno, and a failed write of the line (or a reopen, or malloc) would
 * otherwise replace the error they are about to report.
 */
void log_json(enum log_level lvl, cJSON *obj)
{
	int saved = errno;

	if (!obj)
		return;
	if (lvl >= log_min) {
		cJSON *line = with_common(obj, lvl);

		if (line)
			emit(line);
		cJSON_Delete(line);
	}
	cJSON_Delete(obj);
	errno = saved;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	int saved = errno;
	char msg[1024];
	va_list ap;
	cJSON *o;

	if (lvl < log_min)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "msg", msg);
		log_json(lvl, o);
	}
	errno = saved;
}
