/*
 * A worker's callback sender: a thread of its own that PUTs finished
 * submissions to the URLs their clients gave (worker/http/callback.c), so
 * that a slow or dead receiver holds up no job. Each callback is tried
 * CALLBACKS_TRIES times, CALLBACKS_TIMEOUT_MS each, waiting 1 s, then 2 s,
 * between tries (Judge0 tries 3 times, 5 s each); one waiting for its
 * next try holds up none of the others. At most CALLBACKS_MAX wait; past
 * that the oldest is dropped (logged).
 *
 * Every callback carries its submission's token as Idempotency-Key. With
 * a shared store (common/store.h), a delivered callback is marked so in
 * the store (the thread's own connection); one that never is, because
 * this node died or gave up, is sent again by another node later
 * (submissions_tick): at least once, never silently lost.
 */
#ifndef GOBOXD_CALLBACKS_H
#define GOBOXD_CALLBACKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cidr.h"
#include "common/store.h"

#define CALLBACKS_TRIES 3
#define CALLBACKS_TIMEOUT_MS 5000
#define CALLBACKS_MAX 1024

struct callbacks_item;

struct callbacks {
	bool running;
	bool allow_local;
	const struct cidr_list *allow_nets; /* private ranges let through */
	const char *store_url;              /* a shared store's; NULL: none */
	struct store *store;                /* the thread's, opened at first need */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct callbacks_item *head, *tail; /* under mu */
	size_t n;                           /* under mu */
	bool quit;                          /* under mu */
};

/* Start the thread (every signal blocked in it). allow_local and
 * allow_nets as callback_opts has them (allow_nets outlives cb);
 * store_url: the shared store's (NULL otherwise). 0 or a negative errno. */
int callbacks_start(struct callbacks *cb, bool allow_local, const struct cidr_list *allow_nets,
		    const char *store_url);
/* Send body to url, later (all copied), for submission id (0: none in a
 * shared store) whose token is key. */
void callbacks_add(struct callbacks *cb, int64_t id, const char *key, const char *url,
		   const char *body);
/* Stop: the try under way ends (within its timeout); what still waits is
 * dropped, logged with its URL. */
void callbacks_stop(struct callbacks *cb);

#endif
