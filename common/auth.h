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

/*
 * The tokens in force, in memory the master maps before its first fork
 * and shares with every child: a reload publishes its tokens there, so
 * that the workers of the generation it retires, which still finish the
 * requests of the connections they hold, refuse a removed token at once
 * too. Each worker checks against its own copy (struct auth_view), taken
 * again when a reload published since.
 */
struct auth_shared;
struct auth_view;

struct auth_shared *auth_shared_map(void);
void auth_shared_unmap(struct auth_shared *s);
/* The master: a's tokens (NULL: none needed), and whether the probes
 * need one too, are in force from now on. */
void auth_shared_publish(struct auth_shared *s, const struct auth *a, bool probes);
/* Whether a request (for a probe or not) with token (len bytes; NULL:
 * none) may go on under the tokens in force; *copy is the caller's copy
 * of them (NULL at first), renewed as needed. */
bool auth_shared_allows(const struct auth_shared *s, struct auth_view **copy, bool probe,
			const char *token, size_t len);
void auth_view_free(struct auth_view *v);

#endif
