#include "autoconf.h"

/*
 * How Judge0 shows a stored submission: the table of its fields, a
 * client's ?fields= and ?base64_encoded= read against it, and each field
 * in Judge0's form (texts decoded or kept in base64, Rails' decimals and
 * times, the status and the language as objects).
 */
#include "worker/http/api_judge0_show.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base64.h"
#include "common/buf.h"
#include "common/utf8.h"
#include "common/util.h"
#include "worker/http/api_judge0_status.h"

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

int api_judge0_show_view(const struct http_request *r, struct judge0_view *v, char *err,
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

char *api_judge0_show_callback_body(const struct store_sub *sub, const struct langtab *t)
{
	struct judge0_view v;
	cJSON *shown;
	char *body;

	api_judge0_show_view(NULL, &v, NULL, 0);
	v.base64 = true;
	shown = api_judge0_show(sub, &v, t);
	body = shown ? cJSON_PrintUnformatted(shown) : NULL;
	cJSON_Delete(shown);
	return body;
}
