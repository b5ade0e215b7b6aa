#include "autoconf.h"

#include "worker/sandbox/cgroup.h"

#include "common/buf.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * v1 keeps one directory per controller, indexed as below; v2 has a single
 * directory (index 0) holding every controller's files. On v1 two of them
 * may be the same hierarchy (co-mounted), hence the duplicate checks.
 */
enum { CGROUP_MEM, CGROUP_PIDS, CGROUP_CPU, CGROUP_NCTRL };

static const char *const v1_ctrl[CGROUP_NCTRL] = { "memory", "pids", "cpuacct" };

#define CGROUP_TOP "goboxd"
#define CGROUP_DAEMON_LEAF "goboxd-daemon"
#define CGROUP_KILL_TIMEOUT_MS 2000
#define CGROUP_RMDIR_TRIES 50

struct cgroup_layout {
	enum cgroup_version ver;
	unsigned ndirs;
	char base[CGROUP_NCTRL][PATH_MAX]; /* v1: controller mounts; v2: base cgroup */
};

struct cgroup_tree {
	enum cgroup_version ver;
	unsigned ndirs;
	char dir[CGROUP_NCTRL][PATH_MAX];
	unsigned long counter;
};

/*
 * The files of a step cgroup, each opened once and kept: a program's step
 * reads and writes the same dozen, and a jail's first cgroup serves one
 * program after another, where an open by name walks the whole path each
 * time (a third of the worker's CPU a test). Read with pread from 0 (a
 * cgroup file is made anew for a read at 0), written with pwrite. Not
 * cgroup.procs: on v1 a read through an fd that read it before may be
 * served the list it made then (kept for a second), so it is opened anew
 * each time (read_pids_in).
 */
#define STEP_FILES_MAX 32

struct step_files {
	unsigned n;
	struct {
		const char *dir;        /* one of its step's dir[] */
		const char *name;
		int flags;              /* O_RDONLY or O_WRONLY */
		int fd;
	} f[STEP_FILES_MAX];
};

struct cgroup_step {
	enum cgroup_version ver;
	unsigned ndirs;
	char dir[CGROUP_NCTRL][PATH_MAX];
	/* distinct cgroup.procs files, prepared for the pre-exec child */
	unsigned nprocs_files;
	char procs[CGROUP_NCTRL][PATH_MAX];
	bool has_kill;  /* v2 cgroup.kill (5.14+) */
	bool has_peak;  /* v2 memory.peak (5.19+) */
	bool has_memsw; /* v1 memory.memsw.* (swap accounting) */
	struct step_files *files;   /* its files kept open (step_fd) */
	uint64_t peak_sample;
	pid_t spare;    /* never killed: a jail's init waiting in it (0: none) */
	/* Since cgroup_step_rebase: what the counters that cannot be reset
	 * had counted before, subtracted from what they say; and v2's
	 * memory.peak, reset through this fd, which alone reads the new peak
	 * (-1: read by name). */
	uint64_t base_cpu_us, base_oom_kills, base_max_events;
	/* And the memory still charged after the reclaim (the init's kernel
	 * objects: its network namespace): added to a memory limit, taken
	 * from every usage reported, so a program gets and is told exactly
	 * its own. */
	uint64_t base_memory;
	/* base_memory after the last reclaim: what a light rebase lets
	 * grow by at most CGROUP_REBASE_SLACK before it reclaims again */
	uint64_t clean_memory;
	/* cgroup_step_note_own: the spared process's own memory, and of it
	 * the kernel's objects, with nothing else in the cgroup yet. No full
	 * rebase takes more than own_memory and CGROUP_REBASE_SLACK for a
	 * base: what is charged beyond that is another job's. */
	bool has_own;
	uint64_t own_memory, own_kernel;
	/* The same, as the first light rebase after a full one found it
	 * settled: the job's own files (the build's output) are charged
	 * here too, and the rebases between its programs take no more than
	 * this and the slack for a base. */
	bool has_floor;
	uint64_t floor_memory, floor_kernel;
	int peak_fd;
};

/* ---- parsing helpers ---- */

bool cgroup_has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	if (!wl)
		return false;
	while (*p) {
		size_t n = strcspn(p, ", \t\n");

		if (n == wl && memcmp(p, word, wl) == 0)
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* Copy one blank-separated mountinfo field, decoding \ooo escapes. */
static int mi_field(const char **pp, char *out, size_t outlen)
{
	const char *p = *pp;
	size_t o = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -EINVAL;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p;

		if (c == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			c = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 4;
		} else {
			p++;
		}
		if (o + 1 >= outlen)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	*pp = p;
	return 0;
}

int cgroup_parse_mountinfo_line(const char *line, struct cgroup_mount *out)
{
	struct cgroup_mount m;
	char skip[4096];
	const char *p = line;
	int rc;

	/* mount id, parent id, major:minor */
	for (int i = 0; i < 3; i++)
		if ((rc = mi_field(&p, skip, sizeof(skip))) < 0)
			return rc;
	if ((rc = mi_field(&p, m.root, sizeof(m.root))) < 0 ||
	    (rc = mi_field(&p, m.mount_point, sizeof(m.mount_point))) < 0 ||
	    (rc = mi_field(&p, m.mount_opts, sizeof(m.mount_opts))) < 0)
		return rc;
	/* optional fields ("shared:1", "master:2"...) up to the lone "-" */
	for (;;) {
		if ((rc = mi_field(&p, skip, sizeof(skip))) < 0)
			return rc;
		if (strcmp(skip, "-") == 0)
			break;
	}
	if ((rc = mi_field(&p, m.fstype, sizeof(m.fstype))) < 0 ||
	    (rc = mi_field(&p, skip, sizeof(skip))) < 0 ||
	    (rc = mi_field(&p, m.super_opts, sizeof(m.super_opts))) < 0)
		return rc;
	*out = m;
	return 0;
}

int cgroup_parse_proc_cgroup(const char *text, const char *controller, char *out, size_t outlen)
{
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			char ctrls[512];
			size_t cl = (size_t)(c2 - c1 - 1);

			if (cl < sizeof(ctrls)) {
				bool match;

				memcpy(ctrls, c1 + 1, cl);
				ctrls[cl] = '\0';
				if (controller)
					match = cgroup_has_word(ctrls, controller);
				else
					match = cl == 0 && c1 - line == 1 && line[0] == '0';
				if (match) {
					size_t pl = len - (size_t)(c2 + 1 - line);

					if (pl + 1 > outlen)
						return -ENAMETOOLONG;
					memcpy(out, c2 + 1, pl);
					out[pl] = '\0';
					return 0;
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int cgroup_v2_base_rel(const char *cgroup_path, const char *mount_root, char *out, size_t outlen)
{
	const char *rel = cgroup_path;
	size_t rl = strlen(mount_root);
	size_t len;
	const char *last;

	if (cgroup_path[0] != '/' || mount_root[0] != '/')
		return -EINVAL;
	while (rl > 1 && mount_root[rl - 1] == '/')
		rl--;
	if (rl > 1) {
		if (strncmp(cgroup_path, mount_root, rl) != 0 ||
		    (cgroup_path[rl] != '/' && cgroup_path[rl] != '\0'))
			return -ENOENT;
		rel = cgroup_path + rl;
	}
	for (const char *p = rel; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == rel || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return -EINVAL;
	len = strlen(rel);
	while (len > 0 && rel[len - 1] == '/')
		len--;
	last = rel + len;
	while (last > rel && last[-1] != '/')
		last--;
	if ((size_t)(rel + len - last) == strlen(CGROUP_DAEMON_LEAF) &&
	    memcmp(last, CGROUP_DAEMON_LEAF, strlen(CGROUP_DAEMON_LEAF)) == 0) {
		len = (size_t)(last - rel);
		while (len > 0 && rel[len - 1] == '/')
			len--;
	}
	if (len == 0) {
		if (outlen < 2)
			return -ENAMETOOLONG;
		memcpy(out, "/", 2);
		return 0;
	}
	if (len + 1 > outlen)
		return -ENAMETOOLONG;
	memcpy(out, rel, len);
	out[len] = '\0';
	return 0;
}

int cgroup_parse_kv(const char *text, const char *key, uint64_t *out)
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

int cgroup_parse_pids(const char *text, pid_t *pids, size_t max)
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

/* ---- small I/O helpers ---- */

static int set_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int set_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int read_in(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int rc;

	if ((rc = join(path, sizeof(path), dir, file)) < 0)
		return rc;
	n = read_small_file(path, buf, size);
	return n < 0 ? (int)n : 0;
}

static int write_in(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	int rc;

	if ((rc = join(path, sizeof(path), dir, file)) < 0)
		return rc;
	return write_file_str(path, val);
}

static bool exists_in(const char *dir, const char *file)
{
	char path[PATH_MAX];

	return join(path, sizeof(path), dir, file) == 0 && access(path, F_OK) == 0;
}

static int mkdir_ok(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Whole cgroup.procs of dir; count of pids (may exceed max) or -errno. */
static int read_pids_in(const char *dir, pid_t *pids, size_t max)
{
	char path[PATH_MAX];
	char chunk[4096];
	struct buf b;
	int fd, rc;

	if ((rc = join(path, sizeof(path), dir, "cgroup.procs")) < 0)
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
		rc = cgroup_parse_pids(b.data, pids, max);
	buf_free(&b);
	return rc;
}

/* The fd of dir/name of step s for flags, opened the first time; or
 * -errno. With the table full it is opened for this once (*own: the
 * caller closes it). */
static int step_fd(const struct cgroup_step *s, const char *dir, const char *name, int flags,
		   bool *own)
{
	struct step_files *t = s->files;
	char path[PATH_MAX];
	int fd, rc;

	*own = false;
	for (unsigned i = 0; i < t->n; i++)
		if (t->f[i].dir == dir && t->f[i].flags == flags && strcmp(t->f[i].name, name) == 0)
			return t->f[i].fd;
	if ((rc = join(path, sizeof(path), dir, name)) < 0)
		return rc;
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (t->n == STEP_FILES_MAX) {
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

static void step_files_close(struct cgroup_step *s)
{
	for (unsigned i = 0; s->files && i < s->files->n; i++)
		close(s->files->f[i].fd);
	free(s->files);
	s->files = NULL;
}

/* read_in for a file of step s; the whole file, from its start. */
static int step_read(const struct cgroup_step *s, const char *dir, const char *file, char *buf,
		     size_t size)
{
	bool own;
	int fd = step_fd(s, dir, file, O_RDONLY, &own);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read_small_fd(fd, buf, size);
	if (own)
		close(fd);
	return n < 0 ? (int)n : 0;
}

static int step_write(const struct cgroup_step *s, const char *dir, const char *file,
		      const char *val)
{
	bool own;
	int fd = step_fd(s, dir, file, O_WRONLY, &own);
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

/* step_write, and on failure the reason in err: "write(dir/file, val): ...". */
static int step_write_or_say(const struct cgroup_step *s, const char *dir, const char *file,
			     const char *val, char *err, size_t errlen)
{
	int rc = step_write(s, dir, file, val);

	if (rc < 0)
		return set_err(err, errlen, rc, "write(%s/%s, %s): %s", dir, file, val,
			       strerror(-rc));
	return 0;
}

static int step_read_u64(const struct cgroup_step *s, const char *dir, const char *file,
			 uint64_t *out)
{
	char buf[64];
	int rc;

	if ((rc = step_read(s, dir, file, buf, sizeof(buf))) < 0)
		return rc;
	buf[strcspn(buf, "\n")] = '\0';
	return parse_u64(buf, 0, UINT64_MAX, out);
}

static int step_read_kv(const struct cgroup_step *s, const char *dir, const char *file,
			const char *key, uint64_t *out)
{
	char buf[4096];
	int rc;

	if ((rc = step_read(s, dir, file, buf, sizeof(buf))) < 0)
		return rc;
	return cgroup_parse_kv(buf, key, out);
}

static bool dup_dir(char (*dirs)[PATH_MAX], unsigned i)
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
static int kill_until_empty(char (*dirs)[PATH_MAX], unsigned n, pid_t spare)
{
	uint64_t deadline = now_ms() + CGROUP_KILL_TIMEOUT_MS;
	long delay = 200;
	pid_t pids[1024];

	for (;;) {
		int found = 0;

		for (unsigned i = 0; i < n; i++) {
			int cnt;

			if (dup_dir(dirs, i))
				continue;
			cnt = read_pids_in(dirs[i], pids, ARRAY_SIZE(pids));
			if (cnt == -ENOENT)
				continue;
			if (cnt < 0)
				return cnt;
			for (int k = 0; k < cnt && (size_t)k < ARRAY_SIZE(pids); k++) {
				if (spare && pids[k] == spare)
					found--;
				else
					kill(pids[k], SIGKILL);
			}
			found += cnt;
		}
		if (!found)
			return 0;
		if (now_ms() > deadline)
			return -EBUSY;
		sleep_us(delay);
		if (delay < 20000)
			delay *= 2;
	}
}

/* A child cgroup of dir? cgroupfs fills d_type; anything else is asked. */
static bool is_subdir(const char *dir, const struct dirent *de, char *path, size_t len)
{
	struct stat st;

	if (de->d_name[0] == '.' || join(path, len, dir, de->d_name) < 0)
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
static int rm_children(const char *dir, unsigned *count);

static int rm_cgroup(const char *path, unsigned *count)
{
	char dirs[1][PATH_MAX];
	int rc;

	if ((rc = rm_children(path, count)) < 0)
		return rc;
	if (strlen(path) >= sizeof(dirs[0]))
		return -ENAMETOOLONG;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", path);
	if (exists_in(path, "cgroup.kill"))
		write_in(path, "cgroup.kill", "1");
	for (int i = 0; i < CGROUP_RMDIR_TRIES; i++) {
		if ((rc = kill_until_empty(dirs, 1, 0)) < 0)
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
		sleep_us(2000);
	}
	return rc;
}

/* Remove each distinct directory of dirs (a tree's or a step's, one per
 * controller), logging what could not be removed. */
static void remove_dirs(char (*dirs)[PATH_MAX], unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc;

		if (!dirs[i][0] || dup_dir(dirs, i))
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
static int rm_children_unless(const char *dir, unsigned *count, bool (*skip)(const char *name))
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

		if (!is_subdir(dir, de, sub, sizeof(sub)) || (skip && skip(de->d_name)))
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

static int rm_children(const char *dir, unsigned *count)
{
	return rm_children_unless(dir, count, NULL);
}

/* ---- discovery ---- */

/* What one v2 cgroup offers goboxd: the controllers it needs, and whether
 * goboxd may build below it. */
struct v2_seen {
	bool memory, pids, cpu;
	int werr;       /* 0: writable; else why not (EROFS: a read-only mount) */
};

/*
 * Everything discovery looks at, once: what locate chooses from, and what
 * the line goboxd says at start and in --check reports.
 */
struct cgroup_survey {
	const char *override;   /* --cgroup-root, or NULL */
	bool v2;                /* a cgroup2 mount, or the override is a v2 cgroup */
	struct cgroup_mount v2m;
	bool v2_ro;
	char own[PATH_MAX];     /* goboxd's own v2 cgroup, or the override ("": none) */
	char own_rel[PATH_MAX]; /* the same, below the mount */
	struct v2_seen own_seen;
	bool root_reach;        /* uid 0, and the whole hierarchy is mounted */
	struct v2_seen root_seen;
	bool v1[CGROUP_NCTRL];
	char v1_mount[CGROUP_NCTRL][PATH_MAX];
	int v1_werr;            /* 0: every v1 mount found is writable; else why not */
};

/* The cgroup mounts named in a mountinfo text: the first cgroup2 mount
 * wins, unless a later one is mounted on top of it (what a path there
 * reaches). */
static void scan_mountinfo(const char *text, struct cgroup_survey *f)
{
	struct cgroup_mount *m = xmalloc(sizeof(*m));
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char *copy = xstrndup(line, len);

		line = eol ? eol + 1 : NULL;
		if (cgroup_parse_mountinfo_line(copy, m) < 0) {
			free(copy);
			continue;
		}
		free(copy);
		if (strcmp(m->fstype, "cgroup2") == 0 &&
		    (!f->v2 || strcmp(m->mount_point, f->v2m.mount_point) == 0)) {
			f->v2 = true;
			f->v2m = *m;
			f->v2_ro = cgroup_has_word(m->mount_opts, "ro") ||
				   cgroup_has_word(m->super_opts, "ro");
		} else if (strcmp(m->fstype, "cgroup") == 0) {
			for (int i = 0; i < CGROUP_NCTRL; i++) {
				if (f->v1[i] || !cgroup_has_word(m->super_opts, v1_ctrl[i]))
					continue;
				if (strlen(m->mount_point) >= PATH_MAX)
					continue;
				snprintf(f->v1_mount[i], sizeof(f->v1_mount[i]), "%s", m->mount_point);
				f->v1[i] = true;
			}
		}
	}
	free(m);
}

int cgroup_find_v2_mount(const char *mountinfo, char *mount_point, size_t len, bool *read_only)
{
	struct cgroup_survey *f = xcalloc(1, sizeof(*f));
	int rc = -ENOENT;

	scan_mountinfo(mountinfo, f);
	if (f->v2) {
		rc = snprintf(mount_point, len, "%s", f->v2m.mount_point) >= (int)len ? -ENAMETOOLONG
										   : 0;
		*read_only = f->v2_ro;
	}
	free(f);
	return rc;
}

/* Does dir/file (cgroup.controllers or cgroup.subtree_control) list memory and pids? */
static bool v2_lists(const char *dir, const char *file, const char *ctrl)
{
	char buf[512];

	if (read_in(dir, file, buf, sizeof(buf)) < 0)
		return false;
	if (ctrl)
		return cgroup_has_word(buf, ctrl);
	return cgroup_has_word(buf, "memory") && cgroup_has_word(buf, "pids");
}

static void v2_look(const char *dir, bool ro, struct v2_seen *s)
{
	char buf[512], path[PATH_MAX];

	memset(s, 0, sizeof(*s));
	if (read_in(dir, "cgroup.controllers", buf, sizeof(buf)) == 0) {
		s->memory = cgroup_has_word(buf, "memory");
		s->pids = cgroup_has_word(buf, "pids");
		s->cpu = cgroup_has_word(buf, "cpu");
	}
	if (ro)
		s->werr = EROFS;
	else if (join(path, sizeof(path), dir, "cgroup.subtree_control") < 0)
		s->werr = ENAMETOOLONG;
	else if (access(path, W_OK) < 0)
		s->werr = errno;
}

/* A v2 cgroup goboxd can build in: offered memory and pids, and writable. */
static bool v2_fit(const struct v2_seen *s)
{
	return s->memory && s->pids && s->werr == 0;
}

/* The process's own v2 cgroup (where goboxd/ goes when it is delegated). */
static int own_v2_base(const struct cgroup_mount *m, const char *proc_cgroup, char *out,
		       size_t outlen, char *rel, size_t rellen)
{
	char path[PATH_MAX];
	int n, rc;

	if ((rc = cgroup_parse_proc_cgroup(proc_cgroup, NULL, path, sizeof(path))) < 0)
		return rc;
	if ((rc = cgroup_v2_base_rel(path, m->root, rel, rellen)) < 0)
		return rc;
	n = snprintf(out, outlen, "%s%s", m->mount_point, strcmp(rel, "/") ? rel : "");
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* May goboxd build in each v1 hierarchy found? (An unprivileged user may
 * not: v1 delegates nothing.) */
static void v1_look(struct cgroup_survey *f)
{
	for (int i = 0; i < CGROUP_NCTRL && !f->v1_werr; i++)
		if (f->v1[i] && access(f->v1_mount[i], W_OK) < 0)
			f->v1_werr = errno;
}

/* --cgroup-root: a v2 cgroup, or a directory holding v1's memory, pids
 * and cpuacct cgroups (nothing else is looked at). */
static int survey_override(struct cgroup_survey *f)
{
	const char *root = f->override;

	if (strlen(root) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (exists_in(root, "cgroup.controllers")) {
		f->v2 = true;
		snprintf(f->own, sizeof(f->own), "%s", root);
		v2_look(root, false, &f->own_seen);
		return 0;
	}
	for (int i = 0; i < CGROUP_NCTRL; i++) {
		if (join(f->v1_mount[i], PATH_MAX, root, v1_ctrl[i]) < 0)
			return -ENAMETOOLONG;
		f->v1[i] = access(f->v1_mount[i], F_OK) == 0;
	}
	v1_look(f);
	return 0;
}

static int survey(const struct cgroup_host *h, const char *root_override,
		  struct cgroup_survey *f)
{
	memset(f, 0, sizeof(*f));
	if (root_override && *root_override) {
		f->override = root_override;
		return survey_override(f);
	}
	scan_mountinfo(h->mountinfo, f);
	v1_look(f);
	if (!f->v2)
		return 0;
	if (own_v2_base(&f->v2m, h->proc_cgroup, f->own, sizeof(f->own), f->own_rel,
			sizeof(f->own_rel)) == 0)
		v2_look(f->own, f->v2_ro, &f->own_seen);
	else
		f->own[0] = f->own_rel[0] = '\0';
	f->root_reach = h->root && strcmp(f->v2m.root, "/") == 0;
	if (f->root_reach)
		v2_look(f->v2m.mount_point, f->v2_ro, &f->root_seen);
	return 0;
}

static void set_v2(struct cgroup_layout *lay, const char *base)
{
	lay->ver = CGROUP_V2;
	lay->ndirs = 1;
	snprintf(lay->base[0], sizeof(lay->base[0]), "%s", base);
}

/* All three of v1's hierarchies found? */
static bool v1_complete(const struct cgroup_survey *f)
{
	return f->v1[CGROUP_MEM] && f->v1[CGROUP_PIDS] && f->v1[CGROUP_CPU];
}

static void set_v1(struct cgroup_layout *lay, const struct cgroup_survey *f)
{
	lay->ver = CGROUP_V1;
	lay->ndirs = CGROUP_NCTRL;
	for (int i = 0; i < CGROUP_NCTRL; i++)
		snprintf(lay->base[i], sizeof(lay->base[i]), "%s", f->v1_mount[i]);
}

/*
 * In order: the override (nothing else when it is given); the own v2
 * cgroup when it is delegated; the cgroup2 root when we are root and it is
 * writable (a host without delegation, as isolate's service does it); v1's
 * three hierarchies. -ENOTSUP when none will do.
 */
static int choose(const struct cgroup_survey *f, struct cgroup_layout *lay,
		  enum cgroup_source *src)
{
	bool v1 = v1_complete(f) && !f->v1_werr;

	memset(lay, 0, sizeof(*lay));
	if (f->override) {
		*src = CGROUP_SRC_OPTION;
		if (f->v2 && v2_fit(&f->own_seen))
			set_v2(lay, f->own);
		else if (!f->v2 && v1)
			set_v1(lay, f);
		else
			return -ENOTSUP;
		return 0;
	}
	if (f->v2 && f->own[0] && v2_fit(&f->own_seen)) {
		*src = CGROUP_SRC_OWN;
		set_v2(lay, f->own);
	} else if (f->root_reach && v2_fit(&f->root_seen)) {
		*src = CGROUP_SRC_ROOT;
		set_v2(lay, f->v2m.mount_point);
	} else if (v1) {
		*src = CGROUP_SRC_V1;
		set_v1(lay, f);
	} else {
		return -ENOTSUP;
	}
	return 0;
}

/* ---- the line: what was found, what goboxd needs, what it takes ---- */

struct line {
	char *s;
	size_t size, len;
};

static void say(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->s + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

static void say_seen(struct line *l, const struct v2_seen *s)
{
	if (!s->memory && !s->pids)
		say(l, " offers neither memory nor pids");
	else if (!s->memory || !s->pids)
		say(l, " offers %s but not %s", s->memory ? "memory" : "pids",
		    s->memory ? "pids" : "memory");
	else
		say(l, " offers memory, pids%s", s->cpu ? " and cpu" : " (no cpu)");
	if (s->werr == 0)
		say(l, ", writable");
	else if (s->werr == EROFS)
		say(l, ", read-only");
	else
		say(l, ", not writable (%s)", strerror(s->werr));
}

static void say_v1(struct line *l, const struct cgroup_survey *f, const char *where)
{
	bool any = false;

	for (int i = 0; i < CGROUP_NCTRL; i++)
		any |= f->v1[i];
	if (!any) {
		say(l, "; no v1 memory, pids or cpuacct%s", where);
		return;
	}
	say(l, "; v1");
	for (int i = 0; i < CGROUP_NCTRL; i++)
		if (f->v1[i])
			say(l, " %s", v1_ctrl[i]);
	for (int i = 0, first = 1; i < CGROUP_NCTRL; i++)
		if (!f->v1[i]) {
			say(l, first ? " (no %s" : ", no %s", v1_ctrl[i]);
			first = 0;
		}
	say(l, "%s%s", v1_complete(f) ? "" : ")", where);
	if (f->v1_werr)
		say(l, ", not writable (%s)", strerror(f->v1_werr));
}

static void say_found(struct line *l, const struct cgroup_survey *f, const struct cgroup_host *h)
{
	if (f->override && f->v2) {
		say(l, "found --cgroup-root %s, a cgroup2 cgroup that", f->override);
		say_seen(l, &f->own_seen);
		return;
	}
	if (f->override) {
		say(l, "found --cgroup-root %s, not a cgroup2 cgroup", f->override);
		say_v1(l, f, " in it");
		return;
	}
	if (!f->v2)
		say(l, "found no cgroup2 mount");
	else
		say(l, "found cgroup2 at %s (%s)", f->v2m.mount_point,
		    f->v2_ro ? "read-only" : "read-write");
	if (f->v2 && f->own[0]) {
		say(l, "; goboxd's cgroup %s", f->own_rel);
		say_seen(l, &f->own_seen);
	} else if (f->v2) {
		say(l, "; goboxd's cgroup is not below that mount");
	}
	/* the root, unless it is goboxd's own cgroup, said already */
	if (f->v2 && (strcmp(f->own, f->v2m.mount_point) != 0 || strcmp(f->v2m.root, "/") != 0)) {
		if (f->root_reach) {
			say(l, "; the cgroup2 root");
			say_seen(l, &f->root_seen);
		} else if (strcmp(f->v2m.root, "/") != 0) {
			say(l, "; the cgroup2 root is out of reach (this mount shows only %s)",
			    f->v2m.root);
		} else {
			say(l, "; the cgroup2 root is out of reach (not uid 0)");
		}
	}
	say_v1(l, f, "");
}

static void report(const struct cgroup_survey *f, const struct cgroup_host *h,
		   const struct cgroup_layout *lay, enum cgroup_source src, char *out,
		   size_t outlen)
{
	struct line l = { out, outlen, 0 };

	if (!outlen)
		return;
	out[0] = '\0';
	say_found(&l, f, h);
	say(&l, "; needs memory and pids in a writable cgroup2 cgroup, or v1's memory, pids "
		"and cpuacct");
	if (!lay)
		say(&l, "; none usable");
	else if (lay->ver == CGROUP_V2)
		say(&l, "; takes %s/%s (%s)", lay->base[0], CGROUP_TOP, cgroup_source_name(src));
	else
		say(&l, "; takes %s/ in v1's memory, pids and cpuacct (%s)", CGROUP_TOP,
		    cgroup_source_name(src));
}

/* survey, choose, and say so in report (the reason when none will do). */
static int locate(const struct cgroup_host *h, const char *root_override, struct cgroup_layout *lay,
		  enum cgroup_source *src, char *report_out, size_t reportlen)
{
	struct cgroup_survey *f = xmalloc(sizeof(*f));
	enum cgroup_source chosen = CGROUP_SRC_OPTION;  /* said only when one is taken */
	int rc;

	if ((rc = survey(h, root_override, f)) < 0) {
		set_err(report_out, reportlen, rc, "cgroup root too long");
		free(f);
		return rc;
	}
	rc = choose(f, lay, &chosen);
	if (rc == 0)
		*src = chosen;
	report(f, h, rc == 0 ? lay : NULL, chosen, report_out, reportlen);
	free(f);
	return rc;
}

static char *slurp(const char *path)
{
	char chunk[4096];
	struct buf b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return NULL;
	buf_init(&b, 0);
	rc = buf_puts(&b, "");
	while (rc == 0) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 1;
			break;
		}
		rc = buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	if (rc < 0) {
		buf_free(&b);
		errno = -rc;
		return NULL;
	}
	return buf_steal(&b, NULL);
}

int cgroup_host_read(struct cgroup_host *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->root = geteuid() == 0;
	h->mountinfo_buf = slurp("/proc/self/mountinfo");
	if (!h->mountinfo_buf)
		return set_err(err, errlen, -errno, "read /proc/self/mountinfo: %s",
			       strerror(errno));
	h->proc_cgroup_buf = slurp("/proc/self/cgroup");
	if (!h->proc_cgroup_buf) {
		int rc = -errno;

		cgroup_host_free(h);
		return set_err(err, errlen, rc, "read /proc/self/cgroup: %s", strerror(-rc));
	}
	h->mountinfo = h->mountinfo_buf;
	h->proc_cgroup = h->proc_cgroup_buf;
	return 0;
}

void cgroup_host_free(struct cgroup_host *h)
{
	free(h->mountinfo_buf);
	free(h->proc_cgroup_buf);
	h->mountinfo_buf = h->proc_cgroup_buf = NULL;
}

/* This process's layout: what cgroup_tree_open and cgroup_sweep work on. */
static int discover(const char *root_override, struct cgroup_layout *lay, char *err, size_t errlen)
{
	struct cgroup_host h;
	enum cgroup_source src;
	int rc;

	if (root_override && *root_override) {
		/* nothing of the host is looked at */
		memset(&h, 0, sizeof(h));
		return locate(&h, root_override, lay, &src, err, errlen);
	}
	if ((rc = cgroup_host_read(&h, err, errlen)) < 0)
		return rc;
	rc = locate(&h, NULL, lay, &src, err, errlen);
	cgroup_host_free(&h);
	return rc;
}

int cgroup_locate(const struct cgroup_host *h, const char *root_override, struct cgroup_place *out,
	      char *err, size_t errlen)
{
	struct cgroup_layout *lay = xmalloc(sizeof(*lay));
	struct cgroup_place p;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = locate(h, root_override, lay, &p.source, p.report, sizeof(p.report))) < 0) {
		set_err(err, errlen, rc, "%s", p.report);
		goto out;
	}
	p.ver = lay->ver;
	/* v2: the base every later call is given; v1: what the operator gave, if anything */
	if (p.ver == CGROUP_V2)
		snprintf(p.root, sizeof(p.root), "%s", lay->base[0]);
	else if (root_override)
		snprintf(p.root, sizeof(p.root), "%s", root_override);
	for (unsigned i = 0; i < lay->ndirs; i++)
		snprintf(p.dirs[i], sizeof(p.dirs[i]), "%s/%s", lay->base[i], CGROUP_TOP);
	p.ndirs = lay->ndirs;
	*out = p;
out:
	free(lay);
	return rc;
}

const char *cgroup_source_name(enum cgroup_source s)
{
	switch (s) {
	case CGROUP_SRC_OPTION:
		return "--cgroup-root";
	case CGROUP_SRC_OWN:
		return "own cgroup (delegated)";
	case CGROUP_SRC_ROOT:
		return "cgroup2 root";
	case CGROUP_SRC_V1:
		return "v1 hierarchies";
	}
	return "?";
}

/* ---- v2 delegation ---- */

/* Enable memory and pids (and cpu when offered; its stats need no more). */
static int v2_enable(const char *dir, char *err, size_t errlen)
{
	if (!v2_lists(dir, "cgroup.subtree_control", NULL)) {
		int rc = write_in(dir, "cgroup.subtree_control", "+memory +pids");

		if (rc < 0)
			return set_err(err, errlen, rc,
				       "write(%s/cgroup.subtree_control, +memory +pids): %s",
				       dir, strerror(-rc));
	}
	if (v2_lists(dir, "cgroup.controllers", "cpu") &&
	    !v2_lists(dir, "cgroup.subtree_control", "cpu"))
		write_in(dir, "cgroup.subtree_control", "+cpu");
	return 0;
}

/* Move every process of base into the leaf base/goboxd-daemon. */
static int v2_evacuate(const char *base, char *err, size_t errlen)
{
	char leaf[PATH_MAX], procs[PATH_MAX];
	pid_t pids[256];
	int rc;

	if ((rc = join(leaf, sizeof(leaf), base, CGROUP_DAEMON_LEAF)) < 0 ||
	    (rc = join(procs, sizeof(procs), leaf, "cgroup.procs")) < 0)
		return set_err(err, errlen, rc, "cgroup path too long");
	if ((rc = mkdir_ok(leaf)) < 0)
		return set_err(err, errlen, rc, "mkdir(%s): %s", leaf, strerror(-rc));
	/* processes may fork meanwhile: repeat until the base is empty */
	for (int round = 0; round < 100; round++) {
		int n = read_pids_in(base, pids, ARRAY_SIZE(pids));

		if (n < 0)
			return set_err(err, errlen, n, "read %s/cgroup.procs: %s", base,
				       strerror(-n));
		if (n == 0)
			return 0;
		for (int i = 0; i < n && (size_t)i < ARRAY_SIZE(pids); i++) {
			char num[24];

			snprintf(num, sizeof(num), "%d", (int)pids[i]);
			rc = write_file_str(procs, num);
			if (rc < 0 && rc != -ESRCH)
				return set_err(err, errlen, rc, "write(%s, %s): %s", procs, num,
					       strerror(-rc));
		}
	}
	return set_err(err, errlen, -EBUSY, "%s keeps gaining processes", base);
}

/*
 * v2: a cgroup with member processes cannot hand controllers to its
 * children, so when the base refuses (EBUSY) its processes move into the
 * leaf "<base>/goboxd-daemon" first; the cgroup2 root is exempt from that
 * rule. Then memory/pids (and cpu) are enabled in the base and in
 * "<base>/goboxd". v1: nothing to do.
 */
int cgroup_prepare(const struct cgroup_place *p, char *err, size_t errlen)
{
	char top[PATH_MAX];
	int rc;

	if (p->ver != CGROUP_V2)
		return 0;
	rc = v2_enable(p->root, err, errlen);
	if (rc == -EBUSY) {
		if ((rc = v2_evacuate(p->root, err, errlen)) < 0)
			return rc;
		rc = v2_enable(p->root, err, errlen);
	}
	if (rc < 0)
		return rc;
	if ((rc = join(top, sizeof(top), p->root, CGROUP_TOP)) < 0)
		return set_err(err, errlen, rc, "cgroup path too long");
	if ((rc = mkdir_ok(top)) < 0)
		return set_err(err, errlen, rc, "mkdir(%s): %s", top, strerror(-rc));
	return v2_enable(top, err, errlen);
}

int cgroup_start(const char *root_override, struct cgroup_place *out, char *err, size_t errlen)
{
	struct cgroup_host h;
	struct cgroup_place p;
	char why[512];
	int rc;

	if ((rc = cgroup_host_read(&h, err, errlen)) < 0)
		return rc;
	rc = cgroup_locate(&h, root_override, &p, err, errlen);
	cgroup_host_free(&h);
	if (rc < 0)
		return rc;
	if ((rc = cgroup_prepare(&p, why, sizeof(why))) < 0)
		return set_err(err, errlen, rc, "%s, but cannot: %s", p.report, why);
	*out = p;
	return 0;
}

/* ---- the worker's tree ---- */

static int tree_open_v2(struct cgroup_tree *t, const char *base, const char *name, char *err,
			size_t errlen)
{
	char top[PATH_MAX];
	int rc;

	if ((rc = v2_enable(base, err, errlen)) == -EBUSY)
		return set_err(err, errlen, rc,
			       "%s has member processes: cgroup_start() must run first", base);
	if (rc < 0)
		return rc;
	if ((rc = join(top, sizeof(top), base, CGROUP_TOP)) < 0 ||
	    (rc = join(t->dir[0], PATH_MAX, top, name)) < 0)
		return set_err(err, errlen, rc, "cgroup path too long");
	if ((rc = mkdir_ok(top)) < 0)
		return set_err(err, errlen, rc, "mkdir(%s): %s", top, strerror(-rc));
	if ((rc = v2_enable(top, err, errlen)) < 0)
		return rc;
	if ((rc = mkdir_ok(t->dir[0])) < 0)
		return set_err(err, errlen, rc, "mkdir(%s): %s", t->dir[0], strerror(-rc));
	if ((rc = rm_children(t->dir[0], NULL)) < 0)
		return set_err(err, errlen, rc, "clear %s: %s", t->dir[0], strerror(-rc));
	return v2_enable(t->dir[0], err, errlen);
}

static int tree_open_v1(struct cgroup_tree *t, char (*base)[PATH_MAX], const char *name,
			char *err, size_t errlen)
{
	for (unsigned i = 0; i < CGROUP_NCTRL; i++) {
		char top[PATH_MAX];
		int rc;

		if ((rc = join(top, sizeof(top), base[i], CGROUP_TOP)) < 0 ||
		    (rc = join(t->dir[i], PATH_MAX, top, name)) < 0)
			return set_err(err, errlen, rc, "cgroup path too long");
		if ((rc = mkdir_ok(top)) < 0 || (rc = mkdir_ok(t->dir[i])) < 0)
			return set_err(err, errlen, rc, "mkdir(%s): %s", t->dir[i],
				       strerror(-rc));
		if ((rc = rm_children(t->dir[i], NULL)) < 0)
			return set_err(err, errlen, rc, "clear %s: %s", t->dir[i],
				       strerror(-rc));
	}
	return 0;
}

int cgroup_tree_open(const char *root_override, const char *name, struct cgroup_tree **out, char *err,
		 size_t errlen)
{
	struct cgroup_layout *lay;
	struct cgroup_tree *t;
	int rc;

	if (!name || !*name || strchr(name, '/') || name[0] == '.')
		return set_err(err, errlen, -EINVAL, "bad cgroup tree name");
	lay = xmalloc(sizeof(*lay));
	t = xcalloc(1, sizeof(*t));
	if ((rc = discover(root_override, lay, err, errlen)) < 0)
		goto out;
	t->ver = lay->ver;
	t->ndirs = lay->ndirs;
	if (lay->ver == CGROUP_V2)
		rc = tree_open_v2(t, lay->base[0], name, err, errlen);
	else
		rc = tree_open_v1(t, lay->base, name, err, errlen);
	if (rc < 0)
		goto out;
	*out = t;
	t = NULL;
out:
	if (t)
		cgroup_tree_close(t);
	free(lay);
	return rc;
}

void cgroup_tree_close(struct cgroup_tree *t)
{
	if (!t)
		return;
	remove_dirs(t->dir, t->ndirs);
	free(t);
}

enum cgroup_version cgroup_tree_version(const struct cgroup_tree *t)
{
	return t->ver;
}

/*
 * Subtrees are named "<master pid>-<role>": one whose master is still
 * alive belongs to another goboxd on this host and is left alone.
 */
static bool owned_by_live_process(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (end == name || *end != '-' || pid <= 0 || pid == (long)getpid())
		return false;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int cgroup_sweep(const char *root_override, unsigned *removed)
{
	struct cgroup_layout *lay = xmalloc(sizeof(*lay));
	unsigned count = 0;
	char err[256];
	int rc = 0;

	if ((rc = discover(root_override, lay, err, sizeof(err))) < 0) {
		log_warn("cgroup sweep: %s", err);
		goto out;
	}
	for (unsigned i = 0; i < lay->ndirs; i++) {
		char top[PATH_MAX];
		int r;

		if (dup_dir(lay->base, i))
			continue;
		if ((rc = join(top, sizeof(top), lay->base[i], CGROUP_TOP)) < 0)
			goto out;
		if ((r = rm_children_unless(top, &count, owned_by_live_process)) < 0)
			rc = r;
	}
out:
	free(lay);
	if (rc == 0 && removed)
		*removed = count;
	return rc;
}

/* ---- steps ---- */

static int limits_v1(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen)
{
	const char *mem = s->dir[CGROUP_MEM];
	const char *pids = s->dir[CGROUP_PIDS];
	char num[32];
	int rc;

	if (l->memory_bytes) {
		uint64_t want = l->memory_bytes + s->base_memory, now = 0;
		/* memory+swap at the same limit: the step cannot swap out. The
		 * kernel keeps memsw's at least the memory one's, so a limit
		 * raised (a cgroup serving again) takes memsw's first. */
		bool memsw = s->has_memsw;
		bool raise = memsw && step_read_u64(s, mem, "memory.limit_in_bytes", &now) == 0 &&
			     want > now;

		snprintf(num, sizeof(num), "%llu", (unsigned long long)want);
		if (raise &&
		    (rc = step_write_or_say(s, mem, "memory.memsw.limit_in_bytes", num, err, errlen)) < 0)
			return rc;
		if ((rc = step_write_or_say(s, mem, "memory.limit_in_bytes", num, err, errlen)) < 0)
			return rc;
		if (memsw && !raise &&
		    (rc = step_write_or_say(s, mem, "memory.memsw.limit_in_bytes", num, err, errlen)) < 0)
			return rc;
	}
	/* both are best effort: without swap, or on kernels that refuse them */
	step_write(s, mem, "memory.swappiness", "0");
	/* a new group inherits oom_kill_disable from its parent; we want the
	 * kernel to kill inside the group rather than hang it */
	step_write(s, mem, "memory.oom_control", "0");
	if (l->pids) {
		snprintf(num, sizeof(num), "%u", l->pids);
		if ((rc = step_write_or_say(s, pids, "pids.max", num, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

static int limits_v2(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen)
{
	const char *dir = s->dir[0];
	char num[32];
	int rc;

	if (l->memory_bytes) {
		uint64_t want = l->memory_bytes + s->base_memory;

		snprintf(num, sizeof(num), "%llu", (unsigned long long)want);
		if ((rc = step_write_or_say(s, dir, "memory.max", num, err, errlen)) < 0)
			return rc;
	}
	/* absent when the kernel does no swap accounting: nothing to limit then */
	rc = step_write(s, dir, "memory.swap.max", "0");
	if (rc < 0 && rc != -ENOENT)
		return set_err(err, errlen, rc, "write(%s/memory.swap.max, 0): %s", dir,
			       strerror(-rc));
	if (l->pids) {
		snprintf(num, sizeof(num), "%u", l->pids);
		if ((rc = step_write_or_say(s, dir, "pids.max", num, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

/* Create the step's directory in every hierarchy; EEXIST means a leftover
 * of an earlier worker with our pid, so the caller tries the next name. */
static int step_mkdirs(struct cgroup_step *s, const struct cgroup_tree *t, const char *name)
{
	for (unsigned i = 0; i < t->ndirs; i++) {
		int rc = join(s->dir[i], PATH_MAX, t->dir[i], name);

		if (rc < 0)
			return rc;
		if (dup_dir(s->dir, i))
			continue;
		if (mkdir(s->dir[i], 0755) < 0) {
			rc = -errno;
			for (unsigned j = 0; j < i; j++)
				if (!dup_dir(s->dir, j))
					rmdir(s->dir[j]);
			return rc;
		}
	}
	return 0;
}

static int step_prepare_procs(struct cgroup_step *s)
{
	int rc;

	s->nprocs_files = 0;
	for (unsigned i = 0; i < s->ndirs; i++) {
		char path[PATH_MAX];

		if (dup_dir(s->dir, i))
			continue;
		if ((rc = join(path, sizeof(path), s->dir[i], "cgroup.procs")) < 0)
			return rc;
		snprintf(s->procs[s->nprocs_files], sizeof(s->procs[0]), "%s", path);
		s->nprocs_files++;
	}
	return 0;
}

int cgroup_step_create(struct cgroup_tree *t, const struct cgroup_limits *l, struct cgroup_step **out,
		   char *err, size_t errlen)
{
	struct cgroup_step *s = xcalloc(1, sizeof(*s));
	char name[64];
	bool made = false;
	int rc = -EEXIST;

	s->ver = t->ver;
	s->ndirs = t->ndirs;
	s->peak_fd = -1;
	s->files = xcalloc(1, sizeof(*s->files));
	for (int tries = 0; tries < 16 && rc == -EEXIST; tries++) {
		snprintf(name, sizeof(name), "s%lu-%d", t->counter++, (int)getpid());
		rc = step_mkdirs(s, t, name);
	}
	if (rc < 0) {
		set_err(err, errlen, rc, "mkdir(%s): %s", s->dir[0], strerror(-rc));
		goto out;
	}
	made = true;
	if ((rc = step_prepare_procs(s)) < 0) {
		set_err(err, errlen, rc, "cgroup path too long");
		goto out;
	}
	if (s->ver == CGROUP_V2) {
		s->has_kill = exists_in(s->dir[0], "cgroup.kill");
		s->has_peak = exists_in(s->dir[0], "memory.peak");
		rc = limits_v2(s, l, err, errlen);
	} else {
		s->has_memsw = exists_in(s->dir[CGROUP_MEM], "memory.memsw.limit_in_bytes");
		rc = limits_v1(s, l, err, errlen);
	}
	if (rc < 0)
		goto out;
	*out = s;
	s = NULL;
out:
	if (s && made) {
		cgroup_step_destroy(s);
	} else if (s) {
		step_files_close(s);
		free(s);
	}
	return rc;
}

int cgroup_step_enter(const struct cgroup_step *s)
{
	for (unsigned i = 0; i < s->nprocs_files; i++) {
		int fd = open(s->procs[i], O_WRONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return -errno;
		/* "0" is the writer itself */
		do
			n = write(fd, "0", 1);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		close(fd);
	}
	return 0;
}

int cgroup_step_open_procs(const struct cgroup_step *s, int *fds, size_t max)
{
	size_t n = 0;

	if (s->nprocs_files > max)
		return -E2BIG;
	for (; n < s->nprocs_files; n++) {
		fds[n] = open(s->procs[n], O_WRONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			int e = errno;

			while (n > 0)
				close(fds[--n]);
			return -e;
		}
	}
	return (int)n;
}

int cgroup_step_kill(struct cgroup_step *s)
{
	/* cgroup.kill takes the whole group at once, forks in flight included;
	 * the loop then only waits for the group to drain */
	if (s->ver == CGROUP_V2 && s->has_kill && !s->spare)
		step_write(s, s->dir[0], "cgroup.kill", "1");
	return kill_until_empty(s->dir, s->ndirs, s->spare);
}

void cgroup_step_spare(struct cgroup_step *s, pid_t pid)
{
	s->spare = pid;
}

int cgroup_step_set_limits(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen)
{
	return s->ver == CGROUP_V2 ? limits_v2(s, l, err, errlen) : limits_v1(s, l, err, errlen);
}

int cgroup_step_nprocs(const struct cgroup_step *s)
{
	return read_pids_in(s->dir[0], NULL, 0);
}

int cgroup_step_pids(const struct cgroup_step *s, pid_t *pids, size_t max)
{
	int n = read_pids_in(s->dir[0], pids, max);

	if (n < 0)
		return n;
	return (size_t)n > max ? (int)max : n;
}

int cgroup_step_cpu_us(const struct cgroup_step *s, uint64_t *out)
{
	uint64_t v;
	int rc;

	if (s->ver == CGROUP_V2) {
		if ((rc = step_read_kv(s, s->dir[0], "cpu.stat", "usage_usec", &v)) < 0)
			return rc;
	} else {
		if ((rc = step_read_u64(s, s->dir[CGROUP_CPU], "cpuacct.usage", &v)) < 0)
			return rc;
		v /= 1000;
	}
	*out = v > s->base_cpu_us ? v - s->base_cpu_us : 0;
	return 0;
}

/* Charged now, the base not taken off. */
static int memory_raw(const struct cgroup_step *s, uint64_t *out)
{
	if (s->ver == CGROUP_V2)
		return step_read_u64(s, s->dir[0], "memory.current", out);
	return step_read_u64(s, s->dir[CGROUP_MEM], "memory.usage_in_bytes", out);
}

/* Of that, the kernel's objects (dentries and inodes above all): v2's
 * slab, v1's kmem. -ENOENT where the kernel does not say. */
static int kernel_memory_raw(const struct cgroup_step *s, uint64_t *out)
{
	if (s->ver == CGROUP_V2)
		return step_read_kv(s, s->dir[0], "memory.stat", "slab", out);
	return step_read_u64(s, s->dir[CGROUP_MEM], "memory.kmem.usage_in_bytes", out);
}

int cgroup_step_memory_now(const struct cgroup_step *s, uint64_t *out)
{
	uint64_t v;
	int rc = memory_raw(s, &v);

	if (rc < 0)
		return rc;
	*out = v > s->base_memory ? v - s->base_memory : 0;
	return 0;
}

static int stats_v1(const struct cgroup_step *s, struct cgroup_stats *st)
{
	const char *mem = s->dir[CGROUP_MEM];
	uint64_t v, limit;
	int rc;

	if ((rc = step_read_u64(s, mem, "memory.max_usage_in_bytes", &st->memory_peak_bytes)) < 0)
		return rc;
	/* oom_kill appeared in 4.13; older kernels leave oom_killed false */
	rc = step_read_kv(s, mem, "memory.oom_control", "oom_kill", &v);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	st->oom_killed = rc == 0 && v > s->base_oom_kills;
	if ((rc = step_read_u64(s, mem, "memory.failcnt", &v)) < 0)
		return rc;
	/* some kernels (seen on 6.18) keep failcnt at 0 on v1 even through an
	 * OOM kill; a high-water mark at the limit says the same thing */
	if ((rc = step_read_u64(s, mem, "memory.limit_in_bytes", &limit)) < 0)
		return rc;
	st->memory_limit_hit = v > 0 || st->memory_peak_bytes >= limit;
	return 0;
}

static int stats_v2(const struct cgroup_step *s, struct cgroup_stats *st)
{
	const char *dir = s->dir[0];
	char buf[1024];
	uint64_t v;
	int rc;

	if (s->peak_fd >= 0) {
		ssize_t n = pread(s->peak_fd, buf, sizeof(buf) - 1, 0);

		if (n < 0)
			return -errno;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if ((rc = parse_u64(buf, 0, UINT64_MAX, &st->memory_peak_bytes)) < 0)
			return rc;
	} else if (s->has_peak) {
		if ((rc = step_read_u64(s, dir, "memory.peak", &st->memory_peak_bytes)) < 0)
			return rc;
	} else {
		if ((rc = step_read_u64(s, dir, "memory.current", &v)) < 0)
			return rc;
		st->memory_peak_bytes = v > s->peak_sample ? v : s->peak_sample;
	}
	if ((rc = step_read(s, dir, "memory.events", buf, sizeof(buf))) < 0)
		return rc;
	st->oom_killed = cgroup_parse_kv(buf, "oom_kill", &v) == 0 && v > s->base_oom_kills;
	st->memory_limit_hit = cgroup_parse_kv(buf, "max", &v) == 0 && v > s->base_max_events;
	return 0;
}

int cgroup_step_stats(const struct cgroup_step *s, struct cgroup_stats *out)
{
	struct cgroup_stats st;
	int rc;

	memset(&st, 0, sizeof(st));
	if ((rc = cgroup_step_cpu_us(s, &st.cpu_us)) < 0)
		return rc;
	rc = s->ver == CGROUP_V2 ? stats_v2(s, &st) : stats_v1(s, &st);
	if (rc < 0)
		return rc;
	st.memory_peak_bytes = st.memory_peak_bytes > s->base_memory ?
			       st.memory_peak_bytes - s->base_memory : 0;
	*out = st;
	return 0;
}

int cgroup_step_sample(struct cgroup_step *s)
{
	uint64_t v;
	int rc;

	if (s->ver != CGROUP_V2 || s->has_peak)
		return 0;
	if ((rc = step_read_u64(s, s->dir[0], "memory.current", &v)) < 0)
		return rc;
	if (v > s->peak_sample)
		s->peak_sample = v;
	return 0;
}

/* A floor's kernel part: where it cannot be read, no bound (the slack
 * added to it must not wrap). 0 when the kernel does not say (-ENOENT). */
static int kernel_floor(const struct cgroup_step *s, uint64_t *out)
{
	int rc = kernel_memory_raw(s, out);

	if (rc < 0)
		*out = UINT64_MAX - CGROUP_REBASE_SLACK;
	return rc == -ENOENT ? 0 : rc;
}

int cgroup_step_note_own(struct cgroup_step *s)
{
	int rc = memory_raw(s, &s->own_memory);

	if (rc == 0)
		rc = kernel_floor(s, &s->own_kernel);
	if (rc == 0)
		s->has_own = true;
	return rc;
}

/* Best effort: the spared process's own pages cannot go, and need not. */
static void reclaim(struct cgroup_step *s, uint64_t now)
{
	char num[32];

	if (s->ver == CGROUP_V1) {
		step_write(s, s->dir[CGROUP_MEM], "memory.force_empty", "0");
	} else if (now > 0) {
		/* 5.19+ */
		snprintf(num, sizeof(num), "%llu", (unsigned long long)now);
		step_write(s, s->dir[0], "memory.reclaim", num);
	}
}

/*
 * The memory part of a rebase. What a program leaves charged after its
 * end is of four kinds: kernel objects the kernel frees by itself a grace
 * period later (those of its processes); kernel objects only a reclaim
 * frees, one by one (a job's negative dentries: seconds for millions);
 * page cache, which a reclaim drops at once; and what else the kernel
 * frees late (the network namespace of the job before). Its IPC objects
 * are gone already: the init removes them (ipc_clear in init.c). So:
 * kernel objects past the slack are waited for while they go down
 * (CGROUP_SETTLE_STALL_MS without a drop ends the wait with -EBUSY: they
 * are not reclaimed); then a reclaim (a light rebase skips it while the
 * charge grew by less than CGROUP_REBASE_SLACK since the last one); then,
 * between jobs only, the rest is waited for. The bound each time is a
 * floor and the slack: between jobs the init's own memory
 * (cgroup_step_note_own), between the programs of one job what the first
 * light rebase of the job found (the job's files are charged here too).
 * All waits together take at most CGROUP_SETTLE_MS. -EBUSY: the cgroup
 * cannot be made clean in time, and a fresh one serves the next program
 * sooner. *now: the usage, for the base.
 */
static int settle_memory(struct cgroup_step *s, bool light, uint64_t *now)
{
	bool bounded = light ? s->has_floor : s->has_own;
	uint64_t cap = UINT64_MAX, kcap = UINT64_MAX;
	uint64_t deadline = now_ms() + CGROUP_SETTLE_MS, k;
	int rc = memory_raw(s, now);

	if (rc < 0)
		return rc;
	if (bounded) {
		cap = (light ? s->floor_memory : s->own_memory) + CGROUP_REBASE_SLACK;
		kcap = (light ? s->floor_kernel : s->own_kernel) + CGROUP_REBASE_SLACK;
	}
	if (!(light && *now <= s->clean_memory + CGROUP_REBASE_SLACK && *now <= cap)) {
		for (uint64_t last = UINT64_MAX, since = now_ms();
		     kernel_memory_raw(s, &k) == 0 && k > kcap; sleep_us(1000)) {
			uint64_t t = now_ms();

			if (k < last) {
				last = k;
				since = t;
			}
			if (t >= deadline || t - since >= CGROUP_SETTLE_STALL_MS)
				return -EBUSY;
		}
		reclaim(s, *now);
		for (;;) {
			if ((rc = memory_raw(s, now)) < 0)
				return rc;
			if (*now <= cap)
				break;
			if (light || now_ms() >= deadline)
				return -EBUSY;
			sleep_us(1000);
		}
		s->clean_memory = *now;
	}
	if (!light) {
		s->has_floor = false;
	} else if (!s->has_floor) {
		kernel_floor(s, &s->floor_kernel);
		s->floor_memory = *now;
		s->has_floor = true;
	}
	return 0;
}

/*
 * v1: the memory settled (settle_memory), then every counter that can be
 * set back is: the peaks to the usage now, the failure counts and the CPU
 * usage to 0; the OOM kills counted so far are remembered.
 */
static int rebase_v1(struct cgroup_step *s, bool light)
{
	static const char *const zeroed[] = {
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
	};
	const char *mem = s->dir[CGROUP_MEM];
	uint64_t v = 0, now = 0;
	int rc;

	if ((rc = settle_memory(s, light, &now)) < 0)
		return rc;
	for (size_t i = 0; i < ARRAY_SIZE(zeroed); i++) {
		rc = step_write(s, mem, zeroed[i], "0");
		/* memsw is there only with swap accounting */
		if (rc < 0 && !(rc == -ENOENT && i >= 2))
			return rc;
	}
	if ((rc = step_write(s, s->dir[CGROUP_CPU], "cpuacct.usage", "0")) < 0)
		return rc;
	s->base_cpu_us = 0;
	s->base_memory = now;
	rc = step_read_kv(s, mem, "memory.oom_control", "oom_kill", &v);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	s->base_oom_kills = v;
	return 0;
}

/*
 * v2: the same where v2 allows it. Only memory.peak can be set back
 * (6.12+), and only as seen through the fd that wrote it; the CPU usage
 * and the events are remembered instead. A kernel whose memory.peak
 * cannot be reset gives -EOPNOTSUPP: the peak would be the old job's.
 */
static int rebase_v2(struct cgroup_step *s, bool light)
{
	const char *dir = s->dir[0];
	char buf[1024], path[PATH_MAX];
	uint64_t cur = 0;
	int rc, fd;

	if (!s->has_peak)
		return -EOPNOTSUPP;
	if ((rc = settle_memory(s, light, &cur)) < 0)
		return rc;
	if ((rc = join(path, sizeof(path), dir, "memory.peak")) < 0)
		return rc;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? -EOPNOTSUPP : -errno;
	if (write(fd, "reset\n", 6) < 0) {
		rc = errno == EINVAL || errno == EACCES ? -EOPNOTSUPP : -errno;
		close(fd);
		return rc;
	}
	if (s->peak_fd >= 0)
		close(s->peak_fd);
	s->peak_fd = fd;
	s->base_cpu_us = 0;
	s->base_memory = cur;
	if ((rc = cgroup_step_cpu_us(s, &s->base_cpu_us)) < 0)
		return rc;
	if ((rc = step_read(s, dir, "memory.events", buf, sizeof(buf))) < 0)
		return rc;
	s->base_oom_kills = s->base_max_events = 0;
	cgroup_parse_kv(buf, "oom_kill", &s->base_oom_kills);
	cgroup_parse_kv(buf, "max", &s->base_max_events);
	return 0;
}

int cgroup_step_rebase(struct cgroup_step *s, bool light)
{
	int rc = read_pids_in(s->dir[0], NULL, 0);

	if (rc < 0)
		return rc;
	if (rc > (s->spare ? 1 : 0))
		return -EBUSY;
	s->peak_sample = 0;
	return s->ver == CGROUP_V2 ? rebase_v2(s, light) : rebase_v1(s, light);
}

void cgroup_step_destroy(struct cgroup_step *s)
{
	int rc;

	if (!s)
		return;
	if (s->peak_fd >= 0)
		close(s->peak_fd);
	s->spare = 0;
	rc = cgroup_step_kill(s);
	if (rc < 0)
		log_warn("kill cgroup %s: %s", s->dir[0], strerror(-rc));
	step_files_close(s);
	remove_dirs(s->dir, s->ndirs);
	free(s);
}
