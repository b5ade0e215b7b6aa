/*
 * A worker's outbox of callbacks: what waits to be sent, and a few
 * threads of their own (its senders) that PUT
 * finished submissions to the URLs their clients gave
 * (worker/http/callback.c), so that a slow or dead receiver holds up no
 * job. Each callback is tried CALLBACKS_TRIES times, CALLBACKS_TIMEOUT_MS
 * each, waiting 1 s, then 2 s, between tries (Judge0 tries 3 times, 5 s
 * each).
 *
 * Nor does one receiver hold up another's callbacks. Waiting callbacks
 * are kept per receiver (the URL's host:port), and --callback-senders
 * threads serve the receivers in turn, one try in flight per receiver at
 * most: a receiver that hangs holds one thread, not the others' queue.
 * Receivers whose last try took CALLBACKS_SLOW_MS or more share at most
 * half of the threads, so that however many hang, the others keep the
 * rest.
 *
 * What waits is bounded in bytes (its URL, body and bookkeeping): a
 * worker's all by --callback-queue-size, one receiver's by
 * --callback-host-queue-size. A callback past its receiver's bound is
 * refused; one past the worker's takes the place of the oldest of the
 * receiver holding the most, never of another's: a client that floods or
 * stalls its own receiver loses its own callbacks. Either is logged with
 * its submission's token and counted (goboxd_callbacks_refused_total);
 * the submission itself stays in the store for its client to GET.
 *
 * Every callback carries its submission's token as Idempotency-Key. With
 * a shared store (common/store.h), a delivered callback is marked so in
 * the store (a connection of the senders'); one that never is, because
 * this node died, gave up or had no room, is sent again by another node
 * later (submissions_tick): at least once, never silently lost.
 *
 * The queue itself (callbacks_queue_*) is pure, without threads or
 * network, so that its bounds and order are unit-tested
 * (tests/unit/test_outbox.c).
 */
#ifndef GOBOXD_OUTBOX_H
#define GOBOXD_OUTBOX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cidr.h"
#include "common/config.h"
#include "common/stats.h"
#include "common/store.h"

#define CALLBACKS_TRIES 3
#define CALLBACKS_TIMEOUT_MS 5000
/* A try that takes this long makes its receiver a slow one. */
#define CALLBACKS_SLOW_MS 1000
struct outbox_host;

/* A callback to send; the queue's while queued, its taker's during a try. */
struct outbox_item {
	struct outbox_item *next; /* in its receiver's list, or a dropped chain */
	struct outbox_host *host; /* its receiver, while queued or tried */
	char *url;
	char *body;
	size_t bytes;                /* what it costs the bounds */
	int64_t id;                  /* in a shared store; 0: none */
	char key[STORE_TOKEN_LEN + 1]; /* its submission's token */
	char *host_key;              /* its receiver: host:port, lower case */
	uint64_t seq;                /* the queue's count when it came: its age */
	unsigned tries;
	uint64_t due_ms;             /* CLOCK_MONOTONIC: not tried again before */
	uint64_t started_ms;         /* its try under way began */
};

struct outbox_queue;

struct outbox {
	bool running;
	bool allow_local;
	const struct cidr_list *allow_nets; /* private ranges let through */
	const char *store_url;              /* a shared store's; NULL: none */
	struct stats *stats;                /* counted there; NULL: nowhere */
	unsigned slot;                      /* the worker's in stats->workers */
	pthread_t *threads;
	unsigned nthreads;                  /* started */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct outbox_queue *q;          /* under mu */
	bool quit;                          /* under mu */
	pthread_mutex_t store_mu;           /* one connection for all senders */
	struct store *store;                /* under store_mu, opened at first need */
};

/*
 * Start cfg->callback_senders threads (every signal blocked in them),
 * with cfg's bounds and address rules (cfg outlives cb); store_url: the
 * shared store's (NULL otherwise); stats and slot: where the refusals and
 * the bytes waiting are counted (stats NULL: nowhere). 0 or a negative
 * errno.
 */
int outbox_start(struct outbox *cb, const struct config *cfg, const char *store_url,
		    struct stats *stats, unsigned slot);
/* Send body to url, later (all copied), for submission id (0: none in a
 * shared store) whose token is key; refused (logged) past a bound. */
void outbox_add(struct outbox *cb, int64_t id, const char *key, const char *url,
		   const char *body);
/* Stop: the tries under way end (within their timeout); what still waits
 * is dropped, logged with its URL. */
void outbox_stop(struct outbox *cb);

/* "host:port" of an http or https URL into out, the host in lower case
 * and the scheme's port when none is given. 0 or -EINVAL. Pure. */
int outbox_host_of(const char *url, char *out, size_t outlen);
/* A callback (all copied), its receiver from its URL (one that has none
 * shares the receiver ""). */
struct outbox_item *outbox_item_new(int64_t id, const char *key, const char *url,
					  const char *body);
void outbox_item_free(struct outbox_item *it);

/* An empty queue: at most max_bytes waiting, host_max_bytes of them for
 * one receiver, for senders threads (the slow receivers' share is half). */
struct outbox_queue *outbox_queue_new(size_t max_bytes, size_t host_max_bytes,
					    unsigned senders);
/* Free q and what waits in it; no try may be under way. */
void outbox_queue_free(struct outbox_queue *q);
/*
 * Queue it (q's then), due at now. Past the worker's bound, the oldest
 * waiting callbacks of the receiver holding the most go first: chained on
 * *dropped (the caller's to log and free). 0; -EMSGSIZE: it is larger
 * than a receiver's bound; -ENOSPC: its receiver's bound is reached;
 * -ENOBUFS: the worker's is, and what fills it is under way: then it is
 * not queued (still the caller's) and nothing was dropped.
 */
int outbox_queue_add(struct outbox_queue *q, struct outbox_item *it, uint64_t now,
			struct outbox_item **dropped);
/*
 * The next try to make at now: the receivers in turn, from the one after
 * the last served, each with no try under way (and, for a slow one, the
 * slow ones' share not taken), its callback due first. NULL when none is
 * due, with *wait_ms until one is (UINT64_MAX: none waits, or all wait
 * for a try to end).
 */
struct outbox_item *outbox_queue_take(struct outbox_queue *q, uint64_t now,
					    uint64_t *wait_ms);
/*
 * The try of it (from outbox_queue_take) ended at now with rc
 * (callback_put's). true: queued again for its next try; false: it is
 * done (delivered, its URL or address refused, or its tries spent) and
 * the caller's to free.
 */
bool outbox_queue_done(struct outbox_queue *q, struct outbox_item *it, int rc,
			  uint64_t now);
/* What waits, not under way: taken out and chained (the caller's). */
struct outbox_item *outbox_queue_drain(struct outbox_queue *q);
/* Bytes of the callbacks queued or under way. */
size_t outbox_queue_bytes(const struct outbox_queue *q);
/* Those of one receiver ("host:port"). */
size_t outbox_queue_host_bytes(const struct outbox_queue *q, const char *host);

#endif
