/*
 * Removing what a sandbox wrote, which may fight back: directories it
 * made unreadable, links where a directory was, a tree deeper than any
 * fd budget. Everything goes through directory fds, never a path and
 * never a link, and a walk holds at most two fds per level (a deeper
 * directory is moved up and handled by a later pass). The job directory's
 * own inode is set back too: its extended attributes, its inode flags and
 * its times. Used by the job directories (jobdir.c), and by the sweeper
 * through jobdir_reclaim.
 */
#include "autoconf.h"

#include "worker/sandbox/jobdir_remove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"

/*
 * Deeper directories are renamed up to the top of the tree being removed
 * and handled by a later pass, so the removal holds at most two fds per
 * level whatever depth the sandbox built.
 */
#define RM_MAX_DEPTH 32
/* How many removals a stoppable removal makes between two checks. */
#define RM_BATCH 256

/*
 * Open a subdirectory without following a symlink. The sandbox may have
 * made it unreadable (chmod 000): when not privileged enough to ignore
 * that, give it back an owner mode through the parent, still without
 * following links, and retry.
 */
int jobdir_remove_open_dir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES) {
		if (fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW) < 0)
			return -EACCES;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* unlinking inside needs write and search permission on it */
	fchmod(fd, 0700);
	return fd;
}

static bool entry_is_dir(int dirfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return S_ISDIR(st.st_mode);
}

struct rm_pass {
	int rootfd;
	unsigned *seq;  /* names for hoisted directories, across passes */
	bool progress; /* something was removed or hoisted */
	bool seen;     /* the top level still had entries */
	int err;       /* first error, kept for when no progress is made */
	volatile sig_atomic_t *stop; /* NULL, or set (by a signal) to stop */
	unsigned *ops; /* unlinks and renames so far, across passes */
	bool stopped;
};

/* Move a too-deep directory to the top of the tree under a fresh name. */
static int hoist_dir(struct rm_pass *p, int dirfd, const char *name)
{
	for (int tries = 0; tries < 1000; tries++) {
		char nn[32];

		snprintf(nn, sizeof(nn), "goboxd-deep-%u", (*p->seq)++);
		if (renameat2(dirfd, name, p->rootfd, nn, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void rm_note(struct rm_pass *p, int rc)
{
	if (rc < 0 && rc != -ENOENT && p->err == 0)
		p->err = rc;
	if (rc == 0)
		p->progress = true;
	if (++*p->ops % RM_BATCH == 0 && p->stop && *p->stop)
		p->stopped = true;
}

static void rm_level(struct rm_pass *p, int fd, int depth)
{
	struct dirent *de;
	DIR *dir;
	int dfd;

	/* fdopendir owns its fd, and a dup shares the offset: rewind it */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0) {
		rm_note(p, -errno);
		return;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		rm_note(p, -errno);
		close(dfd);
		return;
	}
	rewinddir(dir);
	while (!p->stopped && (de = readdir(dir))) {
		const char *name = de->d_name;
		int sub;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (depth == 0)
			p->seen = true;
		if (!entry_is_dir(fd, de)) {
			rm_note(p, unlinkat(fd, name, 0) < 0 ? -errno : 0);
			continue;
		}
		if (depth + 1 >= RM_MAX_DEPTH) {
			rm_note(p, hoist_dir(p, fd, name));
			continue;
		}
		sub = jobdir_remove_open_dir(fd, name);
		if (sub < 0) {
			rm_note(p, sub);
			continue;
		}
		rm_level(p, sub, depth + 1);
		close(sub);
		if (!p->stopped)
			rm_note(p, unlinkat(fd, name, AT_REMOVEDIR) < 0 ? -errno : 0);
	}
	closedir(dir);
}

/*
 * Empty the directory open at rootfd; passes repeat while they make
 * progress. With stop, every RM_BATCH removals it checks *stop and returns
 * -EINTR when set, the tree part removed.
 */
int jobdir_remove_contents(int rootfd, volatile sig_atomic_t *stop)
{
	unsigned seq = 0, ops = 0;

	for (;;) {
		struct rm_pass p = { .rootfd = rootfd, .seq = &seq, .stop = stop, .ops = &ops };

		rm_level(&p, rootfd, 0);
		if (p.stopped)
			return -EINTR;
		if (!p.seen)
			return 0;
		if (!p.progress)
			return p.err ? p.err : -ENOTEMPTY;
	}
}

int jobdir_remove_at(int dirfd, const char *name)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	fd = jobdir_remove_open_dir(dirfd, name);
	if (fd < 0)
		return fd;
	rc = jobdir_remove_contents(fd, NULL);
	close(fd);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		rc = -errno;
	return rc;
}

/* An extended attribute a program may have set on a directory it owns:
 * user.*, and the POSIX ACLs (a default ACL would shape the next files). */
static bool program_xattr(const char *name)
{
	return strncmp(name, "user.", 5) == 0 || strcmp(name, "system.posix_acl_access") == 0 ||
	       strcmp(name, "system.posix_acl_default") == 0;
}

/* The inode flags (chattr) an owner without privilege may set; the others
 * (extents, the hashed index...) are the filesystem's own, and append-only
 * and immutable take a capability no jail has. */
#define PROGRAM_INODE_FLAGS                                                             \
	(FS_SECRM_FL | FS_UNRM_FL | FS_COMPR_FL | FS_SYNC_FL | FS_NODUMP_FL |          \
	 FS_NOATIME_FL | FS_DIRSYNC_FL | FS_NOTAIL_FL | FS_TOPDIR_FL | FS_NOCOW_FL |   \
	 FS_NOCOMP_FL | FS_PROJINHERIT_FL | FS_CASEFOLD_FL | FS_DAX_FL)

/*
 * What the job directory's own inode can carry besides its entries and
 * its mode (which give_job_dir in jobdir.c sets): its extended attributes, its inode
 * flags (chattr's: the owner may set noatime, nodump and the like) and its
 * times. All back to a new directory's. A filesystem without xattrs or
 * flags has nothing to clear.
 */
int jobdir_remove_inode_marks(int fd)
{
	ssize_t size = flistxattr(fd, NULL, 0), n = 0;
	char *names = NULL;
	int flags = 0, rc = 0;

	if (size < 0 && errno != ENOTSUP && errno != EOPNOTSUPP)
		return -errno;
	if (size > 0) {
		/* nothing runs in the jail now: the list cannot grow meanwhile */
		names = xmalloc((size_t)size);
		n = flistxattr(fd, names, (size_t)size);
		if (n < 0)
			rc = -errno;
	}
	for (ssize_t i = 0; rc == 0 && i < n; i += (ssize_t)strnlen(names + i, (size_t)(n - i)) + 1)
		if (program_xattr(names + i) && fremovexattr(fd, names + i) < 0 && errno != ENODATA)
			rc = -errno;
	free(names);
	if (rc < 0)
		return rc;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		if ((flags & PROGRAM_INODE_FLAGS) &&
		    (flags &= ~PROGRAM_INODE_FLAGS, ioctl(fd, FS_IOC_SETFLAGS, &flags)) < 0)
			return -errno;
	} else if (errno != ENOTTY && errno != ENOTSUP && errno != EOPNOTSUPP &&
		   errno != EINVAL) {
		return -errno;
	}
	return futimens(fd, NULL) < 0 ? -errno : 0;
}
