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
 */
#ifndef GOBOXD_STORE_H
#define GOBOXD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A random UUID (version 4), the token a client gets: 36 characters. */
#define STORE_TOKEN_LEN 36

enum store_state { STORE_QUEUED = 0, STORE_RUNNING = 1, STORE_DONE = 2 };

struct store_sub {
	int64_t id;                        /* the store's own, increasing */
	char token[STORE_TOKEN_LEN + 1];
	char api[16];                      /* "judge0" */
	enum store_state state;
	char *request;                     /* NUL-terminated, malloc'd */
	char *result;                      /* NULL until done */
	char *callback_url;                /* NULL: none */
	uint64_t created_ms, started_ms, finished_ms; /* wall clock; 0: not yet */
	unsigned attempts;                 /* store_start calls so far */
};

struct store;

/*
 * Open (creating the file, its directory's last level and the schema
 * when missing) the store that url names: "sqlite:PATH" or a plain
 * path (SQLite). max_bytes caps the database (0: no cap). 0 and *out,
 * or a negative errno with the reason in err: -EINVAL for a URL no
 * backend takes, -EPROTO for a schema newer than this goboxd.
 */
int store_open(const char *url, uint64_t max_bytes, struct store **out, char *err,
	       size_t errlen);
void store_close(struct store *s);
/*
 * Serve the store alone, for the handle's life: a SQLite file belongs
 * to one goboxd, whose master runs what was left queued. 0, or -EBUSY
 * when another goboxd holds it, with the reason in err.
 */
int store_claim(struct store *s, char *err, size_t errlen);

/*
 * A new queued submission: its token in token (STORE_TOKEN_LEN + 1
 * bytes), its id in *id. callback_url may be NULL. 0, -ENOSPC when the
 * store is full (the cap), or -EIO; the reason in err.
 */
int store_add(struct store *s, const char *api, const char *request, const char *callback_url,
	      char *token, int64_t *id, char *err, size_t errlen);
/* A submission that ran while its client waited, added finished. */
int store_add_done(struct store *s, const char *api, const char *request, const char *result,
		   uint64_t started_ms, char *token, char *err, size_t errlen);
/* By id or by token: 0 and *out (free with store_sub_free), -ENOENT, -EIO. */
int store_get(struct store *s, int64_t id, struct store_sub *out);
int store_find(struct store *s, const char *token, struct store_sub *out);
void store_sub_free(struct store_sub *sub);
/*
 * A queued (or, after a crash, running) submission starts an attempt:
 * running, started now, one more attempt; *attempts is the count with
 * this one. -ENOENT when it is gone or already done.
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
 */
int store_pending(struct store *s, bool requeue_running, int64_t **ids, size_t *n);
/* Remove at most max submissions done before before_ms; *removed says
 * how many went. */
int store_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed);

/*
 * For the backends: what each provides (every operation has the meaning
 * above), and the handle each returns, which starts with struct store.
 * store_open picks one by the URL's scheme.
 */
struct store_ops {
	void (*close)(struct store *s);
	int (*claim)(struct store *s, char *err, size_t errlen);
	int (*add)(struct store *s, const char *api, const char *request, const char *result,
		   const char *callback_url, const char *token, uint64_t started_ms,
		   int64_t *id, char *err, size_t errlen);
	int (*get)(struct store *s, int64_t id, const char *token, struct store_sub *out);
	int (*start)(struct store *s, int64_t id, unsigned *attempts);
	int (*finish)(struct store *s, int64_t id, const char *result);
	int (*remove)(struct store *s, const char *token);
	int (*pending)(struct store *s, bool requeue_running, int64_t **ids, size_t *n);
	int (*expire)(struct store *s, uint64_t before_ms, size_t max, size_t *removed);
};

struct store {
	const struct store_ops *ops;
};

/* SQLite: path is a file name. */
int store_sqlite_open(const char *path, uint64_t max_bytes, struct store **out, char *err,
		      size_t errlen);

#endif
