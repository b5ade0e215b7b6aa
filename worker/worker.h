/* A worker process: the HTTP event loop and its one job at a time. */
#ifndef GOBOXD_WORKER_H
#define GOBOXD_WORKER_H

#include "worker/worker_ctx.h"

/* Exit code of a worker that cannot start for a config reason: the master
 * does not respawn it in a loop. */
#define WORKER_EXIT_CONFIG 78

/* Never returns to the caller's loop: the result is the exit code. */
int worker_main(const struct worker_ctx *ctx);

#endif
