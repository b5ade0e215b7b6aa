/*
 * What goboxd's own request (POST /run) asks back from the job's
 * directory after its last test: "return_files", patterns of the paths
 * to return, and "return_files_limits", caps lower than the server's.
 * The walk that reads them is worker/judge/outfiles.c's, the answer's
 * "files" api_run_answer.c's.
 */
#ifndef GOBOXD_API_RUN_RETURN_H
#define GOBOXD_API_RUN_RETURN_H

#include <cjson/cJSON.h>

#include "worker/http/api_run_read.h"

/*
 * root's "return_files" (at most API_RUN_RETURN_MAX_PATTERNS patterns that
 * validate_path_pattern accepts) and "return_files_limits" into
 * c->r->files_out, its caps the server's (--max-return-files,
 * --max-return-file-size, --max-return-total-size) or the request's
 * lower ones. Neither given: files_out untouched (match NULL). 0, or
 * -EINVAL with c->e filled.
 */
int api_run_return_parse(struct native_ctx *c, const cJSON *root);

/* Patterns one request may give. */
#define API_RUN_RETURN_MAX_PATTERNS 64

#endif
