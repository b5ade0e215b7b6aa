#include "autoconf.h"

#include "worker/sandbox/jobdir.h"
#include "worker/sandbox/host.h"
#include "worker/sandbox/jobdir_remove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

int jobdir_adopt(const char *path, uid_t uid, gid_t gid, struct jobdir *out)
{
	struct jobdir d = { .base_fd = -1 };
	int rc;

	if ((size_t)snprintf(d.path, sizeof(d.path), "%s", path) >= sizeof(d.path))
		return -ENAMETOOLONG;
	d.fd = open(d.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d.fd < 0)
		return -errno;
	if (fchown(d.fd, uid, gid) < 0 || fchmod(d.fd, 0750) < 0) {
		rc = -errno;
		close(d.fd);
		return rc;
	}
	*out = d;
	return 0;
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

/* One component naming an entry of the directory itself. */
static bool one_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/*
 * The directory that holds path's last name, inside dirfd: each name on
 * the way is made (owner's, 0750) where missing and opened as openat2
 * allows, never through a link. A new fd, with *last the name inside
 * it; or a negative errno (-EINVAL for an empty, "." or ".." part,
 * -ENOTDIR where a file is in the way).
 */
static int parent_dir(int dirfd, const char *path, const struct stat *owner, const char **last)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	const char *p = path, *slash;

	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		char part[NAME_MAX + 1];
		size_t n = (size_t)(slash - p);
		bool made;
		int sub;

		if (n == 0 || n > NAME_MAX) {
			close(fd);
			return -EINVAL;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		if (!one_name(part)) {
			close(fd);
			return -EINVAL;
		}
		made = mkdirat(fd, part, 0700) == 0;
		if (!made && errno != EEXIST) {
			sub = -errno;
			close(fd);
			return sub;
		}
		sub = open_beneath(fd, part, O_RDONLY | O_DIRECTORY, 0);
		close(fd);
		if (sub < 0)
			return sub == -ELOOP ? -ENOTDIR : sub;
		if (made && (fchown(sub, owner->st_uid, owner->st_gid) < 0 ||
			     fchmod(sub, 0750) < 0)) {
			int rc = -errno;

			close(sub);
			return rc;
		}
		fd = sub;
		p = slash + 1;
	}
	*last = p;
	return fd;
}

int jobdir_write(const struct jobdir *d, const char *name, const void *data, size_t len,
		 mode_t mode)
{
	const char *last = NULL;
	struct stat st;
	int dir, fd, rc;

	if (!name || !*name || name[0] == '/')
		return -EINVAL;
	if (fstat(d->fd, &st) < 0)
		return -errno;
	dir = parent_dir(d->fd, name, &st, &last);
	if (dir < 0)
		return dir;
	if (!one_name(last)) {
		close(dir);
		return -EINVAL;
	}
	fd = open_beneath(dir, last, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		close(dir);
		return fd;
	}
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
		unlinkat(dir, last, 0);
		close(dir);
		return rc;
	}
	close(dir);
	return 0;
fail:
	close(fd);
	unlinkat(dir, last, 0);
	close(dir);
	return rc;
}

int jobdir_read(const struct jobdir *d, const char *name, size_t cap, struct buf *out)
{
	char chunk[16384];
	struct stat st;
	int fd, rc = 0;

	if (!one_name(name))
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
		if ((rc = buf_append(out, chunk, (size_t)n)) < 0)
			break;
		if (out->truncated)
			break;
	}
	close(fd);
	return rc;
}

/* ---- snapshot and restore --------------------------------------------- */

/*
 * Snapshot and restore copy a tree as deep as the build made it: any depth
 * is fine. The walk holds one directory of each side open (never one per
 * level), goes down by name and back up through "..", and on the way up
 * checks that ".." is the directory it came from (device and inode, kept
 * per level), so a directory moved under it ends the walk with -ESTALE
 * instead of taking it elsewhere. Nothing runs in the jail meanwhile.
 */
struct mirror_level {
	dev_t sdev, ddev;
	ino_t sino, dino;
	long pos;    /* where this level's listing resumes */
	mode_t mode; /* the source directory's own mode */
};

enum mirror_kind {
	MK_SNAPSHOT, /* the job directory into its .base: files frozen in place, linked */
	MK_RESTORE,  /* .base back into the job directory: links */
	MK_EXPORT,   /* the job directory into root's tree: files copied, frozen */
	MK_IMPORT,   /* such a tree into the job directory: links, or copies */
};

struct mirror {
	enum mirror_kind kind;
	uid_t uid;     /* the owner of the directories made in a job directory */
	gid_t gid;
	struct jobdir_usage used, limit; /* an export's, so far, and its caps */
	int src, dst;  /* the directories being listed, one per side */
	struct mirror_level *lv; /* from the top; the last is the current level */
	size_t n;
	size_t cap;
};

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
/* Open name under dir for reading, beneath it, and only as a regular file
 * (its stat in *st): the fd, or negative errno. */
static int open_regular(int dir, const char *name, struct stat *st)
{
	int fd = open_beneath(dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	int rc = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		rc = -errno;
	else if (!S_ISREG(st->st_mode))
		rc = -EINVAL;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/*
 * A frozen file's last access, as every test finds it: its last change.
 * The inode is the one each test's box links again (MK_RESTORE), and a
 * read moves its access time (relatime: the first read after a change):
 * left alone, a test would find when, and whether, one before it read the
 * file, a channel from test to test.
 */
static const struct timespec *access_as_changed(const struct stat *st, struct timespec t[2])
{
	t[0] = st->st_mtim;
	t[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	return t;
}

static int freeze_file(int src, int dst, const char *name)
{
	struct timespec t[2];
	struct stat st;
	int fd = open_regular(src, name, &st);
	int rc = 0;

	if (fd < 0)
		return fd;
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, frozen_mode(st.st_mode)) < 0 ||
	    futimens(fd, access_as_changed(&st, t)) < 0 || linkat(src, name, dst, name, 0) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Whole blocks of n bytes, at least one: what a name costs at the least. */
static uint64_t blocks_of(uint64_t n)
{
	return n ? (n + JOBDIR_BLOCK - 1) / JOBDIR_BLOCK * JOBDIR_BLOCK : JOBDIR_BLOCK;
}

/* Past one of an export's caps (the sum is counted either way). */
static bool over(uint64_t *used, uint64_t add, uint64_t cap)
{
	*used += add;
	return cap && *used > cap;
}

/*
 * One more name in an export, before it is made: bytes is what it will
 * take on the destination's disk as far as known (blocks_of its size),
 * import what its copy takes on a job disk. -EFBIG past a cap.
 */
static int export_admit(struct mirror *m, uint64_t bytes, uint64_t import)
{
	bool past = over(&m->used.names, 1, m->limit.names);

	past |= over(&m->used.import, import, m->limit.import);
	past |= over(&m->used.bytes, bytes, m->limit.bytes);
	return past ? -EFBIG : 0;
}

/*
 * A name made: what its blocks say beyond what export_admit counted (a
 * directory's entries, a filesystem's own overhead). -EFBIG past the cap.
 */
static int export_settle(struct mirror *m, const struct stat *st, uint64_t admitted)
{
	uint64_t real = (uint64_t)st->st_blocks * 512;

	return over(&m->used.bytes, real > admitted ? real - admitted : 0, m->limit.bytes) ?
		       -EFBIG : 0;
}

/* The walk reads a job directory (the sandbox's), or writes one. */
static bool from_job(const struct mirror *m)
{
	return m->kind == MK_SNAPSHOT || m->kind == MK_EXPORT;
}

static int copy_fd(int in, int out)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(in, chunk, sizeof(chunk));
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		rc = write_all(out, chunk, (size_t)n);
		if (rc < 0)
			return rc;
	}
}

/*
 * A new file of root's, read-only, with name's contents: the copy shares
 * no inode with its source, so whoever could change the source (the
 * sandbox, in its own directory) cannot change the copy.
 */
static int copy_frozen(struct mirror *m, const char *name)
{
	struct stat st;
	struct stat os;
	int in = open_regular(m->src, name, &st);
	int out, rc = 0;

	if (in < 0)
		return in;
	/* a sparse file is copied whole, as each name of a hard-linked one */
	if (m->kind == MK_EXPORT)
		rc = export_admit(m, blocks_of((uint64_t)st.st_size),
				  blocks_of((uint64_t)st.st_size));
	if (rc < 0) {
		close(in);
		return rc;
	}
	out = openat(m->dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	rc = copy_fd(in, out);
	if (rc == 0 && (fchown(out, 0, 0) < 0 || fchmod(out, frozen_mode(st.st_mode)) < 0 ||
			fstat(out, &os) < 0))
		rc = -errno;
	if (rc == 0 && m->kind == MK_EXPORT)
		rc = export_settle(m, &os, blocks_of((uint64_t)st.st_size));
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(m->dst, name, 0);
	close(in);
	return rc;
}

/* A file or a symlink (anything else is dropped). */
static int mirror_leaf(struct mirror *m, const char *name, const struct stat *st)
{
	char target[4096];
	struct stat ls;
	ssize_t n;
	int rc;

	if (S_ISREG(st->st_mode)) {
		if (m->kind == MK_SNAPSHOT)
			return freeze_file(m->src, m->dst, name);
		if (m->kind == MK_EXPORT)
			return copy_frozen(m, name);
		if (linkat(m->src, name, m->dst, name, 0) == 0) {
			struct timespec t[2];

			if (m->kind == MK_RESTORE &&
			    utimensat(m->dst, name, access_as_changed(st, t), AT_SYMLINK_NOFOLLOW) < 0)
				return -errno;
			return 0;
		}
		/* an imported tree on the host's disk, the job on its job disk */
		return m->kind == MK_IMPORT && errno == EXDEV ? copy_frozen(m, name) : -errno;
	}
	if (!S_ISLNK(st->st_mode))
		return 0;
	n = readlinkat(m->src, name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	/* a long target takes a block, on the cache's disk as on a tmpfs */
	if (m->kind == MK_EXPORT && (rc = export_admit(m, JOBDIR_BLOCK, JOBDIR_BLOCK)) < 0)
		return rc;
	if (symlinkat(target, m->dst, name) < 0)
		return -errno;
	if (!from_job(m) && fchownat(m->dst, name, m->uid, m->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (m->kind == MK_EXPORT) {
		if (fstatat(m->dst, name, &ls, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		return export_settle(m, &ls, JOBDIR_BLOCK);
	}
	return 0;
}

static int mirror_push(struct mirror *m, int s, int d, mode_t mode)
{
	struct stat ss, ds;

	if (fstat(s, &ss) < 0 || fstat(d, &ds) < 0)
		return -errno;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		m->lv = xreallocarray(m->lv, cap, sizeof(*m->lv));
		m->cap = cap;
	}
	m->lv[m->n++] = (struct mirror_level){ .sdev = ss.st_dev, .sino = ss.st_ino,
					       .ddev = ds.st_dev, .dino = ds.st_ino,
					       .mode = mode };
	return 0;
}

/* The walk's current directories become s and d. */
static void mirror_move(struct mirror *m, int s, int d)
{
	close(m->src);
	close(m->dst);
	m->src = s;
	m->dst = d;
}

/* Make name's copy and go down into both; the level is pushed. */
static int mirror_down(struct mirror *m, const char *name, const struct stat *st)
{
	mode_t mode = st->st_mode & 07777;
	int s, d, rc;

	/* a tmpfs directory takes no block: only its inode */
	if (m->kind == MK_EXPORT && (rc = export_admit(m, JOBDIR_BLOCK, 0)) < 0)
		return rc;
	if (mkdirat(m->dst, name, from_job(m) ? mode : 0700) < 0 ||
	    (from_job(m) && fchmodat(m->dst, name, mode, 0) < 0))
		return -errno;
	s = from_job(m) ? jobdir_remove_open_dir(m->src, name)
			: openat(m->src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return from_job(m) ? s : -errno;
	d = openat(m->dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = d < 0 ? -errno : mirror_push(m, s, d, mode);
	if (rc < 0) {
		/* jobdir_remove_open_dir gave it an owner-only mode: its own back */
		if (from_job(m))
			fchmod(s, mode);
		close(s);
		if (d >= 0)
			close(d);
		return rc;
	}
	mirror_move(m, s, d);
	return 0;
}

/* Back to the parents through "..", checked; then the child's own modes. */
static int mirror_up(struct mirror *m)
{
	const struct mirror_level *child = &m->lv[m->n - 1], *up = &m->lv[m->n - 2];
	struct stat ss, ds;
	int s, d, rc = 0;

	s = openat(m->src, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = openat(m->dst, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0 || d < 0 || fstat(s, &ss) < 0 || fstat(d, &ds) < 0)
		rc = -errno;
	else if (ss.st_dev != up->sdev || ss.st_ino != up->sino || ds.st_dev != up->ddev ||
		 ds.st_ino != up->dino)
		rc = -ESTALE;
	/* jobdir_remove_open_dir gave the source an owner-only mode: its own back */
	else if (from_job(m) ? fchmod(m->src, child->mode) < 0
			     : (fchown(m->dst, m->uid, m->gid) < 0 || fchmod(m->dst, child->mode) < 0))
		rc = -errno;
	/* the child's blocks, now that all its entries are in */
	else if (m->kind == MK_EXPORT)
		rc = fstat(m->dst, &ds) < 0 ? -errno : export_settle(m, &ds, JOBDIR_BLOCK);
	if (rc < 0) {
		if (s >= 0)
			close(s);
		if (d >= 0)
			close(d);
		return rc;
	}
	mirror_move(m, s, d);
	m->n--;
	return 0;
}

/*
 * List the current level from where it stopped: copy files and links,
 * and at the first directory go down into it (1). 0 when the level is
 * done, or negative errno.
 */
static int mirror_level(struct mirror *m)
{
	struct dirent *de;
	DIR *dir;
	int dfd, rc = 0;

	/* fdopendir owns its fd, and a dup shares the offset: seek it */
	dfd = fcntl(m->src, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	seekdir(dir, m->lv[m->n - 1].pos);
	while (rc == 0 && (de = readdir(dir))) {
		const char *name = de->d_name;
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (fstatat(m->src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			m->lv[m->n - 1].pos = telldir(dir);
			rc = mirror_down(m, name, &st);
			if (rc == 0)
				rc = 1;
		} else {
			rc = mirror_leaf(m, name, &st);
		}
	}
	closedir(dir);
	return rc;
}

/*
 * A walk that stopped half-way (an export past its caps): the job
 * directory's directories it went down into get their own modes back on
 * the way up, as mirror_up gives them, since the job goes on in them.
 */
static void mirror_unwind(struct mirror *m)
{
	while (from_job(m) && m->n > 1) {
		const struct mirror_level *up = &m->lv[m->n - 2];
		struct stat ss;
		int s;

		fchmod(m->src, m->lv[m->n - 1].mode);
		s = openat(m->src, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0)
			return;
		if (fstat(s, &ss) < 0 || ss.st_dev != up->sdev || ss.st_ino != up->sino) {
			close(s);
			return;
		}
		close(m->src);
		m->src = s;
		m->n--;
	}
}

static int mirror_tree(struct mirror *m, int src, int dst)
{
	int rc = -EBADF;

	m->src = fcntl(src, F_DUPFD_CLOEXEC, 0);
	m->dst = fcntl(dst, F_DUPFD_CLOEXEC, 0);
	if (m->src >= 0 && m->dst >= 0)
		rc = mirror_push(m, m->src, m->dst, 0);
	else if (errno)
		rc = -errno;
	while (rc >= 0 && m->lv) {
		rc = mirror_level(m);
		if (rc == 0 && m->n == 1)
			break;
		if (rc == 0)
			rc = mirror_up(m);
	}
	if (rc < 0 && m->lv && m->src >= 0)
		mirror_unwind(m);
	if (m->src >= 0)
		close(m->src);
	if (m->dst >= 0)
		close(m->dst);
	free(m->lv);
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
	return mirror_tree(&(struct mirror){ .kind = MK_SNAPSHOT }, d->fd, fd);
}

/* Everything in the job directory removed, and what its inode carried;
 * it stays root's meanwhile. */
static int empty_job_dir(struct jobdir *d)
{
	int rc;

	/* The program owned the directory and may have taken its modes away. */
	if (fchmod(d->fd, 0700) < 0)
		return -errno;
	rc = jobdir_remove_contents(d->fd, NULL);
	return rc < 0 ? rc : jobdir_remove_inode_marks(d->fd);
}

/* The job directory uid:gid's again, as jobdir_create made it. */
static int give_job_dir(struct jobdir *d, uid_t uid, gid_t gid)
{
	return fchown(d->fd, uid, gid) < 0 || fchmod(d->fd, 0750) < 0 ? -errno : 0;
}

/* The job directory emptied, then made a copy of the tree at src. */
static int refill(struct jobdir *d, int src, enum mirror_kind kind, uid_t uid, gid_t gid)
{
	int rc = empty_job_dir(d);

	if (rc == 0)
		rc = mirror_tree(&(struct mirror){ .kind = kind, .uid = uid, .gid = gid }, src,
				 d->fd);
	if (rc == 0)
		rc = give_job_dir(d, uid, gid);
	return rc;
}

int jobdir_restore(struct jobdir *d, uid_t uid, gid_t gid)
{
	if (d->base_fd < 0)
		return -ENOENT;
	return refill(d, d->base_fd, MK_RESTORE, uid, gid);
}

int jobdir_export(const struct jobdir *d, int dst, const struct jobdir_usage *cap,
		  struct jobdir_usage *used)
{
	struct mirror m = { .kind = MK_EXPORT, .limit = *cap };
	struct stat st;
	int rc;

	/* the top directory: a block, and what its entries take */
	m.used.bytes = JOBDIR_BLOCK;
	rc = over(&m.used.bytes, 0, m.limit.bytes) ? -EFBIG : mirror_tree(&m, d->fd, dst);
	if (rc == 0)
		rc = fstat(dst, &st) < 0 ? -errno : export_settle(&m, &st, JOBDIR_BLOCK);
	*used = m.used;
	return rc;
}

int jobdir_import(struct jobdir *d, int src, uid_t uid, gid_t gid)
{
	return refill(d, src, MK_IMPORT, uid, gid);
}

int jobdir_clear(struct jobdir *d, uid_t uid, gid_t gid)
{
	int rc = empty_job_dir(d);

	return rc < 0 ? rc : give_job_dir(d, uid, gid);
}

/* The snapshot, when there is one: removed, or left to the sweeper. */
static int drop_snapshot(struct jobdir *d)
{
	char base[sizeof(d->path) + 8];
	int rc;

	if (d->base_fd < 0)
		return 0;
	snprintf(base, sizeof(base), "%s.base", d->path);
	rc = jobdir_remove_contents(d->base_fd, NULL);
	if (rc == 0 && rmdir(base) < 0)
		rc = -errno;
	if (rc < 0)
		log_warn("removing %s: %s (the sweeper will retry)", base, strerror(-rc));
	close(d->base_fd);
	d->base_fd = -1;
	return rc;
}

int jobdir_reset(struct jobdir *d, uid_t uid, gid_t gid)
{
	int rc = drop_snapshot(d);

	if (rc == 0)
		rc = jobdir_clear(d, uid, gid);
	return rc;
}

void jobdir_close(struct jobdir *d)
{
	if (d->base_fd >= 0)
		close(d->base_fd);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = d->base_fd = -1;
}

int jobdir_remove(struct jobdir *d)
{
	int rc;

	if (!d || d->fd < 0)
		return 0;
	drop_snapshot(d);
	/* the sandbox owns the directory and may have taken its modes away */
	fchmod(d->fd, 0700);
	rc = jobdir_remove_contents(d->fd, NULL);
	if (rc == 0 && rmdir(d->path) < 0)
		rc = -errno;
	close(d->fd);
	d->fd = -1;
	return rc;
}

/*
 * A directory that can be swept: no live process holds its lock. The lock
 * is taken and released at once (the sweeper takes it again to remove
 * it); a directory this process cannot open is left to the sweeper.
 */
static bool unlocked(int pfd, const char *name)
{
	int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return errno == EACCES;
	ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return ok;
}

int jobdir_stale(const char *parent, pid_t owner, unsigned age_s,
		 void (*found)(void *arg, const char *path), void *arg)
{
	char prefix[32], path[4096];
	struct dirent *de;
	time_t now = time(NULL);
	DIR *dir;
	int pfd, dfd;

	if (owner > 0)
		snprintf(prefix, sizeof(prefix), JOBDIR_PREFIX "%d-", (int)owner);
	else
		snprintf(prefix, sizeof(prefix), JOBDIR_PREFIX);
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
		struct stat st;
		int n;

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		    fstatat(pfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || now - st.st_mtime < (time_t)age_s ||
		    !unlocked(pfd, de->d_name))
			continue;
		n = snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		if (n > 0 && (size_t)n < sizeof(path))
			found(arg, path);
	}
	closedir(dir);
	close(pfd);
	return 0;
}

int jobdir_reclaim(const char *path, volatile sig_atomic_t *stop)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];
	const char *name;
	int pfd, fd, rc;

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	snprintf(parent, sizeof(parent), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	name = slash + 1;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	/* no mode changed before the lock says it is nobody's */
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES)
		fd = jobdir_remove_open_dir(pfd, name);
	else if (fd < 0)
		fd = -errno;
	if (fd < 0) {
		close(pfd);
		/* gone already, or a symlink or a file under that name: not ours */
		return fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR ? 0 : fd;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? 0 : -errno;
		goto out;
	}
	/* the sandbox owned it and may have taken its modes away */
	fchmod(fd, 0700);
	rc = jobdir_remove_contents(fd, stop);
	if (rc == 0)
		rc = unlinkat(pfd, name, AT_REMOVEDIR) < 0 ? -errno : 1;
out:
	close(fd);
	close(pfd);
	return rc;
}
