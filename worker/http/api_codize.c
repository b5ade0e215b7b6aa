#include "autoconf.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/util.h"
#include "worker/http/api.h"

static void add_b64(cJSON *o, const char *key, const struct buf *b)
{
	char *enc = base64_encode(b->data ? b->data : "", b->len);

	cJSON_AddStringToObject(o, key, enc ? enc : "");
	free(enc);
}

/*
 * Codize's step statuses: OK for any normal exit, TIMEOUT when the time
 * limit killed it (SIGKILL, 137), SIGNAL for any other death by signal (an
 * OOM kill is SIGKILL), OUTPUT_LIMIT_EXCEEDED when the output cap did. For
 * the last one Codize kills the sandbox from outside and keeps nothing:
 * exit code 137, signal null and no output at all, whatever was captured.
 */
static cJSON *step_json(const struct step_result *r)
{
	static const struct buf empty = { 0 };
	const struct run_outcome *o = &r->outcome;
	const struct buf *out = &r->out, *err = &r->err, *both = &r->interleaved;
	cJSON *s = cJSON_CreateObject();
	const char *status = "OK";
	int sig = o->term_signal, code = o->exit_code;
	char name[32];

	if (o->output_limited) {
		status = "OUTPUT_LIMIT_EXCEEDED";
		sig = 0;
		code = 128 + SIGKILL;
		out = err = both = &empty;
	} else if (o->timed_out) {
		status = "TIMEOUT";
		sig = SIGKILL;
	} else if (!o->exited) {
		status = "SIGNAL";
		if (!sig)
			sig = SIGKILL;
	} else {
		sig = 0;
	}
	if (sig)
		code = 128 + sig;
	add_b64(s, "stdout", out);
	add_b64(s, "stderr", err);
	add_b64(s, "output", both);
	cJSON_AddNumberToObject(s, "exit_code", code);
	cJSON_AddStringToObject(s, "status", status);
	if (sig) {
		cJSON_AddStringToObject(s, "signal", verdict_signal_name(sig, name, sizeof(name)));
	} else {
		cJSON_AddNullToObject(s, "signal");
	}
	cJSON_AddNumberToObject(s, "duration_ms", (double)r->wall_ms);
	return s;
}

cJSON *api_codize_json(const struct job_request *req, const struct job_result *res)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (req->lang->has_build)
		cJSON_AddItemToObject(o, "compile", step_json(&res->build));
	else
		cJSON_AddNullToObject(o, "compile");
	if (res->build_status == BS_OK && res->ntests > 0 && res->tests[0].ran)
		cJSON_AddItemToObject(o, "run", step_json(&res->tests[0].r));
	else
		cJSON_AddNullToObject(o, "run");
	return o;
}

/* "files.0.name" -> ["files", 0, "name"] */
static cJSON *path_array(const char *path)
{
	cJSON *a = cJSON_CreateArray();
	char buf[128];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*tok && *end == '\0' && tok[0] != '-')
			cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v));
		else
			cJSON_AddItemToArray(a, cJSON_CreateString(tok));
	}
	return a;
}

/* Codize's fixed message for each of its codes. */
static const char *codize_message(const char *code)
{
	if (!strcmp(code, CODIZE_VALIDATION_ERROR))
		return "request validation failed";
	if (!strcmp(code, CODIZE_BODY_TOO_LARGE))
		return "request body too large";
	return "invalid request body";
}

/* {code, message[, errors]} */
static cJSON *error_object(const struct req_error *errs, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(o, "code", errs[0].code);
	cJSON_AddStringToObject(o, "message", codize_message(errs[0].code));
	if (strcmp(errs[0].code, CODIZE_VALIDATION_ERROR) != 0)
		return o;
	arr = cJSON_AddArrayToObject(o, "errors");
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddItemToObject(e, "path", path_array(errs[i].path));
		cJSON_AddStringToObject(e, "message", errs[i].message);
		cJSON_AddItemToArray(arr, e);
	}
	return o;
}

/*
 * The error object twice: under "error" (as goboxd's own errors and the
 * project's specification write it) and at the top level (as Codize's
 * server writes it, which its clients decode). Each reader finds its own.
 */
char *api_codize_error(const struct req_error *errs, size_t n)
{
	cJSON *o = error_object(errs, n);
	char *s;

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "error", error_object(errs, n));
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
