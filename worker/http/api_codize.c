#include "autoconf.h"

#include <errno.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/lang/validate.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/http/api.h"
#include "worker/http/json_body.h"

/* ---- POST /v1/run: the request ---- */

/*
 * Codize decodes the body into typed fields first: a body that is not one
 * JSON object, or a field of the wrong JSON type, is a 400
 * INVALID_REQUEST_BODY without details. Then it validates, and every
 * failing field becomes one entry of a 400 VALIDATION_ERROR, in Codize's
 * order and words. As with Go's encoding/json, unknown keys are ignored,
 * null means absent, and a key given twice takes its last value.
 */

struct codize_ctx {
	const struct config *cfg;
	const struct langtab *t;
	struct json_body_marker m;
	struct req_error *errs;
	size_t maxerrs;
	size_t n;
};

static void codize_field_error(struct codize_ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void codize_field_error(struct codize_ctx *c, const char *path, const char *fmt, ...)
{
	struct req_error *e;
	va_list ap;

	if (c->n >= c->maxerrs) {
		/* the list is full; still remember that the request failed */
		c->n = c->maxerrs + 1;
		return;
	}
	e = &c->errs[c->n++];
	e->http_status = 400;
	snprintf(e->code, sizeof(e->code), "%s", API_CODIZE_VALIDATION_ERROR);
	snprintf(e->path, sizeof(e->path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* The whole request refused with one code and no field list. */
static void codize_refuse_body(struct codize_ctx *c, int status, const char *code,
			       const char *message)
{
	c->n = 0;
	if (!c->maxerrs)
		return;
	memset(&c->errs[0], 0, sizeof(c->errs[0]));
	c->errs[0].http_status = status;
	snprintf(c->errs[0].code, sizeof(c->errs[0].code), "%s", code);
	snprintf(c->errs[0].message, sizeof(c->errs[0].message), "%s", message);
	c->n = 1;
}

/* The last value of key in o; NULL when absent or JSON null. */
static const cJSON *codize_field(const cJSON *o, const char *key)
{
	const cJSON *v, *last = NULL;

	cJSON_ArrayForEach(v, o) {
		if (v->string && strcmp(v->string, key) == 0)
			last = v;
	}
	return last && !cJSON_IsNull(last) ? last : NULL;
}

static bool codize_field_is(const cJSON *o, const char *key, cJSON_bool (*is)(const cJSON *))
{
	const cJSON *v = codize_field(o, key);

	return !v || is(v);
}

/* {content, base64_encoded}: the types Codize's decoder accepts. */
static bool codize_payload_ok(const cJSON *o)
{
	return cJSON_IsObject(o) && codize_field_is(o, "content", cJSON_IsString) &&
	       codize_field_is(o, "base64_encoded", cJSON_IsBool);
}

static bool codize_types_ok(const cJSON *root)
{
	const cJSON *files, *f, *in;

	if (!cJSON_IsObject(root) || !codize_field_is(root, "runtime", cJSON_IsString) ||
	    !codize_field_is(root, "files", cJSON_IsArray))
		return false;
	if ((in = codize_field(root, "stdin")) && !codize_payload_ok(in))
		return false;
	files = codize_field(root, "files");
	cJSON_ArrayForEach(f, files) {
		/* a null entry is a file with neither name nor content */
		if (cJSON_IsNull(f))
			continue;
		if (!codize_payload_ok(f) || !codize_field_is(f, "name", cJSON_IsString))
			return false;
	}
	return true;
}

static const struct lang *codize_runtime(struct codize_ctx *c, const cJSON *root)
{
	const cJSON *v = codize_field(root, "runtime");
	const struct lang *lang;
	char list[400];

	if (!v) {
		codize_field_error(c, "runtime", "required");
		return NULL;
	}
	if (!v->valuestring[0]) {
		codize_field_error(c, "runtime", "must not be empty");
		return NULL;
	}
	lang = langtab_find_runtime(c->t, v->valuestring);
	if (!lang) {
		langtab_runtime_list(c->t, list, sizeof(list));
		codize_field_error(c, "runtime", "must be one of %s", list);
	}
	return lang;
}

/* The files array when its length is acceptable, else NULL after reporting. */
static const cJSON *codize_files_array(struct codize_ctx *c, const cJSON *root)
{
	const cJSON *a = codize_field(root, "files");
	int n;

	if (!a) {
		codize_field_error(c, "files", "required");
		return NULL;
	}
	n = cJSON_GetArraySize(a);
	if (n == 0) {
		codize_field_error(c, "files", "must not be empty");
		return NULL;
	}
	if (json_body_over_cap((size_t)n, c->cfg->max_files)) {
		codize_field_error(c, "files", "too many files (max: %u)", c->cfg->max_files);
		return NULL;
	}
	return a;
}

static void codize_stdin(struct codize_ctx *c, const cJSON *root, struct req_test *t)
{
	const cJSON *o = codize_field(root, "stdin");
	const cJSON *content, *b64;
	size_t cap = c->cfg->max_stdin_bytes, rlen, dlen;
	char *raw, *data;

	t->stdin_data = xstrdup("");
	t->stdin_len = 0;
	if (!o)
		return;
	if (!(content = codize_field(o, "content"))) {
		codize_field_error(c, "stdin.content", "required");
		return;
	}
	b64 = codize_field(o, "base64_encoded");
	raw = json_body_bytes(content, &c->m, &rlen);
	/* over-long base64 is refused before it is decoded, as Codize does */
	if (cap && rlen > (cJSON_IsTrue(b64) ? base64_encoded_len(cap) : cap)) {
		codize_field_error(c, "stdin.content", "stdin too large (max: %zu bytes)", cap);
		free(raw);
		return;
	}
	if (!cJSON_IsTrue(b64)) {
		free(t->stdin_data);
		t->stdin_data = raw;
		t->stdin_len = rlen;
		return;
	}
	if (base64_decode(raw, rlen, &data, &dlen) < 0) {
		codize_field_error(c, "stdin.content", "invalid base64");
	} else if (json_body_over_cap(dlen, cap)) {
		codize_field_error(c, "stdin.content", "stdin too large (max: %zu bytes)", cap);
		free(data);
	} else {
		free(t->stdin_data);
		t->stdin_data = data;
		t->stdin_len = dlen;
	}
	free(raw);
}

/* The name of file i, or NULL after reporting why it is refused. */
static char *codize_file_name(struct codize_ctx *c, const cJSON *o, size_t i,
			      const struct lang *lang, const struct job_request *r)
{
	const cJSON *v = codize_field(o, "name");
	char path[64];
	const char *why;
	size_t len;
	char *name;

	snprintf(path, sizeof(path), "files.%zu.name", i);
	if (!v) {
		codize_field_error(c, path, "required");
		return NULL;
	}
	name = json_body_bytes(v, &c->m, &len);
	if ((why = validate_codize_filename(name, len))) {
		codize_field_error(c, path, "%s", why);
		goto bad;
	}
	if (lang && strv_contains(lang->codize_refused, name)) {
		codize_field_error(c, path, "not allowed for this runtime");
		goto bad;
	}
	for (size_t k = 0; k < r->nfiles; k++) {
		if (r->files[k].name && strcmp(r->files[k].name, name) == 0) {
			codize_field_error(c, path, "duplicate file name");
			goto bad;
		}
	}
	return name;
bad:
	free(name);
	return NULL;
}

/* The decoded content of file i, or NULL after reporting. */
static char *codize_file_content(struct codize_ctx *c, const cJSON *o, size_t i, size_t *len)
{
	const cJSON *v = codize_field(o, "content");
	size_t cap = c->cfg->max_file_bytes;
	char path[64], *data;
	bool b64;

	snprintf(path, sizeof(path), "files.%zu.content", i);
	if (!v) {
		codize_field_error(c, path, "required");
		return NULL;
	}
	b64 = cJSON_IsTrue(codize_field(o, "base64_encoded"));
	if (json_body_file_content(v, &c->m, b64, &data, len) < 0) {
		codize_field_error(c, path, "invalid base64");
		return NULL;
	}
	if (json_body_over_cap(*len, cap)) {
		codize_field_error(c, path, "file too large (max: %zu bytes)", cap);
		free(data);
		return NULL;
	}
	return data;
}

static void codize_files(struct codize_ctx *c, const cJSON *a, const struct lang *lang,
			 struct job_request *r)
{
	const cJSON *o;
	size_t i = 0;

	r->files = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*r->files));
	cJSON_ArrayForEach(o, a) {
		char *name = codize_file_name(c, o, i, lang, r);
		size_t len = 0;
		char *data = codize_file_content(c, o, i, &len);

		/* a good name is kept even without content, so later duplicates are seen */
		if (name) {
			r->files[r->nfiles].name = name;
			r->files[r->nfiles].data = data ? data : xstrdup("");
			r->files[r->nfiles++].len = data ? len : 0;
		} else {
			free(data);
		}
		i++;
	}
}

/* Language defaults, the server's Codize timeouts, then the server maxima. */
static void codize_limits(struct limits *out, const struct limits *lang, uint32_t timeout_ms,
			  const struct limits *max)
{
	struct limits l = *lang;

	if (timeout_ms)
		l.wall_ms = timeout_ms;
	limits_merge(out, &l, NULL, max);
}

static void codize_finish(const struct config *cfg, struct job_request *r)
{
	const struct lang *lang = r->lang;

	if (lang->artifact_from_request)
		r->artifact = request_default_artifact(lang, &r->files[0]);
	else if (lang->artifact)
		r->artifact = xstrdup(lang->artifact);
	r->build_flags = strv_dup(lang->build.default_flags);
	r->run_flags = strv_dup(lang->run.default_flags);
	/* Codize's API asks for no network: the language's default decides */
	r->network = lang->network && cfg->network;
	codize_limits(&r->build_limits, &lang->build.limits, cfg->compile_timeout_ms,
		      &cfg->limits_max);
	codize_limits(&r->run_limits, &lang->run.limits, cfg->run_timeout_ms, &cfg->limits_max);
}

int api_codize_parse(const char *body, size_t len, const struct langtab *t,
		     const struct config *cfg, struct job_request **out,
		     struct req_error *errs, size_t maxerrs, size_t *nerrs)
{
	struct codize_ctx c = { .cfg = cfg, .t = t, .errs = errs, .maxerrs = maxerrs };
	struct job_request *r = NULL;
	const cJSON *files;
	cJSON *root = NULL;
	int rc = -EINVAL;

	if (json_body_over_cap(len, cfg->max_body_bytes)) {
		codize_refuse_body(&c, 413, API_CODIZE_BODY_TOO_LARGE, "request body too large");
		goto out;
	}
	root = json_body_parse(body, len, &c.m);
	if (!root || !codize_types_ok(root)) {
		codize_refuse_body(&c, 400, API_CODIZE_INVALID_BODY, "invalid request body");
		goto out;
	}
	r = xcalloc(1, sizeof(*r));
	/* Codize's answer: each stream capped, both as they interleaved
	 * ("output"), twice in base64; its jail has one CPU (max_cpus 1) */
	r->interleave = true;
	r->capture = (struct req_capture){ .stream_cap = c.cfg->output_limit_bytes,
					   .pin_cpu = c.cfg->codize_pin_cpus,
					   .budget_format = OUTTEXT_BASE64_TWICE,
					   .budget_bytes = c.cfg->max_job_output_bytes };
	r->tests = xcalloc(1, sizeof(*r->tests));
	r->ntests = 1;
	/* Codize's order: runtime, the files array, stdin, then each file. */
	r->lang = codize_runtime(&c, root);
	files = codize_files_array(&c, root);
	codize_stdin(&c, root, &r->tests[0]);
	if (files)
		codize_files(&c, files, r->lang, r);
	if (c.n > 0)
		goto out;
	codize_finish(cfg, r);
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (rc < 0 && nerrs)
		*nerrs = c.n > maxerrs ? maxerrs : c.n;
	request_free(r);
	cJSON_Delete(root);
	return rc;
}

/* ---- the answer ---- */

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
	if (!strcmp(code, API_CODIZE_VALIDATION_ERROR))
		return "request validation failed";
	if (!strcmp(code, API_CODIZE_BODY_TOO_LARGE))
		return "request body too large";
	if (!strcmp(code, API_CODIZE_UNAUTHORIZED))
		return "a valid token is required (Authorization: Bearer)";
	return "invalid request body";
}

/* {code, message[, errors]} */
static cJSON *error_object(const struct req_error *errs, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(o, "code", errs[0].code);
	cJSON_AddStringToObject(o, "message", codize_message(errs[0].code));
	if (strcmp(errs[0].code, API_CODIZE_VALIDATION_ERROR) != 0)
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
