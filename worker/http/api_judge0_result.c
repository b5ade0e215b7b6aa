#include "autoconf.h"

#include "worker/http/api_judge0.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base64.h"
#include "common/lang/validate.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "common/util.h"
#include "worker/http/callback.h"
#include "worker/judge/zipfiles.h"

static const char *const status_names[] = {
	[J0_IN_QUEUE] = "In Queue",
	[J0_PROCESSING] = "Processing",
	[J0_ACCEPTED] = "Accepted",
	[J0_WRONG_ANSWER] = "Wrong Answer",
	[J0_TIME_LIMIT] = "Time Limit Exceeded",
	[J0_COMPILATION_ERROR] = "Compilation Error",
	[J0_SIGSEGV] = "Runtime Error (SIGSEGV)",
	[J0_SIGXFSZ] = "Runtime Error (SIGXFSZ)",
	[J0_SIGFPE] = "Runtime Error (SIGFPE)",
	[J0_SIGABRT] = "Runtime Error (SIGABRT)",
	[J0_NZEC] = "Runtime Error (NZEC)",
	[J0_RUNTIME_OTHER] = "Runtime Error (Other)",
	[J0_INTERNAL_ERROR] = "Internal Error",
	[J0_EXEC_FORMAT_ERROR] = "Exec Format Error",
};

const char *api_judge0_status_name(int id)
{
	return id >= J0_IN_QUEUE && id <= J0_EXEC_FORMAT_ERROR ? status_names[id] : NULL;
}

/* ---- fields --------------------------------------------------------- */

/* Every field a submission shows, in Judge0 CE 1.13.1's order: its
 * serializer gives the submissions table's columns (db/schema.rb, less
 * id), then status and language. Fields of later Judge0 versions stay
 * out of "*" (a strict client of 1.13.1 refuses a field it does not
 * know); post_execution_filesystem (1.14's, where 1.14 puts it) is
 * shown to a client that names it. */
static const char *const judge0_fields[] = {
	"source_code", "language_id", "stdin", "expected_output", "stdout", "status_id",
	"created_at", "finished_at", "time", "memory", "stderr", "token", "number_of_runs",
	"cpu_time_limit", "cpu_extra_time", "wall_time_limit", "memory_limit", "stack_limit",
	"max_processes_and_or_threads", "enable_per_process_and_thread_time_limit",
	"enable_per_process_and_thread_memory_limit", "max_file_size", "compile_output",
	"exit_code", "exit_signal", "message", "wall_time", "compiler_options",
	"command_line_arguments", "redirect_stderr_to_stdout", "callback_url",
	"additional_files", "enable_network", "post_execution_filesystem", "status", "language",
};

static const char *const default_fields[] = {
	"token", "time", "memory", "stdout", "stderr", "compile_output", "message", "status",
};

/* The field's index in judge0_fields, or -ENOENT. */
static int field_index(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(judge0_fields); i++)
		if (strlen(judge0_fields[i]) == len && !strncmp(judge0_fields[i], name, len))
			return (int)i;
	return -ENOENT;
}

static unsigned long long field_bit(const char *name)
{
	int i = field_index(name, strlen(name));

	return i < 0 ? 0 : 1ull << i;
}

int api_judge0_view(const struct http_request *r, struct judge0_view *v, char *err,
		    size_t errlen)
{
	char *b64 = r ? http_query_param(r, "base64_encoded") : NULL;
	char *fields = r ? http_query_param(r, "fields") : NULL;
	struct buf bad;
	int rc = 0;

	v->base64 = b64 && !strcmp(b64, "true");
	v->fields = 0;
	free(b64);
	buf_init(&bad, 0);
	for (const char *p = fields ? fields : ""; *p;) {
		size_t n = strcspn(p, ",");
		int i = field_index(p, n);

		if (n == 1 && *p == '*')
			v->fields |= ~field_bit("post_execution_filesystem");
		else if (i >= 0)
			v->fields |= 1ull << i;
		else if (n)
			buf_printf(&bad, "%s%.*s", bad.len ? ", " : "", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	if (bad.len) {
		snprintf(err, errlen, "invalid fields: [%s]", bad.data);
		rc = -EINVAL;
	}
	if (!v->fields)
		for (size_t i = 0; i < ARRAY_SIZE(default_fields); i++)
			v->fields |= field_bit(default_fields[i]);
	buf_free(&bad);
	free(fields);
	return rc;
}

/* ---- parsing -------------------------------------------------------- */

#define J0_MAX_OPTIONS 512
/* Names looked at in the box after the run, at most (a program may leave
 * a million). */
#define J0_FILESYSTEM_ENTRIES 10000

/* What the job's answer needs beyond the job model. */
struct judge0_job {
	char *stored;          /* the submission as the store keeps it */
	char *callback;        /* its callback_url, NULL: none */
	char *expected;        /* NULL: none given */
	size_t expected_len;
	bool redirect;         /* redirect_stderr_to_stdout */
	struct judge0_view view; /* how a waiting client asked to see it */
};

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
	if (bool_field(&c, "enable_network", false))
		field_error(&c, "enable_network", "enabling network is not allowed");
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

/* ---- results -------------------------------------------------------- */

/* Judge0's comparison: each line's trailing blanks, then the text's, go. */
static size_t strip_judge0(const char *s, size_t n, char *out)
{
	size_t o = 0, line = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '\n') {
			size_t end = i;

			while (end > line && strchr(" \t\r\v\f", s[end - 1]) && s[end - 1])
				end--;
			memcpy(out + o, s + line, end - line);
			o += end - line;
			if (i < n)
				out[o++] = '\n';
			line = i + 1;
		}
	}
	while (o && (strchr(" \t\r\n\v\f", out[o - 1]) || out[o - 1] == '\0'))
		o--;
	return o;
}

static bool judge0_same(const char *got, size_t glen, const char *want, size_t wlen)
{
	char *a = xmalloc(glen + 1), *b = xmalloc(wlen + 1);
	size_t na = strip_judge0(got, glen, a), nb = strip_judge0(want, wlen, b);
	bool same = na == nb && memcmp(a, b, na) == 0;

	free(a);
	free(b);
	return same;
}

static void add_text(cJSON *o, const char *key, const struct buf *b)
{
	char *e;

	if (!b->len) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	e = base64_encode(b->data, b->len);
	cJSON_AddStringToObject(o, key, e);
	free(e);
}

static void add_seconds(cJSON *o, const char *key, double s)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", s);
	cJSON_AddStringToObject(o, key, text);
}

/* One run's status and message, from its outcome and its output. */
static int run_status(const struct judge0_job *j, const struct step_result *r, char *msg,
		      size_t n)
{
	const struct run_outcome *o = &r->outcome;
	const struct buf *out = j->redirect ? &r->interleaved : &r->out;

	msg[0] = '\0';
	if (o->internal_error) {
		snprintf(msg, n, "%s", r->internal_msg);
		return J0_INTERNAL_ERROR;
	}
	if (o->timed_out) {
		snprintf(msg, n, "Time limit exceeded");
		return J0_TIME_LIMIT;
	}
	if (o->output_limited) {
		snprintf(msg, n, "Output limit exceeded");
		return J0_SIGXFSZ;
	}
	if (o->oom) {
		snprintf(msg, n, "Memory limit exceeded");
		return J0_RUNTIME_OTHER;
	}
	if (o->term_signal) {
		snprintf(msg, n, "Caught fatal signal %d", o->term_signal);
		switch (o->term_signal) {
		case SIGSEGV:
			return J0_SIGSEGV;
		case SIGXFSZ:
			return J0_SIGXFSZ;
		case SIGFPE:
			return J0_SIGFPE;
		case SIGABRT:
			return J0_SIGABRT;
		default:
			return J0_RUNTIME_OTHER;
		}
	}
	if (o->disk_full) {
		snprintf(msg, n, "Disk limit exceeded");
		return J0_RUNTIME_OTHER;
	}
	if (o->exec_format_error) {
		snprintf(msg, n, "Exec format error");
		return J0_EXEC_FORMAT_ERROR;
	}
	if (o->exited && o->exit_code != 0) {
		snprintf(msg, n, "Exited with error status %d", o->exit_code);
		return J0_NZEC;
	}
	if (!j->expected || judge0_same(out->data ? out->data : "", out->len, j->expected,
					j->expected_len))
		return J0_ACCEPTED;
	return J0_WRONG_ANSWER;
}

static char *print_result(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	cJSON_Delete(o);
	return s;
}

char *api_judge0_result_failed(const char *message)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "status_id", J0_INTERNAL_ERROR);
	cJSON_AddStringToObject(o, "message", message);
	return print_result(o);
}

/* Judge0 1.14's post_execution_filesystem: a zip of what the run left in
 * its directory, base64-encoded; null when it left nothing readable. */
static void add_filesystem(cJSON *o, const struct outfiles *files)
{
	char *zip = NULL, *e, err[256];
	size_t len = 0;

	if (!files->n || zipfiles_pack(files, &zip, &len, err, sizeof(err)) < 0) {
		if (files->n)
			log_warn("post_execution_filesystem: %s", err);
		cJSON_AddNullToObject(o, "post_execution_filesystem");
		return;
	}
	e = base64_encode(zip, len);
	cJSON_AddStringToObject(o, "post_execution_filesystem", e);
	free(e);
	free(zip);
}

char *api_judge0_result(const struct job_request *req, const struct job_result *res, int rc)
{
	const struct judge0_job *j = req->api;
	cJSON *o = cJSON_CreateObject();
	const struct step_result *last = NULL;
	double cpu = 0, wall = 0, mem = 0;
	size_t ran = 0;
	int status = J0_ACCEPTED;
	char msg[256] = "";

	if (rc < 0 || (res->internal_error && res->build_status != BS_FAILED)) {
		cJSON_Delete(o);
		return api_judge0_result_failed(res->internal_msg[0] ? res->internal_msg :
					       "the sandbox failed");
	}
	if (res->has_build && res->build_status == BS_FAILED) {
		struct buf tle;

		cJSON_AddNumberToObject(o, "status_id", J0_COMPILATION_ERROR);
		if (res->build.outcome.timed_out) {
			buf_init(&tle, 0);
			buf_puts(&tle, "Compilation time limit exceeded.");
			add_text(o, "compile_output", &tle);
			buf_free(&tle);
		} else {
			add_text(o, "compile_output", &res->build.interleaved);
		}
		return print_result(o);
	}
	for (size_t i = 0; i < res->ntests && res->tests[i].ran; i++) {
		last = &res->tests[i].r;
		status = run_status(j, last, msg, sizeof(msg));
		cpu += (double)last->cpu_ms / 1000.0;
		wall += (double)last->wall_ms / 1000.0;
		mem += (double)last->memory_peak_kb;
		ran++;
		if (status != J0_ACCEPTED)
			break;
	}
	if (!last)
		return api_judge0_result_failed("the program did not run");
	cJSON_AddNumberToObject(o, "status_id", status);
	if (res->has_build)
		add_text(o, "compile_output", &res->build.interleaved);
	add_text(o, "stdout", j->redirect ? &last->interleaved : &last->out);
	if (j->redirect) {
		cJSON_AddNullToObject(o, "stderr");
	} else {
		add_text(o, "stderr", &last->err);
	}
	if (msg[0])
		cJSON_AddStringToObject(o, "message", msg);
	/* isolate_job.rb: metadata's exitcode, or 0 (a signal, a kill) */
	cJSON_AddNumberToObject(o, "exit_code", last->outcome.exited ? last->outcome.exit_code : 0);
	if (last->outcome.term_signal)
		cJSON_AddNumberToObject(o, "exit_signal", last->outcome.term_signal);
	add_seconds(o, "time", cpu / (double)ran);
	add_seconds(o, "wall_time", wall / (double)ran);
	cJSON_AddNumberToObject(o, "memory", floor(mem / (double)ran));
	add_filesystem(o, &res->files);
	return print_result(o);
}

/* ---- showing -------------------------------------------------------- */

static void add_time(cJSON *o, const char *key, uint64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char text[64];

	if (!ms) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	gmtime_r(&s, &tm);
	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ms % 1000));
	cJSON_AddStringToObject(o, key, text);
}

/* A base64 text as shown: kept encoded, or decoded when it is UTF-8. */
static bool add_shown_text(cJSON *o, const char *key, const cJSON *from, bool base64)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
	char *d = NULL;
	size_t n = 0;

	if (!cJSON_IsString(v)) {
		cJSON_AddNullToObject(o, key);
		return true;
	}
	if (base64) {
		cJSON_AddStringToObject(o, key, v->valuestring);
		return true;
	}
	if (base64_decode(v->valuestring, strlen(v->valuestring), &d, &n) < 0 ||
	    memchr(d, '\0', n) || !utf8_valid(d, n)) {
		free(d);
		return false;
	}
	cJSON_AddStringToObject(o, key, d);
	free(d);
	return true;
}

static void copy_item(cJSON *o, const char *key, const cJSON *from)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);

	cJSON_AddItemToObject(o, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

static void add_decimal(cJSON *o, const char *key, const cJSON *from)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
	char text[32];

	if (!cJSON_IsNumber(v)) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	/* the shortest that reads back, at least one decimal: Rails' "0.25", "5.0" */
	for (int digits = 1; digits <= 15; digits++) {
		snprintf(text, sizeof(text), "%.*f", digits, v->valuedouble);
		if (strtod(text, NULL) == v->valuedouble)
			break;
	}
	cJSON_AddStringToObject(o, key, text);
}

static bool is_text(const char *f)
{
	static const char *const texts[] = { "source_code", "stdin", "expected_output", "stdout",
					     "stderr", "compile_output" };

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		if (!strcmp(f, texts[i]))
			return true;
	return false;
}

static bool is_decimal(const char *f)
{
	return !strcmp(f, "cpu_time_limit") || !strcmp(f, "cpu_extra_time") ||
	       !strcmp(f, "wall_time_limit");
}

cJSON *api_judge0_show(const struct store_sub *sub, const struct judge0_view *v,
		       const struct langtab *t)
{
	cJSON *req = cJSON_Parse(sub->request);
	cJSON *res = sub->result ? cJSON_Parse(sub->result) : cJSON_CreateObject();
	cJSON *o = cJSON_CreateObject();
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(res, "status_id");
	int status = sub->state == STORE_QUEUED ? J0_IN_QUEUE :
		     sub->state == STORE_RUNNING ? J0_PROCESSING :
		     cJSON_IsNumber(sid) ? sid->valueint : J0_INTERNAL_ERROR;
	bool ok = true;

	for (size_t i = 0; i < ARRAY_SIZE(judge0_fields) && ok; i++) {
		const char *f = judge0_fields[i];
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(req, f) ? req : res;

		if (!(v->fields & (1ull << i)))
			continue;
		if (is_text(f)) {
			ok = add_shown_text(o, f, from, v->base64);
		} else if (is_decimal(f)) {
			add_decimal(o, f, req);
		} else if (!strcmp(f, "token")) {
			cJSON_AddStringToObject(o, f, sub->token);
		} else if (!strcmp(f, "status_id")) {
			cJSON_AddNumberToObject(o, f, status);
		} else if (!strcmp(f, "status")) {
			cJSON *st = cJSON_AddObjectToObject(o, f);

			cJSON_AddNumberToObject(st, "id", status);
			cJSON_AddStringToObject(st, "description", api_judge0_status_name(status) ?
						 api_judge0_status_name(status) : "Internal Error");
		} else if (!strcmp(f, "language")) {
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(req, "language_id");
			const struct lang *l = cJSON_IsNumber(id) ?
						       langtab_find_judge0(t, (unsigned)id->valueint) :
						       NULL;
			cJSON *lo = cJSON_AddObjectToObject(o, f);

			cJSON_AddNumberToObject(lo, "id", cJSON_IsNumber(id) ? id->valuedouble : 0);
			if (l)
				cJSON_AddStringToObject(lo, "name", l->judge0_name);
			else
				cJSON_AddNullToObject(lo, "name");
		} else if (!strcmp(f, "created_at")) {
			add_time(o, f, sub->created_ms);
		} else if (!strcmp(f, "finished_at")) {
			add_time(o, f, sub->finished_ms);
		} else if (!strcmp(f, "message") && v->base64) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(res, f);
			char *e = cJSON_IsString(m) ? base64_encode(m->valuestring,
								   strlen(m->valuestring)) : NULL;

			if (e)
				cJSON_AddStringToObject(o, f, e);
			else
				cJSON_AddNullToObject(o, f);
			free(e);
		} else {
			copy_item(o, f, from);
		}
	}
	cJSON_Delete(req);
	cJSON_Delete(res);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

char *api_judge0_error(const char *message)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "error", message);
	return print_result(o);
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
	api_judge0_view(NULL, &v, NULL, 0);
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
	if (api_judge0_view(r, &v, err, sizeof(err)) < 0)
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

char *api_judge0_callback_body(const struct store_sub *sub, const struct langtab *t)
{
	struct judge0_view v;
	cJSON *shown;
	char *body;

	api_judge0_view(NULL, &v, NULL, 0);
	v.base64 = true;
	shown = api_judge0_show(sub, &v, t);
	body = shown ? cJSON_PrintUnformatted(shown) : NULL;
	cJSON_Delete(shown);
	return body;
}
