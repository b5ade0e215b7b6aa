#include "autoconf.h"

/*
 * A Piston request's files as Piston lays them out (api_piston_files.c),
 * through api_piston_parse: names kept, the compile script's extension,
 * path.join's paths, the later of two files of one name.
 */
#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/api.h"
#include "worker/judge/request.h"

static char tdir[64];
static struct langtab *tab;
static struct config cfg;
static struct req_error err;

static const char c_yaml[] =
	"id: c\nname: C\nsource_filename: solution.c\nartifact: solution\n"
	"piston: { runtime: c, version: 12.2.0, extension: .c }\n"
	"build: { cmd: /usr/bin/gcc, args: [\"-o\", \"{{artifact}}\", \"{{source}}\"] }\n"
	"run: { cmd: \"./{{artifact}}\" }\nprobe: [/usr/bin/gcc]\n";

static const char py_yaml[] =
	"id: py3\nname: Python\nsource_filename: solution.py\n"
	"piston: { runtime: python, version: 3.11.2 }\n"
	"run: { cmd: /usr/bin/python3, args: [\"{{source}}\"] }\nprobe: [/usr/bin/python3]\n";

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char why[512] = "";

	strcpy(tdir, "/tmp/goboxd-test-piston-XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
	put("c.yaml", c_yaml);
	put("py3.yaml", py_yaml);
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_source_bytes = 1000;
	cfg.max_files = 8;
	cfg.max_file_bytes = 100;
	cfg.max_test_stdin_bytes = 100;
	cfg.max_run_body_bytes = 8192;
	cfg.limits_max = (struct limits){ .wall_ms = 20000, .cpu_ms = 20000,
					  .memory_kb = 2097152, .max_processes = 128,
					  .fsize_kb = 65536, .output_kb = 1024 };
	cr_assert_eq(langtab_load(tdir, &cfg.limits_max, &tab, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
	char path[128];

	langtab_free(tab);
	snprintf(path, sizeof(path), "%s/c.yaml", tdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/py3.yaml", tdir);
	unlink(path);
	rmdir(tdir);
}

TestSuite(piston_files, .init = setup, .fini = teardown);

static struct job_request *parse_ok(const char *body)
{
	struct job_request *r = NULL;

	cr_assert_eq(api_piston_parse(body, strlen(body), tab, &cfg, &r, &err), 0, "%s",
		     err.message);
	return r;
}

static void parse_bad(const char *body, const char *message)
{
	struct job_request *r = NULL;

	cr_assert_eq(api_piston_parse(body, strlen(body), tab, &cfg, &r, &err), -EINVAL,
		     "accepted: %s", body);
	cr_expect_eq(err.http_status, 400);
	cr_expect_str_eq(err.message, message);
}

/* The job's file names, joined by spaces, and its first file's bytes. */
static void expect_files(const struct job_request *r, const char *names, const char *entry)
{
	char got[512] = "";

	for (size_t i = 0; i < r->nfiles; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
			 r->files[i].name);
	cr_expect_str_eq(got, names);
	cr_expect_str_eq(r->files[0].data, entry);
}

Test(piston_files, names_are_kept)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"name\":\"main.py\","
		"\"content\":\"m\"},{\"content\":\"x\"},{\"name\":\"solution.py\",\"content\":\"s\"}]}");

	expect_files(r, "main.py file1.code solution.py", "m");
	request_free(r);
}

Test(piston_files, the_compile_scripts_extension)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"c\",\"version\":\"*\",\"files\":["
		"{\"name\":\"data\",\"content\":\"AA==\",\"encoding\":\"base64\"},"
		"{\"content\":\"e\"},{\"name\":\"util\",\"content\":\"u\"},"
		"{\"name\":\"util.h\",\"content\":\"h\"},{\"name\":\"x.c\",\"content\":\"c\"}]}");

	/* the entry (the first utf8 file) first; data and headers keep their names */
	expect_files(r, "file1.c data util.c util.h x.c", "e");
	cr_expect_str_eq(r->artifact, "solution");
	request_free(r);
	r = parse_ok("{\"language\":\"c\",\"version\":\"*\",\"files\":[{\"name\":\"main.txt\","
		     "\"content\":\"e\"}]}");
	expect_files(r, "main.txt.c", "e");
	request_free(r);
}

Test(piston_files, the_later_of_two_files_of_one_name)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"name\":\"file1.code\","
		"\"content\":\"first\"},{\"content\":\"second\"},{\"name\":\"d\",\"content\":\"1\"},"
		"{\"name\":\"d\",\"content\":\"2\"}]}");

	expect_files(r, "file1.code d", "second");
	cr_expect_str_eq(r->files[1].data, "2");
	request_free(r);
}

Test(piston_files, paths_as_path_join_reads_them)
{
	struct job_request *r = parse_ok(
		"{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"name\":\"/src//./m.py\","
		"\"content\":\"m\"},{\"name\":\"a/b/../c\",\"content\":\"c\"}]}");

	expect_files(r, "src/m.py a/c", "m");
	request_free(r);
	parse_bad("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"\"},"
		  "{\"name\":\"a/../..\",\"content\":\"\"}]}",
		  "File path \"a/../..\" tries to escape parent directory: ..");
	parse_bad("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"\"},"
		  "{\"name\":\"./\",\"content\":\"\"}]}", "files[1].name './' names no file");
	parse_bad("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"\"},"
		  "{\"name\":\"a\",\"content\":\"\"},{\"name\":\"a/b\",\"content\":\"\"}]}",
		  "files[1].name 'a' and files[2].name 'a/b' cannot both be written: one is the "
		  "other's directory");
	parse_bad("{\"language\":\"python\",\"version\":\"*\",\"files\":[{\"content\":\"\"},"
		  "{\"name\":\"a\\u0000b\",\"content\":\"\"}]}",
		  "files[1].name must not contain a NUL byte");
	parse_bad("{\"language\":\"c\",\"version\":\"*\",\"files\":[{\"content\":\"\"},"
		  "{\"name\":\"solution/x\",\"content\":\"\",\"encoding\":\"hex\"}]}",
		  "files[1].name 'solution/x' is the name of the program this runtime builds");
}
