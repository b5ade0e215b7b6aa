/*
 * A finished Judge0 job's result in Judge0's fields, as the store keeps
 * it: the status its runs give (Judge0's comparison of the output when
 * the submission has an expected one), the texts base64-encoded, the
 * times and memory averaged over its runs, the files it left zipped.
 */
#ifndef GOBOXD_API_JUDGE0_RESULT_H
#define GOBOXD_API_JUDGE0_RESULT_H

#include "worker/judge/job.h"
#include "worker/judge/request.h"

/*
 * A finished job's result as the store keeps it (JSON text): status,
 * stdout, stderr, compile_output (base64), message, exit_code,
 * exit_signal, time, wall_time, memory. req is a job api_judge0_parse
 * made; rc is job_run's.
 */
char *api_judge0_result(const struct job_request *req, const struct job_result *res, int rc);
/* The result of a submission that could not run (Internal Error). */
char *api_judge0_result_failed(const char *message);

#endif
