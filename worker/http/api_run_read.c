#include "autoconf.h"

/* Reading goboxd's own request (api_run_read.h). */
#include "worker/http/api_run_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"

void api_run_read_refuse(struct req_error *e, const char *code, const char *path,
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

int api_run_read_object(struct native_ctx *c, const cJSON *o, const char *path,
			const char *not_object, const char *const *keys, enum key_report at)
{
	char where[sizeof(c->e->message)];
	const char *what, *sep;
	const cJSON *v;
	bool dup;

	if (!cJSON_IsObject(o)) {
		if (path[0])
			api_run_read_refuse(c->e, not_object, path, "%s must be an object", path);
		else
			api_run_read_refuse(c->e, not_object, "", "the body must be a JSON object");
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
		api_run_read_refuse(c->e, dup ? "invalid_json" : "unknown_field", where, "%s %s",
				    what, where);
		break;
	case KEY_AT_OBJECT:
		api_run_read_refuse(c->e, dup ? "invalid_json" : "unknown_field", path, "%s %s",
				    what, where);
		break;
	case KEY_WITHIN:
		api_run_read_refuse(c->e, dup ? "invalid_json" : "unknown_field", where,
				    "%s: %s %s", path, what, v->string);
		break;
	}
	return -EINVAL;
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
		api_run_read_refuse(c->e, "invalid_type", path, "%s must be %s", path, what);
		return -EINVAL;
	}
	*v = f;
	return 1;
}

int api_run_read_string(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
			char **s, size_t *len)
{
	const cJSON *v;
	int rc = opt_field(c, o, key, path, cJSON_IsString, "a string", &v);

	if (rc > 0)
		*s = json_body_bytes(v, &c->m, len);
	return rc;
}

int api_run_read_bool(struct native_ctx *c, const cJSON *o, const char *key, const char *path,
		      bool *out)
{
	const cJSON *v;
	int rc = opt_field(c, o, key, path, cJSON_IsBool, "true or false", &v);

	if (rc > 0)
		*out = cJSON_IsTrue(v);
	return rc;
}

int api_run_read_count(const cJSON *v, uint64_t max, uint64_t *out)
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

int api_run_read_filename(struct native_ctx *c, const cJSON *o, const char *key,
			  const char *path, char **out)
{
	char why[128];
	size_t len;
	char *s = NULL;
	int rc = api_run_read_string(c, o, key, path, &s, &len);

	if (rc <= 0)
		return rc;
	if (validate_filename(s, len, why, sizeof(why)) < 0) {
		api_run_read_refuse(c->e, "invalid_filename", path, "%s: %s", path, why);
		free(s);
		return -EINVAL;
	}
	*out = s;
	return 1;
}
