/*
 * libFuzzer target: the tokens file (auth_load) and the check of a
 * request's token against it, as the workers make it (the tokens
 * published in shared memory, auth_shared_allows). The input is the
 * file. Besides not crashing, what loads is held to what auth.h says:
 *   - each token line (not blank, not a '#' comment) lets its token in,
 *     an operator's exactly when the word "operator" follows it, and
 *     with the owner name auth_owner gives;
 *   - a token with one more byte, or one fewer, is not let in unless the
 *     file has it too;
 *   - a file that loads has at least one token.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *token, size_t len)
{
	fprintf(stderr, "fuzz_auth: %s: \"%.*s\"\n", what, (int)(len < 300 ? len : 300), token);
	abort();
}

static struct auth_shared *shared;

/* The token of a line of n bytes (its length), and whether a word
 * follows it (in a file that loaded, only "operator" may). */
static size_t line_token(const char *line, size_t n, bool *op)
{
	size_t t = strcspn(line, " \t");

	if (t > n)
		t = n;
	*op = false;
	for (size_t i = t; i < n; i++)
		if (line[i] != ' ' && line[i] != '\t')
			*op = true;
	return t;
}

/* The line at *at (its length in *n, the '\r's at its end left out),
 * *at moved past it: false when none is left. */
static bool next_line(const char **at, const char *end, const char **line, size_t *n)
{
	const char *nl;

	if (*at >= end)
		return false;
	nl = memchr(*at, '\n', (size_t)(end - *at));
	*line = *at;
	*n = (size_t)((nl ? nl : end) - *at);
	*at = nl ? nl + 1 : end;
	while (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

/* How many token lines hold exactly this token, and whether one of them
 * marks it an operator's. */
static size_t lines_with(const char *text, size_t size, const char *token, size_t len,
			 bool *any_op)
{
	const char *at = text, *line;
	size_t count = 0, n;

	*any_op = false;
	while (next_line(&at, text + size, &line, &n)) {
		bool op;
		size_t t;

		if (!n || line[0] == '#')
			continue;
		t = line_token(line, n, &op);
		if (t == len && !memcmp(line, token, len)) {
			count++;
			*any_op |= op;
		}
	}
	return count;
}

static void check_line(struct auth_view **copy, const char *text, size_t size, const char *line,
		       size_t n)
{
	bool op, any_op;
	size_t t = line_token(line, n, &op);
	struct auth_who who;
	char owner[AUTH_OWNER_LEN + 1], longer[AUTH_TOKEN_MAX + 2];

	if (!auth_shared_allows(shared, copy, false, line, t, &who))
		fail("a token of the file not let in", line, t);
	lines_with(text, size, line, t, &any_op);
	if (who.is_operator != any_op)
		fail("an operator's token told otherwise", line, t);
	auth_owner(line, t, owner);
	if (strcmp(owner, who.owner))
		fail("an owner other than auth_owner's", line, t);
	memcpy(longer, line, t);
	longer[t] = 'x';
	if (auth_shared_allows(shared, copy, false, longer, t + 1, NULL) &&
	    !lines_with(text, size, longer, t + 1, &any_op))
		fail("a longer token let in", longer, t + 1);
	if (t > 1 && auth_shared_allows(shared, copy, false, line, t - 1, NULL) &&
	    !lines_with(text, size, line, t - 1, &any_op))
		fail("a shorter token let in", line, t - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[256];
	struct auth *a = NULL;
	struct auth_view *copy = NULL;
	char *text = malloc(size + 1);
	size_t n;
	int fd;

	/* ended by a NUL, as auth_load's lines are: strcspn stops there */
	if (!text || (!shared && !(shared = auth_shared_map())))
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	fd = memfd_create("fuzz_auth", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (auth_load(path, &a, err, sizeof(err)) < 0) {
		close(fd);
		free(text);
		return 0;
	}
	close(fd);
	if (auth_count(a) == 0)
		fail("a file without a token loaded", text, size);
	auth_shared_publish(shared, a, false);
	for (const char *at = text, *line; next_line(&at, text + size, &line, &n);)
		if (n && line[0] != '#')
			check_line(&copy, text, size, line, n);
	auth_view_free(copy);
	auth_free(a);
	free(text);
	return 0;
}
