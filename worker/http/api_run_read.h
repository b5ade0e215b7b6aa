/*
 * Reading goboxd's own request (POST /run, api_run.c, api_run_tests.c and
 * api_run_return.c): what a parse carries along (struct native_ctx), the
 * refusal in /run's words, an object opened with its keys checked, and
 * its optional fields of each type, a client's file name and a count
 * among them.
 */
#ifndef GOBOXD_API_RUN_READ_H
#define GOBOXD_API_RUN_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "worker/http/json_body.h"
#include "worker/judge/request.h"

/* A parse under way: the caps, the body's strings, the job it fills and
 * where its refusal goes. */
struct native_ctx {
	const struct config *cfg;
	struct json_body_marker m;
	struct job_request *r;
	struct req_error *e;
};

/* Where an unknown or repeated key of an object is reported. */
enum key_report {
	KEY_AT_KEY,     /* at "tests[0].color": "unknown field tests[0].color" */
	KEY_AT_OBJECT,  /* at "files[0]": "unknown field files[0].color" */
	KEY_WITHIN,     /* at "checker.color": "checker: unknown field color" */
};

/* A 400 with code, path ("" when none) and message into *e. */
void api_run_read_refuse(struct req_error *e, const char *code, const char *path,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The opening of every object of a request: o is an object (else the
 * code not_object at path, "" being the body itself), and each of its keys
 * is one of keys, given once (else unknown_field, or invalid_json for a
 * repeated one: cJSON keeps both, and which one wins must not be a guess).
 */
int api_run_read_object(struct native_ctx *c, const cJSON *o, const char *path,
			const char *not_object, const char *const *keys, enum key_report at);

/* An optional string field: 0 absent, 1 present (*s, *len set), -EINVAL bad. */
int api_run_read_string(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
			char **s, size_t *len);
/* An optional boolean field of o: 0 absent, 1 read into *out, -EINVAL bad. */
int api_run_read_bool(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
		      bool *out);
/*
 * A count or size the request gives, v: an integer from 1 up, clamped to
 * max (a number at or above it is max: the server's cap). 0, or -EINVAL
 * for anything else (0, a fraction, a string), *out untouched.
 */
int api_run_read_count(const cJSON *v, uint64_t max, uint64_t *out);
/* A client file name field of o, named path in errors: 0 absent, 1 present
 * and valid, -EINVAL bad. */
int api_run_read_filename(struct native_ctx *c, const cJSON *o, const char *key,
			  const char *path, char **out);

#endif
