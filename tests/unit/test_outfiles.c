#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/judge/outfiles.h"
#include "worker/judge/zipfiles.h"

static char dir[] = "/tmp/goboxd-outfiles-XXXXXX";
static char outside[] = "/tmp/goboxd-outside-XXXXXX";
static int dfd = -1;

static const struct outfiles_bounds roomy = { 16, 4096, 65536, 1000, NULL };

static void put(const char *path, const char *text, mode_t mode)
{
	char full[512];
	int fd;

	snprintf(full, sizeof(full), "%s/%s", dir, path);
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert_geq(fd, 0, "%s", full);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(full, mode);
}

static void mkd(const char *path)
{
	char full[512];

	snprintf(full, sizeof(full), "%s/%s", dir, path);
	cr_assert_eq(mkdir(full, 0750), 0, "%s", full);
}

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_not_null(mkdtemp(outside));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
}

static void teardown(void)
{
	char cmd[160];

	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, outside);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(outfiles, .init = setup, .fini = teardown);

Test(outfiles, regular_files_in_name_order_with_their_modes)
{
	struct outfiles o;

	put("solution.py", "print(1)\n", 0644);
	mkd("out");
	put("out/b.txt", "bee", 0600);
	put("out/a.txt", "", 0755);
	cr_assert_eq(outfiles_collect(dfd, &roomy, &o), 0);
	cr_assert_eq(o.n, 3);
	cr_expect_str_eq(o.v[0].path, "out/a.txt");
	cr_expect_eq(o.v[0].len, 0);
	cr_expect_eq(o.v[0].mode, 0755);
	cr_expect_str_eq(o.v[1].path, "out/b.txt");
	cr_expect_str_eq(o.v[1].data, "bee");
	cr_expect_str_eq(o.v[2].path, "solution.py");
	cr_expect_eq(o.left_out, 0);
	outfiles_free(&o);
}

Test(outfiles, links_fifos_and_what_is_out_of_bounds_are_left)
{
	struct outfiles_bounds b = { 2, 8, 12, 1000, NULL };
	char target[128], link[512];
	struct outfiles o;

	snprintf(target, sizeof(target), "%s/secret", outside);
	snprintf(link, sizeof(link), "%s/link", dir);
	{
		FILE *f = fopen(target, "w");

		cr_assert_not_null(f);
		fputs("root:x:0:0\n", f);
		fclose(f);
	}
	cr_assert_eq(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/dirlink", dir);
	cr_assert_eq(symlink(outside, link), 0);
	snprintf(link, sizeof(link), "%s/fifo", dir);
	cr_assert_eq(mkfifo(link, 0644), 0, "a FIFO would block a read");
	put("a", "12345678", 0644);   /* 8: fits */
	put("b", "123456789", 0644);  /* 9: over max_file */
	put("c", "12345", 0644);      /* over max_total with a */
	put("d", "1234", 0644);       /* fits the total; the count is full then */
	put("e", "1", 0644);
	cr_assert_eq(outfiles_collect(dfd, &b, &o), 0);
	cr_assert_eq(o.n, 2);
	cr_expect_str_eq(o.v[0].path, "a");
	cr_expect_str_eq(o.v[1].path, "d");
	cr_expect_eq(o.left_out, 3, "b, c and e");
	outfiles_free(&o);
}

Test(outfiles, depth_and_names_looked_at_are_bounded)
{
	struct outfiles_bounds few = { 16, 4096, 65536, 3, NULL };
	char path[256] = "";
	struct outfiles o;

	for (int i = 0; i < 9; i++) {
		strcat(path, i ? "/d" : "d");
		mkd(path);
	}
	strcat(path, "/deep.txt");
	put(path, "too deep", 0644);
	put("d/d/shallow.txt", "fine", 0644);
	cr_assert_eq(outfiles_collect(dfd, &roomy, &o), 0);
	cr_assert_eq(o.n, 1);
	cr_expect_str_eq(o.v[0].path, "d/d/shallow.txt");
	cr_expect_eq(o.left_out, 1, "the directory past 8 deep");
	outfiles_free(&o);
	put("x1", "1", 0644);
	put("x2", "2", 0644);
	put("x3", "3", 0644);
	cr_assert_eq(outfiles_collect(dfd, &few, &o), 0);
	cr_expect_leq(o.n, 3);
	cr_expect_gt(o.left_out, 0, "names past max_entries are never looked at");
	cr_expect_gt(o.n, 0, "the first ones are");
	outfiles_free(&o);
}

Test(outfiles, packed_and_unpacked_again)
{
	struct zipfiles_bounds zb = { 16, 4096, 65536 };
	struct req_file *files = NULL;
	struct outfiles o;
	size_t len = 0, n = 0;
	char *zip = NULL, err[256] = "";

	put("main.c", "int main(void){return 0;}\n", 0644);
	mkd("dir1");
	put("dir1/data.bin", "\x01\x02", 0600);
	cr_assert_eq(outfiles_collect(dfd, &roomy, &o), 0);
	cr_assert_eq(zipfiles_pack(&o, &zip, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(zipfiles_unpack(zip, len, &zb, &files, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(files[0].name, "dir1/data.bin");
	cr_expect_eq(files[0].len, 2);
	cr_expect_str_eq(files[1].name, "main.c");
	cr_expect_str_eq(files[1].data, "int main(void){return 0;}\n");
	for (size_t i = 0; i < n; i++) {
		free(files[i].name);
		free(files[i].data);
	}
	free(files);
	free(zip);
	outfiles_free(&o);
}

/* A path or directory, and whether the patterns name it (or reach into it). */
struct pattern_case {
	const char *path;
	bool want;
	const char *why;
};

Test(outfiles, patterns_match_whole_paths_a_part_each)
{
	static const struct pattern_case cases[] = {
		{ "out.txt", true, "a name" },
		{ "a.png", true, "a glob" },
		{ ".png", true, "no FNM_PERIOD: '*' takes a leading dot" },
		{ "img/a.png", false, "'*' never matches a '/'" },
		{ "results/x.csv", true, "a glob in a directory" },
		{ "results/sub/x.csv", false, "one level, not two" },
		{ "out.txt/x", false, "a pattern naming a directory names none of its files" },
		{ "results", false, "nor the directory of a pattern's files" },
	};
	char *m[] = { "out.txt", "*.png", "results/*.csv", NULL };
	char *none[] = { NULL };

	cr_expect(outfiles_match(NULL, "anything/at/all"), "no patterns: every file");
	cr_expect_not(outfiles_match(none, "out.txt"), "an empty list names nothing");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(outfiles_match(m, cases[i].path), cases[i].want, "%s: %s",
			     cases[i].path, cases[i].why);
}

Test(outfiles, directories_gone_into_only_where_a_pattern_reaches)
{
	static const struct pattern_case cases[] = {
		{ "", true, "the top is always walked" },
		{ "results", true, "res* reaches it" },
		{ "a", true, "a/b/c/* passes through" },
		{ "a/b", true, "a/b/c/* passes through" },
		{ "a/b/c", true, "a/b/c/* ends in it" },
		{ "a/b/c/d", false, "its files have too many parts" },
		{ "results/sub", false, "its files have too many parts" },
		{ "out.txt", false, "a file's pattern holds nothing" },
		{ "b", false, "no pattern starts there" },
		{ "a/x", false, "no pattern goes on there" },
	};
	char *m[] = { "out.txt", "res*/*.csv", "a/b/c/*", NULL };
	char *bracket[] = { "x[/]y/*", "z\\/w", NULL };

	cr_expect(outfiles_may_hold(NULL, "deep/dir"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(outfiles_may_hold(m, cases[i].path), cases[i].want, "%s: %s",
			     cases[i].path, cases[i].why);
	/* where a '/' may hide in a bracket or an escape, the walk goes in */
	cr_expect(outfiles_may_hold(bracket, "x"));
	cr_expect(outfiles_may_hold(bracket, "z"));
}

Test(outfiles, only_what_the_patterns_name)
{
	char *m[] = { "*.txt", "results/*.csv", "link*", "fifo", "keep", NULL };
	struct outfiles_bounds b = roomy;
	char target[128], link[512];
	struct outfiles o;

	b.match = m;
	snprintf(target, sizeof(target), "%s/secret.txt", outside);
	{
		FILE *f = fopen(target, "w");

		cr_assert_not_null(f);
		fputs("root:x:0:0\n", f);
		fclose(f);
	}
	snprintf(link, sizeof(link), "%s/link.txt", dir);
	cr_assert_eq(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/linkdir", dir);
	cr_assert_eq(symlink(outside, link), 0);
	snprintf(link, sizeof(link), "%s/fifo", dir);
	cr_assert_eq(mkfifo(link, 0644), 0, "a FIFO would block a read");
	put("a.txt", "A", 0640);
	put("solution.py", "print(1)\n", 0644);
	mkd("results");
	put("results/r.csv", "1,2\n", 0600);
	put("results/r.txt", "no", 0644);
	mkd("results/deeper");
	put("results/deeper/x.csv", "no", 0644);
	mkd("keep");
	put("keep/inside", "no: the pattern names the directory", 0644);
	cr_assert_eq(outfiles_collect(dfd, &b, &o), 0);
	cr_assert_eq(o.n, 2);
	cr_expect_str_eq(o.v[0].path, "a.txt");
	cr_expect_eq(o.v[0].mode, 0640);
	cr_expect_str_eq(o.v[1].path, "results/r.csv");
	cr_expect_str_eq(o.v[1].data, "1,2\n");
	cr_expect_eq(o.left_out, 0, "links and FIFOs are no files; nothing was past a cap");
	outfiles_free(&o);
}

Test(outfiles, a_deep_tree_no_pattern_reaches_costs_nothing)
{
	char *m[] = { "top.txt", NULL };
	struct outfiles_bounds b = roomy;
	char path[256] = "";
	struct outfiles o;

	b.match = m;
	for (int i = 0; i < 9; i++) {
		strcat(path, i ? "/d" : "d");
		mkd(path);
	}
	put("top.txt", "t", 0644);
	cr_assert_eq(outfiles_collect(dfd, &b, &o), 0);
	cr_assert_eq(o.n, 1);
	cr_expect_eq(o.left_out, 0, "the tree past 8 deep is never reached, so not left out");
	outfiles_free(&o);
}

Test(outfiles, caps_count_only_named_files)
{
	/* f2 is over max_file, f4 past the count; g is not named, however large */
	static const char *const files[][2] = {
		{ "f1", "1234" }, { "f2", "12345" }, { "f3", "1" }, { "f4", "1" }, { "g", "123456789" },
	};
	char *m[] = { "f*", NULL };
	struct outfiles_bounds b = { 2, 4, 100, 1000, m };
	struct outfiles o;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		put(files[i][0], files[i][1], 0644);
	cr_assert_eq(outfiles_collect(dfd, &b, &o), 0);
	cr_assert_eq(o.n, 2);
	cr_expect(!strcmp(o.v[0].path, "f1") && !strcmp(o.v[1].path, "f3"));
	cr_expect_eq(o.left_out, 2, "f2 and f4, never g");
	outfiles_free(&o);
}
