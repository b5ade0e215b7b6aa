#include "autoconf.h"

/*
 * cgroup v2: one directory per step holding every controller's files.
 * The table of operations cgroup.c calls (cgroup_ops.h). Kernels differ:
 * cgroup.kill from 5.14, memory.peak from 5.19 (before it, the peak is
 * sampled), memory.reclaim from 5.19, a resettable memory.peak from 6.12.
 */
#include "worker/cgroup/cgroup.h"
#include "worker/cgroup/cgroup_ops.h"
#include "worker/cgroup/cgroup_place.h"
#include "worker/cgroup/cgroupfs.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int tree_open(struct cgroup_tree *t, const struct cgroup_layout *lay, const char *name,
		     char *err, size_t errlen)
{
	const char *base = lay->base[0];
	char top[PATH_MAX];
	int rc;

	t->ndirs = 1;
	if ((rc = cgroup_place_v2_enable(base, err, errlen)) == -EBUSY)
		return cgroupfs_err(err, errlen, rc,
				    "%s has member processes: cgroup_place_start() must run first",
				    base);
	if (rc < 0)
		return rc;
	if ((rc = cgroupfs_join(top, sizeof(top), base, CGROUP_TOP)) < 0 ||
	    (rc = cgroupfs_join(t->dir[0], PATH_MAX, top, name)) < 0)
		return cgroupfs_err(err, errlen, rc, "cgroup path too long");
	if ((rc = cgroupfs_mkdir(top)) < 0)
		return cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", top, strerror(-rc));
	if ((rc = cgroup_place_v2_enable(top, err, errlen)) < 0)
		return rc;
	if ((rc = cgroupfs_mkdir(t->dir[0])) < 0)
		return cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", t->dir[0], strerror(-rc));
	if ((rc = cgroupfs_rm_children(t->dir[0], NULL)) < 0)
		return cgroupfs_err(err, errlen, rc, "clear %s: %s", t->dir[0], strerror(-rc));
	return cgroup_place_v2_enable(t->dir[0], err, errlen);
}

static void probe(struct cgroup_step *s)
{
	s->has_kill = cgroupfs_exists(s->dir[0], "cgroup.kill");
	s->has_peak = cgroupfs_exists(s->dir[0], "memory.peak");
}

static int limits(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen)
{
	struct cgroupfs_files *f = s->files;
	const char *dir = s->dir[0];
	char num[32];
	int rc;

	if (l->memory_bytes) {
		uint64_t want = l->memory_bytes + s->base_memory;

		snprintf(num, sizeof(num), "%llu", (unsigned long long)want);
		if ((rc = cgroupfs_files_write_or_say(f, dir, "memory.max", num, err, errlen)) < 0)
			return rc;
	}
	/* absent when the kernel does no swap accounting: nothing to limit then */
	rc = cgroupfs_files_write(f, dir, "memory.swap.max", "0");
	if (rc < 0 && rc != -ENOENT)
		return cgroupfs_err(err, errlen, rc, "write(%s/memory.swap.max, 0): %s", dir,
				    strerror(-rc));
	if (l->pids) {
		snprintf(num, sizeof(num), "%u", l->pids);
		if ((rc = cgroupfs_files_write_or_say(f, dir, "pids.max", num, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

/* cgroup.kill takes the whole group at once, forks in flight included;
 * cgroup.c's loop then only waits for the group to drain */
static void kill_all(struct cgroup_step *s)
{
	if (s->has_kill)
		cgroupfs_files_write(s->files, s->dir[0], "cgroup.kill", "1");
}

static int cpu_us(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_kv(s->files, s->dir[0], "cpu.stat", "usage_usec", out);
}

static int tasks(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_u64(s->files, s->dir[0], "pids.current", out);
}

static int memory(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_u64(s->files, s->dir[0], "memory.current", out);
}

static int kernel_memory(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_kv(s->files, s->dir[0], "memory.stat", "slab", out);
}

static int stats(const struct cgroup_step *s, struct cgroup_stats *st)
{
	struct cgroupfs_files *f = s->files;
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
		if ((rc = cgroupfs_files_read_u64(f, dir, "memory.peak",
						  &st->memory_peak_bytes)) < 0)
			return rc;
	} else {
		if ((rc = cgroupfs_files_read_u64(f, dir, "memory.current", &v)) < 0)
			return rc;
		st->memory_peak_bytes = v > s->peak_sample ? v : s->peak_sample;
	}
	if ((rc = cgroupfs_files_read(f, dir, "memory.events", buf, sizeof(buf))) < 0)
		return rc;
	st->oom_killed = cgroupfs_parse_kv(buf, "oom_kill", &v) == 0 && v > s->base_oom_kills;
	st->memory_limit_hit = cgroupfs_parse_kv(buf, "max", &v) == 0 && v > s->base_max_events;
	return 0;
}

static int sample(struct cgroup_step *s)
{
	uint64_t v;
	int rc;

	if (s->has_peak)
		return 0;
	if ((rc = memory(s, &v)) < 0)
		return rc;
	if (v > s->peak_sample)
		s->peak_sample = v;
	return 0;
}

static void reclaim(struct cgroup_step *s, uint64_t now)
{
	char num[32];

	if (now == 0)
		return;
	/* 5.19+ */
	snprintf(num, sizeof(num), "%llu", (unsigned long long)now);
	cgroupfs_files_write(s->files, s->dir[0], "memory.reclaim", num);
}

/* Without memory.peak (before 5.19), as where it cannot be reset: the
 * peak would be the old job's. */
static int can_rebase(const struct cgroup_step *s)
{
	return s->has_peak ? 0 : -EOPNOTSUPP;
}

/*
 * Only memory.peak can be set back (6.12+), and only as seen through the
 * fd that wrote it; the CPU usage and the events are remembered instead.
 * -EOPNOTSUPP where the reset is refused.
 */
static int rebase(struct cgroup_step *s, uint64_t now)
{
	const char *dir = s->dir[0];
	char buf[1024], path[PATH_MAX];
	int rc, fd;

	if ((rc = cgroupfs_join(path, sizeof(path), dir, "memory.peak")) < 0)
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
	s->base_memory = now;
	if ((rc = cpu_us(s, &s->base_cpu_us)) < 0)
		return rc;
	if ((rc = cgroupfs_files_read(s->files, dir, "memory.events", buf, sizeof(buf))) < 0)
		return rc;
	s->base_oom_kills = s->base_max_events = 0;
	cgroupfs_parse_kv(buf, "oom_kill", &s->base_oom_kills);
	cgroupfs_parse_kv(buf, "max", &s->base_max_events);
	return 0;
}

const struct cgroup_ops cgroup_v2 = {
	.ver = CGROUP_V2,
	.tree_open = tree_open,
	.probe = probe,
	.limits = limits,
	.kill_all = kill_all,
	.cpu_us = cpu_us,
	.tasks = tasks,
	.memory = memory,
	.kernel_memory = kernel_memory,
	.stats = stats,
	.sample = sample,
	.reclaim = reclaim,
	.can_rebase = can_rebase,
	.rebase = rebase,
};
