/*
 * The hand-over of jobs to workers: the clients' queue (its 503s, its
 * expiry) and the messages that give a job to an idle worker of the
 * current generation (DISPATCH, or RUN for a stored submission). Which
 * job goes next is master/dispatch.h's; a worker that cannot be reached
 * is killed, to be reaped and replaced, and the next one is tried.
 */
#ifndef GOBOXD_HANDOVER_H
#define GOBOXD_HANDOVER_H

#include <stdbool.h>

struct master;
struct queue_entry;
struct wslot;

/* A connection a worker took in (its socket and the memfd of its bytes,
 * both taken over): straight to an idle worker, else into the queue, else
 * answered 503. */
void handover_enqueue(struct master *m, int fd, int memfd);
/* Give every job that may go now to an idle worker, then publish the
 * queue's length. */
void handover_dispatch(struct master *m);
/* Answer 503 with code and msg (Retry-After from --queue-timeout) and
 * close the entry's fds. */
void handover_refuse(struct master *m, struct queue_entry *e, const char *code, const char *msg);
/* What waits, in the shared stats' queued counter, and what an idle
 * worker must not overtake (common/admit.h). */
void handover_publish(struct master *m);
/* Refuse the connections that waited past --queue-timeout. */
void handover_expire(struct master *m);
/* The worker's DONE or EMPTY: its job is over, and it ended its holding
 * itself (common/admit.h). dispatched: the job was the master's (its
 * dispatch no longer runs); else one the worker read itself. */
void handover_job_done(struct master *m, struct wslot *s, bool dispatched);
/* The worker died: whatever it held, whoever started it, no longer
 * counts as running. */
void handover_worker_gone(struct master *m, struct wslot *s);
/* A worker is forked into slot s: it holds nothing. */
void handover_worker_starts(struct master *m, struct wslot *s);

#endif
