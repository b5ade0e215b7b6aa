#include "autoconf.h"

/*
 * Piston's API v2 (engineer-man/piston, api/src/api/v2.js and job.js):
 * POST /api/v2/execute parsed into the one job model (its files laid out
 * by api_piston_files.c), the job's result rendered as Piston's answer,
 * GET /api/v2/runtimes and /api/v2/packages (package.js). Piston's own
 * checks come first, in its order and its words; goboxd's caps (file
 * names, sizes, the server's maxima) follow, worded the same way.
 * docs/api.md ("Piston's API v2") lists where goboxd differs, and why.
 */
#include <errno.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outtext.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/http/api.h"
#include "worker/http/api_piston_files.h"
#include "worker/http/json_body.h"
#include "worker/http/semver.h"

/* ---- POST /api/v2/execute: the request ---- */

/* Bounds of "args", which Piston leaves to execve: E2BIG would be a 5xx. */
#define PISTON_MAX_ARGS 1024
#define PISTON_MAX_ARGS_BYTES (64u * 1024u)

struct piston_ctx {
	const struct config *cfg;
	struct json_body_marker m;
	struct req_error *e;
	struct job_request *r;
};

static int piston_refuse(struct piston_ctx *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A 400 in Piston's shape: one message. */
static int piston_refuse(struct piston_ctx *c, const char *code, const char *fmt, ...)
{
	char msg[sizeof(c->e->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return api_piston_files_refuse(c->e, code, "%s", msg);
}

/* A required non-empty string (language, version). */
static const char *piston_required(struct piston_ctx *c, const cJSON *root, const char *key)
{
	const cJSON *v = api_piston_files_field(root, key);

	if (api_piston_files_falsy(v) || !cJSON_IsString(v)) {
		piston_refuse(c, "invalid_request", "%s is required as a string", key);
		return NULL;
	}
	return v->valuestring;
}

/* language, version, files and each file's content: get_job's first checks. */
static int piston_shape(struct piston_ctx *c, const cJSON *root, const cJSON **files)
{
	const cJSON *f;
	size_t i = 0;

	if (!piston_required(c, root, "language") || !piston_required(c, root, "version"))
		return -EINVAL;
	*files = api_piston_files_field(root, "files");
	if (!cJSON_IsArray(*files))
		return piston_refuse(c, "invalid_request", "files is required as an array");
	cJSON_ArrayForEach(f, *files) {
		if (!cJSON_IsString(api_piston_files_field(f, "content")))
			return piston_refuse(c, "invalid_request",
					     "files[%zu].content is required as a string", i);
		i++;
	}
	return 0;
}

static int piston_runtime(struct piston_ctx *c, const cJSON *root, const struct langtab *t)
{
	const char *language = api_piston_files_field(root, "language")->valuestring;
	const char *version = api_piston_files_field(root, "version")->valuestring;
	const struct lang *l = langtab_find_piston(t, language);

	/* --piston-any-version: one version per language, whatever was pinned */
	if (!l || (!semver_range_matches(version, l->piston_version) &&
		   !c->cfg->piston_any_version))
		return piston_refuse(c, "unknown_runtime", "%.200s-%.200s runtime is unknown",
				     language, version);
	c->r->lang = l;
	/* Piston's compile and run scripts, where the language says they
	 * differ from its steps */
	c->r->build_cmdline = &l->piston_build;
	c->r->run_cmdline = &l->piston_run;
	return 0;
}

/* The server maximum of one of Piston's limits, in its units (0: none). */
static double piston_configured(const struct limits *max, const char *constraint)
{
	if (!strcmp(constraint, "memory_limit"))
		return (double)max->memory_kb * 1024.0;
	if (!strcmp(constraint, "timeout"))
		return max->wall_ms;
	return max->cpu_ms;
}

/*
 * A checked value into the step's requested limits, rounded up (a
 * positive value never becomes 0, "not given"); -1 memory: the server's
 * maximum.
 */
static void piston_set_limit(struct limits *l, const char *constraint, double v,
			     const struct limits *max)
{
	double up = ceil(strcmp(constraint, "memory_limit") ? v : v / 1024.0);
	uint32_t ms = up >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)up;

	if (!strcmp(constraint, "timeout"))
		l->wall_ms = ms;
	else if (!strcmp(constraint, "cpu_time"))
		l->cpu_ms = ms;
	else if (v < 0)
		l->memory_kb = max->memory_kb;
	else
		l->memory_kb = up >= (double)(UINT64_MAX / 1024) ? UINT64_MAX / 1024 : (uint64_t)up;
}

/*
 * compile_/run_ memory_limit, timeout, cpu_time, in get_job's order and
 * words: 0, null and false mean the runtime's default; a value is a number
 * no greater than the configured limit (here the server's maximum) and
 * not negative. The one negative Piston's clients send, -1 for memory
 * ("no limit"), asks for the server's maximum.
 */
static int piston_limits(struct piston_ctx *c, const cJSON *root, struct limits *build,
			 struct limits *run)
{
	static const char *const constraints[] = { "memory_limit", "timeout", "cpu_time" };
	static const char *const types[] = { "compile", "run" };
	const struct limits *max = &c->cfg->limits_max;

	for (size_t i = 0; i < ARRAY_SIZE(constraints); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(types); k++) {
			double limit = piston_configured(max, constraints[i]);
			const cJSON *v;
			char name[32];

			snprintf(name, sizeof(name), "%s_%s", types[k], constraints[i]);
			v = api_piston_files_field(root, name);
			if (api_piston_files_falsy(v))
				continue;
			if (!cJSON_IsNumber(v))
				return piston_refuse(c, "invalid_limit",
						     "If specified, %s must be a number", name);
			if (limit > 0 && v->valuedouble > limit)
				return piston_refuse(c, "invalid_limit",
						     "%s cannot exceed the configured limit of %.0f",
						     name, limit);
			if (v->valuedouble < 0 &&
			    !(v->valuedouble == -1 && !strcmp(constraints[i], "memory_limit")))
				return piston_refuse(c, "invalid_limit", "%s must be non-negative",
						     name);
			piston_set_limit(k == 0 ? build : run, constraints[i], v->valuedouble, max);
		}
	}
	return 0;
}

/* stdin, with the newline Job's constructor adds when it has none. */
static int piston_stdin(struct piston_ctx *c, const cJSON *root, struct req_test *t)
{
	const cJSON *v = api_piston_files_field(root, "stdin");
	size_t cap = c->cfg->max_test_stdin_bytes, len = 0;
	char *s;

	if (v && !cJSON_IsString(v))
		return piston_refuse(c, "invalid_request", "stdin must be a string");
	s = v ? json_body_bytes(v, &c->m, &len) : xstrdup("");
	if (json_body_over_cap(len, cap)) {
		free(s);
		return piston_refuse(c, "stdin_too_large",
				     "stdin cannot exceed the configured limit of %zu bytes", cap);
	}
	if (len == 0 || s[len - 1] != '\n') {
		char *nl = xmalloc(len + 2);

		memcpy(nl, s, len);
		nl[len++] = '\n';
		nl[len] = '\0';
		free(s);
		s = nl;
	}
	t->stdin_data = s;
	t->stdin_len = len;
	return 0;
}

/* args: the program's own arguments, after the entry (job.c appends run_args). */
static int piston_args(struct piston_ctx *c, const cJSON *root)
{
	const cJSON *a = api_piston_files_field(root, "args"), *v;
	size_t i = 0, bytes = 0;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return piston_refuse(c, "invalid_request", "args must be an array of strings");
	if (cJSON_GetArraySize(a) > PISTON_MAX_ARGS)
		return piston_refuse(c, "invalid_request",
				     "args cannot exceed the configured limit of %d arguments",
				     PISTON_MAX_ARGS);
	c->r->run_args = strv_new();
	cJSON_ArrayForEach(v, a) {
		size_t len;
		char *s;

		if (!cJSON_IsString(v))
			return piston_refuse(c, "invalid_request", "args[%zu] must be a string", i);
		s = json_body_bytes(v, &c->m, &len);
		strv_push(&c->r->run_args, s);
		if (strlen(s) != len)
			return piston_refuse(c, "invalid_request",
					     "args[%zu] must not contain a NUL byte", i);
		bytes += len + 1;
		if (bytes > PISTON_MAX_ARGS_BYTES)
			return piston_refuse(c, "invalid_request",
					     "args cannot exceed the configured limit of %u bytes",
					     PISTON_MAX_ARGS_BYTES);
		i++;
	}
	return 0;
}

/*
 * The body as body-parser gives it to Piston: empty is {}; not JSON, or
 * not an object or array at the top (its strict mode), is refused. NULL
 * after refusing.
 */
static cJSON *piston_body(struct piston_ctx *c, const char *body, size_t len)
{
	cJSON *root;

	if (len == 0)
		return cJSON_CreateObject();
	root = json_body_parse(body, len, &c->m);
	if (!root || !(cJSON_IsObject(root) || cJSON_IsArray(root))) {
		cJSON_Delete(root);
		piston_refuse(c, "invalid_json", "request body is not valid JSON");
		return NULL;
	}
	return root;
}

/* Piston's steps, then goboxd's caps. */
static int piston_request(struct piston_ctx *c, const cJSON *root, const struct langtab *t)
{
	struct job_request *r = c->r;
	struct limits build = { 0 }, run = { 0 };
	const cJSON *files = NULL;

	if (piston_shape(c, root, &files) < 0 || piston_runtime(c, root, t) < 0)
		return -EINVAL;
	if (!api_piston_files_have_code(files))
		return piston_refuse(c, "invalid_request",
				     "files must include at least one utf8 encoded file");
	if (piston_limits(c, root, &build, &run) < 0)
		return -EINVAL;
	if (json_body_over_cap((size_t)cJSON_GetArraySize(files), c->cfg->max_files))
		return piston_refuse(c, "too_many_files",
				     "files cannot exceed the configured limit of %u files",
				     c->cfg->max_files);
	r->tests = xcalloc(1, sizeof(*r->tests));
	r->ntests = 1;
	if (api_piston_files_layout(files, c->cfg, &c->m, r, c->e) < 0 ||
	    piston_stdin(c, root, &r->tests[0]) < 0 ||
	    piston_args(c, root) < 0)
		return -EINVAL;
	r->build_flags = strv_dup(r->lang->build.default_flags);
	r->run_flags = strv_dup(r->lang->run.default_flags);
	limits_merge(&r->build_limits, &r->lang->build.limits, &build, &c->cfg->limits_max);
	limits_merge(&r->run_limits, &r->lang->run.limits, &run, &c->cfg->limits_max);
	return 0;
}

int api_piston_parse(const char *body, size_t len, const struct langtab *t,
		     const struct config *cfg, struct job_request **out, struct req_error *e)
{
	struct piston_ctx c = { .cfg = cfg, .e = e };
	cJSON *root = NULL;
	int rc = -EINVAL;

	memset(e, 0, sizeof(*e));
	/* Piston's body-parser stops at 100 kB; goboxd takes what /run takes. */
	if (json_body_over_cap(len, cfg->max_run_body_bytes)) {
		piston_refuse(&c, "body_too_large", "request entity too large");
		e->http_status = 413;
		return -E2BIG;
	}
	if (!(root = piston_body(&c, body, len)))
		goto out;
	c.r = xcalloc(1, sizeof(*c.r));
	/* Piston's "output": both streams as the program wrote them; the
	 * answer carries them twice, in JSON */
	c.r->interleave = true;
	c.r->capture = (struct req_capture){ .budget_format = OUTTEXT_JSON,
					     .budget_bytes = cfg->max_job_output_bytes / 2 };
	if (piston_request(&c, root, t) < 0)
		goto out;
	*out = c.r;
	c.r = NULL;
	rc = 0;
out:
	request_free(c.r);
	cJSON_Delete(root);
	return rc;
}

/* ---- the answer ---- */

/*
 * A stage's status and message as isolate writes them in Piston's meta
 * file, and the stream caps Piston adds: OL/EL when stdout/stderr went
 * past its cap, TO for a time limit, SG for a death by signal (a memory
 * kill too), RE for a non-zero exit, none for 0. Killed by a limit: code
 * null, signal SIGKILL, as job.js reports it.
 */
struct piston_stage_end {
	const char *status;   /* NULL: none */
	char message[64];     /* "": none */
	int code;             /* -1: null */
	int sig;              /* 0: null */
};

static void piston_stage_end(const struct step_result *r, const struct limits *lim,
			     struct piston_stage_end *e)
{
	const struct run_outcome *o = &r->outcome;

	memset(e, 0, sizeof(*e));
	e->code = -1;
	if (o->output_limited) {
		bool err = r->err_truncated && !r->out_truncated;

		e->status = err ? "EL" : "OL";
		snprintf(e->message, sizeof(e->message), "%s length exceeded",
			 err ? "stderr" : "stdout");
		e->sig = SIGKILL;
	} else if (o->timed_out) {
		e->status = "TO";
		snprintf(e->message, sizeof(e->message), "Time limit exceeded%s",
			 lim->cpu_ms && r->cpu_ms >= lim->cpu_ms ? "" : " (wall clock)");
		e->sig = SIGKILL;
	} else if (!o->exited) {
		e->sig = o->term_signal ? o->term_signal : SIGKILL;
		e->status = "SG";
		snprintf(e->message, sizeof(e->message), "Caught fatal signal %d", e->sig);
	} else {
		e->code = o->exit_code;
		if (o->exit_code != 0) {
			e->status = "RE";
			snprintf(e->message, sizeof(e->message), "Exited with error status %d",
				 o->exit_code);
		}
	}
}

/*
 * A stream as text. One cut at its cap ends with goboxd's marker, which
 * Piston's answers do not have: its status (OL, EL) says so.
 */
static void add_text(cJSON *o, const char *key, const struct buf *b, bool cut)
{
	static const char marker[] = TRUNCATION_MARKER;
	size_t len = b->len;
	char *clean;

	if (cut && len >= sizeof(marker) - 1 &&
	    !memcmp(b->data + len - (sizeof(marker) - 1), marker, sizeof(marker) - 1))
		len -= sizeof(marker) - 1;
	clean = outtext_utf8(b->data ? b->data : "", len);

	cJSON_AddStringToObject(o, key, clean);
	free(clean);
}

static void add_string_or_null(cJSON *o, const char *key, const char *s)
{
	if (s && s[0])
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/* {stdout, stderr, code, signal, output, memory (bytes), message, status, cpu_time, wall_time (ms)} */
static cJSON *piston_stage(const struct step_result *r, const struct limits *lim)
{
	cJSON *s = cJSON_CreateObject();
	struct piston_stage_end e;
	char sig[32];

	if (!s)
		return NULL;
	piston_stage_end(r, lim, &e);
	add_text(s, "stdout", &r->out, r->out_truncated);
	add_text(s, "stderr", &r->err, r->err_truncated);
	if (e.code >= 0)
		cJSON_AddNumberToObject(s, "code", e.code);
	else
		cJSON_AddNullToObject(s, "code");
	add_string_or_null(s, "signal", e.sig ? verdict_signal_name(e.sig, sig, sizeof(sig)) : NULL);
	add_text(s, "output", &r->interleaved, r->out_truncated || r->err_truncated);
	cJSON_AddNumberToObject(s, "memory", (double)r->memory_peak_kb * 1024.0);
	add_string_or_null(s, "message", e.message);
	add_string_or_null(s, "status", e.status);
	cJSON_AddNumberToObject(s, "cpu_time", (double)r->cpu_ms);
	cJSON_AddNumberToObject(s, "wall_time", (double)r->wall_ms);
	return s;
}

/*
 * {compile (languages Piston compiles), run, language, version}. A
 * failed build runs nothing; v2.js then answers the compile stage as run
 * too ("backward compatibility when the run stage is not started"). Where
 * Piston builds in its run script (go run, java's source launcher), the
 * build is no stage of its own: a failed one is the run stage.
 */
cJSON *api_piston_json(const struct job_request *req, const struct job_result *res)
{
	cJSON *o = cJSON_CreateObject(), *compile = NULL, *run;
	bool failed = req->lang->has_build && res->build_status != BS_OK;

	if (!o)
		return NULL;
	if (req->lang->has_build && req->lang->piston_compiled) {
		compile = piston_stage(&res->build, &req->build_limits);
		cJSON_AddItemToObject(o, "compile", compile);
	}
	if (compile && failed)
		run = cJSON_Duplicate(compile, true);
	else if (failed)
		run = piston_stage(&res->build, &req->build_limits);
	else
		run = piston_stage(&res->tests[0].r, &req->run_limits);
	cJSON_AddItemToObject(o, "run", run);
	cJSON_AddStringToObject(o, "language", req->lang->piston_runtime);
	cJSON_AddStringToObject(o, "version", req->lang->piston_version);
	return o;
}

char *api_piston_error(const struct req_error *e)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "message", e->message);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* One entry per language with a Piston name; no "runtime": each is its own. */
cJSON *api_piston_runtimes(const struct langtab *t)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < langtab_count(t); i++) {
		const struct lang *l = langtab_at(t, i);
		cJSON *o, *aliases;

		if (!l->piston_runtime)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "language", l->piston_runtime);
		cJSON_AddStringToObject(o, "version", l->piston_version);
		aliases = cJSON_AddArrayToObject(o, "aliases");
		for (size_t k = 0; l->piston_aliases && l->piston_aliases[k]; k++)
			cJSON_AddItemToArray(aliases, cJSON_CreateString(l->piston_aliases[k]));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *api_piston_packages(const struct langtab *t)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < langtab_count(t); i++) {
		const struct lang *l = langtab_at(t, i);
		cJSON *o;

		if (!l->piston_runtime)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "language", l->piston_runtime);
		cJSON_AddStringToObject(o, "language_version", l->piston_version);
		cJSON_AddTrueToObject(o, "installed");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* A value as JavaScript's String(v) prints it (NULL: undefined). */
static void js_string(const cJSON *v, const struct json_body_marker *m, bool item, struct buf *b)
{
	if (!v) {
		buf_puts(b, "undefined");
	} else if (cJSON_IsString(v)) {
		size_t len;
		char *s = json_body_bytes(v, m, &len);

		buf_append(b, s, len);
		free(s);
	} else if (cJSON_IsNull(v)) {
		/* Array.prototype.join prints null items as "" */
		buf_puts(b, item ? "" : "null");
	} else if (cJSON_IsObject(v)) {
		buf_puts(b, "[object Object]");
	} else if (cJSON_IsArray(v)) {
		for (const cJSON *e = v->child; e; e = e->next) {
			if (e != v->child)
				buf_puts(b, ",");
			js_string(e, m, true, b);
		}
	} else {
		char *s = cJSON_PrintUnformatted(v);

		buf_puts(b, s ? s : "");
		free(s);
	}
}

/* JSON.parse's last value of key, null included (NULL: undefined). */
static const cJSON *js_field(const cJSON *o, const char *key)
{
	const cJSON *v = NULL, *f;

	cJSON_ArrayForEach(f, o) {
		if (f->string && !strcmp(f->string, key))
			v = f;
	}
	return v;
}

/*
 * package.js's get_package against the installed runtimes: the name as
 * it is (no alias), the version a range it satisfies.
 */
static const struct lang *piston_package(const struct langtab *t, const cJSON *language,
					 const cJSON *version)
{
	for (size_t i = 0; cJSON_IsString(language) && cJSON_IsString(version) &&
			   i < langtab_count(t); i++) {
		const struct lang *l = langtab_at(t, i);

		if (l->piston_runtime && !strcmp(l->piston_runtime, language->valuestring) &&
		    semver_range_matches(version->valuestring, l->piston_version))
			return l;
	}
	return NULL;
}

static cJSON *piston_message_of(const char *msg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "message", msg);
	return o;
}

/*
 * v2.js's POST and DELETE /packages: a package the repository does not
 * hold is 404 in its words; installing one that is installed fails as
 * Package.install does ("Already installed", 500); goboxd cannot remove
 * a toolchain, which comes with the host (500 too, as a failed
 * uninstall is).
 */
int api_piston_package_change(bool install, const char *body, size_t len,
			      const struct langtab *t, cJSON **out)
{
	struct json_body_marker m = { 0 };
	cJSON *root = len ? json_body_parse(body, len, &m) : cJSON_CreateObject();
	const struct lang *l;
	struct buf b = { 0 };
	int status;

	if (!root || !(cJSON_IsObject(root) || cJSON_IsArray(root))) {
		cJSON_Delete(root);
		*out = piston_message_of("request body is not valid JSON");
		return 400;
	}
	l = piston_package(t, js_field(root, "language"), js_field(root, "version"));
	if (!l) {
		buf_puts(&b, "Requested package ");
		js_string(js_field(root, "language"), &m, false, &b);
		buf_puts(&b, "-");
		js_string(js_field(root, "version"), &m, false, &b);
		buf_puts(&b, " does not exist");
		status = 404;
	} else if (install) {
		buf_puts(&b, "Already installed");
		status = 500;
	} else {
		buf_printf(&b, "%s-%s cannot be uninstalled: its toolchain comes with the host",
			   l->piston_runtime, l->piston_version);
		status = 500;
	}
	*out = piston_message_of(b.data ? b.data : "");
	buf_free(&b);
	cJSON_Delete(root);
	return status;
}
