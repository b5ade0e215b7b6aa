#include "autoconf.h"

#include "common/proctitle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

extern char **environ;

/*
 * The one piece of process-wide state outside signal flags: the area is a
 * property of the process image (set up by execve), not of any object.
 */
static char *area;
static size_t area_len;

/* The copies of argv and of the environment main() goes on with; held so
 * that they stay reachable (volatile: written once, never read). */
static char **volatile args_copy;
static char **volatile env_copy;

/* Where the run of strings that starts at v[0] ends, extended from end. */
static char *run_end(char **v, char *end)
{
	for (size_t i = 0; v && v[i]; i++) {
		if (v[i] != end)
			break;
		end = v[i] + strlen(v[i]) + 1;
	}
	return end;
}

/*
 * A copy of n strings: the vector, then the strings in the same
 * allocation, so that one pointer keeps them all. setenv and unsetenv
 * (sd_listen_fds unsets LISTEN_FDS) rewrite environ's vector; strings
 * dropped from it stay in this block instead of leaking one by one.
 */
static char **copy_strv(char **v, size_t n)
{
	size_t bytes = (n + 1) * sizeof(char *);
	char **out;
	char *p;

	for (size_t i = 0; i < n; i++)
		bytes += strlen(v[i]) + 1;
	out = xmalloc(bytes);
	p = (char *)(out + n + 1);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;

		memcpy(p, v[i], len);
		out[i] = p;
		p += len;
	}
	out[n] = NULL;
	return out;
}

char **proctitle_init(int argc, char **argv)
{
	size_t nenv = 0;
	char **env, **args;
	char *end;

	if (argc < 1 || !argv || !argv[0])
		return argv;
	while (environ && environ[nenv])
		nenv++;
	end = run_end(argv, argv[0]);
	end = run_end(environ, end);
	args = copy_strv(argv, (size_t)argc);
	env = copy_strv(environ, nenv);
	/* both copies live as long as the process, each held here (environ's
	 * vector is replaced by the C library once it grows) */
	environ = env;
	env_copy = env;
	args_copy = args;
	area = argv[0];
	area_len = (size_t)(end - argv[0]);
	return args;
}

void proctitle_set(const char *fmt, ...)
{
	char title[256];
	va_list ap;
	size_t n;

	if (!area || area_len < 2)
		return;
	va_start(ap, fmt);
	vsnprintf(title, sizeof(title), fmt, ap);
	va_end(ap);
	n = strlen(title);
	if (n > area_len - 1)
		n = area_len - 1;
	memcpy(area, title, n);
	/* zeros to the end: the kernel then shows the title alone */
	memset(area + n, 0, area_len - n);
}
