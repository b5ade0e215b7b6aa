#include "autoconf.h"

#include "common/proctitle.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* An image laid out as execve leaves it: argv strings, then env strings. */
static char image[] = "/usr/sbin/goboxd\0--port\0008080\0PATH=/bin\0HOME=/root";
static char *fake_argv[4];
static char *fake_env[3];

static void lay_out(void)
{
	fake_argv[0] = image;
	fake_argv[1] = image + 17;
	fake_argv[2] = image + 24;
	fake_argv[3] = NULL;
	fake_env[0] = image + 29;
	fake_env[1] = image + 39;
	fake_env[2] = NULL;
	environ = fake_env;
}

Test(proctitle, copies_survive_and_the_area_holds_the_title)
{
	char **args;

	lay_out();
	args = proctitle_init(3, fake_argv);
	cr_assert_neq(args, fake_argv);
	proctitle_set("goboxd: worker %d", 3);
	cr_assert_str_eq(image, "goboxd: worker 3");
	for (size_t i = strlen("goboxd: worker 3"); i < sizeof(image); i++)
		cr_assert_eq(image[i], '\0', "byte %zu not cleared", i);
	cr_assert_str_eq(args[0], "/usr/sbin/goboxd");
	cr_assert_str_eq(args[1], "--port");
	cr_assert_str_eq(args[2], "8080");
	cr_assert_null(args[3]);
	cr_assert_str_eq(getenv("PATH"), "/bin");
	cr_assert_str_eq(getenv("HOME"), "/root");
	cr_assert_neq(environ, fake_env);
}

Test(proctitle, a_long_title_is_cut_to_the_area)
{
	char title[128];

	memset(title, 'x', sizeof(title) - 1);
	title[sizeof(title) - 1] = '\0';
	lay_out();
	proctitle_init(3, fake_argv);
	proctitle_set("%s", title);
	cr_assert_eq(strlen(image), sizeof(image) - 1);
	cr_assert_eq(image[sizeof(image) - 1], '\0');
}

Test(proctitle, strings_elsewhere_are_not_part_of_the_area)
{
	static char own[] = "elsewhere";
	char **args;

	lay_out();
	fake_env[0] = own;   /* not right after argv: the area stops at argv */
	args = proctitle_init(3, fake_argv);
	proctitle_set("goboxd: prober");
	cr_assert_str_eq(own, "elsewhere");
	cr_assert_str_eq(image, "goboxd: prober");
	/* PATH=/bin lies after argv's end but is no longer in the run */
	cr_assert_str_eq(image + 29, "PATH=/bin");
	cr_assert_str_eq(args[2], "8080");
}
