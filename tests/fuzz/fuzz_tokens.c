/*
 * libFuzzer target: GET /submissions/batch's token list
 * (api_judge0_routes_split_tokens), held against Ruby's tokens.strip.split(",")
 * written here the plain way (every piece, then the empty ones at the end
 * dropped), with Judge0's bound of 20 and with room for every piece. The
 * input up to its first NUL byte is the list: a query parameter or a
 * header holds none.
 */
#include "autoconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/http/api_judge0_routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* run.sh's -max_len: at most this many pieces */
#define MAX_PIECES 16384

struct piece {
	const char *at;
	size_t len;
};

static void fail(const char *what, const char *list)
{
	fprintf(stderr, "fuzz_tokens: %s: \"%.200s\"\n", what, list);
	abort();
}

static int blank(char c)
{
	return c && strchr(" \t\r\n\v\f", c) != NULL;
}

/* Ruby's list.strip.split(","): the pieces, their count returned. */
static size_t ruby_split(const char *list, struct piece *p)
{
	const char *s = list, *e = list + strlen(list);
	size_t n = 0;

	while (s < e && blank(*s))
		s++;
	while (e > s && blank(e[-1]))
		e--;
	if (s == e)
		return 0;
	for (const char *t = s;; t++) {
		const char *c = memchr(t, ',', (size_t)(e - t));

		p[n].at = t;
		p[n++].len = (size_t)((c ? c : e) - t);
		if (!c)
			break;
		t = c;
	}
	while (n > 0 && p[n - 1].len == 0)
		n--;
	return n;
}

static void check(const char *list, const struct piece *want, size_t nwant, size_t max)
{
	static char *tokens[MAX_PIECES];
	char *copy = strdup(list);
	size_t n = (size_t)-1;
	int rc;

	if (!copy)
		abort();
	rc = api_judge0_routes_split_tokens(copy, tokens, max, &n);
	if (nwant > max) {
		if (rc != -E2BIG || n != (size_t)-1)
			fail("more tokens than the bound, not refused (or *n set)", list);
		free(copy);
		return;
	}
	if (rc != 0 || n != nwant)
		fail("a count other than Ruby's", list);
	for (size_t i = 0; i < n; i++) {
		if (tokens[i] < copy || tokens[i] > copy + strlen(list))
			fail("a token outside the list", list);
		if (strlen(tokens[i]) != want[i].len || memcmp(tokens[i], want[i].at, want[i].len))
			fail("a token other than Ruby's", list);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct piece want[MAX_PIECES];
	char *list = malloc(size + 1);
	size_t n;

	if (!list)
		abort();
	memcpy(list, data, size);
	list[size] = '\0';
	if (strlen(list) >= MAX_PIECES) {
		free(list);
		return 0;
	}
	n = ruby_split(list, want);
	check(list, want, n, 20);
	check(list, want, n, MAX_PIECES);
	free(list);
	return 0;
}
