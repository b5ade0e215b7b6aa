#include "autoconf.h"

/*
 * goboxd's own API, the request (POST /run, api_run_parse in api.h): the
 * program (language, source, file names, build and run, extra files), the
 * judge's programs, and what excludes what. The tests, groups and
 * comparison are api_run_tests.c's, the files asked back
 * api_run_return.c's; the reading of objects and fields they share is
 * api_run_read.c's.
 */
#include <errno.h>
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "common/util.h"
#include "worker/http/api.h"
#include "worker/http/api_run_read.h"
#include "worker/http/api_run_return.h"
#include "worker/http/api_run_tests.h"
#include "worker/http/json_body.h"

#define MAX_FLAGS 64

/*
 * A limit the request gives is a positive number: zero is how struct limits
 * says "not given", so a 0 (or -0, or a tiny value that underflows to 0)
 * must be refused here, or a typo would silently become the language's
 * default.
 */
static int limit_time(const cJSON *v, uint32_t *ms)
{
	double x = v->valuedouble * 1000.0;

	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
		return -EINVAL;
	*ms = x >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(x + 0.5);
	/* a positive limit never rounds down to "not given" */
	if (*ms == 0)
		*ms = 1;
	return 0;
}

static int parse_step_limits(struct native_ctx *c, const cJSON *o, const char *step,
			     struct limits *out)
{
	static const char *const keys[] = { "wall_time_s", "cpu_time_s", "memory_kb",
					    "max_processes", "output_kb", "file_size_kb", NULL };
	struct limits l = { 0 };
	const cJSON *v;
	char path[96];

	snprintf(path, sizeof(path), "%s.limits", step);
	if (api_run_read_object(c, o, path, "invalid_limits", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(v, o) {
		uint64_t u = 0;
		uint32_t ms = 0;
		int rc;

		if (strcmp(v->string, "wall_time_s") == 0) {
			rc = limit_time(v, &ms);
			l.wall_ms = ms;
		} else if (strcmp(v->string, "cpu_time_s") == 0) {
			rc = limit_time(v, &ms);
			l.cpu_ms = ms;
		} else if (strcmp(v->string, "max_processes") == 0) {
			rc = api_run_read_count(v, UINT32_MAX, &u);
			l.max_processes = (uint32_t)u;
		} else {
			rc = api_run_read_count(v, UINT64_MAX / 1024, &u);
			if (strcmp(v->string, "memory_kb") == 0)
				l.memory_kb = u;
			else if (strcmp(v->string, "output_kb") == 0)
				l.output_kb = u;
			else
				l.fsize_kb = u;
		}
		if (rc < 0) {
			bool seconds = strcmp(v->string, "wall_time_s") == 0 ||
				       strcmp(v->string, "cpu_time_s") == 0;

			snprintf(path, sizeof(path), "%s.limits.%s", step, v->string);
			api_run_read_refuse(c->e, "invalid_limits", path,
					    "%s must be a number above 0%s (leave it out for the "
					    "language's default)", path,
					    seconds ? "" : ", an integer");
			return -EINVAL;
		}
	}
	*out = l;
	return 0;
}

static int parse_flags(struct native_ctx *c, const cJSON *a, const char *step,
		       const struct lang_step *ls, bool has_step, char ***out)
{
	char path[96], why[320];
	const cJSON *v;
	char **flags;
	size_t n = 0, i = 0;

	snprintf(path, sizeof(path), "%s.flags", step);
	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", path, "%s must be an array of strings",
				    path);
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n > 0 && !has_step) {
		api_run_read_refuse(c->e, "flag_not_allowed", path,
				    "this language has no build step, so it takes no build flags");
		return -EINVAL;
	}
	if (n > MAX_FLAGS) {
		api_run_read_refuse(c->e, "flag_not_allowed", path, "more than %d flags",
				    MAX_FLAGS);
		return -EINVAL;
	}
	flags = xcalloc(n + 1, sizeof(*flags));
	cJSON_ArrayForEach(v, a) {
		size_t len;
		char *f;

		snprintf(path, sizeof(path), "%s.flags[%zu]", step, i);
		if (!cJSON_IsString(v)) {
			api_run_read_refuse(c->e, "invalid_type", path, "%s must be a string",
					    path);
			goto fail;
		}
		f = json_body_bytes(v, &c->m, &len);
		flags[i++] = f;
		if (strlen(f) != len) {
			api_run_read_refuse(c->e, "flag_not_allowed", path,
					    "flag contains a NUL byte");
			goto fail;
		}
		if (validate_flag((const char *const *)ls->flag_allow, strv_len(ls->flag_allow), f,
				  why, sizeof(why)) < 0) {
			api_run_read_refuse(c->e, "flag_not_allowed", path, "%s", why);
			goto fail;
		}
	}
	*out = flags;
	return 0;
fail:
	strv_free(flags);
	return -EINVAL;
}

/* build / run: optional object with optional limits and flags. */
static int parse_build_or_run(struct native_ctx *c, const cJSON *root, const char *step,
			      const struct lang_step *ls, bool has_step, struct limits *lim,
			      char ***flags)
{
	static const char *const keys[] = { "limits", "flags", NULL };
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, step);
	const cJSON *v;
	struct limits req = { 0 };

	if (o && api_run_read_object(c, o, step, "invalid_type", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	if (o && (v = cJSON_GetObjectItemCaseSensitive(o, "limits")) &&
	    parse_step_limits(c, v, step, &req) < 0)
		return -EINVAL;
	if (o && (v = cJSON_GetObjectItemCaseSensitive(o, "flags"))) {
		if (parse_flags(c, v, step, ls, has_step, flags) < 0)
			return -EINVAL;
	} else {
		*flags = strv_dup(ls->default_flags);
	}
	limits_merge(lim, &ls->limits, &req, &c->cfg->limits_max);
	return 0;
}

static int opt_filename(struct native_ctx *c, const cJSON *root, const char *key, char **out)
{
	return api_run_read_filename(c, root, key, key, out);
}

/* Source: required, valid UTF-8, capped. */
static int parse_source(struct native_ctx *c, const cJSON *root, struct req_file *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "source");

	if (!v) {
		api_run_read_refuse(c->e, "missing_field", "source", "source is required");
		return -EINVAL;
	}
	if (!cJSON_IsString(v)) {
		api_run_read_refuse(c->e, "invalid_type", "source", "source must be a string");
		return -EINVAL;
	}
	f->data = json_body_bytes(v, &c->m, &f->len);
	if (json_body_over_cap(f->len, c->cfg->max_source_bytes)) {
		api_run_read_refuse(c->e, "source_too_large", "source",
				    "source is larger than %zu bytes", c->cfg->max_source_bytes);
		return -EINVAL;
	}
	if (!utf8_valid(f->data, f->len)) {
		api_run_read_refuse(c->e, "invalid_utf8", "source", "source is not valid UTF-8");
		return -EINVAL;
	}
	return 0;
}

/*
 * A language with a default source name takes a request's name only with
 * the same extension: the compiler picks its front end by it (Kotlin's
 * Main.kts would be a script, without the class MainKt).
 */
static bool same_extension(const char *name, const char *def)
{
	const char *ext = def ? strrchr(def, '.') : NULL;
	size_t n = strlen(name);

	if (!ext || ext == def)
		return true;
	return n > strlen(ext) && strcmp(name + n - strlen(ext), ext) == 0;
}

/* File names: given ones are always validated, then used only if the language says so. */
static int resolve_names(struct native_ctx *c, const cJSON *root)
{
	const struct lang *lang = c->r->lang;
	struct job_request *r = c->r;
	char *src = NULL, *art = NULL;
	int rc = -EINVAL;

	if (opt_filename(c, root, "source_filename", &src) < 0 ||
	    opt_filename(c, root, "artifact_filename", &art) < 0)
		goto out;
	if (lang->source_from_request) {
		if (src && !same_extension(src, lang->source_default)) {
			api_run_read_refuse(c->e, "invalid_filename", "source_filename",
					    "source_filename: language %s wants a %s file, not '%s'",
					    lang->id, strrchr(lang->source_default, '.'), src);
			goto out;
		}
		/* not named: the default, or the entry class the source declares */
		if (!src)
			src = request_default_source(lang, r->files[0].data);
		if (!src) {
			api_run_read_refuse(c->e, "missing_field", "source_filename",
					    "language %s needs source_filename", lang->id);
			goto out;
		}
		r->files[0].name = src;
		src = NULL;
	} else {
		r->files[0].name = xstrdup(lang->source_filename);
	}
	if (lang->artifact_from_request) {
		r->artifact = art ? art : request_default_artifact(lang, &r->files[0]);
		art = NULL;
	} else if (lang->artifact) {
		r->artifact = xstrdup(lang->artifact);
	}
	rc = 0;
out:
	free(src);
	free(art);
	return rc;
}

static int native_language(struct native_ctx *c, const cJSON *root, const struct langtab *t)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "language");

	if (!v) {
		api_run_read_refuse(c->e, "missing_field", "language", "language is required");
		return -EINVAL;
	}
	if (!cJSON_IsString(v)) {
		api_run_read_refuse(c->e, "invalid_type", "language", "language must be a string");
		return -EINVAL;
	}
	c->r->lang = langtab_find(t, v->valuestring);
	if (!c->r->lang) {
		api_run_read_refuse(c->e, "unknown_language", "language",
				    "unknown language '%.64s'", v->valuestring);
		return -EINVAL;
	}
	return 0;
}

/*
 * "files": extra files next to the source, [{"name", "content",
 * "base64_encoded"}], at most --max-files of at most --max-file-size each,
 * names by the source file rule, unique, and not the source or the
 * artifact. They follow the source in r->files.
 */
static int parse_extra_files(struct native_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "name", "content", "base64_encoded", NULL };
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "files");
	struct job_request *r = c->r;
	struct req_file *all;
	const cJSON *o;
	char path[64];
	size_t i = 0;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", "files", "files must be an array");
		return -EINVAL;
	}
	if (json_body_over_cap((size_t)cJSON_GetArraySize(a), c->cfg->max_files)) {
		api_run_read_refuse(c->e, "too_many_files", "files",
				    "at most %u extra files are allowed", c->cfg->max_files);
		return -EINVAL;
	}
	all = xcalloc(r->nfiles + (size_t)cJSON_GetArraySize(a), sizeof(*all));
	memcpy(all, r->files, r->nfiles * sizeof(*all));
	free(r->files);
	r->files = all;
	cJSON_ArrayForEach(o, a) {
		struct req_file *f = &r->files[r->nfiles];
		const cJSON *v, *b64;
		int rc;

		snprintf(path, sizeof(path), "files[%zu]", i);
		if (api_run_read_object(c, o, path, "invalid_type", keys, KEY_AT_OBJECT) < 0)
			return -EINVAL;
		snprintf(path, sizeof(path), "files[%zu].name", i);
		rc = api_run_read_filename(c, o, "name", path, &f->name);
		if (rc == 0)
			api_run_read_refuse(c->e, "missing_field", path, "%s is required", path);
		if (rc <= 0)
			return -EINVAL;
		r->nfiles++;
		for (size_t k = 0; k + 1 < r->nfiles; k++) {
			if (strcmp(r->files[k].name, f->name) == 0) {
				api_run_read_refuse(c->e, "invalid_filename", path,
						    "%s: '%s' is already the source or another file",
						    path, f->name);
				return -EINVAL;
			}
		}
		if (r->artifact && strcmp(r->artifact, f->name) == 0) {
			api_run_read_refuse(c->e, "invalid_filename", path,
					    "%s: '%s' is the build's output", path, f->name);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "files[%zu].content", i);
		v = cJSON_GetObjectItemCaseSensitive(o, "content");
		if (!v || !cJSON_IsString(v)) {
			api_run_read_refuse(c->e, v ? "invalid_type" : "missing_field", path,
					    v ? "%s must be a string" : "%s is required", path);
			return -EINVAL;
		}
		b64 = cJSON_GetObjectItemCaseSensitive(o, "base64_encoded");
		if (b64 && !cJSON_IsBool(b64)) {
			api_run_read_refuse(c->e, "invalid_type", path,
					    "files[%zu].base64_encoded must be true or false", i);
			return -EINVAL;
		}
		if (json_body_file_content(v, &c->m, cJSON_IsTrue(b64), &f->data, &f->len) < 0) {
			api_run_read_refuse(c->e, "invalid_base64", path, "%s is not valid base64",
					    path);
			return -EINVAL;
		}
		if (json_body_over_cap(f->len, c->cfg->max_file_bytes)) {
			api_run_read_refuse(c->e, "file_too_large", path, "%s is larger than %zu bytes",
					    path, c->cfg->max_file_bytes);
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

/*
 * An error found inside a judge program's object names the object: path
 * "checker.source", message "checker: source is required".
 */
static void err_within(struct req_error *e, const char *key)
{
	char path[sizeof(e->path) + 32];
	char msg[sizeof(e->message) + 32];
	size_t n;

	snprintf(path, sizeof(path), "%s%s%s", key, e->path[0] ? "." : "", e->path);
	snprintf(msg, sizeof(msg), "%s: %s", key, e->message);
	/* cut to fit, as refuse does */
	n = strnlen(path, sizeof(e->path) - 1);
	memcpy(e->path, path, n);
	e->path[n] = '\0';
	n = strnlen(msg, sizeof(e->message) - 1);
	memcpy(e->message, msg, n);
	e->message[n] = '\0';
}

/*
 * What a request and a judge's program both are: a language, a source,
 * its file names, build and run settings, extra files. Into a new c->r.
 */
static int parse_program_fields(struct native_ctx *c, const cJSON *o, const struct langtab *t)
{
	struct job_request *r = c->r = xcalloc(1, sizeof(*r));

	r->capture = (struct req_capture){ .budget_format = OUTTEXT_JSON,
					   .budget_bytes = c->cfg->max_job_output_bytes };
	r->files = xcalloc(1, sizeof(*r->files));
	r->nfiles = 1;
	if (native_language(c, o, t) < 0 || parse_source(c, o, &r->files[0]) < 0 ||
	    resolve_names(c, o) < 0 ||
	    parse_build_or_run(c, o, "build", &r->lang->build, r->lang->has_build,
			       &r->build_limits, &r->build_flags) < 0 ||
	    parse_build_or_run(c, o, "run", &r->lang->run, true, &r->run_limits,
			       &r->run_flags) < 0 ||
	    parse_extra_files(c, o) < 0)
		return -EINVAL;
	return 0;
}

/*
 * "interactor" / "checker": a program of the judge's, in the request's own
 * shape (language, source, source_filename, artifact_filename, build, run,
 * files) without tests. 0 absent or parsed into *out, -EINVAL bad.
 */
static int parse_program(struct native_ctx *c, const cJSON *root, const char *key,
			 const struct langtab *t, struct job_request **out)
{
	static const char *const keys[] = { "language", "source", "source_filename",
					    "artifact_filename", "build", "run", "files", NULL };
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
	struct native_ctx prog = { .cfg = c->cfg, .m = c->m, .e = c->e };

	if (!o)
		return 0;
	if (api_run_read_object(c, o, key, "invalid_type", keys, KEY_WITHIN) < 0)
		return -EINVAL;
	if (parse_program_fields(&prog, o, t) < 0) {
		err_within(c->e, key);
		request_free(prog.r);
		return -EINVAL;
	}
	*out = prog.r;
	return 0;
}

/*
 * What a judge program excludes. The interactor talks to the solution
 * through its stdin and stdout and gives the verdict: no comparison, no
 * file I/O. The checker gives the verdict: no comparison. One of the two.
 */
static int check_judge(struct native_ctx *c, const cJSON *root)
{
	const struct job_request *r = c->r;
	bool compare = cJSON_GetObjectItemCaseSensitive(root, "compare") != NULL;

	if (r->interactor && r->checker) {
		api_run_read_refuse(c->e, "invalid_checker", "checker",
				    "a request has an interactor or a checker, not both (the interactor "
				    "gives the verdict)");
		return -EINVAL;
	}
	if (compare && (r->interactor || r->checker)) {
		api_run_read_refuse(c->e, r->interactor ? "invalid_interactor" : "invalid_checker",
				    "compare", "compare does not apply: the %s gives the verdict",
				    r->interactor ? "interactor" : "checker");
		return -EINVAL;
	}
	for (size_t i = 0; i < r->ntests && r->interactor; i++) {
		const struct req_test *t = &r->tests[i];
		char path[64];

		if (!t->input_file && !t->output_file)
			continue;
		snprintf(path, sizeof(path), "tests[%zu].%s", i,
			 t->input_file ? "input_file" : "output_file");
		api_run_read_refuse(c->e, "invalid_interactor", path,
				    "%s: an interactive test talks through stdin and stdout, not files",
				    path);
		return -EINVAL;
	}
	return 0;
}

/*
 * "network": true gives the tests a network: only where the operator
 * allows it (--network), and not beside an interactor, the one a
 * solution talks to. Not given: the language's default (its file's
 * "network"), where the server gives one and no interactor is there.
 */
static int parse_network(struct native_ctx *c, const cJSON *root)
{
	bool given = cJSON_GetObjectItemCaseSensitive(root, "network") != NULL;
	bool want = false;

	if (api_run_read_bool(c, root, "network", "network", &want) < 0)
		return -EINVAL;
	if (!given) {
		c->r->network = c->r->lang->network && c->cfg->network && !c->r->interactor;
		return 0;
	}
	if (!want)
		return 0;
	if (!c->cfg->network) {
		api_run_read_refuse(c->e, "network_not_allowed", "network",
				    "this server gives no job a network (goboxd --network)");
		return -EINVAL;
	}
	if (c->r->interactor) {
		api_run_read_refuse(c->e, "invalid_network", "network",
				    "network: an interactive test's solution talks to its "
				    "interactor alone");
		return -EINVAL;
	}
	c->r->network = true;
	return 0;
}

int api_run_parse(const char *body, size_t len, const struct langtab *t,
		  const struct config *cfg, struct job_request **out,
		  struct req_error *e)
{
	static const char *const keys[] = { "language", "source", "source_filename",
					    "artifact_filename", "build", "run", "tests",
					    "compare", "files", "interactor", "checker",
					    "stop_on_failure", "groups", "return_files",
					    "return_files_limits", "network", NULL };
	struct native_ctx c = { .cfg = cfg, .e = e };
	cJSON *root = NULL;
	int rc = -EINVAL;

	/* The HTTP layer reads up to the larger of the two APIs' caps. */
	if (json_body_over_cap(len, cfg->max_run_body_bytes)) {
		api_run_read_refuse(e, "body_too_large", "", "request body exceeds %zu bytes",
				    cfg->max_run_body_bytes);
		e->http_status = 413;
		goto out;
	}
	root = json_body_parse(body, len, &c.m);
	if (!root) {
		api_run_read_refuse(e, "invalid_json", "", "the body is not valid JSON");
		goto out;
	}
	if (api_run_read_object(&c, root, "", "invalid_json", keys, KEY_AT_KEY) < 0 ||
	    parse_program_fields(&c, root, t) < 0 || api_run_tests_parse(&c, root) < 0 ||
	    parse_program(&c, root, "interactor", t, &c.r->interactor) < 0 ||
	    parse_program(&c, root, "checker", t, &c.r->checker) < 0 || check_judge(&c, root) < 0 ||
	    api_run_return_parse(&c, root) < 0 || parse_network(&c, root) < 0)
		goto out;
	*out = c.r;
	c.r = NULL;
	rc = 0;
out:
	request_free(c.r);
	cJSON_Delete(root);
	return rc;
}
