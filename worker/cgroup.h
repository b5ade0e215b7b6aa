/*
 * goboxd's own cgroup subtree and one cgroup per sandboxed step.
 * Works on v2 (unified) and v1 (memory, pids, cpuacct mounted apart).
 * Never touches the cgroup the daemon was started in: everything lives in
 * "<root>/goboxd/<tree name>/..." (v1: under each controller's mount).
 */
#ifndef GOBOXD_CGROUP_H
#define GOBOXD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cg_version { CG_V1 = 1, CG_V2 = 2 };

struct cg_tree;   /* a worker's subtree, e.g. goboxd/w3 */
struct cg_step;   /* one step's cgroup inside it */

struct cg_limits {
	uint64_t memory_bytes;   /* 0: unlimited; swap is always disabled */
	uint32_t pids;           /* 0: unlimited */
};

struct cg_stats {
	uint64_t cpu_us;
	uint64_t memory_peak_bytes;
	bool oom_killed;         /* the kernel OOM-killed something inside */
	bool memory_limit_hit;   /* usage reached the limit (v1 failcnt / v2 max event) */
};

/*
 * Discover the hierarchy (or use root_override: a v2 mount point or a v1
 * parent containing memory/, pids/, cpuacct/) and create goboxd/<name>.
 * 0 and *out, or negative errno with a reason in err.
 */
int cg_tree_open(const char *root_override, const char *name, struct cg_tree **out,
		 char *err, size_t errlen);
/* Remove the subtree (kills anything left in it first). */
void cg_tree_close(struct cg_tree *t);
enum cg_version cg_tree_version(const struct cg_tree *t);
/* Master start-up: remove step cgroups a crashed worker left in goboxd/. */
int cg_sweep(const char *root_override, unsigned *removed);

/* A fresh step cgroup with its limits set. */
int cg_step_create(struct cg_tree *t, const struct cg_limits *l, struct cg_step **out,
		   char *err, size_t errlen);
/*
 * Called in the forked child before exec: move the calling process into the
 * step cgroup. Async-signal-safe (uses only open/write/close on paths
 * prepared by cg_step_create). 0 or negative errno.
 */
int cg_step_enter(const struct cg_step *s);
/* Kill every process in the step cgroup and wait until it is empty
 * (bounded). 0, or -EBUSY if processes remain. */
int cg_step_kill(struct cg_step *s);
/* Number of processes currently in the step cgroup (or negative errno). */
int cg_step_nprocs(const struct cg_step *s);
/* The pids in the step cgroup; returns count (<= max) or negative errno. */
int cg_step_pids(const struct cg_step *s, pid_t *pids, size_t max);
int cg_step_cpu_us(const struct cg_step *s, uint64_t *out);
int cg_step_stats(const struct cg_step *s, struct cg_stats *out);
/* Kill what is left, remove the cgroup directories, free. */
void cg_step_destroy(struct cg_step *s);

#endif
