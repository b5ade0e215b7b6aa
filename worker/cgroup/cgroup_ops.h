/*
 * Inside the cgroup module: a worker's tree, a step cgroup, and the one
 * table of operations that cgroup v1 (cgroup_v1.c) and v2 (cgroup_v2.c)
 * each implement. cgroup.c holds what is the same on both and calls the
 * table for the rest; cgroup_place.c chooses the layout a tree is opened
 * in (cgroup_place.h). Nothing outside worker/cgroup/ includes this.
 */
#ifndef GOBOXD_CGROUP_OPS_H
#define GOBOXD_CGROUP_OPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/cgroup/cgroup_place.h"

struct cgroup_limits;
struct cgroup_stats;
struct cgroupfs_files;

struct cgroup_tree {
	const struct cgroup_ops *ops;
	unsigned ndirs;
	char dir[CGROUP_NCTRL][PATH_MAX];
	/* each distinct dir, open with a shared flock for the tree's life: it
	 * is in use (cgroup_sweep) whatever pid namespace its owner is in */
	int lock_fd[CGROUP_NCTRL];
	unsigned long counter;
};

struct cgroup_step {
	const struct cgroup_ops *ops;
	unsigned ndirs;
	char dir[CGROUP_NCTRL][PATH_MAX];
	/* distinct cgroup.procs files, prepared for the pre-exec child */
	unsigned nprocs_files;
	char procs[CGROUP_NCTRL][PATH_MAX];
	bool has_kill;  /* v2 cgroup.kill (5.14+) */
	bool has_peak;  /* v2 memory.peak (5.19+) */
	bool has_memsw; /* v1 memory.memsw.* (swap accounting) */
	struct cgroupfs_files *files;   /* its files kept open */
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
	/* The limits cgroup_step_set_limits last wrote, and the base_memory
	 * they were written over: a program with the same writes nothing */
	bool has_written;
	uint64_t written_memory, written_base;
	uint32_t written_pids;
};

/*
 * What differs between the versions. Raw figures: cgroup.c takes the
 * step's bases off. Every function returns 0 or negative errno unless
 * said otherwise.
 */
struct cgroup_ops {
	enum cgroup_version ver;
	/* <base>/goboxd/<name> in each hierarchy of lay, made and emptied:
	 * t->dir[] and t->ndirs */
	int (*tree_open)(struct cgroup_tree *t, const struct cgroup_layout *lay, const char *name,
			 char *err, size_t errlen);
	/* What this kernel's new step cgroup offers: s->has_* */
	void (*probe)(struct cgroup_step *s);
	/* The memory (plus s->base_memory) and pids limits, swap off */
	int (*limits)(struct cgroup_step *s, const struct cgroup_limits *l, char *err,
		      size_t errlen);
	/* Kill every process at once where the kernel can (NULL: one by one) */
	void (*kill_all)(struct cgroup_step *s);
	int (*cpu_us)(const struct cgroup_step *s, uint64_t *out);
	/* The tasks the pids controller charges to the step now, its
	 * descendants' and zombies not yet reaped included; -ENOENT where
	 * that controller is not there */
	int (*tasks)(const struct cgroup_step *s, uint64_t *out);
	/* Charged now */
	int (*memory)(const struct cgroup_step *s, uint64_t *out);
	/* Of that, the kernel's objects (dentries and inodes above all);
	 * -ENOENT where the kernel does not say */
	int (*kernel_memory)(const struct cgroup_step *s, uint64_t *out);
	/* The peak, and whether the limit was hit or the OOM killer came
	 * since the last rebase: st->memory_peak_bytes, oom_killed,
	 * memory_limit_hit */
	int (*stats)(const struct cgroup_step *s, struct cgroup_stats *st);
	/* Note the usage now where the kernel keeps no peak (NULL: it does) */
	int (*sample)(struct cgroup_step *s);
	/* Drop what can be dropped of what is charged now; best effort */
	void (*reclaim)(struct cgroup_step *s, uint64_t now);
	/* -EOPNOTSUPP where this kernel's counters cannot start again (NULL:
	 * they always can) */
	int (*can_rebase)(const struct cgroup_step *s);
	/* The memory settled at now: every counter from here on counts from
	 * zero (set back, or its value now remembered in s->base_*) */
	int (*rebase)(struct cgroup_step *s, uint64_t now);
};

extern const struct cgroup_ops cgroup_v1;
extern const struct cgroup_ops cgroup_v2;

#endif
