/*
 * What the workers tell the master over their channels (ENQUEUE,
 * SUBMITTED, DEFER, IDLE, DONE, EMPTY), each message checked against the
 * channel's table before it is acted on.
 */
#ifndef GOBOXD_FROM_WORKER_H
#define GOBOXD_FROM_WORKER_H

struct master;
struct wslot;

/* Act on every message waiting in the worker's channel (none once the
 * worker has been reaped). */
void from_worker_read(struct master *m, struct wslot *s);

#endif
