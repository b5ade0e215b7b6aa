#include "autoconf.h"

/*
 * The reads every part of a language file shares: its messages, which
 * name the file and line, and the typed reads that name the key they read
 * (langfile.h).
 */
#include "common/lang/langfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/lang/lang.h"
#include "common/yamlutil.h"

int langfile_fail(struct lctx *c, int line, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%d: %s", c->file, line, why);
	return -EINVAL;
}

/* Reject keys the schema does not know, so that typos fail loudly. */
int langfile_check_keys(struct lctx *c, const struct yamlutil_node *map, const char *const *allowed,
			const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		size_t k;

		for (k = 0; allowed[k]; k++)
			if (!strcmp(map->keys[i], allowed[k]))
				break;
		if (allowed[k])
			continue;
		if (!where && !strcmp(map->keys[i], "languages"))
			return langfile_fail(c, map->key_lines[i],
					     "unknown key 'languages': a file holds one language, "
					     "whose keys are the top level of the file");
		return langfile_fail(c, map->key_lines[i], "unknown key '%s'%s%s", map->keys[i],
				     where ? " in " : "", where ? where : "");
	}
	return 0;
}

/* "key:" with nothing after it, "~" or "null". */
bool langfile_is_empty(const struct yamlutil_node *n)
{
	return n && n->type == YAMLUTIL_SCALAR && !n->quoted &&
	       (!n->scalar[0] || !strcmp(n->scalar, "~") || !strcasecmp(n->scalar, "null"));
}

int langfile_want_map(struct lctx *c, const struct yamlutil_node *n, const char *key)
{
	if (n->type == YAMLUTIL_MAP)
		return 0;
	return langfile_fail(c, n->line, "%s: expected a mapping", key);
}

int langfile_str(struct lctx *c, const struct yamlutil_node *n, const char *key, char **out)
{
	return yamlutil_str(n, c->file, key, out, c->err, c->errlen);
}

int langfile_strv(struct lctx *c, const struct yamlutil_node *n, const char *key, char ***out)
{
	return yamlutil_strv(n, c->file, key, out, c->err, c->errlen);
}

/*
 * The string under a required key of map, and its node (for later
 * messages). section: the map's own key ("codize"), NULL at the top.
 */
int langfile_required_str(struct lctx *c, const struct yamlutil_node *map, const char *section,
			  const char *key, char **out, const struct yamlutil_node **node)
{
	const struct yamlutil_node *v = yamlutil_get(map, key);
	char full[64];
	char *s = NULL;

	*node = map;
	if (!v) {
		langfile_fail(c, map->line, "%s%smissing required key '%s'",
			      section ? section : "", section ? ": " : "", key);
		return -EINVAL;
	}
	snprintf(full, sizeof(full), "%s%s%s", section ? section : "", section ? "." : "", key);
	if (langfile_str(c, v, full, &s) < 0 || !s)
		return -EINVAL;
	*out = s;
	*node = v;
	return 0;
}

/* Line of item i of a list node; a null node (empty list) has no items. */
int langfile_item_line(const struct yamlutil_node *n, size_t i)
{
	if (!n)
		return 0;
	return n->type == YAMLUTIL_SEQ && i < n->n ? n->items[i]->line : n->line;
}

/* The line of "key:" in map, for errors about what its value lacks (a
 * block mapping's own line is that of its first key, one line lower). */
int langfile_key_line(const struct yamlutil_node *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key))
			return map->key_lines[i];
	return map->line;
}

bool langfile_valid_id(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > LANG_ID_MAX)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr("_+.-", s[i])))
			return false;
	return true;
}
