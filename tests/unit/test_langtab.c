#include "autoconf.h"

#include "common/lang/langtab.h"
#include "common/strv.h"
#include "common/yamlutil.h"

#include <errno.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Server maxima the tests load against (same order of size as the daemon's). */
static const struct limits test_max = {
	.wall_ms = 60000,
	.cpu_ms = 60000,
	.memory_kb = 4 * 1024 * 1024,
	.max_processes = 256,
	.fsize_kb = 256 * 1024,
	.output_kb = 16 * 1024,
};

static char tdir[64];
static char err[512];

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	f = fopen(path, "w");
	cr_assert(f, "fopen %s", path);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	strcpy(tdir, "/tmp/langtab-test-XXXXXX");
	cr_assert(mkdtemp(tdir));
	err[0] = '\0';
}

static void teardown(void)
{
	DIR *d = opendir(tdir);
	struct dirent *de;
	char path[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tdir, de->d_name);
		if (unlink(path) < 0)
			rmdir(path);
	}
	closedir(d);
	rmdir(tdir);
}

TestSuite(langtab, .init = setup, .fini = teardown);

static const char py_yaml[] =
	"id: py3\n"
	"name: Python 3\n"
	"aliases: [python]\n"
	"source_filename: solution.py\n"
	"run:\n"
	"  cmd: /usr/bin/python3\n"
	"  args: [\"{{source}}\"]\n"
	"probe: [/usr/bin/python3, --version]\n";

static const char cpp_yaml[] =
	"id: cpp\n"                                               /* 1 */
	"name: C++\n"
	"version: g++ 12\n"
	"aliases: [c++]\n"
	"source_filename: solution.cpp\n"                         /* 5 */
	"artifact: solution\n"
	"# a comment keeps the line numbers below\n"
	"mounts: [/usr/lib/gcc]\n"
	"install: { debian: [g++], npm: [] }\n"
	"build:\n"                                                /* 10 */
	"  cmd: /usr/bin/g++\n"
	"  args: [\"{{flags}}\", \"-o\", \"{{artifact}}\", \"{{source}}\"]\n"
	"  env: { TMPDIR: \"{{tmp}}\" }\n"
	"  limits: { wall_time_s: 10.5, memory_kb: 1048576, max_processes: 64 }\n"
	"  flag_allowlist: [\"-O[0-3]\", \"-std=*\"]\n"           /* 15 */
	"  default_flags: [-O2]\n"
	"run:\n"
	"  cmd: ./{{artifact}}\n"
	"  limits: { wall_time_s: 2, cpu_time_s: 1.5 }\n"
	"probe: [/usr/bin/g++, --version]\n";                     /* 20 */

/* Load tdir; on failure, err holds the message. */
static int load(struct langtab **t)
{
	return langtab_load(tdir, &test_max, t, err, sizeof(err));
}

/* The file must fail to load, and the message must name file:line and why. */
static void expect_fail(const char *text, int line, const char *why)
{
	struct langtab *t = NULL;
	char where[256];

	put("bad.yaml", text);
	cr_assert_eq(load(&t), -EINVAL, "loaded, but expected '%s' at line %d", why, line);
	cr_assert_null(t);
	snprintf(where, sizeof(where), "%s/bad.yaml:%d: ", tdir, line);
	cr_assert(strstr(err, where) == err, "error '%s' does not start with '%s'", err, where);
	cr_assert(strstr(err, why), "error '%s' does not say '%s'", err, why);
}

/* base with one line replaced (1-based), or removed when repl is NULL. */
static char *yaml_with(const char *base, int line, const char *repl)
{
	static char out[4096];
	const char *p = base;
	size_t o = 0;

	for (int l = 1; *p; l++) {
		const char *nl = strchr(p, '\n');
		size_t len = (size_t)(nl - p) + 1;

		if (l != line) {
			memcpy(out + o, p, len);
			o += len;
		} else if (repl) {
			o += (size_t)sprintf(out + o, "%s\n", repl);
		}
		p += len;
	}
	out[o] = '\0';
	return out;
}

static char *cpp_with(int line, const char *repl)
{
	return yaml_with(cpp_yaml, line, repl);
}

Test(langtab, good_table_loads)
{
	struct langtab *t = NULL;
	const struct lang *cpp, *py;

	put("cpp.yaml", cpp_yaml);
	put("py3.yaml", py_yaml);
	put("README", "not a language");
	put("notes.yml", "not loaded either");
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert_eq(langtab_count(t), 2);
	/* Name order: cpp.yaml before py3.yaml. */
	cpp = langtab_at(t, 0);
	py = langtab_at(t, 1);
	cr_assert_null(langtab_at(t, 2));
	cr_assert_str_eq(cpp->id, "cpp");
	cr_assert_str_eq(py->id, "py3");

	cr_assert_str_eq(cpp->name, "C++");
	cr_assert_str_eq(cpp->version_hint, "g++ 12");
	cr_assert_str_eq(cpp->source_filename, "solution.cpp");
	cr_assert_not(cpp->source_from_request);
	cr_assert_str_eq(cpp->artifact, "solution");
	cr_assert_eq(strv_len(cpp->ro_mounts), 1);
	cr_assert_str_eq(cpp->ro_mounts[0], "/usr/lib/gcc");
	cr_assert_eq(strv_len(cpp->debian_packages), 1);
	cr_assert_str_eq(cpp->debian_packages[0], "g++");
	cr_assert_eq(strv_len(cpp->npm_packages), 0);
	cr_assert_not_null(cpp->npm_packages);
	cr_assert(cpp->has_build);
	cr_assert_str_eq(cpp->build.cmd, "/usr/bin/g++");
	cr_assert_eq(strv_len(cpp->build.args), 4);
	cr_assert_str_eq(cpp->build.args[0], "{{flags}}");
	cr_assert_null(cpp->build.args[4]);
	cr_assert_eq(strv_len(cpp->build.env), 1);
	cr_assert_str_eq(cpp->build.env[0], "TMPDIR={{tmp}}");
	cr_assert_eq(cpp->build.limits.wall_ms, 10500);
	cr_assert_eq(cpp->build.limits.cpu_ms, 10500, "cpu defaults to wall");
	cr_assert_eq(cpp->build.limits.memory_kb, 1048576);
	cr_assert_eq(cpp->build.limits.max_processes, 64);
	cr_assert_eq(cpp->build.limits.fsize_kb, LANG_DEFAULT_FSIZE_KB);
	cr_assert_eq(cpp->build.limits.output_kb, LANG_DEFAULT_OUTPUT_KB);
	cr_assert_eq(strv_len(cpp->build.flag_allow), 2);
	cr_assert_str_eq(cpp->build.flag_allow[1], "-std=*");
	cr_assert_eq(strv_len(cpp->build.default_flags), 1);
	cr_assert_str_eq(cpp->run.cmd, "./{{artifact}}");
	cr_assert_eq(strv_len(cpp->run.args), 0);
	cr_assert_not_null(cpp->run.args);
	cr_assert_eq(cpp->run.limits.wall_ms, 2000);
	cr_assert_eq(cpp->run.limits.cpu_ms, 1500);
	cr_assert_eq(strv_len(cpp->probe), 2);
	cr_assert_str_eq(cpp->probe[1], "--version");
	cr_assert_eq(cpp->line, 1);
	cr_assert(strstr(cpp->file, "/cpp.yaml"));

	cr_assert_not(py->has_build);
	cr_assert_null(py->artifact);
	cr_assert_null(py->version_hint);
	cr_assert_eq(py->run.limits.wall_ms, LANG_DEFAULT_WALL_MS);
	cr_assert_eq(py->run.limits.cpu_ms, LANG_DEFAULT_WALL_MS);
	cr_assert_eq(py->run.limits.memory_kb, LANG_DEFAULT_MEMORY_KB);
	cr_assert_eq(py->run.limits.max_processes, LANG_DEFAULT_MAX_PROCESSES);
	langtab_free(t);
}

Test(langtab, find_by_id_and_alias)
{
	struct langtab *t = NULL;

	put("cpp.yaml", cpp_yaml);
	put("py3.yaml", py_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert_str_eq(langtab_find(t, "py3")->id, "py3");
	cr_assert_str_eq(langtab_find(t, "python")->id, "py3");
	cr_assert_str_eq(langtab_find(t, "c++")->id, "cpp");
	cr_assert_null(langtab_find(t, "java"));
	cr_assert_null(langtab_find(t, "Python"));
	cr_assert_null(langtab_find(t, ""));
	cr_assert_null(langtab_find(t, NULL));
	langtab_free(t);
}

Test(langtab, codize_runtimes)
{
	struct langtab *t = NULL;
	const struct lang *l;
	char list[64];

	put("cpp.yaml", cpp_with(20, "probe: [/usr/bin/g++, --version]\n"
				     "codize: { runtime: c-plus-plus, refused_files: [solution, a.out] }"));
	put("py3.yaml", py_yaml);
	put("rb.yaml", "id: rb\nname: Ruby\nsource_filename: a.rb\ncodize:\n  runtime: ruby\n"
		       "run: { cmd: /usr/bin/ruby }\nprobe: [/usr/bin/ruby]\n");
	cr_assert_eq(load(&t), 0, "%s", err);
	l = langtab_find_runtime(t, "c-plus-plus");
	cr_assert_not_null(l);
	cr_assert_str_eq(l->id, "cpp");
	cr_assert_eq(strv_len(l->codize_refused), 2);
	cr_assert_str_eq(l->codize_refused[1], "a.out");
	cr_assert_null(langtab_find_runtime(t, "cpp"), "ids are not runtime names");
	cr_assert_null(langtab_find_runtime(t, "python"), "py3 declares no runtime");
	cr_assert_eq(strv_len(langtab_find(t, "py3")->codize_refused), 0);
	cr_assert_not_null(langtab_find(t, "py3")->codize_refused);
	cr_assert_eq(langtab_runtime_list(t, list, sizeof(list)), 21);
	cr_assert_str_eq(list, "\"c-plus-plus\", \"ruby\"");
	/* a short buffer is cut, never overrun */
	cr_assert_eq(langtab_runtime_list(t, list, 8), 7);
	cr_assert_str_eq(list, "\"c-plus");
	langtab_free(t);
}

Test(langtab, codize_errors)
{
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\ncodize: { refused_files: [x] }"), 21,
		    "codize: missing required key 'runtime'");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\ncodize: { runtime: Go }"), 21,
		    "codize.runtime: 'Go' is not a valid id");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\ncodize: { runtime: go, extra: 1 }"), 21,
		    "unknown key 'extra' in codize");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\ncodize:\n  runtime: go\n"
				 "  refused_files: [ok, \"a/b\"]"), 23,
		    "codize.refused_files: 'a/b': contains invalid characters");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\ncodize: [go]"), 21,
		    "codize: expected a mapping");
}

Test(langtab, codize_runtime_unique)
{
	struct langtab *t = NULL;
	char where[256];

	put("a.yaml", "id: a\nname: A\nsource_filename: a.x\ncodize: { runtime: same }\n"
		      "run: { cmd: /bin/a }\nprobe: [/bin/a]\n");
	put("b.yaml", "id: b\nname: B\nsource_filename: b.x\ncodize:\n  runtime: same\n"
		      "run: { cmd: /bin/b }\nprobe: [/bin/b]\n");
	cr_assert_eq(load(&t), -EINVAL);
	snprintf(where, sizeof(where), "%s/b.yaml:5: codize runtime 'same' is already served by language 'a'",
		 tdir);
	cr_assert(strstr(err, where) == err, "%s", err);
}

Test(langtab, judge0_and_piston_names)
{
	struct langtab *t = NULL;
	const struct lang *l;

	put("cpp.yaml", cpp_with(20, "probe: [/usr/bin/g++, --version]\n"
				     "judge0: { id: 54, name: \"C++ (GCC 12.2.0)\", listed_ids: [52],"
				     " older_ids: [53] }\n"
				     "piston: { runtime: c++, version: 12.2.0, aliases: [cpp, g++] }"));
	put("py3.yaml", py_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	l = langtab_find_judge0(t, 54);
	cr_assert_not_null(l);
	cr_assert_str_eq(l->id, "cpp");
	cr_assert_str_eq(l->judge0_name, "C++ (GCC 12.2.0)");
	cr_assert_eq(langtab_find_judge0(t, 53), l, "an older id finds the language too");
	cr_assert_eq(langtab_find_judge0(t, 52), l, "a listed id finds the language too");
	cr_assert_eq(l->judge0_listed[0], 52u);
	cr_assert_eq(l->judge0_listed[1], 0u);
	cr_assert_eq(l->judge0_older[0], 53u);
	cr_assert_not(l->judge0_project, "not a project unless it says so");
	cr_assert_null(langtab_find_judge0(t, 71));
	cr_assert_null(langtab_find_judge0(t, 0));
	cr_assert_eq(langtab_find_piston(t, "c++"), l);
	cr_assert_eq(langtab_find_piston(t, "g++"), l);
	cr_assert_str_eq(l->piston_version, "12.2.0");
	cr_assert_null(langtab_find_piston(t, "python"), "py3 declares no Piston name");
	cr_assert_eq(langtab_find(t, "py3")->judge0_id, 0u);
	langtab_free(t);
	put("py3.yaml", "id: multi\nname: M\nsource_filename: run\n"
			"judge0: { id: 89, name: M, project: true }\n"
			"run: { cmd: /bin/bash, args: [\"{{source}}\"] }\nprobe: [/bin/bash]\n");
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert(langtab_find_judge0(t, 89)->judge0_project);
	langtab_free(t);
}

Test(langtab, judge0_and_piston_errors)
{
	struct langtab *t = NULL;

	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { name: \"C++\" }"), 21,
		    "judge0: missing required key 'id'");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54 }"), 21,
		    "judge0: missing required key 'name'");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54, name: C, older_ids: [54] }"),
		    21, "judge0 id 54 is listed twice");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54, name: C, listed_ids: [54] }"),
		    21, "judge0 id 54 is listed twice");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54, name: C, listed_ids: [5],"
				 " older_ids: [5] }"),
		    21, "judge0 id 5 is listed twice");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54, name: C, listed_ids: 5 }"),
		    21, "judge0.listed_ids: must be a list of ids");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\njudge0: { id: 54, name: C, project: maybe }"),
		    21, "judge0.project");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\npiston: { runtime: c++, version: \"12.2\" }"),
		    21, "piston.version: '12.2' is not x.y.z");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\npiston: { runtime: \"C Plus\", version: 1.0.0 }"),
		    21, "piston.runtime: 'C Plus' is not a valid name");
	unlink(strcat(strcpy((char[128]){ 0 }, tdir), "/bad.yaml"));
	put("a.yaml", "id: a\nname: A\nsource_filename: a.x\njudge0: { id: 7, name: A }\n"
		      "piston: { runtime: a, version: 1.0.0, aliases: [shared] }\n"
		      "run: { cmd: /bin/a }\nprobe: [/bin/a]\n");
	put("b.yaml", "id: b\nname: B\nsource_filename: b.x\njudge0: { id: 8, name: B, older_ids: [7] }\n"
		      "run: { cmd: /bin/b }\nprobe: [/bin/b]\n");
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert_not_null(strstr(err, "b.yaml:4: judge0 id 7 is already used by language 'a'"), "%s",
			   err);
	put("b.yaml", "id: b\nname: B\nsource_filename: b.x\njudge0: { id: 8, name: B, listed_ids: [7] }\n"
		      "run: { cmd: /bin/b }\nprobe: [/bin/b]\n");
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert_not_null(strstr(err, "b.yaml:4: judge0 id 7 is already used by language 'a'"), "%s",
			   err);
	put("b.yaml", "id: b\nname: B\nsource_filename: b.x\n"
		      "piston: { runtime: b, version: 1.0.0, aliases: [shared] }\n"
		      "run: { cmd: /bin/b }\nprobe: [/bin/b]\n");
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert_not_null(strstr(err, "b.yaml:4: piston name 'shared' is already used by language 'a'"),
			   "%s", err);
}

static const char jv_yaml[] =
	"id: jv\nname: J\nsource_filename: from_request\nartifact: from_request\n"
	"entry:\n"
	"  patterns:\n"
	"    - 'public[[:space:]]+((final)[[:space:]]+)*class[[:space:]]+([[:alpha:]_][[:alnum:]_]*)'\n"
	"    - 'class[[:space:]]+([[:alpha:]_][[:alnum:]_]*)[^{]*[{][^}]*main'\n"
	"  default: Main\n"
	"  suffix: .java\n"
	"run: { cmd: /bin/j, args: [\"{{artifact}}\"] }\nprobe: [/bin/j]\n";

Test(langtab, entry_inference)
{
	struct langtab *t = NULL;
	const struct lang *l;
	char *e;

	put("jv.yaml", jv_yaml);
	put("py3.yaml", py_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	l = langtab_find(t, "jv");
	cr_assert_str_eq(l->entry_suffix, ".java");
	/* the last group of the first matching pattern */
	e = langtab_infer_entry(l, "class A {}\npublic final class Sol { void main() {} }", NULL);
	cr_expect_str_eq(e, "Sol");
	free(e);
	e = langtab_infer_entry(l, "class Helper { }\nclass Prog {\n static void main() {} }", NULL);
	cr_expect_str_eq(e, "Prog", "the second pattern when the first does not match");
	free(e);
	e = langtab_infer_entry(l, "interface X {}", NULL);
	cr_expect_str_eq(e, "Main", "nothing matches: the default");
	free(e);
	e = langtab_infer_entry(l, "", NULL);
	cr_expect_str_eq(e, "Main");
	free(e);
	cr_expect_null(langtab_infer_entry(langtab_find(t, "py3"), "public class X {}", "a.py"),
		       "no entry section, no inference");
	langtab_free(t);
}

Test(langtab, entry_errors)
{
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: Main }"), 21,
		    "entry: missing required key 'patterns'");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { patterns: ['(a)'] }"), 21,
		    "entry: missing required key 'default'");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry:\n  default: Main\n"
				 "  patterns: ['(ok)', 'class (']"), 23,
		    "entry.patterns: 'class (': ");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry:\n  default: Main\n"
				 "  patterns: ['class [a-z]+']"), 23,
		    "has no group to name the entry");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: ../x, patterns: ['(a)'] }"),
		    21, "entry: '../x' is not a plain file name");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: M, patterns: ['(a)'], x: 1 }"),
		    21, "unknown key 'x' in entry");
}

/*
 * Found by fuzz_langtab: "b" and a hundred '+' made glibc's regcomp copy
 * the repeated part 2^100 times (gigabytes, at load, in the master).
 * Patterns that would grow past 1024 nodes are refused before regcomp,
 * as are back-references (matching with one backtracks, on the client's
 * source). Without the check this test does not fail, it runs out of
 * memory.
 */
Test(langtab, entry_patterns_that_explode)
{
	static const char *const bad[] = {
		"'(b+++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++)'",
		"'((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)'",
		"'(x{1000}){1000}'",
		"'(a{5000})'",
		"'(a{1,99999999999999999999})'",
		/* few copies, but each full of empty-match nodes: glibc's
		 * epsilon closures over them are cubic (12.7 s to load under
		 * the sanitizers, where the fuzzer found a slower one) */
		"'(((a?)?)?){300}'",
		"'(((((((((a?)?)?)?)?)?)?)?)?){60}'",
		"'((a*)(b*)(c?)){200}'",
	};
	char line[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "probe: [/usr/bin/g++]\nentry: { default: M, patterns: [%s] }",
			 bad[i]);
		expect_fail(cpp_with(20, line), 21, "repeats too much");
	}
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: M, patterns: ['(a)\\1'] }"),
		    21, "back-references are not allowed");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: M, patterns: ['a)(b'] }"),
		    21, "has a ')' without its '('");
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: M, patterns: "
				 "['((((((((((((((((((a))))))))))))))))))'] }"),
		    21, "groups are nested too deep");
	/* what the shipped files use stays well inside */
	put("bad.yaml", cpp_with(20, "probe: [/usr/bin/g++]\nentry: { default: M, patterns: "
				     "['(^|\\n)[[:blank:]]*(a|b)[[:blank:]]+([[:alpha:]_]{1,8})[^{]*[{]'] }"));
	{
		struct langtab *t = NULL;

		cr_assert_eq(load(&t), 0, "%s", err);
		langtab_free(t);
	}
}

/*
 * The source a pattern runs on is the client's: 256 KiB of "class A" lines
 * and no main made a plain regexec search try "[^{]*" from every line,
 * to the end (30 s a pattern on a 2-CPU guest). The search is now a few
 * passes (well under a second for all of these together); the timeout
 * is a guard, 40 times what the slowest of them takes, not a benchmark.
 */
Test(langtab, entry_inference_is_not_quadratic, .timeout = 30)
{
	static const struct { const char *id, *line, *tail, *want; } cases[] = {
		{ "java", "class A\n", "", "Main" },
		{ "java", "class A {\n", "\nclass Prog { static void main(", "Prog" },
		{ "java", "\n", "public class Z {}", "Z" },
		{ "kotlin", "object A\n", "", "SolutionKt" },
		{ "scala", "object A {\n", "\nobject Run { def main(", "Run" },
	};
	struct langtab *t = NULL;
	size_t cap = 256 * 1024;
	char *src = malloc(cap + 64);

	cr_assert_not_null(src);
	cr_assert_eq(langtab_load(GOBOXD_SRCDIR "/languages", &test_max, &t, err, sizeof(err)), 0,
		     "%s", err);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t ll = strlen(cases[i].line), o = 0;
		char *e;

		while (o + ll <= cap) {
			memcpy(src + o, cases[i].line, ll);
			o += ll;
		}
		strcpy(src + o, cases[i].tail);
		e = langtab_infer_entry(langtab_find(t, cases[i].id), src, "solution.kt");
		cr_expect_str_eq(e, cases[i].want, "%s, %s", cases[i].id, cases[i].line);
		free(e);
	}
	free(src);
	langtab_free(t);
}

Test(langtab, from_request_names)
{
	struct langtab *t = NULL;
	const struct lang *l;

	put("java.yaml", "id: java\nname: Java\nsource_filename: from_request\n"
			 "artifact: from_request\n"
			 "build: { cmd: /usr/bin/javac, args: [\"{{source}}\"] }\n"
			 "run: { cmd: /usr/bin/java, args: [\"-Xmx{{memory_mb}}m\", \"{{artifact}}\"] }\n"
			 "probe: [/usr/bin/java, --version]\n");
	cr_assert_eq(load(&t), 0, "%s", err);
	l = langtab_find(t, "java");
	cr_assert(l->source_from_request);
	cr_assert_null(l->source_filename);
	cr_assert(l->artifact_from_request);
	cr_assert_str_eq(l->artifact, "from_request");
	langtab_free(t);
}

static const char kt_yaml[] =
	"id: kt\n"                                                /* 1 */
	"name: K\n"
	"source_filename: from_request\n"
	"source_filename_default: solution.kt\n"
	"artifact: from_request\n"                                /* 5 */
	"entry:\n"
	"  patterns: ['object[[:space:]]+([[:alpha:]]+)']\n"
	"  default: \"{{stem_class}}Kt\"\n"
	"build: { cmd: /usr/bin/kotlinc, args: [\"{{source}}\"] }\n"
	"run: { cmd: /usr/bin/java, args: [\"{{artifact}}\"] }\n"  /* 10 */
	"probe: [/usr/bin/java]\n";

/* A name the request may give, a default when it gives none, and an entry
 * default built from whichever name the source got. */
Test(langtab, source_default_and_entry_from_name)
{
	struct langtab *t = NULL;
	const struct lang *l;
	char *e;

	put("kt.yaml", kt_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	l = langtab_find(t, "kt");
	cr_assert(l->source_from_request);
	cr_assert_str_eq(l->source_default, "solution.kt");
	e = langtab_infer_entry(l, "fun main() {}", "Main.kt");
	cr_expect_str_eq(e, "MainKt");
	free(e);
	e = langtab_infer_entry(l, "fun main() {}", "solution.kt");
	cr_expect_str_eq(e, "SolutionKt");
	free(e);
	e = langtab_infer_entry(l, "object App { }", "Main.kt");
	cr_expect_str_eq(e, "App", "a pattern's match comes first");
	free(e);
	cr_expect_null(langtab_infer_entry(l, "fun main() {}", NULL),
		       "a default built from the name needs the name");
	langtab_free(t);
}

static char *kt_with(int line, const char *repl)
{
	return yaml_with(kt_yaml, line, repl);
}

Test(langtab, source_default_errors)
{
	expect_fail(kt_with(3, "source_filename: solution.kt"), 4,
		    "source_filename_default: only with source_filename: from_request");
	expect_fail(kt_with(4, "source_filename_default: ../x.kt"), 4,
		    "source_filename_default: '../x.kt' is not a plain file name");
	expect_fail(kt_with(4, "# no default: the source would be named after its entry"), 8,
		    "{{stem}} and {{stem_class}} need the source's name");
	expect_fail(kt_with(8, "  default: \"{{artifact}}\""), 8,
		    "only {{stem}} and {{stem_class}} are expanded here");
	expect_fail(kt_with(8, "  default: \"{{nope}}\""), 8, "unknown placeholder '{{nope}}'");
	expect_fail(kt_with(8, "  default: \"{{stem}}/x\""), 8,
		    "entry: 'solution/x' is not a plain file name");
}

Test(langtab, defaults_lowered_to_server_max)
{
	struct limits small = test_max;
	struct langtab *t = NULL;

	small.memory_kb = 65536;
	small.cpu_ms = 1000;
	put("py3.yaml", py_yaml);
	cr_assert_eq(langtab_load(tdir, &small, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(langtab_at(t, 0)->run.limits.memory_kb, 65536);
	cr_assert_eq(langtab_at(t, 0)->run.limits.cpu_ms, 1000);
	langtab_free(t);
}

Test(langtab, no_max_means_no_cap)
{
	struct langtab *t = NULL;

	put("cpp.yaml", cpp_with(14, "  limits: { wall_time_s: 7200, memory_kb: 999999999 }"));
	cr_assert_eq(langtab_load(tdir, NULL, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(langtab_at(t, 0)->build.limits.wall_ms, 7200000);
	langtab_free(t);
}

Test(langtab, shipped_languages_load)
{
	struct langtab *t = NULL;

	cr_assert_eq(langtab_load(GOBOXD_SRCDIR "/languages", &test_max, &t, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_not_null(langtab_find(t, "py3"));
	cr_assert_not_null(langtab_find(t, "cpp"));
	cr_assert_not_null(langtab_find(t, "python"));
	for (size_t i = 0; i < langtab_count(t); i++) {
		const struct lang *l = langtab_at(t, i);

		cr_assert(strv_len(l->debian_packages) || strv_len(l->npm_packages),
			  "%s: no install step", l->id);
		cr_assert(strv_len(l->probe) > 0);
	}
	langtab_free(t);
}

/* The shipped Codize runtimes: exactly Codize's seven, with its refused files. */
Test(langtab, shipped_codize_runtimes)
{
	struct langtab *t = NULL;
	char list[256];

	cr_assert_eq(langtab_load(GOBOXD_SRCDIR "/languages", &test_max, &t, err, sizeof(err)), 0,
		     "%s", err);
	langtab_runtime_list(t, list, sizeof(list));
	cr_assert_str_eq(list, "\"bash\", \"go\", \"node\", \"node-typescript\", \"python\", "
			       "\"ruby\", \"rust\"");
	cr_assert_eq(strv_len(langtab_find_runtime(t, "go")->codize_refused), 3);
	cr_assert_str_eq(langtab_find_runtime(t, "rust")->codize_refused[0], "main");
	cr_assert_str_eq(langtab_find_runtime(t, "node-typescript")->codize_refused[0],
			 "package.json");
	cr_assert_str_eq(langtab_find_runtime(t, "ruby")->codize_refused[1], "Gemfile.lock");
	cr_assert_eq(strv_len(langtab_find_runtime(t, "python")->codize_refused), 0);
	langtab_free(t);
}

static void expect_entry_in(const struct langtab *t, const char *id, const char *name,
			    const char *src, const char *want)
{
	char *e = langtab_infer_entry(langtab_find(t, id), src, name);

	cr_expect_str_eq(e, want, "%s (%s): %s", id, name ? name : "unnamed", src);
	free(e);
}

/* The entry of a source the request does not name. */
static void expect_entry(const struct langtab *t, const char *id, const char *src,
			 const char *want)
{
	const struct lang *l = langtab_find(t, id);
	const char *name = l->source_from_request ? l->source_default : l->source_filename;
	char *e = langtab_infer_entry(l, src, name);

	cr_expect_str_eq(e, want, "%s: %s", id, src);
	free(e);
}

/* The entry patterns of the shipped JVM languages, on the usual shapes. */
Test(langtab, shipped_entry_patterns)
{
	struct langtab *t = NULL;

	cr_assert_eq(langtab_load(GOBOXD_SRCDIR "/languages", &test_max, &t, err, sizeof(err)), 0,
		     "%s", err);
	expect_entry(t, "java", "import java.util.*;\n\npublic class Solution {\n"
				"    public static void main(String[] a) {}\n}\n", "Solution");
	expect_entry(t, "java", "// the public class names the file\n"
				"/* public class Nope */\npublic final class Real {\n"
				"    public static class Inner {}\n}\n", "Real");
	expect_entry(t, "java", "class Helper { int f() { return 1; } }\n"
				"final class Prog {\n  public static void main(String[] a) {}\n}\n",
		     "Prog");
	expect_entry(t, "java", "class Main2 {}\n", "Main");
	expect_entry(t, "kotlin", "fun main() {\n    println(1)\n}\n", "SolutionKt");
	expect_entry_in(t, "kotlin", "Main.kt", "fun main() {}\n", "MainKt");
	expect_entry_in(t, "kotlin", "my-main.kt", "fun main() {}\n", "My_mainKt");
	expect_entry(t, "kotlin", "object Solver {\n    @JvmStatic fun main(args: Array<String>) {}\n}\n",
		     "Solver");
	expect_entry(t, "kotlin", "class App {\n  companion object {\n    @JvmStatic\n"
				  "    fun main(args: Array<String>) {}\n  }\n}\n", "App");
	expect_entry(t, "scala", "object Hello extends App {\n  println(1)\n}\n", "Hello");
	expect_entry(t, "scala", "object Util { def f = 1 }\nobject Run {\n"
				 "  def main(args: Array[String]): Unit = {}\n}\n", "Run");
	expect_entry(t, "scala", "class X\n", "Main");
	cr_expect_null(langtab_infer_entry(langtab_find(t, "py3"), "public class X {}", "a.py"));
	langtab_free(t);
}

/* Of two declarations whose matches end at the same "main(", the inner. */
Test(langtab, entry_match_that_ends_first)
{
	struct langtab *t = NULL;

	cr_assert_eq(langtab_load(GOBOXD_SRCDIR "/languages", &test_max, &t, err, sizeof(err)), 0,
		     "%s", err);
	expect_entry(t, "java", "class Outer {\n  final class Inner {\n"
				"    public static void main(String[] a) {}\n  }\n}\n", "Inner");
	expect_entry(t, "java", "class First {\n  public static void main(String[] a) {}\n}\n"
				"class Second {\n  public static void main(String[] a) {}\n}\n",
		     "First");
	langtab_free(t);
}

/* Directory-level errors. */

Test(langtab, missing_dir)
{
	struct langtab *t = NULL;

	cr_assert_eq(langtab_load("/nonexistent/langs", &test_max, &t, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "/nonexistent/langs: "), "%s", err);
}

Test(langtab, empty_dir)
{
	struct langtab *t = NULL;

	put("README.md", "nothing here");
	put(".hidden.yaml", py_yaml);
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert(strstr(err, "no language files"), "%s", err);
}

Test(langtab, yaml_dir_is_not_a_file)
{
	struct langtab *t = NULL;
	char path[256];

	snprintf(path, sizeof(path), "%s/x.yaml", tdir);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert(strstr(err, "x.yaml: not a regular file"), "%s", err);
}

/* YAML-level errors. */

Test(langtab, syntax_error_has_line)
{
	expect_fail("id: py3\nname: Python\nrun:\n  cmd: [unclosed\nprobe: [/bin/true]\n", 5,
		    "YAML syntax error");
}

Test(langtab, bad_indentation_has_line)
{
	expect_fail("id: py3\nname: x\n  bad: indentation\n", 3, "YAML syntax error");
}

Test(langtab, anchors_refused)
{
	expect_fail(cpp_with(16, "  default_flags: &f [-O2]"), 16, "anchors");
}

Test(langtab, aliases_refused)
{
	expect_fail("a: &x [1]\nb: *x\n", 1, "anchors");
	expect_fail("a: [1]\nb: *x\n", 2, "aliases (*x)");
}

Test(langtab, tags_refused)
{
	expect_fail(cpp_with(2, "name: !!binary QysrCg=="), 2, "tags");
}

Test(langtab, duplicate_key)
{
	expect_fail(cpp_with(3, "name: again"), 3, "duplicate key 'name' (first at line 2)");
}

Test(langtab, two_documents)
{
	char text[4096];

	snprintf(text, sizeof(text), "%s---\n%s", py_yaml, py_yaml);
	expect_fail(text, 9, "only one YAML document");
}

Test(langtab, file_too_large)
{
	static char big[70 * 1024];

	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("big.yaml", big);
	{
		struct langtab *t = NULL;

		cr_assert_eq(load(&t), -EINVAL);
		cr_assert(strstr(err, "big.yaml: larger than"), "%s", err);
	}
}

Test(langtab, empty_file)
{
	expect_fail("# nothing\n", 1, "no language defined");
}

Test(langtab, top_level_list)
{
	expect_fail("- id: py3\n", 1, "top level must be a mapping");
}

Test(langtab, languages_wrapper_explained)
{
	expect_fail("languages:\n  - id: py3\n", 1, "a file holds one language");
}

/* Schema errors: unknown keys, missing fields, bad values. */

Test(langtab, unknown_top_key)
{
	expect_fail(cpp_with(3, "versoin: 12"), 3, "unknown key 'versoin'");
}

Test(langtab, unknown_step_key)
{
	expect_fail(cpp_with(19, "  timeout: 3"), 19, "unknown key 'timeout' in run");
}

Test(langtab, unknown_limits_key)
{
	expect_fail(cpp_with(14, "  limits: { wall_time_s: 1,\n     memory_mb: 5 }"), 15,
		    "unknown key 'memory_mb' in build.limits");
}

Test(langtab, unknown_install_key)
{
	expect_fail(cpp_with(9, "install: { debian: [g++], pip: [x] }"), 9,
		    "unknown key 'pip' in install");
}

Test(langtab, missing_id)
{
	expect_fail(cpp_with(1, "# no id"), 2, "missing required key 'id'");
}

Test(langtab, missing_name)
{
	expect_fail(cpp_with(2, NULL), 1, "missing required key 'name'");
}

Test(langtab, missing_source_filename)
{
	expect_fail(cpp_with(5, NULL), 1, "missing required key 'source_filename'");
}

Test(langtab, missing_run)
{
	expect_fail("id: x\nname: X\nsource_filename: a.x\nprobe: [/bin/true]\n", 1,
		    "missing required key 'run'");
}

Test(langtab, missing_cmd)
{
	expect_fail(cpp_with(18, "  args: []"), 17, "run: missing required key 'cmd'");
}

Test(langtab, missing_probe)
{
	expect_fail(cpp_with(20, NULL), 1, "missing required key 'probe'");
}

Test(langtab, probe_relative)
{
	expect_fail(cpp_with(20, "probe: [g++, --version]"), 20, "must be an absolute path");
}

Test(langtab, probe_empty)
{
	expect_fail(cpp_with(20, "probe: []"), 20, "at least the command");
}

Test(langtab, probe_placeholder)
{
	expect_fail(cpp_with(20, "probe: [/usr/bin/g++, \"{{tmp}}\"]"), 20, "placeholders");
}

Test(langtab, bad_id)
{
	expect_fail(cpp_with(1, "id: Cpp"), 1, "'Cpp' is not a valid id");
	expect_fail(cpp_with(1, "id: -cpp"), 1, "not a valid id");
	expect_fail(cpp_with(1, "id: abcdefghijklmnopqrstuvwxyz0123456"), 1, "not a valid id");
	expect_fail(cpp_with(1, "id: [cpp]"), 1, "id: expected a string");
}

Test(langtab, bad_alias)
{
	expect_fail(cpp_with(4, "aliases: [\"c plus plus\"]"), 4, "'c plus plus' is not a valid id");
}

Test(langtab, empty_name)
{
	expect_fail(cpp_with(2, "name: \"\""), 2, "name: must not be empty");
	expect_fail(cpp_with(2, "name:"), 2, "name: expected a string");
}

Test(langtab, bad_source_filename)
{
	expect_fail(cpp_with(5, "source_filename: ../x.cpp"), 5, "not a plain file name");
	expect_fail(cpp_with(5, "source_filename: .hidden"), 5, "not a plain file name");
	expect_fail(cpp_with(5, "source_filename: a/b.cpp"), 5, "not a plain file name");
}

Test(langtab, bad_artifact)
{
	expect_fail(cpp_with(6, "artifact: /tmp/x"), 6, "artifact: '/tmp/x' is not a plain");
}

/* The names a language gives itself follow a request's rule, leading '-'
 * and '+' included: {{source}} and {{artifact}} go on command lines. */
Test(langtab, file_names_that_read_as_options)
{
	expect_fail(cpp_with(5, "source_filename: -x.cpp"), 5,
		    "source_filename: '-x.cpp' is not a plain file name");
	expect_fail(cpp_with(5, "source_filename: +x.cpp"), 5, "not a plain file name");
	expect_fail(cpp_with(6, "artifact: -o"), 6, "artifact: '-o' is not a plain file name");
}

/* Every jail has /proc now (it is made before its language is known). */
Test(langtab, proc_is_not_a_key)
{
	expect_fail(cpp_with(7, "proc: false"), 7, "unknown key 'proc'");
}

Test(langtab, bad_mounts)
{
	expect_fail(cpp_with(8, "mounts: [usr/lib]"), 8, "must be an absolute path");
	expect_fail(cpp_with(8, "mounts: [/usr/../etc]"), 8, "'..' components");
	expect_fail(cpp_with(8, "mounts: [/]"), 8, "host's root");
	expect_fail(cpp_with(8, "mounts: [\"/a:/b\"]"), 8, "':'");
	expect_fail(cpp_with(8, "mounts: [/usr/lib/]"), 8, "end with '/'");
}

/*
 * Found by fuzz_langtab: a two-byte mount ("/e") was compared from one
 * byte before its start (the "/.." tail). The read changes no answer, so
 * this test fails only in an AddressSanitizer build (--enable-asan), as
 * a heap-buffer-overflow.
 */
Test(langtab, short_mounts)
{
	struct langtab *t = NULL;

	put("cpp.yaml", cpp_with(8, "mounts: [/e]"));
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_expect_str_eq(langtab_find(t, "cpp")->ro_mounts[0], "/e");
	langtab_free(t);
	expect_fail(cpp_with(8, "mounts: [/.]"), 8, "'.' or '..' components");
	expect_fail(cpp_with(8, "mounts: [/..]"), 8, "'.' or '..' components");
}

Test(langtab, bad_packages)
{
	expect_fail(cpp_with(9, "install: { debian: [\"g++; rm -rf /\"] }"), 9,
		    "not a Debian package name");
	expect_fail(cpp_with(9, "install: { npm: [\"--global\"] }"), 9, "not an npm package name");
}

Test(langtab, step_not_a_map)
{
	expect_fail("id: x\nname: X\nsource_filename: a.x\nrun: /bin/true\nprobe: [/bin/true]\n", 4,
		    "run: expected a mapping");
}

Test(langtab, relative_cmd)
{
	expect_fail(cpp_with(11, "  cmd: g++"), 11, "must be an absolute path or start with ./");
	expect_fail(cpp_with(11, "  cmd: \"\""), 11, "build.cmd: must not be empty");
}

Test(langtab, bad_env)
{
	expect_fail(cpp_with(13, "  env: { \"BAD-NAME\": x }"), 13, "not a valid variable name");
	expect_fail(cpp_with(13, "  env: { A: [x] }"), 13, "expected a string");
	expect_fail(cpp_with(13, "  env: [A=b]"), 13, "build.env: expected a mapping");
}

/* Limits. */

Test(langtab, limit_over_server_max)
{
	expect_fail(cpp_with(14, "  limits: { memory_kb: 8388608 }"), 14,
		    "build.limits.memory_kb: 8388608 is above the maximum 4194304");
	expect_fail(cpp_with(14, "  limits:\n    max_processes: 1000"), 15,
		    "build.limits.max_processes: 1000 is above the maximum 256");
	expect_fail(cpp_with(19, "  limits: { wall_time_s: 61 }"), 19,
		    "run.limits.wall_time_s: 61s is above the maximum 60.000s");
	expect_fail(cpp_with(19, "  limits: { cpu_time_s: 60.001 }"), 19, "above the maximum");
	expect_fail(cpp_with(19, "  limits: { file_size_kb: 262145 }"), 19, "above the maximum");
	expect_fail(cpp_with(19, "  limits: { output_kb: 16385 }"), 19, "above the maximum");
}

Test(langtab, limit_bad_values)
{
	expect_fail(cpp_with(19, "  limits: { memory_kb: 0 }"), 19, "below the minimum 1");
	expect_fail(cpp_with(19, "  limits: { memory_kb: -5 }"), 19, "not a whole number");
	expect_fail(cpp_with(19, "  limits: { memory_kb: 1.5 }"), 19, "not a whole number");
	expect_fail(cpp_with(19, "  limits: { wall_time_s: 0 }"), 19, "must be above 0");
	expect_fail(cpp_with(19, "  limits: { wall_time_s: 1.2345 }"), 19, "at most 3 decimals");
	expect_fail(cpp_with(19, "  limits: { wall_time_s: 1s }"), 19, "not a number of seconds");
	expect_fail(cpp_with(19, "  limits: { wall_time_s: [1] }"), 19, "expected seconds");
	expect_fail(cpp_with(19, "  limits: 5"), 19, "run.limits: expected a mapping");
}

/* Placeholders. */

Test(langtab, unknown_placeholder)
{
	expect_fail(cpp_with(12, "  args: [\"{{flags}}\", \"{{output}}\"]"), 12,
		    "unknown placeholder '{{output}}'");
}

Test(langtab, unclosed_placeholder)
{
	expect_fail(cpp_with(12, "  args: [\"{{flags}}\",\n    \"{{source\"]"), 13, "unclosed '{{'");
}

Test(langtab, list_placeholder_not_alone)
{
	expect_fail(cpp_with(12, "  args: [\"-f{{flags}}\"]"), 12, "must be a whole argument");
}

Test(langtab, list_placeholder_in_cmd)
{
	expect_fail(cpp_with(18, "  cmd: \"{{sources}}\""), 18, "not allowed in cmd");
}

Test(langtab, list_placeholder_in_env)
{
	expect_fail(cpp_with(13, "  env: { CFLAGS: \"{{flags}}\" }"), 13, "not allowed in env");
}

Test(langtab, placeholder_in_env_checked)
{
	expect_fail(cpp_with(13, "  env: { X: \"{{nope}}\" }"), 13, "build.env.X: unknown placeholder");
}

Test(langtab, artifact_without_artifact)
{
	expect_fail(cpp_with(6, NULL), 11, "{{artifact}} used but the language has no artifact");
}

Test(langtab, flags_without_allowlist_is_fine)
{
	struct langtab *t = NULL;

	put("cpp.yaml", cpp_with(15, NULL));
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert_eq(strv_len(langtab_at(t, 0)->build.flag_allow), 0);
	langtab_free(t);
}

Test(langtab, allowlist_without_flags_placeholder)
{
	expect_fail(cpp_with(12, "  args: [\"-o\", \"{{artifact}}\", \"{{source}}\"]"), 15,
		    "build.flag_allowlist: given, but build.args has no \"{{flags}}\"");
}

Test(langtab, empty_allowlist_pattern)
{
	expect_fail(cpp_with(15, "  flag_allowlist: [\"\"]"), 15, "empty pattern");
}

/* Uniqueness across files. */

Test(langtab, duplicate_id_names_both_files)
{
	struct langtab *t = NULL;
	char other[256];

	put("a.yaml", py_yaml);
	put("b.yaml", "# the same language again\n"
		      "id: py3\nname: P\nsource_filename: a.py\n"
		      "run: { cmd: /usr/bin/python3 }\nprobe: [/bin/true]\n");
	cr_assert_eq(load(&t), -EINVAL);
	snprintf(other, sizeof(other), "%s/b.yaml:2: id 'py3' is already used by language 'py3' (%s/a.yaml:1)",
		 tdir, tdir);
	cr_assert_str_eq(err, other);
}

Test(langtab, duplicate_alias_across_files)
{
	struct langtab *t = NULL;

	put("a.yaml", py_yaml);
	put("b.yaml", "id: pypy\nname: PyPy\naliases: [pypy3, python]\nsource_filename: a.py\n"
		      "run: { cmd: /usr/bin/pypy3 }\nprobe: [/bin/true]\n");
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert(strstr(err, "/b.yaml:3: alias 'python' is already used by language 'py3'"), "%s",
		  err);
	cr_assert(strstr(err, "/a.yaml:1)"), "%s", err);
}

Test(langtab, id_clashes_with_earlier_alias)
{
	struct langtab *t = NULL;

	put("a.yaml", py_yaml);
	put("b.yaml", "id: python\nname: P\nsource_filename: a.py\n"
		      "run: { cmd: /usr/bin/python3 }\nprobe: [/bin/true]\n");
	cr_assert_eq(load(&t), -EINVAL);
	cr_assert(strstr(err, "/b.yaml:1: id 'python' is already used by language 'py3'"), "%s",
		  err);
}

Test(langtab, alias_repeats_id)
{
	expect_fail(cpp_with(4, "aliases: [c++, cpp]"), 4, "alias 'cpp' repeats the id");
	expect_fail(cpp_with(4, "aliases: [c++, c++]"), 4, "alias 'c++' is listed twice");
}

/* The generic YAML layer, as the config loader uses it. */

Test(yamlutil, tree_and_typed_reads)
{
	const char text[] = "a: 1\nb: [x, \"y\"]\nc: { d: 2.25 }\ne: yes\nf:\n";
	struct yamlutil_node *root = NULL;
	char **v = NULL, *s = NULL;
	uint64_t u = 0;
	bool b = false;

	cr_assert_eq(yamlutil_load_string("t.yaml", text, strlen(text), &root, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(root->type, YAMLUTIL_MAP);
	cr_assert_eq(root->n, 5);
	cr_assert_eq(root->key_lines[2], 3);
	cr_assert_eq(yamlutil_u64(yamlutil_get(root, "a"), "t.yaml", "a", 0, 10, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 1);
	cr_assert_eq(yamlutil_u64(yamlutil_get(root, "a"), "t.yaml", "a", 2, 10, &u, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "t.yaml:1: a: 1 is below the minimum 2");
	cr_assert_eq(yamlutil_strv(yamlutil_get(root, "b"), "t.yaml", "b", &v, err, sizeof(err)), 0);
	cr_assert_eq(strv_len(v), 2);
	cr_assert_str_eq(v[1], "y");
	cr_assert_null(v[2]);
	cr_assert(yamlutil_get(root, "b")->items[1]->quoted);
	cr_assert_not(yamlutil_get(root, "b")->items[0]->quoted);
	strv_free(v);
	cr_assert_eq(yamlutil_seconds_ms(yamlutil_get(yamlutil_get(root, "c"), "d"), "t.yaml", "d", 10000,
				      &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 2250);
	cr_assert_eq(yamlutil_bool(yamlutil_get(root, "e"), "t.yaml", "e", &b, err, sizeof(err)), 0);
	cr_assert(b);
	cr_assert_eq(yamlutil_str(yamlutil_get(root, "f"), "t.yaml", "f", &s, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "t.yaml:5: f: expected a string, found nothing");
	cr_assert_eq(yamlutil_str(yamlutil_get(root, "b"), "t.yaml", "b", &s, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "t.yaml:2: b: expected a string, found a list");
	cr_assert_null(yamlutil_get(root, "zz"));
	cr_assert_null(yamlutil_get(yamlutil_get(root, "a"), "x"));
	cr_assert_eq(yamlutil_u64(yamlutil_get(root, "a"), "t.yaml", "a", 0, UINT64_MAX, &u, err,
			       sizeof(err)), 0);
	yamlutil_free(root);
}

Test(yamlutil, huge_number_and_empty_document)
{
	const char big[] = "n: 99999999999999999999999\n";
	struct yamlutil_node *root = NULL;
	uint64_t u;

	cr_assert_eq(yamlutil_load_string("t", big, strlen(big), &root, err, sizeof(err)), 0);
	cr_assert_eq(yamlutil_u64(yamlutil_get(root, "n"), "t", "n", 0, UINT64_MAX, &u, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "above the maximum"), "%s", err);
	yamlutil_free(root);
	cr_assert_eq(yamlutil_load_string("t", "", 0, &root, err, sizeof(err)), 0);
	cr_assert_eq(root->type, YAMLUTIL_MAP);
	cr_assert_eq(root->n, 0);
	yamlutil_free(root);
	cr_assert_eq(yamlutil_load_string("t", "---\n", 4, &root, err, sizeof(err)), 0);
	cr_assert_eq(root->type, YAMLUTIL_MAP);
	yamlutil_free(root);
}

Test(yamlutil, deep_nesting_refused)
{
	char text[256];
	struct yamlutil_node *root = NULL;

	memset(text, '[', 100);
	text[100] = '\0';
	cr_assert_eq(yamlutil_load_string("t", text, strlen(text), &root, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "nesting deeper"), "%s", err);
}

Test(yamlutil, nul_in_scalar_refused)
{
	const char text[] = "a: \"x\\0y\"\n";
	struct yamlutil_node *root = NULL;

	cr_assert_eq(yamlutil_load_string("t", text, strlen(text), &root, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "t:1: a NUL character"), "%s", err);
}

Test(langtab, open_files_defaults_and_override)
{
	struct langtab *t = NULL;
	const struct lang *cpp;

	put("cpp.yaml", cpp_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	cpp = langtab_find(t, "cpp");
	cr_assert_eq(cpp->build.open_files, LANG_BUILD_OPEN_FILES);
	cr_assert_eq(cpp->run.open_files, LANG_RUN_OPEN_FILES);
	langtab_free(t);
	put("cpp.yaml", cpp_with(19, "  open_files: 32"));
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert_eq(langtab_find(t, "cpp")->run.open_files, 32);
	langtab_free(t);
}

Test(langtab, bad_open_files)
{
	expect_fail(cpp_with(19, "  open_files: 4"), 19, "run.open_files");
}

/* cpp_yaml with a piston block of its own at line 21 and below. */
static char *cpp_piston(const char *block)
{
	static char out[4096];

	snprintf(out, sizeof(out), "%s%s", cpp_with(20, "probe: [/usr/bin/g++]"), block);
	return out;
}

Test(langtab, piston_commands)
{
	struct langtab *t = NULL;
	const struct lang *cpp, *py;
	char *const *args;
	const char *cmd;

	put("cpp.yaml", cpp_piston("piston:\n"
				   "  runtime: c++\n"
				   "  version: 12.2.0\n"
				   "  aliases: [c++, g++]\n"     /* Piston lists some runtimes as aliases */
				   "  extension: .cpp\n"
				   "  build:\n"
				   "    cmd: /bin/sh\n"
				   "    args: [\"-c\", \"exec /usr/bin/g++ -o {{artifact}} *.cpp\"]\n"
				   "  run: { args: [] }\n"));
	put("py3.yaml", yaml_with(py_yaml, 8, "probe: [/usr/bin/python3]\n"
					      "piston: { runtime: python, version: 3.11.2,"
					      " run: { args: [\"-u\", \"{{source}}\"] } }"));
	cr_assert_eq(load(&t), 0, "%s", err);
	cpp = langtab_find(t, "cpp");
	cr_assert_str_eq(cpp->piston_extension, ".cpp");
	cr_assert(cpp->piston_compiled, "a language that builds answers a compile stage");
	langtab_step_cmdline(&cpp->build, &cpp->piston_build, &cmd, &args);
	cr_assert_str_eq(cmd, "/bin/sh");
	cr_assert_str_eq(args[1], "exec /usr/bin/g++ -o {{artifact}} *.cpp");
	langtab_step_cmdline(&cpp->build, NULL, &cmd, &args);
	cr_assert_str_eq(cmd, "/usr/bin/g++", "other APIs run the step's own command");
	cr_assert_str_eq(args[0], "{{flags}}");
	langtab_step_cmdline(&cpp->run, &cpp->piston_run, &cmd, &args);
	cr_assert_str_eq(cmd, "./{{artifact}}", "no cmd given: the step's");
	cr_assert_null(args[0], "args: [] is no argument, not the step's");
	py = langtab_find(t, "py3");
	cr_assert_null(py->piston_extension);
	cr_assert_not(py->piston_compiled);
	langtab_step_cmdline(&py->run, &py->piston_run, &cmd, &args);
	cr_assert_str_eq(cmd, "/usr/bin/python3");
	cr_assert_str_eq(args[0], "-u");
	langtab_free(t);
	put("cpp.yaml", cpp_piston("piston: { runtime: c++, version: 12.2.0, compiled: false }\n"));
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert_not(langtab_find(t, "cpp")->piston_compiled);
	langtab_free(t);
}

Test(langtab, piston_command_errors)
{
	expect_fail(cpp_piston("piston: { runtime: c++, version: 1.0.0, extension: cpp }\n"), 21,
		    "piston.extension: 'cpp' is not a dot");
	expect_fail(cpp_piston("piston: { runtime: c++, version: 1.0.0, extension: \".c/x\" }\n"),
		    21, "piston.extension: '.c/x'");
	expect_fail(cpp_piston("piston: { runtime: c++, version: 1.0.0, extension: }\n"), 21,
		    "piston.extension");
	expect_fail(cpp_piston("piston: { runtime: c++, version: 1.0.0, compiled: perhaps }\n"), 21,
		    "piston.compiled");
	expect_fail(yaml_with(py_yaml, 8, "probe: [/usr/bin/python3]\n"
					  "piston: { runtime: py, version: 1.0.0, compiled: true }"),
		    9, "piston.compiled: true, but the language has no build");
	expect_fail(yaml_with(py_yaml, 8, "probe: [/usr/bin/python3]\n"
					  "piston:\n  runtime: py\n  version: 1.0.0\n"
					  "  build: { args: [] }"),
		    12, "piston.build: the language has no build");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n  build: {}\n"), 24,
		    "piston.build: give cmd, args or both");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  build: { cmd: g++ }\n"), 24,
		    "piston.build.cmd: 'g++' must be an absolute path");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  run: { cmd: }\n"), 24, "piston.run.cmd: expected a string");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  run: { cmd: \"\" }\n"), 24, "piston.run.cmd: must not be empty");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  run:\n    args: [\"{{source}}\", \"{{output}}\"]\n"), 25,
		    "piston.run.args: ");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  run: { args: [\"-f{{sources}}\"] }\n"), 24, "piston.run.args: ");
	expect_fail(yaml_with(py_yaml, 8, "probe: [/usr/bin/python3]\n"
					  "piston:\n  runtime: py\n  version: 1.0.0\n"
					  "  run: { args: [\"{{artifact}}\"] }"),
		    12, "piston.run.args: {{artifact}} used but the language has no artifact");
	expect_fail(cpp_piston("piston:\n  runtime: c++\n  version: 1.0.0\n"
			       "  run: { argv: [] }\n"), 24, "unknown key 'argv'");
	expect_fail(cpp_piston("piston: { runtime: c++, version: 1.0.0, aliases: [g++, g++] }\n"),
		    21, "piston name 'g++' is listed twice");
}

/* "network": the language's default for its tests, off unless said. */
Test(langtab, network_is_a_default_off_unless_said)
{
	struct langtab *t = NULL;

	put("cpp.yaml", cpp_with(7, "network: true"));
	put("py3.yaml", py_yaml);
	cr_assert_eq(load(&t), 0, "%s", err);
	cr_assert(langtab_find(t, "cpp")->network);
	cr_assert_not(langtab_find(t, "py3")->network);
	langtab_free(t);
}

Test(langtab, network_is_a_boolean)
{
	expect_fail(cpp_with(7, "network: sometimes"), 7, "network");
}
