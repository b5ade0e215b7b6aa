/*
 * Per-job directories under the jail dir: unique by construction (mkdtemp),
 * written relative to the directory fd, removed without any shell, and
 * swept by the master when a crash left them behind.
 */
#ifndef GOBOXD_JOBDIR_H
#define GOBOXD_JOBDIR_H

#include <stddef.h>
#include <sys/types.h>

#define JOBDIR_PREFIX "job-"

struct jobdir {
	int fd;          /* O_DIRECTORY fd, also holds a flock while alive */
	char path[4096]; /* host path */
};

/*
 * mkdtemp "<parent>/job-XXXXXX", chown to uid:gid, mode 0750, and take an
 * exclusive flock on it so the sweeper leaves it alone.
 * Returns 0 or negative errno.
 */
int jobdir_create(const char *parent, uid_t uid, gid_t gid, struct jobdir *out);
/*
 * Write one file with openat(O_CREAT|O_EXCL|O_NOFOLLOW) relative to the
 * directory fd; name must already be validated. The file is chowned to the
 * directory's owner. Returns 0 or negative errno.
 */
int jobdir_write(const struct jobdir *d, const char *name, const void *data, size_t len,
		 mode_t mode);
/* Remove the whole tree (unlinkat, never following symlinks) and close. */
int jobdir_remove(struct jobdir *d);
/*
 * Remove every "job-*" directory under parent older than age_s seconds that
 * no live process holds locked. *removed counts them. 0 or negative errno.
 */
int jobdir_sweep(const char *parent, unsigned age_s, unsigned *removed);
/* Remove name under dirfd recursively, no symlink following. */
int rm_tree_at(int dirfd, const char *name);

#endif
