/*
 * The sandbox as the master uses it, and nothing more: where cgroups
 * live (chosen once at start-up), the prober and the table it publishes
 * for /readyz, and the job directories a crash left behind for the
 * sweeper. master/ includes no other header of worker/sandbox/
 * (tests/check-layers). The rest of each subsystem is in cgroup.h,
 * probe.c and jobdir.h.
 */
#ifndef GOBOXD_HOST_H
#define GOBOXD_HOST_H

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"

/* ---- Cgroups: the place (worker/cgroup/cgroup_place.c) ---- */

enum cgroup_version { CGROUP_V1 = 1, CGROUP_V2 = 2 };

/*
 * Where goboxd's cgroups live, chosen once by the master at start-up, in
 * this order: --cgroup-root when given (nothing else is tried); on v2 the
 * cgroup goboxd was started in when it is delegated (offers memory and
 * pids, writable: a unit with Delegate=yes, a container with its own
 * cgroup namespace); on v2, as root, a goboxd subtree at the cgroup2 root
 * when that is writable (a host without delegation, the way isolate's
 * service does it); v1's memory, pids and cpuacct hierarchies.
 */
enum cgroup_source { CGROUP_SRC_OPTION, CGROUP_SRC_OWN, CGROUP_SRC_ROOT, CGROUP_SRC_V1 };

struct cgroup_place {
	enum cgroup_version ver;
	enum cgroup_source source;
	/* what every later call takes as root_override: the v2 base cgroup,
	 * or on v1 the operator's --cgroup-root ("" when discovered) */
	char root[PATH_MAX];
	unsigned ndirs;
	char dirs[3][PATH_MAX];  /* the goboxd/ directories (v1: one per controller) */
	/* one line: what discovery found, what goboxd needs, what it takes */
	char report[1024];
};

/* What discovery looks at: the daemon reads its own, tests pass a fake. */
struct cgroup_host {
	const char *mountinfo;     /* a /proc/self/mountinfo text */
	const char *proc_cgroup;   /* a /proc/self/cgroup text */
	bool root;                 /* effective uid 0 */
	char *mountinfo_buf, *proc_cgroup_buf;  /* owned by cgroup_place_read_host */
};

/* This process's view. 0, or negative errno with err. */
int cgroup_place_read_host(struct cgroup_host *h, char *err, size_t errlen);
void cgroup_place_free_host(struct cgroup_host *h);
/*
 * Choose the place (reads cgroupfs files, writes nothing). 0 and *out, its
 * report the line goboxd says at start and in --check; or -ENOTSUP (or
 * another negative errno) with the same line, ending "none usable", in err.
 */
int cgroup_place_locate(const struct cgroup_host *h, const char *root_override,
			struct cgroup_place *out, char *err, size_t errlen);
/*
 * Make the place usable. v2: a cgroup with member processes cannot hand
 * controllers to its children, so when the base refuses, every process of
 * it moves into the leaf "<base>/goboxd-daemon" first; then memory/pids
 * (and cpu when available) are enabled in the base and in "<base>/goboxd".
 * v1: nothing to do. 0 or negative errno with err.
 */
int cgroup_place_prepare(const struct cgroup_place *p, char *err, size_t errlen);
/* cgroup_place_read_host + cgroup_place_locate + cgroup_place_prepare: the
 * master's start-up, once, before forking workers (and the sandbox tests'
 * set-up). */
int cgroup_place_start(const char *root_override, struct cgroup_place *out, char *err,
		       size_t errlen);
const char *cgroup_place_source_name(enum cgroup_source s);
/* The first cgroup2 mount of a mountinfo text: 0, its mount point and
 * whether it is read-only; -ENOENT or -ENAMETOOLONG. */
int cgroup_place_find_v2_mount(const char *mountinfo, char *mount_point, size_t len,
			       bool *read_only);
/* Master start-up: remove step cgroups a crashed worker left in goboxd/
 * (worker/cgroup/cgroup.c). */
int cgroup_sweep(const char *root_override, unsigned *removed);

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
