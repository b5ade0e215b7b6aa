/*
 * What the workers tell the master over their channels: a connection to
 * queue, a submission stored or to run later, a worker idle or done, a
 * shared store with nothing to lease.
 */
#include "autoconf.h"

#include "master/from_worker.h"

#include <stdio.h>
#include <string.h>

#include "common/admit.h"
#include "common/channel.h"
#include "master/handover.h"
#include "master/master_state.h"
#include "master/stored.h"

struct from_worker {
	struct master *m;
	struct wslot *s;
};

/* A stored submission's id, the payload of SUBMITTED and DEFER. */
static int64_t payload_id(const struct channel_msg *msg)
{
	int64_t id;

	memcpy(&id, msg->payload, sizeof(id));
	return id;
}

/*
 * Whether the job a DONE or EMPTY ends was the master's dispatch, not one
 * the worker read itself (their payload: who held the worker). The
 * master may have dispatched it another since (its holding ends before
 * DONE is sent), which this one does not end.
 */
static bool was_dispatched(const struct channel_msg *msg)
{
	uint32_t held;

	memcpy(&held, msg->payload, sizeof(held));
	return held == ADMIT_MASTER;
}

/* A message from a worker, checked against the channel's table: only the
 * types a worker sends come here, each with its fds. */
static void on_worker_message(void *arg, struct channel_msg *msg)
{
	struct from_worker *from = arg;
	struct master *m = from->m;
	struct wslot *s = from->s;

	switch (msg->type) {
	case CHANNEL_ENQUEUE:
		handover_enqueue(m, msg->fds[0], msg->fds[1]);
		break;
	case CHANNEL_SUBMITTED:
		if (payload_id(msg) > 0)
			stored_enqueue(m, payload_id(msg));
		break;
	case CHANNEL_IDLE:
		/* its start: it holds nothing yet, and may have taken a job of
		 * its own already, which only its DONE ends */
		if (!s->quitting)
			s->idle = true;
		handover_dispatch(m);
		break;
	case CHANNEL_DONE:
		/* a lease that ran: there may be more */
		if (was_dispatched(msg) && s->sub == CHANNEL_RUN_LEASE && !m->stopping)
			stored_enqueue(m, CHANNEL_RUN_LEASE);
		handover_job_done(m, s, was_dispatched(msg));
		handover_dispatch(m);
		break;
	case CHANNEL_DEFER:
		if (payload_id(msg) > 0)
			stored_defer(m, payload_id(msg));
		break;
	case CHANNEL_EMPTY:
		stored_empty(m);
		handover_job_done(m, s, was_dispatched(msg));
		handover_dispatch(m);
		break;
	case CHANNEL_DISPATCH:
	case CHANNEL_QUIT:
	case CHANNEL_RUN:
		break; /* the master's own: channel_recv refused them */
	}
}

void from_worker_read(struct master *m, struct wslot *s)
{
	struct from_worker from = { .m = m, .s = s };
	char peer[40];

	/* The worker may have been reaped earlier in this same epoll batch. */
	if (s->channel < 0)
		return;
	snprintf(peer, sizeof(peer), "worker pid %d", (int)s->pid);
	channel_readable(s->channel, CHANNEL_TO_MASTER, peer, on_worker_message, &from);
}
