#include "autoconf.h"

/* The files a /run request asks back (api_run_return.h). */
#include "worker/http/api_run_return.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"
#include "common/strv.h"

/* Names the walk looks at: more than a job disk holds by default
 * (--job-disk-files 16384), few enough to be read at once. */
#define RETURN_MAX_ENTRIES 20000

static int read_patterns(struct native_ctx *c, const cJSON *a, char ***out)
{
	char path[48], why[160];
	const cJSON *p;
	char **v;
	size_t i = 0;

	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", "return_files",
				    "return_files must be an array of strings");
		return -EINVAL;
	}
	if ((size_t)cJSON_GetArraySize(a) > API_RUN_RETURN_MAX_PATTERNS) {
		api_run_read_refuse(c->e, "invalid_return_files", "return_files",
				    "return_files: at most %d patterns", API_RUN_RETURN_MAX_PATTERNS);
		return -EINVAL;
	}
	v = strv_new();
	cJSON_ArrayForEach(p, a) {
		size_t len;
		char *s;

		snprintf(path, sizeof(path), "return_files[%zu]", i++);
		if (!cJSON_IsString(p)) {
			api_run_read_refuse(c->e, "invalid_type", path, "%s must be a string", path);
			goto fail;
		}
		s = json_body_bytes(p, &c->m, &len);
		if (validate_path_pattern(s, len, why, sizeof(why)) < 0) {
			api_run_read_refuse(c->e, "invalid_return_files", path, "%s: %s", path, why);
			free(s);
			goto fail;
		}
		strv_push(&v, s);
	}
	*out = v;
	return 0;
fail:
	strv_free(v);
	return -EINVAL;
}

static size_t *cap_of(struct outfiles_bounds *b, const char *key)
{
	if (strcmp(key, "max_files") == 0)
		return &b->max_files;
	if (strcmp(key, "max_file_bytes") == 0)
		return &b->max_file;
	return &b->max_total;
}

/* The request's caps into b, each at most b's (the server's). */
static int read_caps(struct native_ctx *c, const cJSON *root, struct outfiles_bounds *b)
{
	static const char *const keys[] = { "max_files", "max_file_bytes", "max_total_bytes",
					    NULL };
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "return_files_limits");
	const cJSON *v;

	if (!o)
		return 0;
	if (api_run_read_object(c, o, "return_files_limits", "invalid_limits", keys,
				KEY_AT_KEY) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(v, o) {
		size_t *cap = cap_of(b, v->string);
		uint64_t u = 0;
		char path[64];

		if (api_run_read_count(v, *cap, &u) < 0) {
			snprintf(path, sizeof(path), "return_files_limits.%s", v->string);
			api_run_read_refuse(c->e, "invalid_limits", path,
					    "%s must be an integer above 0 (leave it out for the "
					    "server's cap)", path);
			return -EINVAL;
		}
		*cap = (size_t)u;
	}
	return 0;
}

int api_run_return_parse(struct native_ctx *c, const cJSON *root)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "return_files");
	struct outfiles_bounds b = {
		.max_files = c->cfg->max_return_files,
		.max_file = c->cfg->max_return_file_bytes,
		.max_total = c->cfg->max_return_total_bytes,
		.max_entries = RETURN_MAX_ENTRIES,
	};

	if (!a) {
		if (!cJSON_GetObjectItemCaseSensitive(root, "return_files_limits"))
			return 0;
		api_run_read_refuse(c->e, "invalid_return_files", "return_files_limits",
				    "return_files_limits applies only with return_files");
		return -EINVAL;
	}
	if (read_patterns(c, a, &b.match) < 0)
		return -EINVAL;
	if (read_caps(c, root, &b) < 0) {
		strv_free(b.match);
		return -EINVAL;
	}
	/* nothing named: the directory is not even walked */
	if (!b.match[0])
		b.max_files = 0;
	c->r->files_out = b;
	return 0;
}
