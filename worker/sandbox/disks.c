#include "autoconf.h"

#include "worker/sandbox/disks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/util.h"
#include "worker/sandbox/jobdir.h"

enum disks_op { DISKS_FRESH = 1, DISKS_FRESH_COPY, DISKS_DROP };

/* What the worker asks; the keeper answers with a struct disks_reply and,
 * for DISKS_FRESH_COPY, the box's copy alongside (SCM_RIGHTS). */
struct disks_req {
	uint32_t op;
	char name[64];          /* one component of the jail dir, NUL-terminated */
	char old[64];           /* DISKS_FRESH*: one to detach and remove after the
				 * answer, or "" */
};

struct disks_reply {
	int32_t rc;             /* 0 or negative errno */
};

struct disks {
	int sock;
	pid_t pid;
	pthread_mutex_t lock;   /* one request at a time on the socket */
};

/* Stacked mounts are detached one at a time; more than this at one name
 * is not something the keeper made. */
#define DISKS_MAX_STACK 8

/* ---- the keeper --------------------------------------------------------- */

struct keeper {
	int sock;
	int jail_fd;            /* the jail dir, opened below the worker's job disk */
	uint64_t bytes, files;
};

/* Only a job directory's name: "job-" and then no slash. The rest of the
 * checks are the kernel's (no symlink is followed, see at). */
static bool valid_name(const char *name, size_t cap)
{
	size_t n = strnlen(name, cap);

	return n < cap && n > strlen(JOBDIR_PREFIX) &&
	       strncmp(name, JOBDIR_PREFIX, strlen(JOBDIR_PREFIX)) == 0 && !strchr(name, '/');
}

/* The directory name of the jail dir, as an O_PATH fd that follows no
 * symlink; whatever is mounted there is what it shows. */
static int at(const struct keeper *k, const char *name)
{
	int fd = openat(k->jail_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Every mount at name detached, down to the jail dir's own directory.
 * umount2 is given the fd's /proc path, so the mount it takes off is the
 * one the fd holds, whatever became of the names meanwhile. */
static int detach_all(const struct keeper *k, const char *name)
{
	struct stat top, st;

	if (fstat(k->jail_fd, &top) < 0)
		return -errno;
	for (int i = 0; i < DISKS_MAX_STACK; i++) {
		char path[64];
		int fd = at(k, name), rc = 0;

		if (fd < 0)
			return fd;
		if (fstat(fd, &st) < 0)
			rc = -errno;
		else if (st.st_dev == top.st_dev)
			rc = 1;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (rc == 0 && umount2(path, MNT_DETACH) < 0)
			rc = -errno;
		close(fd);
		if (rc != 0)
			return rc > 0 ? 0 : rc;
	}
	return -EBUSY;
}

static int set_size(int fs, const char *key, uint64_t n)
{
	char v[32];

	if (!n)
		return 0;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)n);
	return fsconfig(fs, FSCONFIG_SET_STRING, key, v, 0) < 0 ? -errno : 0;
}

/* A new tmpfs, still detached, holding an empty box. */
static int make_disk(const struct keeper *k)
{
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), mnt = -1, rc = 0;

	if (fs < 0)
		return -errno;
	if ((rc = set_size(fs, "size", k->bytes)) == 0 &&
	    (rc = set_size(fs, "nr_inodes", k->files)) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0711", 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (rc == 0 && mnt < 0)
		rc = -errno;
	close(fs);
	if (rc == 0 && mkdirat(mnt, DISKS_BOX, 0700) < 0)
		rc = -errno;
	if (rc < 0 && mnt >= 0)
		close(mnt);
	return rc < 0 ? rc : mnt;
}

/* The old disk off, the new one on, and the copy of its box. */
static int fresh(const struct keeper *k, const char *name, int *copy)
{
	int rc = detach_all(k, name), mnt, dir;

	if (rc < 0)
		return rc;
	mnt = make_disk(k);
	if (mnt < 0)
		return mnt;
	dir = at(k, name);
	if (dir < 0) {
		close(mnt);
		return dir;
	}
	if (move_mount(mnt, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		rc = -errno;
	close(dir);
	if (rc == 0 && copy) {
		*copy = open_tree(mnt, DISKS_BOX, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (*copy < 0)
			rc = -errno;
	}
	close(mnt);
	return rc;
}

/* A worker that cannot read its answer is gone; nothing to do about it. */
static void answer(const struct keeper *k, int rc, int fd)
{
	struct disks_reply r = { rc };
	struct iovec iov = { &r, sizeof(r) };

	(void)send_fds(k->sock, &iov, 1, &fd, fd >= 0 ? 1 : 0);
}

/* A disk's directory, its disk detached: both out of the way. */
static int drop(const struct keeper *k, const char *name)
{
	int rc = detach_all(k, name);

	if (rc == 0 && unlinkat(k->jail_fd, name, AT_REMOVEDIR) < 0)
		rc = -errno;
	return rc;
}

/* Each request answered as soon as its disk is there; the old disk's
 * detaching, which waits for an RCU grace period, comes after. */
static void serve(const struct keeper *k)
{
	for (;;) {
		struct disks_req q;
		ssize_t n = recv(k->sock, &q, sizeof(q), 0);
		int rc, fd = -1;
		bool old;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		old = n == (ssize_t)sizeof(q) && q.old[0];
		if (n != (ssize_t)sizeof(q) || !valid_name(q.name, sizeof(q.name)) ||
		    (old && !valid_name(q.old, sizeof(q.old))))
			rc = -EINVAL;
		else if (q.op == DISKS_FRESH || q.op == DISKS_FRESH_COPY)
			rc = fresh(k, q.name, q.op == DISKS_FRESH_COPY ? &fd : NULL);
		else if (q.op == DISKS_DROP)
			rc = drop(k, q.name);
		else
			rc = -EINVAL;
		answer(k, rc, rc == 0 ? fd : -1);
		if (fd >= 0)
			close(fd);
		if (rc == 0 && old && q.op != DISKS_DROP)
			(void)drop(k, q.old);
	}
}

/* The fds the keeper keeps, every other one closed. */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0U, 0);
}

/*
 * A terminal's ^C, or a stop sent to goboxd's whole process group,
 * reaches the keeper too; its worker, stopping, still needs it to remove
 * its jails' disks. The keeper ends with its worker: at the end of its
 * socket, or by PR_SET_PDEATHSIG.
 */
static void outlive_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_IGN);
}

static void __attribute__((noreturn)) keeper_main(struct keeper *k, pid_t parent)
{
	static const cap_value_t keep[] = { CAP_SYS_ADMIN };
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "goboxd-disks", 0, 0, 0);
	close_all_but(k->sock, k->jail_fd);
	outlive_stop_signals();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (geteuid() == 0 && caps_keep(keep, ARRAY_SIZE(keep)) < 0)
		_exit(1);
	serve(k);
	_exit(0);
}

/* ---- the worker's side -------------------------------------------------- */

int disks_open(const char *jail_dir, uint64_t bytes, uint64_t files, struct disks **out,
	       char *err, size_t errlen)
{
	struct keeper k = { .bytes = bytes, .files = files };
	struct disks *d;
	pid_t parent = getpid();
	int sv[2], rc;

	k.jail_fd = open(jail_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (k.jail_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "opening %s for the jails' disks: %s", jail_dir,
			 strerror(errno));
		return rc;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = -errno;
		snprintf(err, errlen, "socketpair for the jails' disks: %s", strerror(errno));
		close(k.jail_fd);
		return rc;
	}
	d = xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->sock = sv[0];
	k.sock = sv[1];
	d->pid = fork();
	if (d->pid == 0)
		keeper_main(&k, parent);
	rc = d->pid < 0 ? -errno : 0;
	close(k.sock);
	close(k.jail_fd);
	if (rc < 0) {
		snprintf(err, errlen, "forking the jails' disk keeper: %s", strerror(-rc));
		d->pid = 0;
		disks_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

void disks_close(struct disks *d)
{
	if (!d)
		return;
	close(d->sock);
	if (d->pid > 0)
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int receive(struct disks *d, int *fd)
{
	struct disks_reply r;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { &r, sizeof(r) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	do
		n = recvmsg(d->sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(r))
		return -EPIPE; /* the keeper is gone */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int got;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&got, CMSG_DATA(c), sizeof(int));
		if (fd && *fd < 0)
			*fd = got;
		else
			close(got);
	}
	if (r.rc == 0 && fd && *fd < 0)
		return -EPROTO;
	return r.rc;
}

static int ask(struct disks *d, uint32_t op, const char *name, const char *old, int *fd)
{
	struct disks_req q = { .op = op };
	int rc;

	if (!valid_name(name, sizeof(q.name)) || (old && !valid_name(old, sizeof(q.old))))
		return -EINVAL;
	snprintf(q.name, sizeof(q.name), "%s", name);
	snprintf(q.old, sizeof(q.old), "%s", old ? old : "");
	if (fd)
		*fd = -1;
	pthread_mutex_lock(&d->lock);
	if (send(d->sock, &q, sizeof(q), MSG_NOSIGNAL) < 0)
		rc = -errno;
	else
		rc = receive(d, fd);
	pthread_mutex_unlock(&d->lock);
	if (rc < 0 && fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

int disks_fresh(struct disks *d, const char *name, const char *old, int *box_copy)
{
	return ask(d, box_copy ? DISKS_FRESH_COPY : DISKS_FRESH, name, old, box_copy);
}

int disks_drop(struct disks *d, const char *name)
{
	return ask(d, DISKS_DROP, name, NULL, NULL);
}
