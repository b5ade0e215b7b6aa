/*
 * goboxd's own cgroup subtree and one cgroup per sandboxed step.
 * Works on v2 (unified) and v1 (memory, pids, cpuacct mounted apart):
 * cgroup.c holds what is the same on both, cgroup_v1.c and cgroup_v2.c
 * the rest behind one table of operations (cgroup_ops.h); where the
 * subtree lives is cgroup_place.c's to choose, the file handling
 * cgroupfs.c's.
 * Never touches the cgroup the daemon was started in: everything lives in
 * "<base>/goboxd/<tree name>/..." (v1: under each controller's mount).
 */
#ifndef GOBOXD_CGROUP_H
#define GOBOXD_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/cgroup/cgroup_place.h"

struct cgroup_tree;   /* a worker's subtree, e.g. goboxd/w3 */
struct cgroup_step;   /* one step's cgroup inside it */

struct cgroup_limits {
	uint64_t memory_bytes;   /* 0: unlimited; swap is always disabled */
	uint32_t pids;           /* 0: unlimited */
};

struct cgroup_stats {
	uint64_t cpu_us;
	uint64_t memory_peak_bytes;
	bool oom_killed;         /* the kernel OOM-killed something inside */
	bool memory_limit_hit;   /* usage reached the limit (v1 failcnt / v2 max event) */
};

/*
 * Create goboxd/<name> in the place root_override names (a v2 base cgroup
 * or a v1 parent containing memory/, pids/, cpuacct/), or, when NULL, in
 * the one discovery finds for this process. A goboxd/<name> already there
 * (a crashed predecessor of the same name) is emptied first: its step
 * cgroups are killed and removed. 0 and *out, or negative errno with a
 * reason in err.
 */
int cgroup_tree_open(const char *root_override, const char *name, struct cgroup_tree **out,
		 char *err, size_t errlen);
/* Remove the subtree (kills anything left in it first). */
void cgroup_tree_close(struct cgroup_tree *t);
enum cgroup_version cgroup_tree_version(const struct cgroup_tree *t);
/* Master start-up: remove step cgroups a crashed worker left in goboxd/. */
int cgroup_sweep(const char *root_override, unsigned *removed);

/* A fresh step cgroup with its limits set. */
int cgroup_step_create(struct cgroup_tree *t, const struct cgroup_limits *l, struct cgroup_step **out,
		   char *err, size_t errlen);
/*
 * Called in the forked child before exec: move the calling process into the
 * step cgroup. Async-signal-safe (uses only open/write/close on paths
 * prepared by cgroup_step_create). 0 or negative errno.
 */
int cgroup_step_enter(const struct cgroup_step *s);
/*
 * Open the step's cgroup.procs files (one per hierarchy) for writing, for a
 * process that joins from inside a jail by writing "0" into each: the
 * kernel checks the opener's credentials and cgroup namespace, not the
 * writer's. Returns how many (<= max, CLOEXEC) or negative errno.
 */
int cgroup_step_open_procs(const struct cgroup_step *s, int *fds, size_t max);
/* Kill every process in the step cgroup and wait until it is empty
 * (bounded). 0, or -EBUSY if processes remain. */
int cgroup_step_kill(struct cgroup_step *s);
/*
 * A process cgroup_step_kill leaves alone (and does not wait for): a jail's
 * init that moved into the step's cgroup so that its first program is born
 * there. cgroup_step_destroy kills it too. 0: none.
 */
void cgroup_step_spare(struct cgroup_step *s, pid_t pid);
/* The process cgroup_step_spare named; 0: none. */
pid_t cgroup_step_spared(const struct cgroup_step *s);
/* Set (again) the step's limits, as cgroup_step_create does; the same
 * limits over the same base as last time write nothing. */
int cgroup_step_set_limits(struct cgroup_step *s, const struct cgroup_limits *l, char *err, size_t errlen);
/* Send sig to every process in the step cgroup but the spared one (a
 * live session's signal). 0, or negative errno. */
int cgroup_step_signal(const struct cgroup_step *s, int sig);
/* Number of processes currently in the step cgroup (or negative errno). */
int cgroup_step_nprocs(const struct cgroup_step *s);
/* The pids in the step cgroup; returns count (<= max) or negative errno. */
int cgroup_step_pids(const struct cgroup_step *s, pid_t *pids, size_t max);
int cgroup_step_cpu_us(const struct cgroup_step *s, uint64_t *out);
/* Memory charged to the step now (v2 memory.current, v1
 * memory.usage_in_bytes), in bytes. */
int cgroup_step_memory_now(const struct cgroup_step *s, uint64_t *out);
int cgroup_step_stats(const struct cgroup_step *s, struct cgroup_stats *out);
/*
 * v2 kernels older than 5.19 have no memory.peak: there the peak reported
 * by cgroup_step_stats is the largest memory.current seen by this call (made
 * periodically while the step runs) and by cgroup_step_stats itself. A no-op
 * returning 0 elsewhere.
 */
int cgroup_step_sample(struct cgroup_step *s);
/*
 * Make a step cgroup that served a program serve another as a new one
 * would: a jail's first cgroup, where its init waits and the first program
 * of each job is born, is kept from job to job because moving the init
 * into a new one can sleep (docs/architecture.md). It must hold nothing
 * but the spared process. What the programs left charged is reclaimed,
 * what the kernel frees late is waited for (CGROUP_SETTLE_MS), and from
 * here on cgroup_step_stats and cgroup_step_cpu_us count from now: CPU,
 * peak memory, limit hits and OOM kills. 0, -EBUSY (a process other than
 * the spared one is in it, or more memory than the spared one's own, as
 * cgroup_step_note_own found it, is still charged), -EOPNOTSUPP (a v2
 * kernel that cannot reset memory.peak: use a new cgroup) or another
 * negative errno.
 */
int cgroup_step_rebase(struct cgroup_step *s, bool light);
/*
 * A light rebase (between two programs of one job) reclaims only when
 * what is charged has grown by more than this since the last reclaim:
 * the page cache a test leaves (a few pages of what it read) then counts
 * as the init's, within this bound, instead of a reclaim each time,
 * which costs more than the program's cgroup it replaces. A build's
 * page cache (the compiler's files) is far above it.
 */
#define CGROUP_REBASE_SLACK (1024 * 1024)
/*
 * How long a rebase waits for what the kernel frees after a program's end
 * (its IPC namespace's shared memory) before it gives up with -EBUSY.
 */
#define CGROUP_SETTLE_MS 250
/* ...and how long the kernel's objects may stay as they are before it
 * stops waiting for them: those of dead processes go within a grace
 * period or two, those only a reclaim frees do not move. */
#define CGROUP_SETTLE_STALL_MS 30
/*
 * What is charged now is the spared process's own (a jail's init, just
 * moved in, with no program started yet): no full rebase takes more than
 * this and CGROUP_REBASE_SLACK for the init's, and a light one no more
 * than what the first light one after it found (the job's own files
 * included) and the slack; what is charged beyond is waited for, and
 * kernel objects beyond are not reclaimed (-EBUSY). 0 or negative errno.
 */
int cgroup_step_note_own(struct cgroup_step *s);
/* Kill what is left, remove the cgroup directories, free. */
void cgroup_step_destroy(struct cgroup_step *s);

#endif
