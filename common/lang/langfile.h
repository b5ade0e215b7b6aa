/*
 * Reading one language file, the reads its parts share. langtab.c reads
 * its top level (and the table's rules), langstep.c its steps, langapi.c
 * its sections for the other APIs. Each read that fails returns -EINVAL
 * with "file:line: reason" in c->err.
 */
#ifndef GOBOXD_LANGFILE_H
#define GOBOXD_LANGFILE_H

#include <stdbool.h>
#include <stddef.h>

struct limits;
struct yamlutil_node;

/* Where we are while parsing one file. */
struct lctx {
	const char *file;
	const struct limits *max;
	char *err;
	size_t errlen;
};

/* "file:line: " and the message in c->err; returns -EINVAL. */
int langfile_fail(struct lctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Refuse a key of map not in allowed (NULL-terminated). where: the map's
 * own key for messages, NULL at the top of the file.
 */
int langfile_check_keys(struct lctx *c, const struct yamlutil_node *map, const char *const *allowed,
			const char *where);
/* "key:" with nothing after it, "~" or "null". */
bool langfile_is_empty(const struct yamlutil_node *n);
/* n must be a mapping: key names it in the message. */
int langfile_want_map(struct lctx *c, const struct yamlutil_node *n, const char *key);
/* yamlutil_str and yamlutil_strv for this file. */
int langfile_str(struct lctx *c, const struct yamlutil_node *n, const char *key, char **out);
int langfile_strv(struct lctx *c, const struct yamlutil_node *n, const char *key, char ***out);
/*
 * The string under a required key of map, and its node (for later
 * messages). section: the map's own key ("codize"), NULL at the top.
 */
int langfile_required_str(struct lctx *c, const struct yamlutil_node *map, const char *section,
			  const char *key, char **out, const struct yamlutil_node **node);
/* Line of item i of a list node; a null node (empty list) has no items. */
int langfile_item_line(const struct yamlutil_node *n, size_t i);
/* The line of "key:" in map, or the map's own line where it has none. */
int langfile_key_line(const struct yamlutil_node *map, const char *key);
/* An id's rule, that of aliases and of other APIs' names too. */
bool langfile_valid_id(const char *s);

#endif
