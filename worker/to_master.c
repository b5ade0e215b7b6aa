/*
 * What a worker tells the master over its channel: a connection to
 * queue, a job slot given back, a submission stored or to run later.
 */
#include "autoconf.h"

#include "worker/to_master.h"

#include <string.h>

#include "common/admit.h"
#include "common/channel.h"
#include "common/log.h"
#include "common/stats.h"
#include "worker/conn.h"
#include "worker/worker_state.h"

void to_master_tell(struct worker *w, enum channel_type type, const int *fds, size_t nfds)
{
	int rc = channel_send(w->ctx->channel_fd, type, NULL, 0, fds, nfds);

	if (rc < 0)
		log_error("channel_send(type %d): %s", type, strerror(-rc));
}

void to_master_done(struct worker *w, enum channel_type type)
{
	/* ended here, not at the master's read of DONE: the next request
	 * this worker reads may be its own job at once */
	uint32_t held = admit_release(&w->ctx->stats->admit, (size_t)w->ctx->index);
	int rc = channel_send(w->ctx->channel_fd, type, &held, sizeof(held), NULL, 0);

	if (rc < 0)
		log_error("channel_send(type %d): %s", type, strerror(-rc));
}

/* The master counts a dispatched connection as a running job until told. */
void to_master_give_back_slot(void *arg, struct conn *c)
{
	struct worker *w = arg;

	if (!c->job_slot)
		return;
	c->job_slot = false;
	to_master_done(w, CHANNEL_DONE);
}

/* A stored submission's id to the master (type SUBMITTED or DEFER). If
 * it cannot be sent the store still keeps it, queued or running: the
 * master's next start runs it. */
static void tell_master_of(struct worker *w, enum channel_type type, int64_t id)
{
	int rc = channel_send(w->ctx->channel_fd, type, &id, sizeof(id), NULL, 0);

	if (rc < 0)
		log_error("telling the master %s of submission %lld: %s",
			  type == CHANNEL_DEFER ? "to run it again later" : "to queue it",
			  (long long)id, strerror(-rc));
}

/* A submission went into the store: the master queues it. */
void to_master_submitted(void *arg, int64_t id)
{
	tell_master_of(arg, CHANNEL_SUBMITTED, id);
}

/* A submission to run again later: the master waits a while first. */
void to_master_deferred(void *arg, int64_t id)
{
	tell_master_of(arg, CHANNEL_DEFER, id);
}
