/*
 * What the master hands to a worker it forks: worker/worker.h's, and
 * apart from it so that the files of the worker's process (their shared
 * state, worker_state.h) read it without an include loop through
 * worker.h.
 */
#ifndef GOBOXD_WORKER_CTX_H
#define GOBOXD_WORKER_CTX_H

#include <stdint.h>
#include <sys/types.h>

#include "common/auth.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"
#include "worker/sandbox/host.h"

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

#endif
