#include "autoconf.h"

/*
 * cgroup v1: the memory, pids and cpuacct controllers, each mounted apart
 * (two may share a hierarchy), a step's directory in each. The table of
 * operations cgroup.c calls (cgroup_ops.h).
 */
#include "worker/cgroup/cgroup.h"
#include "worker/cgroup/cgroup_ops.h"
#include "worker/cgroup/cgroupfs.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int tree_open(struct cgroup_tree *t, const struct cgroup_layout *lay, const char *name,
		     char *err, size_t errlen)
{
	t->ndirs = CGROUP_NCTRL;
	for (unsigned i = 0; i < CGROUP_NCTRL; i++) {
		char top[PATH_MAX];
		int rc;

		if ((rc = cgroupfs_join(top, sizeof(top), lay->base[i], CGROUP_TOP)) < 0 ||
		    (rc = cgroupfs_join(t->dir[i], PATH_MAX, top, name)) < 0)
			return cgroupfs_err(err, errlen, rc, "cgroup path too long");
		if ((rc = cgroupfs_mkdir(top)) < 0 || (rc = cgroupfs_mkdir(t->dir[i])) < 0)
			return cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", t->dir[i],
					    strerror(-rc));
		if ((rc = cgroupfs_rm_children(t->dir[i], NULL)) < 0)
			return cgroupfs_err(err, errlen, rc, "clear %s: %s", t->dir[i],
					    strerror(-rc));
	}
	return 0;
}

static void probe(struct cgroup_step *s)
{
	s->has_memsw = cgroupfs_exists(s->dir[CGROUP_MEM], "memory.memsw.limit_in_bytes");
}

static int limits(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen)
{
	struct cgroupfs_files *f = s->files;
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
		bool raise = memsw &&
			     cgroupfs_files_read_u64(f, mem, "memory.limit_in_bytes", &now) == 0 &&
			     want > now;

		snprintf(num, sizeof(num), "%llu", (unsigned long long)want);
		if (raise && (rc = cgroupfs_files_write_or_say(f, mem, "memory.memsw.limit_in_bytes",
							       num, err, errlen)) < 0)
			return rc;
		if ((rc = cgroupfs_files_write_or_say(f, mem, "memory.limit_in_bytes", num, err,
						      errlen)) < 0)
			return rc;
		if (memsw && !raise &&
		    (rc = cgroupfs_files_write_or_say(f, mem, "memory.memsw.limit_in_bytes", num,
						      err, errlen)) < 0)
			return rc;
	}
	/* both are best effort: without swap, or on kernels that refuse them */
	cgroupfs_files_write(f, mem, "memory.swappiness", "0");
	/* a new group inherits oom_kill_disable from its parent; we want the
	 * kernel to kill inside the group rather than hang it */
	cgroupfs_files_write(f, mem, "memory.oom_control", "0");
	if (l->pids) {
		snprintf(num, sizeof(num), "%u", l->pids);
		if ((rc = cgroupfs_files_write_or_say(f, pids, "pids.max", num, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

static int cpu_us(const struct cgroup_step *s, uint64_t *out)
{
	uint64_t ns;
	int rc = cgroupfs_files_read_u64(s->files, s->dir[CGROUP_CPU], "cpuacct.usage", &ns);

	if (rc == 0)
		*out = ns / 1000;
	return rc;
}

static int tasks(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_u64(s->files, s->dir[CGROUP_PIDS], "pids.current", out);
}

static int memory(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_u64(s->files, s->dir[CGROUP_MEM], "memory.usage_in_bytes", out);
}

static int kernel_memory(const struct cgroup_step *s, uint64_t *out)
{
	return cgroupfs_files_read_u64(s->files, s->dir[CGROUP_MEM], "memory.kmem.usage_in_bytes",
				       out);
}

static int stats(const struct cgroup_step *s, struct cgroup_stats *st)
{
	struct cgroupfs_files *f = s->files;
	const char *mem = s->dir[CGROUP_MEM];
	uint64_t v, limit;
	int rc;

	if ((rc = cgroupfs_files_read_u64(f, mem, "memory.max_usage_in_bytes",
					  &st->memory_peak_bytes)) < 0)
		return rc;
	/* oom_kill appeared in 4.13; older kernels leave oom_killed false */
	rc = cgroupfs_files_read_kv(f, mem, "memory.oom_control", "oom_kill", &v);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	st->oom_killed = rc == 0 && v > s->base_oom_kills;
	if ((rc = cgroupfs_files_read_u64(f, mem, "memory.failcnt", &v)) < 0)
		return rc;
	/* some kernels (seen on 6.18) keep failcnt at 0 on v1 even through an
	 * OOM kill; a high-water mark at the limit says the same thing */
	if ((rc = cgroupfs_files_read_u64(f, mem, "memory.limit_in_bytes", &limit)) < 0)
		return rc;
	st->memory_limit_hit = v > 0 || st->memory_peak_bytes >= limit;
	return 0;
}

static void reclaim(struct cgroup_step *s, uint64_t now)
{
	(void)now;
	cgroupfs_files_write(s->files, s->dir[CGROUP_MEM], "memory.force_empty", "0");
}

/*
 * Every counter that can be set back is: the peaks to the usage now, the
 * failure counts and the CPU usage to 0; the OOM kills counted so far are
 * remembered.
 */
static int rebase(struct cgroup_step *s, uint64_t now)
{
	static const char *const zeroed[] = {
		"memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
	};
	struct cgroupfs_files *f = s->files;
	const char *mem = s->dir[CGROUP_MEM];
	uint64_t v = 0;
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(zeroed); i++) {
		rc = cgroupfs_files_write(f, mem, zeroed[i], "0");
		/* memsw is there only with swap accounting */
		if (rc < 0 && !(rc == -ENOENT && i >= 2))
			return rc;
	}
	if ((rc = cgroupfs_files_write(f, s->dir[CGROUP_CPU], "cpuacct.usage", "0")) < 0)
		return rc;
	s->base_cpu_us = 0;
	s->base_memory = now;
	rc = cgroupfs_files_read_kv(f, mem, "memory.oom_control", "oom_kill", &v);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	s->base_oom_kills = v;
	return 0;
}

const struct cgroup_ops cgroup_v1 = {
	.ver = CGROUP_V1,
	.tree_open = tree_open,
	.probe = probe,
	.limits = limits,
	.kill_all = NULL,
	.cpu_us = cpu_us,
	.tasks = tasks,
	.memory = memory,
	.kernel_memory = kernel_memory,
	.stats = stats,
	.sample = NULL,
	.reclaim = reclaim,
	.can_rebase = NULL,
	.rebase = rebase,
};
