/*
 * Judge0's routes answered from the submission store: POST /submissions
 * (one, or a batch) taken into the store, GET by token, by tokens and a
 * page, DELETE by token, and GET /statistics counted from the store. A
 * submission is its owner's (the API token that made it): another
 * client's is answered as if it did not exist; an operator sees all.
 * The worker (worker/submissions.c) gives these routes its store, and
 * hears of each submission taken in; a waited-for POST is the wire
 * format's (api_judge0_parse_waited).
 */
#ifndef GOBOXD_API_JUDGE0_ROUTES_H
#define GOBOXD_API_JUDGE0_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"
#include "common/store.h"
#include "worker/http/http.h"

/* The "api" the store keeps Judge0's submissions under. */
#define JUDGE0_STORED_API "judge0"

/* What the routes need of the worker they serve in. */
struct judge0_routes {
	const struct config *cfg;
	const struct langtab *langs;
	struct stats *stats;       /* refusals are counted here; NULL: nowhere */
	/* The worker's store now, or NULL with *why (a store that did not
	 * open, or none at all). */
	struct store *(*open_store)(void *arg, const char **why);
	/* A submission went into the store (its id): it must be run. */
	void (*submitted)(void *arg, int64_t id);
	void *arg;
	/* the routes' own: the store as last asked for, and why not */
	struct store *store;
	const char *why;
	/* GET /statistics, as last counted: Judge0 keeps it 10 minutes */
	char *statistics;          /* NULL: none yet */
	uint64_t statistics_until_ms;
};

/* One of the routes (r's path is /submissions... or /statistics), asked
 * by who: the whole answer into out; its status returned. */
int api_judge0_routes_handle(struct judge0_routes *s, const struct http_request *r,
			     const struct auth_who *who, bool ka, const char *hdr,
			     struct buf *out);
/* What the routes keep (the statistics): freed. */
void api_judge0_routes_free(struct judge0_routes *s);

/*
 * GET /submissions/batch's token list, split in place as Judge0 splits it
 * (Ruby's tokens.strip.split(",")): blanks around the list go, an empty
 * token between commas stays (it finds nothing, a null), the empty ones
 * at the end go. The tokens (pointers into list) into tokens[], their
 * count into *n: 0, or -E2BIG when there are more than max.
 */
int api_judge0_routes_split_tokens(char *list, char **tokens, size_t max, size_t *n);

#endif
