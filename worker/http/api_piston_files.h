/*
 * The files of a Piston request (POST /api/v2/execute) laid out as
 * Piston lays them out (api/src/job.js, and the renames of its packages'
 * compile scripts): names kept, paths inside the job's directory, the
 * extension a compiler needs, the last of two files of one name written
 * over the first. Also the view of the JSON body that both halves of
 * the Piston API share: JSON.parse's fields, JavaScript's falsy values,
 * a refusal in Piston's shape.
 */
#ifndef GOBOXD_API_PISTON_FILES_H
#define GOBOXD_API_PISTON_FILES_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "worker/http/json_body.h"
#include "worker/judge/request.h"

/*
 * JSON.parse's view of an object's field: a key given twice takes its
 * last value. NULL when absent or null (Piston reads every field with ??
 * or !).
 */
const cJSON *api_piston_files_field(const cJSON *o, const char *key);
/* JavaScript's !v: absent, null, false, 0 and "". */
bool api_piston_files_falsy(const cJSON *v);
/* A 400 in Piston's shape, one message; returns -EINVAL. */
int api_piston_files_refuse(struct req_error *e, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* v2.js's own test: some file has no encoding or "utf8". */
bool api_piston_files_have_code(const cJSON *files);

/*
 * files (an array whose items all have a string content) into r->files
 * for r->lang, within cfg's caps: the entry (the first file Job counts
 * as utf8) first. Sets r->artifact. 0, or -EINVAL with e filled (a 400).
 */
int api_piston_files_layout(const cJSON *files, const struct config *cfg,
			    const struct json_body_marker *m, struct job_request *r,
			    struct req_error *e);

#endif
