#include "autoconf.h"

#include "worker/http/api_judge0.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/lang/validate.h"
#include "common/limits.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "common/util.h"
#include "worker/http/callback.h"
#include "worker/judge/zipfiles.h"

/* ---- parsing -------------------------------------------------------- */

#define J0_MAX_OPTIONS 512
/* Names looked at in the box after the run, at most (a program may leave
 * a million). */
#define J0_FILESYSTEM_ENTRIES 10000

static void judge0_job_free(void *p)
{
	struct judge0_job *j = p;

	if (j) {
		free(j->stored);
		free(j->callback);
		free(j->expected);
	}
	free(j);
}

struct j0_ctx {
	const cJSON *sub;
	const struct json_body_marker *m;
	bool base64;
	const struct config *cfg;
	cJSON *errors;         /* field -> [messages] */
	cJSON *stored;         /* the normalized submission */
};

static void field_error(struct j0_ctx *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void field_error(struct j0_ctx *c, const char *field, const char *fmt, ...)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(c->errors, field);
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!list)
		list = cJSON_AddArrayToObject(c->errors, field);
	cJSON_AddItemToArray(list, cJSON_CreateString(msg));
}

static const cJSON *get(const struct j0_ctx *c, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->sub, field);

	return v && !cJSON_IsNull(v) ? v : NULL;
}

/*
 * A number as Rails reads one: a JSON number, or a string holding one.
 * 0 and *out; 1 when absent (default); -EINVAL when given but not a
 * number.
 */
static int get_number(struct j0_ctx *c, const char *field, double *out)
{
	const cJSON *v = get(c, field);
	char *end;

	if (!v)
		return 1;
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 0;
	}
	if (cJSON_IsString(v) && v->valuestring[0]) {
		*out = strtod(v->valuestring, &end);
		if (*end == '\0' && isfinite(*out))
			return 0;
	}
	field_error(c, field, "is not a number");
	return -EINVAL;
}

/* A decimal field with Judge0's default and bounds ("15.0" in messages). */
static double decimal_field(struct j0_ctx *c, const char *field, double def, double min,
			    bool min_inclusive, double max)
{
	double v = def;
	int rc = get_number(c, field, &v);

	if (rc < 0)
		return def;
	if (min_inclusive ? v < min : v <= min) {
		/* submission.rb's lower bounds are integers (0, 1), its upper ones floats */
		field_error(c, field, "must be greater than %s%g", min_inclusive ? "or equal to " :
				      "", min);
		return def;   /* refused: nothing goes on with it */
	}
	if (v > max) {
		field_error(c, field, "must be less than or equal to %.1f", max);
		return def;
	}
	cJSON_AddNumberToObject(c->stored, field, v);
	return v;
}

static long integer_field(struct j0_ctx *c, const char *field, long def, long min,
			  bool min_inclusive, long max)
{
	double v = (double)def;
	int rc = get_number(c, field, &v);

	if (rc < 0)
		return def;
	if (rc == 0 && v != floor(v)) {
		field_error(c, field, "must be an integer");
		return def;
	}
	if (min_inclusive ? v < (double)min : v <= (double)min) {
		field_error(c, field, "must be greater than %s%ld", min_inclusive ? "or equal to " :
				      "", min);
		return def;   /* refused: nothing goes on with it (a billion runs) */
	}
	if (v > (double)max) {
		field_error(c, field, "must be less than or equal to %ld", max);
		return def;
	}
	cJSON_AddNumberToObject(c->stored, field, v);
	return (long)v;
}

static bool bool_field(struct j0_ctx *c, const char *field, bool def)
{
	const cJSON *v = get(c, field);
	bool b = def;

	if (v && cJSON_IsBool(v))
		b = cJSON_IsTrue(v);
	else if (v && cJSON_IsString(v) && !strcmp(v->valuestring, "true"))
		b = true;
	else if (v && cJSON_IsString(v) && !strcmp(v->valuestring, "false"))
		b = false;
	else if (v)
		field_error(c, field, "is not a boolean");
	cJSON_AddBoolToObject(c->stored, field, b);
	return b;
}

/* A short string (compiler_options, command_line_arguments, callback_url). */
static char *string_field(struct j0_ctx *c, const char *field, size_t max)
{
	const cJSON *v = get(c, field);
	size_t len;
	char *s;

	if (!v) {
		cJSON_AddNullToObject(c->stored, field);
		return NULL;
	}
	if (!cJSON_IsString(v)) {
		field_error(c, field, "is not a string");
		return NULL;
	}
	s = json_body_bytes(v, c->m, &len);
	if (len > max) {
		field_error(c, field, "is too long (maximum is %zu characters)", max);
		free(s);
		return NULL;
	}
	if (memchr(s, '\0', len) || !utf8_valid(s, len)) {
		field_error(c, field, "is not valid text");
		free(s);
		return NULL;
	}
	cJSON_AddStringToObject(c->stored, field, s);
	return s;
}

/* Judge0 decodes base64 with Ruby's decode64, which skips line breaks. */
static int decode_base64(const char *s, size_t len, char **out, size_t *outlen)
{
	char *clean = xmalloc(len + 1);
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < len; i++)
		if (s[i] != '\n' && s[i] != '\r')
			clean[n++] = s[i];
	rc = base64_decode(clean, n, out, outlen);
	free(clean);
	return rc;
}

/*
 * A text (source_code, stdin, expected_output, additional_files): its
 * bytes in *out, base64-decoded when the request is (always for
 * additional_files). Stored base64-encoded. 0, 1 when absent, or
 * -EINVAL (not a string, not base64, too long: the field's error kept).
 */
static int text_field(struct j0_ctx *c, const char *field, bool base64, size_t cap, char **out,
		      size_t *len)
{
	const cJSON *v = get(c, field);
	size_t rlen;
	char *raw;
	int rc = 0;

	*out = NULL;
	*len = 0;
	/* "" is no source and no archive, but an empty stdin or expected output */
	if (!v || (cJSON_IsString(v) && !v->valuestring[0] && strcmp(field, "stdin") != 0 &&
		   strcmp(field, "expected_output") != 0)) {
		cJSON_AddNullToObject(c->stored, field);
		return 1;
	}
	if (!cJSON_IsString(v)) {
		field_error(c, field, "is not a string");
		return -EINVAL;
	}
	raw = json_body_bytes(v, c->m, &rlen);
	if (base64) {
		rc = decode_base64(raw, rlen, out, len);
		free(raw);
		if (rc < 0) {
			field_error(c, field, "is not valid base64");
			return -EINVAL;
		}
	} else {
		*out = raw;
		*len = rlen;
	}
	if (cap && *len > cap) {
		field_error(c, field, "is too long (maximum is %zu bytes)", cap);
		free(*out);
		*out = NULL;
		*len = 0;
		return -EINVAL;
	}
	raw = base64_encode(*out, *len);
	cJSON_AddStringToObject(c->stored, field, raw);
	free(raw);
	return 0;
}

static void push_word(char ***v, struct buf *w)
{
	strv_push(v, xstrndup(w->data ? w->data : "", w->len));
	buf_reset(w);
}

/*
 * Words as bash reads the script line Judge0 puts them on ("run_cmd
 * ARGS"): split on blanks, grouped by '...' and "...", a backslash
 * escaping the next byte; nothing is expanded.
 */
static char **split_words(const char *s)
{
	char **v = strv_new();
	bool in_word = false;
	char quote = 0;
	struct buf w;

	buf_init(&w, 0);
	for (; s && *s; s++) {
		if (quote == '\'') {
			if (*s == '\'')
				quote = 0;
			else
				buf_append(&w, s, 1);
		} else if (quote == '"') {
			if (*s == '"')
				quote = 0;
			else if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
				buf_append(&w, ++s, 1);
			else
				buf_append(&w, s, 1);
		} else if (strchr(" \t\n", *s)) {
			if (in_word)
				push_word(&v, &w);
			in_word = false;
		} else {
			in_word = true;
			if (*s == '\'' || *s == '"')
				quote = *s;
			else if (*s == '\\' && s[1])
				buf_append(&w, ++s, 1);
			else
				buf_append(&w, s, 1);
		}
	}
	if (in_word)
		push_word(&v, &w);
	buf_free(&w);
	return v;
}

static const struct lang *language_field(struct j0_ctx *c, const struct langtab *t)
{
	const cJSON *v = get(c, "language_id");
	const struct lang *l;
	double id = 0;

	if (!v) {
		field_error(c, "language_id", "can't be blank");
		return NULL;
	}
	if (get_number(c, "language_id", &id) < 0)
		return NULL;
	l = id >= 1 && id <= 1e6 && id == floor(id) ? langtab_find_judge0(t, (unsigned)id) : NULL;
	if (!l) {
		field_error(c, "language_id", "language with id %.0f doesn't exist", id);
		return NULL;
	}
	cJSON_AddNumberToObject(c->stored, "language_id", id);
	return l;
}

/* The limits Judge0's fields set, over the language's, within the server's. */
static void judge0_limits(struct j0_ctx *c, struct job_request *r)
{
	struct limits want = { 0 };
	double cpu = decimal_field(c, "cpu_time_limit", J0_CPU_TIME, 0, true, J0_MAX_CPU_TIME);
	double extra = decimal_field(c, "cpu_extra_time", J0_CPU_EXTRA, 0, true, J0_MAX_CPU_EXTRA);
	double wall = decimal_field(c, "wall_time_limit", J0_WALL_TIME, 1, true, J0_MAX_WALL_TIME);
	long mem = integer_field(c, "memory_limit", J0_MEMORY, 2048, true, J0_MAX_MEMORY);
	long procs = integer_field(c, "max_processes_and_or_threads", J0_PROCESSES, 0, false,
				   J0_MAX_PROCESSES);
	long fsize = integer_field(c, "max_file_size", J0_FILE_SIZE, 0, true, J0_MAX_FILE_SIZE);

	/* validated and kept; goboxd's limits are the whole program's */
	integer_field(c, "stack_limit", J0_STACK, 0, true, J0_MAX_STACK);
	bool_field(c, "enable_per_process_and_thread_time_limit", false);
	bool_field(c, "enable_per_process_and_thread_memory_limit", false);
	/* isolate's -x: the time past the limit before the kill, not more time */
	(void)extra;
	want.cpu_ms = (uint32_t)(cpu * 1000.0);
	want.wall_ms = (uint32_t)(wall * 1000.0);
	want.memory_kb = (uint64_t)mem;
	want.max_processes = (uint32_t)procs;
	want.fsize_kb = fsize > 0 ? (uint64_t)fsize : 1;
	if (!want.cpu_ms)
		want.cpu_ms = 1;
	limits_merge(&r->run_limits, &r->lang->run.limits, &want, &c->cfg->limits_max);
	limits_merge(&r->build_limits, &r->lang->build.limits, NULL, &c->cfg->limits_max);
}

static void judge0_flags(struct j0_ctx *c, struct job_request *r, const char *options)
{
	const struct lang_step *b = &r->lang->build;
	char **words = split_words(options);
	char why[256];

	r->build_flags = NULL;
	if (!words[0]) {
		strv_free(words);
		r->build_flags = strv_dup(b->default_flags);
		return;
	}
	if (!r->lang->has_build) {
		field_error(c, "compiler_options",
			    "setting compiler options is only allowed for compiled languages");
		strv_free(words);
		return;
	}
	for (size_t i = 0; words[i]; i++) {
		if (validate_flag((const char *const *)b->flag_allow, strv_len(b->flag_allow),
				  words[i], why, sizeof(why)) < 0) {
			field_error(c, "compiler_options", "%s", why);
			strv_free(words);
			return;
		}
	}
	r->build_flags = words;
}

static void judge0_files(struct j0_ctx *c, struct job_request *r, char *source, size_t len)
{
	const struct lang *lang = r->lang;
	struct zipfiles_bounds zb = {
		.max_files = c->cfg->max_files,
		.max_file = c->cfg->max_file_bytes,
		.max_total = c->cfg->max_run_body_bytes,
	};
	struct req_file *extra = NULL;
	size_t nextra = 0, zlen;
	char *zip = NULL, err[256];

	r->files = xcalloc(1, sizeof(*r->files));
	r->nfiles = 1;
	r->files[0].data = source;
	r->files[0].len = len;
	r->files[0].name = lang->source_from_request ? request_default_source(lang, source) :
						       xstrdup(lang->source_filename);
	if (!r->files[0].name)
		field_error(c, "source_code", "names no class to run");
	if (text_field(c, "additional_files", true, 0, &zip, &zlen) != 0)
		return;
	if (zipfiles_unpack(zip, zlen, &zb, &extra, &nextra, err, sizeof(err)) < 0) {
		field_error(c, "additional_files", "%s", err);
		free(zip);
		return;
	}
	free(zip);
	r->files = xreallocarray(r->files, 1 + nextra, sizeof(*r->files));
	for (size_t i = 0; i < nextra; i++) {
		if (r->files[0].name && validate_paths_clash(extra[i].name, r->files[0].name)) {
			field_error(c, "additional_files", "entry \"%s\": the source file's name",
				    extra[i].name);
			for (size_t k = i; k < nextra; k++) {
				free(extra[k].name);
				free(extra[k].data);
			}
			break;
		}
		r->files[r->nfiles++] = extra[i];
	}
	free(extra);
}

/*
 * A Multi-file program's files: the archive alone, its entry (the
 * language's source file, Judge0's run script) first. Judge0 finds a
 * missing run script when it runs it; goboxd says so at once.
 */
static void judge0_project_files(struct j0_ctx *c, struct job_request *r)
{
	const char *entry = r->lang->source_filename;
	struct zipfiles_bounds zb = {
		.max_files = c->cfg->max_files,
		.max_file = c->cfg->max_file_bytes,
		.max_total = c->cfg->max_run_body_bytes,
	};
	struct req_file *files = NULL;
	size_t n = 0, zlen, at = 0;
	char *zip = NULL, err[256];

	if (text_field(c, "additional_files", true, 0, &zip, &zlen) != 0) {
		if (!zip)
			field_error(c, "additional_files", "can't be blank");
		return;
	}
	if (zipfiles_unpack(zip, zlen, &zb, &files, &n, err, sizeof(err)) < 0) {
		field_error(c, "additional_files", "%s", err);
		free(zip);
		return;
	}
	free(zip);
	while (at < n && strcmp(files[at].name, entry) != 0)
		at++;
	if (at == n) {
		field_error(c, "additional_files", "has no %s script", entry);
		for (size_t i = 0; i < n; i++) {
			free(files[i].name);
			free(files[i].data);
		}
		free(files);
		return;
	}
	if (at > 0) {
		struct req_file first = files[at];

		memmove(files + 1, files, at * sizeof(*files));
		files[0] = first;
	}
	r->files = files;
	r->nfiles = n;
}

/* number_of_runs copies of the one test; a failed run ends them (Judge0). */
static void judge0_tests(struct job_request *r, long runs, char *in, size_t inlen)
{
	r->ntests = (size_t)(runs < 1 ? 1 : runs);
	r->tests = xcalloc(r->ntests, sizeof(*r->tests));
	for (size_t i = 0; i < r->ntests; i++) {
		r->tests[i].stdin_data = xmalloc(inlen + 1);
		memcpy(r->tests[i].stdin_data, in ? in : "", inlen);
		r->tests[i].stdin_data[inlen] = '\0';
		r->tests[i].stdin_len = inlen;
	}
	r->stop_on_failure = true;
}

/* A new job as every Judge0 submission starts: what is the same for all. */
static struct job_request *judge0_job_new(const struct config *cfg, struct judge0_job *j)
{
	struct job_request *r = xcalloc(1, sizeof(*r));

	/* its answer carries the output in base64, counted twice: its steps
	 * capture the streams interleaved too */
	r->capture = (struct req_capture){ .budget_format = OUTTEXT_BASE64_TWICE,
					   .budget_bytes = cfg->max_job_output_bytes };
	r->files_out = (struct outfiles_bounds){
		/* the box after the run, bounded as the files it came with */
		.max_files = cfg->max_files,
		.max_file = cfg->max_file_bytes,
		.max_total = cfg->max_run_body_bytes,
		.max_entries = J0_FILESYSTEM_ENTRIES,
	};
	r->api = j;
	r->api_free = judge0_job_free;
	/* the build's output is one stream, as Judge0's --stderr-to-stdout */
	r->interleave = true;
	return r;
}

/* The program: its language's settings, and its files (the source, or a
 * multi-file program's archive); source (slen bytes) is taken over. */
static void judge0_program(struct j0_ctx *c, struct job_request *r, const char *options,
			   const char *args, char *source, size_t slen)
{
	judge0_limits(c, r);
	judge0_flags(c, r, options);
	r->run_flags = strv_dup(r->lang->run.default_flags);
	r->run_args = args ? split_words(args) : NULL;
	if (r->lang->judge0_project) {
		judge0_project_files(c, r);
		free(source);
	} else if (source) {
		judge0_files(c, r, source, slen);
		if (r->lang->artifact_from_request && r->files[0].name)
			r->artifact = request_default_artifact(r->lang, &r->files[0]);
		else if (r->lang->artifact)
			r->artifact = xstrdup(r->lang->artifact);
	}
}

int api_judge0_parse(const cJSON *sub, const struct json_body_marker *m, bool base64,
		     const struct langtab *t, const struct config *cfg, struct job_request **job,
		     char **stored, char **callback, cJSON **errors)
{
	struct j0_ctx c = { .sub = sub, .m = m, .base64 = base64, .cfg = cfg };
	struct judge0_job *j = xcalloc(1, sizeof(*j));
	struct job_request *r = judge0_job_new(cfg, j);
	char *source = NULL, *in = NULL, *options, *args, *url;
	size_t slen = 0, inlen = 0;
	bool project;
	long runs;
	int given;
	char why[256];

	*job = NULL;
	*stored = NULL;
	*callback = NULL;
	*errors = NULL;
	c.errors = cJSON_CreateObject();
	c.stored = cJSON_CreateObject();
	if (!cJSON_IsObject(sub)) {
		field_error(&c, "submission", "must be a JSON object");
		goto out;
	}
	r->lang = language_field(&c, t);
	project = r->lang && r->lang->judge0_project;
	/* blank however it came: "" or base64 of nothing ("\n") */
	given = text_field(&c, "source_code", base64, cfg->max_source_bytes, &source, &slen);
	if (project && given == 0 && slen > 0)
		field_error(&c, "source_code", "must be blank");
	else if (!project && (given == 1 || (source && slen == 0)))
		field_error(&c, "source_code", "can't be blank");
	text_field(&c, "stdin", base64, cfg->max_test_stdin_bytes, &in, &inlen);
	if (text_field(&c, "expected_output", base64, cfg->max_expected_bytes, &j->expected,
		       &j->expected_len) < 0)
		j->expected = NULL;
	options = string_field(&c, "compiler_options", J0_MAX_OPTIONS);
	args = string_field(&c, "command_line_arguments", J0_MAX_OPTIONS);
	url = string_field(&c, "callback_url", 2048);
	runs = integer_field(&c, "number_of_runs", J0_RUNS, 0, false, J0_MAX_RUNS);
	j->redirect = bool_field(&c, "redirect_stderr_to_stdout", false);
	/* the tests' network, where the operator allows it (--network); not
	 * given, the language's default */
	if (bool_field(&c, "enable_network", r->lang && r->lang->network && cfg->network)) {
		if (cfg->network)
			r->network = true;
		else
			field_error(&c, "enable_network", "enabling network is not allowed");
	}
	if (url && callback_url_check(url, why, sizeof(why)) < 0)
		field_error(&c, "callback_url", "%s", why);
	if (r->lang) {
		judge0_program(&c, r, options, args, source, slen);
		source = NULL;
	}
	judge0_tests(r, runs, in, inlen);
	free(options);
	free(args);
	if (!cJSON_GetArraySize(c.errors)) {
		*job = r;
		r = NULL;
		*stored = cJSON_PrintUnformatted(c.stored);
		j->stored = xstrdup(*stored);
		j->callback = url ? xstrdup(url) : NULL;
		*callback = url;
		url = NULL;
	}
	free(url);
out:
	free(source);
	free(in);
	request_free(r);
	cJSON_Delete(c.stored);
	if (*job) {
		cJSON_Delete(c.errors);
		return 0;
	}
	*errors = c.errors;
	return -EINVAL;
}

char *api_judge0_error(const char *message)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "error", message);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* What Judge0's parser kept with a job: NULL for another API's job. */
static const struct judge0_job *judge0_job_of(const struct job_request *req)
{
	return req->api_free == judge0_job_free ? req->api : NULL;
}

const char *api_judge0_stored(const struct job_request *req)
{
	const struct judge0_job *j = judge0_job_of(req);

	return j ? j->stored : NULL;
}

const char *api_judge0_callback(const struct job_request *req)
{
	const struct judge0_job *j = judge0_job_of(req);

	return j ? j->callback : NULL;
}

struct judge0_view api_judge0_job_view(const struct job_request *req)
{
	const struct judge0_job *j = judge0_job_of(req);
	struct judge0_view v;

	if (j)
		return j->view;
	api_judge0_show_view(NULL, &v, NULL, 0);
	return v;
}

static int refuse_waited(struct api_refusal *no, int status, const char *message,
			 const char *code)
{
	no->status = status;
	no->body = api_judge0_error(message);
	snprintf(no->code, sizeof(no->code), "%s", code);
	return status == 413 ? -E2BIG : -EINVAL;
}

int api_judge0_parse_waited(const struct http_request *r, const struct langtab *t,
			    const struct config *cfg, struct job_request **job,
			    struct api_refusal *no)
{
	struct json_body_marker m;
	struct judge0_view v;
	cJSON *root, *errors = NULL;
	char *stored = NULL, *callback = NULL, err[256];
	int rc;

	*job = NULL;
	if (api_judge0_show_view(r, &v, err, sizeof(err)) < 0)
		return refuse_waited(no, 400, err, "invalid_view");
	if (json_body_over_cap(r->body.len, cfg->max_run_body_bytes))
		return refuse_waited(no, 413, "request body too large", "body_too_large");
	root = json_body_parse(r->body.data ? r->body.data : "", r->body.len, &m);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return refuse_waited(no, 400, "the body must be one JSON object (a submission)",
				     "invalid_body");
	}
	rc = api_judge0_parse(root, &m, v.base64, t, cfg, job, &stored, &callback, &errors);
	cJSON_Delete(root);
	free(stored);
	free(callback);
	if (rc < 0) {
		no->status = 422;
		no->body = cJSON_PrintUnformatted(errors);
		snprintf(no->code, sizeof(no->code), "invalid_submission");
		cJSON_Delete(errors);
		return rc;
	}
	((struct judge0_job *)(*job)->api)->view = v;
	return 0;
}
