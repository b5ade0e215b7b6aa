/*
 * goboxd-init: pid 1 of every jail.
 *
 * The jail (bwrap or nsjail) is built with this program as its command and
 * serves one job after another. It talks to its worker over the socket at
 * INITMSG_FD (see worker/sandbox/initmsg.h): the worker asks it to run the
 * build and then each test, and it answers with the pid and, later, the
 * exact wait status; between two jobs the worker asks it to RESET the jail
 * (reset_steps). It
 * never runs user code itself: each program is a child that joins its
 * step's cgroup, sets its rlimits, drops every capability, installs the
 * seccomp filter and only then execs. Two lists give the order, each step
 * saying why it stands where it does: start_steps for the init's own
 * start-up, child_run for a program's, from clone to exec
 * (worker/sandbox/init_child.c). What it closes off before its hello,
 * the mounts, the programs' /proc and the network, is
 * worker/sandbox/init_seal.c.
 *
 * Being pid 1 of the jail's pid namespace, it cannot be signalled by the
 * programs (the kernel drops signals to a namespace's init that it does not
 * handle), it reaps every orphan, and when it exits the kernel kills
 * whatever is left in the namespace.
 *
 * It keeps CAP_SYS_ADMIN inside the jail's user namespace, and only for
 * these: a network namespace without a working interface, at the start
 * (empty_network) and for a later job when the one before had a network
 * or left a socket (reset_network); a /proc of its
 * own, and the programs' remounted to hide it; the pid counter set back
 * between jobs; a fresh /tmp for each program; and an IPC namespace of
 * its own for each program (SysV shared memory, semaphores and message
 * queues, POSIX message queues), which it empties once the program is
 * gone (ipc_clear), so nothing of that kind reaches the next program,
 * not even as memory still charged. It is not dumpable, so a program running under the same uid
 * cannot open /proc/1/mem, its fds or its environment, nor see it in its
 * /proc at all (hide_the_init); what a program could change of it
 * through its uid (its limits, priority, scheduling) the seccomp filter
 * refuses, and each RESET checks. Libc only; no goboxd library.
 */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/sandbox/init_child.h"
#include "worker/sandbox/init_seal.h"
#include "worker/sandbox/initmsg.h"

#define MAX_CHILDREN 8
#define TMP_DIR "/tmp"
/* in the last job's box, what its /tmp is moved to (tmp_into_last_box) */
#define LAST_TMP ".goboxd-last-tmp"

struct child {
	pid_t pid;              /* 0: reaped */
	uint32_t id;
	int ipc;                /* its IPC namespace until emptied, or -1 */
	int held[2];            /* its stdout and stderr until reaped, or -1
				 * (INITMSG_RUN_HOLD_OUTPUT) */
};

/* What a program inherits from the init: what no program may change
 * (policy_init_guards), noted at the start and checked at every RESET. */
struct own_state {
	struct rlimit limit[RLIM_NLIMITS];
	int nice;
	long ioprio;
	int policy;
	struct sched_param param;
	cpu_set_t cpus;
};

struct init {
	int sock;
	int sigfd;
	struct sock_filter *filter;     /* FILTER's: a job's without a network */
	unsigned short filter_len;
	/* NETWORK's, until the job's RESET: its programs may make internet
	 * sockets (policy_network_families), and the RESET makes a new
	 * network namespace (reset_network) */
	struct sock_filter *net_filter;
	unsigned short net_filter_len;
	struct child kids[MAX_CHILDREN];
	char *buf;
	bool tmp_mounted;       /* /tmp is ours, not the jail's placeholder */
	/* ...and mounted by a RESET for the next program, which no program
	 * has run with yet (reset_next_tmp) */
	bool tmp_unused;
	/* ...or found by a CLEAR as its mount left it, for the same job's
	 * next program (clear_tmp) */
	bool tmp_clean;
	/* /tmp as mount_tmp left it (mark_tmp), when tmp_marked */
	bool tmp_marked;
	struct stat tmp_mark;
	/* the last RUN's /tmp: how the RESET mounts the next one */
	unsigned long tmp_flags;
	char tmp_opts[96];
	/* an IPC namespace a RESET made for the next program, unentered; or -1 */
	int next_ipc;
	bool entered;           /* ENTER moved us into a step's cgroup */
	const char *self;       /* argv[0]: our binary, bound into the jail */
	bool new_network;       /* INITMSG_ARG_NEW_NETWORK: make the jail's own */
	int proc_fd;            /* a /proc of its own, that hides no process */
	int ipc_fd;             /* its own IPC namespace, to come back to */
	int oom_fd;             /* its own oom_score_adj, written (-1: none) */
	char oom_was[16];       /* ...and its value from the start */
	struct own_state own;   /* what its programs inherit, as at its start */
	int next_box;           /* a RESET's: the next job's box, a detached mount; or -1 */
	const char *box;        /* ...and where it goes */
};

/* ---- messages ------------------------------------------------------- */

static int send_msg(struct init *in, uint32_t type, uint32_t id, const void *body, size_t len)
{
	char pkt[sizeof(struct initmsg_hdr) + 64];
	struct initmsg_hdr h = { INITMSG_MAGIC, type, id, (uint32_t)len };
	ssize_t n;

	if (len > sizeof(pkt) - sizeof(h))
		return -EMSGSIZE;
	memcpy(pkt, &h, sizeof(h));
	if (len)
		memcpy(pkt + sizeof(h), body, len);
	do
		n = send(in->sock, pkt, sizeof(h) + len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

static void send_failed(struct init *in, uint32_t id, uint32_t stage, int err)
{
	struct initmsg_failed f = { stage, err };

	send_msg(in, INITMSG_FAILED, id, &f, sizeof(f));
}

/*
 * One packet and the fds it carries. Returns the packet length, 0 when the
 * worker closed its end, or negative errno. Fds beyond what fits are
 * closed by the kernel (MSG_CTRUNC), and then the packet is refused.
 */
static ssize_t recv_msg(struct init *in, int *fds, unsigned *nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * INITMSG_MAX_FDS)];
	} ctl;
	struct iovec iov = { in->buf, INITMSG_MAX };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(in->sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < INITMSG_MAX_FDS)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

/* The init's oom_score_adj, for the programs it starts next
 * (keep_oom_handle). */
static void set_oom_score(const struct init *in, const char *value)
{
	if (in->oom_fd >= 0 && pwrite(in->oom_fd, value, strlen(value), 0) < 0)
		fprintf(stderr, "goboxd-init: oom_score_adj %s: %s\n", value, strerror(errno));
}

/* ---- RUN ------------------------------------------------------------ */

/*
 * A new /tmp's root made recognizable: its access and modification
 * times set a second back, then its whole state noted. Whatever a program
 * does there moves them: a name made, removed or renamed sets the
 * modification time to the present, a listing the access time (relatime
 * updates an access time that is not past the modification time). Only
 * root, the owner, could set them back, and no program is root. A mark
 * that cannot be set is no mark: that /tmp is never kept.
 */
static void mark_tmp(struct init *in)
{
	struct timespec t[2];

	in->tmp_marked = false;
	if (clock_gettime(CLOCK_REALTIME, &t[0]) < 0)
		return;
	t[0].tv_sec -= 1;
	t[1] = t[0];
	if (utimensat(AT_FDCWD, TMP_DIR, t, 0) == 0 && stat(TMP_DIR, &in->tmp_mark) == 0)
		in->tmp_marked = true;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * /tmp as mark_tmp left it: no program has written or read it since. Its
 * times say all of it: its size and links change only with a name, and
 * any change to the root itself (its mode, owner, extended attributes),
 * which only its owner could make, moves the change time.
 */
static bool tmp_untouched(const struct init *in)
{
	const struct stat *m = &in->tmp_mark;
	struct stat st;

	return in->tmp_marked && stat(TMP_DIR, &st) == 0 &&
	       same_time(&st.st_atim, &m->st_atim) && same_time(&st.st_mtim, &m->st_mtim) &&
	       same_time(&st.st_ctim, &m->st_ctim);
}

/* A new /tmp as tmp_flags and tmp_opts say, over the jail's placeholder. */
static int mount_tmp(struct init *in)
{
	if (mount("tmpfs", TMP_DIR, "tmpfs", in->tmp_flags, in->tmp_opts) < 0)
		return -errno;
	in->tmp_mounted = true;
	mark_tmp(in);
	return 0;
}

/*
 * A new, empty /tmp: the old one (and whatever a program left in it) goes.
 * The jail's own placeholder was never written to: the first program's
 * /tmp is mounted over it, which spares an unmount (and the RCU grace
 * period it waits for) on every single-test job. The one the RESET
 * mounted (reset_next_tmp), or the one the CLEAR found untouched
 * (clear_tmp), serves if it is of the kind asked for.
 */
static int fresh_tmp(struct init *in, const struct initmsg_run *r)
{
	char opts[sizeof(in->tmp_opts)];
	unsigned long fl = MS_NOSUID | MS_NODEV;
	bool as_new = in->tmp_unused || in->tmp_clean;

	in->tmp_unused = in->tmp_clean = false;
	if (r->flags & INITMSG_RUN_TMP_NOEXEC)
		fl |= MS_NOEXEC;
	snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu,mode=1777",
		 (unsigned long long)r->tmp_bytes, (unsigned long long)r->tmp_inodes);
	if (as_new && fl == in->tmp_flags && strcmp(opts, in->tmp_opts) == 0)
		return 0;
	if (in->tmp_mounted && umount2(TMP_DIR, MNT_DETACH) < 0 && errno != EINVAL)
		return -errno;
	in->tmp_mounted = false;
	in->tmp_flags = fl;
	memcpy(in->tmp_opts, opts, sizeof(opts));
	return mount_tmp(in);
}

/* ---- each program's IPC namespace ------------------------------------ */

/*
 * Each program has an IPC namespace of its own (SysV shared memory,
 * semaphores, message queues; POSIX message queues), so that none of its
 * objects reaches another program. The kernel frees a namespace's objects
 * after its last process, and a grace period after that (17 to 31 ms for
 * 150 MiB of shared memory on the 2-vCPU test host): when the worker set the cgroup back in
 * that window, the memory passed for the init's and raised the next
 * program's limit by as much. So the init makes the namespace itself,
 * just before the clone (the child is born in it), holds it by a file
 * descriptor, and once the program is gone enters it and removes every
 * object there (ipc_clear): their memory is freed before the worker reads
 * the cgroup. POSIX message queues go with the namespace, within the
 * uid's RLIMIT_MSGQUEUE (800 KiB).
 */
static int ipc_open_current(const struct init *in)
{
	int fd = openat(in->proc_fd, "thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The one the last RESET made (reset_next_ipc), or a new one. */
static int ipc_enter_new(struct init *in)
{
	int fd = in->next_ipc;

	in->next_ipc = -1;
	if (fd >= 0 && setns(fd, CLONE_NEWIPC) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return unshare(CLONE_NEWIPC) < 0 ? -errno : ipc_open_current(in);
}

/* Back to the init's own, after the clone. */
static int ipc_leave(struct init *in)
{
	return setns(in->ipc_fd, CLONE_NEWIPC) < 0 ? -errno : 0;
}

/* Every object of the IPC namespace the init is in, whoever made it and
 * whatever its mode (the *_STAT_ANY calls check no permission; removing
 * takes the namespace's CAP_SYS_ADMIN, which the init holds). */
static void ipc_remove_all(void)
{
	union {
		struct shm_info shm;
		struct msginfo msg;
		struct seminfo sem;
	} info;
	union {
		struct shmid_ds shm;
		struct msqid_ds msg;
		struct semid_ds sem;
	} ds;
	int max, id;

	max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info.shm);
	for (int i = 0; i <= max; i++)
		if ((id = shmctl(i, SHM_STAT_ANY, &ds.shm)) >= 0)
			shmctl(id, IPC_RMID, NULL);
	max = msgctl(0, MSG_INFO, (struct msqid_ds *)(void *)&info.msg);
	for (int i = 0; i <= max; i++)
		if ((id = msgctl(i, MSG_STAT_ANY, &ds.msg)) >= 0)
			msgctl(id, IPC_RMID, NULL);
	max = semctl(0, 0, SEM_INFO, &info.sem);
	for (int i = 0; i <= max; i++)
		if ((id = semctl(i, 0, SEM_STAT_ANY, &ds.sem)) >= 0)
			semctl(id, 0, IPC_RMID);
}

/* A program that is gone (reaped, and every process of it killed by the
 * worker): its namespace emptied and let go. */
static int ipc_clear(struct init *in, struct child *c)
{
	int rc = 0;

	if (setns(c->ipc, CLONE_NEWIPC) < 0) {
		rc = -errno;
	} else {
		ipc_remove_all();
		rc = ipc_leave(in);
	}
	close(c->ipc);
	c->ipc = -1;
	return rc;
}

/* Every reaped program's namespace that is still held. */
static int ipc_clear_reaped(struct init *in)
{
	int rc = 0;

	for (int i = 0; i < MAX_CHILDREN; i++) {
		int r;

		if (in->kids[i].pid || in->kids[i].ipc < 0)
			continue;
		r = ipc_clear(in, &in->kids[i]);
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

/* A slot whose program was reaped and whose namespace was let go. */
static struct child *free_child_slot(struct init *in)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (!in->kids[i].pid && in->kids[i].ipc < 0)
			return &in->kids[i];
	return NULL;
}

/* A program is gone: what it held of the worker's goes too. */
static void child_gone(struct child *c)
{
	c->pid = 0;
	for (int i = 0; i < 2; i++) {
		if (c->held[i] >= 0)
			close(c->held[i]);
		c->held[i] = -1;
	}
}

/* A program started, in its slot, with the worker's pipes it holds until
 * it is gone (INITMSG_RUN_HOLD_OUTPUT: taken out of fds). */
static void child_started(struct child *c, pid_t pid, uint32_t id, int ipc, uint32_t flags,
			  int *fds)
{
	c->pid = pid;
	c->id = id;
	c->ipc = ipc;
	if (flags & INITMSG_RUN_HOLD_OUTPUT) {
		for (int i = 0; i < 2; i++) {
			c->held[i] = fds[1 + i];
			fds[1 + i] = -1;
		}
	}
}

static void do_run(struct init *in, uint32_t id, size_t len, int *fds, unsigned nfds)
{
	static char *vec[INITMSG_MAX / 2];
	struct init_child_plan p = { 0 };
	struct initmsg_failed f;
	struct child *slot;
	int ep[2] = { -1, -1 }, ipc;
	ssize_t n;
	pid_t pid;
	int rc;

	/* the programs before are gone: the worker killed them first */
	ipc_clear_reaped(in);
	slot = free_child_slot(in);

	/* Nothing runs without the filter (child_install_filter): a RUN that
	 * overtook FILTER is refused, never started unfiltered. */
	if (!in->filter_len) {
		send_failed(in, id, INITMSG_STAGE_PROTOCOL, EPERM);
		goto out;
	}
	rc = init_child_parse(in->buf + sizeof(struct initmsg_hdr), len, &p, vec,
			      sizeof(vec) / sizeof(vec[0]));
	if (rc < 0 || nfds != 3 + p.run->ncgroup || !slot ||
	    ((p.run->flags & INITMSG_RUN_IN_PLACE) && (p.run->ncgroup || !in->entered))) {
		send_failed(in, id, INITMSG_STAGE_PROTOCOL, rc < 0 ? -rc : !slot ? EAGAIN : EBADF);
		goto out;
	}
	memcpy(p.fds, fds, sizeof(int) * nfds);
	p.nfds = nfds;
	if ((p.run->flags & INITMSG_RUN_FRESH_TMP) && (rc = fresh_tmp(in, p.run)) < 0) {
		send_failed(in, id, INITMSG_STAGE_TMP, -rc);
		goto out;
	}
	in->tmp_unused = in->tmp_clean = false;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		send_failed(in, id, INITMSG_STAGE_FORK, errno);
		goto out;
	}
	p.err_w = ep[1];
	p.filter = in->net_filter ? in->net_filter : in->filter;
	p.filter_len = in->net_filter ? in->net_filter_len : in->filter_len;
	ipc = ipc_enter_new(in);
	if (ipc < 0) {
		close(ep[1]);
		send_failed(in, id, INITMSG_STAGE_IPC, -ipc);
		goto out;
	}
	set_oom_score(in, "1000");
	pid = init_child_spawn(&p);
	rc = pid < 0 ? -errno : 0;
	set_oom_score(in, in->oom_was);
	close(ep[1]);
	if (ipc_leave(in) < 0)
		fprintf(stderr, "goboxd-init: back to its IPC namespace: %s\n", strerror(errno));
	if (pid < 0) {
		close(ipc);
		send_failed(in, id, INITMSG_STAGE_FORK, -rc);
		goto out;
	}
	/* The child is reaped by the SIGCHLD handler; remember it first. */
	child_started(slot, pid, id, ipc, p.run->flags, fds);
	do
		n = read(ep[0], &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(f)) {
		/* It will exit 127; its EXITED is not wanted after FAILED. */
		slot->id = UINT32_MAX;
		send_failed(in, id, f.stage, f.err);
	}
out:
	if (ep[0] >= 0)
		close(ep[0]);
	for (unsigned i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A seccomp program from a message's body, into *dst (what was there
 * stays when it cannot be taken): 0 or errno. */
static int take_filter(struct init *in, size_t len, struct sock_filter **dst,
		       unsigned short *dst_len)
{
	size_t k = len / sizeof(struct sock_filter);
	struct sock_filter *f;

	if (len % sizeof(struct sock_filter) || k == 0 || k > INITMSG_MAX_FILTER)
		return EINVAL;
	f = malloc(len);
	if (!f)
		return ENOMEM;
	memcpy(f, in->buf + sizeof(struct initmsg_hdr), len);
	free(*dst);
	*dst = f;
	*dst_len = (unsigned short)k;
	return 0;
}

static void do_filter(struct init *in, size_t len)
{
	int err = take_filter(in, len, &in->filter, &in->filter_len);

	if (err)
		send_failed(in, 0, INITMSG_STAGE_PROTOCOL, err);
}

/*
 * Into the cgroup of the first program, while the jail waits for its job:
 * a cgroup migration may sleep for an RCU grace period, and here nobody is
 * waiting. The program forked next is born in it.
 */
static void do_enter(struct init *in, const int *fds, unsigned nfds)
{
	struct initmsg_failed f = { INITMSG_STAGE_CGROUP, nfds == 0 || in->entered ? EINVAL : 0 };

	for (unsigned i = 0; i < nfds && !f.err; i++) {
		ssize_t n;

		do
			n = write(fds[i], "0", 1);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			f.err = errno;
	}
	/* A network namespace made in the cgroup, as a RESET makes one: the
	 * worker takes what is charged after ENTERED for the init's own
	 * memory, and the one the jail started with is charged elsewhere. */
	if (!f.err)
		f.err = -init_seal_network(in->proc_fd, true);
	if (f.err) {
		send_msg(in, INITMSG_FAILED, 0, &f, sizeof(f));
		return;
	}
	in->entered = true;
	send_msg(in, INITMSG_ENTERED, 0, NULL, 0);
}

/* ---- RESET: the jail made ready for another job ----------------------- */

/*
 * The steps, in reset_steps' order: each returns 0 or -errno, and its
 * comment says why it stands where it does. Together they leave the jail
 * as its start left it, with nothing of the job before reachable: no
 * process, no /tmp, no socket, no network state and no trace in the pid
 * numbers. The IPC namespaces went with each program (child_run) and the
 * job directory is the worker's (jobdir_reset); the seccomp filter of a
 * job without a network and the cgroup the init entered stay, the same
 * for every job, and a network's filter goes with its job (reset_network).
 */

/* First, as everything after assumes it: every process but ourselves
 * killed and reaped. kill(-1) from a namespace's init reaches everything
 * else in it, and every process of the namespace descends from us (no
 * program may setns), so once wait says ECHILD none is left. A process
 * stuck in the kernel keeps this waiting: the worker's time-out then ends
 * the whole jail. */
static int reset_kill_everything(struct init *in)
{
	struct signalfd_siginfo si;

	if (kill(-1, SIGKILL) < 0 && errno != ESRCH)
		return -errno;
	for (;;) {
		if (waitpid(-1, NULL, 0) > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != ECHILD)
			return -errno;
		break;
	}
	for (int i = 0; i < MAX_CHILDREN; i++)
		child_gone(&in->kids[i]);
	while (read(in->sigfd, &si, sizeof(si)) > 0)
		;
	return 0;
}

/* Then the proof from the other side: the init's own /proc (keep_own_proc),
 * which hides no process of the jail's pid namespace, lists it alone. */
static int reset_check_alone(struct init *in)
{
	int fd = openat(in->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (rc == 0 && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end == '\0' && end != de->d_name && pid != getpid())
			rc = -EBUSY;
	}
	closedir(d);
	return rc;
}

/*
 * With a RESET that brings the next job's box: the last program's /tmp
 * moved into a directory the init makes on the last job's disk, so that
 * the box's unmount (reset_new_box) takes both at once. Each unmount
 * waits for a grace period, the kernel's costliest step of a reset on a
 * busy host; this leaves one a job where there were two. Nothing sees it
 * there: no process is left, and the box goes before the next RUN is
 * read. The name may be the job's (EEXIST), the disk full: then not.
 */
static int tmp_into_last_box(struct init *in)
{
	char at[PATH_MAX];
	int n = snprintf(at, sizeof(at), "%s/" LAST_TMP, in->box);

	if (n < 0 || (size_t)n >= sizeof(at))
		return -ENAMETOOLONG;
	if (mkdir(at, 0700) < 0 || move_mount(AT_FDCWD, TMP_DIR, AT_FDCWD, at, 0) < 0)
		return -errno;
	return 0;
}

/* The last program's /tmp goes (its memory with it); the next job's
 * comes at the end of the reset (reset_next_tmp). One that no program ran
 * with since it was mounted stays. It goes with the last box when it can
 * (tmp_into_last_box): its memory is then freed just after RESET_DONE,
 * which the worker's rebase of the cgroup waits for, as for the box's. */
static int reset_drop_tmp(struct init *in)
{
	if (in->tmp_unused || !in->tmp_mounted)
		return 0;
	if (!(in->next_box >= 0 && tmp_into_last_box(in) == 0) &&
	    umount2(TMP_DIR, MNT_DETACH) < 0 && errno != EINVAL)
		return -errno;
	in->tmp_mounted = in->tmp_clean = false;
	return 0;
}

/*
 * CLEAR's: between two programs of one job, a /tmp that the last one
 * neither wrote nor read (tmp_untouched) is as empty and as new as
 * another would be, and stays for the next; any other goes, as at a
 * RESET. That spares most tests of a job an unmount, the grace period it
 * waits for, and a mount. What a kept /tmp does not show is its inode
 * counter, moved by an unnamed file (O_TMPFILE) a program made and let
 * go: a count the job's later tests could read, as they can the job
 * disk's, and never another job's, for a RESET keeps only a /tmp that no
 * program ran with.
 */
static int clear_tmp(struct init *in)
{
	if (in->tmp_mounted && !in->tmp_unused && tmp_untouched(in)) {
		in->tmp_clean = true;
		return 0;
	}
	return reset_drop_tmp(in);
}

/*
 * Last, the next program's /tmp and IPC namespace, made now rather than
 * on its way to the exec: new and empty as the RUN would make them, and
 * charged to the cgroup before the worker sets it back, as the init's
 * own. The /tmp is mounted as the last RUN's; a RUN that asks for
 * another mounts its own. What cannot be made here the RUN makes, as
 * before.
 */
static int reset_next_tmp(struct init *in)
{
	int rc;

	if (in->tmp_mounted || !in->tmp_opts[0])
		return 0;
	rc = mount_tmp(in);
	if (rc < 0)
		fprintf(stderr, "goboxd-init: reset: the next /tmp: %s\n", strerror(-rc));
	else
		in->tmp_unused = true;
	return 0;
}

static int reset_next_ipc(struct init *in)
{
	int fd, rc;

	if (in->next_ipc >= 0)
		return 0;
	if (unshare(CLONE_NEWIPC) < 0) {
		fprintf(stderr, "goboxd-init: reset: the next IPC namespace: %s\n",
			strerror(errno));
		return 0;
	}
	fd = ipc_open_current(in);
	rc = ipc_leave(in);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	in->next_ipc = fd < 0 ? -1 : fd;
	return 0;
}

/*
 * Right after RESET_DONE, before the next message is read: the next
 * job's box, a new disk's (the worker's disk keeper made it,
 * worker/sandbox/disks.h), in place of the last one's, which goes whole
 * with its inode numbers and free space, and the last /tmp with it when
 * it was moved there (tmp_into_last_box). After the answer, because the
 * unmount waits for an RCU grace period, which the worker need not wait
 * for: it writes the next job's files through its own view of the new
 * disk, and no program starts before this is done. Our own working
 * directory is the box (the driver's --chdir): it moves to / first, or
 * the old disk would stay alive.
 */
static int reset_new_box(struct init *in)
{
	int rc = 0;

	if (in->next_box < 0)
		return 0;
	if (chdir("/") < 0 || umount2(in->box, MNT_DETACH) < 0 ||
	    move_mount(in->next_box, "", AT_FDCWD, in->box, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		rc = -errno;
	close(in->next_box);
	in->next_box = -1;
	return rc;
}

/*
 * The network namespace: kept for the next job, or a new one, checked
 * empty like the first (empty_network).
 *
 * Kept when the job had no network and no socket is left in it. Such a
 * job's programs could make no internet socket (their filter refuses
 * AF_INET and AF_INET6, policy.h), so they touched none of the state the
 * internet protocols keep per namespace (counters, flow labels, ports);
 * what else they may make there, unix and netlink sockets, lives only as
 * long as the socket, and a netlink socket of a process without
 * capabilities changes nothing. Every process is gone by now
 * (reset_kill_everything): a socket still counted is one held alive by a
 * file descriptor in flight (a unix socket passed over itself, until the
 * kernel collects it) or one whose freeing waits for a grace period, and
 * then the namespace goes with it, out of every later program's reach.
 *
 * A new one after a job with a network: its programs had internet sockets
 * and the network's stack had an interface there.
 */
static int reset_network(struct init *in)
{
	bool had_network = in->net_filter != NULL;
	long used;

	free(in->net_filter);
	in->net_filter = NULL;
	in->net_filter_len = 0;
	if (!had_network) {
		used = init_seal_network_sockets(in->proc_fd);
		if (used == 0)
			return 0;
		if (used < 0)
			return (int)used;
	}
	return init_seal_network(in->proc_fd, true);
}

/* With nothing running: the next process gets pid 2 again, so that no
 * program can count the processes of the job before from its own pid.
 * ns_last_pid is writable by the namespace's CAP_SYS_ADMIN, through the
 * init's own /proc (the programs' is read-only). */
static int reset_pid_counter(struct init *in)
{
	int fd = openat(in->proc_fd, "sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	do
		n = write(fd, "1", 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_own_state(struct own_state *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (getrlimit(i, &st->limit[i]) < 0)
			return -errno;
	errno = 0;
	st->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		return -errno;
	/* ioprio_get(IOPRIO_WHO_PROCESS, 0) */
	st->ioprio = syscall(SYS_ioprio_get, 1, 0);
	if (st->ioprio < 0)
		return -errno;
	st->policy = sched_getscheduler(0);
	if (st->policy < 0 || sched_getparam(0, &st->param) < 0 ||
	    sched_getaffinity(0, sizeof(st->cpus), &st->cpus) < 0)
		return -errno;
	return 0;
}

/* Last: what the next job's programs inherit is what the first job's
 * did. No program can change it (policy_init_guards); were one to find a
 * way, the jail ends here instead of passing it on. */
static int reset_check_own_state(struct init *in)
{
	struct own_state now;
	int rc = read_own_state(&now);

	if (rc < 0)
		return rc;
	if (memcmp(now.limit, in->own.limit, sizeof(now.limit)) != 0 || now.nice != in->own.nice ||
	    now.ioprio != in->own.ioprio || now.policy != in->own.policy ||
	    now.param.sched_priority != in->own.param.sched_priority ||
	    !CPU_EQUAL(&now.cpus, &in->own.cpus))
		return -ESTALE;
	return 0;
}

static const struct reset_step {
	const char *what;
	int (*run)(struct init *in);
} reset_steps[] = {
	{ "killing every process", reset_kill_everything },
	{ "checking that none is left", reset_check_alone },
	{ "unmounting /tmp", reset_drop_tmp },
	{ "removing the IPC objects", ipc_clear_reaped },
	{ "the network namespace", reset_network },
	{ "resetting the pid counter", reset_pid_counter },
	{ "checking what the programs inherit", reset_check_own_state },
	{ "the next program's /tmp", reset_next_tmp },
	{ "the next program's IPC namespace", reset_next_ipc },
};

/* The first step that fails names itself on the jail's stderr (the worker
 * reports it) and ends the reset: the worker then ends the jail. A RESET
 * with one fd carries the next job's box, and the path to mount it at as
 * its body. */
static void do_reset(struct init *in, size_t len, const int *fds, unsigned nfds)
{
	const char *path = in->buf + sizeof(struct initmsg_hdr);
	int rc = 0;

	if (nfds > 1 || (nfds == 1 && (len < 2 || path[0] != '/' || path[len - 1] != '\0')) ||
	    (nfds == 0 && len != 0)) {
		send_failed(in, 0, INITMSG_STAGE_PROTOCOL, EBADMSG);
		return;
	}
	if (nfds == 1) {
		in->next_box = fcntl(fds[0], F_DUPFD_CLOEXEC, 0);
		if (in->next_box < 0) {
			send_failed(in, 0, INITMSG_STAGE_RESET, errno);
			return;
		}
		in->box = path;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(reset_steps) / sizeof(reset_steps[0]); i++) {
		rc = reset_steps[i].run(in);
		if (rc < 0) {
			fprintf(stderr, "goboxd-init: reset: %s: %s\n", reset_steps[i].what,
				strerror(-rc));
			send_failed(in, 0, INITMSG_STAGE_RESET, -rc);
		}
	}
	if (rc == 0)
		send_msg(in, INITMSG_RESET_DONE, 0, NULL, 0);
	if (rc == 0 && (rc = reset_new_box(in)) < 0) {
		/* No program may run in the last job's box: the jail ends,
		 * and the worker, finding it gone, starts another. */
		fprintf(stderr, "goboxd-init: reset: mounting the new job directory: %s\n",
			strerror(-rc));
		exit(1);
	}
	if (in->next_box >= 0) { /* a step before reset_new_box failed */
		close(in->next_box);
		in->next_box = -1;
	}
}

/*
 * CLEAR: between two programs that share the init's cgroup, the last
 * one's /tmp and IPC objects go now rather than at the next RUN, so that
 * their pages are uncharged before the worker sets the cgroup's counters
 * back (they would pass for the init's memory). The worker emptied the
 * cgroup first, so nothing holds the tmpfs and it goes with the unmount.
 */
static void do_clear(struct init *in)
{
	int rc = clear_tmp(in);

	if (rc < 0) {
		send_failed(in, 0, INITMSG_STAGE_TMP, -rc);
		return;
	}
	if ((rc = ipc_clear_reaped(in)) < 0) {
		send_failed(in, 0, INITMSG_STAGE_IPC, -rc);
		return;
	}
	send_msg(in, INITMSG_CLEARED, 0, NULL, 0);
}

/* NETWORK: the namespaces a job's network is started in (network.h),
 * and the filter for the job's programs from now on, which lets internet
 * sockets through. The filter is taken first, and no namespace goes out
 * without it: it is what tells the RESET that a network may have
 * started there. */
static void do_network(struct init *in, size_t len)
{
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_NETWORK_NS, 0, 0 };
	int rc = take_filter(in, len, &in->net_filter, &in->net_filter_len);

	if (rc) {
		send_failed(in, 0, INITMSG_STAGE_PROTOCOL, rc);
		return;
	}
	rc = init_seal_send_namespaces(in->sock, &h, sizeof(h));
	if (rc < 0)
		send_failed(in, 0, INITMSG_STAGE_NETWORK, -rc);
}

/* ---- the loop --------------------------------------------------------- */

/* What the worker cannot see from outside: the program's /tmp is in
 * this jail's mount namespace. */
static uint32_t exit_flags(const struct init *in)
{
	struct statvfs sv;

	if (in->tmp_mounted && statvfs(TMP_DIR, &sv) == 0 && initmsg_fs_full(&sv))
		return INITMSG_EXITED_TMP_FULL;
	return 0;
}

static void reap(struct init *in)
{
	struct signalfd_siginfo si;
	struct rusage ru;
	int status;
	pid_t pid;

	while (read(in->sigfd, &si, sizeof(si)) > 0)
		;
	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		for (int i = 0; i < MAX_CHILDREN; i++) {
			struct initmsg_exited e = { status, 0, (uint64_t)ru.ru_maxrss };

			if (in->kids[i].pid != pid)
				continue;
			if (in->kids[i].id != UINT32_MAX) {
				e.flags = exit_flags(in);
				send_msg(in, INITMSG_EXITED, in->kids[i].id, &e, sizeof(e));
			}
			child_gone(&in->kids[i]);
		}
	}
}

/* 0 to go on, 1 when the worker is gone. */
static int handle_packet(struct init *in)
{
	int fds[INITMSG_MAX_FDS];
	unsigned nfds;
	ssize_t n = recv_msg(in, fds, &nfds);
	struct initmsg_hdr h;

	if (n == 0 || (n < 0 && n != -EMSGSIZE))
		return 1;
	if (n < (ssize_t)sizeof(h)) {
		send_failed(in, 0, INITMSG_STAGE_PROTOCOL, EMSGSIZE);
		goto drop;
	}
	memcpy(&h, in->buf, sizeof(h));
	if (h.magic != INITMSG_MAGIC || h.len != (size_t)n - sizeof(h)) {
		send_failed(in, h.id, INITMSG_STAGE_PROTOCOL, EBADMSG);
		goto drop;
	}
	if (h.type == INITMSG_RUN) {
		do_run(in, h.id, h.len, fds, nfds);
		return 0;
	}
	if (h.type == INITMSG_FILTER)
		do_filter(in, h.len);
	else if (h.type == INITMSG_ENTER)
		do_enter(in, fds, nfds);
	else if (h.type == INITMSG_RESET)
		do_reset(in, h.len, fds, nfds);
	else if (h.type == INITMSG_CLEAR && nfds == 0)
		do_clear(in);
	else if (h.type == INITMSG_NETWORK && nfds == 0)
		do_network(in, h.len);
	else
		send_failed(in, h.id, INITMSG_STAGE_PROTOCOL, EBADMSG);
drop:
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	return 0;
}

/*
 * The jail as the programs will see it (init_seal_mounts). Before the
 * hello, as no program runs before the worker hears it; it reads the
 * mount table as the driver left it.
 */
static int seal(struct init *in)
{
	return init_seal_mounts(in->self);
}

/* After seal, as a remount of the superblock: the programs' /proc hides
 * the init (init_seal_proc). */
static int hide_the_init(struct init *in)
{
	(void)in;
	return init_seal_proc();
}

/* The programs' network, with no working interface (init_seal_network):
 * under bwrap the init makes it itself (INITMSG_ARG_NEW_NETWORK). Before
 * the hello, like seal: a jail whose namespace is not empty never runs a
 * program. */
static int empty_network(struct init *in)
{
	return init_seal_network(in->proc_fd, in->new_network);
}

/*
 * First: before hide_from_programs, as the /proc files of a process that
 * is not dumpable belong to root, whom the jail's user namespace does not
 * map; and before seal, while /tmp is the jail's unused placeholder. A
 * /proc of the init's own, mounted there, held by a file descriptor and
 * detached at once (a proc mount is an instance of its own, with its own
 * options): it shows every process of the jail, where the programs' hides
 * the init and any program that is not dumpable (hide_the_init), and is
 * writable, where theirs is read-only. Through it, the init's own
 * oom_score_adj: the init waits in the cgroup of the programs it starts,
 * and when one of them fills it, the kernel's OOM killer takes the
 * largest process there and then the next while the cgroup is still over
 * its limit: the init's size is a small program's. So every program
 * starts at oom_score_adj 1000 (do_run: set before the clone, which
 * copies it, and set back after), and is taken before the init.
 */
static int keep_own_proc(struct init *in)
{
	ssize_t n;
	int rc = 0;

	if (mount("proc", TMP_DIR, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	in->proc_fd = open(TMP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (in->proc_fd < 0)
		rc = -errno;
	if (umount2(TMP_DIR, MNT_DETACH) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		return rc;
	in->oom_fd = openat(in->proc_fd, "self/oom_score_adj", O_RDWR | O_CLOEXEC);
	if (in->oom_fd < 0)
		return -errno;
	n = pread(in->oom_fd, in->oom_was, sizeof(in->oom_was) - 1, 0);
	if (n <= 0)
		return n == 0 ? -ENODATA : -errno;
	in->oom_was[n] = '\0';
	return 0;
}

/* With its own /proc: its IPC namespace, to come back to after making each
 * program's (ipc_enter_new). */
static int keep_own_ipc(struct init *in)
{
	in->ipc_fd = ipc_open_current(in);
	return in->ipc_fd < 0 ? in->ipc_fd : 0;
}

/* Then: nothing of ours is for the programs to read, not even by uid
 * (/proc/1/mem, our fds, our environment), whatever comes next. */
static int hide_from_programs(struct init *in)
{
	(void)in;
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ? -errno : 0;
}

/* Before the first clone, which comes with the first RUN after the hello:
 * SIGCHLD is blocked and read from a signalfd, so no exit is missed. */
static int watch_children(struct init *in)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
		return -errno;
	in->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	return in->sigfd < 0 ? -errno : 0;
}

/* Before the hello, after every step that could change it: what each
 * program inherits of the init, for reset_check_own_state. */
static int note_own_state(struct init *in)
{
	return read_own_state(&in->own);
}

/* Before the first clone too: the driver hands the socket over open across
 * exec, and no program may inherit it. */
static int close_socket_on_exec(struct init *in)
{
	return fcntl(in->sock, F_SETFD, FD_CLOEXEC) < 0 ? -errno : 0;
}

/* Last: the worker takes the hello for "ready" and its packets follow, so
 * the buffer they arrive in comes first. */
static int say_hello(struct init *in)
{
	struct initmsg_hello hello = { INITMSG_VERSION, getpid() };

	in->buf = malloc(INITMSG_MAX);
	if (!in->buf)
		return -ENOMEM;
	return send_msg(in, INITMSG_HELLO, 0, &hello, sizeof(hello));
}

/* The init's own start-up, in the order the jail needs it (each step says
 * why); the first that fails says so on the jail's stderr, which the
 * worker reports when the hello does not come. */
static const struct start_step {
	const char *what;
	int (*run)(struct init *in);
} start_steps[] = {
	{ "keeping a /proc of its own", keep_own_proc },
	{ "keeping its IPC namespace", keep_own_ipc },
	{ "hiding from the programs", hide_from_programs },
	{ "sealing the jail", seal },
	{ "hiding itself from the programs' /proc", hide_the_init },
	{ "leaving the jail's network", empty_network },
	{ "watching for children", watch_children },
	{ "closing the socket on exec", close_socket_on_exec },
	{ "noting what the programs inherit", note_own_state },
	{ "saying hello", say_hello },
};

/* Until the worker closes its end. */
static void serve_worker(struct init *in)
{
	for (;;) {
		struct pollfd pf[2] = { { in->sock, POLLIN, 0 }, { in->sigfd, POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (pf[1].revents)
			reap(in);
		if (pf[0].revents && handle_packet(in))
			return;
	}
}

int main(int argc, char **argv)
{
	struct init in = {
		.sock = INITMSG_FD,
		.sigfd = -1,
		.self = argc > 0 ? argv[0] : NULL,
		.new_network = argc > 1 && strcmp(argv[1], INITMSG_ARG_NEW_NETWORK) == 0,
		.proc_fd = -1,
		.ipc_fd = -1,
		.next_ipc = -1,
		.next_box = -1,
		.oom_fd = -1,
	};

	for (int i = 0; i < MAX_CHILDREN; i++)
		in.kids[i] = (struct child){ .ipc = -1, .held = { -1, -1 } };
	for (size_t i = 0; i < sizeof(start_steps) / sizeof(start_steps[0]); i++) {
		int rc = start_steps[i].run(&in);

		if (rc < 0) {
			fprintf(stderr, "goboxd-init: %s: %s\n", start_steps[i].what, strerror(-rc));
			free(in.buf);
			return 111;
		}
	}
	serve_worker(&in);
	/* The worker is done with this jail: nothing may outlive it. */
	kill(-1, SIGKILL);
	free(in.buf);
	free(in.filter);
	return 0;
}
