/*
 * What the master hands to its workers next: of the clients' queue and
 * the stored submissions', the head that waited longest, while fewer
 * jobs run than the limit. The choice alone, with no worker, channel or
 * socket: handing over and refusing are the caller's hooks.
 */
#ifndef GOBOXD_DISPATCH_H
#define GOBOXD_DISPATCH_H

#include <stdbool.h>

#include "common/admit.h"
#include "master/queue.h"

struct dispatch_hooks {
	void *arg;
	/* 0: a worker has e (its job slot reserved before, common/admit.h).
	 * -EAGAIN: no worker could take it, e is still the caller's. Another
	 * -errno: it could not be sent at all. */
	int (*hand_over)(void *arg, const struct queue_entry *e);
	/* A client whose job could not be sent at all: answer it, close it. */
	void (*overloaded)(void *arg, struct queue_entry *e);
};

/* The queue whose head waited longest, the clients' on a tie; NULL when
 * nothing waits. A stopping master leaves the stored submissions in the
 * store, for the next start. */
struct queue *dispatch_next(struct queue *clients, struct queue *subs, bool stopping);
/*
 * One entry to a worker, if a job slot is free (under limit): 0, or
 * -EAGAIN (no slot, or no worker took it: e is still the caller's), or
 * the hand-over's error. A slot not used is given back.
 */
int dispatch_one(struct admit *a, unsigned limit, const struct dispatch_hooks *h,
		 const struct queue_entry *e);
/*
 * Hand heads over, oldest first, while a job slot is free. An entry no
 * worker could take goes back to the head of its queue, and dispatch
 * stops; a client that could not be sent at all is refused, a stored
 * submission waits.
 */
void dispatch_run(struct queue *clients, struct queue *subs, bool stopping, struct admit *a,
		  unsigned limit, const struct dispatch_hooks *h);

#endif
