/* The JSON reading both wire formats share. */
#ifndef GOBOXD_JSON_BODY_H
#define GOBOXD_JSON_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * cJSON decodes "\u0000" into a NUL that ends its C string, and it keeps no
 * length. Before parsing, every such escape is rewritten into the escape of
 * a private-use code point that the body does not otherwise contain; every
 * string taken from the tree turns that code point back into a NUL byte,
 * so values carry their exact bytes and lengths.
 */
struct nul_marker {
	bool active;
	char utf8[4];
	char escape[13]; /* "\uDBFF\uDFFD" */
};

/* Parse body into a cJSON tree, NUL escapes preserved as described above. */
cJSON *json_parse(const char *body, size_t len, struct nul_marker *m);
/* A malloc'd, NUL-terminated copy of a JSON string value with its length. */
char *json_bytes(const cJSON *item, const struct nul_marker *m, size_t *len);
/*
 * A file's content as the client sent it: the JSON string's bytes, decoded
 * from base64 when it says so. 0, or -1 when that is not valid base64.
 */
int file_content(const cJSON *v, const struct nul_marker *m, bool base64, char **data,
		 size_t *len);
/* Cap check where a zero cap in the config means "no cap". */
bool over(size_t n, size_t cap);

#endif
