/*
 * Judge0 CE's wire format (api_judge0.c): a submission parsed into the one
 * job model and into the form the store keeps, a finished job's result in
 * Judge0's fields, a stored submission shown as GET /submissions/TOKEN
 * shows it, and the lists (languages, statuses) and information
 * endpoints. worker/submissions.c serves the endpoints that reach the
 * store; docs/api.md says where goboxd differs from Judge0 and why.
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
#include "common/store.h"
#include "worker/http/api.h"
#include "worker/http/http.h"
#include "worker/http/json_body.h"
#include "worker/judge/job.h"
#include "worker/judge/request.h"

/* Judge0's MAX_SUBMISSION_BATCH_SIZE default. */
#define JUDGE0_MAX_BATCH 20

/* Statuses, as Judge0 numbers them. */
enum judge0_status {
	J0_IN_QUEUE = 1,
	J0_PROCESSING,
	J0_ACCEPTED,
	J0_WRONG_ANSWER,
	J0_TIME_LIMIT,
	J0_COMPILATION_ERROR,
	J0_SIGSEGV,
	J0_SIGXFSZ,
	J0_SIGFPE,
	J0_SIGABRT,
	J0_NZEC,
	J0_RUNTIME_OTHER,
	J0_INTERNAL_ERROR,
	J0_EXEC_FORMAT_ERROR,
};

/* Judge0's description of a status ("Wrong Answer"), NULL past 14. */
const char *api_judge0_status_name(int id);

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

/* How a submission is shown: ?base64_encoded= and ?fields=. */
struct judge0_view {
	bool base64;
	unsigned long long fields; /* one bit per field of judge0_fields (api_judge0.c) */
};

/*
 * Read ?base64_encoded (default false) and ?fields (default: token,
 * time, memory, stdout, stderr, compile_output, message, status; "*":
 * all). 0, or -EINVAL with Judge0's message in err ("invalid fields:
 * [foo]").
 */
int api_judge0_view(const struct http_request *r, struct judge0_view *v, char *err,
		    size_t errlen);

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

/*
 * A finished job's result as the store keeps it (JSON text): status,
 * stdout, stderr, compile_output (base64), message, exit_code,
 * exit_signal, time, wall_time, memory. rc is job_run's.
 */
char *api_judge0_result(const struct job_request *req, const struct job_result *res, int rc);
/* The result of a submission that could not run (Internal Error). */
char *api_judge0_result_failed(const char *message);

/*
 * A stored submission as Judge0 shows it, with the fields v asks for;
 * NULL when a text is not UTF-8 and v does not ask for base64 (Judge0
 * then answers 400: api_judge0_not_utf8).
 */
cJSON *api_judge0_show(const struct store_sub *sub, const struct judge0_view *v,
		       const struct langtab *t);
/* A finished submission's callback body: Judge0 sends its default
 * fields, base64-encoded. NULL when it cannot be shown (malloc'd). */
char *api_judge0_callback_body(const struct store_sub *sub, const struct langtab *t);
/* Judge0's words for a text that is not UTF-8. */
#define API_JUDGE0_NOT_UTF8 \
	"some attributes for this submission cannot be converted to UTF-8, use " \
	"base64_encoded=true query parameter"
/* The same of a list (a batch, a page). */
#define API_JUDGE0_NOT_UTF8_SOME \
	"some attributes for one or more submissions cannot be converted to UTF-8, use " \
	"base64_encoded=true query parameter"


/* {"error": message}: Judge0's 400, 401, 404 and 503 bodies. */
char *api_judge0_error(const char *message);


#endif
