#include "autoconf.h"

#include "common/lang/placeholder.h"
#include "common/lang/langtab.h"
#include "common/strv.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

static void ok_check(const char *tmpl, enum ph_where where)
{
	cr_assert_eq(placeholder_check(tmpl, where, err, sizeof(err)), 0, "'%s': %s", tmpl, err);
}

static void bad_check(const char *tmpl, enum ph_where where, const char *why)
{
	err[0] = '\0';
	cr_assert_eq(placeholder_check(tmpl, where, err, sizeof(err)), -EINVAL, "'%s' passed", tmpl);
	cr_assert(strstr(err, why), "'%s': error '%s' does not say '%s'", tmpl, err, why);
}

Test(placeholder, check_accepts_every_name)
{
	static const char *const scalars[] = { "{{source}}", "{{stem}}", "{{stem_class}}",
					       "{{artifact}}", "{{box}}", "{{tmp}}", "{{memory_mb}}" };

	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		ok_check(scalars[i], PH_IN_CMD);
		ok_check(scalars[i], PH_IN_ARG);
		ok_check(scalars[i], PH_IN_ENV);
	}
	ok_check("{{flags}}", PH_IN_ARG);
	ok_check("{{sources}}", PH_IN_ARG);
	ok_check("-o{{artifact}}", PH_IN_ARG);
	ok_check("-Xmx{{memory_mb}}m", PH_IN_ARG);
	ok_check("{{box}}/{{stem}}.class", PH_IN_CMD);
	ok_check("plain", PH_IN_ARG);
	ok_check("", PH_IN_ARG);
	ok_check("a } b }} c { d", PH_IN_ARG);
}

Test(placeholder, check_refuses_bad_templates)
{
	bad_check("{{output}}", PH_IN_ARG, "unknown placeholder '{{output}}'");
	bad_check("{{ source }}", PH_IN_ARG, "unknown placeholder");
	bad_check("{{SOURCE}}", PH_IN_ARG, "unknown placeholder");
	bad_check("{{}}", PH_IN_ARG, "unknown placeholder '{{}}'");
	bad_check("x{{source", PH_IN_ARG, "unclosed '{{'");
	bad_check("{{source}}{{", PH_IN_ARG, "unclosed");
	bad_check("{{{source}}}", PH_IN_ARG, "unknown placeholder");
	bad_check("-f{{flags}}", PH_IN_ARG, "must be a whole argument");
	bad_check("{{flags}}x", PH_IN_ARG, "must be a whole argument");
	bad_check("{{sources}}{{sources}}", PH_IN_ARG, "must be a whole argument");
	bad_check("{{flags}}", PH_IN_CMD, "not allowed in cmd");
	bad_check("{{sources}}", PH_IN_ENV, "not allowed in env");
}

Test(placeholder, uses)
{
	cr_assert(placeholder_uses("-o{{artifact}}", "artifact"));
	cr_assert(placeholder_uses("{{source}} {{artifact}}", "artifact"));
	cr_assert_not(placeholder_uses("{{source}}", "artifact"));
	cr_assert_not(placeholder_uses("artifact", "artifact"));
	cr_assert_not(placeholder_uses("{{artifact", "artifact"));
}

static const char *const three_sources[] = { "Main.java", "Util.java", "lib.java", NULL };

static const struct expand_ctx java_ctx = {
	.source = "Main.java",
	.artifact = "Main",
	.sources = three_sources,
	.box = "/sandbox",
	.tmp = "/tmp",
	.memory_mb = 256,
};

static void expect_one(const char *tmpl, const struct expand_ctx *ctx, const char *want)
{
	char *s = placeholder_expand_one(tmpl, ctx);

	cr_assert_not_null(s, "'%s' failed: %s", tmpl, strerror(errno));
	cr_assert_str_eq(s, want, "'%s'", tmpl);
	free(s);
}

Test(placeholder, expand_every_scalar)
{
	struct expand_ctx ctx = java_ctx;

	expect_one("{{source}}", &ctx, "Main.java");
	expect_one("{{stem}}", &ctx, "Main");
	expect_one("{{artifact}}", &ctx, "Main");
	expect_one("{{box}}", &ctx, "/sandbox");
	expect_one("{{tmp}}", &ctx, "/tmp");
	expect_one("{{memory_mb}}", &ctx, "256");
	expect_one("-Xmx{{memory_mb}}m", &ctx, "-Xmx256m");
	expect_one("-o{{artifact}}", &ctx, "-o" "Main");
	expect_one("{{box}}/{{stem}}.class:{{tmp}}", &ctx, "/sandbox/Main.class:/tmp");
	expect_one("no placeholder", &ctx, "no placeholder");
	expect_one("", &ctx, "");
	expect_one("a}}b", &ctx, "a}}b");

	ctx.box = "/sandbox";
	ctx.tmp = "/scratch";
	expect_one("{{box}} {{tmp}}", &ctx, "/sandbox /scratch");
	ctx.box = NULL;
	ctx.tmp = NULL;
	expect_one("{{box}} {{tmp}}", &ctx, "/sandbox /tmp");
}

Test(placeholder, stem_rules)
{
	struct expand_ctx ctx = java_ctx;

	ctx.source = "solution";
	expect_one("{{stem}}", &ctx, "solution");
	ctx.source = "a.b.c";
	expect_one("{{stem}}", &ctx, "a.b");
	ctx.source = ".profile";
	expect_one("{{stem}}", &ctx, ".profile");
	ctx.source = "x.";
	expect_one("{{stem}}", &ctx, "x");
}

/*
 * {{stem_class}}: the class kotlinc 2.4 names after a file of top-level
 * functions, minus its "Kt" (each pair as the compiler wrote it).
 */
Test(placeholder, stem_class_is_kotlins_file_class)
{
	static const struct { const char *file, *cls; } cases[] = {
		{ "Main.kt", "Main" },     { "main.kt", "Main" },   { "lower.kt", "Lower" },
		{ "my-file.kt", "My_file" }, { "1x.kt", "_1x" },   { "a.b.kt", "A_b" },
		{ "foo_bar.kt", "Foo_bar" }, { "x+y.kt", "X_y" },  { "solution", "Solution" },
		{ "_u.kt", "_u" },
	};
	struct expand_ctx ctx = java_ctx;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ctx.source = cases[i].file;
		expect_one("{{stem_class}}", &ctx, cases[i].cls);
	}
	ctx.source = NULL;
	cr_expect_null(placeholder_expand_one("{{stem_class}}", &ctx));
}

Test(placeholder, expand_one_refusals)
{
	struct expand_ctx ctx = java_ctx;

	ctx.artifact = NULL;
	errno = 0;
	cr_assert_null(placeholder_expand_one("-o{{artifact}}", &ctx));
	cr_assert_eq(errno, EINVAL);
	ctx = java_ctx;
	ctx.source = NULL;
	cr_assert_null(placeholder_expand_one("{{stem}}", &ctx));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(placeholder_expand_one("{{flags}}", &java_ctx));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(placeholder_expand_one("{{nope}}", &java_ctx));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(placeholder_expand_one("{{source", &java_ctx));
	cr_assert_eq(errno, EINVAL);
}

static char *g_args[] = { "{{flags}}", "-o", "{{artifact}}", "{{source}}", NULL };
static char *g_defaults[] = { "-O2", "-std=gnu++17", NULL };
static char *g_env[] = { "TMPDIR={{tmp}}", "HEAP=-Xmx{{memory_mb}}m", "PLAIN=a b", NULL };

static struct lang_step gxx_step(bool with_defaults)
{
	struct lang_step s = { 0 };
	static char *none[] = { NULL };

	s.cmd = "/usr/bin/g++";
	s.args = g_args;
	s.env = g_env;
	s.default_flags = with_defaults ? g_defaults : none;
	s.flag_allow = none;
	return s;
}

/* A language step's argv, as the judge expands it: its templates and its
 * default flags. */
static int step_argv(const struct lang_step *s, const struct expand_ctx *ctx, char ***out)
{
	struct expand_ctx c = *ctx;

	c.default_flags = (const char *const *)s->default_flags;
	return placeholder_expand_argv(s->cmd, s->args, &c, out);
}

static void expect_argv(const struct lang_step *s, const struct expand_ctx *ctx,
			const char *const *want)
{
	char **argv = NULL;
	size_t i;

	cr_assert_eq(step_argv(s, ctx, &argv), 0);
	for (i = 0; want[i]; i++) {
		cr_assert_not_null(argv[i], "argv ends at %zu, wanted '%s'", i, want[i]);
		cr_assert_str_eq(argv[i], want[i], "argv[%zu]", i);
	}
	cr_assert_null(argv[i], "extra argv[%zu] '%s'", i, argv[i]);
	strv_free(argv);
}

static const struct expand_ctx cpp_ctx = {
	.source = "solution.cpp",
	.artifact = "solution",
	.memory_mb = 1024,
};

Test(placeholder, flags_none_takes_defaults)
{
	struct lang_step s = gxx_step(true);
	static const char *const empty[] = { NULL };
	struct expand_ctx ctx = cpp_ctx;

	expect_argv(&s, &ctx,
		    (const char *const[]){ "/usr/bin/g++", "-O2", "-std=gnu++17", "-o", "solution",
					   "solution.cpp", NULL });
	ctx.flags = empty;
	expect_argv(&s, &ctx,
		    (const char *const[]){ "/usr/bin/g++", "-O2", "-std=gnu++17", "-o", "solution",
					   "solution.cpp", NULL });
}

Test(placeholder, flags_none_without_defaults_is_no_argument)
{
	struct lang_step s = gxx_step(false);

	expect_argv(&s, &cpp_ctx,
		    (const char *const[]){ "/usr/bin/g++", "-o", "solution", "solution.cpp", NULL });
}

Test(placeholder, flags_one_and_three)
{
	struct lang_step s = gxx_step(true);
	static const char *const one[] = { "-O0", NULL };
	static const char *const three[] = { "-O3", "-Wall", "-DNAME=a b", NULL };
	struct expand_ctx ctx = cpp_ctx;

	ctx.flags = one;
	expect_argv(&s, &ctx,
		    (const char *const[]){ "/usr/bin/g++", "-O0", "-o", "solution", "solution.cpp",
					   NULL });
	ctx.flags = three;
	/* "-DNAME=a b" stays one argument: nothing is split on spaces. */
	expect_argv(&s, &ctx,
		    (const char *const[]){ "/usr/bin/g++", "-O3", "-Wall", "-DNAME=a b", "-o",
					   "solution", "solution.cpp", NULL });
}

Test(placeholder, sources_list)
{
	struct lang_step s = { 0 };
	char *args[] = { "-d", "{{tmp}}", "{{sources}}", NULL };
	struct expand_ctx ctx = java_ctx;

	s.cmd = "{{box}}/javac";
	s.args = args;
	expect_argv(&s, &ctx,
		    (const char *const[]){ "/sandbox/javac", "-d", "/tmp", "Main.java", "Util.java",
					   "lib.java", NULL });
	ctx.sources = NULL;
	expect_argv(&s, &ctx,
		    (const char *const[]){ "/sandbox/javac", "-d", "/tmp", "Main.java", NULL });
}

Test(placeholder, no_shell_meaning)
{
	struct lang_step s = { 0 };
	char *args[] = { "$(id)", "`x`;y", "{{source}}", NULL };
	struct expand_ctx ctx = cpp_ctx;

	ctx.source = "a;rm -rf $HOME.cpp";
	s.cmd = "./{{artifact}}";
	s.args = args;
	expect_argv(&s, &ctx,
		    (const char *const[]){ "./solution", "$(id)", "`x`;y", "a;rm -rf $HOME.cpp",
					   NULL });
}

Test(placeholder, argv_refusals_leave_out_untouched)
{
	struct lang_step s = gxx_step(true);
	struct expand_ctx ctx = cpp_ctx;
	char **argv = (char **)0x1;

	ctx.artifact = NULL;
	cr_assert_eq(step_argv(&s, &ctx, &argv), -EINVAL);
	cr_assert_eq(argv, (char **)0x1);
	ctx = cpp_ctx;
	ctx.source = NULL;
	ctx.sources = NULL;
	s.args[0] = "{{sources}}";
	cr_assert_eq(step_argv(&s, &ctx, &argv), -EINVAL);
	s.args[0] = "{{flags}}";
	cr_assert_eq(argv, (char **)0x1);
}

Test(placeholder, env_expansion)
{
	struct lang_step s = gxx_step(true);
	char **env = NULL;

	cr_assert_eq(placeholder_expand_env(s.env, &cpp_ctx, &env), 0);
	cr_assert_str_eq(env[0], "TMPDIR=/tmp");
	cr_assert_str_eq(env[1], "HEAP=-Xmx1024m");
	cr_assert_str_eq(env[2], "PLAIN=a b");
	cr_assert_null(env[3]);
	strv_free(env);

	s.env = NULL;
	cr_assert_eq(placeholder_expand_env(s.env, &cpp_ctx, &env), 0);
	cr_assert_not_null(env);
	cr_assert_null(env[0]);
	strv_free(env);
	strv_free(NULL);
}
