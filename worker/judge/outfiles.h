/*
 * The files a job leaves in its directory, read back after its last test
 * (Judge0's post_execution_filesystem: the box after the run). The
 * directory was the program's: what is in it is hostile. The walk never
 * follows a link and never opens anything but a regular file or a
 * directory, relative to fds it holds, and every bound is kept as the
 * data is read, whatever a stat said before.
 */
#ifndef GOBOXD_OUTFILES_H
#define GOBOXD_OUTFILES_H

#include <stddef.h>
#include <sys/types.h>

struct outfiles_bounds {
	size_t max_files;    /* files taken */
	size_t max_file;     /* bytes of one file: a larger one is left out */
	size_t max_total;    /* bytes of every file taken together */
	size_t max_entries;  /* names looked at in all: a directory of a million stops here */
};

struct outfile {
	char *path;          /* relative to the job directory, '/'-separated */
	char *data;          /* len bytes, NUL-terminated beyond them */
	size_t len;
	mode_t mode;         /* permission bits */
};

struct outfiles {
	struct outfile *v;   /* in path order, directory by directory */
	size_t n;
	size_t left_out;     /* files past a bound, and names never looked at */
};

/*
 * Every regular file under dirfd (at most 8 directories deep, as
 * validate_path allows), in name order, within b. 0 (out filled; free it
 * with outfiles_free), or a negative errno when the directory itself
 * could not be read.
 */
int outfiles_collect(int dirfd, const struct outfiles_bounds *b, struct outfiles *out);
void outfiles_free(struct outfiles *o);

#endif
