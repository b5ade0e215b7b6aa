/*
 * API tokens (--auth-tokens FILE): who may use goboxd. The file holds one
 * token per line (blank lines and lines starting with '#' are skipped),
 * each at least AUTH_TOKEN_MIN bytes of printable ASCII without blanks.
 * A request is let in when its token equals one of them, compared in
 * constant time: every token's SHA-256 against the given one's, all of
 * them, whatever matches first. The file is read when the configuration
 * is (start, SIGHUP), so a reload takes new tokens.
 */
#ifndef GOBOXD_AUTH_H
#define GOBOXD_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define AUTH_TOKEN_MIN 16
#define AUTH_TOKEN_MAX 256
#define AUTH_TOKENS_MAX 10000

struct auth;

/* 0 and *out, or -EINVAL ("FILE:LINE: reason") / another errno. A file
 * without any token is refused: it would let nobody in. */
int auth_load(const char *path, struct auth **out, char *err, size_t errlen);
void auth_free(struct auth *a);
/* Whether token (len bytes) is one of a's. */
bool auth_check(const struct auth *a, const char *token, size_t len);
size_t auth_count(const struct auth *a);

#endif
