/*
 * Reading a request body as JSON, for every wire format: one value and
 * nothing after it, strings with their exact
 * bytes (NUL included), files decoded from base64, the configured caps.
 */
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
 * so values carry their exact bytes and lengths. The marker is that code
 * point; a parse sets it, and every string read from its tree needs it.
 */
struct json_body_marker {
	bool active;
	char utf8[4];
	char escape[13]; /* "\uDBFF\uDFFD" */
};

/*
 * The body as a cJSON tree (free with cJSON_Delete) and its marker in *m;
 * NULL when the body is not one JSON value, with only whitespace after it.
 */
cJSON *json_body_parse(const char *body, size_t len, struct json_body_marker *m);
/* A string value's exact bytes: malloc'd, NUL-terminated, length in *len. */
char *json_body_bytes(const cJSON *item, const struct json_body_marker *m, size_t *len);
/*
 * A file's content as the client sent it: the string's bytes, decoded from
 * base64 when base64 is true. 0, or -EINVAL when that is not valid base64.
 */
int json_body_file_content(const cJSON *v, const struct json_body_marker *m, bool base64,
			   char **data, size_t *len);
/* Whether n is over a configured cap, where a cap of zero means none. */
bool json_body_over_cap(size_t n, size_t cap);

#endif
