/*
 * Who may start a client's job, and where: the job slots
 * (--max-concurrency) and each worker's one job, shared by the master and
 * its workers in the statistics region (common/stats.h).
 *
 * The master hands queued work to idle workers; a worker that reads a job
 * request while it is idle and nothing waits at the master runs it
 * itself, with no hop through the master and no second parse. Both take
 * a slot the same way, so that the limit holds whoever starts a job:
 *   - a job slot first (admit_reserve: `running` raised under the limit),
 *   - then the worker (its word from FREE to MASTER or SELF, one atomic
 *     exchange: the master and the worker can never both have it),
 *   - and the slot given back when the worker could not be had.
 * A holding ends when its job does: the worker ends its own
 * (admit_release) before it tells the master DONE, so that it can take
 * the next request it reads while the master has yet to read that DONE;
 * the master ends a dead worker's (admit_end). Either way the worker is
 * FREE again, and a slot given back.
 */
#ifndef GOBOXD_ADMIT_H
#define GOBOXD_ADMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADMIT_MAX_WORKERS 512

/* Who holds a worker. */
enum admit_holder {
	ADMIT_FREE = 0, /* no job: the master may dispatch, the worker may take one */
	ADMIT_MASTER,   /* the master dispatched it a job or a submission */
	ADMIT_SELF,     /* it runs a job it read itself */
};

struct admit {
	_Atomic uint32_t running; /* jobs that workers hold */
	_Atomic uint32_t waiting; /* entries the master's queues could dispatch now */
	_Atomic uint32_t holder[ADMIT_MAX_WORKERS]; /* enum admit_holder */
};

/* A worker starts in slot i: FREE. The master, before it forks it. */
void admit_reset(struct admit *a, size_t i);
/* One more running job, if fewer than limit run. */
bool admit_reserve(struct admit *a, unsigned limit);
/* The slot admit_reserve gave, given back unused. */
void admit_unreserve(struct admit *a);
/* The master takes worker i, if it is FREE. */
bool admit_take(struct admit *a, size_t i);
/* What admit_take took, given back: the job never reached the worker. */
void admit_untake(struct admit *a, size_t i);
/*
 * Worker i takes a job it read itself: only when nothing waits at the
 * master (whatever waits goes first), a slot is free, and the master has
 * not dispatched it anything.
 */
bool admit_self(struct admit *a, size_t i, unsigned limit);
/* Worker i, at its job's end: its holding ends, its slot back. What it
 * held (ADMIT_FREE when nothing). */
enum admit_holder admit_release(struct admit *a, size_t i);
/* The master, at worker i's death: its holding ends, its slot back.
 * False when it held none. */
bool admit_end(struct admit *a, size_t i);
/* The master's queues hold n dispatchable entries. */
void admit_set_waiting(struct admit *a, size_t n);
unsigned admit_running(const struct admit *a);

#endif
