/*
 * What a worker tells the master over its channel: ENQUEUE (a connection
 * to queue), IDLE, DONE (a job slot given back: the master counts a
 * dispatched job as running until then), SUBMITTED and DEFER (a stored
 * submission's id).
 */
#ifndef GOBOXD_TO_MASTER_H
#define GOBOXD_TO_MASTER_H

#include <stddef.h>
#include <stdint.h>

#include "common/channel.h"

struct conn;
struct worker;

/* A message with fds (copies sent) and no payload; a failure is logged. */
void to_master_tell(struct worker *w, enum channel_type type, const int *fds, size_t nfds);
/* The job this worker held ended (type DONE, or EMPTY for a lease that
 * found nothing): its holding and job slot given back (common/admit.h),
 * then the master told, with what it held; a failure is logged. */
void to_master_done(struct worker *w, enum channel_type type);
/* A connection the master dispatched holds no job any more: DONE, once
 * (the no_job hook of struct conn_hooks; arg is the worker). */
void to_master_give_back_slot(void *arg, struct conn *c);
/* A submission went into the store: SUBMITTED, and the master queues it
 * (a hook of struct submissions; arg is the worker). */
void to_master_submitted(void *arg, int64_t id);
/* A submission to run again later: DEFER, and the master waits a while
 * first (a hook of struct submissions; arg is the worker). */
void to_master_deferred(void *arg, int64_t id);

#endif
