/*
 * The sandbox as the master uses it, and nothing more: the prober and
 * the table it publishes for /readyz, and the job directories a crash
 * left behind for the sweeper. master/ includes no other header of
 * worker/sandbox/ (tests/check-layers). The rest of each subsystem is in
 * probe.c and jobdir.h; where cgroups live, which the master chooses
 * once at start-up, is the cgroup room's (worker/cgroup/cgroup_place.h).
 */
#ifndef GOBOXD_HOST_H
#define GOBOXD_HOST_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"

/* ---- Readiness probes (worker/sandbox/probe.c) ----
 *
 * A short-lived prober process (forked by the master at start, on reload
 * and periodically) runs every language's smoke probe in the real sandbox
 * and publishes the results in shared memory, so that /readyz answers at
 * once from any worker.
 */

enum probe_state { PROBE_UNKNOWN, PROBE_OK, PROBE_FAILED };

struct probe_entry {
	char id[32];
	int32_t state;
	char version[128];
	char error[192];
};

struct probe_snapshot {
	uint32_t generation;      /* language table generation probed */
	uint64_t done_wall_ms;    /* 0: never finished */
	int32_t jail_state;
	char jail_name[16];
	char jail_path[256];
	char jail_version[96];
	char jail_error[192];
	uint32_t n;
	struct probe_entry e[STATS_MAX_LANGS];
};

/* Single writer (the prober), many readers: a seqlock around a snapshot. */
struct probe_table {
	_Atomic uint64_t seq;
	struct probe_snapshot snap;
};

struct probe_table *probe_table_map(void);
void probe_table_unmap(struct probe_table *t);
/* Copy a consistent snapshot (retries while a write is in progress). */
void probe_table_read(const struct probe_table *t, struct probe_snapshot *out);

/*
 * The prober's body: open a sandbox on cgroup subtree "<master>-probe", run
 * each language's probe, publish. *stop set (by a signal) ends it between
 * two probes, so that no job directory is left behind. Returns 0 when
 * every probe passed, -EINTR when stopped, -EIO when a probe failed or
 * the sandbox would not open.
 */
int probe_run_all(const struct config *cfg, const struct langtab *langs, uint32_t generation,
		  struct probe_table *t, volatile sig_atomic_t *stop);

/* ---- Job directories left behind (worker/sandbox/jobdir.c) ---- */

/*
 * What a sweep would remove, for the caller to hand to a process of its
 * own (removing a tree can take seconds): found(arg, path) is called for
 * each directory under parent named "job-*" (owner > 0: "job-<owner>-*",
 * the directories of an exited process) that is older than age_s seconds
 * and that no live process holds locked. Only names, modes and locks are
 * read. 0 or negative errno (parent unreadable).
 */
int jobdir_stale(const char *parent, pid_t owner, unsigned age_s,
		 void (*found)(void *arg, const char *path), void *arg);
/*
 * Remove the job directory at path (unlinkat, never following symlinks)
 * unless a live process holds its lock. With stop, *stop is checked after
 * every batch of removals, and a set flag ends the work early. 1 when
 * removed, 0 when skipped (locked, gone, not a directory), -EINTR when
 * stopped (what is left waits for the next sweep), or negative errno.
 */
int jobdir_reclaim(const char *path, volatile sig_atomic_t *stop);

#endif
