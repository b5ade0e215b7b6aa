/*
 * Judge0's stored submissions as the master queues them (subs): those
 * the store held unfinished at start, each one a worker put in the
 * store, those the store failed for (later, until their wait is over),
 * and with a shared store, leases to take instead of ids.
 */
#ifndef GOBOXD_STORED_H
#define GOBOXD_STORED_H

#include <stddef.h>
#include <stdint.h>

struct master;

/* Claim the store and queue what it holds unfinished. -EBUSY (another
 * goboxd holds it) or -EPROTO (a newer one wrote it) stop the start, why
 * in why; any other failure leaves goboxd without a store (0). */
int stored_open(struct master *m, char *why, size_t whylen);
/* A submission a worker put in the store (SUBMITTED), or a lease to take
 * (CHANNEL_RUN_LEASE): queued, and handed over when its turn comes. */
void stored_enqueue(struct master *m, int64_t id);
/* A submission the store failed for (DEFER): queued again in a while. */
void stored_defer(struct master *m, int64_t id);
/* The deferred ones whose wait is over queue again, at the back. */
void stored_undefer_due(struct master *m);
/* A shared store: a lease to take, now and then, while nothing waits. */
void stored_look(struct master *m);
/* A shared store had nothing to lease (EMPTY): no lease waits. */
void stored_empty(struct master *m);

#endif
