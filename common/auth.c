#include "autoconf.h"

#include "common/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/util.h"

struct auth {
	unsigned char (*digests)[SHA256_LEN];
	size_t n;
};

static void digest(const char *s, size_t len, unsigned char out[SHA256_LEN])
{
	struct sha256 h;

	sha256_init(&h);
	sha256_update(&h, s, len);
	sha256_final(&h, out);
}

/* Printable ASCII, no blank: what a header carries unchanged. */
static const char *token_problem(const char *s, size_t len)
{
	if (len < AUTH_TOKEN_MIN)
		return "token too short (at least 16 characters)";
	if (len > AUTH_TOKEN_MAX)
		return "token too long (at most 256 characters)";
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return "a token is printable ASCII without blanks";
	return NULL;
}

int auth_load(const char *path, struct auth **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct auth *a;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int lineno = 0;

	*out = NULL;
	if (!f) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	a = xcalloc(1, sizeof(*a));
	while ((got = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)got;
		const char *why;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len == 0 || line[0] == '#')
			continue;
		why = token_problem(line, len);
		if (!why && a->n == AUTH_TOKENS_MAX)
			why = "more than 10000 tokens";
		if (why) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
			goto fail;
		}
		a->digests = xreallocarray(a->digests, a->n + 1, sizeof(*a->digests));
		digest(line, len, a->digests[a->n++]);
	}
	if (a->n == 0) {
		snprintf(err, errlen, "%s: no token in it (it would let nobody in)", path);
		goto fail;
	}
	free(line);
	fclose(f);
	*out = a;
	return 0;
fail:
	free(line);
	fclose(f);
	auth_free(a);
	return -EINVAL;
}

void auth_free(struct auth *a)
{
	if (!a)
		return;
	if (a->digests)
		explicit_bzero(a->digests, a->n * sizeof(*a->digests));
	free(a->digests);
	free(a);
}

bool auth_check(const struct auth *a, const char *token, size_t len)
{
	unsigned char want[SHA256_LEN];
	unsigned ok = 0;

	if (!a || !token)
		return false;
	digest(token, len, want);
	for (size_t i = 0; i < a->n; i++) {
		unsigned diff = 0;

		for (size_t k = 0; k < SHA256_LEN; k++)
			diff |= (unsigned)(a->digests[i][k] ^ want[k]);
		ok |= diff == 0;
	}
	return ok != 0;
}

size_t auth_count(const struct auth *a)
{
	return a ? a->n : 0;
}
