/*
 * The jails' own disks: one tmpfs per jail that has a job directory, made
 * new for every job, so that nothing a job does to it (its files, its
 * inode numbers, its free space) reaches the next one.
 *
 * Mounting needs CAP_SYS_ADMIN, which the worker gives up once its
 * sandbox is open. A keeper process, forked before that and keeping that
 * capability alone, mounts for it: the worker names a new, empty
 * directory of the jail dir (its mount namespace's, private to the
 * worker) and the keeper mounts a fresh tmpfs there, with one empty
 * directory "box" (root's, 0700) for the job; it hands back a detached
 * copy of the box (open_tree), which the jail's init mounts at its own
 * box for the next job (worker/sandbox/init.c, reset_new_box), and then
 * detaches the disk the jail had before. The requests are fixed records;
 * the keeper checks every name and acts on nothing else.
 */
#ifndef GOBOXD_DISKS_H
#define GOBOXD_DISKS_H

#include <stddef.h>
#include <stdint.h>

/* The directory each disk holds, where the job's files go. */
#define DISKS_BOX "box"

struct disks;

/*
 * Fork the keeper, for disks of bytes and files (nr_inodes; 0: no cap)
 * under jail_dir. While CAP_SYS_ADMIN is held, before any thread starts.
 * 0 and *out, or negative errno with a reason.
 */
int disks_open(const char *jail_dir, uint64_t bytes, uint64_t files, struct disks **out,
	       char *err, size_t errlen);
/* The keeper exits as its socket closes; reaped here. NULL is fine. */
void disks_close(struct disks *d);
/*
 * A fresh disk at jail_dir/name (name: one component, a job directory's
 * as jobdir_create makes it, empty). *box_copy, unless box_copy is NULL:
 * a detached mount of its box, to be mounted in a jail. Once it is
 * answered, the keeper detaches the disk at old (unless NULL) and removes
 * that directory: its pages are freed with its last user. Thread-safe.
 * 0 or negative errno.
 */
int disks_fresh(struct disks *d, const char *name, const char *old, int *box_copy);
/* The disk at jail_dir/name detached, the directory removed (the caller
 * closed it). 0 or negative errno. */
int disks_drop(struct disks *d, const char *name);

#endif
