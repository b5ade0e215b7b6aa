#include "autoconf.h"

#include "common/strv.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

char **strv_new(void)
{
	return xcalloc(1, sizeof(char *));
}

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **strv_dup(char *const *v)
{
	size_t n = strv_len(v);
	char **out = xcalloc(n + 1, sizeof(*out));

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

/*
 * The array grows by one each time: vectors are short (a command line, a
 * language's list), and an array without a capacity field is what lets
 * the vector be a plain char ** that execve takes as it is.
 */
void strv_push(char ***v, char *s)
{
	size_t n = strv_len(*v);

	*v = xreallocarray(*v, n + 2, sizeof(**v));
	(*v)[n] = s;
	(*v)[n + 1] = NULL;
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
