#include "autoconf.h"

#include "common/auth.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/seqlock.h"
#include "common/sha256.h"
#include "common/util.h"

struct auth {
	unsigned char (*digests)[SHA256_LEN];
	bool *operators;       /* one a digest */
	size_t n;
};

/* What the master publishes. Zeroed (never published, or a writer that
 * died in the middle: seqlock_read) it lets nobody in but the probes. */
struct auth_view {
	uint64_t version;     /* 1 and up, one more at each publication */
	bool required;        /* --auth-tokens */
	bool probes;          /* --auth-probes */
	uint32_t n;
	bool operators[AUTH_TOKENS_MAX];
	unsigned char digests[AUTH_TOKENS_MAX][SHA256_LEN];
};

struct auth_shared {
	_Atomic uint64_t seq;
	_Atomic uint64_t version;  /* the view's, to be read without the lock */
	struct auth_view view;
};

/* A view's bytes with n tokens: only those are written and copied. */
static size_t view_size(uint32_t n)
{
	return offsetof(struct auth_view, digests) + (size_t)n * SHA256_LEN;
}

static void digest(const char *s, size_t len, unsigned char out[SHA256_LEN])
{
	struct sha256 h;

	sha256_init(&h);
	sha256_update(&h, s, len);
	sha256_final(&h, out);
}

void auth_owner(const char *token, size_t len, char *out)
{
	static const char prefix[] = "goboxd submission owner";
	unsigned char d[SHA256_LEN];
	struct sha256 h;

	sha256_init(&h);
	sha256_update(&h, prefix, sizeof(prefix)); /* its NUL too: no token is a prefix */
	sha256_update(&h, token, len);
	sha256_final(&h, d);
	for (size_t i = 0; i < SHA256_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The role that may follow a token on its line ("" or "operator"):
 * 0 none, 1 operator, -1 anything else. */
static int line_role(const char *s, size_t len)
{
	static const char word[] = "operator";

	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	return len == sizeof(word) - 1 && !memcmp(s, word, len) ? 1 : -1;
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
		size_t len = (size_t)got, tlen;
		const char *why;
		int role;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len == 0 || line[0] == '#')
			continue;
		tlen = strcspn(line, " \t");
		if (tlen > len)
			tlen = len;
		role = line_role(line + tlen, len - tlen);
		why = role < 0 && tlen ? "after a token only the word \"operator\" may follow" :
					 token_problem(line, tlen);
		if (!why && a->n == AUTH_TOKENS_MAX)
			why = "more than 10000 tokens";
		if (why) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
			goto fail;
		}
		a->digests = xreallocarray(a->digests, a->n + 1, sizeof(*a->digests));
		a->operators = xreallocarray(a->operators, a->n + 1, sizeof(*a->operators));
		a->operators[a->n] = role == 1;
		digest(line, tlen, a->digests[a->n++]);
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
	free(a->operators);
	free(a);
}

/* Every digest is compared in full, whatever matches first; so is every
 * role read. */
static bool digests_hold(const unsigned char (*digests)[SHA256_LEN], const bool *operators,
			 size_t n, const char *token, size_t len, bool *is_operator)
{
	unsigned char want[SHA256_LEN];
	unsigned ok = 0, op = 0;

	digest(token, len, want);
	for (size_t i = 0; i < n; i++) {
		unsigned diff = 0, same;

		for (size_t k = 0; k < SHA256_LEN; k++)
			diff |= (unsigned)(digests[i][k] ^ want[k]);
		same = diff == 0;
		ok |= same;
		op |= same & (unsigned)operators[i];
	}
	if (is_operator)
		*is_operator = op != 0;
	return ok != 0;
}

bool auth_check(const struct auth *a, const char *token, size_t len, bool *is_operator)
{
	if (is_operator)
		*is_operator = false;
	if (!a || !token)
		return false;
	return digests_hold((const unsigned char (*)[SHA256_LEN])a->digests, a->operators, a->n,
			    token, len, is_operator);
}

size_t auth_count(const struct auth *a)
{
	return a ? a->n : 0;
}

struct auth_shared *auth_shared_map(void)
{
	void *p = mmap(NULL, sizeof(struct auth_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void auth_shared_unmap(struct auth_shared *s)
{
	if (s)
		munmap(s, sizeof(*s));
}

void auth_shared_publish(struct auth_shared *s, const struct auth *a, bool probes)
{
	struct auth_view *v = xcalloc(1, sizeof(*v));

	v->version = atomic_load(&s->version) + 1;
	v->required = a != NULL;
	v->probes = probes;
	/* auth_load keeps a file to AUTH_TOKENS_MAX, which readers count on */
	v->n = a ? (uint32_t)(a->n < AUTH_TOKENS_MAX ? a->n : AUTH_TOKENS_MAX) : 0;
	if (v->n) {
		memcpy(v->digests, a->digests, v->n * sizeof(*v->digests));
		memcpy(v->operators, a->operators, v->n * sizeof(*v->operators));
	}
	seqlock_write(&s->seq, &s->view, v, view_size(v->n));
	/* readers take it from here on: it is whole */
	atomic_store(&s->version, v->version);
	free(v);
}

/* A copy of the view: its head tells how many tokens to copy, which a
 * publication between the two copies may have changed. */
static void view_take(const struct auth_shared *s, struct auth_view *v)
{
	uint32_t n;

	do {
		seqlock_read(&s->seq, v, &s->view, view_size(0));
		n = v->n < AUTH_TOKENS_MAX ? v->n : AUTH_TOKENS_MAX;
		seqlock_read(&s->seq, v, &s->view, view_size(n));
	} while (v->n > n);
}

bool auth_shared_allows(const struct auth_shared *s, struct auth_view **copy, bool probe,
			const char *token, size_t len, struct auth_who *who)
{
	struct auth_view *v;
	struct auth_who none;
	bool ok;

	if (!who)
		who = &none;
	who->is_operator = false;
	who->owner[0] = '\0';
	if (!*copy)
		*copy = xcalloc(1, sizeof(**copy));
	v = *copy;
	/* taken again only when a reload published anew */
	if (!v->version || v->version != atomic_load(&s->version))
		view_take(s, v);
	if (!v->version)
		return probe;
	if (!v->required) {
		who->is_operator = true;
		return true;
	}
	if (probe && !v->probes)
		return true;
	if (!token)
		return false;
	ok = digests_hold((const unsigned char (*)[SHA256_LEN])v->digests, v->operators, v->n,
			  token, len, &who->is_operator);
	if (ok)
		auth_owner(token, len, who->owner);
	return ok;
}

void auth_view_free(struct auth_view *v)
{
	if (!v)
		return;
	explicit_bzero(v->digests, (size_t)v->n * SHA256_LEN);
	free(v);
}
