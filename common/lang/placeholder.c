#include "autoconf.h"

#include "common/lang/placeholder.h"

#include "common/buf.h"
#include "common/strv.h"
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
 * "{{", name, name length, end after "}}"), 1 when there is none, or -EINVAL for
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
		return -EINVAL;
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
			return -EINVAL;
		}
		if (ph_table[id].list && where != PH_IN_ARG) {
			snprintf(err, errlen, "{{%s}} expands to a list and is not allowed in %s",
				 ph_table[id].name, where_name[where]);
			return -EINVAL;
		}
		if (ph_table[id].list && (start != tmpl || *end)) {
			snprintf(err, errlen,
				 "{{%s}} expands to a list and must be a whole argument, not part of \"%s\"",
				 ph_table[id].name, tmpl);
			return -EINVAL;
		}
		p = end;
	}
	if (rc < 0) {
		snprintf(err, errlen, "unclosed '{{' in \"%s\"", tmpl);
		return -EINVAL;
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
	return buf_steal(&b, NULL);
fail:
	buf_free(&b);
	errno = -rc;
	return NULL;
}

/* Each string of list, copied to the end of *v. */
static void push_copies(char ***v, const char *const *list)
{
	for (; list && *list; list++)
		strv_push(v, xstrdup(*list));
}

static int expand_arg(char ***v, const char *arg, const struct expand_ctx *ctx)
{
	char *s;

	if (!strcmp(arg, "{{flags}}")) {
		if (ctx->flags && ctx->flags[0])
			push_copies(v, ctx->flags);
		else if (ctx->default_flags)
			push_copies(v, ctx->default_flags);
		return 0;
	}
	if (!strcmp(arg, "{{sources}}")) {
		if (ctx->sources && ctx->sources[0]) {
			push_copies(v, ctx->sources);
			return 0;
		}
		if (!ctx->source)
			return -EINVAL;
		strv_push(v, xstrdup(ctx->source));
		return 0;
	}
	s = placeholder_expand_one(arg, ctx);
	if (!s)
		return -errno;
	strv_push(v, s);
	return 0;
}

int placeholder_expand_argv(const char *cmd_tmpl, char *const *args, const struct expand_ctx *ctx,
			    char ***out)
{
	char **v;
	char *cmd;
	int rc = 0;

	cmd = placeholder_expand_one(cmd_tmpl, ctx);
	if (!cmd)
		return -errno;
	v = strv_new();
	strv_push(&v, cmd);
	for (size_t i = 0; rc == 0 && args && args[i]; i++)
		rc = expand_arg(&v, args[i], ctx);
	if (rc < 0) {
		strv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int placeholder_expand_env(char *const *env, const struct expand_ctx *ctx, char ***out)
{
	/* an empty env still gives a valid, empty vector */
	char **v = strv_new();

	for (size_t i = 0; env && env[i]; i++) {
		char *s = placeholder_expand_one(env[i], ctx);

		if (!s) {
			int rc = -errno;

			strv_free(v);
			return rc;
		}
		strv_push(&v, s);
	}
	*out = v;
	return 0;
}
