/*
 * A small document tree over libyaml, with line numbers kept on every node
 * so that config and language errors can say "file:line: reason".
 */
#ifndef GOBOXD_YAMLUTIL_H
#define GOBOXD_YAMLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum yamlutil_type { YAMLUTIL_SCALAR, YAMLUTIL_SEQ, YAMLUTIL_MAP };

struct yamlutil_node {
	enum yamlutil_type type;
	int line;              /* 1-based */
	char *scalar;          /* YAMLUTIL_SCALAR */
	bool quoted;           /* scalar was quoted in the source */
	size_t n;              /* YAMLUTIL_SEQ / YAMLUTIL_MAP: item count */
	struct yamlutil_node **items;  /* YAMLUTIL_SEQ items, or YAMLUTIL_MAP values */
	char **keys;           /* YAMLUTIL_MAP keys (scalars only) */
	int *key_lines;        /* YAMLUTIL_MAP key lines */
};

/* Parse one document. 0 and *out, or -EINVAL with "path:line: reason" in err.
 * An empty document gives an empty map. Anchors/aliases are refused. */
int yamlutil_load_file(const char *path, struct yamlutil_node **out, char *err, size_t errlen);
int yamlutil_load_string(const char *name, const char *text, size_t len, struct yamlutil_node **out,
		     char *err, size_t errlen);
void yamlutil_free(struct yamlutil_node *n);

/* Map lookup; NULL if absent or n is not a map. */
const struct yamlutil_node *yamlutil_get(const struct yamlutil_node *map, const char *key);

/*
 * Typed reads. Each returns 0, or -EINVAL with "file:line: key: reason" in err
 * (file is the name given to the loader and kept by the caller).
 */
int yamlutil_str(const struct yamlutil_node *n, const char *file, const char *key, char **out,
	      char *err, size_t errlen);
int yamlutil_u64(const struct yamlutil_node *n, const char *file, const char *key, uint64_t min,
	      uint64_t max, uint64_t *out, char *err, size_t errlen);
/* Seconds as a decimal ("2.5") to milliseconds. */
int yamlutil_seconds_ms(const struct yamlutil_node *n, const char *file, const char *key,
		     uint64_t max_ms, uint64_t *out, char *err, size_t errlen);
int yamlutil_bool(const struct yamlutil_node *n, const char *file, const char *key, bool *out,
	       char *err, size_t errlen);
/* A sequence of scalars to a string vector (common/strv.h). */
int yamlutil_strv(const struct yamlutil_node *n, const char *file, const char *key, char ***out,
	       char *err, size_t errlen);

#endif
