#include "autoconf.h"

#include "worker/cgroup/cgroup.h"

#include "worker/cgroup/cgroup_ops.h"
#include "worker/cgroup/cgroup_place.h"
#include "worker/cgroup/cgroupfs.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the worker's tree ---- */

/*
 * A tree's directories are held open with a shared flock while it lives
 * (the lock goes with its last holder: a crashed worker's tree is free),
 * so that cgroup_sweep tells a tree in use from a leftover without
 * trusting a pid that another pid namespace may not show.
 */
static int tree_lock(struct cgroup_tree *t, char *err, size_t errlen)
{
	for (unsigned i = 0; i < t->ndirs; i++) {
		int fd;

		if (cgroupfs_dup_dir(t->dir, i))
			continue;
		fd = open(t->dir[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return cgroupfs_err(err, errlen, -errno, "open(%s): %s", t->dir[i],
					    strerror(errno));
		t->lock_fd[i] = fd;
		if (flock(fd, LOCK_SH | LOCK_NB) < 0)
			return cgroupfs_err(err, errlen, -errno,
					    "%s is being removed by another goboxd's sweep: %s",
					    t->dir[i], strerror(errno));
	}
	return 0;
}

int cgroup_tree_open(const char *root_override, const char *name, struct cgroup_tree **out,
		     char *err, size_t errlen)
{
	struct cgroup_layout *lay;
	struct cgroup_tree *t;
	int rc;

	if (!name || !*name || strchr(name, '/') || name[0] == '.')
		return cgroupfs_err(err, errlen, -EINVAL, "bad cgroup tree name");
	lay = xmalloc(sizeof(*lay));
	t = xcalloc(1, sizeof(*t));
	for (unsigned i = 0; i < CGROUP_NCTRL; i++)
		t->lock_fd[i] = -1;
	if ((rc = cgroup_place_layout(root_override, lay, err, errlen)) < 0)
		goto out;
	t->ops = lay->ver == CGROUP_V2 ? &cgroup_v2 : &cgroup_v1;
	if ((rc = t->ops->tree_open(t, lay, name, err, errlen)) < 0 ||
	    (rc = tree_lock(t, err, errlen)) < 0)
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
	cgroupfs_remove_dirs(t->dir, t->ndirs);
	for (unsigned i = 0; i < CGROUP_NCTRL; i++)
		if (t->lock_fd[i] >= 0)
			close(t->lock_fd[i]);
	free(t);
}

enum cgroup_version cgroup_tree_version(const struct cgroup_tree *t)
{
	return t->ops->ver;
}

/*
 * Whether a live process holds the tree at path (tree_lock). A master in
 * a pid namespace of its own (pid 1 in a container) sees no pid of
 * another goboxd that shares its cgroups: only the lock tells it that
 * the tree is in use.
 */
static bool held(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/*
 * Subtrees are named "<master pid>-<role>": one that a live process
 * holds, or whose master is still alive, belongs to another goboxd on
 * this host and is left alone.
 */
static bool in_use(const char *path, const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (held(path))
		return true;
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

	if ((rc = cgroup_place_layout(root_override, lay, err, sizeof(err))) < 0) {
		log_warn("cgroup sweep: %s", err);
		goto out;
	}
	for (unsigned i = 0; i < lay->ndirs; i++) {
		char top[PATH_MAX];
		int r;

		if (cgroupfs_dup_dir(lay->base, i))
			continue;
		if ((rc = cgroupfs_join(top, sizeof(top), lay->base[i], CGROUP_TOP)) < 0)
			goto out;
		if ((r = cgroupfs_rm_children_unless(top, &count, in_use)) < 0)
			rc = r;
	}
out:
	free(lay);
	if (rc == 0 && removed)
		*removed = count;
	return rc;
}

/* ---- steps ---- */

/* Create the step's directory in every hierarchy; EEXIST means a leftover
 * of an earlier worker with our pid, so the caller tries the next name. */
static int step_mkdirs(struct cgroup_step *s, const struct cgroup_tree *t, const char *name)
{
	for (unsigned i = 0; i < t->ndirs; i++) {
		int rc = cgroupfs_join(s->dir[i], PATH_MAX, t->dir[i], name);

		if (rc < 0)
			return rc;
		if (cgroupfs_dup_dir(s->dir, i))
			continue;
		if (mkdir(s->dir[i], 0755) < 0) {
			rc = -errno;
			for (unsigned j = 0; j < i; j++)
				if (!cgroupfs_dup_dir(s->dir, j))
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

		if (cgroupfs_dup_dir(s->dir, i))
			continue;
		if ((rc = cgroupfs_join(path, sizeof(path), s->dir[i], "cgroup.procs")) < 0)
			return rc;
		snprintf(s->procs[s->nprocs_files], sizeof(s->procs[0]), "%s", path);
		s->nprocs_files++;
	}
	return 0;
}

int cgroup_step_create(struct cgroup_tree *t, const struct cgroup_limits *l,
		       struct cgroup_step **out, char *err, size_t errlen)
{
	struct cgroup_step *s = xcalloc(1, sizeof(*s));
	char name[64];
	bool made = false;
	int rc = -EEXIST;

	s->ops = t->ops;
	s->ndirs = t->ndirs;
	s->peak_fd = -1;
	s->files = cgroupfs_files_new();
	for (int tries = 0; tries < 16 && rc == -EEXIST; tries++) {
		snprintf(name, sizeof(name), "s%lu-%d", t->counter++, (int)getpid());
		rc = step_mkdirs(s, t, name);
	}
	if (rc < 0) {
		cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", s->dir[0], strerror(-rc));
		goto out;
	}
	made = true;
	if ((rc = step_prepare_procs(s)) < 0) {
		cgroupfs_err(err, errlen, rc, "cgroup path too long");
		goto out;
	}
	s->ops->probe(s);
	if ((rc = cgroup_step_set_limits(s, l, err, errlen)) < 0)
		goto out;
	*out = s;
	s = NULL;
out:
	if (s && made) {
		cgroup_step_destroy(s);
	} else if (s) {
		cgroupfs_files_close(s->files);
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

/*
 * Nothing in it but the spared process, as the pids controller counts:
 * what a step holds after most programs, told from one counter instead
 * of cgroup.procs in every hierarchy. A task is charged from its fork to
 * its reaping, so a count of the spare alone leaves no other task alive
 * in it; any other count, or none to read, says nothing.
 */
static bool holds_only_spare(const struct cgroup_step *s)
{
	uint64_t n;

	if (s->ops->tasks(s, &n) < 0)
		return false;
	if (!s->spare)
		return n == 0;
	return n == 1 && kill(s->spare, 0) == 0;
}

int cgroup_step_kill(struct cgroup_step *s)
{
	if (holds_only_spare(s))
		return 0;
	if (s->ops->kill_all && !s->spare)
		s->ops->kill_all(s);
	return cgroupfs_kill_until_empty(s->dir, s->ndirs, s->spare);
}

void cgroup_step_spare(struct cgroup_step *s, pid_t pid)
{
	s->spare = pid;
}

pid_t cgroup_step_spared(const struct cgroup_step *s)
{
	return s->spare;
}

/* The version's writes, remembered: only goboxd writes a step's limits,
 * so the same limits over the same base are there already. */
int cgroup_step_set_limits(struct cgroup_step *s, const struct cgroup_limits *l, char *err,
			   size_t errlen)
{
	int rc;

	if (s->has_written && s->written_memory == l->memory_bytes &&
	    s->written_base == s->base_memory && s->written_pids == l->pids)
		return 0;
	s->has_written = false;
	if ((rc = s->ops->limits(s, l, err, errlen)) < 0)
		return rc;
	s->has_written = true;
	s->written_memory = l->memory_bytes;
	s->written_base = s->base_memory;
	s->written_pids = l->pids;
	return 0;
}


int cgroup_step_nprocs(const struct cgroup_step *s)
{
	return cgroupfs_read_pids(s->dir[0], NULL, 0);
}

int cgroup_step_pids(const struct cgroup_step *s, pid_t *pids, size_t max)
{
	int n = cgroupfs_read_pids(s->dir[0], pids, max);

	if (n < 0)
		return n;
	return (size_t)n > max ? (int)max : n;
}

int cgroup_step_cpu_us(const struct cgroup_step *s, uint64_t *out)
{
	uint64_t v;
	int rc = s->ops->cpu_us(s, &v);

	if (rc < 0)
		return rc;
	*out = v > s->base_cpu_us ? v - s->base_cpu_us : 0;
	return 0;
}

int cgroup_step_memory_now(const struct cgroup_step *s, uint64_t *out)
{
	uint64_t v;
	int rc = s->ops->memory(s, &v);

	if (rc < 0)
		return rc;
	*out = v > s->base_memory ? v - s->base_memory : 0;
	return 0;
}

int cgroup_step_stats(const struct cgroup_step *s, struct cgroup_stats *out)
{
	struct cgroup_stats st;
	int rc;

	memset(&st, 0, sizeof(st));
	if ((rc = cgroup_step_cpu_us(s, &st.cpu_us)) < 0)
		return rc;
	if ((rc = s->ops->stats(s, &st)) < 0)
		return rc;
	st.memory_peak_bytes = st.memory_peak_bytes > s->base_memory ?
			       st.memory_peak_bytes - s->base_memory : 0;
	*out = st;
	return 0;
}

int cgroup_step_sample(struct cgroup_step *s)
{
	return s->ops->sample ? s->ops->sample(s) : 0;
}

/* A floor's kernel part: where it cannot be read, no bound (the slack
 * added to it must not wrap). 0 when the kernel does not say (-ENOENT). */
static int kernel_floor(const struct cgroup_step *s, uint64_t *out)
{
	int rc = s->ops->kernel_memory(s, out);

	if (rc < 0)
		*out = UINT64_MAX - CGROUP_REBASE_SLACK;
	return rc == -ENOENT ? 0 : rc;
}

int cgroup_step_note_own(struct cgroup_step *s)
{
	int rc = s->ops->memory(s, &s->own_memory);

	if (rc == 0)
		rc = kernel_floor(s, &s->own_kernel);
	if (rc == 0)
		s->has_own = true;
	return rc;
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
 * are not reclaimed); then a reclaim when more than the bound is charged
 * (a light rebase also skips it while the charge grew by less than
 * CGROUP_REBASE_SLACK since the last one); then,
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
	int rc = s->ops->memory(s, now);

	if (rc < 0)
		return rc;
	if (bounded) {
		cap = (light ? s->floor_memory : s->own_memory) + CGROUP_REBASE_SLACK;
		kcap = (light ? s->floor_kernel : s->own_kernel) + CGROUP_REBASE_SLACK;
	}
	if (!(light && *now <= s->clean_memory + CGROUP_REBASE_SLACK && *now <= cap)) {
		for (uint64_t last = UINT64_MAX, since = now_ms();
		     s->ops->kernel_memory(s, &k) == 0 && k > kcap; cgroupfs_sleep_us(1000)) {
			uint64_t t = now_ms();

			if (k < last) {
				last = k;
				since = t;
			}
			if (t >= deadline || t - since >= CGROUP_SETTLE_STALL_MS)
				return -EBUSY;
		}
		/* Best effort, and only when there is more than the bound to
		 * free: the spared process's own pages cannot go, and a reclaim
		 * that finds nothing to take still scans, again and again (on
		 * v1 a quarter of a millisecond a job). */
		if ((rc = s->ops->memory(s, now)) < 0)
			return rc;
		if (*now > cap) {
			s->ops->reclaim(s, *now);
			if ((rc = s->ops->memory(s, now)) < 0)
				return rc;
		}
		while (*now > cap) {
			if (light || now_ms() >= deadline)
				return -EBUSY;
			cgroupfs_sleep_us(1000);
			if ((rc = s->ops->memory(s, now)) < 0)
				return rc;
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
 * Nothing but the spared process in it; the counters that cannot start
 * again on this kernel refuse (-EOPNOTSUPP); the memory settled; then
 * the version's counters start from here.
 */
int cgroup_step_rebase(struct cgroup_step *s, bool light)
{
	uint64_t now = 0;
	int rc = holds_only_spare(s) ? 0 : cgroupfs_read_pids(s->dir[0], NULL, 0);

	if (rc < 0)
		return rc;
	if (rc > (s->spare ? 1 : 0))
		return -EBUSY;
	s->peak_sample = 0;
	if (s->ops->can_rebase && (rc = s->ops->can_rebase(s)) < 0)
		return rc;
	if ((rc = settle_memory(s, light, &now)) < 0)
		return rc;
	return s->ops->rebase(s, now);
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
	cgroupfs_files_close(s->files);
	cgroupfs_remove_dirs(s->dir, s->ndirs);
	free(s);
}

int cgroup_step_signal(const struct cgroup_step *s, int sig)
{
	pid_t pids[256];
	int n = cgroup_step_pids(s, pids, ARRAY_SIZE(pids));

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (pids[i] != s->spare)
			kill(pids[i], sig);
	return 0;
}
