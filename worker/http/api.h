/*
 * The wire formats: goboxd's own API (POST /run: the request in
 * api_run.c, its tests in api_run_tests.c, the answer in
 * api_run_answer.c), Codize's (POST /v1/run, api_codize.c), Judge0's
 * (POST /submissions?wait=true, api_judge0.c, whose other routes and
 * stored submissions have headers of their own, api_judge0*.h) and
 * Piston's (POST /api/v2/execute, api_piston.c). Each parses its request
 * into the one job model (worker/judge/request.h) and renders the job's
 * result and its errors in its own words; the table of them (wire.h: a
 * struct api_format each) is how the rest of goboxd reaches them, never
 * by asking which one a job came by.
 */
#ifndef GOBOXD_API_H
#define GOBOXD_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/http.h"
#include "worker/judge/job.h"
#include "worker/judge/request.h"

/* A request a format refused before any job: its status, and its body
 * in the format's words (malloc'd; NULL when memory ran out). */
struct api_refusal {
	int status;            /* 400, 413, 422... */
	char *body;
	char code[48];         /* the refusal's code, for the log ("" when none) */
};

/* One wire format whose client waits for its answer. */
struct api_format {
	const char *name;      /* "native", "codize", "judge0", "piston" */
	uint8_t stats_id;      /* its number in /metrics (common/stats.h: job_record.api) */
	/* Its jobs end in the submission store, which answers for them
	 * (worker/submissions.c): their result is not answer's. */
	bool stored;
	/* Its answer may come line by line (Accept: application/x-ndjson). */
	bool streams;
	/* The request into a job: 0 and *job, or a negative errno with *no. */
	int (*parse)(const struct http_request *r, const struct langtab *t,
		     const struct config *cfg, struct job_request **job, struct api_refusal *no);
	/* A finished job's 200 body (NULL on ENOMEM; NULL for a stored format). */
	cJSON *(*answer)(const struct job_request *req, const struct job_result *res);
	/* An error in its words (e->code and e->message; e->path where it
	 * has one), malloc'd. */
	char *(*error)(const struct req_error *e);
};


/* Native POST /run. 0 and *out, or -EINVAL with *e filled. */
int api_run_parse(const char *body, size_t len, const struct langtab *t,
		  const struct config *cfg, struct job_request **out, struct req_error *e);

/* Codize's error codes (its handler's own, upper case). */
#define API_CODIZE_VALIDATION_ERROR "VALIDATION_ERROR"
#define API_CODIZE_INVALID_BODY "INVALID_REQUEST_BODY"
#define API_CODIZE_BODY_TOO_LARGE "REQUEST_BODY_TOO_LARGE"
/* goboxd's own, with --auth-tokens (Codize's server has no tokens) */
#define API_CODIZE_UNAUTHORIZED "UNAUTHORIZED"

/*
 * Codize POST /v1/run. Same contract; a VALIDATION_ERROR lists every
 * failing field, so each is appended to errs (up to maxerrs) with its
 * Codize path ("files.1.content") and message. INVALID_REQUEST_BODY (not
 * an object, a field of the wrong type) and REQUEST_BODY_TOO_LARGE (413)
 * come as one entry with an empty path.
 */
int api_codize_parse(const char *body, size_t len, const struct langtab *t,
		     const struct config *cfg, struct job_request **out, struct req_error *errs,
		     size_t maxerrs, size_t *nerrs);

/*
 * The 200 bodies as JSON trees, NULL on ENOMEM. The tree holds its own
 * copies of the output: the caller may free the job's result before it
 * prints the tree (the job thread does, to hold a big answer fewer times).
 */
/* Native /run. */
cJSON *api_run_answer_json(const struct job_request *req, const struct job_result *res);
/*
 * Native /run, streamed (application/x-ndjson): one line per event of
 * the job (worker/judge/job.h), {"type": "build" | "checker_build" |
 * "interactor_build" | "test" | "group", "index" (tests and groups), and
 * the step's object under the type's name}; then the summary line,
 * {"type": "result"} with the answer's own fields (status, language,
 * points, the files asked back). Together they hold exactly what
 * api_run_answer_json holds.
 */
cJSON *api_run_answer_event(const struct job_request *req, const struct job_result *res,
		     enum job_event ev, size_t index);
cJSON *api_run_answer_summary(const struct job_request *req, const struct job_result *res);
/* Native /run: 400/413 error body {"error":{"code","message","path"}}. */
char *api_run_answer_error(const struct req_error *e);

/* Codize /v1/run: {"compile":..,"run":..}. */
cJSON *api_codize_json(const struct job_request *req, const struct job_result *res);
/*
 * Codize error body: {"code","message","errors":[{"path":[..],"message"}]}
 * (errors only for VALIDATION_ERROR), the same object also under "error".
 */
char *api_codize_error(const struct req_error *errs, size_t n);

/*
 * Piston POST /api/v2/execute: {language, version, files, stdin, args,
 * compile_timeout, run_timeout, compile_memory_limit, run_memory_limit}.
 * 0 and *out, or -EINVAL (400) / -E2BIG (413) with *e filled; Piston
 * words its errors as {"message"}.
 */
int api_piston_parse(const char *body, size_t len, const struct langtab *t,
		     const struct config *cfg, struct job_request **out, struct req_error *e);
/* Its 200 body: {language, version, run: {stdout, stderr, output, code,
 * signal, ...}, compile: {...} when the language builds}. */
cJSON *api_piston_json(const struct job_request *req, const struct job_result *res);
/* Its error body: {"message": "..."}. */
char *api_piston_error(const struct req_error *e);
/* GET /api/v2/runtimes: [{language, version, aliases, runtime?}], one per
 * language with a Piston name. */
cJSON *api_piston_runtimes(const struct langtab *t);
/*
 * GET /api/v2/packages: [{language, language_version, installed: true}],
 * one per runtime served (each goboxd language is its own package), as
 * Piston lists what it has installed.
 */
cJSON *api_piston_packages(const struct langtab *t);
/*
 * POST (install) or DELETE (uninstall) /api/v2/packages {language,
 * version}, answered as a Piston whose package repository holds what is
 * installed and nothing else: the HTTP status, and its body in *out.
 */
int api_piston_package_change(bool install, const char *body, size_t len,
			      const struct langtab *t, cJSON **out);

#endif
