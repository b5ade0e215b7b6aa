#include "autoconf.h"

#include "worker/callbacks.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/callback.h"

struct callbacks_item {
	struct callbacks_item *next;
	char *url;
	char *body;
	int64_t id;             /* in a shared store; 0: none */
	char key[STORE_TOKEN_LEN + 1];
	unsigned tries;
	uint64_t due_ms;        /* CLOCK_MONOTONIC: not tried again before */
};

static void item_free(struct callbacks_item *it)
{
	free(it->url);
	free(it->body);
	free(it);
}

static void append(struct callbacks *cb, struct callbacks_item *it)
{
	it->next = NULL;
	if (cb->tail)
		cb->tail->next = it;
	else
		cb->head = it;
	cb->tail = it;
	cb->n++;
}

/* Take out the item due first (under mu); NULL when none waits. */
static struct callbacks_item *take_first_due(struct callbacks *cb)
{
	struct callbacks_item **best = NULL, *prev = NULL, *it;

	for (struct callbacks_item **pp = &cb->head; *pp; pp = &(*pp)->next)
		if (!best || (*pp)->due_ms < (*best)->due_ms)
			best = pp;
	if (!best)
		return NULL;
	it = *best;
	*best = it->next;
	for (struct callbacks_item *q = cb->head; q; q = q->next)
		prev = q;
	cb->tail = prev;
	cb->n--;
	return it;
}

/* Wait until ms from now or a signal (under mu). */
static void wait_for(struct callbacks *cb, uint64_t ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&cb->cv, &cb->mu, &until);
}

/* Nothing more is due: the store hears it, so that no node sends it again. */
static void delivered(struct callbacks *cb, const struct callbacks_item *it)
{
	char err[256];
	int rc;

	if (!it->id || !cb->store_url)
		return;
	if (!cb->store && store_open(cb->store_url, 0, &cb->store, err, sizeof(err)) < 0) {
		log_warn("callback of submission %s delivered, not marked so: %s", it->key, err);
		cb->store = NULL;
		return;
	}
	rc = store_callback_done(cb->store, it->id);
	if (rc < 0)
		log_warn("callback of submission %s delivered, not marked so: %s", it->key,
			 strerror(-rc));
}

/*
 * One try at a time, the one due first: a callback waiting for its next
 * try (1 s, then 2 s) holds up none of the others.
 */
static void *thread_main(void *arg)
{
	struct callbacks *cb = arg;
	struct callback_opts o = { .timeout_ms = CALLBACKS_TIMEOUT_MS,
				   .allow_local = cb->allow_local, .allow_nets = cb->allow_nets };

	pthread_mutex_lock(&cb->mu);
	while (!cb->quit) {
		struct callbacks_item *it = take_first_due(cb);
		uint64_t now = now_ms();
		char err[256];
		int rc;

		if (!it) {
			pthread_cond_wait(&cb->cv, &cb->mu);
			continue;
		}
		if (it->due_ms > now) {
			append(cb, it);
			wait_for(cb, it->due_ms - now);
			continue;
		}
		pthread_mutex_unlock(&cb->mu);
		o.idempotency_key = it->key;
		rc = callback_put(it->url, it->body, strlen(it->body), &o, err, sizeof(err));
		if (rc == 0)
			delivered(cb, it);
		pthread_mutex_lock(&cb->mu);
		it->tries++;
		if (rc == 0) {
			log_debug("callback to %s delivered", it->url);
			item_free(it);
		} else if (rc == -EACCES || rc == -EINVAL || it->tries >= CALLBACKS_TRIES) {
			/* a refused address or URL stays refused */
			log_warn("callback to %s given up after %u tries: %s", it->url, it->tries,
				 err);
			item_free(it);
		} else {
			log_info("callback to %s failed (try %u): %s", it->url, it->tries, err);
			it->due_ms = now_ms() + (1000u << (it->tries - 1));
			append(cb, it);
		}
	}
	while (cb->head) {
		struct callbacks_item *it = cb->head;

		cb->head = it->next;
		log_warn("callback to %s dropped: the worker stops", it->url);
		item_free(it);
	}
	cb->tail = NULL;
	cb->n = 0;
	pthread_mutex_unlock(&cb->mu);
	store_close(cb->store);
	cb->store = NULL;
	return NULL;
}

int callbacks_start(struct callbacks *cb, bool allow_local, const struct cidr_list *allow_nets,
		    const char *store_url)
{
	sigset_t all, old;
	int rc;

	memset(cb, 0, sizeof(*cb));
	pthread_mutex_init(&cb->mu, NULL);
	pthread_cond_init(&cb->cv, NULL);
	cb->allow_local = allow_local;
	cb->allow_nets = allow_nets;
	cb->store_url = store_url;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&cb->thread, NULL, thread_main, cb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -rc;
	cb->running = true;
	return 0;
}

void callbacks_add(struct callbacks *cb, int64_t id, const char *key, const char *url,
		   const char *body)
{
	struct callbacks_item *it;

	if (!cb->running)
		return;
	it = xcalloc(1, sizeof(*it));
	it->url = xstrdup(url);
	it->body = xstrdup(body);
	it->id = id;
	snprintf(it->key, sizeof(it->key), "%s", key ? key : "");
	it->due_ms = now_ms();
	pthread_mutex_lock(&cb->mu);
	if (cb->n >= CALLBACKS_MAX) {
		struct callbacks_item *old = cb->head;

		cb->head = old->next;
		cb->n--;
		log_warn("callback to %s dropped: %d callbacks wait", old->url, CALLBACKS_MAX);
		item_free(old);
		if (!cb->head)
			cb->tail = NULL;
	}
	append(cb, it);
	pthread_cond_signal(&cb->cv);
	pthread_mutex_unlock(&cb->mu);
}

void callbacks_stop(struct callbacks *cb)
{
	if (!cb->running)
		return;
	pthread_mutex_lock(&cb->mu);
	cb->quit = true;
	pthread_cond_signal(&cb->cv);
	pthread_mutex_unlock(&cb->mu);
	pthread_join(cb->thread, NULL);
	cb->running = false;
}
