/*
 * Judge0's stored submissions as the master queues them: those the store
 * holds unfinished at start, each one a worker put in the store, those
 * to run again after the store failed, and a shared store's leases.
 */
#include "autoconf.h"

#include "master/stored.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/channel.h"
#include "common/log.h"
#include "common/store.h"
#include "common/util.h"
#include "master/handover.h"
#include "master/master_state.h"
#include "master/queue.h"

/* A submission a worker put in the store: it waits its turn. In a shared
 * store, whichever waited longest goes when it is this one's turn. */
void stored_enqueue(struct master *m, int64_t id)
{
	struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = now_ms(),
				 .sub = m->shared ? CHANNEL_RUN_LEASE : id };

	queue_push_unbounded(&m->subs, &e);
	handover_dispatch(m);
}

/* A submission the store failed for waits this long before it runs
 * again: a full disk is not cleared in a moment, and each try writes. */
#define DEFER_MS 2000

void stored_defer(struct master *m, int64_t id)
{
	struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = now_ms() + DEFER_MS, .sub = id };

	if (m->shared)
		return; /* a shared store's lease ends, and hands it on by itself */
	queue_push_unbounded(&m->later, &e);
}

/* The deferred ones whose wait is over queue again, at the back. */
void stored_undefer_due(struct master *m)
{
	struct queue_entry e;
	uint64_t now = now_ms();

	while (m->later.len > 0 && queue_oldest_ms(&m->later) <= now) {
		queue_pop(&m->later, &e);
		e.enq_ms = now;
		queue_push_unbounded(&m->subs, &e);
	}
}

/*
 * A shared store is looked at this often while nothing here says it has
 * work: other nodes take submissions in too, and a lease may have ended.
 * One look waits at a time, and only a worker with nothing to do takes
 * it: a node leases only what it can run now.
 */
#define LOOK_EVERY_MS 250

void stored_look(struct master *m)
{
	uint64_t now = now_ms();

	if (!m->shared || m->stopping || m->subs.len > 0 || now < m->next_look_ms)
		return;
	m->next_look_ms = now + LOOK_EVERY_MS;
	stored_enqueue(m, CHANNEL_RUN_LEASE);
}

/* The store had nothing to lease: the other leases to take would find
 * nothing either, until the next look or the next submission. */
void stored_empty(struct master *m)
{
	struct queue_entry e;

	while (m->subs.len > 0)
		queue_pop(&m->subs, &e);
	m->next_look_ms = now_ms() + LOOK_EVERY_MS;
}

/*
 * The store, claimed for this daemon, and what it holds unfinished
 * queued again, oldest first: a restart or a crash loses none. A store
 * another goboxd holds stops the start (-EBUSY, why in err): two daemons
 * on one file would run, and expire, each other's submissions. Any other
 * failure leaves goboxd without a store: it serves every API whose client
 * waits, its workers never open the store, and Judge0's submissions get
 * 503 with the reason.
 */
int stored_open(struct master *m, char *why, size_t whylen)
{
	struct store *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	char err[512];
	int rc = store_open(m->cfg.store, m->cfg.store_max_bytes, &st, err, sizeof(err));

	m->shared = store_url_shared(m->cfg.store);
	m->store_refused[0] = '\0';
	if (rc == -EPROTO) {
		/* a newer goboxd's data: nothing here may touch it */
		log_error("the submission store: %s", err);
		snprintf(why, whylen, "the submission store was written by a newer goboxd");
		return rc;
	}
	if (m->shared) {
		/* Opened to make or migrate its schema, and to say early what is
		 * wrong with it; the master keeps no connection (a child would
		 * inherit its socket). What it holds unfinished is leased by the
		 * nodes, this one's workers among them. */
		if (rc < 0)
			log_error("the submission store: %s (the workers keep trying)", err);
		store_close(st);
		return 0;
	}
	if (rc == 0)
		rc = store_claim(st, &m->store_claim, err, sizeof(err));
	if (rc == -EBUSY) {
		snprintf(why, whylen, "the submission store %s", err);
		store_close(st);
		return rc;
	}
	if (rc == 0 && store_pending(st, true, &ids, &n) < 0) {
		snprintf(err, sizeof(err), "%s: %s", m->cfg.store, store_error(st));
		rc = -EIO;
	}
	/* the claim stays; the connection goes before any child is made */
	store_close(st);
	if (rc < 0) {
		log_error("the submission store: %s", err);
		snprintf(m->store_refused, sizeof(m->store_refused), "%s", err);
		if (m->store_claim >= 0)
			close(m->store_claim);
		m->store_claim = -1;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = now_ms(), .sub = ids[i] };

		queue_push_unbounded(&m->subs, &e);
	}
	if (n)
		log_info("%zu submissions from the store queued again", n);
	free(ids);
	return 0;
}
