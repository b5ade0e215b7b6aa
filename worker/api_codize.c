#include "autoconf.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/util.h"
#include "worker/api.h"

static void add_b64(cJSON *o, const char *key, const struct buf *b)
{
	char *enc = base64_encode(b->data ? b->data : "", b->len);

	cJSON_AddStringToObject(o, key, enc ? enc : "");
	free(enc);
}

/*
 * Codize's step statuses: OK for any normal exit, TIMEOUT when the time
 * limit killed it, OUTPUT_LIMIT_EXCEEDED when the output cap did, SIGNAL
 * for any other death by signal (an OOM kill is SIGKILL).
 */
static cJSON *step_json(const struct step_result *r)
{
	const struct run_outcome *o = &r->outcome;
	cJSON *s = cJSON_CreateObject();
	const char *status = "OK";
	int sig = o->term_signal;
	char name[32];

	if (o->timed_out) {
		status = "TIMEOUT";
		sig = SIGKILL;
	} else if (o->output_limited) {
		status = "OUTPUT_LIMIT_EXCEEDED";
		sig = SIGKILL;
	} else if (!o->exited) {
		status = "SIGNAL";
		if (!sig)
			sig = SIGKILL;
	} else {
		sig = 0;
	}
	add_b64(s, "stdout", &r->out);
	add_b64(s, "stderr", &r->err);
	add_b64(s, "output", &r->interleaved);
	cJSON_AddNumberToObject(s, "exit_code", sig ? 128 + sig : o->exit_code);
	cJSON_AddStringToObject(s, "status", status);
	if (sig) {
		cJSON_AddStringToObject(s, "signal", api_signal_name(sig, name, sizeof(name)));
	} else {
		cJSON_AddNullToObject(s, "signal");
	}
	cJSON_AddNumberToObject(s, "duration_ms", (double)r->wall_ms);
	return s;
}

char *api_codize_response(const struct job_request *req, const struct job_result *res)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

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
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
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

char *api_codize_error(const struct req_error *errs, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr;
	char *s;

	cJSON_AddStringToObject(o, "code", errs[0].code[0] ? errs[0].code : "invalid_request");
	cJSON_AddStringToObject(o, "message", n > 1 ? "the request is invalid" : errs[0].message);
	arr = cJSON_AddArrayToObject(o, "errors");
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddItemToObject(e, "path", path_array(errs[i].path));
		cJSON_AddStringToObject(e, "message", errs[i].message);
		cJSON_AddItemToArray(arr, e);
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
