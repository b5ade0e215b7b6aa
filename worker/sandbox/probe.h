/*
 * Readiness probes: a short-lived prober process (forked by the master at
 * start, on reload and periodically) runs every language's smoke probe in
 * the real sandbox and publishes the results in shared memory, so that
 * /readyz answers at once from any worker.
 */
#ifndef GOBOXD_PROBE_H
#define GOBOXD_PROBE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"

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
 * every probe passed.
 */
int probe_run_all(const struct config *cfg, const struct langtab *lt, uint32_t generation,
		  struct probe_table *t, volatile sig_atomic_t *stop);

#endif
