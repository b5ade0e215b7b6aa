/*
 * What the master sends a worker over its channel: DISPATCH (a
 * connection another worker took in, with its bytes), RUN (a stored
 * submission, or a lease to take from a shared store), QUIT (finish and
 * exit). Each is checked against the channel's table first.
 */
#ifndef GOBOXD_FROM_MASTER_H
#define GOBOXD_FROM_MASTER_H

struct worker;

/* Act on every message waiting in the channel. A channel that failed
 * (the master is gone) makes the worker finish up and leave. */
void from_master_read(struct worker *w);

#endif
