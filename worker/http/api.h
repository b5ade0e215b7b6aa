/* Response bodies of the two wire formats, built from one job result. */
#ifndef GOBOXD_API_H
#define GOBOXD_API_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "worker/judge/request.h"
#include "worker/judge/job.h"

/*
 * The 200 bodies as JSON trees, NULL on ENOMEM. The tree holds its own
 * copies of the output: the caller may free the job's result before it
 * prints the tree (the job thread does, to hold a big answer fewer times).
 */
/* Native /run. */
cJSON *api_run_json(const struct job_request *req, const struct job_result *res);
/*
 * Native /run, streamed (application/x-ndjson): one line per event of
 * the job (worker/judge/job.h), {"type": "build" | "checker_build" |
 * "interactor_build" | "test" | "group", "index" (tests and groups), and
 * the step's object under the type's name}; then the summary line,
 * {"type": "result"} with the answer's own fields (status, language,
 * points). Together they hold exactly what api_run_json holds.
 */
cJSON *api_run_event(const struct job_request *req, const struct job_result *res,
		     enum job_event ev, size_t index);
cJSON *api_run_summary(const struct job_request *req, const struct job_result *res);
/* Native /run: 400/413 error body {"error":{"code","message","path"}}. */
char *api_run_error(const struct req_error *e);

/* Codize /v1/run: {"compile":..,"run":..}. */
cJSON *api_codize_json(const struct job_request *req, const struct job_result *res);
/*
 * Codize error body: {"code","message","errors":[{"path":[..],"message"}]}
 * (errors only for VALIDATION_ERROR), the same object also under "error".
 */
char *api_codize_error(const struct req_error *errs, size_t n);

#endif
