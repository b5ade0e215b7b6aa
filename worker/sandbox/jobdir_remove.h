/*
 * Removing what a sandbox wrote: a tree of any depth emptied through
 * directory fds, never following a link (jobdir_remove_contents,
 * jobdir_remove_at), and what a directory's own inode carries set back
 * (jobdir_remove_inode_marks). The job directories (jobdir.h) and the
 * sweeps of those a crash left behind use it; jobdir.h includes it.
 */
#ifndef GOBOXD_SANDBOX_JOBDIR_REMOVE_H
#define GOBOXD_SANDBOX_JOBDIR_REMOVE_H

#include <signal.h>

/* Open the subdirectory name of dirfd without following a link, giving
 * it an owner-only mode first when the sandbox took its modes away, and
 * after (removing inside needs them). The fd, or -errno. */
int jobdir_remove_open_dir(int dirfd, const char *name);

/* Empty the directory open at rootfd, at any depth. 0, or -errno; with
 * stop, -EINTR once *stop is set (checked every few hundred removals),
 * the tree part removed. */
int jobdir_remove_contents(int rootfd, volatile sig_atomic_t *stop);

/* Remove name under dirfd recursively, no symlink following. */
int jobdir_remove_at(int dirfd, const char *name);

/* The directory open at fd back to a new one's but for its entries and
 * mode: the extended attributes and inode flags a program may set gone,
 * its times now. 0 or -errno. */
int jobdir_remove_inode_marks(int fd);

#endif
