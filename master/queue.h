/*
 * The master's FIFO of connections waiting for a free worker. Bounded in
 * length; entries older than the timeout are expired by the caller.
 */
#ifndef GOBOXD_QUEUE_H
#define GOBOXD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct queue_entry {
	int fd;          /* client socket; -1 for a stored submission */
	int memfd;       /* bytes already read from it; -1 for a stored submission */
	uint64_t enq_ms; /* CLOCK_MONOTONIC */
	int64_t sub;     /* a stored submission's id (common/store.h), 0 for a client */
};

struct queue {
	struct queue_entry *v;
	size_t cap;      /* slots allocated */
	size_t bound;    /* most entries accepted; 0: queueing disabled */
	size_t head;
	size_t len;
};

void queue_init(struct queue *q, size_t cap);
void queue_free(struct queue *q);   /* closes what is left */
/* 0, or -ENOSPC when full (the caller still owns the fds). */
int queue_push(struct queue *q, const struct queue_entry *e);
/* 0 and the oldest entry, or -ENOENT. */
int queue_pop(struct queue *q, struct queue_entry *out);
/* Put an entry back at the front (a dispatch that failed). */
int queue_unpop(struct queue *q, const struct queue_entry *e);
/* The oldest entry's enqueue time; 0 if empty. */
uint64_t queue_oldest_ms(const struct queue *q);
/* Change the bound (reload); entries beyond a smaller bound stay queued. */
void queue_resize(struct queue *q, size_t cap);
/* Push with no bound, growing as needed (stored submissions: they wait
 * in the store anyway, and no client holds a connection for them). */
void queue_push_unbounded(struct queue *q, const struct queue_entry *e);

#endif
