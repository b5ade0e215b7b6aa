/*
 * The submission store: the submissions a client sent without waiting
 * (Judge0's POST /submissions), and the finished ones it asks about
 * later, kept so that a restart or a crash loses none. One interface;
 * the backend behind it is chosen by the store's URL (store.c): SQLite
 * (store_sqlite.c), a file under the state directory, is the default.
 *
 * A submission's course: queued (store_add) -> running (store_start,
 * once per attempt) -> done (store_finish). A queued or running one is
 * run again after a restart (store_pending lists them, oldest first); a
 * done one is kept until store_expire removes it. The store keeps what
 * the API gave and gives back as opaque text (request and result): the
 * API that wrote them reads them.
 *
 * A handle is one connection: one per process or thread, never shared.
 *
 * A shared store (PostgreSQL, store_pg.c) serves a fleet: several
 * goboxd write and read the same submissions, and each takes queued
 * ones with a lease (store_lease) that it renews while the job runs
 * (store_renew); a lease that ends unrenewed hands the submission to
 * whoever asks next. store_finish writes a result once, whoever finishes
 * first. A finished submission with a callback is due for it until
 * store_callback_done; store_callbacks_due hands the ones whose sender
 * went quiet to another. Each node says it lives (store_beat), and
 * store_overview tells anyone where every submission is.
 */
#ifndef GOBOXD_STORE_H
#define GOBOXD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A random UUID (version 4), the token a client gets: 36 characters. */
#define STORE_TOKEN_LEN 36
/* Who made a submission: a name derived from the API token it came
 * with (auth_owner, 64 hex digits), "" when none was needed. */
#define STORE_OWNER_LEN 64

enum store_state { STORE_QUEUED = 0, STORE_RUNNING = 1, STORE_DONE = 2 };

struct store_sub {
	int64_t id;                        /* the store's own, increasing */
	char token[STORE_TOKEN_LEN + 1];
	char api[16];                      /* "judge0" */
	char owner[STORE_OWNER_LEN + 1];   /* "": made without a token */
	enum store_state state;
	char *request;                     /* NUL-terminated, malloc'd */
	char *result;                      /* NULL until done */
	char *callback_url;                /* NULL: none */
	uint64_t created_ms, started_ms, finished_ms; /* wall clock; 0: not yet */
	unsigned attempts;                 /* store_start calls so far */
};

/* A node of the fleet as the store last heard of it. */
struct store_node {
	char name[64];
	uint64_t heartbeat_age_ms;         /* since its last store_beat */
	uint64_t started_ms;               /* wall clock */
	unsigned workers, running;
};

#define STORE_MAX_NODES 32

/* Where the submissions are, for /metrics and /info. */
struct store_overview {
	uint64_t queued;                   /* waiting: queued, or a lease that ended */
	uint64_t running;                  /* under a live lease (or, alone, started) */
	uint64_t oldest_queued_age_ms;     /* 0: none waits */
	size_t nodes;                      /* shared stores: the first STORE_MAX_NODES by name */
	struct store_node node[STORE_MAX_NODES];
};

struct store;

/*
 * Open (creating the file, its directory's last level and the schema
 * when missing) the store that url names: "sqlite:PATH" or a plain
 * path (SQLite), or "postgresql://..." (PostgreSQL; "postgres://" too).
 * max_bytes caps a SQLite database (0: no cap). 0 and *out,
 * or a negative errno with the reason in err: -EINVAL for a URL no
 * backend takes, -EPROTO for a schema newer than this goboxd.
 */
int store_open(const char *url, uint64_t max_bytes, struct store **out, char *err,
	       size_t errlen);
void store_close(struct store *s);
/*
 * The directory of url's SQLite store, when an older goboxd made it 0700
 * and so hid a jail dir beneath it from the sandbox uids: made searchable
 * (0711) if goboxd's own. Nothing is made: 0 when it is missing, or url
 * names no SQLite store; else a negative errno.
 */
int store_unhide_dir(const char *url);
/* Whether url names a shared store (PostgreSQL: several goboxd share it,
 * and take their work with store_lease), without opening it. */
bool store_url_shared(const char *url);
/*
 * Serve the store alone: a SQLite file belongs to one goboxd, whose
 * master runs what was left queued. 0 and *fd, a descriptor that holds
 * the claim for as long as it stays open (the handle may close; a child
 * that must not hold the claim closes it), or -EBUSY when another goboxd
 * holds it, with the reason in err. A shared store (-ENOTSUP) is never
 * one goboxd's: claim, start and pending are for stores that are not
 * shared; a fleet's nodes lease their work instead.
 */
int store_claim(struct store *s, int *fd, char *err, size_t errlen);

/*
 * A new queued submission of owner's (NULL or "": nobody's): its token
 * in token (STORE_TOKEN_LEN + 1 bytes), its id in *id. callback_url may
 * be NULL. 0, -ENOSPC when the store is full (the cap, or its disk), or
 * -EIO; the reason in err.
 */
int store_add(struct store *s, const char *api, const char *owner, const char *request,
	      const char *callback_url, char *token, int64_t *id, char *err, size_t errlen);
/* A submission that ran while its client waited, added finished. */
int store_add_done(struct store *s, const char *api, const char *owner, const char *request,
		   const char *result, uint64_t started_ms, char *token, char *err,
		   size_t errlen);
/* By id or by token: 0 and *out (free with store_sub_free), -ENOENT, -EIO.
 * A token of any other shape than the store's own is -ENOENT at once:
 * no backend sees bytes a client made up. */
int store_get(struct store *s, int64_t id, struct store_sub *out);
int store_find(struct store *s, const char *token, struct store_sub *out);
/* Whether token has the shape store_add gives (a lowercase UUID). */
bool store_token_valid(const char *token);
void store_sub_free(struct store_sub *sub);
/*
 * A queued (or, after a crash, running) submission starts an attempt:
 * running, started now, one more attempt; *attempts is the count with
 * this one. -ENOENT when it is gone or already done; -ENOTSUP (shared).
 */
int store_start(struct store *s, int64_t id, unsigned *attempts);
/* Done, with the API's result. -ENOENT when it is gone or already done. */
int store_finish(struct store *s, int64_t id, const char *result);
/* Remove a done submission: 0, -ENOENT, or -EBUSY while it is queued
 * or running. */
int store_delete(struct store *s, const char *token);
/*
 * The ids of every submission not done, oldest first (malloc'd in
 * *ids; the caller frees). Running ones are queued again first: whoever
 * ran them is gone (call it only at start, before any worker runs).
 * -ENOTSUP (shared).
 */
int store_pending(struct store *s, bool requeue_running, int64_t **ids, size_t *n);
/* Remove at most max submissions done before before_ms; *removed says
 * how many went. */
int store_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed);

/*
 * A page of one API's submissions, newest first (owner's only, unless
 * owner is NULL): at most limit of them after the first offset (a
 * malloc'd array in *out, *n of them; free each with store_sub_free,
 * then the array), and how many there are in all in *total. 0, or -EIO.
 */
int store_list(struct store *s, const char *api, const char *owner, uint64_t offset,
	       size_t limit, struct store_sub **out, size_t *n, uint64_t *total);
/* The array store_list and store_callbacks_due give, with its submissions. */
void store_subs_free(struct store_sub *subs, size_t n);

/* One group of a count: its state and the number it was grouped by. */
struct store_count {
	enum store_state state;
	bool has_value;                    /* false: the text had no such number */
	int64_t value;
	uint64_t count;
};

/* What store_count groups by: a top-level number of the request's or the
 * result's JSON text (named by key), or the day it was made (days since
 * the epoch, UTC). */
enum store_group { STORE_BY_REQUEST, STORE_BY_RESULT, STORE_BY_DAY };

/*
 * How many of api's submissions made since since_ms there are, by state
 * and by what `by` names (a malloc'd array in *out, *n groups, in no
 * order). 0, or -EIO.
 */
int store_count(struct store *s, const char *api, enum store_group by, const char *key,
		uint64_t since_ms, struct store_count **out, size_t *n);
/* The bytes the store takes (the file, or the database), or -EIO. */
int store_size(struct store *s, uint64_t *bytes);

/* Who this handle writes as (a shared store's leases, results, beats). */
void store_set_node(struct store *s, const char *node);
/*
 * Shared stores: take the oldest queued submission, or a running one
 * whose lease ended, for lease_ms: 0 and *out (running, its attempts
 * counted) and its lease's key in key (STORE_TOKEN_LEN + 1 bytes);
 * -ENOENT when none waits; -EIO; -ENOTSUP from a store that is not shared.
 */
int store_lease(struct store *s, uint32_t lease_ms, struct store_sub *out, char *key);
/* The lease goes on lease_ms from now: 0, or -ENOENT when it was lost
 * (ended, and another took it, or the submission finished). */
int store_renew(struct store *s, int64_t id, const char *key, uint32_t lease_ms);
/* How long the node that finished a submission, or took its callback
 * over, has to deliver the callback before another node may. */
#define STORE_CALLBACK_TURN_MS 60000
/* Its callback was delivered (nothing more is due). */
int store_callback_done(struct store *s, int64_t id);
/*
 * Callbacks whose sender went quiet: at most max finished submissions
 * whose callback is due and was not delivered within its time, each now
 * this handle's for lease_ms (malloc'd array in *out, *n of them; free
 * each with store_sub_free, then the array). Shared stores only.
 */
int store_callbacks_due(struct store *s, uint32_t lease_ms, size_t max, struct store_sub **out,
			size_t *n);
/* This node lives: workers and running jobs as it counts them. */
int store_beat(struct store *s, uint64_t started_ms, unsigned workers, unsigned running);
int store_overview(struct store *s, struct store_overview *out);
/* The backend's words for its last failure, or "" when it keeps none. */
const char *store_error(const struct store *s);

/*
 * For the backends: what each provides (every operation has the meaning
 * above), and the handle each returns, which starts with struct store.
 * store_open picks one by the URL's scheme.
 */
struct store_ops {
	void (*close)(struct store *s);
	/* claim, start and pending: stores that are not shared (NULL otherwise) */
	int (*claim)(struct store *s, int *fd, char *err, size_t errlen);
	/* sub's token, api, owner, request, callback_url; a finished one's
	 * result and started_ms (result NULL: queued) */
	int (*add)(struct store *s, const struct store_sub *sub, int64_t *id, char *err,
		   size_t errlen);
	int (*get)(struct store *s, int64_t id, const char *token, struct store_sub *out);
	int (*start)(struct store *s, int64_t id, unsigned *attempts);
	int (*finish)(struct store *s, int64_t id, const char *result);
	int (*remove)(struct store *s, const char *token);
	int (*pending)(struct store *s, bool requeue_running, int64_t **ids, size_t *n);
	int (*expire)(struct store *s, uint64_t before_ms, size_t max, size_t *removed);
	int (*overview)(struct store *s, struct store_overview *out);
	int (*list)(struct store *s, const char *api, const char *owner, uint64_t offset,
		    size_t limit, struct store_sub **out, size_t *n, uint64_t *total);
	int (*count)(struct store *s, const char *api, enum store_group by, const char *key,
		     uint64_t since_ms, struct store_count **out, size_t *n);
	int (*size)(struct store *s, uint64_t *bytes);
	/* shared stores only (NULL elsewhere) */
	int (*lease)(struct store *s, uint32_t lease_ms, const char *key, struct store_sub *out);
	int (*renew)(struct store *s, int64_t id, const char *key, uint32_t lease_ms);
	int (*callback_done)(struct store *s, int64_t id);
	int (*callbacks_due)(struct store *s, uint32_t lease_ms, size_t max,
			     struct store_sub **out, size_t *n);
	int (*beat)(struct store *s, uint64_t started_ms, unsigned workers, unsigned running);
};

struct store {
	const struct store_ops *ops;
	char node[64];         /* store_set_node; "" until then */
	char error[256];       /* the backend's words for its last failure ("": none kept) */
};

/* SQLite: path is a file name. */
int store_sqlite_open(const char *path, uint64_t max_bytes, struct store **out, char *err,
		      size_t errlen);
/* store_unhide_dir for the directory of the file path. */
int store_sqlite_unhide_dir(const char *path);
/* PostgreSQL: url is libpq's (postgresql://...); the schema is made or
 * migrated here. */
int store_pg_open(const char *url, struct store **out, char *err, size_t errlen);

#endif
