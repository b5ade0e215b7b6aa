/*
 * libFuzzer target: a zip archive unpacked into a job's files
 * (zipfiles_unpack), within small bounds so that each of them is reached
 * from small inputs. Whatever it takes must hold to what it promises:
 * paths validate_path accepts, no two that clash (the same, or one a
 * directory of the other), sizes within the bounds, data NUL-terminated.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"
#include "worker/judge/request.h"
#include "worker/judge/zipfiles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct zipfiles_bounds bounds = {
	.max_files = 4,
	.max_file = 4096,
	.max_total = 8192,
};

static void fail(const char *what, const char *name)
{
	fprintf(stderr, "fuzz_zipfiles: %s%s%s\n", what, name ? ": " : "", name ? name : "");
	abort();
}

static void check_files(const struct req_file *files, size_t n)
{
	size_t total = 0;
	char why[256];

	if (n > bounds.max_files || !files != !n)
		fail("more files than the bound, or an array that does not match the count", NULL);
	for (size_t i = 0; i < n; i++) {
		const struct req_file *f = &files[i];

		if (!f->name || !f->data)
			fail("a file without a name or data", NULL);
		if (validate_path(f->name, strlen(f->name), why, sizeof(why)) < 0)
			fail("a file name validate_path refuses", f->name);
		if (f->len > bounds.max_file)
			fail("a file over max_file", f->name);
		if (f->data[f->len] != '\0')
			fail("a file's data not NUL-terminated", f->name);
		total += f->len;
		for (size_t k = 0; k < i; k++)
			if (validate_paths_clash(files[k].name, f->name))
				fail("two files that clash", f->name);
	}
	if (total > bounds.max_total)
		fail("more than max_total in all", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct req_file untouched;
	struct req_file *files = &untouched;
	size_t nfiles = (size_t)-1;
	char err[256];

	err[0] = '\0';
	if (zipfiles_unpack(data, size, &bounds, &files, &nfiles, err, sizeof(err)) < 0) {
		if (!err[0])
			fail("a refusal without its reason", NULL);
		if (files != &untouched || nfiles != (size_t)-1)
			fail("a refusal that sets its out-parameters", err);
		return 0;
	}
	check_files(files, nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].name);
		free(files[i].data);
	}
	free(files);
	return 0;
}
