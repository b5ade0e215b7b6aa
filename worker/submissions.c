#include "autoconf.h"

#include "worker/submissions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/api_judge0_result.h"
#include "worker/http/api_judge0_show.h"
#include "worker/http/json_body.h"

/* How often the expired ones are looked for (at most: a shorter TTL
 * looks as often as it lasts), and how many go at once: a batch is a few
 * milliseconds of the loop. */
#define EXPIRE_EVERY_MS 10000
#define EXPIRE_BATCH 500

static uint64_t expire_every_ms(const struct config *cfg)
{
	uint64_t ttl_ms = (uint64_t)cfg->submission_ttl_s * 1000;

	return ttl_ms < EXPIRE_EVERY_MS ? ttl_ms : EXPIRE_EVERY_MS;
}

/* The watcher looks at the store this often. */
#define WATCH_EVERY_MS 2000
/* A store that did not open is tried again this often. */
#define REOPEN_EVERY_MS 1000

/* The loop's store, opened again when it failed before. */
static struct store *loop_store(struct submissions *s)
{
	uint64_t now = now_ms();

	/* the master did not claim it: it may be another goboxd's */
	if (s->store || s->refused || now < s->reopen_ms)
		return s->store;
	s->reopen_ms = now + REOPEN_EVERY_MS;
	if (store_open(s->cfg->store, s->cfg->store_max_bytes, &s->store, s->error,
		       sizeof(s->error)) < 0) {
		s->store = NULL;
		return NULL;
	}
	store_set_node(s->store, s->cfg->node_name);
	log_info("the submission store is open");
	return s->store;
}

/* The routes' view of the loop's store. */
static struct store *routes_store(void *arg, const char **why)
{
	struct submissions *s = arg;
	struct store *st = loop_store(s);

	*why = st ? "" : s->error;
	return st;
}

/* The routes took a submission in: the master hears of it. */
static void routes_submitted(void *arg, int64_t id)
{
	struct submissions *s = arg;

	if (s->submitted)
		s->submitted(s->arg, id);
}

void submissions_open(struct submissions *s, const struct config *cfg, const struct langtab *t,
		      const char *refused, bool watcher, struct stats *stats,
		      struct outbox *cb)
{
	s->routes = (struct judge0_routes){ .cfg = cfg, .langs = t, .stats = stats,
					    .open_store = routes_store,
					    .submitted = routes_submitted, .arg = s };
	s->cfg = cfg;
	if (refused) {
		s->refused = true;
		snprintf(s->error, sizeof(s->error), "%s", refused);
	}
	s->langs = t;
	s->expires = watcher;
	s->stats = stats;
	s->callbacks = cb;
	s->next_expire_ms = now_ms() + expire_every_ms(cfg);
	if (!loop_store(s) && !s->refused)
		log_error("the submission store: %s", s->error);
}

/* A result the store refused, in the order they came. */
struct unstored {
	int64_t id;
	char *result;
	struct unstored *next;
};

static void unstored_free_all(struct submissions *s)
{
	while (s->unstored) {
		struct unstored *u = s->unstored;

		s->unstored = u->next;
		free(u->result);
		free(u);
	}
	s->unstored_bytes = 0;
}

void submissions_close(struct submissions *s)
{
	unstored_free_all(s);
	store_close(s->store);
	s->store = NULL;
	api_judge0_routes_free(&s->routes);
}

int submissions_handle(struct submissions *s, const struct http_request *r,
		       const struct auth_who *who, bool ka, const char *hdr, struct buf *out)
{
	return api_judge0_routes_handle(&s->routes, r, who, ka, hdr, out);
}

bool submissions_store_ready(struct submissions *s, char *why, size_t whylen)
{
	if (loop_store(s))
		return true;
	snprintf(why, whylen, "the submission store is unavailable: %.200s", s->error);
	return false;
}

/* ---- running -------------------------------------------------------- */

static void fail_stored(struct submissions *s, int64_t id, const char *why);

void submissions_fail(struct submissions *s, int64_t id, const char *why)
{
	if (s->store)
		fail_stored(s, id, why);
}

/* A stored submission that will not run: its failure is its result. */
static void fail_stored(struct submissions *s, int64_t id, const char *why)
{
	char *result = api_judge0_result_failed(why);
	int rc = store_finish(s->store, id, result);

	if (rc < 0 && rc != -ENOENT) {
		log_error("submission %lld: its failure could not be stored (%s); it is offered"
			  " again until the store takes it", (long long)id, strerror(-rc));
		submissions_keep(s, id, result);
		return;
	}
	free(result);
}

void submissions_keep(struct submissions *s, int64_t id, char *result)
{
	struct unstored *u = xcalloc(1, sizeof(*u)), **tail = &s->unstored;
	size_t len = strlen(result);

	if (s->unstored_bytes + len > UNSTORED_MAX_BYTES) {
		/* its failure instead: what it said is lost, not that it ran */
		free(result);
		result = api_judge0_result_failed("the sandbox failed: its result could not be"
						  " stored, and too many results wait for the store");
		len = strlen(result);
	}
	u->id = id;
	u->result = result;
	s->unstored_bytes += len;
	while (*tail)
		tail = &(*tail)->next;
	*tail = u;
	if (!s->unstored_retry_ms)
		s->unstored_retry_ms = now_ms() + UNSTORED_RETRY_MS;
}

/* Its callback, now that its result is stored, as the job thread would
 * have sent it. */
static void call_back_stored(struct submissions *s, int64_t id)
{
	struct store_sub sub;
	char *body;

	if (!s->callbacks || store_get(s->store, id, &sub) < 0)
		return;
	body = sub.callback_url ? api_judge0_show_callback_body(&sub, s->langs) : NULL;
	if (body)
		outbox_add(s->callbacks, sub.id, sub.token, sub.callback_url, body);
	free(body);
	store_sub_free(&sub);
}

/* Each kept result offered to the store, oldest first, until one is
 * refused again (the rest would be too): the number still kept. */
static size_t store_kept(struct submissions *s)
{
	size_t left = 0;

	while (s->unstored && loop_store(s)) {
		struct unstored *u = s->unstored;
		int rc = store_finish(s->store, u->id, u->result);

		if (rc < 0 && rc != -ENOENT)
			break;
		if (rc == 0) {
			log_info("submission %lld: its result is stored now", (long long)u->id);
			call_back_stored(s, u->id);
		}
		s->unstored = u->next;
		s->unstored_bytes -= strlen(u->result);
		free(u->result);
		free(u);
	}
	for (struct unstored *u = s->unstored; u; u = u->next)
		left++;
	return left;
}

void submissions_flush(struct submissions *s)
{
	size_t left = store_kept(s);

	if (!left)
		return;
	log_error("%zu results could not be stored before this worker ends: their submissions"
		  " run again", left);
	for (struct unstored *u = s->unstored; u; u = u->next)
		if (s->deferred)
			s->deferred(s->arg, u->id);
	unstored_free_all(s);
}

/*
 * A submission taken (its attempts counted) into its job: 0, or
 * -ECANCELED when it may not run (tried too often, or no longer valid on
 * this server), its failure then written as its result.
 */
static int job_of(struct submissions *s, const struct store_sub *sub, struct job_request **job)
{
	struct json_body_marker m;
	char *stored = NULL, *callback = NULL;
	cJSON *root, *errors = NULL;
	int rc;

	if (sub->attempts > SUBMISSION_MAX_ATTEMPTS) {
		log_warn("submission %lld: its worker died in each of %d attempts; not run again",
			 (long long)sub->id, SUBMISSION_MAX_ATTEMPTS);
		fail_stored(s, sub->id, "the sandbox failed: its worker died in every attempt");
		return -ECANCELED;
	}
	root = json_body_parse(sub->request, strlen(sub->request), &m);
	rc = root ? api_judge0_parse(root, &m, true, s->langs, s->cfg, job, &stored, &callback,
				     &errors) : -EINVAL;
	cJSON_Delete(root);
	free(stored);
	free(callback);
	if (rc < 0) {
		char *why = errors ? cJSON_PrintUnformatted(errors) : NULL;
		char msg[512];

		/* the server changed under it (a language gone, lower caps) */
		snprintf(msg, sizeof(msg), "no longer valid on this server: %s",
			 why ? why : "unreadable");
		fail_stored(s, sub->id, msg);
		free(why);
		cJSON_Delete(errors);
		return -ECANCELED;
	}
	return 0;
}

int submissions_take(struct submissions *s, int64_t id, struct job_request **job)
{
	struct store_sub sub;
	unsigned attempts = 0;
	int rc;

	*job = NULL;
	if (!s->store)
		return -EIO;
	rc = store_start(s->store, id, &attempts);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_error("submission %lld could not start: %s", (long long)id,
				  strerror(-rc));
		return rc;
	}
	rc = store_get(s->store, id, &sub);
	if (rc < 0)
		return rc;
	sub.attempts = attempts;
	rc = job_of(s, &sub, job);
	store_sub_free(&sub);
	return rc;
}

int submissions_lease(struct submissions *s, int64_t *id, struct job_request **job)
{
	struct store_sub sub;
	int rc;

	*job = NULL;
	if (!loop_store(s))
		return -ENOENT;
	rc = store_lease(s->store, s->cfg->store_lease_ms, &sub, s->lease_key);
	if (rc < 0)
		return -ENOENT;
	*id = sub.id;
	s->lease_id = sub.id;
	s->renew_ms = now_ms() + s->cfg->store_lease_ms / 3;
	if (sub.attempts > 1)
		log_warn("submission %lld runs again (attempt %u): whoever ran it before let its"
			 " lease end", (long long)sub.id, sub.attempts);
	rc = job_of(s, &sub, job);
	store_sub_free(&sub);
	if (rc < 0)
		submissions_lease_end(s);
	return rc;
}

void submissions_lease_end(struct submissions *s)
{
	s->lease_id = 0;
	s->lease_key[0] = '\0';
}

/* The running submission stays this node's. */
static void renew(struct submissions *s, uint64_t now)
{
	int rc;

	if (!s->lease_id || now < s->renew_ms || !loop_store(s))
		return;
	s->renew_ms = now + s->cfg->store_lease_ms / 3;
	rc = store_renew(s->store, s->lease_id, s->lease_key, s->cfg->store_lease_ms);
	if (rc == -ENOENT) {
		log_warn("submission %lld: its lease was lost (another node may run it too; the"
			 " first result stands)", (long long)s->lease_id);
		submissions_lease_end(s);
	} else if (rc < 0) {
		/* tried again at the next renewal, a third of a lease later */
		log_warn("submission %lld: its lease could not be renewed: %s",
			 (long long)s->lease_id, strerror(-rc));
	}
}

/* Callbacks whose sender went quiet, sent from here. */
static void recover_callbacks(struct submissions *s)
{
	struct store_sub *due = NULL;
	size_t n = 0;

	if (!s->callbacks || store_callbacks_due(s->store, STORE_CALLBACK_TURN_MS, 16, &due, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char *body = due[i].callback_url ? api_judge0_show_callback_body(&due[i], s->langs)
						 : NULL;

		if (body) {
			log_info("submission %s: its callback is sent again from here", due[i].token);
			outbox_add(s->callbacks, due[i].id, due[i].token, due[i].callback_url, body);
		}
		free(body);
	}
	store_subs_free(due, n);
}

/* The watcher's look: where the submissions are, this node's beat. */
static void watch(struct submissions *s, uint64_t now)
{
	bool shared = store_url_shared(s->cfg->store);
	struct store_seen *seen;
	unsigned running = 0;
	int rc;

	if (!s->stats || now < s->next_watch_ms)
		return;
	/* a shared store's beat comes at least once a third of a lease */
	s->next_watch_ms = now + (shared && s->cfg->store_lease_ms / 3 < WATCH_EVERY_MS ?
					  s->cfg->store_lease_ms / 3 : WATCH_EVERY_MS);
	seen = xcalloc(1, sizeof(*seen));
	seen->wall_ms = wall_ms();
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (atomic_load(&s->stats->workers[i].state) == WS_BUSY)
			running++;
	rc = loop_store(s) ? 0 : -EIO;
	if (rc == 0 && shared)
		rc = store_beat(s->store, atomic_load(&s->stats->started_wall_ms),
				s->cfg->workers, running);
	if (rc == 0)
		rc = store_overview(s->store, &seen->ov);
	seen->up = rc == 0;
	if (!s->store)
		snprintf(seen->error, sizeof(seen->error), "%s", s->error);
	else if (rc < 0)
		snprintf(seen->error, sizeof(seen->error), "%s",
			 store_error(s->store)[0] ? store_error(s->store) : strerror(-rc));
	stats_store_publish(s->stats, seen);
	free(seen);
	if (rc == 0 && shared)
		recover_callbacks(s);
}

void submissions_tick(struct submissions *s)
{
	uint64_t now = now_ms();
	size_t removed = 0;
	int rc;

	renew(s, now);
	if (s->unstored && now >= s->unstored_retry_ms)
		s->unstored_retry_ms = store_kept(s) ? now + UNSTORED_RETRY_MS : 0;
	if (!s->expires)
		return;
	watch(s, now);
	if (!s->store || now < s->next_expire_ms)
		return;
	s->next_expire_ms = now + expire_every_ms(s->cfg);
	rc = store_expire(s->store, wall_ms() - (uint64_t)s->cfg->submission_ttl_s * 1000,
			  EXPIRE_BATCH, &removed);
	if (rc < 0)
		log_warn("removing expired submissions: %s", strerror(-rc));
	else if (removed)
		log_info("%zu expired submissions removed", removed);
	/* more than a batch: the next one soon */
	if (removed == EXPIRE_BATCH)
		s->next_expire_ms = now + 100;
}
