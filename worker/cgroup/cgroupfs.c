#include "autoconf.h"

#include "worker/cgroup/cgroupfs.h"

#include "common/buf.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CGROUPFS_KILL_TIMEOUT_MS 2000
#define CGROUPFS_RMDIR_TRIES 50
#define CGROUPFS_FILES_MAX 32

struct cgroupfs_files {
	unsigned n;
	struct {
		const char *dir;        /* one of its step's dir[] */
		const char *name;
		int flags;              /* O_RDONLY or O_WRONLY */
		int fd;
	} f[CGROUPFS_FILES_MAX];
};

int cgroupfs_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int cgroupfs_join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cgroupfs_read(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int rc;

	if ((rc = cgroupfs_join(path, sizeof(path), dir, file)) < 0)
		return rc;
	n = read_small_file(path, buf, size);
	return n < 0 ? (int)n : 0;
}

int cgroupfs_write(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	int rc;

	if ((rc = cgroupfs_join(path, sizeof(path), dir, file)) < 0)
		return rc;
	return write_file_str(path, val);
}

bool cgroupfs_exists(const char *dir, const char *file)
{
	char path[PATH_MAX];

	return cgroupfs_join(path, sizeof(path), dir, file) == 0 && access(path, F_OK) == 0;
}

int cgroupfs_mkdir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

void cgroupfs_sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

int cgroupfs_read_pids(const char *dir, pid_t *pids, size_t max)
{
	char path[PATH_MAX];
	char chunk[4096];
	struct buf b;
	int fd, rc;

	if ((rc = cgroupfs_join(path, sizeof(path), dir, "cgroup.procs")) < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf_init(&b, 0);
	rc = buf_puts(&b, "");
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0 || (rc = buf_append(&b, chunk, (size_t)n)) < 0)
			break;
	}
	close(fd);
	if (rc == 0)
		rc = cgroupfs_parse_pids(b.data, pids, max);
	buf_free(&b);
	return rc;
}

/* The fd of dir/name for flags, opened the first time; or -errno. With
 * the table full it is opened for this once (*own: the caller closes it). */
static int files_fd(struct cgroupfs_files *t, const char *dir, const char *name, int flags,
		    bool *own)
{
	char path[PATH_MAX];
	int fd, rc;

	*own = false;
	for (unsigned i = 0; i < t->n; i++)
		if (t->f[i].dir == dir && t->f[i].flags == flags && strcmp(t->f[i].name, name) == 0)
			return t->f[i].fd;
	if ((rc = cgroupfs_join(path, sizeof(path), dir, name)) < 0)
		return rc;
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (t->n == CGROUPFS_FILES_MAX) {
		*own = true;
		return fd;
	}
	t->f[t->n].dir = dir;
	t->f[t->n].name = name;
	t->f[t->n].flags = flags;
	t->f[t->n].fd = fd;
	t->n++;
	return fd;
}

struct cgroupfs_files *cgroupfs_files_new(void)
{
	return xcalloc(1, sizeof(struct cgroupfs_files));
}

void cgroupfs_files_close(struct cgroupfs_files *f)
{
	for (unsigned i = 0; f && i < f->n; i++)
		close(f->f[i].fd);
	free(f);
}

/*
 * Every cgroup file read here (not cgroup.procs) is one record, made
 * whole by one show() and copied out by one read from 0 as far as the
 * buffer goes: a read that leaves room in the buffer is the whole file.
 * Only one that fills it reads on, to the end. One system call where
 * reading to the end took two, and the second made the record again.
 */
static ssize_t read_record(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n == size - 1)
		return read_small_fd(fd, buf, size);
	buf[n] = '\0';
	return n;
}

int cgroupfs_files_read(struct cgroupfs_files *f, const char *dir, const char *file, char *buf,
			size_t size)
{
	bool own;
	int fd = files_fd(f, dir, file, O_RDONLY, &own);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read_record(fd, buf, size);
	if (own)
		close(fd);
	return n < 0 ? (int)n : 0;
}

int cgroupfs_files_write(struct cgroupfs_files *f, const char *dir, const char *file,
			 const char *val)
{
	bool own;
	int fd = files_fd(f, dir, file, O_WRONLY, &own);
	ssize_t n;

	if (fd < 0)
		return fd;
	do
		n = pwrite(fd, val, strlen(val), 0);
	while (n < 0 && errno == EINTR);
	if (own)
		close(fd);
	return n < 0 ? -errno : 0;
}

int cgroupfs_files_write_or_say(struct cgroupfs_files *f, const char *dir, const char *file,
				const char *val, char *err, size_t errlen)
{
	int rc = cgroupfs_files_write(f, dir, file, val);

	if (rc < 0)
		return cgroupfs_err(err, errlen, rc, "write(%s/%s, %s): %s", dir, file, val,
				    strerror(-rc));
	return 0;
}

int cgroupfs_files_read_u64(struct cgroupfs_files *f, const char *dir, const char *file,
			    uint64_t *out)
{
	char buf[64];
	int rc;

	if ((rc = cgroupfs_files_read(f, dir, file, buf, sizeof(buf))) < 0)
		return rc;
	buf[strcspn(buf, "\n")] = '\0';
	return parse_u64(buf, 0, UINT64_MAX, out);
}

int cgroupfs_files_read_kv(struct cgroupfs_files *f, const char *dir, const char *file,
			   const char *key, uint64_t *out)
{
	char buf[4096];
	int rc;

	if ((rc = cgroupfs_files_read(f, dir, file, buf, sizeof(buf))) < 0)
		return rc;
	return cgroupfs_parse_kv(buf, key, out);
}

bool cgroupfs_dup_dir(char (*dirs)[PATH_MAX], unsigned i)
{
	for (unsigned j = 0; j < i; j++)
		if (strcmp(dirs[j], dirs[i]) == 0)
			return true;
	return false;
}

/*
 * SIGKILL every process listed in the dirs until none is left. Without a
 * freezer a forking process can outrun one pass, so passes repeat; pids
 * are bounded by pids.max, which makes the loop converge.
 */
int cgroupfs_kill_until_empty(char (*dirs)[PATH_MAX], unsigned n, pid_t spare)
{
	uint64_t deadline = now_ms() + CGROUPFS_KILL_TIMEOUT_MS;
	long delay = 200;
	/* zeroed: a pid the list did not fill is never kill(0), our group */
	pid_t pids[1024] = { 0 };

	for (;;) {
		int found = 0;

		for (unsigned i = 0; i < n; i++) {
			int cnt;

			if (cgroupfs_dup_dir(dirs, i))
				continue;
			cnt = cgroupfs_read_pids(dirs[i], pids, ARRAY_SIZE(pids));
			if (cnt == -ENOENT)
				continue;
			if (cnt < 0)
				return cnt;
			for (int k = 0; k < cnt && (size_t)k < ARRAY_SIZE(pids); k++) {
				if (spare && pids[k] == spare)
					found--;
				else if (pids[k] > 0)
					kill(pids[k], SIGKILL);
			}
			found += cnt;
		}
		if (!found)
			return 0;
		if (now_ms() > deadline)
			return -EBUSY;
		cgroupfs_sleep_us(delay);
		if (delay < 20000)
			delay *= 2;
	}
}

/* A child cgroup of dir? cgroupfs fills d_type; anything else is asked. */
static bool is_subdir(const char *dir, const struct dirent *de, char *path, size_t len)
{
	struct stat st;

	if (de->d_name[0] == '.' || cgroupfs_join(path, len, dir, de->d_name) < 0)
		return false;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Remove a cgroup directory and everything below it, killing what runs
 * there. rmdir can still see EBUSY for a moment after the last task
 * exited, hence the retries. Counts removed directories in *count.
 */
static int rm_cgroup(const char *path, unsigned *count)
{
	char dirs[1][PATH_MAX];
	int rc;

	if ((rc = cgroupfs_rm_children(path, count)) < 0)
		return rc;
	if (strlen(path) >= sizeof(dirs[0]))
		return -ENAMETOOLONG;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", path);
	if (cgroupfs_exists(path, "cgroup.kill"))
		cgroupfs_write(path, "cgroup.kill", "1");
	for (int i = 0; i < CGROUPFS_RMDIR_TRIES; i++) {
		if ((rc = cgroupfs_kill_until_empty(dirs, 1, 0)) < 0)
			return rc;
		if (rmdir(path) == 0) {
			if (count)
				(*count)++;
			return 0;
		}
		rc = -errno;
		if (rc == -ENOENT)
			return 0;
		if (rc != -EBUSY)
			return rc;
		cgroupfs_sleep_us(2000);
	}
	return rc;
}

/* Remove each distinct directory of dirs (a tree's or a step's, one per
 * controller), logging what could not be removed. */
void cgroupfs_remove_dirs(char (*dirs)[PATH_MAX], unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc;

		if (!dirs[i][0] || cgroupfs_dup_dir(dirs, i))
			continue;
		rc = rm_cgroup(dirs[i], NULL);
		if (rc < 0)
			log_warn("remove cgroup %s: %s", dirs[i], strerror(-rc));
	}
}

/*
 * Remove every child cgroup of dir (not dir itself) for which skip, when
 * given, says no; the last error.
 */
int cgroupfs_rm_children_unless(const char *dir, unsigned *count,
				bool (*skip)(const char *path, const char *name))
{
	struct dirent *de;
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		char sub[PATH_MAX];
		int r;

		if (!is_subdir(dir, de, sub, sizeof(sub)) || (skip && skip(sub, de->d_name)))
			continue;
		r = rm_cgroup(sub, count);
		if (r < 0) {
			log_warn("remove cgroup %s: %s", sub, strerror(-r));
			rc = r;
		}
	}
	closedir(d);
	return rc;
}

int cgroupfs_rm_children(const char *dir, unsigned *count)
{
	return cgroupfs_rm_children_unless(dir, count, NULL);
}

/* ---- parsing ---- */

int cgroupfs_parse_kv(const char *text, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');

		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			char num[32];
			const char *v = line + kl + 1;
			size_t vl = eol ? (size_t)(eol - v) : strlen(v);

			if (vl == 0 || vl >= sizeof(num))
				return -EINVAL;
			memcpy(num, v, vl);
			num[vl] = '\0';
			return parse_u64(num, 0, UINT64_MAX, out);
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int cgroupfs_parse_pids(const char *text, pid_t *pids, size_t max)
{
	const char *p = text;
	size_t n = 0;

	while (*p) {
		char *end;
		long v;

		if (*p == '\n') {
			p++;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v <= 0 || v > INT_MAX || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		if (n < max)
			pids[n] = (pid_t)v;
		if (n == INT_MAX)
			return -EINVAL;
		n++;
		p = end;
	}
	return (int)n;
}
