#include "autoconf.h"

#include "common/lang/placeholder.h"

#include "common/buf.h"
#include "common/util.h"
#include "common/lang/jailpath.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ph_id {
	PH_SOURCE, PH_STEM, PH_STEM_CLASS, PH_ARTIFACT, PH_SOURCES, PH_FLAGS, PH_BOX, PH_TMP,
	PH_MEMORY_MB
};

static const struct {
	const char *name;
	bool list;
} ph_table[] = {
	[PH_SOURCE] = { "source", false },
	[PH_STEM] = { "stem", false },
	[PH_STEM_CLASS] = { "stem_class", false },
	[PH_ARTIFACT] = { "artifact", false },
	[PH_SOURCES] = { "sources", true },
	[PH_FLAGS] = { "flags", true },
	[PH_BOX] = { "box", false },
	[PH_TMP] = { "tmp", false },
	[PH_MEMORY_MB] = { "memory_mb", false },
};

static int ph_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(ph_table); i++)
		if (strlen(ph_table[i].name) == len && !memcmp(ph_table[i].name, name, len))
			return (int)i;
	return -1;
}

/*
 * Find the next "{{name}}" at or after p. Returns 0 and the span (start of
 * "{{", name, name length, end after "}}"), 1 when there is none, or -1 for
 * an unclosed "{{".
 */
static int ph_next(const char *p, const char **start, const char **name, size_t *len,
		   const char **end)
{
	const char *open = strstr(p, "{{"), *close;

	if (!open)
		return 1;
	close = strstr(open + 2, "}}");
	if (!close)
		return -1;
	*start = open;
	*name = open + 2;
	*len = (size_t)(close - open - 2);
	*end = close + 2;
	return 0;
}

int placeholder_check(const char *tmpl, enum ph_where where, char *err, size_t errlen)
{
	static const char *const where_name[] = { "cmd", "args", "env" };
	const char *p = tmpl, *start, *name, *end;
	size_t len;
	int rc;

	while ((rc = ph_next(p, &start, &name, &len, &end)) == 0) {
		int id = ph_lookup(name, len);

		if (id < 0) {
			snprintf(err, errlen, "unknown placeholder '{{%.*s}}' in \"%s\"", (int)len,
				 name, tmpl);
			return -1;
		}
		if (ph_table[id].list && where != PH_IN_ARG) {
			snprintf(err, errlen, "{{%s}} expands to a list and is not allowed in %s",
				 ph_table[id].name, where_name[where]);
			return -1;
		}
		if (ph_table[id].list && (start != tmpl || *end)) {
			snprintf(err, errlen,
				 "{{%s}} expands to a list and must be a whole argument, not part of \"%s\"",
				 ph_table[id].name, tmpl);
			return -1;
		}
		p = end;
	}
	if (rc < 0) {
		snprintf(err, errlen, "unclosed '{{' in \"%s\"", tmpl);
		return -1;
	}
	return 0;
}

bool placeholder_uses(const char *tmpl, const char *name)
{
	const char *p = tmpl, *start, *n, *end;
	size_t len;

	while (ph_next(p, &start, &n, &len, &end) == 0) {
		if (len == strlen(name) && !memcmp(n, name, len))
			return true;
		p = end;
	}
	return false;
}

/* The length of name's stem: all of it but its last extension. */
static size_t stem_len(const char *name)
{
	/* A leading dot is part of the name, not an extension. */
	const char *dot = strrchr(name, '.');

	return dot && dot != name ? (size_t)(dot - name) : strlen(name);
}

/*
 * The stem as a JVM class name, by Kotlin's rule for the class that holds
 * a file's top-level functions (PackagePartClassUtils): every character
 * other than a letter or a digit becomes '_', then the first letter is
 * upper-cased, or a '_' goes in front of a leading digit. "my-file.kt"
 * gives My_file, "1x.kt" gives _1x.
 */
static int append_stem_class(struct buf *b, const char *name)
{
	size_t n = stem_len(name);
	int rc = 0;

	if (n > 0 && name[0] >= '0' && name[0] <= '9')
		rc = buf_puts(b, "_");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ch = name[i];

		if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
		    !(ch >= '0' && ch <= '9'))
			ch = '_';
		else if (i == 0 && ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 'a' + 'A');
		rc = buf_append(b, &ch, 1);
	}
	return rc;
}

/* Append the value of a scalar placeholder: 0, -EINVAL when ctx lacks it. */
static int ph_append(struct buf *b, int id, const struct expand_ctx *ctx)
{
	switch (id) {
	case PH_SOURCE:
		return ctx->source ? buf_puts(b, ctx->source) : -EINVAL;
	case PH_STEM:
		if (!ctx->source)
			return -EINVAL;
		return buf_append(b, ctx->source, stem_len(ctx->source));
	case PH_STEM_CLASS:
		return ctx->source ? append_stem_class(b, ctx->source) : -EINVAL;
	case PH_ARTIFACT:
		return ctx->artifact ? buf_puts(b, ctx->artifact) : -EINVAL;
	case PH_BOX:
		return buf_puts(b, ctx->box ? ctx->box : JAILPATH_BOX);
	case PH_TMP:
		return buf_puts(b, ctx->tmp ? ctx->tmp : "/tmp");
	case PH_MEMORY_MB:
		return buf_printf(b, "%lu", ctx->memory_mb);
	default:
		return -EINVAL;
	}
}

char *placeholder_expand_one(const char *tmpl, const struct expand_ctx *ctx)
{
	const char *p = tmpl, *start, *name, *end;
	struct buf b;
	size_t len;
	char *s;
	int rc;

	buf_init(&b, 0);
	while ((rc = ph_next(p, &start, &name, &len, &end)) == 0) {
		int id = ph_lookup(name, len);

		if (id < 0 || ph_table[id].list) {
			rc = -EINVAL;
			goto fail;
		}
		rc = buf_append(&b, p, (size_t)(start - p));
		if (rc == 0)
			rc = ph_append(&b, id, ctx);
		if (rc < 0)
			goto fail;
		p = end;
	}
	if (rc < 0) {
		rc = -EINVAL;
		goto fail;
	}
	rc = buf_puts(&b, p);
	if (rc < 0)
		goto fail;
	s = buf_steal(&b, NULL);
	if (!s)
		errno = ENOMEM;
	return s;
fail:
	buf_free(&b);
	errno = -rc;
	return NULL;
}

void strv_free_array(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

struct vec {
	char **v;
	size_t n, cap;
};

/* Takes ownership of s. */
static int vec_push(struct vec *vec, char *s)
{
	if (!s)
		return -ENOMEM;
	if (vec->n + 1 >= vec->cap) {
		size_t ncap = vec->cap ? vec->cap * 2 : 16;
		char **nv = realloc(vec->v, ncap * sizeof(*nv));

		if (!nv) {
			free(s);
			return -ENOMEM;
		}
		vec->v = nv;
		vec->cap = ncap;
	}
	vec->v[vec->n++] = s;
	vec->v[vec->n] = NULL;
	return 0;
}

static int vec_push_all(struct vec *vec, const char *const *list)
{
	for (; list && *list; list++)
		if (vec_push(vec, strdup(*list)) < 0)
			return -ENOMEM;
	return 0;
}

static int expand_arg(struct vec *vec, const char *arg, const struct lang_step *step,
		      const struct expand_ctx *ctx)
{
	char *s;

	if (!strcmp(arg, "{{flags}}")) {
		if (ctx->flags && ctx->flags[0])
			return vec_push_all(vec, ctx->flags);
		return vec_push_all(vec, (const char *const *)step->default_flags.v);
	}
	if (!strcmp(arg, "{{sources}}")) {
		if (ctx->sources && ctx->sources[0])
			return vec_push_all(vec, ctx->sources);
		if (!ctx->source)
			return -EINVAL;
		return vec_push(vec, strdup(ctx->source));
	}
	s = placeholder_expand_one(arg, ctx);
	if (!s)
		return -errno;
	return vec_push(vec, s);
}

static int vec_finish(struct vec *vec, char ***out)
{
	/* An empty env still gives a valid, empty vector. */
	if (!vec->v) {
		vec->v = calloc(1, sizeof(*vec->v));
		if (!vec->v)
			return -ENOMEM;
	}
	*out = vec->v;
	return 0;
}

int placeholder_expand_argv(const struct lang_step *step, const struct expand_ctx *ctx,
			    char ***out)
{
	struct vec vec = { 0 };
	char *cmd;
	int rc;

	cmd = placeholder_expand_one(step->cmd, ctx);
	if (!cmd)
		return -errno;
	rc = vec_push(&vec, cmd);
	for (size_t i = 0; rc == 0 && i < step->args.n; i++)
		rc = expand_arg(&vec, step->args.v[i], step, ctx);
	if (rc == 0)
		rc = vec_finish(&vec, out);
	if (rc < 0)
		strv_free_array(vec.v);
	/* On success vec_finish handed vec.v to *out. */
	return rc; // NOLINT(clang-analyzer-unix.Malloc)
}

int placeholder_expand_env(const struct lang_step *step, const struct expand_ctx *ctx,
			   char ***out)
{
	struct vec vec = { 0 };
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < step->env.n; i++) {
		char *s = placeholder_expand_one(step->env.v[i], ctx);

		rc = s ? vec_push(&vec, s) : -errno;
	}
	if (rc == 0)
		rc = vec_finish(&vec, out);
	if (rc < 0)
		strv_free_array(vec.v);
	/* On success vec_finish handed vec.v to *out. */
	return rc; // NOLINT(clang-analyzer-unix.Malloc)
}
