/*
 * API tokens (--auth-tokens FILE): who may use goboxd. The file holds one
 * token per line (blank lines and lines starting with '#' are skipped),
 * each at least AUTH_TOKEN_MIN bytes of printable ASCII without blanks,
 * and after it, on the same line, the word "operator" for an operator's
 * token: what a client's token made is that token's alone (its
 * submissions); an operator's token may see and remove everyone's.
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

/* A token's name where what it made is kept (the submission store):
 * the hex SHA-256 of a fixed prefix and the token, never the token. */
#define AUTH_OWNER_LEN 64

/* Who a request is, once it was let in. */
struct auth_who {
	/* its token is an operator's, or no token is needed at all (then
	 * everything is everybody's) */
	bool is_operator;
	char owner[AUTH_OWNER_LEN + 1];   /* "" when no token is needed */
};

/* The owner name of token (len bytes) into out (AUTH_OWNER_LEN + 1). */
void auth_owner(const char *token, size_t len, char *out);

/* 0 and *out, or -EINVAL ("FILE:LINE: reason") / another errno. A file
 * without any token is refused: it would let nobody in. */
int auth_load(const char *path, struct auth **out, char *err, size_t errlen);
void auth_free(struct auth *a);
/* Whether token (len bytes) is one of a's; *is_operator (may be NULL) says
 * whether it is marked an operator's. */
bool auth_check(const struct auth *a, const char *token, size_t len, bool *is_operator);
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
 * none) may go on under the tokens in force, and who it is in *who (may
 * be NULL); *copy is the caller's copy of them (NULL at first), renewed
 * as needed. */
bool auth_shared_allows(const struct auth_shared *s, struct auth_view **copy, bool probe,
			const char *token, size_t len, struct auth_who *who);
void auth_view_free(struct auth_view *v);

#endif
