/*
 * Judge0 CE's wire format (api_judge0.c): a submission parsed into the one
 * job model and into the form the store keeps, and a waited-for POST.
 * Its statuses are api_judge0_status.h's, a finished job's result in
 * Judge0's fields api_judge0_result.h's, a stored submission shown as
 * GET /submissions/TOKEN shows it api_judge0_show.h's, the lists and
 * information endpoints api_judge0_info.h's and the routes that reach
 * the store api_judge0_routes.h's; docs/api.md says where goboxd differs
 * from Judge0 and why.
 *
 * Texts (source_code, stdin, expected_output, stdout, stderr,
 * compile_output) are kept base64-encoded in the store, as Judge0 keeps
 * them: what a program wrote need not be UTF-8.
 */
#ifndef GOBOXD_API_JUDGE0_H
#define GOBOXD_API_JUDGE0_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/api.h"
#include "worker/http/api_judge0_show.h"
#include "worker/http/http.h"
#include "worker/http/json_body.h"
#include "worker/judge/request.h"

/* Judge0's MAX_SUBMISSION_BATCH_SIZE default. */
#define JUDGE0_MAX_BATCH 20

/* Judge0's defaults and maxima (its Config), in its units: seconds, KB. */
#define J0_CPU_TIME 5.0
#define J0_MAX_CPU_TIME 15.0
#define J0_CPU_EXTRA 1.0
#define J0_MAX_CPU_EXTRA 5.0
#define J0_WALL_TIME 10.0
#define J0_MAX_WALL_TIME 20.0
#define J0_MEMORY 128000
#define J0_MAX_MEMORY 512000
#define J0_STACK 64000
#define J0_MAX_STACK 128000
#define J0_PROCESSES 60
#define J0_MAX_PROCESSES 120
#define J0_FILE_SIZE 1024
#define J0_MAX_FILE_SIZE 4096
#define J0_RUNS 1
#define J0_MAX_RUNS 20

/* What a job api_judge0_parse made needs beyond the job model (its
 * req->api; api_judge0_result reads it). */
struct judge0_job {
	char *stored;          /* the submission as the store keeps it */
	char *callback;        /* its callback_url, NULL: none */
	char *expected;        /* NULL: none given */
	size_t expected_len;
	bool redirect;         /* redirect_stderr_to_stdout */
	struct judge0_view view; /* how a waiting client asked to see it */
};

/*
 * One submission object (its texts base64-encoded when base64) into a
 * job (*job) and the form the store keeps (*stored, JSON text; its
 * callback_url in *callback, NULL when none). 0, or -EINVAL with
 * Judge0's 422 body in *errors: {"field": ["message", ...], ...}.
 * A stored form parses again the same way, with base64 true.
 */
int api_judge0_parse(const cJSON *sub, const struct json_body_marker *m, bool base64,
		     const struct langtab *t, const struct config *cfg, struct job_request **job,
		     char **stored, char **callback, cJSON **errors);

/*
 * POST /submissions?wait=true (the table's parse, api.h): ?fields and
 * ?base64_encoded (400), the body's size (413) and shape (400), then
 * api_judge0_parse (422, Judge0's errors object). The view the request
 * asked for stays with the job (api_judge0_job_view).
 */
int api_judge0_parse_waited(const struct http_request *r, const struct langtab *t,
			    const struct config *cfg, struct job_request **job,
			    struct api_refusal *no);

/* The stored form of a job api_judge0_parse made, and its callback_url
 * (NULL: none); how its waiting client asked to see it. */
const char *api_judge0_stored(const struct job_request *req);
const char *api_judge0_callback(const struct job_request *req);
struct judge0_view api_judge0_job_view(const struct job_request *req);

/* {"error": message}: Judge0's 400, 401, 404 and 503 bodies. */
char *api_judge0_error(const char *message);

#endif
