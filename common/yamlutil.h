/*
 * A small document tree over libyaml, with line numbers kept on every node
 * so that config and language errors can say "file:line: reason".
 */
#ifndef GOBOXD_YAMLUTIL_H
#define GOBOXD_YAMLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ynode_type { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ynode_type type;
	int line;              /* 1-based */
	char *scalar;          /* Y_SCALAR */
	bool quoted;           /* scalar was quoted in the source */
	size_t n;              /* Y_SEQ / Y_MAP: item count */
	struct ynode **items;  /* Y_SEQ items, or Y_MAP values */
	char **keys;           /* Y_MAP keys (scalars only) */
	int *key_lines;        /* Y_MAP key lines */
};

/* Parse one document. 0 and *out, or -EINVAL with "path:line: reason" in err.
 * An empty document gives an empty map. Anchors/aliases are refused. */
int yaml_load_file(const char *path, struct ynode **out, char *err, size_t errlen);
int yaml_load_string(const char *name, const char *text, size_t len, struct ynode **out,
		     char *err, size_t errlen);
void ynode_free(struct ynode *n);

/* Map lookup; NULL if absent or n is not a map. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);

/*
 * Typed reads. Each returns 0, or -EINVAL with "file:line: key: reason" in err
 * (file is the name given to the loader and kept by the caller).
 */
int ynode_str(const struct ynode *n, const char *file, const char *key, char **out,
	      char *err, size_t errlen);
int ynode_u64(const struct ynode *n, const char *file, const char *key, uint64_t min,
	      uint64_t max, uint64_t *out, char *err, size_t errlen);
/* Seconds as a decimal ("2.5") to milliseconds. */
int ynode_seconds_ms(const struct ynode *n, const char *file, const char *key,
		     uint64_t max_ms, uint64_t *out, char *err, size_t errlen);
int ynode_bool(const struct ynode *n, const char *file, const char *key, bool *out,
	       char *err, size_t errlen);
/* A sequence of scalars to a string vector (common/strv.h). */
int ynode_strv(const struct ynode *n, const char *file, const char *key, char ***out,
	       char *err, size_t errlen);

#endif
