/* A worker process: the HTTP event loop and its one job at a time. */
#ifndef GOBOXD_WORKER_H
#define GOBOXD_WORKER_H

#include <stdint.h>
#include <sys/types.h>

#include "common/auth.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"
#include "worker/sandbox/host.h"

/* Exit code of a worker that cannot start for a config reason: the master
 * does not respawn it in a loop. */
#define WORKER_EXIT_CONFIG 78

/* What the master hands to a freshly forked worker. */
struct worker_ctx {
	unsigned index;           /* slot in the master's table, and uid offset */
	pid_t master_pid;         /* getppid() is this while the master lives */
	uint32_t generation;      /* language-table generation */
	const struct config *cfg;
	const struct langtab *langs;
	struct stats *stats;
	struct probe_table *probes;
	const struct auth_shared *auth; /* the tokens in force (a reload's, at once) */
	int listen_fd;
	int channel_fd;
	/* Why the master has no submission store (NULL: it has one, or it is
	 * shared): the worker never opens it either. */
	const char *store_refused;
};

/* Never returns to the caller's loop: the result is the exit code. */
int worker_main(const struct worker_ctx *ctx);

#endif
