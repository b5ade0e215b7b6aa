/*
 * The files a job leaves in its directory, read back after its last test
 * (Judge0's post_execution_filesystem: the box after the run; /run's
 * return_files: those its patterns name). The directory was the
 * program's: what is in it is hostile. The walk never
 * follows a link and never opens anything but a regular file or a
 * directory, relative to fds it holds, and every bound is kept as the
 * data is read, whatever a stat said before.
 */
#ifndef GOBOXD_OUTFILES_H
#define GOBOXD_OUTFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Which files are taken: those match names, within the bounds. */
struct outfiles_bounds {
	size_t max_files;    /* files taken */
	size_t max_file;     /* bytes of one file: a larger one is left out */
	size_t max_total;    /* bytes of every file taken together */
	size_t max_entries;  /* names looked at in all: a directory of a million stops here */
	/* fnmatch patterns (validate_path_pattern's), one of which a file's
	 * path must match; NULL: every file. The request's, freed with it. */
	char **match;
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
	size_t left_out;     /* files named but past a bound, and names never looked at */
};

/*
 * Every regular file under dirfd (at most 8 directories deep, as
 * validate_path allows) that b->match names, in name order, within b. A
 * directory no pattern can reach into is never opened, nor is a name no
 * pattern can match ever looked at closer. 0 (out filled; free it with
 * outfiles_free), or a negative errno when the directory itself could not
 * be read.
 */
int outfiles_collect(int dirfd, const struct outfiles_bounds *b, struct outfiles *out);
void outfiles_free(struct outfiles *o);

/*
 * Whether path (relative to the job directory, '/'-separated) is one that
 * match names: some pattern matches it whole, as fnmatch with FNM_PATHNAME
 * reads it: '*', '?' and '[...]' never match a '/', so "out" names the
 * file or directory out, never a file in it (a pattern of two parts
 * does). NULL match: every path.
 */
bool outfiles_match(char *const *match, const char *path);
/*
 * Whether the directory dir (its path, as above) may hold a path match
 * names: some pattern has more parts than dir, and its first ones match
 * dir's. False only when none can: a pattern whose leading parts hold a
 * '[' or a '\' (where a '/' may hide) is taken to match. NULL match:
 * every directory.
 */
bool outfiles_may_hold(char *const *match, const char *dir);

#endif
