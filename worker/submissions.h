/*
 * A worker's side of Judge0's submissions (worker/http/api_judge0.h has
 * the wire format, common/store.h the store): taking them into the store
 * and telling the master (which queues them), answering for them by
 * token, running one the master dispatches, and removing the finished
 * ones past --submission-ttl. The loop's own store connection lives here;
 * the job thread has its own.
 */
#ifndef GOBOXD_SUBMISSIONS_H
#define GOBOXD_SUBMISSIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"
#include "common/store.h"
#include "worker/outbox.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_info.h"
#include "worker/http/api_judge0_routes.h"
#include "worker/http/http.h"
#include "worker/judge/request.h"

struct submissions {
	const struct config *cfg;
	const struct langtab *langs;
	struct store *store;       /* NULL: none, and error says why */
	char error[256];
	bool expires;              /* this worker removes the expired ones, and watches */
	uint64_t next_expire_ms;
	uint64_t reopen_ms;        /* a store that failed to open is tried again then */
	bool refused;              /* the master has none: never opened here (error says why) */
	/* the watcher (worker 0): the store's overview into stats, this
	 * node's beat, and callbacks that other nodes did not deliver */
	struct stats *stats;
	struct outbox *callbacks;
	uint64_t next_watch_ms;
	/* a shared store: the lease on the submission this worker runs */
	int64_t lease_id;          /* 0: none */
	char lease_key[STORE_TOKEN_LEN + 1];
	uint64_t renew_ms;
	/* Judge0's routes, answered from this worker's store */
	struct judge0_routes routes;
	/* Results the store refused (its disk full, a write failing),
	 * offered again each UNSTORED_RETRY_MS until it takes them, oldest
	 * first; at most UNSTORED_MAX_BYTES of them held. */
	struct unstored *unstored;
	size_t unstored_bytes;
	uint64_t unstored_retry_ms;
	/* A submission taken into the store: the master must hear of it. */
	void (*submitted)(void *arg, int64_t id);
	/* One that did not run here, or whose result is lost with this
	 * worker: the master runs it again later (CHANNEL_DEFER). */
	void (*deferred)(void *arg, int64_t id);
	void *arg;
};

/* How often refused results are offered to the store again, and the
 * most bytes of them a worker holds: past it, a result waits as its
 * failure (Internal Error, saying why), a few hundred bytes. */
#define UNSTORED_RETRY_MS 1000
#define UNSTORED_MAX_BYTES (64u << 20)

/* Open the loop's store connection; a failure is logged and kept in
 * s->error (every request that needs the store then gets 503, and it is
 * tried again a second later). refused (non-NULL: the master has no
 * store, and why) keeps it closed for good. The watcher publishes into
 * stats and hands callbacks found undelivered to cb. */
void submissions_open(struct submissions *s, const struct config *cfg, const struct langtab *t,
		      const char *refused, bool watcher, struct stats *stats,
		      struct outbox *cb);
void submissions_close(struct submissions *s);

/*
 * A /submissions request other than a waited-for POST, and GET
 * /statistics: Judge0's routes (worker/http/api_judge0_routes.c) with
 * this worker's store. who made the request: what it stores is its own,
 * and it reads and removes only its own (an operator: any). The whole
 * answer goes into out; returns its status.
 */
int submissions_handle(struct submissions *s, const struct http_request *r,
		       const struct auth_who *who, bool ka,
		       const char *hdr, struct buf *out);

/* The wire format whose submissions the store keeps (wire_named finds
 * it): the store's "api" of each, and how a stored job is answered. */
#define SUBMISSIONS_API JUDGE0_STORED_API

/* Whether the store can keep a submission now: a waited-for one that
 * could not be kept (to answer for its token later) is not run. False
 * with the reason in why. */
bool submissions_store_ready(struct submissions *s, char *why, size_t whylen);

/*
 * The master dispatched stored submission id: 0 and its job, marked
 * running; or a negative errno when there is nothing to run (gone, done,
 * tried too often, or no longer valid: the store then holds its failure).
 */
int submissions_take(struct submissions *s, int64_t id, struct job_request **job);

/*
 * A shared store: lease the oldest waiting submission (common/store.h):
 * 0 with its id and job (the lease then renewed by submissions_tick
 * until submissions_lease_end); -ENOENT when none waits or the store does
 * not answer; -ECANCELED when the one taken may not run (tried too
 * often, or no longer valid: the store holds its failure).
 */
int submissions_lease(struct submissions *s, int64_t *id, struct job_request **job);
/* Its job ended: the lease is not renewed any more. */
void submissions_lease_end(struct submissions *s);

/* A dispatched submission this server cannot run: finished as Judge0's
 * Internal Error, with why as its message. */
void submissions_fail(struct submissions *s, int64_t id, const char *why);

/* A stored submission's result the store refused (malloc'd, taken
 * over): kept, and offered to the store again until it takes it, then
 * called back as a result stored at once would be. */
void submissions_keep(struct submissions *s, int64_t id, char *result);
/* The worker ends: each result still kept is offered once more, and the
 * submissions of those refused again are handed to the master (deferred)
 * to run again. */
void submissions_flush(struct submissions *s);

/* The most attempts a submission gets: a job that kills its worker every
 * time must not take every worker in turn forever. */
#define SUBMISSION_MAX_ATTEMPTS 3

/* The loop's tick: a lease renewed when due; kept results offered again;
 * the watcher's look at the store; the expired ones go, a batch at a
 * time. */
void submissions_tick(struct submissions *s);

#endif
