#include "autoconf.h"

#include <errno.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "common/util.h"
#include "worker/http/api.h"
#include "worker/http/json_body.h"

/* ---- POST /run: the request ---- */

#define MAX_FLAGS 64

static void refuse(struct req_error *e, const char *code, const char *path,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void refuse(struct req_error *e, const char *code, const char *path,
		   const char *fmt, ...)
{
	va_list ap;

	e->http_status = 400;
	snprintf(e->code, sizeof(e->code), "%s", code);
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

static bool key_allowed(const char *key, const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++)
		if (strcmp(key, keys[i]) == 0)
			return true;
	return false;
}

/*
 * The first key of obj that is not in keys, or a key given twice (cJSON
 * keeps both, and which one wins must not be a guess). NULL if all is well.
 */
static const cJSON *bad_key(const cJSON *obj, const char *const *keys, bool *dup)
{
	const cJSON *a, *b;

	*dup = false;
	cJSON_ArrayForEach(a, obj) {
		if (!key_allowed(a->string, keys))
			return a;
		for (b = a->next; b; b = b->next) {
			if (strcmp(a->string, b->string) == 0) {
				*dup = true;
				return b;
			}
		}
	}
	return NULL;
}

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

/*
 * The opening of every object of a request: o is an object (else the
 * code not_object at path, "" being the body itself), and each of its keys
 * is one of keys, given once (else unknown_field, or invalid_json for a
 * repeated one: cJSON keeps both, and which one wins must not be a guess).
 */
static int open_object(struct native_ctx *c, const cJSON *o, const char *path,
		       const char *not_object, const char *const *keys, enum key_report at)
{
	char where[sizeof(c->e->message)];
	const char *what, *sep;
	const cJSON *v;
	bool dup;

	if (!cJSON_IsObject(o)) {
		if (path[0])
			refuse(c->e, not_object, path, "%s must be an object", path);
		else
			refuse(c->e, not_object, "", "the body must be a JSON object");
		return -EINVAL;
	}
	if (!(v = bad_key(o, keys, &dup)))
		return 0;
	what = dup ? "duplicate key" : "unknown field";
	/* within a program, the key "" is named by the program alone, like its other errors */
	sep = path[0] && (v->string[0] || at != KEY_WITHIN) ? "." : "";
	snprintf(where, sizeof(where), "%s%s%s", path, sep, v->string);
	switch (at) {
	case KEY_AT_KEY:
		refuse(c->e, dup ? "invalid_json" : "unknown_field", where, "%s %s", what, where);
		break;
	case KEY_AT_OBJECT:
		refuse(c->e, dup ? "invalid_json" : "unknown_field", path, "%s %s", what, where);
		break;
	case KEY_WITHIN:
		refuse(c->e, dup ? "invalid_json" : "unknown_field", where, "%s: %s %s", path, what,
		       v->string);
		break;
	}
	return -EINVAL;
}

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

static int limit_count(const cJSON *v, uint64_t max, uint64_t *out)
{
	double x = v->valuedouble;

	if (!cJSON_IsNumber(v) || !(x >= 1))
		return -EINVAL;
	if (x >= (double)max) {
		*out = max;
		return 0;
	}
	if (x != (double)(uint64_t)x)
		return -EINVAL;
	*out = (uint64_t)x;
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
	if (open_object(c, o, path, "invalid_limits", keys, KEY_AT_KEY) < 0)
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
			rc = limit_count(v, UINT32_MAX, &u);
			l.max_processes = (uint32_t)u;
		} else {
			rc = limit_count(v, UINT64_MAX / 1024, &u);
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
			refuse(c->e, "invalid_limits", path,
			       "%s must be a number above 0%s (leave it out for the "
			       "language's default)", path, seconds ? "" : ", an integer");
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
		refuse(c->e, "invalid_type", path, "%s must be an array of strings", path);
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n > 0 && !has_step) {
		refuse(c->e, "flag_not_allowed", path,
		       "this language has no build step, so it takes no build flags");
		return -EINVAL;
	}
	if (n > MAX_FLAGS) {
		refuse(c->e, "flag_not_allowed", path, "more than %d flags", MAX_FLAGS);
		return -EINVAL;
	}
	flags = xcalloc(n + 1, sizeof(*flags));
	cJSON_ArrayForEach(v, a) {
		size_t len;
		char *f;

		snprintf(path, sizeof(path), "%s.flags[%zu]", step, i);
		if (!cJSON_IsString(v)) {
			refuse(c->e, "invalid_type", path, "%s must be a string", path);
			goto fail;
		}
		f = json_body_bytes(v, &c->m, &len);
		flags[i++] = f;
		if (strlen(f) != len) {
			refuse(c->e, "flag_not_allowed", path, "flag contains a NUL byte");
			goto fail;
		}
		if (validate_flag((const char *const *)ls->flag_allow, strv_len(ls->flag_allow), f,
				  why, sizeof(why)) < 0) {
			refuse(c->e, "flag_not_allowed", path, "%s", why);
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

	if (o && open_object(c, o, step, "invalid_type", keys, KEY_AT_KEY) < 0)
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

/*
 * An optional field of o of the type is_type accepts: 0 absent, 1 present
 * (*v set), -EINVAL when of another type ("<path> must be <what>").
 */
static int opt_field(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
		     cJSON_bool (*is_type)(const cJSON *), const char *what, const cJSON **v)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!f)
		return 0;
	if (!is_type(f)) {
		refuse(c->e, "invalid_type", path, "%s must be %s", path, what);
		return -EINVAL;
	}
	*v = f;
	return 1;
}

/* An optional string field: 0 absent, 1 present (*s, *len set), -EINVAL bad. */
static int opt_string(struct native_ctx *c, const cJSON *o, const char *key,
		      const char *path, char **s, size_t *len)
{
	const cJSON *v;
	int rc = opt_field(c, o, key, path, cJSON_IsString, "a string", &v);

	if (rc > 0)
		*s = json_body_bytes(v, &c->m, len);
	return rc;
}

static int opt_filename_at(struct native_ctx *c, const cJSON *o, const char *key,
			   const char *path, char **out);

/* A test's file name field (input_file, output_file): 0 absent, 1 valid, -EINVAL bad. */
static int test_filename(struct native_ctx *c, const cJSON *o, size_t i, const char *key,
			 char **out)
{
	char path[96];

	snprintf(path, sizeof(path), "tests[%zu].%s", i, key);
	return opt_filename_at(c, o, key, path, out);
}

static int parse_test(struct native_ctx *c, const cJSON *o, size_t i, struct req_test *t)
{
	static const char *const keys[] = { "stdin", "expected_stdout", "input_file",
					    "output_file", NULL };
	const struct config *cfg = c->cfg;
	char path[96];
	int rc;

	snprintf(path, sizeof(path), "tests[%zu]", i);
	if (open_object(c, o, path, "invalid_type", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "tests[%zu].stdin", i);
	rc = opt_string(c, o, "stdin", path, &t->stdin_data, &t->stdin_len);
	if (rc < 0)
		return -EINVAL;
	if (rc == 0)
		t->stdin_data = xstrdup("");
	if (json_body_over_cap(t->stdin_len, cfg->max_test_stdin_bytes)) {
		refuse(c->e, "stdin_too_large", path, "%s is larger than %zu bytes", path,
		       cfg->max_test_stdin_bytes);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "tests[%zu].expected_stdout", i);
	if (opt_string(c, o, "expected_stdout", path, &t->expected, &t->expected_len) < 0)
		return -EINVAL;
	if (t->expected && json_body_over_cap(t->expected_len, cfg->max_expected_bytes)) {
		refuse(c->e, "expected_output_too_large", path, "%s is larger than %zu bytes",
		       path, cfg->max_expected_bytes);
		return -EINVAL;
	}
	if (test_filename(c, o, i, "input_file", &t->input_file) < 0 ||
	    test_filename(c, o, i, "output_file", &t->output_file) < 0)
		return -EINVAL;
	return 0;
}

/*
 * A test's input and output files are made and read in the job directory:
 * neither may be a file the request or the build owns there (the source,
 * the artifact), and they must differ.
 */
static int check_test_files(struct native_ctx *c)
{
	const struct job_request *r = c->r;
	char path[96];

	for (size_t i = 0; i < r->ntests; i++) {
		const struct req_test *t = &r->tests[i];
		const char *names[2] = { t->input_file, t->output_file };
		const char *keys[2] = { "input_file", "output_file" };

		for (int k = 0; k < 2; k++) {
			if (!names[k])
				continue;
			snprintf(path, sizeof(path), "tests[%zu].%s", i, keys[k]);
			for (size_t f = 0; f < r->nfiles; f++) {
				if (strcmp(names[k], r->files[f].name) == 0) {
					refuse(c->e, "invalid_filename", path,
					       "%s: '%s' is a file of the request", path,
					       names[k]);
					return -EINVAL;
				}
			}
			if (r->artifact && strcmp(names[k], r->artifact) == 0) {
				refuse(c->e, "invalid_filename", path,
				       "%s: '%s' is the build's output", path, names[k]);
				return -EINVAL;
			}
		}
		if (t->input_file && t->output_file && strcmp(t->input_file, t->output_file) == 0) {
			snprintf(path, sizeof(path), "tests[%zu].output_file", i);
			refuse(c->e, "invalid_filename", path, "%s: the same file as input_file", path);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_tests(struct native_ctx *c, const cJSON *root)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "tests");
	struct job_request *r = c->r;
	const cJSON *v;
	size_t n;

	if (!a) {
		refuse(c->e, "missing_field", "tests", "tests is required");
		return -EINVAL;
	}
	if (!cJSON_IsArray(a)) {
		refuse(c->e, "invalid_type", "tests", "tests must be an array");
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n == 0) {
		refuse(c->e, "no_tests", "tests", "at least one test is required");
		return -EINVAL;
	}
	if (json_body_over_cap(n, c->cfg->max_tests)) {
		refuse(c->e, "too_many_tests", "tests", "at most %u tests are allowed",
		       c->cfg->max_tests);
		return -EINVAL;
	}
	r->tests = xcalloc(n, sizeof(*r->tests));
	cJSON_ArrayForEach(v, a) {
		/* counted before parsing so request_free releases a half-done test */
		r->ntests++;
		if (parse_test(c, v, r->ntests - 1, &r->tests[r->ntests - 1]) < 0)
			return -EINVAL;
	}
	return 0;
}

/* A client file name field of o, named path in errors: 0 absent, 1 present
 * and valid, -EINVAL bad. */
static int opt_filename_at(struct native_ctx *c, const cJSON *o, const char *key,
			   const char *path, char **out)
{
	char why[128];
	size_t len;
	char *s = NULL;
	int rc = opt_string(c, o, key, path, &s, &len);

	if (rc <= 0)
		return rc;
	if (validate_filename(s, len, why, sizeof(why)) < 0) {
		refuse(c->e, "invalid_filename", path, "%s: %s", path, why);
		free(s);
		return -EINVAL;
	}
	*out = s;
	return 1;
}

static int opt_filename(struct native_ctx *c, const cJSON *root, const char *key, char **out)
{
	return opt_filename_at(c, root, key, key, out);
}

/* Source: required, valid UTF-8, capped. */
static int parse_source(struct native_ctx *c, const cJSON *root, struct req_file *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "source");

	if (!v) {
		refuse(c->e, "missing_field", "source", "source is required");
		return -EINVAL;
	}
	if (!cJSON_IsString(v)) {
		refuse(c->e, "invalid_type", "source", "source must be a string");
		return -EINVAL;
	}
	f->data = json_body_bytes(v, &c->m, &f->len);
	if (json_body_over_cap(f->len, c->cfg->max_source_bytes)) {
		refuse(c->e, "source_too_large", "source", "source is larger than %zu bytes",
		       c->cfg->max_source_bytes);
		return -EINVAL;
	}
	if (!utf8_valid(f->data, f->len)) {
		refuse(c->e, "invalid_utf8", "source", "source is not valid UTF-8");
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
			refuse(c->e, "invalid_filename", "source_filename",
			       "source_filename: language %s wants a %s file, not '%s'", lang->id,
			       strrchr(lang->source_default, '.'), src);
			goto out;
		}
		/* not named: the default, or the entry class the source declares */
		if (!src)
			src = request_default_source(lang, r->files[0].data);
		if (!src) {
			refuse(c->e, "missing_field", "source_filename",
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
		refuse(c->e, "missing_field", "language", "language is required");
		return -EINVAL;
	}
	if (!cJSON_IsString(v)) {
		refuse(c->e, "invalid_type", "language", "language must be a string");
		return -EINVAL;
	}
	c->r->lang = langtab_find(t, v->valuestring);
	if (!c->r->lang) {
		refuse(c->e, "unknown_language", "language", "unknown language '%.64s'",
		       v->valuestring);
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
		refuse(c->e, "invalid_type", "files", "files must be an array");
		return -EINVAL;
	}
	if (json_body_over_cap((size_t)cJSON_GetArraySize(a), c->cfg->max_files)) {
		refuse(c->e, "too_many_files", "files", "at most %u extra files are allowed",
		       c->cfg->max_files);
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
		if (open_object(c, o, path, "invalid_type", keys, KEY_AT_OBJECT) < 0)
			return -EINVAL;
		snprintf(path, sizeof(path), "files[%zu].name", i);
		rc = opt_filename_at(c, o, "name", path, &f->name);
		if (rc == 0)
			refuse(c->e, "missing_field", path, "%s is required", path);
		if (rc <= 0)
			return -EINVAL;
		r->nfiles++;
		for (size_t k = 0; k + 1 < r->nfiles; k++) {
			if (strcmp(r->files[k].name, f->name) == 0) {
				refuse(c->e, "invalid_filename", path,
				       "%s: '%s' is already the source or another file", path,
				       f->name);
				return -EINVAL;
			}
		}
		if (r->artifact && strcmp(r->artifact, f->name) == 0) {
			refuse(c->e, "invalid_filename", path, "%s: '%s' is the build's output", path,
			       f->name);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "files[%zu].content", i);
		v = cJSON_GetObjectItemCaseSensitive(o, "content");
		if (!v || !cJSON_IsString(v)) {
			refuse(c->e, v ? "invalid_type" : "missing_field", path,
			       v ? "%s must be a string" : "%s is required", path);
			return -EINVAL;
		}
		b64 = cJSON_GetObjectItemCaseSensitive(o, "base64_encoded");
		if (b64 && !cJSON_IsBool(b64)) {
			refuse(c->e, "invalid_type", path, "files[%zu].base64_encoded must be true or "
			       "false", i);
			return -EINVAL;
		}
		if (json_body_file_content(v, &c->m, cJSON_IsTrue(b64), &f->data, &f->len) < 0) {
			refuse(c->e, "invalid_base64", path, "%s is not valid base64", path);
			return -EINVAL;
		}
		if (json_body_over_cap(f->len, c->cfg->max_file_bytes)) {
			refuse(c->e, "file_too_large", path, "%s is larger than %zu bytes", path,
			       c->cfg->max_file_bytes);
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

/* A tolerance of "compare": a finite number from 0 to 1. */
static int parse_tolerance(struct native_ctx *c, const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > 1) {
		refuse(c->e, "invalid_compare", "compare", "compare.%s must be a number from 0 to 1",
		       key);
		return -EINVAL;
	}
	*out = v->valuedouble;
	return 0;
}

/*
 * "compare": "exact" (the default), "tokens", "float", or an object
 * {"mode": ..., "absolute_tolerance": x, "relative_tolerance": y}, the
 * tolerances for "float" only.
 */
static int parse_compare(struct native_ctx *c, const cJSON *root, struct compare_spec *spec)
{
	static const char *const keys[] = { "mode", "absolute_tolerance", "relative_tolerance",
					    NULL };
	static const struct { const char *name; enum compare_mode mode; } modes[] = {
		{ "exact", COMPARE_EXACT }, { "tokens", COMPARE_TOKENS }, { "float", COMPARE_FLOAT },
	};
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "compare");
	const cJSON *mode = v;
	bool found = false;

	spec->mode = COMPARE_EXACT;
	spec->abs_tol = spec->rel_tol = COMPARE_FLOAT_DEFAULT_TOL;
	if (!v)
		return 0;
	if (cJSON_IsObject(v)) {
		if (open_object(c, v, "compare", "invalid_type", keys, KEY_AT_OBJECT) < 0)
			return -EINVAL;
		mode = cJSON_GetObjectItemCaseSensitive(v, "mode");
		if (!mode) {
			refuse(c->e, "missing_field", "compare.mode", "compare.mode is required");
			return -EINVAL;
		}
	}
	if (!cJSON_IsString(mode)) {
		refuse(c->e, "invalid_type", "compare",
		       "compare must be a string or an object with a mode");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(mode->valuestring, modes[i].name) == 0) {
			spec->mode = modes[i].mode;
			found = true;
		}
	}
	if (!found) {
		refuse(c->e, "invalid_compare", "compare",
		       "unknown comparison '%.32s' (exact, tokens or float)", mode->valuestring);
		return -EINVAL;
	}
	if (!cJSON_IsObject(v))
		return 0;
	if (spec->mode != COMPARE_FLOAT &&
	    (cJSON_GetObjectItemCaseSensitive(v, "absolute_tolerance") ||
	     cJSON_GetObjectItemCaseSensitive(v, "relative_tolerance"))) {
		refuse(c->e, "invalid_compare", "compare",
		       "tolerances apply to the float comparison only");
		return -EINVAL;
	}
	if (parse_tolerance(c, v, "absolute_tolerance", &spec->abs_tol) < 0 ||
	    parse_tolerance(c, v, "relative_tolerance", &spec->rel_tol) < 0)
		return -EINVAL;
	return 0;
}

/* An optional boolean field of o: 0 absent, 1 read into *out, -EINVAL bad. */
static int opt_bool(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
		    bool *out)
{
	const cJSON *v;
	int rc = opt_field(c, o, key, path, cJSON_IsBool, "true or false", &v);

	if (rc > 0)
		*out = cJSON_IsTrue(v);
	return rc;
}

/* A group's "tests": indexes of the request's tests, each once. */
static int parse_group_tests(struct native_ctx *c, const cJSON *o, size_t gi,
			     struct req_group *g)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "tests");
	size_t ntests = c->r->ntests;
	bool *seen;
	const cJSON *v;
	char path[96];

	snprintf(path, sizeof(path), "groups[%zu].tests", gi);
	if (!a) {
		refuse(c->e, "missing_field", path, "%s is required", path);
		return -EINVAL;
	}
	if (!cJSON_IsArray(a)) {
		refuse(c->e, "invalid_type", path, "%s must be an array of test indexes", path);
		return -EINVAL;
	}
	if (cJSON_GetArraySize(a) == 0) {
		refuse(c->e, "invalid_groups", path, "%s must name at least one test", path);
		return -EINVAL;
	}
	/* no more entries than tests: a longer list repeats one */
	if ((size_t)cJSON_GetArraySize(a) > ntests) {
		refuse(c->e, "invalid_groups", path, "%s names more tests than the request has (%zu)",
		       path, ntests);
		return -EINVAL;
	}
	g->tests = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*g->tests));
	seen = xcalloc(ntests, sizeof(*seen));
	cJSON_ArrayForEach(v, a) {
		double x = v->valuedouble;

		snprintf(path, sizeof(path), "groups[%zu].tests[%zu]", gi, g->ntests);
		if (!cJSON_IsNumber(v)) {
			refuse(c->e, "invalid_type", path, "%s must be an integer test index", path);
			goto bad;
		}
		if (!(x >= 0 && x < (double)ntests)) {
			refuse(c->e, "invalid_groups", path,
			       "%s: there is no test %.6g (indexes go from 0 to %zu)", path, x,
			       ntests - 1);
			goto bad;
		}
		if (x != floor(x)) {
			refuse(c->e, "invalid_type", path, "%s must be an integer test index", path);
			goto bad;
		}
		if (seen[(size_t)x]) {
			refuse(c->e, "invalid_groups", path, "%s: test %zu is already in the group",
			       path, (size_t)x);
			goto bad;
		}
		seen[(size_t)x] = true;
		g->tests[g->ntests++] = (size_t)x;
	}
	free(seen);
	return 0;
bad:
	free(seen);
	return -EINVAL;
}

static int parse_group(struct native_ctx *c, const cJSON *o, size_t gi, struct req_group *g)
{
	static const char *const keys[] = { "tests", "stop_on_failure", "points", NULL };
	const cJSON *v;
	char path[96];

	snprintf(path, sizeof(path), "groups[%zu]", gi);
	if (open_object(c, o, path, "invalid_type", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	if (parse_group_tests(c, o, gi, g) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "groups[%zu].stop_on_failure", gi);
	if (opt_bool(c, o, "stop_on_failure", path, &g->stop_on_failure) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "groups[%zu].points", gi);
	v = cJSON_GetObjectItemCaseSensitive(o, "points");
	if (v && !cJSON_IsNumber(v)) {
		refuse(c->e, "invalid_type", path, "%s must be a number", path);
		return -EINVAL;
	}
	if (v && !(v->valuedouble >= 0 && v->valuedouble <= REQ_MAX_POINTS)) {
		refuse(c->e, "invalid_groups", path, "%s must be a number from 0 to %.0f", path,
		       REQ_MAX_POINTS);
		return -EINVAL;
	}
	g->points = v ? v->valuedouble : 0;
	return 0;
}

/*
 * "stop_on_failure" and "groups" (after the tests, whose indexes the
 * groups name).
 */
static int parse_groups(struct native_ctx *c, const cJSON *root)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "groups");
	struct job_request *r = c->r;
	const cJSON *v;
	size_t n;

	if (opt_bool(c, root, "stop_on_failure", "stop_on_failure", &r->stop_on_failure) < 0)
		return -EINVAL;
	if (!a)
		return 0;
	if (!cJSON_IsArray(a)) {
		refuse(c->e, "invalid_type", "groups", "groups must be an array");
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n > REQ_MAX_GROUPS) {
		refuse(c->e, "too_many_groups", "groups", "at most %d groups are allowed",
		       REQ_MAX_GROUPS);
		return -EINVAL;
	}
	r->has_groups = true;
	/* one slot at least: the walk below need not know n */
	r->groups = xcalloc(n ? n : 1, sizeof(*r->groups));
	cJSON_ArrayForEach(v, a) {
		/* counted first, so request_free releases a half-done group */
		r->ngroups++;
		if (parse_group(c, v, r->ngroups - 1, &r->groups[r->ngroups - 1]) < 0)
			return -EINVAL;
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
	if (open_object(c, o, key, "invalid_type", keys, KEY_WITHIN) < 0)
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
		refuse(c->e, "invalid_checker", "checker",
		       "a request has an interactor or a checker, not both (the interactor "
		       "gives the verdict)");
		return -EINVAL;
	}
	if (compare && (r->interactor || r->checker)) {
		refuse(c->e, r->interactor ? "invalid_interactor" : "invalid_checker", "compare",
		       "compare does not apply: the %s gives the verdict",
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
		refuse(c->e, "invalid_interactor", path,
		       "%s: an interactive test talks through stdin and stdout, not files", path);
		return -EINVAL;
	}
	return 0;
}

int api_run_parse(const char *body, size_t len, const struct langtab *t,
		  const struct config *cfg, struct job_request **out,
		  struct req_error *e)
{
	static const char *const keys[] = { "language", "source", "source_filename",
					    "artifact_filename", "build", "run", "tests",
					    "compare", "files", "interactor", "checker",
					    "stop_on_failure", "groups", NULL };
	struct native_ctx c = { .cfg = cfg, .e = e };
	cJSON *root = NULL;
	int rc = -EINVAL;

	/* The HTTP layer reads up to the larger of the two APIs' caps. */
	if (json_body_over_cap(len, cfg->max_run_body_bytes)) {
		refuse(e, "body_too_large", "", "request body exceeds %zu bytes",
		       cfg->max_run_body_bytes);
		e->http_status = 413;
		goto out;
	}
	root = json_body_parse(body, len, &c.m);
	if (!root) {
		refuse(e, "invalid_json", "", "the body is not valid JSON");
		goto out;
	}
	if (open_object(&c, root, "", "invalid_json", keys, KEY_AT_KEY) < 0 ||
	    parse_program_fields(&c, root, t) < 0 || parse_tests(&c, root) < 0 ||
	    check_test_files(&c) < 0 || parse_groups(&c, root) < 0 ||
	    parse_compare(&c, root, &c.r->compare) < 0 ||
	    parse_program(&c, root, "interactor", t, &c.r->interactor) < 0 ||
	    parse_program(&c, root, "checker", t, &c.r->checker) < 0 || check_judge(&c, root) < 0)
		goto out;
	*out = c.r;
	c.r = NULL;
	rc = 0;
out:
	request_free(c.r);
	cJSON_Delete(root);
	return rc;
}
