#include "autoconf.h"

#include "common/jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

/*
 * Deeper directories are renamed up to the top of the tree being removed
 * and handled by a later pass, so the removal holds at most two fds per
 * level whatever depth the sandbox built.
 */
#define RM_MAX_DEPTH 32

int jobdir_create(const char *parent, uid_t uid, gid_t gid, struct jobdir *out)
{
	struct jobdir d;
	int n, rc;

	n = snprintf(d.path, sizeof(d.path), "%s/" JOBDIR_PREFIX "%d-XXXXXX", parent,
		     (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(d.path))
		return -ENAMETOOLONG;
	if (!mkdtemp(d.path))
		return -errno;
	d.fd = open(d.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d.fd < 0) {
		rc = -errno;
		rmdir(d.path);
		return rc;
	}
	/*
	 * The sweeper also skips directories younger than its age limit, so
	 * the instant between mkdtemp and the lock is not a race.
	 */
	if (flock(d.fd, LOCK_EX | LOCK_NB) < 0 || fchown(d.fd, uid, gid) < 0 ||
	    fchmod(d.fd, 0750) < 0) {
		rc = -errno;
		goto fail;
	}
	d.base_fd = -1;
	*out = d;
	return 0;
fail:
	close(d.fd);
	rmdir(d.path);
	return rc;
}

/*
 * Open name strictly inside the directory dirfd: the kernel refuses any
 * symlink (the last component's too), any "..", any absolute path and any
 * mount crossing on the way (openat2's RESOLVE_BENEATH and friends), so
 * nothing a program planted in a job directory can send root elsewhere.
 * A kernel without openat2 (before 5.6) gets openat with O_NOFOLLOW, which
 * is as strict for the one-component names goboxd passes.
 */
static int open_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd < 0 ? -errno : (int)fd;
}

int jobdir_write(const struct jobdir *d, const char *name, const void *data, size_t len,
		 mode_t mode)
{
	struct stat st;
	int fd, rc;

	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -EINVAL;
	if (fstat(d->fd, &st) < 0)
		return -errno;
	fd = open_beneath(d->fd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fd;
	/* fchmod after creation: the process umask must not change the mode */
	if (fchown(fd, st.st_uid, st.st_gid) < 0 || fchmod(fd, mode & 07777) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = write_all(fd, data, len);
	if (rc < 0)
		goto fail;
	if (close(fd) < 0) {
		rc = -errno;
		unlinkat(d->fd, name, 0);
		return rc;
	}
	return 0;
fail:
	close(fd);
	unlinkat(d->fd, name, 0);
	return rc;
}

int jobdir_read(const struct jobdir *d, const char *name, size_t cap, struct buf *out)
{
	char chunk[16384];
	struct stat st;
	int fd, rc = 0;

	if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -EINVAL;
	fd = open_beneath(d->fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return fd == -ELOOP ? -EINVAL : fd;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	out->truncated = false;
	for (;;) {
		size_t room = cap - out->len;
		ssize_t n = read(fd, chunk, room < sizeof(chunk) ? room + 1 : sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		if ((size_t)n > room) {
			n = (ssize_t)room;
			out->truncated = true;
		}
		if (buf_append(out, chunk, (size_t)n) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (out->truncated)
			break;
	}
	close(fd);
	return rc;
}

/*
 * Open a subdirectory without following a symlink. The sandbox may have
 * made it unreadable (chmod 000): when not privileged enough to ignore
 * that, give it back an owner mode through the parent, still without
 * following links, and retry.
 */
static int open_dir_at(int dirfd, const char *name)
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
	while ((de = readdir(dir))) {
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
		sub = open_dir_at(fd, name);
		if (sub < 0) {
			rm_note(p, sub);
			continue;
		}
		rm_level(p, sub, depth + 1);
		close(sub);
		rm_note(p, unlinkat(fd, name, AT_REMOVEDIR) < 0 ? -errno : 0);
	}
	closedir(dir);
}

/* Empty the directory open at rootfd; passes repeat while they make progress. */
static int rm_contents(int rootfd)
{
	unsigned seq = 0;

	for (;;) {
		struct rm_pass p = { .rootfd = rootfd, .seq = &seq };

		rm_level(&p, rootfd, 0);
		if (!p.seen)
			return 0;
		if (!p.progress)
			return p.err ? p.err : -ENOTEMPTY;
	}
}

int rm_tree_at(int dirfd, const char *name)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	fd = open_dir_at(dirfd, name);
	if (fd < 0)
		return fd;
	rc = rm_contents(fd);
	close(fd);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		rc = -errno;
	return rc;
}

/* ---- snapshot and restore --------------------------------------------- */

#define SNAP_MAX_DEPTH 64

/* Readable by all, executable by all when its owner could execute it. */
static mode_t frozen_mode(mode_t m)
{
	return 0444 | ((m & 0111) ? 0111 : 0);
}

/*
 * A regular file of the snapshot: root's and read-only, changed through an
 * fd opened beneath the job directory (never by name, which could have
 * become a link), then hard-linked into the snapshot.
 */
static int freeze_file(int src, int dst, const char *name)
{
	struct stat st;
	int fd = open_beneath(src, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	int rc = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if (fchown(fd, 0, 0) < 0 || fchmod(fd, frozen_mode(st.st_mode)) < 0 ||
		 linkat(src, name, dst, name, 0) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int snap_level(int src, int dst, int depth)
{
	struct dirent *de;
	DIR *dir;
	int dfd, rc = 0;

	if (depth >= SNAP_MAX_DEPTH)
		return -ELOOP;
	dfd = fcntl(src, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	rewinddir(dir);
	while (rc == 0 && (de = readdir(dir))) {
		const char *name = de->d_name;
		char target[4096];
		struct stat st;
		ssize_t n;
		int s2, d2;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
		} else if (S_ISREG(st.st_mode)) {
			rc = freeze_file(src, dst, name);
		} else if (S_ISLNK(st.st_mode)) {
			n = readlinkat(src, name, target, sizeof(target) - 1);
			if (n < 0)
				rc = -errno;
			else if (target[n] = '\0', symlinkat(target, dst, name) < 0)
				rc = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dst, name, st.st_mode & 07777) < 0 ||
			    fchmodat(dst, name, st.st_mode & 07777, 0) < 0) {
				rc = -errno;
				continue;
			}
			s2 = open_dir_at(src, name);
			d2 = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = s2 < 0 ? s2 : d2 < 0 ? -errno : snap_level(s2, d2, depth + 1);
			/* open_dir_at gave it an owner-only mode: give its own back */
			if (s2 >= 0 && fchmod(s2, st.st_mode & 07777) < 0 && rc == 0)
				rc = -errno;
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
		}
	}
	closedir(dir);
	return rc;
}

int jobdir_snapshot(struct jobdir *d)
{
	char base[sizeof(d->path) + 8];
	int fd, rc;

	if (d->base_fd >= 0)
		return -EEXIST;
	if ((size_t)snprintf(base, sizeof(base), "%s.base", d->path) >= sizeof(base))
		return -ENAMETOOLONG;
	if (mkdir(base, 0700) < 0)
		return -errno;
	fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		rmdir(base);
		return rc;
	}
	d->base_fd = fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	return snap_level(d->fd, fd, 0);
}

static int restore_level(int src, int dst, uid_t uid, gid_t gid, int depth)
{
	struct dirent *de;
	DIR *dir;
	int dfd, rc = 0;

	if (depth >= SNAP_MAX_DEPTH)
		return -ELOOP;
	dfd = fcntl(src, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	rewinddir(dir);
	while (rc == 0 && (de = readdir(dir))) {
		const char *name = de->d_name;
		char target[4096];
		struct stat st;
		ssize_t n;
		int s2, d2;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
		} else if (S_ISREG(st.st_mode)) {
			if (linkat(src, name, dst, name, 0) < 0)
				rc = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			n = readlinkat(src, name, target, sizeof(target) - 1);
			if (n < 0 || (target[n] = '\0', symlinkat(target, dst, name) < 0) ||
			    fchownat(dst, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				rc = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dst, name, 0700) < 0) {
				rc = -errno;
				continue;
			}
			s2 = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			d2 = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = s2 < 0 || d2 < 0 ? -errno : restore_level(s2, d2, uid, gid, depth + 1);
			if (rc == 0 && (fchown(d2, uid, gid) < 0 || fchmod(d2, st.st_mode & 07777) < 0))
				rc = -errno;
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
		}
	}
	closedir(dir);
	return rc;
}

int jobdir_restore(struct jobdir *d, uid_t uid, gid_t gid)
{
	struct stat st;
	int rc;

	if (d->base_fd < 0)
		return -ENOENT;
	/* The program owned the directory and may have taken its modes away. */
	if (fchmod(d->fd, 0700) < 0 || fstat(d->fd, &st) < 0)
		return -errno;
	rc = rm_contents(d->fd);
	if (rc == 0)
		rc = restore_level(d->base_fd, d->fd, uid, gid, 0);
	if (rc == 0 && (fchown(d->fd, uid, gid) < 0 || fchmod(d->fd, 0750) < 0))
		rc = -errno;
	return rc;
}

int jobdir_remove(struct jobdir *d)
{
	char base[sizeof(d->path) + 8];
	int rc;

	if (!d || d->fd < 0)
		return 0;
	if (d->base_fd >= 0) {
		snprintf(base, sizeof(base), "%s.base", d->path);
		rc = rm_contents(d->base_fd);
		if (rc == 0 && rmdir(base) < 0)
			rc = -errno;
		if (rc < 0)
			log_warn("removing %s: %s (the sweeper will retry)", base, strerror(-rc));
		close(d->base_fd);
		d->base_fd = -1;
	}
	/* the sandbox owns the directory and may have taken its modes away */
	fchmod(d->fd, 0700);
	rc = rm_contents(d->fd);
	if (rc == 0 && rmdir(d->path) < 0)
		rc = -errno;
	close(d->fd);
	d->fd = -1;
	return rc;
}

/*
 * One candidate of the sweep: 1 when removed, 0 when skipped (too young,
 * or locked by a live job), negative errno on failure.
 */
static int sweep_one(int pfd, const char *name, unsigned age_s, time_t now)
{
	struct stat st;
	int fd, rc;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (now - st.st_mtime < (time_t)age_s)
		return 0;
	fd = open_dir_at(pfd, name);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? 0 : -errno;
		close(fd);
		return rc;
	}
	rc = rm_contents(fd);
	if (rc == 0 && unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		rc = -errno;
	close(fd);
	return rc < 0 ? rc : 1;
}

/* Sweep the entries of parent whose names start with prefix. */
static int sweep_prefix(const char *parent, const char *prefix, unsigned age_s,
			unsigned *removed)
{
	struct dirent *de;
	unsigned count = 0;
	time_t now = time(NULL);
	DIR *dir;
	int pfd, dfd;

	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	dfd = fcntl(pfd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		int rc = -errno;

		if (dfd >= 0)
			close(dfd);
		close(pfd);
		return rc;
	}
	while ((de = readdir(dir))) {
		int rc;

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		rc = sweep_one(pfd, de->d_name, age_s, now);
		if (rc > 0)
			count++;
		else if (rc < 0)
			log_warn("sweep %s/%s: %s", parent, de->d_name, strerror(-rc));
	}
	closedir(dir);
	close(pfd);
	if (removed)
		*removed = count;
	return 0;
}

/*
 * A directory that cannot be removed is logged and left for the next
 * sweep; only an unreadable parent fails the sweep as a whole.
 */
int jobdir_sweep(const char *parent, unsigned age_s, unsigned *removed)
{
	return sweep_prefix(parent, JOBDIR_PREFIX, age_s, removed);
}

int jobdir_sweep_owner(const char *parent, pid_t pid, unsigned *removed)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), JOBDIR_PREFIX "%d-", (int)pid);
	return sweep_prefix(parent, prefix, 0, removed);
}
