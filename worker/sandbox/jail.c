#include "autoconf.h"

#include "worker/sandbox/jail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "common/lang/jailpath.h"
#include "common/log.h"
#include "common/util.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/disks.h"
#include "worker/sandbox/jail_state.h"

/* The launcher (bwrap's monitor or nsjail) and the init. */
#define JAIL_CGROUP_PIDS 16
#define JAIL_CGROUP_MEMORY (64ULL << 20)
#define JAIL_LOG_MAX 4096
/* How long the init may take to answer RESET or CLEAR (ask_init). The
 * reset waits for the job's processes to die: SIGKILL takes them at once
 * unless one is stuck in the kernel, and then the jail goes. */
#define JAIL_ASK_TIMEOUT_MS 2000

const char *jail_box_dir(const struct jail *j)
{
	return j->box;
}

struct jobdir *jail_jobdir(struct jail *j)
{
	return j->own_dir ? &j->dir : NULL;
}

struct jobdir *jail_control_dir(struct jail *j)
{
	return j->ctl.fd >= 0 ? &j->ctl : NULL;
}

uid_t jail_uid(const struct jail *j)
{
	return j->uid;
}

gid_t jail_gid(const struct jail *j)
{
	return j->gid;
}

const struct jail_shared *jail_shared_of(const struct jail *j)
{
	return j->shared;
}

int jail_sock(const struct jail *j)
{
	return j->sock;
}

uint32_t jail_next_id(struct jail *j)
{
	return ++j->next_id;
}

void jail_break(struct jail *j)
{
	j->broken = true;
}

bool jail_broken(const struct jail *j)
{
	return j->broken;
}

/* ---- the launcher: from fork to the jail binary's exec ------------------ */

/* What the worker's jail start hands its pre-exec child, and releases. */
struct launch {
	struct jail *j;
	const struct jail_opts *o;
	char **argv;
	int sock_child, log_w, exec_w;
	pid_t parent;
};

/*
 * The pre-exec child's steps, async-signal-safe calls only (the worker has
 * threads). Each returns 0 or -errno and its comment says why it stands
 * where it does; launch_steps lists them in that order.
 */

/* First, with every signal still blocked from the fork: out of the
 * worker's session and process group, so that what is sent to those
 * never reaches the jail. */
static int launch_new_session(struct launch *l)
{
	(void)l;
	return setsid() < 0 ? -errno : 0;
}

/*
 * Then the worker's handlers and its mask must not reach the jail binary.
 * What was sent to the worker's group before the setsid (a ^C in the
 * terminal, to every process of goboxd at once) waits here, blocked:
 * taken off before anything is unblocked, or a launcher born in that
 * instant would die of it and its jail never start.
 */
static int launch_reset_signals(struct launch *l)
{
	const struct timespec now = { 0, 0 };
	struct sigaction sa;
	sigset_t all, none;

	(void)l;
	sigfillset(&all);
	while (sigtimedwait(&all, NULL, &now) > 0)
		;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);      /* SIGKILL, SIGSTOP: EINVAL, and default */
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL) < 0 ? -errno : 0;
}

/* Before the jail binary exists, so that it and its init are born counted
 * in the jail's cgroup; before the uid change, as it opens cgroup.procs by
 * path, which the sandbox uid may not write. */
static int launch_join_cgroup(struct launch *l)
{
	return cgroup_step_enter(l->j->cg) < 0 ? -EIO : 0;
}

/* Before the uid change, so that no fd of the worker is ever open in a
 * process of the sandbox uid: 0: /dev/null; 1, 2: the log; 3: the init's
 * socket; 4: the error pipe; everything else closed. */
static int launch_place_fds(struct launch *l)
{
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fds[5] = { nul, l->log_w, l->log_w, l->sock_child, l->exec_w };
	int rc;

	if (nul < 0)
		return -errno;
	rc = initmsg_place_fds(fds, 5, 4);
	l->exec_w = fds[4];
	return rc;
}

/* The groups and the gid before the uid, whose change drops the
 * privilege they need; then the proof that root cannot come back. */
int jail_child_drop_ids(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (setuid(0) == 0 || setgid(0) == 0)
		return -EPERM;
	return 0;
}

/* After the uid change, which clears it; bound to the forking thread,
 * which is the worker's job thread for as long as the worker lives. A
 * worker already gone before it was set has nobody to tell. */
int jail_child_die_with(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -errno;
	if (getppid() != parent)
		_exit(127);
	return 0;
}

static int launch_drop_to_sandbox_ids(struct launch *l)
{
	return jail_child_drop_ids(l->j->uid, l->j->gid);
}

static int launch_die_with_worker(struct launch *l)
{
	return jail_child_die_with(l->parent);
}

/* Before the filter: without CAP_SYS_ADMIN (gone with the uid change) the
 * kernel installs a seccomp filter only under no_new_privs. */
static int launch_no_new_privs(struct launch *l)
{
	(void)l;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* Last before exec: the baseline filter holds for the jail binary and for
 * everything under it, the init and its programs included. */
static int launch_install_baseline(struct launch *l)
{
	return seccomp_set_apply_baseline(l->j->shared->seccomp);
}

/* Returns only when the exec failed. */
static int launch_exec(struct launch *l)
{
	static char *const no_env[] = { NULL };

	execve(l->j->shared->path, l->argv, no_env);
	return -errno;
}

/* From fork to the jail binary, in the order the kernel needs (each step
 * says why). */
static const struct launch_step {
	const char *name;       /* for the worker's message when it fails */
	int (*run)(struct launch *l);
} launch_steps[] = {
	{ "setsid", launch_new_session },
	{ "signals", launch_reset_signals },
	{ "cgroup enter", launch_join_cgroup },
	{ "fds", launch_place_fds },
	{ "setuid", launch_drop_to_sandbox_ids },
	{ "pdeathsig", launch_die_with_worker },
	{ "no_new_privs", launch_no_new_privs },
	{ "seccomp", launch_install_baseline },
	{ "execve", launch_exec },
};

const char *jail_launch_step(int i)
{
	return i >= 0 && i < (int)ARRAY_SIZE(launch_steps) ? launch_steps[i].name : "?";
}

/* The first step that fails writes errno and its index into the error
 * pipe (wherever launch_place_fds left it); launched reads them. */
static void __attribute__((noreturn)) launch_child(struct launch *l)
{
	for (size_t i = 0; i < ARRAY_SIZE(launch_steps); i++) {
		int rc = launch_steps[i].run(l);

		if (rc < 0) {
			int e[2] = { -rc, (int)i };

			(void)!write(l->exec_w, e, sizeof(e));
			break;
		}
	}
	_exit(127);
}

/* ---- starting: the worker's side --------------------------------------- */

/*
 * Each step returns 0 or -errno with a reason in err, and its comment
 * says why it stands where it does; setup_steps lists them in that order.
 */

/* A disk's name in the jail dir, for the keeper: its directory's last
 * component. */
static const char *disk_name(const struct jobdir *disk)
{
	const char *slash = strrchr(disk->path, '/');

	return slash ? slash + 1 : disk->path;
}

/* The job directory: the box of the disk just mounted. */
static int adopt_box(struct jail *j)
{
	char path[sizeof(j->disk.path) + sizeof(DISKS_BOX) + 1];
	int rc;

	snprintf(path, sizeof(path), "%s/" DISKS_BOX, j->disk.path);
	rc = jobdir_adopt(path, j->uid, j->gid, &j->dir);
	if (rc == 0)
		snprintf(j->box, sizeof(j->box), "%s", j->dir.path);
	return rc;
}

/* First: a jail as root would run its programs as root. */
static int choose_ids(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;

	j->uid = l->o->uid ? l->o->uid : j->shared->uid;
	j->gid = l->o->gid ? l->o->gid : j->shared->gid;
	if (j->uid == 0 || j->gid == 0) {
		snprintf(err, errlen, "a jail's uid/gid must not be root");
		return -EINVAL;
	}
	return 0;
}

/* The job directory at the box of a disk of the jail's own, which
 * new_disk replaces for every later job. */
static int make_disk(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;
	const char *what = "creating its directory";
	int rc = jobdir_create(j->shared->jail_dir, 0, 0, &j->disk);

	if (rc == 0) {
		j->own_disk = true;
		what = "mounting it";
		rc = disks_fresh(j->shared->disks, disk_name(&j->disk), NULL, NULL);
	}
	if (rc == 0) {
		what = "its box";
		rc = adopt_box(j);
	}
	if (rc < 0) {
		snprintf(err, errlen, "a jail's disk in %s: %s: %s", j->shared->jail_dir, what,
			 strerror(-rc));
		return rc;
	}
	j->own_dir = true;
	return 0;
}

/* Before the command line, which binds the box; the job directory is
 * owned by the ids just chosen. */
static int make_box(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;
	const char *box_dir = l->o->box_dir;
	int rc;

	if (box_dir) {
		if (box_dir[0] != '/') {
			snprintf(err, errlen, "box directory must be an absolute path");
			return -EINVAL;
		}
		snprintf(j->box, sizeof(j->box), "%s", box_dir);
		return 0;
	}
	if (j->shared->disks)
		return make_disk(l, err, errlen);
	rc = jobdir_create(j->shared->jail_dir, j->uid, j->gid, &j->dir);
	if (rc < 0) {
		snprintf(err, errlen, "creating a job directory in %s: %s", j->shared->jail_dir,
			 strerror(-rc));
		return rc;
	}
	j->own_dir = true;
	snprintf(j->box, sizeof(j->box), "%s", j->dir.path);
	return 0;
}

/*
 * Before the command line, which binds it read-only, when the options ask
 * for one. Root's, so that nothing in the jail can replace what the worker
 * opens there by name; readable and searchable by the jail's group only.
 */
static int make_control_dir(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;
	int rc;

	if (!l->o->control_dir)
		return 0;
	rc = jobdir_create(j->shared->jail_dir, 0, j->gid, &j->ctl);
	if (rc < 0) {
		j->ctl.fd = -1;
		snprintf(err, errlen, "creating a control directory in %s: %s", j->shared->jail_dir,
			 strerror(-rc));
	}
	return rc;
}

/* Before the fork: the child joins it before it execs the jail binary. */
static int make_cgroup(struct launch *l, char *err, size_t errlen)
{
	struct cgroup_limits cl = { .memory_bytes = JAIL_CGROUP_MEMORY, .pids = JAIL_CGROUP_PIDS };
	char cgerr[256];
	int rc = cgroup_step_create(l->j->shared->cgroups, &cl, &l->j->cg, cgerr, sizeof(cgerr));

	if (rc < 0)
		snprintf(err, errlen, "jail cgroup: %s", cgerr);
	return rc;
}

/* After the box and the control directory, which it names; before the
 * fork, as the child may not allocate. */
static int build_command(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;
	struct jail_env env = {
		.path = j->shared->path,
		.init_path = j->shared->init_path,
		.uid = j->uid,
		.gid = j->gid,
		.mounts = j->shared->mounts,
		.nmounts = j->shared->nmounts,
		.ro_mounts = (const char *const *)j->shared->ro_mounts,
		.box_dir = j->box,
		.control_dir = j->ctl.fd >= 0 ? j->ctl.path : NULL,
	};

	return j->shared->driver->build_argv(&env, &l->argv, err, errlen);
}

/* Before the fork: the child hands its end to the init at INITMSG_FD. */
static int make_socket(struct launch *l, char *err, size_t errlen)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -errno;
	}
	l->j->sock = sv[0];
	l->sock_child = sv[1];
	return 0;
}

/* Before the fork too: the jail binary's log, and the pipe that stays
 * silent unless the child fails before its exec. */
static int make_pipes(struct launch *l, char *err, size_t errlen)
{
	int lp[2], ep[2];

	if (pipe2(lp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe2: %s", strerror(errno));
		return -errno;
	}
	l->j->log_r = lp[0];
	l->log_w = lp[1];
	set_nonblock(l->j->log_r, true);
	if (pipe2(ep, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe2: %s", strerror(errno));
		return -errno;
	}
	l->j->exec_r = ep[0];
	l->exec_w = ep[1];
	return 0;
}

/* When everything the child needs exists, with every signal blocked so
 * that no handler of the worker runs in it before it resets them. Whether
 * the exec worked is read by jail_ready: the launcher's cgroup attach can
 * sleep (cgroup v1), and nobody waits for it here. */
static int fork_launcher(struct launch *l, char *err, size_t errlen)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	l->j->pid = fork();
	if (l->j->pid == 0)
		launch_child(l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (l->j->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Right after the fork, so that it waits on the socket when the init
 * starts reading: a cgroup for the jail's first program, and ENTER. The
 * init moves into it as soon as it runs, so the first program (a one-test
 * job's only one) is born there instead of migrating on the request's
 * path. Best effort: a jail without it runs every program the ordinary
 * way.
 */
static int queue_enter(struct launch *l, char *err, size_t errlen)
{
	struct jail *j = l->j;
	struct cgroup_limits none = { 0 };
	char cgerr[256];
	int fds[INITMSG_MAX_FDS - 3];
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_ENTER, 0, 0 };
	struct iovec iov = { &h, sizeof(h) };
	int n;

	(void)err;
	(void)errlen;
	if (cgroup_step_create(j->shared->cgroups, &none, &j->first, cgerr, sizeof(cgerr)) < 0) {
		log_warn("a jail's first cgroup: %s", cgerr);
		j->first = NULL;
		return 0;
	}
	n = cgroup_step_open_procs(j->first, fds, ARRAY_SIZE(fds));
	if (n <= 0) {
		cgroup_step_destroy(j->first);
		j->first = NULL;
		return 0;
	}
	j->first_sent = send_fds(j->sock, &iov, 1, fds, (size_t)n) >= 0;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

/* A jail's start, in order (each step says why); the jail binary is
 * running after the last, and jail_ready waits for it. */
static int (*const setup_steps[])(struct launch *l, char *err, size_t errlen) = {
	choose_ids,
	make_box,
	make_control_dir,
	make_cgroup,
	build_command,
	make_socket,
	make_pipes,
	fork_launcher,
	queue_enter,
};

/* The launch's own: the child's ends of the socket and pipes, the argv. */
static void launch_release(struct launch *l)
{
	if (l->sock_child >= 0)
		close(l->sock_child);
	if (l->log_w >= 0)
		close(l->log_w);
	if (l->exec_w >= 0)
		close(l->exec_w);
	strv_free(l->argv);
}

int jail_start_with(const struct jail_shared *shared, const struct jail_opts *o,
		    struct jail **out, char *err, size_t errlen)
{
	struct jail *j = xcalloc(1, sizeof(*j));
	struct launch l = { .j = j, .o = o, .sock_child = -1, .log_w = -1, .exec_w = -1,
			    .parent = getpid() };
	int rc = 0;

	j->shared = shared;
	j->pid = -1;
	j->sock = j->log_r = j->exec_r = -1;
	j->dir.fd = j->dir.base_fd = -1;
	j->disk.fd = j->disk.base_fd = -1;
	j->next_box = -1;
	j->ctl.fd = -1;
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(setup_steps); i++)
		rc = setup_steps[i](&l, err, errlen);
	launch_release(&l);
	if (rc < 0) {
		jail_destroy(j);
		return rc;
	}
	*out = j;
	return 0;
}

int jail_start(const struct jail_shared *shared, const char *box_dir, struct jail **out,
	       char *err, size_t errlen)
{
	struct jail_opts o = { .box_dir = box_dir };

	return jail_start_with(shared, &o, out, err, errlen);
}

/* ---- what the jail binary said ------------------------------------------ */

void jail_said(struct jail *j, char *out, size_t outlen)
{
	char buf[JAIL_LOG_MAX];
	ssize_t n = j->log_r >= 0 ? read(j->log_r, buf, sizeof(buf) - 1) : -1;
	const char *p = buf, *line = NULL;

	out[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* nsjail prefixes its own messages: "[E]", "[F]" are the ones that
	 * explain a failure. */
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "[E]", 3) == 0 || strncmp(p, "[F]", 3) == 0) {
			line = p;
			break;
		}
		if (!line && *p != '\n')
			line = p;
	}
	if (line)
		snprintf(out, outlen, "%.*s", (int)strcspn(line, "\n"), line);
}

/* ---- the next job ------------------------------------------------------ */

/*
 * The steps of jail_recycle: each returns 0 or -errno with a reason in
 * err, and its comment says why it stands where it does; recycle_steps
 * lists them in that order.
 */

/* First: only a jail that works, made for jobs (its own job directory, no
 * judge's control directory), whose first program is born where its init
 * waits, and that has not served its share. */
static int may_serve_again(struct jail *j, char *err, size_t errlen)
{
	if (j->broken || !j->ready || !j->own_dir || j->ctl.fd >= 0 || !j->first_ready) {
		snprintf(err, errlen, "the jail is not one that serves jobs");
		return -EINVAL;
	}
	if (++j->jobs >= j->shared->jobs_per_jail) {
		snprintf(err, errlen, "the jail has served %u jobs", j->jobs);
		return -EDQUOT;
	}
	return 0;
}

/* What a request to the init may carry: a body and one fd; and the fds
 * its answer brings, when it brings any (ngot of them into got). */
struct init_arg {
	const void *body;
	size_t len;
	int fd;
	int *got;
	size_t ngot;
};

/* The fds an answer brought: those the request awaits, or closed. */
static int take_fds(const struct init_arg *arg, int *fds, size_t n)
{
	size_t want = arg ? arg->ngot : 0;

	if (n == want && want > 0) {
		memcpy(arg->got, fds, n * sizeof(int));
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return n == want ? 0 : -EPROTO;
}

/*
 * One request to the init and its answer with id 0: done, or FAILED (its
 * reason, what the init said, in err). An answer about a program that
 * ended (its EXITED after the worker stopped waiting for it) is passed
 * over.
 */
static int ask_init(struct jail *j, uint32_t type, uint32_t done, const char *what,
		    const struct init_arg *arg, char *err, size_t errlen)
{
	struct initmsg_hdr h = { INITMSG_MAGIC, type, 0, arg ? (uint32_t)arg->len : 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { arg ? (void *)arg->body : NULL,
						    arg ? arg->len : 0 } };
	struct {
		struct initmsg_hdr h;
		char body[64];
	} m;
	struct pollfd pf = { .fd = j->sock, .events = POLLIN };
	uint64_t deadline = now_ms() + JAIL_ASK_TIMEOUT_MS;
	int fds[2];
	size_t nfds;
	char said[256];
	ssize_t sent = send_fds(j->sock, iov, ARRAY_SIZE(iov), arg ? &arg->fd : NULL,
				arg && arg->fd >= 0 ? 1 : 0);

	if (sent < 0) {
		snprintf(err, errlen, "sending %s to the init: %s", what, strerror((int)-sent));
		return (int)sent;
	}
	for (;;) {
		uint64_t now = now_ms();
		int rc = now < deadline ? poll(&pf, 1, (int)(deadline - now)) : 0;
		ssize_t n;

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0) {
			snprintf(err, errlen, "the init did not answer %s within %d ms", what,
				 JAIL_ASK_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		n = recv_fds(j->sock, &m, sizeof(m), fds, ARRAY_SIZE(fds), &nfds, MSG_DONTWAIT);
		if (n < (ssize_t)sizeof(m.h) || m.h.magic != INITMSG_MAGIC) {
			take_fds(NULL, fds, nfds);
			snprintf(err, errlen, "the init's answer to %s: %s", what,
				 n == 0 ? "it is gone" : strerror(EPROTO));
			return -EPROTO;
		}
		if (m.h.id != 0 || m.h.type != done) {
			take_fds(NULL, fds, nfds);
			if (m.h.id != 0)
				continue;
		} else if (take_fds(arg, fds, nfds) < 0) {
			snprintf(err, errlen, "the init's answer to %s: %s", what, strerror(EPROTO));
			return -EPROTO;
		} else {
			return 0;
		}
		jail_said(j, said, sizeof(said));
		snprintf(err, errlen, "the init could not do %s: %s", what,
			 said[0] ? said : "no reason given");
		return -EIO;
	}
}

int jail_namespaces(struct jail *j, int fds[2], char *err, size_t errlen)
{
	struct init_arg arg = { .fd = -1, .got = fds, .ngot = 2 };

	arg.body = seccomp_set_bpf(j->shared->seccomp, true, &arg.len);
	return ask_init(j, INITMSG_NETWORK, INITMSG_NETWORK_NS, "NETWORK", &arg, err, errlen);
}

pid_t jail_init_pid(const struct jail *j)
{
	/* the one process the first cgroup spares (jail_ready) */
	return j->first_ready ? cgroup_step_spared(j->first) : 0;
}

/*
 * Before the RESET, which carries its box: a new disk for a jail with one
 * of its own, at a new directory. The keeper detaches the old one once it
 * has answered (off the next job's path: an unmount waits for an RCU
 * grace period), and it goes whole (its pages, its inode counter) once
 * the init has taken it off the box too; nothing of it is removed file by
 * file.
 */
static int new_disk(struct jail *j, char *err, size_t errlen)
{
	struct jobdir old;
	int rc;

	if (!j->own_disk)
		return 0;
	jobdir_close(&j->dir);
	old = j->disk;
	rc = jobdir_create(j->shared->jail_dir, 0, 0, &j->disk);
	if (rc < 0) {
		j->disk = old;
		snprintf(err, errlen, "a new disk's directory: %s", strerror(-rc));
		return rc;
	}
	jobdir_close(&old);
	rc = disks_fresh(j->shared->disks, disk_name(&j->disk), disk_name(&old), &j->next_box);
	if (rc < 0)
		(void)disks_drop(j->shared->disks, disk_name(&old));
	else
		rc = adopt_box(j);
	if (rc < 0)
		snprintf(err, errlen, "a new disk for the jail: %s", strerror(-rc));
	return rc;
}

/* Then the init's RESET (init.c, reset_steps): every process killed and
 * reaped, /tmp gone, a new network namespace, the pid counter back, and
 * the new disk's box, when there is one, mounted at the old one's. */
static int reset_init(struct jail *j, char *err, size_t errlen)
{
	struct init_arg box = { .body = JAILPATH_BOX, .len = sizeof(JAILPATH_BOX),
				.fd = j->next_box };
	int rc = ask_init(j, INITMSG_RESET, INITMSG_RESET_DONE, "RESET",
			  j->next_box >= 0 ? &box : NULL, err, errlen);

	if (j->next_box >= 0)
		close(j->next_box);
	j->next_box = -1;
	return rc;
}

/* After the reset and the job directory's clearing: the first cgroup
 * holds the init alone, and counts from zero for the next job's first
 * program. The files a job left on the job disk (a tmpfs) stay charged to
 * this cgroup until they are removed; were they still there, they would
 * pass for the init's memory and raise the next job's limit by as much. */
static int rebase_first_cgroup(struct jail *j, char *err, size_t errlen)
{
	int rc = cgroup_step_rebase(j->first, false);

	if (rc == -EBUSY) {
		snprintf(err, errlen, "the jail's first cgroup: what the job left is not gone");
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "the jail's first cgroup: %s", strerror(-rc));
		return rc;
	}
	j->first_taken = j->first_used = false;
	return 0;
}

/* After the reset, with nothing left that could write to it: the job
 * directory as jobdir_create made it (the box stays bound to the same
 * inode), when it is not on a disk of the jail's own (new_disk). */
static int clear_box(struct jail *j, char *err, size_t errlen)
{
	int rc = j->own_disk ? 0 : jobdir_reset(&j->dir, j->uid, j->gid);

	if (rc < 0)
		snprintf(err, errlen, "clearing the job directory %s: %s", j->box, strerror(-rc));
	return rc;
}

static int (*const recycle_steps[])(struct jail *j, char *err, size_t errlen) = {
	may_serve_again,
	new_disk,
	reset_init,
	clear_box,
	rebase_first_cgroup,
};

int jail_recycle(struct jail *j, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(recycle_steps); i++) {
		int rc = recycle_steps[i](j, err, errlen);

		if (rc < 0) {
			j->broken = true;
			return rc;
		}
	}
	return 0;
}

/* ---- the first cgroup, program after program ---------------------------- */

/*
 * The first cgroup made ready for another program of the job: the last
 * one's /tmp and IPC objects gone (the init's CLEAR), then the counters
 * set back (cgroup_step_rebase), as between two jobs. The program's files in the
 * job directory are gone already (the job restored its snapshot).
 */
static int clean_first_cgroup(struct jail *j, char *err, size_t errlen)
{
	int rc = ask_init(j, INITMSG_CLEAR, INITMSG_CLEARED, "CLEAR", NULL, err, errlen);

	if (rc < 0) {
		if (rc != -EIO)
			j->broken = true;
		return rc;
	}
	rc = cgroup_step_rebase(j->first, true);
	if (rc < 0)
		snprintf(err, errlen, "setting the first cgroup back: %s", strerror(-rc));
	return rc;
}

struct cgroup_step *jail_take_first_cgroup(struct jail *j)
{
	char err[256];
	int rc;

	if (!j->first_ready || j->first_taken)
		return NULL;
	j->first_taken = true;
	if (j->first_used && (rc = clean_first_cgroup(j, err, sizeof(err))) < 0) {
		/* Kept taken until the next job's reset sets it back. A v2
		 * kernel that cannot reset memory.peak says so for every job
		 * (jail_recycle): no need to say it for every program too. */
		if (rc == -EOPNOTSUPP)
			log_debug("the jail's first cgroup serves one program a job: %s", err);
		else
			log_warn("the jail's first cgroup serves no other program of this job: %s",
				 err);
		return NULL;
	}
	j->first_used = true;
	return j->first;
}

void jail_give_back_first_cgroup(struct jail *j)
{
	j->first_taken = false;
}

/* ---- teardown -------------------------------------------------------- */

void jail_destroy(struct jail *j)
{
	int rc;

	if (!j)
		return;
	/* The init kills everything it can see when its socket closes; the
	 * cgroup kill takes the jail binary too, and is what counts. */
	if (j->sock >= 0)
		close(j->sock);
	if (j->cg) {
		rc = cgroup_step_kill(j->cg);
		if (rc < 0)
			log_warn("killing jail cgroup: %s", strerror(-rc));
	}
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	cgroup_step_destroy(j->cg);
	/* the init, if it entered it, and whatever its first program left */
	cgroup_step_destroy(j->first);
	if (j->log_r >= 0)
		close(j->log_r);
	if (j->exec_r >= 0)
		close(j->exec_r);
	jail_discard_files(j);
	free(j);
}

int jail_discard_files(struct jail *j)
{
	int rc = 0, r;

	if (j->own_dir) {
		r = jobdir_remove(&j->dir);
		if (r < 0)
			log_warn("removing job directory %s: %s (the sweeper will retry)", j->box,
				 strerror(-r));
		j->own_dir = false;
		rc = r;
	}
	if (j->own_disk) {
		jobdir_close(&j->disk);
		r = disks_drop(j->shared->disks, disk_name(&j->disk));
		if (r < 0)
			log_warn("removing the jail's disk %s: %s", j->disk.path, strerror(-r));
		j->own_disk = false;
		rc = rc ? rc : r;
	}
	if (j->next_box >= 0) {
		close(j->next_box);
		j->next_box = -1;
	}
	if (j->ctl.fd >= 0) {
		r = jobdir_remove(&j->ctl);
		if (r < 0)
			log_warn("removing control directory %s: %s (the sweeper will retry)",
				 j->ctl.path, strerror(-r));
		j->ctl.fd = -1;
		rc = rc ? rc : r;
	}
	return rc;
}
