/*
 * A worker's callback sender: a thread of its own that PUTs finished
 * submissions to the URLs their clients gave (worker/http/callback.c), so
 * that a slow or dead receiver holds up no job. Each callback is tried
 * CALLBACKS_TRIES times, CALLBACKS_TIMEOUT_MS each, waiting 1 s, then 2 s,
 * between tries (Judge0 tries 3 times, 5 s each); one waiting for its
 * next try holds up none of the others. At most CALLBACKS_MAX wait; past
 * that the oldest is dropped (logged).
 */
#ifndef GOBOXD_CALLBACKS_H
#define GOBOXD_CALLBACKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define CALLBACKS_TRIES 3
#define CALLBACKS_TIMEOUT_MS 5000
#define CALLBACKS_MAX 1024

struct callbacks_item;

struct callbacks {
	bool running;
	bool allow_local;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct callbacks_item *head, *tail; /* under mu */
	size_t n;                           /* under mu */
	bool quit;                          /* under mu */
};

/* Start the thread (every signal blocked in it). 0 or a negative errno. */
int callbacks_start(struct callbacks *cb, bool allow_local);
/* Send body to url, later (both copied). */
void callbacks_add(struct callbacks *cb, const char *url, const char *body);
/* Stop: the try under way ends (within its timeout); what still waits is
 * dropped, logged with its URL. */
void callbacks_stop(struct callbacks *cb);

#endif
