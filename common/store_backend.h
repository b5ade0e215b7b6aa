/*
 * What a store backend provides (store.h is the interface; store.c picks
 * the backend by the URL's scheme). Each operation has store.h's meaning;
 * a backend's handle starts with struct store.
 */
#ifndef GOBOXD_STORE_BACKEND_H
#define GOBOXD_STORE_BACKEND_H

#include "common/store.h"

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
	int (*counts)(struct store *s, uint64_t counts[3]);
};

struct store {
	const struct store_ops *ops;
};

/* SQLite: path is a file name. */
int store_sqlite_open(const char *path, uint64_t max_bytes, struct store **out, char *err,
		      size_t errlen);

#endif
