/* The endpoints answered at once by any worker: health, readiness, info,
 * metrics. Each builds a complete response into out. */
#ifndef GOBOXD_ROUTES_H
#define GOBOXD_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "worker/http/http.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/stats.h"
#include "worker/sandbox/host.h"

struct route_ctx {
	/* The worker's state, read-only: what its master handed it. */
	const struct config *cfg;
	const struct langtab *langs;
	uint32_t generation;       /* the language table's */
	struct stats *stats;
	struct probe_table *probes;
	const char *jail_name;     /* the worker's sandbox driver, "" if none */
	const char *jail_version;
	const char *jail_path;
	const char *sandbox_error; /* non-NULL when the sandbox failed to open */
};

/*
 * Kinds of request the event loop must treat differently: answered at
 * once, a job whose client waits (by its API), or Judge0's submissions
 * kept in the store (worker/submissions.c).
 */
enum route_kind {
	ROUTE_SIMPLE,
	ROUTE_JOB,           /* its API's format (api_format_of_path) parses it */
	ROUTE_SUBMISSIONS,
	ROUTE_SESSION,       /* a live session: GET /sessions, /api/v2/connect (WebSocket) */   /* the rest of /submissions, and GET /statistics */
};

/* Whose words a path speaks (for answers every API gives: 401). */
enum route_api { API_NATIVE, API_CODIZE, API_JUDGE0, API_PISTON };
enum route_api routes_api(const char *path);
/* The health endpoints: open without a token unless --auth-probes. */
bool routes_is_probe(const char *path);

/* Which kind this request is (by method and path). */
enum route_kind routes_classify(const struct http_request *r);
/*
 * Answer a simple request (health, info, 404, 405...). Returns the HTTP
 * status written into out.
 */
int routes_simple(const struct route_ctx *rc, const struct http_request *r, bool keep_alive,
		  const char *extra_headers, struct buf *out);

#endif
