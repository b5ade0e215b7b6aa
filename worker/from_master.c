/*
 * What the master sends a worker over its channel: a connection to take
 * over (DISPATCH), a stored submission to run (RUN), the word to finish
 * and exit (QUIT).
 */
#include "autoconf.h"

#include "worker/from_master.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/channel.h"
#include "common/log.h"
#include "common/util.h"
#include "worker/answer.h"
#include "worker/conn.h"
#include "worker/http/wire.h"
#include "worker/jobthread.h"
#include "worker/judge/request.h"
#include "worker/submissions.h"
#include "worker/to_master.h"
#include "worker/worker_state.h"

/*
 * A connection the master hands over, with the bytes its first worker had
 * read. Whatever happens, its client hears an answer: a request that no
 * longer fits (a reload lowered the caps) gets 413, a failure 503.
 */
static void adopt_dispatched(struct worker *w, int fds[2], uint64_t queued_ms)
{
	char *data = NULL;
	size_t len = 0;
	struct conn *c;
	int rc = channel_memfd_read(fds[1], &data, &len, conn_handoff_max(w->cfg));

	close(fds[1]);
	set_nonblock(fds[0], true);
	c = conn_new(&w->conns, fds[0]);
	if (!c) {
		free(data);
		to_master_done(w, CHANNEL_DONE);
		return;
	}
	c->job_slot = true;
	c->queued_ms = queued_ms;
	if (rc < 0) {
		random_hex(c->reqid, 8);
		if (rc == -EMSGSIZE)
			conn_respond_error(c, 413, "body_too_large",
					   "the request and what was pipelined after it exceed "
					   "this server's caps", false);
		else
			conn_respond_error(c, 503, "overloaded", "could not take the job over",
					   false);
		conn_log(c, "-", "-", rc == -EMSGSIZE ? 413 : 503, now_ms(), NULL);
		to_master_give_back_slot(w, c);
		c->state = C_CLOSING;
	} else {
		/* The memfd's bytes become the input as they are: no second copy. */
		conn_adopt_input(c, data, len);
	}
	conn_process(&w->conns, c);
}

/*
 * A stored submission the master dispatched: its job runs with no client
 * (its result goes to the store). Whatever happens, the master hears
 * DONE: it counts the submission as running until then.
 */
static void run_stored(struct worker *w, int64_t id, uint64_t queued_ms)
{
	struct job_request *job = NULL;
	int rc;

	if (id == CHANNEL_RUN_LEASE && !w->sandbox) {
		/* a shared store's work is for the nodes that can run it */
		to_master_done(w, CHANNEL_EMPTY);
		return;
	}
	if (!w->sandbox) {
		/* as a client's job gets 503: this server runs nothing */
		submissions_fail(&w->subs, id, w->sandbox_error);
		to_master_done(w, CHANNEL_DONE);
		return;
	}
	if (id == CHANNEL_RUN_LEASE) {
		rc = submissions_lease(&w->subs, &id, &job);
		if (rc < 0) {
			to_master_done(w, rc == -ENOENT ? CHANNEL_EMPTY : CHANNEL_DONE);
			return;
		}
	} else {
		rc = submissions_take(&w->subs, id, &job);
		if (rc < 0) {
			/* the store failed, not the submission: it starts later */
			if (rc != -ENOENT && rc != -ECANCELED)
				to_master_deferred(w, id);
			to_master_done(w, CHANNEL_DONE);
			return;
		}
	}
	rc = jobthread_submit_stored(&w->job, job, wire_named(SUBMISSIONS_API), id);
	if (rc < 0) {
		log_error("submission %lld: the job thread is not running", (long long)id);
		request_free(job);
		submissions_lease_end(&w->subs);
		to_master_done(w, CHANNEL_DONE);
		return;
	}
	answer_job_began(w, NULL, "RUN", "/submissions");
	w->job_sub = id;
	w->job_queued_ms = queued_ms;
}

/* A message from the master, checked against the channel's table: only
 * the types the master sends come here, each with its fds. */
static void on_master_message(void *arg, struct channel_msg *m)
{
	struct worker *w = arg;
	uint64_t queued_ms;

	switch (m->type) {
	case CHANNEL_QUIT:
		w->conns.draining = true;
		break;
	case CHANNEL_DISPATCH:
		memcpy(&queued_ms, m->payload, sizeof(queued_ms));
		adopt_dispatched(w, m->fds, queued_ms);
		break;
	case CHANNEL_RUN: {
		struct channel_run run;

		memcpy(&run, m->payload, sizeof(run));
		run_stored(w, run.id, run.queued_ms);
		break;
	}
	case CHANNEL_ENQUEUE:
	case CHANNEL_IDLE:
	case CHANNEL_DONE:
	case CHANNEL_EMPTY:
	case CHANNEL_SUBMITTED:
	case CHANNEL_DEFER:
		break; /* a worker's own: channel_recv refused them */
	}
}

void from_master_read(struct worker *w)
{
	int rc = channel_readable(w->ctx->channel_fd, CHANNEL_TO_WORKER, "the master",
				  on_master_message, w);

	if (rc < 0) {
		/* The master is gone (or its channel failed): finish up and leave. */
		w->conns.draining = true;
		w->stop_now = true;
	}
}
