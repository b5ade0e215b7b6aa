#include "autoconf.h"

#include <errno.h>
#include <criterion/criterion.h>
#include <string.h>

#include "common/lang/validate.h"

static int fname(const char *s)
{
	char err[128];

	return validate_filename(s, strlen(s), err, sizeof(err));
}

Test(filename, codize_rule_and_words)
{
	char name[300];

	cr_expect_null(validate_codize_filename("main.go", 7));
	cr_expect_null(validate_codize_filename(".env", 4), "Codize allows a leading dot");
	cr_expect_null(validate_codize_filename("my file (1).txt", 15));
	cr_expect_null(validate_codize_filename("\xc3\xa9t\xc3\xa9.py", 8));
	cr_expect_str_eq(validate_codize_filename("", 0), "must not be empty");
	cr_expect_str_eq(validate_codize_filename("a/b", 3), "contains invalid characters");
	cr_expect_str_eq(validate_codize_filename("a\0b", 3), "contains invalid characters");
	cr_expect_str_eq(validate_codize_filename(".", 1), "not allowed");
	cr_expect_str_eq(validate_codize_filename("..", 2), "not allowed");
	cr_expect_null(validate_codize_filename("...", 3));
	cr_expect_str_eq(validate_codize_filename("-o", 2), "must not start with '-'");
	memset(name, 'x', sizeof(name));
	cr_expect_null(validate_codize_filename(name, 255));
	cr_expect_str_eq(validate_codize_filename(name, 256), "file name too long (max: 255 bytes)");
}

Test(filename, accepts_ordinary_names)
{
	cr_expect_eq(fname("solution.cpp"), 0);
	cr_expect_eq(fname("Main.java"), 0);
	cr_expect_eq(fname("a"), 0);
	cr_expect_eq(fname("my_lib-2.0+x.h"), 0);
	cr_expect_eq(fname("_init.py"), 0);
	cr_expect_eq(fname("9lives.rb"), 0);
	cr_expect_eq(fname("a..b"), 0);
}

Test(filename, refuses_traversal_and_specials)
{
	cr_expect_eq(fname("../../etc/passwd"), -EINVAL);
	cr_expect_eq(fname("/etc/passwd"), -EINVAL);
	cr_expect_eq(fname("a/b"), -EINVAL);
	cr_expect_eq(fname("."), -EINVAL);
	cr_expect_eq(fname(".."), -EINVAL);
	cr_expect_eq(fname(".hidden"), -EINVAL);
	cr_expect_eq(fname(""), -EINVAL);
	cr_expect_eq(fname("a b"), -EINVAL);
	cr_expect_eq(fname("a\\b"), -EINVAL);
	cr_expect_eq(fname("a\nb"), -EINVAL);
	cr_expect_eq(fname("caf\xc3\xa9.py"), -EINVAL);
	cr_expect_eq(fname("x;rm"), -EINVAL);
	cr_expect_eq(fname("$(id).c"), -EINVAL);
	cr_expect_eq(fname("*.c"), -EINVAL);
}

Test(filename, refuses_option_lookalikes)
{
	cr_expect_eq(fname("-ofoo.c"), -EINVAL);
	cr_expect_eq(fname("--help"), -EINVAL);
	cr_expect_eq(fname("+x"), -EINVAL);
}

Test(filename, embedded_nul_is_caught_by_length)
{
	char err[128] = "";

	cr_expect_eq(validate_filename("a\0b", 3, err, sizeof(err)), -EINVAL);
	cr_expect_neq(err[0], '\0');
	cr_expect_eq(validate_filename("ab\0", 3, err, sizeof(err)), -EINVAL);
}

static int vpath(const char *p, char *err, size_t errlen)
{
	return validate_path(p, strlen(p), err, errlen);
}

Test(path, names_joined_by_slashes)
{
	char err[160] = "", deep[64] = "a", long_path[300];

	cr_expect_eq(vpath("main.py", err, sizeof(err)), 0);
	cr_expect_eq(vpath("src/lib/util.py", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(vpath("src//x", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "path has an empty part (a leading, trailing or double '/')");
	cr_expect_eq(vpath("/etc/passwd", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpath("src/", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpath("src/../x", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "path part '..': file name must not start with a dot");
	cr_expect_eq(vpath("./x", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpath("a/-x", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "path part '-x': file name must not start with '-'");
	cr_expect_eq(validate_path("a/b\0c", 5, err, sizeof(err)), -EINVAL);
	cr_expect_eq(validate_path("", 0, err, sizeof(err)), -EINVAL);
	for (int i = 1; i < VALIDATE_PATH_MAX_DEPTH; i++)
		strcat(deep, "/a");
	cr_expect_eq(vpath(deep, err, sizeof(err)), 0, "%d deep is fine", VALIDATE_PATH_MAX_DEPTH);
	strcat(deep, "/a");
	cr_expect_eq(vpath(deep, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "path is more than 8 names deep");
	memset(long_path, 'a', sizeof(long_path));
	for (size_t i = 100; i < sizeof(long_path); i += 101)
		long_path[i] = '/';
	long_path[VALIDATE_PATH_MAX_LEN + 1] = '\0';
	cr_expect_eq(vpath(long_path, err, sizeof(err)), -EINVAL);
	long_path[VALIDATE_PATH_MAX_LEN] = '\0';
	cr_expect_eq(vpath(long_path, err, sizeof(err)), 0, "%s", err);
}

static int vpat(const char *p, char *err, size_t errlen)
{
	return validate_path_pattern(p, strlen(p), err, errlen);
}

Test(path, patterns_of_return_files)
{
	char err[160] = "", deep[64] = "*", long_pat[300];

	cr_expect_eq(vpat("out.txt", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(vpat("*.png", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(vpat("results/*.csv", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(vpat("[a-z]?/\\*x/.hidden/my file (1).txt", err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(vpat("\xc3\xa9t\xc3\xa9/*", err, sizeof(err)), 0, "UTF-8: %s", err);
	cr_expect_eq(vpat("...", err, sizeof(err)), 0, "three dots are a name: %s", err);

	cr_expect_eq(vpat("", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern is empty");
	cr_expect_eq(vpat("/etc/passwd", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern must be relative to the job directory (no leading '/')");
	cr_expect_eq(vpat("../x", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern part '..' names no file of the job directory");
	cr_expect_eq(vpat("a/../../etc/*", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpat("./x", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern part '.' names no file of the job directory");
	cr_expect_eq(vpat("a/..", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpat("a//b", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern has an empty part (a trailing or double '/')");
	cr_expect_eq(vpat("results/", err, sizeof(err)), -EINVAL);
	cr_expect_eq(vpat("a\tb", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern contains a control character");
	cr_expect_eq(validate_path_pattern("a\0b", 3, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern contains a NUL byte");
	cr_expect_eq(vpat("\xff*", err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern is not valid UTF-8");

	for (int i = 1; i < VALIDATE_PATH_MAX_DEPTH; i++)
		strcat(deep, "/*");
	cr_expect_eq(vpat(deep, err, sizeof(err)), 0, "%d parts: %s", VALIDATE_PATH_MAX_DEPTH, err);
	strcat(deep, "/*");
	cr_expect_eq(vpat(deep, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern is more than 8 names deep");
	memset(long_pat, 'a', sizeof(long_pat));
	long_pat[VALIDATE_PATH_MAX_LEN] = '\0';
	cr_expect_eq(vpat(long_pat, err, sizeof(err)), 0, "%s", err);
	long_pat[VALIDATE_PATH_MAX_LEN] = '*';
	long_pat[VALIDATE_PATH_MAX_LEN + 1] = '\0';
	cr_expect_eq(vpat(long_pat, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "pattern is longer than 255 bytes");
}

Test(path, clashes)
{
	cr_expect(validate_paths_clash("a", "a"));
	cr_expect(validate_paths_clash("a", "a/b"));
	cr_expect(validate_paths_clash("a/b/c", "a/b"));
	cr_expect_not(validate_paths_clash("a", "ab"));
	cr_expect_not(validate_paths_clash("a/b", "a/c"));
	cr_expect_not(validate_paths_clash("ab/c", "a"));
}

Test(filename, length_cap)
{
	char name[FILENAME_MAX_LEN + 2];

	memset(name, 'a', sizeof(name));
	name[FILENAME_MAX_LEN] = '\0';
	cr_expect_eq(fname(name), 0);
	name[FILENAME_MAX_LEN] = 'a';
	name[FILENAME_MAX_LEN + 1] = '\0';
	cr_expect_eq(fname(name), -EINVAL, "129 bytes must be refused");
}

/*
 * One rule, two formats: each row is a name whose answer differs between
 * /run's rule and /v1/run's, and the parameter that makes it differ.
 */
struct rule_case {
	const char *why;
	const char *name;
	size_t len;
	enum validate_filename_problem native, codize;
	char bad;  /* the byte at fault, where both say one */
};

static char long_name[300], long_slash[300];

static const struct rule_case rule_cases[] = {
	/* portable: /run takes [A-Za-z0-9_.+-] only */
	{ "portable: a space", "my file.txt", 11, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_OK,
	  ' ' },
	{ "portable: parentheses", "a(1).c", 6, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_OK,
	  '(' },
	{ "portable: UTF-8", "\xc3\xa9.py", 4, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_OK,
	  '\xc3' },
	{ "portable: a backslash", "a\\b", 3, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_OK,
	  '\\' },
	/* no_first: /run refuses a leading '.', '-' and '+'; /v1/run a leading '-' */
	{ "no_first: a leading dot", ".env", 4, VALIDATE_FILENAME_BAD_FIRST, VALIDATE_FILENAME_OK,
	  '.' },
	{ "no_first: three dots", "...", 3, VALIDATE_FILENAME_BAD_FIRST, VALIDATE_FILENAME_OK,
	  '.' },
	{ "no_first: a leading plus", "+x", 2, VALIDATE_FILENAME_BAD_FIRST, VALIDATE_FILENAME_OK,
	  '+' },
	/* max_len: 128 bytes for /run, 255 for /v1/run */
	{ "max_len: 129 bytes", long_name, FILENAME_MAX_LEN + 1, VALIDATE_FILENAME_TOO_LONG,
	  VALIDATE_FILENAME_OK, 0 },
	{ "max_len: 255 bytes", long_name, CODIZE_FILENAME_MAX_LEN, VALIDATE_FILENAME_TOO_LONG,
	  VALIDATE_FILENAME_OK, 0 },
	/* length_first: too long and a bad byte, which is said first */
	{ "length_first: 256 bytes with a '/'", long_slash, CODIZE_FILENAME_MAX_LEN + 1,
	  VALIDATE_FILENAME_TOO_LONG, VALIDATE_FILENAME_BAD_BYTE, '/' },
	/* the same in both */
	{ "both: '/'", "a/b", 3, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_BAD_BYTE, '/' },
	{ "both: NUL", "a\0b", 3, VALIDATE_FILENAME_BAD_BYTE, VALIDATE_FILENAME_BAD_BYTE, '\0' },
	{ "both: the first bad byte", "a/\0", 3, VALIDATE_FILENAME_BAD_BYTE,
	  VALIDATE_FILENAME_BAD_BYTE, '/' },
	{ "both: a leading dash", "-o", 2, VALIDATE_FILENAME_BAD_FIRST, VALIDATE_FILENAME_BAD_FIRST,
	  '-' },
	{ "both: empty", "", 0, VALIDATE_FILENAME_EMPTY, VALIDATE_FILENAME_EMPTY, 0 },
	{ "both: ..", "..", 2, VALIDATE_FILENAME_DOTS, VALIDATE_FILENAME_DOTS, 0 },
	{ "both: an ordinary name", "main.go", 7, VALIDATE_FILENAME_OK, VALIDATE_FILENAME_OK, 0 },
};

static void check_rule(const char *rule_name, const struct validate_filename_rule *rule,
		       const struct rule_case *c, enum validate_filename_problem want)
{
	char bad = 'Z';
	enum validate_filename_problem got = validate_filename_check(rule, c->name, c->len, &bad);

	cr_expect_eq(got, want, "%s, %s rule: problem %d, wanted %d", c->why, rule_name, got, want);
	if (got == want && (want == VALIDATE_FILENAME_BAD_BYTE || want == VALIDATE_FILENAME_BAD_FIRST))
		cr_expect_eq(bad, c->bad, "%s, %s rule: byte 0x%02x at fault", c->why, rule_name,
			     (unsigned char)bad);
}

Test(filename, one_rule_two_formats)
{
	memset(long_name, 'x', sizeof(long_name));
	memset(long_slash, 'x', sizeof(long_slash));
	long_slash[200] = '/';
	for (size_t i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
		check_rule("native", &validate_filename_native, &rule_cases[i],
			   rule_cases[i].native);
		check_rule("codize", &validate_filename_codize, &rule_cases[i],
			   rule_cases[i].codize);
	}
}

/* Each API's words for each problem (the e2e tests hold the rest). */
Test(filename, one_rule_in_each_formats_words)
{
	char err[128];

	cr_expect_eq(validate_filename("a b", 3, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name may only contain letters, digits and _ . + -");
	cr_expect_eq(validate_filename("a/\0", 3, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name must be one path component (no '/')");
	cr_expect_eq(validate_filename("a\0/", 3, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name contains a NUL byte");
	cr_expect_eq(validate_filename("..", 2, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name must not start with a dot");
	cr_expect_eq(validate_filename("+x", 2, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name must not start with '+'");
	cr_expect_eq(validate_filename("", 0, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name is empty");
	memset(long_slash, 'x', sizeof(long_slash));
	long_slash[0] = '/';
	cr_expect_eq(validate_filename(long_slash, FILENAME_MAX_LEN + 1, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "file name is longer than 128 bytes");
	cr_expect_str_eq(validate_codize_filename(long_slash, 300), "contains invalid characters");
}

Test(glob, basics)
{
	cr_expect(validate_flag_glob_match("-O2", "-O2"));
	cr_expect_not(validate_flag_glob_match("-O2", "-O3"));
	cr_expect(validate_flag_glob_match("-std=*", "-std=c++17"));
	cr_expect(validate_flag_glob_match("-std=*", "-std="));
	cr_expect_not(validate_flag_glob_match("-std=*", "-std"));
	cr_expect(validate_flag_glob_match("*", ""));
	cr_expect(validate_flag_glob_match("-W?", "-Wa"));
	cr_expect_not(validate_flag_glob_match("-W?", "-W"));
	cr_expect(validate_flag_glob_match("a*b*c", "aXbYbZc"));
	cr_expect_not(validate_flag_glob_match("a*b*c", "aXbYbZ"));
	cr_expect(validate_flag_glob_match("**x", "yyx"));
	cr_expect(validate_flag_glob_match("*/*", "a/b"), "'/' is not special");
}

Test(glob, brackets)
{
	cr_expect(validate_flag_glob_match("-O[0-3]", "-O2"));
	cr_expect_not(validate_flag_glob_match("-O[0-3]", "-O4"));
	cr_expect_not(validate_flag_glob_match("-O[0-3]", "-O"));
	cr_expect_not(validate_flag_glob_match("-O[0-3]", "-O23"));
	cr_expect(validate_flag_glob_match("-O[0-3sgz]", "-Os"));
	cr_expect(validate_flag_glob_match("-O[!0-3]", "-O9"));
	cr_expect_not(validate_flag_glob_match("-O[!0-3]", "-O1"));
	cr_expect(validate_flag_glob_match("-O[^0-3]", "-Of"));
	cr_expect(validate_flag_glob_match("[]]", "]"));
	cr_expect(validate_flag_glob_match("[!]]", "x"));
	cr_expect_not(validate_flag_glob_match("[!]]", "]"));
	cr_expect(validate_flag_glob_match("a[-]b", "a-b"));
	cr_expect(validate_flag_glob_match("a[x-]b", "a-b"));
	cr_expect(validate_flag_glob_match("a[", "a["), "unclosed bracket is literal");
	cr_expect_not(validate_flag_glob_match("a[", "ab"));
}

Test(glob, escapes)
{
	cr_expect(validate_flag_glob_match("a\\*", "a*"));
	cr_expect_not(validate_flag_glob_match("a\\*", "ab"));
}

Test(glob, no_exponential_blowup)
{
	char s[201];

	memset(s, 'a', 200);
	s[200] = '\0';
	cr_expect_not(validate_flag_glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", s));
}

static const char *const gcc_allow[] = {
	"-O[0-3]", "-Wall", "-Wextra", "-std=*", "-D*", "-g", "-march=native",
};
static const char *const star[] = { "*" };

static int gflag(const char *f)
{
	char err[256];

	return validate_flag(gcc_allow, sizeof(gcc_allow) / sizeof(gcc_allow[0]), f, err,
			     sizeof(err));
}

static int anyflag(const char *f)
{
	char err[256];

	return validate_flag(star, 1, f, err, sizeof(err));
}

Test(flags, allow_list)
{
	cr_expect_eq(gflag("-O2"), 0);
	cr_expect_eq(gflag("-O4"), -EINVAL);
	cr_expect_eq(gflag("-std=c++17"), 0);
	cr_expect_eq(gflag("-Wall"), 0);
	cr_expect_eq(gflag("-wall"), -EINVAL, "flags are case-sensitive");
	cr_expect_eq(gflag("-WALL"), -EINVAL);
	cr_expect_eq(gflag("-DNDEBUG"), 0);
	cr_expect_eq(gflag("-fno-exceptions"), -EINVAL);
}

Test(flags, empty_allow_list_refuses_everything)
{
	char err[256];

	cr_expect_eq(validate_flag(NULL, 0, "-O2", err, sizeof(err)), -EINVAL);
}

Test(flags, one_argv_element_is_one_flag)
{
	/* allowed by -std=*, and harmless: gcc sees one unknown -std value */
	cr_expect_eq(gflag("-std=c++17 -fplugin=x"), 0);
	/* but a path sneaked after '=' is caught */
	cr_expect_eq(gflag("-std=c++17 -fplugin=/tmp/x.so"), -EINVAL);
	cr_expect_eq(gflag("-std=c11\n-fplugin=x"), -EINVAL, "newline refused");
}

Test(flags, deny_list_beats_allow_list)
{
	static const char *const bad[] = {
		"-fplugin", "-fplugin=x", "-fplugin=/sandbox/evil.so", "-fplugin-arg-x-y=z",
		"-B/tmp", "-B", "-Bprefix", "--specs=x", "-specs=x", "-Wl,-rpath,/tmp",
		"-Wl,--wrap=main", "-Wa,--defsym,x=1", "-Wp,-include,/etc/passwd", "@file",
		"@/etc/passwd", "-x", "-xc", "-wrapper", "-wrapper gdb,--args", "-include",
		"-include/etc/passwd", "-imacros", "-o", "-o/tmp/x", "-ofoo", "-save-temps",
		"-save-temps=obj", "-dumpdir", "-dumpbase", "-fdump-tree-all",
		"-fprofile-generate=/tmp/p", "-print-prog-name=cc1", "-print-file-name=libc.so",
		"-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xclang", "-T", "-Tscript.ld",
		"-M", "-MM", "-MF", "-MFdeps", "-MD", "-MMD", "-MG", "-MP", "-MT", "-MTx",
		"-MQx", "--sysroot=/tmp", "--sysroot", "-isysroot/x",
		"-iprefix", "-fuse-ld=/tmp/ld", "-I", "-L", "-l", "-isystem", "-I/etc",
		"-I../..", "-I/sandbox/../etc", "-L/usr/lib", "-isystem/usr/include/x",
		"-iquote/etc", "-idirafter/etc",
		/* gcc long options and their abbreviations */
		"--prefix=/tmp", "--pre=/tmp", "--for-linker=-rpath", "--for-l", "--include=x",
		"--inc", "--output=x", "--language=c", "--lang", "--library-directory=/x",
		"--save-temps", "--dumpdir", "--entry=x",
		/* javac, java */
		"-processor", "-processorpath", "--processor-path", "-J-Xmx1g", "-Xplugin:Foo",
		"-d", "-s", "-h", "-cp", "-classpath", "--class-path=/x", "-sourcepath",
		"--module-path=/x", "-Xbootclasspath/a:/x", "-javaagent:/x.jar",
		"-agentpath:/x.so", "-XX:OnOutOfMemoryError=sh", "-XX:OnError=sh",
		"-XX:Flags=/x", "-Djava.library.path=/tmp", "-Djava.system.class.loader=X",
		"-Xlog:gc:file=/tmp/x",
		/* rustc */
		"-C", "-Clinker=/tmp/x", "-C linker=/tmp/x", "-Clink-arg=-Wl,x", "-Clink-args=x",
		"-Cllvm-args=-load=x", "--codegen=linker=x", "-Zunstable-options", "--extern",
		"--extern=foo=/x.rlib", "-Lnative=/etc", "-Ldependency=../x", "--out-dir=/tmp",
		"--emit=link=/tmp/x",
		/* go */
		"-toolexec=/bin/sh", "--toolexec=x", "-exec=x", "-ldflags=-X main.x=y",
		"-gcflags=-N", "-asmflags=x", "-overlay=x.json", "-modfile=x", "--ldflags=x",
		/* ocaml */
		"-pp", "-ppx", "-ccopt",
		/* interpreters */
		"-e", "-r", "-m", "--require=x", "--import=x", "--loader=x", "--eval=x",
		"--inspect", "--inspect-brk=0", "--env-file=/x",
		/* generic paths and bytes */
		"-fprofile-generate=../x", "-foo=/etc/passwd", "-foo=x,/etc", "-foo:/etc",
		"-fx=a/../../b", "",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(anyflag(bad[i]), -EINVAL, "'%s' should be refused", bad[i]);
}

Test(flags, legitimate_flags_pass_a_wide_allow_list)
{
	static const char *const good[] = {
		"-O2", "-O3", "-Os", "-Wall", "-Wextra", "-Werror", "-std=c++17", "-DNDEBUG",
		"-DX=1", "-g", "-lm", "-lpthread", "-pthread", "-march=native", "-fno-exceptions",
		"-fsanitize=address", "-static", "-pipe", "-rdynamic", "-Iinclude", "-I/sandbox",
		"-I/sandbox/include", "-Linclude", "-L/sandbox/lib", "-Lnative=/sandbox/lib",
		"-Copt-level=3", "-Ctarget-cpu=native", "--edition=2021", "-Xlint:all",
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-ea",
		"-encoding", "UTF-8", "--stack-size=65500", "--max-old-space-size=256",
		"--no-warnings", "--std=c11", "-W",
		/* other compilers' -M<word>: Free Pascal language modes */
		"-Mobjfpc", "-Mdelphi", "-Mtp", "-Miso",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(anyflag(good[i]), 0, "'%s' should pass", good[i]);
}

Test(flags, length_and_control_bytes)
{
	char f[300];

	memset(f, 'x', sizeof(f));
	f[0] = '-';
	f[1] = 'f';
	f[256] = '\0';
	cr_expect_eq(anyflag(f), 0, "256 bytes is the maximum");
	f[256] = 'x';
	f[257] = '\0';
	cr_expect_eq(anyflag(f), -EINVAL);
	cr_expect_eq(anyflag("-O2\r"), -EINVAL);
	cr_expect_eq(anyflag("-O2\t"), -EINVAL);
	cr_expect_eq(anyflag("-O\x7f"), -EINVAL);
}

Test(flags, error_names_the_flag)
{
	char err[256] = "";

	cr_expect_eq(validate_flag(star, 1, "-fplugin=x", err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "-fplugin=x"));
	cr_expect_eq(validate_flag(gcc_allow, 1, "-O9", err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "-O9"));
}
