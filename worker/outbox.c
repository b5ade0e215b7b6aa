#include "autoconf.h"

#include "worker/outbox.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/callback.h"

/* One receiver's callbacks. */
struct outbox_host {
	struct outbox_host *prev, *next; /* in turn order */
	char *key;                          /* host:port */
	/* Never tried yet, oldest first: all of them younger than later's,
	 * which were taken from here before them. */
	struct outbox_item *fresh, *fresh_tail;
	struct outbox_item *later;       /* waiting for their next try, due first first */
	struct outbox_item *busy;        /* its try under way; NULL: none */
	bool busy_slow;                     /* busy counts in the slow ones' share */
	bool slow;                          /* its last try took CALLBACKS_SLOW_MS or more */
	size_t bytes;                       /* its callbacks', busy's too */
};

struct outbox_queue {
	size_t max_bytes, host_max_bytes;
	unsigned slow_max;                  /* tries to slow receivers under way at once */
	unsigned slow_busy;
	struct outbox_host *hosts, *hosts_tail;
	size_t nhosts;
	struct outbox_host *last;        /* the one served last; NULL: none */
	size_t bytes;                       /* queued and under way */
	size_t busy_bytes;                  /* under way */
	uint64_t seq;
};

/* ---- receivers ---- */

static int scheme_port(const char *url, size_t len)
{
	if (len == 4 && !strncasecmp(url, "http", 4))
		return 80;
	if (len == 5 && !strncasecmp(url, "https", 5))
		return 443;
	return -EINVAL;
}

/* The port after a host: digits, or nothing for the scheme's. */
static int port_of(const char *p, const char *end, int dflt)
{
	unsigned long v = 0;

	if (p == end)
		return dflt;
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			return -EINVAL;
	}
	return (int)v;
}

int outbox_host_of(const char *url, char *out, size_t outlen)
{
	const char *sep = strstr(url, "://"), *auth, *end, *host_end;
	int dflt, port;
	size_t n;

	if (!sep || (dflt = scheme_port(url, (size_t)(sep - url))) < 0)
		return -EINVAL;
	auth = sep + 3;
	end = auth + strcspn(auth, "/?#");
	for (const char *p = auth; p < end; p++)
		if (*p == '@') /* callback_url_check refuses one; never part of the host */
			auth = p + 1;
	if (*auth == '[') {
		host_end = memchr(auth, ']', (size_t)(end - auth));
		if (!host_end)
			return -EINVAL;
		host_end++;
	} else {
		host_end = memchr(auth, ':', (size_t)(end - auth));
		if (!host_end)
			host_end = end;
	}
	if (host_end == auth || (host_end < end && *host_end != ':'))
		return -EINVAL;
	port = port_of(host_end < end ? host_end + 1 : end, end, dflt);
	n = (size_t)(host_end - auth);
	if (port < 0 || n + 7 > outlen)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)auth[i]);
	snprintf(out + n, outlen - n, ":%d", port);
	return 0;
}

struct outbox_item *outbox_item_new(int64_t id, const char *key, const char *url,
					  const char *body)
{
	struct outbox_item *it = xcalloc(1, sizeof(*it));
	size_t hostlen = strlen(url) + 8;

	it->url = xstrdup(url);
	it->body = xstrdup(body);
	it->host_key = xmalloc(hostlen);
	if (outbox_host_of(url, it->host_key, hostlen) < 0)
		it->host_key[0] = '\0'; /* callback_put refuses it at its one try */
	it->id = id;
	snprintf(it->key, sizeof(it->key), "%s", key ? key : "");
	it->bytes = sizeof(*it) + strlen(it->url) + strlen(it->body) + strlen(it->host_key) + 3;
	return it;
}

void outbox_item_free(struct outbox_item *it)
{
	if (!it)
		return;
	free(it->url);
	free(it->body);
	free(it->host_key);
	free(it);
}

static struct outbox_host *host_find(const struct outbox_queue *q, const char *key)
{
	for (struct outbox_host *h = q->hosts; h; h = h->next)
		if (!strcmp(h->key, key))
			return h;
	return NULL;
}

/* A new receiver, served after all those there already. */
static struct outbox_host *host_add(struct outbox_queue *q, const char *key)
{
	struct outbox_host *h = xcalloc(1, sizeof(*h));

	h->key = xstrdup(key);
	h->prev = q->hosts_tail;
	if (q->hosts_tail)
		q->hosts_tail->next = h;
	else
		q->hosts = h;
	q->hosts_tail = h;
	q->nhosts++;
	return h;
}

/* A receiver with nothing waiting nor under way is forgotten: the
 * receivers a client may name are not bounded, its callbacks are. */
static void host_forget_if_idle(struct outbox_queue *q, struct outbox_host *h)
{
	if (h->fresh || h->later || h->busy)
		return;
	if (q->last == h)
		q->last = h->prev;
	if (h->prev)
		h->prev->next = h->next;
	else
		q->hosts = h->next;
	if (h->next)
		h->next->prev = h->prev;
	else
		q->hosts_tail = h->prev;
	q->nhosts--;
	free(h->key);
	free(h);
}

static void later_insert(struct outbox_host *h, struct outbox_item *it)
{
	struct outbox_item **pp = &h->later;

	while (*pp && (*pp)->due_ms <= it->due_ms)
		pp = &(*pp)->next;
	it->next = *pp;
	*pp = it;
}

/* Take out h's oldest waiting callback (one is). */
static struct outbox_item *host_drop_oldest(struct outbox_queue *q,
					       struct outbox_host *h)
{
	struct outbox_item **oldest = NULL, *it;

	for (struct outbox_item **pp = &h->later; *pp; pp = &(*pp)->next)
		if (!oldest || (*pp)->seq < (*oldest)->seq)
			oldest = pp;
	if (oldest) {
		it = *oldest;
		*oldest = it->next;
	} else {
		it = h->fresh;
		h->fresh = it->next;
		if (!h->fresh)
			h->fresh_tail = NULL;
	}
	it->next = NULL;
	it->host = NULL;
	h->bytes -= it->bytes;
	q->bytes -= it->bytes;
	host_forget_if_idle(q, h);
	return it;
}

/* The receiver whose waiting callbacks (not those under way) take most. */
static struct outbox_host *largest(const struct outbox_queue *q)
{
	struct outbox_host *best = NULL;
	size_t most = 0;

	for (struct outbox_host *h = q->hosts; h; h = h->next) {
		size_t waiting = h->bytes - (h->busy ? h->busy->bytes : 0);

		if (waiting > most) {
			most = waiting;
			best = h;
		}
	}
	return best;
}

/* ---- the queue ---- */

struct outbox_queue *outbox_queue_new(size_t max_bytes, size_t host_max_bytes,
					    unsigned senders)
{
	struct outbox_queue *q = xcalloc(1, sizeof(*q));

	q->max_bytes = max_bytes;
	q->host_max_bytes = host_max_bytes;
	/* half the threads stay for receivers that answer: one thread alone
	 * cannot be shared */
	q->slow_max = senders > 1 ? senders / 2 : 1;
	return q;
}

static void free_list(struct outbox_item *it)
{
	while (it) {
		struct outbox_item *next = it->next;

		outbox_item_free(it);
		it = next;
	}
}

void outbox_queue_free(struct outbox_queue *q)
{
	if (!q)
		return;
	while (q->hosts) {
		struct outbox_host *h = q->hosts;

		q->hosts = h->next;
		free_list(h->fresh);
		free_list(h->later);
		free(h->key);
		free(h);
	}
	free(q);
}

/* Make room for need more bytes: the oldest of the receiver holding the
 * most go, chained oldest first. Room is there to make. */
static struct outbox_item *make_room(struct outbox_queue *q, size_t need)
{
	struct outbox_item *out = NULL, **tail = &out;

	while (q->bytes + need > q->max_bytes) {
		*tail = host_drop_oldest(q, largest(q));
		tail = &(*tail)->next;
	}
	return out;
}

int outbox_queue_add(struct outbox_queue *q, struct outbox_item *it, uint64_t now,
			struct outbox_item **dropped)
{
	struct outbox_host *h = host_find(q, it->host_key);

	*dropped = NULL;
	if (it->bytes > q->host_max_bytes || it->bytes > q->max_bytes)
		return -EMSGSIZE;
	if (h && h->bytes + it->bytes > q->host_max_bytes)
		return -ENOSPC;
	/* only what waits can make room: not a try under way */
	if (q->bytes + it->bytes > q->max_bytes &&
	    q->bytes + it->bytes - q->max_bytes > q->bytes - q->busy_bytes)
		return -ENOBUFS;
	*dropped = make_room(q, it->bytes);
	h = host_find(q, it->host_key); /* making room may have forgotten it */
	if (!h)
		h = host_add(q, it->host_key);
	it->host = h;
	it->seq = ++q->seq;
	it->tries = 0;
	it->due_ms = now;
	it->next = NULL;
	if (h->fresh_tail)
		h->fresh_tail->next = it;
	else
		h->fresh = it;
	h->fresh_tail = it;
	h->bytes += it->bytes;
	q->bytes += it->bytes;
	return 0;
}

/* When h's next callback is due; UINT64_MAX: none waits. */
static uint64_t host_due(const struct outbox_host *h)
{
	uint64_t due = UINT64_MAX;

	if (h->fresh)
		due = h->fresh->due_ms;
	if (h->later && h->later->due_ms < due)
		due = h->later->due_ms;
	return due;
}

/* Whether h may have a try under way now. */
static bool host_free(const struct outbox_queue *q, const struct outbox_host *h)
{
	return !h->busy && (!h->slow || q->slow_busy < q->slow_max);
}

static struct outbox_item *host_take(struct outbox_queue *q, struct outbox_host *h,
					uint64_t now)
{
	struct outbox_item *it;

	if (h->fresh && (!h->later || h->fresh->due_ms <= h->later->due_ms)) {
		it = h->fresh;
		h->fresh = it->next;
		if (!h->fresh)
			h->fresh_tail = NULL;
	} else {
		it = h->later;
		h->later = it->next;
	}
	it->next = NULL;
	it->started_ms = now;
	h->busy = it;
	h->busy_slow = h->slow;
	if (h->slow)
		q->slow_busy++;
	q->busy_bytes += it->bytes;
	q->last = h;
	return it;
}

struct outbox_item *outbox_queue_take(struct outbox_queue *q, uint64_t now,
					    uint64_t *wait_ms)
{
	struct outbox_host *h = q->last && q->last->next ? q->last->next : q->hosts;

	*wait_ms = UINT64_MAX;
	for (size_t i = 0; i < q->nhosts; i++, h = h->next ? h->next : q->hosts) {
		uint64_t due;

		if (!host_free(q, h))
			continue; /* the end of a try wakes the senders */
		due = host_due(h);
		if (due <= now)
			return host_take(q, h, now);
		if (due - now < *wait_ms)
			*wait_ms = due - now;
	}
	return NULL;
}

bool outbox_queue_done(struct outbox_queue *q, struct outbox_item *it, int rc,
			  uint64_t now)
{
	struct outbox_host *h = it->host;

	h->busy = NULL;
	if (h->busy_slow)
		q->slow_busy--;
	h->busy_slow = false;
	h->slow = now >= it->started_ms && now - it->started_ms >= CALLBACKS_SLOW_MS;
	q->busy_bytes -= it->bytes;
	it->tries++;
	/* a refused address or URL stays refused */
	if (rc != 0 && rc != -EACCES && rc != -EINVAL && it->tries < CALLBACKS_TRIES) {
		it->due_ms = now + (1000u << (it->tries - 1));
		later_insert(h, it);
		return true;
	}
	h->bytes -= it->bytes;
	q->bytes -= it->bytes;
	it->host = NULL;
	host_forget_if_idle(q, h);
	return false;
}

/* Chain l onto *tail, taking its bytes off h and q; the new tail. */
static struct outbox_item **take_all(struct outbox_queue *q, struct outbox_host *h,
					struct outbox_item *l, struct outbox_item **tail)
{
	for (; l; l = l->next) {
		l->host = NULL;
		h->bytes -= l->bytes;
		q->bytes -= l->bytes;
		*tail = l;
		tail = &l->next;
	}
	*tail = NULL;
	return tail;
}

struct outbox_item *outbox_queue_drain(struct outbox_queue *q)
{
	struct outbox_item *out = NULL, **tail = &out;
	struct outbox_host *h = q->hosts;

	while (h) {
		struct outbox_host *next = h->next;

		tail = take_all(q, h, h->later, tail);
		tail = take_all(q, h, h->fresh, tail);
		h->later = h->fresh = h->fresh_tail = NULL;
		host_forget_if_idle(q, h);
		h = next;
	}
	return out;
}

size_t outbox_queue_bytes(const struct outbox_queue *q)
{
	return q->bytes;
}

size_t outbox_queue_host_bytes(const struct outbox_queue *q, const char *host)
{
	const struct outbox_host *h = host_find(q, host);

	return h ? h->bytes : 0;
}

/* ---- the senders ---- */

/* The bytes waiting, for /metrics (under mu). */
static void publish(struct outbox *cb)
{
	if (cb->stats && cb->slot < STATS_MAX_WORKERS)
		atomic_store(&cb->stats->workers[cb->slot].callbacks_bytes,
			     cb->q ? outbox_queue_bytes(cb->q) : 0);
}

/* A callback a bound left no room for: its submission stays, it does not. */
static void lost(struct outbox *cb, const struct outbox_item *it, const char *why)
{
	if (cb->stats)
		atomic_fetch_add(&cb->stats->callbacks_refused, 1);
	log_warn("callback of submission %s to %s not sent: %s; the submission stays in the"
		 " store for its client, %s", it->key, it->url, why,
		 it->id && cb->store_url ? "and a later round of the shared store sends it again" :
		 "its callback is lost");
}

/* Wait until ms from now (UINT64_MAX: until woken) or a signal (under mu). */
static void wait_for(struct outbox *cb, uint64_t ms)
{
	struct timespec until;

	if (ms == UINT64_MAX) {
		pthread_cond_wait(&cb->cv, &cb->mu);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&cb->cv, &cb->mu, &until);
}

/* Nothing more is due: the store hears it, so that no node sends it again. */
static void delivered(struct outbox *cb, const struct outbox_item *it)
{
	char err[256];
	int rc;

	if (!it->id || !cb->store_url)
		return;
	pthread_mutex_lock(&cb->store_mu);
	if (!cb->store && store_open(cb->store_url, 0, &cb->store, err, sizeof(err)) < 0) {
		log_warn("callback of submission %s delivered, not marked so: %s", it->key, err);
		cb->store = NULL;
	} else if ((rc = store_callback_done(cb->store, it->id)) < 0) {
		log_warn("callback of submission %s delivered, not marked so: %s", it->key,
			 strerror(-rc));
	}
	pthread_mutex_unlock(&cb->store_mu);
}

/* One try of it, outside mu. */
static int try_once(struct outbox *cb, const struct outbox_item *it, char *err,
		    size_t errlen)
{
	struct callback_opts o = { .timeout_ms = CALLBACKS_TIMEOUT_MS,
				   .allow_local = cb->allow_local, .allow_nets = cb->allow_nets,
				   .idempotency_key = it->key };
	int rc = callback_put(it->url, it->body, strlen(it->body), &o, err, errlen);

	if (rc == 0)
		delivered(cb, it);
	return rc;
}

/* The try of it ended with rc (under mu). */
static void try_ended(struct outbox *cb, struct outbox_item *it, int rc, const char *err)
{
	if (outbox_queue_done(cb->q, it, rc, now_ms())) {
		log_info("callback to %s failed (try %u): %s", it->url, it->tries, err);
	} else if (rc == 0) {
		log_debug("callback to %s delivered", it->url);
		outbox_item_free(it);
	} else {
		log_warn("callback to %s given up after %u tries: %s", it->url, it->tries, err);
		outbox_item_free(it);
	}
	publish(cb);
	/* its receiver, or the slow ones' share, may serve another now */
	pthread_cond_broadcast(&cb->cv);
}

/* A sender: the next due try of the receivers in turn, until told to quit. */
static void *sender_main(void *arg)
{
	struct outbox *cb = arg;

	pthread_mutex_lock(&cb->mu);
	while (!cb->quit) {
		uint64_t wait;
		struct outbox_item *it = outbox_queue_take(cb->q, now_ms(), &wait);
		char err[256] = "";
		int rc;

		if (!it) {
			wait_for(cb, wait);
			continue;
		}
		pthread_mutex_unlock(&cb->mu);
		rc = try_once(cb, it, err, sizeof(err));
		pthread_mutex_lock(&cb->mu);
		try_ended(cb, it, rc, err);
	}
	pthread_mutex_unlock(&cb->mu);
	return NULL;
}

/* Tell the senders to quit and wait for them (each ends its try first). */
static void stop_senders(struct outbox *cb)
{
	pthread_mutex_lock(&cb->mu);
	cb->quit = true;
	pthread_cond_broadcast(&cb->cv);
	pthread_mutex_unlock(&cb->mu);
	for (unsigned i = 0; i < cb->nthreads; i++)
		pthread_join(cb->threads[i], NULL);
	cb->nthreads = 0;
}

/* Release what start made, once no sender runs. */
static void release(struct outbox *cb)
{
	outbox_queue_free(cb->q);
	cb->q = NULL;
	publish(cb);
	free(cb->threads);
	cb->threads = NULL;
	store_close(cb->store);
	cb->store = NULL;
}

static int start_senders(struct outbox *cb, unsigned n)
{
	sigset_t all, old;
	int rc = 0;

	cb->threads = xcalloc(n, sizeof(*cb->threads));
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (; cb->nthreads < n; cb->nthreads++) {
		rc = pthread_create(&cb->threads[cb->nthreads], NULL, sender_main, cb);
		if (rc != 0)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		log_error("pthread_create(callback sender %u): %s", cb->nthreads, strerror(rc));
	return -rc;
}

int outbox_start(struct outbox *cb, const struct config *cfg, const char *store_url,
		    struct stats *stats, unsigned slot)
{
	unsigned n = cfg->callback_senders ? cfg->callback_senders : 1;
	pthread_condattr_t ca;
	int rc;

	memset(cb, 0, sizeof(*cb));
	pthread_mutex_init(&cb->mu, NULL);
	pthread_mutex_init(&cb->store_mu, NULL);
	/* a due time is CLOCK_MONOTONIC's: a clock set back delays no try */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cb->cv, &ca);
	pthread_condattr_destroy(&ca);
	cb->allow_local = cfg->callback_allow_local;
	cb->allow_nets = &cfg->callback_nets;
	cb->store_url = store_url;
	cb->stats = stats;
	cb->slot = slot;
	cb->q = outbox_queue_new(cfg->callback_queue_bytes, cfg->callback_host_queue_bytes, n);
	publish(cb);
	rc = start_senders(cb, n);
	if (rc < 0) {
		stop_senders(cb);
		release(cb);
		return rc;
	}
	cb->running = true;
	return 0;
}

/* Why queue_add refused it with rc, for the log (under mu). */
static void refusal(const struct outbox *cb, const struct outbox_item *it, int rc,
		    char *why, size_t len)
{
	if (rc == -ENOSPC)
		snprintf(why, len, "%zu bytes wait for %s already (--callback-host-queue-size)",
			 outbox_queue_host_bytes(cb->q, it->host_key), it->host_key);
	else if (rc == -EMSGSIZE)
		snprintf(why, len, "its %zu bytes are more than a receiver may have waiting"
			 " (--callback-host-queue-size, --callback-queue-size)", it->bytes);
	else
		snprintf(why, len, "the worker's callbacks under way fill --callback-queue-size");
}

/* Those dropped to make room for a newer one. */
static void lost_all(struct outbox *cb, struct outbox_item *dropped)
{
	char why[512];

	while (dropped) {
		struct outbox_item *next = dropped->next;

		snprintf(why, sizeof(why), "dropped for a newer one, the worker's callbacks"
			 " filling --callback-queue-size and its receiver %s holding the most",
			 dropped->host_key);
		lost(cb, dropped, why);
		outbox_item_free(dropped);
		dropped = next;
	}
}

void outbox_add(struct outbox *cb, int64_t id, const char *key, const char *url,
		   const char *body)
{
	struct outbox_item *it, *dropped = NULL;
	char why[512];
	int rc;

	if (!cb->running)
		return;
	it = outbox_item_new(id, key, url, body);
	pthread_mutex_lock(&cb->mu);
	rc = outbox_queue_add(cb->q, it, now_ms(), &dropped);
	if (rc < 0)
		refusal(cb, it, rc, why, sizeof(why));
	else
		pthread_cond_signal(&cb->cv);
	publish(cb);
	pthread_mutex_unlock(&cb->mu);
	if (rc < 0) {
		lost(cb, it, why);
		outbox_item_free(it);
	}
	lost_all(cb, dropped);
}

void outbox_stop(struct outbox *cb)
{
	struct outbox_item *it;

	if (!cb->running)
		return;
	stop_senders(cb);
	pthread_mutex_lock(&cb->mu);
	it = outbox_queue_drain(cb->q);
	pthread_mutex_unlock(&cb->mu);
	while (it) {
		struct outbox_item *next = it->next;

		log_warn("callback to %s dropped: the worker stops", it->url);
		outbox_item_free(it);
		it = next;
	}
	release(cb);
	cb->running = false;
}
