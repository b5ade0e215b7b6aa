#include "autoconf.h"

#include "worker/judge/outfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/lang/validate.h"
#include "common/util.h"

struct walk {
	const struct outfiles_bounds *b;
	struct outfiles *out;
	size_t total;        /* bytes taken */
	size_t seen;         /* names looked at */
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the directory fd (its own fd is the caller's), sorted, at
 * most max of them; *more when there were others. */
static char **list_names(int fd, size_t max, size_t *n, bool *more)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *dir = dup >= 0 ? fdopendir(dup) : NULL;
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	*more = false;
	if (!dir) {
		if (dup >= 0)
			close(dup);
		return NULL;
	}
	/* the dup shares the fd's offset: a directory read before reads on from its end */
	rewinddir(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == max) {
			*more = true;
			break;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			names = xreallocarray(names, cap, sizeof(*names));
		}
		names[(*n)++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (*n)
		qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

/* Read the regular file name of dirfd whole, when it fits max bytes. */
static int read_file(int dirfd, const char *name, size_t max, struct buf *out, mode_t *mode)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char chunk[16384];
	struct stat st;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if ((uint64_t)st.st_size > max)
		rc = -EFBIG;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*mode = st.st_mode & 0777;
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof(chunk));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		/* it grew since fstat: as large as it is now */
		if (out->len + (size_t)got > max) {
			rc = -EFBIG;
			break;
		}
		buf_append(out, chunk, (size_t)got);
	}
	close(fd);
	return rc;
}

static void take_file(struct walk *w, int dirfd, const char *name, const char *path)
{
	struct outfiles *o = w->out;
	size_t room = w->b->max_total - w->total;
	struct buf data;
	mode_t mode = 0;

	if (o->n == w->b->max_files) {
		o->left_out++;
		return;
	}
	buf_init(&data, 0);
	if (read_file(dirfd, name, room < w->b->max_file ? room : w->b->max_file, &data,
		      &mode) < 0) {
		buf_free(&data);
		o->left_out++;
		return;
	}
	o->v = xreallocarray(o->v, o->n + 1, sizeof(*o->v));
	o->v[o->n].path = xstrdup(path);
	o->v[o->n].len = data.len;
	o->v[o->n].mode = mode;
	buf_append(&data, "", 1);
	o->v[o->n].data = buf_steal(&data, NULL);
	w->total += o->v[o->n].len;
	o->n++;
}

bool outfiles_match(char *const *match, const char *path)
{
	if (!match)
		return true;
	for (size_t i = 0; match[i]; i++)
		if (fnmatch(match[i], path, FNM_PATHNAME) == 0)
			return true;
	return false;
}

/* Whether pattern has more than parts parts, the first of which match
 * dir's (of that many parts). */
static bool pattern_may_hold(const char *pattern, const char *dir, size_t parts)
{
	char head[VALIDATE_PATH_MAX_LEN + 1];
	size_t n = 0;

	/* n: where its parts-th '/' is */
	for (size_t seen = 0; seen < parts; seen++) {
		const char *slash = strchr(pattern + n + (seen ? 1 : 0), '/');

		if (!slash)
			return false;
		n = (size_t)(slash - pattern);
	}
	/* a bracket or an escape may hold a '/': cut there, the head would
	 * be another pattern */
	if (memchr(pattern, '[', n) || memchr(pattern, '\\', n) || n >= sizeof(head))
		return true;
	memcpy(head, pattern, n);
	head[n] = '\0';
	return fnmatch(head, dir, FNM_PATHNAME) == 0;
}

bool outfiles_may_hold(char *const *match, const char *dir)
{
	size_t parts = *dir ? 1 : 0;

	if (!match || !parts)
		return true;
	for (const char *p = dir; *p; p++)
		parts += *p == '/';
	for (size_t i = 0; match[i]; i++)
		if (pattern_may_hold(match[i], dir, parts))
			return true;
	return false;
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix, unsigned depth);

static void take_entry(struct walk *w, int dirfd, const char *name, const char *prefix,
		       unsigned depth)
{
	/* a directory past VALIDATE_PATH_MAX_LEN is never gone into: this fits */
	char path[VALIDATE_PATH_MAX_LEN + NAME_MAX + 2];
	int len = snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "/" : "", name);
	bool file = len >= 0 && (size_t)len < sizeof(path) && outfiles_match(w->b->match, path);
	bool dir = len >= 0 && (size_t)len < sizeof(path) && outfiles_may_hold(w->b->match, path);
	struct stat st;
	int sub;

	/* a name no pattern asks for is not even looked at */
	if ((!file && !dir) || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	/* links, FIFOs, sockets, devices: never opened */
	if (!(S_ISREG(st.st_mode) && file) && !(S_ISDIR(st.st_mode) && dir))
		return;
	if ((size_t)len > VALIDATE_PATH_MAX_LEN) {
		w->out->left_out++;
		return;
	}
	if (S_ISREG(st.st_mode)) {
		take_file(w, dirfd, name, path);
		return;
	}
	if (depth + 1 >= VALIDATE_PATH_MAX_DEPTH) {
		w->out->left_out++;
		return;
	}
	sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0) {
		w->out->left_out++;
		return;
	}
	walk_dir(w, sub, path, depth + 1);
	close(sub);
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix, unsigned depth)
{
	size_t n, room = w->b->max_entries - w->seen;
	bool more;
	char **names = list_names(dirfd, room, &n, &more);

	w->seen += n;
	if (more)
		w->out->left_out++;
	for (size_t i = 0; i < n; i++) {
		take_entry(w, dirfd, names[i], prefix, depth);
		free(names[i]);
	}
	free(names);
}

int outfiles_collect(int dirfd, const struct outfiles_bounds *b, struct outfiles *out)
{
	struct walk w = { .b = b, .out = out };
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	walk_dir(&w, dirfd, "", 0);
	return 0;
}

void outfiles_free(struct outfiles *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].path);
		free(o->v[i].data);
	}
	free(o->v);
	memset(o, 0, sizeof(*o));
}
