/* Standard base64 (RFC 4648, with padding), as the Codize API uses it. */
#ifndef GOBOXD_BASE64_H
#define GOBOXD_BASE64_H

#include <stddef.h>

/* Encoded length of n bytes, without the NUL. */
size_t base64_encoded_len(size_t n);
/* Encode into a malloc'd NUL-terminated string; NULL when n is too big to
 * encode in a size_t. */
char *base64_encode(const void *data, size_t n);
/* A character's value in the standard alphabet (0-63), -1 for any other ('=' too). */
int base64_value(unsigned char c);
/*
 * Strict decode: only the standard alphabet, correct padding, no
 * whitespace. Returns 0 and a malloc'd buffer (NUL-terminated for
 * convenience) with its length, or -EINVAL.
 */
int base64_decode(const char *s, size_t len, char **out, size_t *outlen);

#endif
