/*
 * Per-job directories under the jail dir: unique by construction (mkdtemp),
 * written relative to the directory fd, removed without any shell, and
 * swept when a crash left them behind (the master lists them, its sweeper
 * process removes them).
 */
#ifndef GOBOXD_JOBDIR_H
#define GOBOXD_JOBDIR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
/* jobdir_remove_at, which the job directories' users call too */
#include "worker/sandbox/jobdir_remove.h"

#define JOBDIR_PREFIX "job-"

struct jobdir {
	int fd;          /* O_DIRECTORY fd, also holds a flock while alive */
	int base_fd;     /* the snapshot "<path>.base" (locked too), or -1 */
	char path[4096]; /* host path */
};

/*
 * mkdtemp "<parent>/job-<pid>-XXXXXX" (pid: the calling process, so that
 * its parent can clean up after it), chown to uid:gid, mode 0750, and take
 * an exclusive flock on it so the sweeper leaves it alone.
 * Returns 0 or negative errno.
 */
int jobdir_create(const char *parent, uid_t uid, gid_t gid, struct jobdir *out);
/*
 * The empty directory at path (a jail's own disk's box, worker/sandbox/disks.h)
 * taken as a job directory: uid:gid's, mode 0750, with no lock (no sweeper
 * sees it: the disk is in the worker's mount namespace alone). 0 or
 * negative errno.
 */
int jobdir_adopt(const char *path, uid_t uid, gid_t gid, struct jobdir *out);
/*
 * Write one file with openat(O_CREAT|O_EXCL|O_NOFOLLOW) relative to the
 * directory fd; name must already be validated, and may name
 * directories ("dir/x.py"), made where missing, mode 0750. The file and
 * the directories made are chowned to the directory's owner. Returns 0
 * or negative errno.
 */
int jobdir_write(const struct jobdir *d, const char *name, const void *data, size_t len,
		 mode_t mode);
/*
 * Read the regular file name (one path component) of the job directory
 * into out, at most cap bytes (out->truncated set when there was more).
 * The file is opened with O_NOFOLLOW|O_NONBLOCK relative to the directory
 * fd, so a symbolic link, a FIFO or a directory a program left under that
 * name is refused, never followed or waited on. 0, -ENOENT when there is
 * no such file, or another negative errno (-EINVAL: not a regular file).
 */
int jobdir_read(const struct jobdir *d, const char *name, size_t cap, struct buf *out);
/*
 * Every test must start from the job directory as the build left it. This
 * keeps that state: each regular file becomes root's and read-only (a
 * program may replace it in its own directory, never change it), and the
 * tree is mirrored into "<path>.base" with hard links, out of the jail's
 * sight and locked like the job directory. Directories, regular files and
 * symlinks are kept; anything else is dropped. 0 or negative errno.
 */
int jobdir_snapshot(struct jobdir *d);
/*
 * Make the job directory the snapshot again: remove everything in it, then
 * recreate the directories (owned by uid:gid) and link the files back.
 * Costs one link per file, whatever their size. 0 or negative errno.
 */
int jobdir_restore(struct jobdir *d, uid_t uid, gid_t gid);
/*
 * What an exported tree takes, and the caps jobdir_export keeps it under
 * (a field 0: no cap). Every name costs its blocks on the destination's
 * disk, and at least JOBDIR_BLOCK: a file, a symlink or a directory takes
 * an inode and an entry in its directory however little it holds, and a
 * symlink's target or a directory's entries take blocks of their own.
 */
struct jobdir_usage {
	uint64_t bytes;  /* on the destination's disk, the top directory's blocks included */
	uint64_t import; /* what jobdir_import's copy takes on a job disk (a tmpfs):
			  * each file's size in whole blocks, a sparse one whole and
			  * each name of a hard-linked file a copy; a block per symlink */
	uint64_t names;  /* files, symlinks and directories under the top */
};

#define JOBDIR_BLOCK 4096

/*
 * The job directory as the build left it, copied into dst (a directory of
 * root's, out of every jail's sight): each regular file a new file of
 * root's, read-only, never a link to the sandbox's inode; directories
 * with their modes; symlinks as links (never followed); anything else
 * dropped. -EFBIG as soon as one more name would take it past a cap;
 * *used: what it takes (on -EFBIG, with the name that did not fit). 0 or
 * negative errno (dst half filled).
 */
int jobdir_export(const struct jobdir *d, int dst, const struct jobdir_usage *cap,
		  struct jobdir_usage *used);
/*
 * Make the job directory a copy of the tree at src (jobdir_export's):
 * everything in it removed, directories recreated as uid:gid's, files
 * hard-linked (they are root's and read-only: a program may replace them
 * in its directory, never change them) or, from another filesystem,
 * copied the same way. 0 or negative errno.
 */
int jobdir_import(struct jobdir *d, int src, uid_t uid, gid_t gid);
/*
 * Empty the job directory and make it uid:gid's, mode 0750, as
 * jobdir_create left it, its inode carrying nothing a program set (user
 * and ACL xattrs, inode flags, times): what is left of an import that
 * failed half-way goes before the job's own files are written again. (The
 * restore between tests and the import clear the inode the same way.) 0
 * or negative errno.
 */
int jobdir_clear(struct jobdir *d, uid_t uid, gid_t gid);
/*
 * The job directory made ready for the next job of its jail (which keeps
 * it bound at the box): the snapshot removed, then jobdir_clear. 0 or
 * negative errno (then the jail must not serve another job).
 */
int jobdir_reset(struct jobdir *d, uid_t uid, gid_t gid);
/* Close the job directory and its snapshot, removing nothing: for one on
 * a disk that goes whole (disks_fresh, disks_drop). */
void jobdir_close(struct jobdir *d);
/* Remove the whole tree (unlinkat, never following symlinks), its
 * snapshot, and close. */
int jobdir_remove(struct jobdir *d);

#endif
