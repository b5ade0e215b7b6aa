#include "autoconf.h"

#include <errno.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "worker/sandbox/jobdir.h"
#include "worker/http/api.h"
#include "worker/http/api_run_return.h"
#include "worker/judge/request.h"

static char tdir[64];
static struct langtab *tab;
static struct config cfg;

static const char py_yaml[] =
	"id: py3\n"
	"name: Python 3\n"
	"aliases: [python]\n"
	"source_filename: solution.py\n"
	"codize: { runtime: python }\n"
	"run:\n"
	"  cmd: /usr/bin/python3\n"
	"  args: [\"{{source}}\"]\n"
	"  limits: { wall_time_s: 3, memory_kb: 102400, max_processes: 16 }\n"
	"probe: [/usr/bin/python3, --version]\n";

static const char cpp_yaml[] =
	"id: cpp\n"
	"name: C++\n"
	"source_filename: solution.cpp\n"
	"artifact: solution\n"
	"codize:\n"
	"  runtime: c-plus-plus\n"
	"  refused_files: [solution, Makefile]\n"
	"build:\n"
	"  cmd: /usr/bin/g++\n"
	"  args: [\"{{flags}}\", \"-o\", \"{{artifact}}\", \"{{source}}\"]\n"
	"  limits: { wall_time_s: 10.5, memory_kb: 1048576, max_processes: 64 }\n"
	"  flag_allowlist: [\"-O[0-3]\", \"-std=*\", \"-Wall\"]\n"
	"  default_flags: [-O2]\n"
	"run:\n"
	"  cmd: ./{{artifact}}\n"
	"  limits: { wall_time_s: 2, cpu_time_s: 1.5 }\n"
	"probe: [/usr/bin/g++, --version]\n";

static const char java_yaml[] =
	"id: java\n"
	"name: Java\n"
	"source_filename: from_request\n"
	"artifact: from_request\n"
	"codize: { runtime: java }\n"
	"build: { cmd: /usr/bin/javac, args: [\"{{source}}\"] }\n"
	"run: { cmd: /usr/bin/java, args: [\"{{artifact}}\"] }\n"
	"probe: [/usr/bin/java, --version]\n";

static const char jv_yaml[] =
	"id: jv\n"
	"name: J\n"
	"source_filename: from_request\n"
	"artifact: from_request\n"
	"entry:\n"
	"  patterns: ['public[[:space:]]+class[[:space:]]+([[:alpha:]]+)']\n"
	"  default: Main\n"
	"  suffix: .java\n"
	"build: { cmd: /usr/bin/javac, args: [\"{{source}}\"] }\n"
	"run: { cmd: /usr/bin/java, args: [\"{{artifact}}\"] }\n"
	"probe: [/usr/bin/java, --version]\n";

/* Kotlin's shape: the request may name the file, whose name names the class. */
static const char kt_yaml[] =
	"id: kt\n"
	"name: K\n"
	"source_filename: from_request\n"
	"source_filename_default: solution.kt\n"
	"artifact: from_request\n"
	"entry:\n"
	"  patterns: ['object[[:space:]]+([[:alpha:]]+)']\n"
	"  default: \"{{stem_class}}Kt\"\n"
	"build: { cmd: /usr/bin/kotlinc, args: [\"{{source}}\"] }\n"
	"run: { cmd: /usr/bin/java, args: [\"{{artifact}}\"] }\n"
	"probe: [/usr/bin/java]\n";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "fopen %s", path);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char err[512] = "";

	strcpy(tdir, "/tmp/goboxd-test-request-XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
	put("py3.yaml", py_yaml);
	put("cpp.yaml", cpp_yaml);
	put("java.yaml", java_yaml);
	put("jv.yaml", jv_yaml);
	put("kt.yaml", kt_yaml);
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_source_bytes = 1000;
	cfg.max_tests = 3;
	cfg.max_stdin_bytes = 10;
	cfg.max_expected_bytes = 10;
	cfg.max_files = 4;
	cfg.max_file_bytes = 16;
	cfg.max_test_stdin_bytes = 10;
	cfg.max_return_files = 64;
	cfg.max_return_file_bytes = 1000;
	cfg.max_return_total_bytes = 8000;
	cfg.max_run_body_bytes = 4096;
	cfg.max_body_bytes = 4096;
	cfg.limits_max = (struct limits){
		.wall_ms = 20000, .cpu_ms = 20000, .memory_kb = 2097152,
		.max_processes = 128, .fsize_kb = 65536, .output_kb = 1024,
	};
	cr_assert_eq(langtab_load(tdir, &cfg.limits_max, &tab, err, sizeof(err)), 0, "%s", err);
}

static void teardown(void)
{
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	langtab_free(tab);
	jobdir_remove_at(fd, tdir + 5);
	close(fd);
}

TestSuite(native, .init = setup, .fini = teardown);
TestSuite(codize, .init = setup, .fini = teardown);

static struct req_error err;

static struct job_request *parse_ok(const char *body)
{
	struct job_request *r = NULL;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(api_run_parse(body, strlen(body), tab, &cfg, &r, &err), 0,
		     "%s: %s (%s) for %s", err.code, err.message, err.path, body);
	cr_assert_not_null(r);
	return r;
}

static void parse_bad_len(const char *body, size_t len, const char *code, const char *path)
{
	struct job_request *r = (struct job_request *)0x1;

	memset(&err, 0, sizeof(err));
	cr_assert_eq(api_run_parse(body, len, tab, &cfg, &r, &err), -EINVAL,
		     "accepted: %s", body);
	cr_expect_eq(r, (struct job_request *)0x1, "out touched on failure");
	cr_expect_eq(err.http_status, 400);
	cr_expect_str_eq(err.code, code, "body %s: %s", body, err.message);
	cr_expect_str_eq(err.path, path, "body %s", body);
	cr_expect_neq(err.message[0], '\0');
}

static void parse_bad(const char *body, const char *code, const char *path)
{
	parse_bad_len(body, strlen(body), code, path);
}

#define T1 "\"tests\":[{}]"

Test(native, cpp_full)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"cpp\",\"source\":\"int main(){}\","
		"\"build\":{\"limits\":{\"wall_time_s\":2.5,\"memory_kb\":99999999}},"
		"\"run\":{\"limits\":{\"max_processes\":1000,\"cpu_time_s\":0.25}},"
		"\"tests\":[{\"stdin\":\"1\\n\",\"expected_stdout\":\"hi\"},{}]}");

	cr_expect_eq(r->capture.stream_cap, 0, "the steps' own limits cap /run's output");
	cr_expect_eq(r->capture.budget_format, OUTTEXT_JSON);
	cr_expect_not(r->capture.pin_cpu);
	cr_expect_str_eq(r->lang->id, "cpp");
	cr_assert_eq(r->nfiles, 1);
	cr_expect_str_eq(r->files[0].name, "solution.cpp");
	cr_expect_eq(r->files[0].len, 12);
	cr_expect_str_eq(r->files[0].data, "int main(){}");
	cr_expect_str_eq(r->artifact, "solution");
	cr_assert_not_null(r->build_flags);
	cr_expect_str_eq(r->build_flags[0], "-O2", "default flags when none given");
	cr_expect_null(r->build_flags[1]);
	cr_assert_not_null(r->run_flags);
	cr_expect_null(r->run_flags[0]);
	cr_expect_eq(r->build_limits.wall_ms, 2500);
	cr_expect_eq(r->build_limits.memory_kb, 2097152, "clamped to the maximum");
	cr_expect_eq(r->build_limits.max_processes, 64);
	cr_expect_eq(r->run_limits.wall_ms, 2000);
	cr_expect_eq(r->run_limits.cpu_ms, 250);
	cr_expect_eq(r->run_limits.max_processes, 128, "clamped to the maximum");
	cr_assert_eq(r->ntests, 2);
	cr_expect_eq(r->tests[0].stdin_len, 2);
	cr_expect_str_eq(r->tests[0].stdin_data, "1\n");
	cr_expect_eq(r->tests[0].expected_len, 2);
	cr_expect_str_eq(r->tests[0].expected, "hi");
	cr_expect_not_null(r->tests[1].stdin_data);
	cr_expect_eq(r->tests[1].stdin_len, 0);
	cr_expect_null(r->tests[1].expected, "no expected output given");
	request_free(r);
}

Test(native, flags)
{
	struct job_request *r = parse_ok("{\"language\":\"cpp\",\"source\":\"x\","
					 "\"build\":{\"flags\":[\"-O3\",\"-std=c++17\"]}," T1 "}");

	cr_expect_str_eq(r->build_flags[0], "-O3");
	cr_expect_str_eq(r->build_flags[1], "-std=c++17");
	cr_expect_null(r->build_flags[2]);
	request_free(r);

	r = parse_ok("{\"language\":\"cpp\",\"source\":\"x\",\"build\":{\"flags\":[]}," T1 "}");
	cr_expect_null(r->build_flags[0], "an explicit empty list means no flags");
	request_free(r);

	/* one argv element: -std=* lets it through, gcc sees a bad -std value */
	r = parse_ok("{\"language\":\"cpp\",\"source\":\"x\","
		     "\"build\":{\"flags\":[\"-std=c++17 -fplugin=x\"]}," T1 "}");
	request_free(r);

	parse_bad("{\"language\":\"cpp\",\"source\":\"x\",\"build\":{\"flags\":[\"-O2\",\"-O4\"]},"
		  T1 "}", "flag_not_allowed", "build.flags[1]");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\","
		  "\"build\":{\"flags\":[\"-fplugin=/tmp/x.so\"]}," T1 "}",
		  "flag_not_allowed", "build.flags[0]");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\","
		  "\"build\":{\"flags\":[\"-std=c11\\n-B/tmp\"]}," T1 "}",
		  "flag_not_allowed", "build.flags[0]");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\","
		  "\"build\":{\"flags\":[\"-std=c\\u0000x\"]}," T1 "}",
		  "flag_not_allowed", "build.flags[0]");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\",\"run\":{\"flags\":[\"-O2\"]}," T1 "}",
		  "flag_not_allowed", "run.flags[0]");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"build\":{\"flags\":[\"-O\"]}," T1 "}",
		  "flag_not_allowed", "build.flags");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\",\"build\":{\"flags\":\"-O2\"}," T1 "}",
		  "invalid_type", "build.flags");
	parse_bad("{\"language\":\"cpp\",\"source\":\"x\",\"build\":{\"flags\":[2]}," T1 "}",
		  "invalid_type", "build.flags[0]");

	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\",\"build\":{\"flags\":[]}," T1 "}");
	request_free(r);
}

Test(native, language)
{
	struct job_request *r = parse_ok("{\"language\":\"python\",\"source\":\"print(1)\"," T1 "}");

	cr_expect_str_eq(r->lang->id, "py3", "aliases resolve");
	cr_expect_str_eq(r->files[0].name, "solution.py");
	cr_expect_null(r->artifact);
	cr_expect_null(r->build_flags[0]);
	cr_expect_eq(r->run_limits.wall_ms, 3000);
	cr_expect_eq(r->run_limits.memory_kb, 102400);
	request_free(r);

	parse_bad("{\"source\":\"x\"," T1 "}", "missing_field", "language");
	parse_bad("{\"language\":\"cobol\",\"source\":\"x\"," T1 "}", "unknown_language",
		  "language");
	parse_bad("{\"language\":\"PY3\",\"source\":\"x\"," T1 "}", "unknown_language",
		  "language");
	parse_bad("{\"language\":3,\"source\":\"x\"," T1 "}", "invalid_type", "language");
}

Test(native, json_shape)
{
	parse_bad("", "invalid_json", "");
	parse_bad("{", "invalid_json", "");
	parse_bad("[]", "invalid_json", "");
	parse_bad("\"x\"", "invalid_json", "");
	parse_bad("{\"language\":\"py3\",\"language\":\"cpp\",\"source\":\"x\"," T1 "}",
		  "invalid_json", "language");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"color\":1," T1 "}", "unknown_field",
		  "color");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limit\":{}}," T1 "}",
		  "unknown_field", "run.limit");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":[]," T1 "}", "invalid_type",
		  "run");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\","
		  "\"tests\":[{},{\"stdin\":\"\",\"stdout\":\"x\"}]}", "unknown_field",
		  "tests[1].stdout");
	/* the declared length is what counts, not a NUL inside the buffer */
	static const char ok[] = "{\"language\":\"py3\",\"source\":\"x\"," T1 "}";
	static const char nul[] = "{\"language\":\"py3\",\"source\":\"x\"," T1 "}\0garbage";

	parse_bad_len(nul, sizeof(nul) - 1, "invalid_json", "");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 "} {}", "invalid_json", "");
	request_free(parse_ok(ok));
	request_free(parse_ok("\n {\"language\":\"py3\",\"source\":\"x\"," T1 "}\r\n"));
}

Test(native, source)
{
	char big[1100];
	char body[1300];

	parse_bad("{\"language\":\"py3\"," T1 "}", "missing_field", "source");
	parse_bad("{\"language\":\"py3\",\"source\":null," T1 "}", "invalid_type", "source");
	memset(big, 'a', 1001);
	big[1001] = '\0';
	snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"%s\"," T1 "}", big);
	parse_bad(body, "source_too_large", "source");
	big[1000] = '\0';
	snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"%s\"," T1 "}", big);
	request_free(parse_ok(body));
}

Test(native, source_utf8)
{
	static const char *const bad[] = {
		"\xc0\xaf",         /* overlong '/' */
		"\xe0\x80\xaf",     /* overlong */
		"\xed\xa0\x80",     /* surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"\xff",
		"\xe2\x82",         /* truncated */
		"\x80",             /* lone continuation */
	};
	char body[256];
	struct job_request *r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"x%sy\"," T1 "}",
			 bad[i]);
		parse_bad(body, "invalid_utf8", "source");
	}
	r = parse_ok("{\"language\":\"py3\",\"source\":\"caf\xc3\xa9 \xe2\x82\xac "
		     "\xf0\x9f\x98\x80 \\u00e9\"," T1 "}");
	cr_expect_str_eq(r->files[0].data, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9");
	request_free(r);
}

Test(native, filenames)
{
	static const char *const bad[] = {
		"../../etc/passwd", "/etc/passwd", ".hidden", "a/b", "a\\u0000b", "..", ".",
		"", "-o", "a b",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 129 */
	};
	char body[512];

	cr_assert_eq(strlen(bad[10]), 129);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body),
			 "{\"language\":\"java\",\"source\":\"x\",\"source_filename\":\"%s\"," T1 "}",
			 bad[i]);
		parse_bad(body, "invalid_filename", "source_filename");
		snprintf(body, sizeof(body),
			 "{\"language\":\"py3\",\"source\":\"x\",\"artifact_filename\":\"%s\"," T1 "}",
			 bad[i]);
		parse_bad(body, "invalid_filename", "artifact_filename");
	}
	parse_bad("{\"language\":\"java\",\"source\":\"x\",\"source_filename\":7," T1 "}",
		  "invalid_type", "source_filename");
}

/* A language with entry patterns names its files from the source. */
Test(native, names_from_the_source)
{
	struct job_request *r;

	r = parse_ok("{\"language\":\"jv\",\"source\":\"class A {}\\npublic class Sol {}\","
		     T1 "}");
	cr_expect_str_eq(r->files[0].name, "Sol.java");
	cr_expect_str_eq(r->artifact, "Sol");
	request_free(r);
	r = parse_ok("{\"language\":\"jv\",\"source\":\"class A {}\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "Main.java", "nothing matches: the default");
	cr_expect_str_eq(r->artifact, "Main");
	request_free(r);
	/* what the request names wins */
	r = parse_ok("{\"language\":\"jv\",\"source\":\"public class Sol {}\","
		     "\"source_filename\":\"X.java\",\"artifact_filename\":\"Y\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "X.java");
	cr_expect_str_eq(r->artifact, "Y");
	request_free(r);
	r = parse_ok("{\"language\":\"jv\",\"source\":\"public class Sol {}\","
		     "\"source_filename\":\"Sol.java\"," T1 "}");
	cr_expect_str_eq(r->artifact, "Sol");
	request_free(r);
	/* without entry patterns the name is still required */
	parse_bad("{\"language\":\"java\",\"source\":\"public class Sol {}\"," T1 "}",
		  "missing_field", "source_filename");
}

Test(native, names_from_request)
{
	struct job_request *r;

	parse_bad("{\"language\":\"java\",\"source\":\"x\"," T1 "}", "missing_field",
		  "source_filename");
	r = parse_ok("{\"language\":\"java\",\"source\":\"x\",\"source_filename\":\"Main.java\","
		     T1 "}");
	cr_expect_str_eq(r->files[0].name, "Main.java");
	cr_expect_str_eq(r->artifact, "Main", "stem of the source name");
	request_free(r);
	r = parse_ok("{\"language\":\"java\",\"source\":\"x\",\"source_filename\":\"Main.java\","
		     "\"artifact_filename\":\"Prog\"," T1 "}");
	cr_expect_str_eq(r->artifact, "Prog");
	request_free(r);
	/* fixed names win over the request's, which is still validated */
	r = parse_ok("{\"language\":\"cpp\",\"source\":\"x\",\"source_filename\":\"a.cpp\","
		     "\"artifact_filename\":\"b\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "solution.cpp");
	cr_expect_str_eq(r->artifact, "solution");
	request_free(r);
}

/*
 * A language with a default source name takes the request's name instead
 * (same extension), and the class named after the file follows it.
 */
Test(native, names_with_a_default)
{
	struct job_request *r;

	r = parse_ok("{\"language\":\"kt\",\"source\":\"fun main() {}\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "solution.kt", "not named: the default");
	cr_expect_str_eq(r->artifact, "SolutionKt");
	request_free(r);
	r = parse_ok("{\"language\":\"kt\",\"source\":\"fun main() {}\","
		     "\"source_filename\":\"Main.kt\",\"artifact_filename\":\"MainKt\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "Main.kt");
	cr_expect_str_eq(r->artifact, "MainKt");
	request_free(r);
	r = parse_ok("{\"language\":\"kt\",\"source\":\"fun main() {}\","
		     "\"source_filename\":\"my-main.kt\"," T1 "}");
	cr_expect_str_eq(r->files[0].name, "my-main.kt");
	cr_expect_str_eq(r->artifact, "My_mainKt", "the class follows the file's name");
	request_free(r);
	r = parse_ok("{\"language\":\"kt\",\"source\":\"object App {}\","
		     "\"source_filename\":\"Main.kt\"," T1 "}");
	cr_expect_str_eq(r->artifact, "App", "an entry the source declares comes first");
	request_free(r);
	parse_bad("{\"language\":\"kt\",\"source\":\"x\",\"source_filename\":\"Main.kts\","
		  T1 "}", "invalid_filename", "source_filename");
	cr_expect(strstr(err.message, ".kt") != NULL, "%s", err.message);
	parse_bad("{\"language\":\"kt\",\"source\":\"x\",\"source_filename\":\"kt\"," T1 "}",
		  "invalid_filename", "source_filename");
	parse_bad("{\"language\":\"kt\",\"source\":\"x\",\"source_filename\":\"Main.KT\","
		  T1 "}", "invalid_filename", "source_filename");
	/* a judge program is a request of its own */
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\",\"checker\":{\"language\":\"kt\","
		     "\"source\":\"fun main() {}\",\"source_filename\":\"Check.kt\"}," T1 "}");
	cr_expect_str_eq(r->checker->files[0].name, "Check.kt");
	cr_expect_str_eq(r->checker->artifact, "CheckKt");
	request_free(r);
}

Test(native, tests_array)
{
	char body[512];

	parse_bad("{\"language\":\"py3\",\"source\":\"x\"}", "missing_field", "tests");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":{}}", "invalid_type", "tests");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[]}", "no_tests", "tests");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},{},{},{}]}",
		  "too_many_tests", "tests");
	request_free(parse_ok("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},{},{}]}"));
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},1]}", "invalid_type",
		  "tests[1]");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},{},"
		  "{\"stdin\":\"01234567890\"}]}", "stdin_too_large", "tests[2].stdin");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":["
		  "{\"expected_stdout\":\"01234567890\"}]}", "expected_output_too_large",
		  "tests[0].expected_stdout");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"stdin\":5}]}",
		  "invalid_type", "tests[0].stdin");
	snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"x\",\"tests\":["
		 "{\"stdin\":\"0123456789\",\"expected_stdout\":\"0123456789\"}]}");
	request_free(parse_ok(body));
}

Test(native, limits)
{
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":"
		  "{\"wall_time_s\":-1}}," T1 "}", "invalid_limits", "run.limits.wall_time_s");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":"
		  "{\"memory_kb\":\"1\"}}," T1 "}", "invalid_limits", "run.limits.memory_kb");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":"
		  "{\"memory_kb\":1.5}}," T1 "}", "invalid_limits", "run.limits.memory_kb");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"build\":{\"limits\":"
		  "{\"stack_kb\":1}}," T1 "}", "unknown_field", "build.limits.stack_kb");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":5}," T1 "}",
		  "invalid_limits", "run.limits");

	struct job_request *r = parse_ok(
		"{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":{\"wall_time_s\":1e9,"
		"\"output_kb\":4,\"file_size_kb\":8,\"cpu_time_s\":0.0001}}," T1 "}");
	cr_expect_eq(r->run_limits.wall_ms, 20000);
	cr_expect_eq(r->run_limits.output_kb, 4);
	cr_expect_eq(r->run_limits.fsize_kb, 8);
	cr_expect_eq(r->run_limits.memory_kb, 102400, "not given: the language's");
	cr_expect_eq(r->run_limits.cpu_ms, 1, "a tiny positive limit stays positive");
	request_free(r);
}

/*
 * A limit the request names is used or refused, never replaced by the
 * language's default: zero, negative, not a number, for every field of
 * both steps and of the judge programs' steps.
 */
Test(native, limit_zero_or_not_a_number_is_refused)
{
	static const char *const fields[] = { "wall_time_s", "cpu_time_s", "memory_kb",
					      "max_processes", "file_size_kb", "output_kb" };
	static const char *const values[] = { "0", "0.0", "-0", "-1", "-0.5", "1e-400",
					      "\"5\"", "null", "true", "[]", "{}" };
	static const char *const owners[] = { "", "checker", "interactor" };
	char body[512], path[96];

	for (size_t o = 0; o < sizeof(owners) / sizeof(owners[0]); o++)
	for (size_t s = 0; s < 2; s++)
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		const char *step = s ? "run" : "build";
		char inner[160];

		snprintf(inner, sizeof(inner), "\"language\":\"cpp\",\"source\":\"x\","
			 "\"%s\":{\"limits\":{\"%s\":%s}}", step, fields[f], values[v]);
		if (owners[o][0]) {
			snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"x\","
				 "\"%s\":{%s}," T1 "}", owners[o], inner);
			snprintf(path, sizeof(path), "%s.%s.limits.%s", owners[o], step, fields[f]);
		} else {
			snprintf(body, sizeof(body), "{%s," T1 "}", inner);
			snprintf(path, sizeof(path), "%s.limits.%s", step, fields[f]);
		}
		parse_bad(body, "invalid_limits", path);
		cr_expect(strstr(err.message, fields[f]) != NULL, "%s: %s", body, err.message);
	}
}

/* Counts are whole numbers; a time may be a fraction of a second. */
Test(native, limit_fraction_only_for_times)
{
	static const char *const counts[] = { "memory_kb", "max_processes", "file_size_kb",
					      "output_kb" };
	char body[256], path[64];
	struct job_request *r;

	for (size_t f = 0; f < sizeof(counts) / sizeof(counts[0]); f++) {
		snprintf(body, sizeof(body), "{\"language\":\"py3\",\"source\":\"x\","
			 "\"run\":{\"limits\":{\"%s\":0.5}}," T1 "}", counts[f]);
		snprintf(path, sizeof(path), "run.limits.%s", counts[f]);
		parse_bad(body, "invalid_limits", path);
		cr_expect(strstr(err.message, "an integer") != NULL, "%s", err.message);
	}
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\",\"run\":{\"limits\":"
		     "{\"wall_time_s\":0.25,\"max_processes\":1,\"memory_kb\":1}}," T1 "}");
	cr_expect_eq(r->run_limits.wall_ms, 250);
	cr_expect_eq(r->run_limits.max_processes, 1);
	cr_expect_eq(r->run_limits.memory_kb, 1);
	request_free(r);
}

Test(native, nul_bytes_survive)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"py3\",\"source\":\"a\\u0000b\\\\u0000\","
		"\"tests\":[{\"stdin\":\"x\\u0000y\",\"expected_stdout\":\"\\u0000\"}]}");

	cr_expect_eq(r->files[0].len, 9);
	cr_expect_eq(memcmp(r->files[0].data, "a\0b\\u0000", 9), 0);
	cr_expect_eq(r->tests[0].stdin_len, 3);
	cr_expect_eq(memcmp(r->tests[0].stdin_data, "x\0y", 3), 0);
	cr_expect_eq(r->tests[0].expected_len, 1);
	cr_expect_eq(r->tests[0].expected[0], '\0');
	request_free(r);
}

Test(native, nul_marker_avoids_real_text)
{
	/* U+10FFFD, raw and escaped, next to a NUL: each keeps its own bytes */
	struct job_request *r = parse_ok(
		"{\"language\":\"py3\",\"source\":\"\xf4\x8f\xbf\xbd\\u0000\\uDBFF\\uDFFC\","
		T1 "}");

	cr_assert_eq(r->files[0].len, 9);
	cr_expect_eq(memcmp(r->files[0].data, "\xf4\x8f\xbf\xbd\0\xf4\x8f\xbf\xbc", 9), 0);
	request_free(r);
}

static struct req_error errs[8];
static size_t nerrs;

static struct job_request *codize_ok(const char *body)
{
	struct job_request *r = NULL;

	nerrs = 0;
	memset(errs, 0, sizeof(errs));
	cr_assert_eq(api_codize_parse(body, strlen(body), tab, &cfg, &r, errs, 8, &nerrs), 0,
		     "%s: %s (%s)", errs[0].code, errs[0].message, errs[0].path);
	return r;
}

static void codize_bad(const char *body, size_t max, const char *code, int status)
{
	struct job_request *r = (struct job_request *)0x1;

	nerrs = 99;
	memset(errs, 0, sizeof(errs));
	cr_assert_eq(api_codize_parse(body, strlen(body), tab, &cfg, &r, errs, max, &nerrs),
		     -EINVAL, "accepted: %s", body);
	cr_expect_eq(r, (struct job_request *)0x1);
	cr_assert_geq(nerrs, 1);
	cr_expect_leq(nerrs, max);
	cr_expect_str_eq(errs[0].code, code, "%s", body);
	for (size_t i = 0; i < nerrs; i++) {
		cr_expect_eq(errs[i].http_status, status);
		cr_expect_neq(errs[i].message[0], '\0');
	}
}

/* Exactly one failing field, with Codize's path and words. */
static void codize_one(const char *body, const char *path, const char *message)
{
	codize_bad(body, 8, API_CODIZE_VALIDATION_ERROR, 400);
	cr_expect_eq(nerrs, 1, "%s: %zu errors, first %s: %s", body, nerrs, errs[0].path,
		     errs[0].message);
	cr_expect_str_eq(errs[0].path, path, "%s", body);
	cr_expect_str_eq(errs[0].message, message, "%s", body);
}

static const char *err_at(const char *path)
{
	for (size_t i = 0; i < nerrs; i++)
		if (strcmp(errs[i].path, path) == 0)
			return errs[i].message;
	return NULL;
}

#define PY_FILE "\"files\":[{\"name\":\"a.py\",\"content\":\"\"}]"

Test(codize, python_files_and_stdin)
{
	struct job_request *r;

	cfg.run_timeout_ms = 1500;
	cfg.compile_timeout_ms = 99999;
	r = codize_ok("{\"runtime\":\"python\",\"files\":["
		      "{\"name\":\"main.py\",\"content\":\"import util\"},"
		      "{\"name\":\"util.py\",\"content\":\"eD0x\",\"base64_encoded\":true}],"
		      "\"stdin\":{\"content\":\"AAE=\",\"base64_encoded\":true}}");
	cr_expect_eq(r->capture.stream_cap, cfg.output_limit_bytes, "Codize caps each stream");
	cr_expect_eq(r->capture.budget_format, OUTTEXT_BASE64_TWICE);
	cr_expect(r->interleave, "Codize's \"output\" is both streams as they came");
	cr_expect_str_eq(r->lang->id, "py3");
	cr_assert_eq(r->nfiles, 2);
	cr_expect_str_eq(r->files[0].name, "main.py", "the entry point comes first");
	cr_expect_str_eq(r->files[0].data, "import util");
	cr_expect_str_eq(r->files[1].name, "util.py");
	cr_expect_eq(r->files[1].len, 3);
	cr_expect_str_eq(r->files[1].data, "x=1");
	cr_assert_eq(r->ntests, 1);
	cr_expect_eq(r->tests[0].stdin_len, 2);
	cr_expect_eq(memcmp(r->tests[0].stdin_data, "\0\1", 2), 0);
	cr_expect_null(r->tests[0].expected);
	cr_expect_null(r->artifact);
	cr_expect_eq(r->run_limits.wall_ms, 1500);
	cr_expect_eq(r->run_limits.memory_kb, 102400);
	cr_expect_eq(r->build_limits.wall_ms, 20000, "clamped to the maximum");
	cr_assert_not_null(r->build_flags);
	cr_assert_not_null(r->run_flags);
	request_free(r);
}

Test(codize, artifacts_and_defaults)
{
	struct job_request *r;

	r = codize_ok("{\"runtime\":\"c-plus-plus\",\"files\":[{\"name\":\"main.cpp\",\"content\":\"\"}]}");
	cr_expect_str_eq(r->lang->id, "cpp");
	cr_expect_str_eq(r->artifact, "solution");
	cr_expect_str_eq(r->build_flags[0], "-O2");
	cr_expect_eq(r->build_limits.wall_ms, 10500, "no timeout flag: language default");
	cr_expect_eq(r->tests[0].stdin_len, 0);
	cr_expect_not_null(r->tests[0].stdin_data);
	request_free(r);
	r = codize_ok("{\"runtime\":\"java\",\"files\":[{\"name\":\"Main.java\",\"content\":\"x\","
		      "\"base64_encoded\":false}]}");
	cr_expect_str_eq(r->artifact, "Main");
	request_free(r);
}

/* What Go's decoder does: unknown keys ignored, null is absent, last key wins. */
Test(codize, decoding_like_codize)
{
	struct job_request *r;

	r = codize_ok("{\"runtime\":\"java\",\"runtime\":\"python\",\"extra\":{\"x\":1},"
		      "\"files\":[{\"name\":\"a.py\",\"content\":\"x\",\"mode\":7,"
		      "\"base64_encoded\":null}],\"stdin\":null}");
	cr_expect_str_eq(r->lang->id, "py3");
	cr_expect_str_eq(r->files[0].data, "x");
	cr_expect_eq(r->tests[0].stdin_len, 0);
	request_free(r);
	codize_one("{\"runtime\":null," PY_FILE "}", "runtime", "required");
	codize_one("{\"runtime\":\"python\",\"files\":null}", "files", "required");
	/* a null entry is a file without name and content: both fields fail */
	codize_bad("{\"runtime\":\"python\",\"files\":[null]}", 8, API_CODIZE_VALIDATION_ERROR, 400);
	cr_expect_eq(nerrs, 2);
	cr_expect_str_eq(err_at("files.0.name"), "required");
	cr_expect_str_eq(err_at("files.0.content"), "required");
}

Test(codize, invalid_body)
{
	static const char *const bodies[] = {
		"{\"runtime\":", "[1]", "\"x\"", "",
		"{\"runtime\":5," PY_FILE "}",
		"{\"runtime\":\"python\",\"files\":{}}",
		"{\"runtime\":\"python\",\"files\":[\"a.py\"]}",
		"{\"runtime\":\"python\",\"files\":[{\"name\":1,\"content\":\"\"}]}",
		"{\"runtime\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"\","
		"\"base64_encoded\":\"yes\"}]}",
		"{\"runtime\":\"python\"," PY_FILE ",\"stdin\":\"abc\"}",
		"{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{\"content\":[]}}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		codize_bad(bodies[i], 8, API_CODIZE_INVALID_BODY, 400);
		cr_expect_eq(nerrs, 1);
		cr_expect_str_eq(errs[0].path, "", "no field list: %s", bodies[i]);
	}
}

Test(codize, body_cap_is_413)
{
	char body[5000];

	snprintf(body, sizeof(body), "{\"runtime\":\"python\"," PY_FILE ",\"x\":\"%04096d\"}", 0);
	codize_bad(body, 8, API_CODIZE_BODY_TOO_LARGE, 413);
	cr_expect_eq(nerrs, 1);
	cfg.max_body_bytes = sizeof(body);
	request_free(codize_ok(body));
}

Test(codize, runtime_rules)
{
	codize_one("{" PY_FILE "}", "runtime", "required");
	codize_one("{\"runtime\":\"\"," PY_FILE "}", "runtime", "must not be empty");
	/* a language without codize.runtime is not served, its id or alias notwithstanding */
	codize_one("{\"runtime\":\"py3\"," PY_FILE "}", "runtime",
		   "must be one of \"c-plus-plus\", \"java\", \"python\"");
	codize_one("{\"runtime\":\"cpp\"," PY_FILE "}", "runtime",
		   "must be one of \"c-plus-plus\", \"java\", \"python\"");
}

Test(codize, files_array_rules)
{
	codize_one("{\"runtime\":\"python\"}", "files", "required");
	codize_one("{\"runtime\":\"python\",\"files\":[]}", "files", "must not be empty");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"\"},"
		   "{\"name\":\"b\",\"content\":\"\"},{\"name\":\"c\",\"content\":\"\"},"
		   "{\"name\":\"d\",\"content\":\"\"},{\"name\":\"e\",\"content\":\"\"}]}",
		   "files", "too many files (max: 4)");
	/* exactly the maximum is fine */
	request_free(codize_ok("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"\"},"
			       "{\"name\":\"b\",\"content\":\"\"},{\"name\":\"c\",\"content\":\"\"},"
			       "{\"name\":\"d\",\"content\":\"\"}]}"));
}

Test(codize, file_rules)
{
	char name[300], body[600];

	codize_one("{\"runtime\":\"python\",\"files\":[{\"content\":\"\"}]}", "files.0.name",
		   "required");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\"}]}", "files.0.content",
		   "required");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"\",\"content\":\"\"}]}",
		   "files.0.name", "must not be empty");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a/b\",\"content\":\"\"}]}",
		   "files.0.name", "contains invalid characters");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\\u0000b\",\"content\":\"\"}]}",
		   "files.0.name", "contains invalid characters");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"..\",\"content\":\"\"}]}",
		   "files.0.name", "not allowed");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"-o\",\"content\":\"\"}]}",
		   "files.0.name", "must not start with '-'");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"\"},"
		   "{\"name\":\"a.py\",\"content\":\"\"}]}", "files.1.name", "duplicate file name");
	/* 255 bytes pass, 256 do not; Codize allows any byte but '/' and NUL */
	memset(name, 'a', 255);
	name[255] = '\0';
	snprintf(body, sizeof(body),
		 "{\"runtime\":\"python\",\"files\":[{\"name\":\"%s\",\"content\":\"\"},"
		 "{\"name\":\".hidden file \\u00e9\",\"content\":\"\"}]}", name);
	request_free(codize_ok(body));
	memset(name, 'a', 256);
	name[256] = '\0';
	snprintf(body, sizeof(body),
		 "{\"runtime\":\"python\",\"files\":[{\"name\":\"%s\",\"content\":\"\"}]}", name);
	codize_one(body, "files.0.name", "file name too long (max: 255 bytes)");
}

Test(codize, refused_files_come_from_the_language)
{
	codize_one("{\"runtime\":\"c-plus-plus\",\"files\":[{\"name\":\"main.cpp\",\"content\":\"\"},"
		   "{\"name\":\"solution\",\"content\":\"\"}]}", "files.1.name",
		   "not allowed for this runtime");
	codize_one("{\"runtime\":\"c-plus-plus\",\"files\":[{\"name\":\"Makefile\",\"content\":\"\"}]}",
		   "files.0.name", "not allowed for this runtime");
	/* another runtime refuses nothing of the kind */
	request_free(codize_ok("{\"runtime\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"\"},"
			       "{\"name\":\"solution\",\"content\":\"\"}]}"));
}

Test(codize, content_rules)
{
	/* 17 bytes once decoded, over the 16-byte cap; 16 is fine */
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\","
		   "\"content\":\"MDEyMzQ1Njc4OWFiY2RlZmc=\",\"base64_encoded\":true}]}",
		   "files.0.content", "file too large (max: 16 bytes)");
	request_free(codize_ok("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\","
			       "\"content\":\"MDEyMzQ1Njc4OWFiY2RlZg==\",\"base64_encoded\":true}]}"));
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"!!!\","
		   "\"base64_encoded\":true}]}", "files.0.content", "invalid base64");
	codize_one("{\"runtime\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"0123456789abcdefg\"}]}",
		   "files.0.content", "file too large (max: 16 bytes)");
}

Test(codize, stdin_rules)
{
	struct job_request *r;

	/* the cap is 10 bytes: 10 pass, 11 do not, plain or base64 */
	r = codize_ok("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{\"content\":\"0123456789\"}}");
	cr_expect_eq(r->tests[0].stdin_len, 10);
	request_free(r);
	codize_one("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{\"content\":\"0123456789a\"}}",
		   "stdin.content", "stdin too large (max: 10 bytes)");
	request_free(codize_ok("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{"
			       "\"content\":\"MDEyMzQ1Njc4OQ==\",\"base64_encoded\":true}}"));
	codize_one("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{"
		   "\"content\":\"MDEyMzQ1Njc4OWE=\",\"base64_encoded\":true}}",
		   "stdin.content", "stdin too large (max: 10 bytes)");
	codize_one("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{"
		   "\"content\":\"*\",\"base64_encoded\":true}}", "stdin.content", "invalid base64");
	codize_one("{\"runtime\":\"python\"," PY_FILE ",\"stdin\":{}}", "stdin.content", "required");
}

Test(codize, every_failing_field_in_codize_order)
{
	codize_bad("{\"runtime\":\"java8\",\"files\":["
		   "{\"name\":\"../x.py\",\"content\":\"\"},"
		   "{\"name\":\"b.py\",\"content\":\"!!!!\",\"base64_encoded\":true},"
		   "{\"name\":\"b.py\"}],"
		   "\"stdin\":{\"content\":\"01234567890\"}}", 8, API_CODIZE_VALIDATION_ERROR, 400);
	cr_assert_eq(nerrs, 6);
	cr_expect_str_eq(errs[0].path, "runtime");
	cr_expect_str_eq(errs[1].path, "stdin.content");
	cr_expect_str_eq(errs[2].path, "files.0.name");
	cr_expect_str_eq(errs[3].path, "files.1.content");
	cr_expect_str_eq(errs[4].path, "files.2.name");
	cr_expect_str_eq(err_at("files.2.name"), "duplicate file name");
	cr_expect_str_eq(errs[5].path, "files.2.content");
}

Test(codize, error_list_is_capped)
{
	codize_bad("{\"runtime\":\"\",\"files\":[{\"name\":\"\"},{\"name\":\"\"}]}", 2,
		   API_CODIZE_VALIDATION_ERROR, 400);
	cr_expect_eq(nerrs, 2);
}

Test(request, free_null)
{
	request_free(NULL);
}

Test(native, compare)
{
	struct job_request *r;

	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\"," T1 "}");
	cr_expect_eq(r->compare.mode, COMPARE_EXACT);
	request_free(r);
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":\"tokens\"}");
	cr_expect_eq(r->compare.mode, COMPARE_TOKENS);
	request_free(r);
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":\"float\"}");
	cr_expect_eq(r->compare.mode, COMPARE_FLOAT);
	cr_expect_eq(r->compare.abs_tol, COMPARE_FLOAT_DEFAULT_TOL);
	cr_expect_eq(r->compare.rel_tol, COMPARE_FLOAT_DEFAULT_TOL);
	request_free(r);
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"float\","
		     "\"absolute_tolerance\":0.01,\"relative_tolerance\":0}}");
	cr_expect_eq(r->compare.abs_tol, 0.01);
	cr_expect_eq(r->compare.rel_tol, 0);
	request_free(r);
	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"exact\"}}");
	cr_expect_eq(r->compare.mode, COMPARE_EXACT);
	request_free(r);

	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":\"fuzzy\"}",
		  "invalid_compare", "compare");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":3}",
		  "invalid_type", "compare");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{}}",
		  "missing_field", "compare.mode");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"float\","
		  "\"epsilon\":1}}", "unknown_field", "compare");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"tokens\","
		  "\"absolute_tolerance\":0.1}}", "invalid_compare", "compare");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"float\","
		  "\"relative_tolerance\":-1}}", "invalid_compare", "compare");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\"," T1 ",\"compare\":{\"mode\":\"float\","
		  "\"absolute_tolerance\":\"0.1\"}}", "invalid_compare", "compare");
}

Test(native, test_files)
{
	struct job_request *r;

	r = parse_ok("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"stdin\":\"1\","
		     "\"input_file\":\"in.txt\",\"output_file\":\"out.txt\"},{}]}");
	cr_expect_str_eq(r->tests[0].input_file, "in.txt");
	cr_expect_str_eq(r->tests[0].output_file, "out.txt");
	cr_expect_null(r->tests[1].input_file);
	cr_expect_null(r->tests[1].output_file);
	request_free(r);

	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"input_file\":\"../in\"}]}",
		  "invalid_filename", "tests[0].input_file");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},{\"output_file\":\"a/b\"}]}",
		  "invalid_filename", "tests[1].output_file");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"output_file\":5}]}",
		  "invalid_type", "tests[0].output_file");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"output_file\":\"solution.py\"}]}",
		  "invalid_filename", "tests[0].output_file");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"input_file\":\"f\","
		  "\"output_file\":\"f\"}]}", "invalid_filename", "tests[0].output_file");
}

Test(native, extra_files)
{
	struct job_request *r;

	r = parse_ok("{\"language\":\"py3\",\"source\":\"import helper\",\"files\":["
		     "{\"name\":\"helper.py\",\"content\":\"X = 1\\n\"},"
		     "{\"name\":\"data.bin\",\"content\":\"AAEC\",\"base64_encoded\":true}]," T1 "}");
	cr_assert_eq(r->nfiles, 3);
	cr_expect_str_eq(r->files[0].name, "solution.py");
	cr_expect_str_eq(r->files[1].name, "helper.py");
	cr_expect_eq(r->files[1].len, 6);
	cr_expect_str_eq(r->files[2].name, "data.bin");
	cr_assert_eq(r->files[2].len, 3);
	cr_expect(memcmp(r->files[2].data, "\0\1\2", 3) == 0);
	request_free(r);

	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":{}," T1 "}",
		  "invalid_type", "files");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"content\":\"\"}]," T1 "}",
		  "missing_field", "files[0].name");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"a\"}]," T1 "}",
		  "missing_field", "files[0].content");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"../a\","
		  "\"content\":\"\"}]," T1 "}", "invalid_filename", "files[0].name");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"solution.py\","
		  "\"content\":\"\"}]," T1 "}", "invalid_filename", "files[0].name");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"a\",\"content\":\"\"},"
		  "{\"name\":\"a\",\"content\":\"\"}]," T1 "}", "invalid_filename", "files[1].name");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"a\",\"content\":\"!\","
		  "\"base64_encoded\":true}]," T1 "}", "invalid_base64", "files[0].content");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"a\",\"content\":\"\","
		  "\"mode\":1}]," T1 "}", "unknown_field", "files[0]");
	parse_bad("{\"language\":\"py3\",\"source\":\"x\",\"files\":[{\"name\":\"a\",\"content\":\"\"}],"
		  "\"tests\":[{\"output_file\":\"a\"}]}", "invalid_filename", "tests[0].output_file");
}

#define PY "\"language\":\"py3\",\"source\":\"x\""

#define RF ",\"return_files\":[\"*\"],\"return_files_limits\":"

/* A request's return_files or return_files_limits, its code and path. */
static const char *const bad_returns[][3] = {
	{ "{" PY ",\"return_files\":\"*\"," T1 "}", "invalid_type", "return_files" },
	{ "{" PY ",\"return_files\":[1]," T1 "}", "invalid_type", "return_files[0]" },
	{ "{" PY ",\"return_files\":[\"a\",\"../etc/passwd\"]," T1 "}", "invalid_return_files",
	  "return_files[1]" },
	{ "{" PY ",\"return_files\":[\"/etc/passwd\"]," T1 "}", "invalid_return_files",
	  "return_files[0]" },
	{ "{" PY ",\"return_files\":[\"a//b\"]," T1 "}", "invalid_return_files", "return_files[0]" },
	{ "{" PY ",\"return_files\":[\"a\\u0000b\"]," T1 "}", "invalid_return_files",
	  "return_files[0]" },
	{ "{" PY ",\"return_files_limits\":{\"max_files\":1}," T1 "}", "invalid_return_files",
	  "return_files_limits" },
	{ "{" PY RF "{\"max_files\":0}," T1 "}", "invalid_limits", "return_files_limits.max_files" },
	{ "{" PY RF "{\"max_total_bytes\":1.5}," T1 "}", "invalid_limits",
	  "return_files_limits.max_total_bytes" },
	{ "{" PY RF "{\"max\":1}," T1 "}", "unknown_field", "return_files_limits.max" },
	{ "{" PY RF "[]," T1 "}", "invalid_limits", "return_files_limits" },
	{ "{" PY ",\"checker\":{" PY ",\"return_files\":[\"*\"]}," T1 "}", "unknown_field",
	  "checker.return_files" },
};

Test(native, return_files)
{
	struct job_request *r;
	char body[2048];
	size_t n;

	r = parse_ok("{" PY "," T1 "}");
	cr_expect_null(r->files_out.match, "none asked: none read back");
	cr_expect_eq(r->files_out.max_files, 0);
	request_free(r);

	r = parse_ok("{" PY ",\"return_files\":[\"out.txt\",\"*.png\",\"results/*.csv\"]," T1 "}");
	cr_assert_not_null(r->files_out.match);
	cr_expect_str_eq(r->files_out.match[0], "out.txt");
	cr_expect_str_eq(r->files_out.match[2], "results/*.csv");
	cr_expect_null(r->files_out.match[3]);
	cr_expect_eq(r->files_out.max_files, 64, "the server's caps");
	cr_expect_eq(r->files_out.max_file, 1000);
	cr_expect_eq(r->files_out.max_total, 8000);
	cr_expect_gt(r->files_out.max_entries, 0);
	request_free(r);

	r = parse_ok("{" PY ",\"return_files\":[\"*\"],\"return_files_limits\":"
		     "{\"max_files\":3,\"max_file_bytes\":1e9,\"max_total_bytes\":500}," T1 "}");
	cr_expect_eq(r->files_out.max_files, 3, "lower: the request's");
	cr_expect_eq(r->files_out.max_file, 1000, "higher: the server's");
	cr_expect_eq(r->files_out.max_total, 500);
	request_free(r);

	r = parse_ok("{" PY ",\"return_files\":[]," T1 "}");
	cr_assert_not_null(r->files_out.match, "asked, so the answer says: none");
	cr_expect_eq(r->files_out.max_files, 0, "nothing to walk for");
	request_free(r);

	for (size_t i = 0; i < sizeof(bad_returns) / sizeof(bad_returns[0]); i++)
		parse_bad(bad_returns[i][0], bad_returns[i][1], bad_returns[i][2]);

	n = (size_t)snprintf(body, sizeof(body), "{" PY ",\"return_files\":[");
	for (int i = 0; i <= API_RUN_RETURN_MAX_PATTERNS; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"f%d\"", i ? "," : "", i);
	snprintf(body + n, sizeof(body) - n, "]," T1 "}");
	parse_bad(body, "invalid_return_files", "return_files");
}

Test(native, judge_programs)
{
	struct job_request *r;

	r = parse_ok("{" PY ",\"interactor\":{\"language\":\"cpp\",\"source\":\"int main(){}\","
		     "\"files\":[{\"name\":\"testlib.h\",\"content\":\"\"}],"
		     "\"build\":{\"flags\":[\"-O2\"]},\"run\":{\"limits\":{\"memory_kb\":65536}}},"
		     "\"tests\":[{\"stdin\":\"5\",\"expected_stdout\":\"5\"}]}");
	cr_assert_not_null(r->interactor);
	cr_expect_null(r->checker);
	cr_expect_str_eq(r->interactor->lang->id, "cpp");
	cr_assert_eq(r->interactor->nfiles, 2);
	cr_expect_str_eq(r->interactor->files[1].name, "testlib.h");
	cr_expect_str_eq(r->interactor->build_flags[0], "-O2");
	cr_expect_eq(r->interactor->run_limits.memory_kb, 65536);
	cr_expect_eq(r->interactor->ntests, 0);
	/* the solution's own settings are its own */
	cr_expect_str_eq(r->lang->id, "py3");
	request_free(r);

	r = parse_ok("{" PY ",\"checker\":{\"language\":\"py3\",\"source\":\"y\"},"
		     "\"tests\":[{\"output_file\":\"out.txt\"}]}");
	cr_assert_not_null(r->checker);
	cr_expect_null(r->interactor);
	cr_expect_str_eq(r->checker->files[0].data, "y");
	request_free(r);
}

Test(native, judge_program_errors_name_the_program)
{
	parse_bad("{" PY ",\"interactor\":[]," T1 "}", "invalid_type", "interactor");
	parse_bad("{" PY ",\"checker\":{\"source\":\"y\"}," T1 "}", "missing_field",
		  "checker.language");
	cr_expect_str_eq(err.message, "checker: language is required");
	parse_bad("{" PY ",\"checker\":{\"language\":\"nosuch\",\"source\":\"y\"}," T1 "}",
		  "unknown_language", "checker.language");
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\",\"tests\":[]},"
		  T1 "}", "unknown_field", "interactor.tests");
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\","
		  "\"files\":[{\"name\":\"../x\",\"content\":\"\"}]}," T1 "}", "invalid_filename",
		  "interactor.files[0].name");
	parse_bad("{" PY ",\"checker\":{\"language\":\"cpp\",\"source\":\"y\","
		  "\"build\":{\"flags\":[\"-fplugin=/tmp/x.so\"]}}," T1 "}", "flag_not_allowed",
		  "checker.build.flags[0]");
}

Test(native, judge_program_exclusions)
{
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\"},"
		  "\"checker\":{\"language\":\"py3\",\"source\":\"y\"}," T1 "}", "invalid_checker",
		  "checker");
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\"},"
		  "\"compare\":\"exact\"," T1 "}", "invalid_interactor", "compare");
	parse_bad("{" PY ",\"checker\":{\"language\":\"py3\",\"source\":\"y\"},"
		  "\"compare\":\"tokens\"," T1 "}", "invalid_checker", "compare");
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\"},"
		  "\"tests\":[{},{\"input_file\":\"in.txt\"}]}", "invalid_interactor",
		  "tests[1].input_file");
	parse_bad("{" PY ",\"interactor\":{\"language\":\"py3\",\"source\":\"y\"},"
		  "\"tests\":[{\"output_file\":\"o.txt\"}]}", "invalid_interactor",
		  "tests[0].output_file");
}

#define T3 "\"tests\":[{},{},{}]"
#define PY3 "{\"language\":\"py3\",\"source\":\"x\"," T3

Test(native, stop_on_failure_and_groups)
{
	struct job_request *r;

	r = parse_ok(PY3 "}");
	cr_expect_not(r->stop_on_failure);
	cr_expect_not(r->has_groups);
	cr_expect_eq(r->ngroups, 0);
	request_free(r);

	r = parse_ok(PY3 ",\"stop_on_failure\":true,\"groups\":[{\"tests\":[2,0],"
		     "\"stop_on_failure\":true,\"points\":30},{\"tests\":[1],\"points\":12.5},"
		     "{\"tests\":[0,1,2]}]}");
	cr_expect(r->stop_on_failure);
	cr_assert_eq(r->ngroups, 3);
	cr_expect(r->has_groups);
	cr_assert_eq(r->groups[0].ntests, 2);
	cr_expect_eq(r->groups[0].tests[0], 2);
	cr_expect_eq(r->groups[0].tests[1], 0);
	cr_expect(r->groups[0].stop_on_failure);
	cr_expect_eq(r->groups[0].points, 30);
	cr_expect_not(r->groups[1].stop_on_failure);
	cr_expect_eq(r->groups[1].points, 12.5);
	cr_expect_eq(r->groups[2].points, 0);
	cr_expect_eq(r->groups[2].ntests, 3);
	request_free(r);

	/* an empty list is allowed: the answer then has no groups and 0 points */
	r = parse_ok(PY3 ",\"groups\":[]}");
	cr_expect(r->has_groups);
	cr_expect_eq(r->ngroups, 0);
	request_free(r);
}

/* Each bad shape, with the code and the field it names. */
static const struct {
	const char *tail;
	const char *code;
	const char *path;
} bad_groups[] = {
	{ ",\"stop_on_failure\":1}", "invalid_type", "stop_on_failure" },
	{ ",\"stop_on_failure\":\"true\"}", "invalid_type", "stop_on_failure" },
	{ ",\"stop_on_failure\":null}", "invalid_type", "stop_on_failure" },
	{ ",\"groups\":{}}", "invalid_type", "groups" },
	{ ",\"groups\":[3]}", "invalid_type", "groups[0]" },
	{ ",\"groups\":[{}]}", "missing_field", "groups[0].tests" },
	{ ",\"groups\":[{\"tests\":0}]}", "invalid_type", "groups[0].tests" },
	{ ",\"groups\":[{\"tests\":[]}]}", "invalid_groups", "groups[0].tests" },
	{ ",\"groups\":[{\"tests\":[0]},{\"tests\":[3]}]}", "invalid_groups", "groups[1].tests[0]" },
	{ ",\"groups\":[{\"tests\":[0,-1]}]}", "invalid_groups", "groups[0].tests[1]" },
	{ ",\"groups\":[{\"tests\":[1e300]}]}", "invalid_groups", "groups[0].tests[0]" },
	{ ",\"groups\":[{\"tests\":[0.5]}]}", "invalid_type", "groups[0].tests[0]" },
	{ ",\"groups\":[{\"tests\":[\"0\"]}]}", "invalid_type", "groups[0].tests[0]" },
	{ ",\"groups\":[{\"tests\":[1,0,1]}]}", "invalid_groups", "groups[0].tests[2]" },
	{ ",\"groups\":[{\"tests\":[0,1,2,0]}]}", "invalid_groups", "groups[0].tests" },
	{ ",\"groups\":[{\"tests\":[0],\"points\":-1}]}", "invalid_groups", "groups[0].points" },
	{ ",\"groups\":[{\"tests\":[0],\"points\":1e10}]}", "invalid_groups", "groups[0].points" },
	{ ",\"groups\":[{\"tests\":[0],\"points\":\"5\"}]}", "invalid_type", "groups[0].points" },
	{ ",\"groups\":[{\"tests\":[0],\"stop_on_failure\":0}]}", "invalid_type",
	  "groups[0].stop_on_failure" },
	{ ",\"groups\":[{\"tests\":[0],\"score\":1}]}", "unknown_field", "groups[0].score" },
	{ ",\"groups\":[{\"tests\":[0],\"tests\":[1]}]}", "invalid_json", "groups[0].tests" },
};

Test(native, bad_groups_name_the_field)
{
	char body[256];

	for (size_t i = 0; i < sizeof(bad_groups) / sizeof(bad_groups[0]); i++) {
		snprintf(body, sizeof(body), PY3 "%s", bad_groups[i].tail);
		parse_bad(body, bad_groups[i].code, bad_groups[i].path);
	}
}

/*
 * Every object of a request opens the same way (open_object): not an
 * object, an unknown key, a repeated key. Where the error is reported
 * differs by object, as it always has; each row pins one.
 */
#define OPEN "{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{}]"

static const struct {
	const char *body;
	const char *code;
	const char *path;
	const char *message;
} openings[] = {
	{ "[1]", "invalid_json", "", "the body must be a JSON object" },
	{ OPEN ",\"color\":1}", "unknown_field", "color", "unknown field color" },
	{ "{\"source\":\"x\",\"source\":\"y\"}", "invalid_json", "source",
	  "duplicate key source" },
	{ OPEN ",\"run\":1}", "invalid_type", "run", "run must be an object" },
	{ OPEN ",\"run\":{\"x\":1}}", "unknown_field", "run.x", "unknown field run.x" },
	{ OPEN ",\"build\":{\"limits\":[]}}", "invalid_limits", "build.limits",
	  "build.limits must be an object" },
	{ OPEN ",\"build\":{\"limits\":{\"stack_kb\":1}}}", "unknown_field",
	  "build.limits.stack_kb", "unknown field build.limits.stack_kb" },
	{ "{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{},2]}", "invalid_type", "tests[1]",
	  "tests[1] must be an object" },
	{ "{\"language\":\"py3\",\"source\":\"x\",\"tests\":[{\"stdin\":\"\",\"stdin\":\"\"}]}",
	  "invalid_json", "tests[0].stdin", "duplicate key tests[0].stdin" },
	{ OPEN ",\"files\":[\"a\"]}", "invalid_type", "files[0]", "files[0] must be an object" },
	{ OPEN ",\"files\":[{\"name\":\"a\",\"mode\":1}]}", "unknown_field", "files[0]",
	  "unknown field files[0].mode" },
	{ OPEN ",\"compare\":{\"mode\":\"exact\",\"epsilon\":1}}", "unknown_field", "compare",
	  "unknown field compare.epsilon" },
	{ OPEN ",\"compare\":{\"mode\":\"exact\",\"mode\":\"float\"}}", "invalid_json", "compare",
	  "duplicate key compare.mode" },
	{ OPEN ",\"groups\":[1]}", "invalid_type", "groups[0]", "groups[0] must be an object" },
	{ OPEN ",\"groups\":[{\"tests\":[0],\"score\":1}]}", "unknown_field", "groups[0].score",
	  "unknown field groups[0].score" },
	{ OPEN ",\"checker\":\"x\"}", "invalid_type", "checker", "checker must be an object" },
	{ OPEN ",\"checker\":{\"language\":\"py3\",\"source\":\"x\",\"tests\":[]}}", "unknown_field",
	  "checker.tests", "checker: unknown field tests" },
	{ OPEN ",\"interactor\":{\"language\":\"py3\",\"source\":\"x\",\"source\":\"y\"}}",
	  "invalid_json", "interactor.source", "interactor: duplicate key source" },
	{ OPEN ",\"checker\":{\"\":1}}", "unknown_field", "checker", "checker: unknown field " },
	{ OPEN ",\"run\":{\"\":1}}", "unknown_field", "run.", "unknown field run." },
};

Test(native, every_object_opens_the_same_way)
{
	for (size_t i = 0; i < sizeof(openings) / sizeof(openings[0]); i++) {
		parse_bad(openings[i].body, openings[i].code, openings[i].path);
		cr_expect_str_eq(err.message, openings[i].message, "%s", openings[i].body);
	}
}

Test(native, groups_are_bounded)
{
	struct buf b;
	struct job_request *r;

	buf_init(&b, 0);
	buf_puts(&b, PY3 ",\"groups\":[");
	for (int i = 0; i < REQ_MAX_GROUPS; i++)
		buf_printf(&b, "%s{\"tests\":[0]}", i ? "," : "");
	buf_puts(&b, "]}");
	r = parse_ok(b.data);
	cr_expect_eq(r->ngroups, REQ_MAX_GROUPS);
	request_free(r);
	buf_truncate(&b, b.len - 2);
	buf_puts(&b, ",{\"tests\":[0]}]}");
	parse_bad(b.data, "too_many_groups", "groups");
	buf_free(&b);
}
