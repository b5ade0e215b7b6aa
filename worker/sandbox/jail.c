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
#include "common/log.h"
#include "common/util.h"
#include "worker/sandbox/cgroup.h"

/* The launcher (bwrap's monitor or nsjail) and the init. */
#define JAIL_CGROUP_PIDS 16
#define JAIL_CGROUP_MEMORY (64ULL << 20)
#define JAIL_LOG_MAX 4096

struct jail {
	struct sandbox *sb;
	pid_t pid;              /* the jail binary */
	int sock;               /* our end of the init's socketpair */
	int log_r;              /* the jail binary's stdout and stderr */
	int exec_r;             /* silent unless the pre-exec child failed */
	struct cg_step *cg;     /* the jail binary and the init */
	/* The first program's cgroup, which the init enters while the jail
	 * waits (ENTER); taken by that program's step. */
	struct cg_step *first;
	bool first_sent, first_ready, first_taken;
	struct jobdir dir;
	bool own_dir;
	struct jobdir ctl;      /* the control directory, when ctl.fd >= 0 */
	uid_t uid;              /* its programs' host ids */
	gid_t gid;
	char box[4096];
	bool ready, broken;
	uint32_t next_id;
};

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

struct sandbox *jail_sandbox(const struct jail *j)
{
	return j->sb;
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

/* ---- the pre-exec child (async-signal-safe calls only) ------------------ */

enum jail_child_stage { JC_SETSID = 1, JC_CGROUP, JC_FDS, JC_CREDS, JC_PDEATHSIG, JC_NNP,
			JC_SECCOMP, JC_EXEC };

static const char *const jail_child_stages[] = {
	"", "setsid", "cgroup enter", "fds", "setuid", "pdeathsig", "no_new_privs",
	"seccomp", "execve",
};

struct launch {
	struct jail *j;
	struct jail_args args;
	int sock_child, log_w, exec_w;
	pid_t parent;
};

static void __attribute__((noreturn)) launch_fail(int exec_w, int stage)
{
	int e[2] = { errno, stage };

	(void)!write(exec_w, e, sizeof(e));
	_exit(127);
}

/* 0: /dev/null; 1, 2: the log; 3: the init's socket; 4: errors. */
static void launch_fds(struct launch *l)
{
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fds[5] = { nul, l->log_w, l->log_w, l->sock_child, l->exec_w };
	int rc;

	if (nul < 0)
		launch_fail(l->exec_w, JC_FDS);
	rc = initmsg_place_fds(fds, 5, 4);
	l->exec_w = fds[4];
	if (rc < 0) {
		errno = -rc;
		launch_fail(l->exec_w, JC_FDS);
	}
}

static void __attribute__((noreturn)) launch_child(struct launch *l)
{
	const struct sandbox *sb = l->j->sb;
	static char *const no_env[] = { NULL };
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		launch_fail(l->exec_w, JC_SETSID);
	if (cg_step_enter(l->j->cg) < 0) {
		errno = EIO;
		launch_fail(l->exec_w, JC_CGROUP);
	}
	launch_fds(l);
	if (setgroups(0, NULL) < 0 || setresgid(l->j->gid, l->j->gid, l->j->gid) < 0 ||
	    setresuid(l->j->uid, l->j->uid, l->j->uid) < 0)
		launch_fail(l->exec_w, JC_CREDS);
	if (setuid(0) == 0 || setgid(0) == 0) {
		errno = EPERM;
		launch_fail(l->exec_w, JC_CREDS);
	}
	/* After the uid change, which clears it; bound to the forking thread,
	 * which is the worker's job thread for as long as the worker lives. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		launch_fail(l->exec_w, JC_PDEATHSIG);
	if (getppid() != l->parent)
		_exit(127);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		launch_fail(l->exec_w, JC_NNP);
	if (seccomp_set_apply_baseline(sb->sc) < 0)
		launch_fail(l->exec_w, JC_SECCOMP);
	execve(sb->path, l->args.v, no_env);
	launch_fail(l->exec_w, JC_EXEC);
}

/* ---- starting ---------------------------------------------------------- */

static int make_box(struct jail *j, const char *box_dir, char *err, size_t errlen)
{
	int rc;

	if (box_dir) {
		if (box_dir[0] != '/') {
			snprintf(err, errlen, "box directory must be an absolute path");
			return -EINVAL;
		}
		snprintf(j->box, sizeof(j->box), "%s", box_dir);
		return 0;
	}
	rc = jobdir_create(j->sb->jail_dir, j->uid, j->gid, &j->dir);
	if (rc < 0) {
		snprintf(err, errlen, "creating a job directory in %s: %s", j->sb->jail_dir,
			 strerror(-rc));
		return rc;
	}
	j->own_dir = true;
	snprintf(j->box, sizeof(j->box), "%s", j->dir.path);
	return 0;
}

static int launch(struct jail *j, char *err, size_t errlen)
{
	struct jail_env env = {
		.path = j->sb->path,
		.init_path = j->sb->init_path,
		.uid = j->uid,
		.gid = j->gid,
		.mounts = j->sb->mounts,
		.nmounts = j->sb->nmounts,
		.ro_mounts = (const char *const *)j->sb->ro_mounts,
		.box_dir = j->box,
		.control_dir = j->ctl.fd >= 0 ? j->ctl.path : NULL,
	};
	struct launch l = { .j = j, .sock_child = -1, .log_w = -1, .exec_w = -1,
			    .parent = getpid() };
	int sv[2], lp[2], ep[2];
	sigset_t all, old;
	int rc;

	jail_args_init(&l.args);
	rc = j->sb->drv->build_argv(&env, &l.args, err, errlen);
	if (rc < 0)
		goto out;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = -errno;
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto out;
	}
	j->sock = sv[0];
	l.sock_child = sv[1];
	if (pipe2(lp, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		snprintf(err, errlen, "pipe2: %s", strerror(errno));
		goto out;
	}
	j->log_r = lp[0];
	l.log_w = lp[1];
	j->exec_r = ep[0];
	l.exec_w = ep[1];
	set_nonblock(j->log_r, true);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	j->pid = fork();
	if (j->pid == 0)
		launch_child(&l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (j->pid < 0) {
		rc = -errno;
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	/* Whether the exec worked is read by jail_ready: the launcher's
	 * cgroup attach can sleep (cgroup v1), and nobody waits for it here. */
	close(l.exec_w);
	l.exec_w = -1;
	rc = 0;
out:
	if (l.sock_child >= 0)
		close(l.sock_child);
	if (l.log_w >= 0)
		close(l.log_w);
	if (l.exec_w >= 0)
		close(l.exec_w);
	jail_args_free(&l.args);
	return rc;
}

/*
 * Root's, so that nothing in the jail can replace what the worker opens
 * there by name; readable and searchable by the jail's group only.
 */
static int make_control_dir(struct jail *j, char *err, size_t errlen)
{
	int rc = jobdir_create(j->sb->jail_dir, 0, j->gid, &j->ctl);

	if (rc < 0) {
		j->ctl.fd = -1;
		snprintf(err, errlen, "creating a control directory in %s: %s", j->sb->jail_dir,
			 strerror(-rc));
	}
	return rc;
}

/*
 * A cgroup for the jail's first program, and ENTER: the init moves into it
 * as soon as it runs, so the first program (a one-test job's only one) is
 * born there instead of migrating on the request's path. Best effort: a
 * jail without it runs every program the ordinary way.
 */
static void send_enter(struct jail *j)
{
	struct cg_limits none = { 0 };
	char cgerr[256];
	int fds[INITMSG_MAX_FDS - 3];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(fds))];
	} ctl;
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_ENTER, 0, 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *c;
	int n;

	if (cg_step_create(j->sb->cg, &none, &j->first, cgerr, sizeof(cgerr)) < 0) {
		log_warn("a jail's first cgroup: %s", cgerr);
		j->first = NULL;
		return;
	}
	n = cg_step_open_procs(j->first, fds, ARRAY_SIZE(fds));
	if (n <= 0) {
		cg_step_destroy(j->first);
		j->first = NULL;
		return;
	}
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	j->first_sent = sendmsg(j->sock, &mh, MSG_NOSIGNAL) >= 0;
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* The init's answer to ENTER, after its hello: then the first cgroup holds
 * the init alone, whose pid the step's kills must spare. */
static int entered(struct jail *j, int timeout_ms)
{
	struct {
		struct initmsg_hdr h;
		struct initmsg_failed f;
	} m;
	struct pollfd pf = { .fd = j->sock, .events = POLLIN };
	pid_t pids[2];
	ssize_t n;
	int rc;

	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return -ETIMEDOUT;
	n = recv(j->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n < (ssize_t)sizeof(m.h) || m.h.magic != INITMSG_MAGIC)
		return -EPROTO;
	if (m.h.type != INITMSG_ENTERED) {
		log_warn("the jail's init could not enter its first cgroup: %s",
			 m.h.type == INITMSG_FAILED && n == (ssize_t)sizeof(m) ? strerror(m.f.err) : "?");
		return 0;
	}
	if (cg_step_pids(j->first, pids, ARRAY_SIZE(pids)) != 1)
		return 0;
	cg_step_spare(j->first, pids[0]);
	j->first_ready = true;
	return 0;
}

struct cg_step *jail_take_first_cgroup(struct jail *j)
{
	if (!j->first_ready || j->first_taken)
		return NULL;
	j->first_taken = true;
	return j->first;
}

int jail_start_with(struct sandbox *sb, const struct jail_opts *o, struct jail **out,
		    char *err, size_t errlen)
{
	struct jail *j = xcalloc(1, sizeof(*j));
	struct cg_limits cl = { .memory_bytes = JAIL_CGROUP_MEMORY, .pids = JAIL_CGROUP_PIDS };
	char cgerr[256];
	int rc;

	j->sb = sb;
	j->pid = -1;
	j->sock = j->log_r = j->exec_r = -1;
	j->dir.fd = -1;
	j->ctl.fd = -1;
	j->uid = o->uid ? o->uid : sb->uid;
	j->gid = o->gid ? o->gid : sb->gid;
	if (j->uid == 0 || j->gid == 0) {
		snprintf(err, errlen, "a jail's uid/gid must not be root");
		free(j);
		return -EINVAL;
	}
	rc = make_box(j, o->box_dir, err, errlen);
	if (rc == 0 && o->control_dir)
		rc = make_control_dir(j, err, errlen);
	if (rc == 0) {
		rc = cg_step_create(sb->cg, &cl, &j->cg, cgerr, sizeof(cgerr));
		if (rc < 0)
			snprintf(err, errlen, "jail cgroup: %s", cgerr);
	}
	if (rc == 0)
		rc = launch(j, err, errlen);
	if (rc < 0) {
		jail_destroy(j);
		return rc;
	}
	send_enter(j);
	*out = j;
	return 0;
}

int jail_start(struct sandbox *sb, const char *box_dir, struct jail **out, char *err,
	       size_t errlen)
{
	struct jail_opts o = { .box_dir = box_dir };

	return jail_start_with(sb, &o, out, err, errlen);
}

/* ---- ready ----------------------------------------------------------- */

/* What the jail binary said, first line that says anything. */
static void jail_said(struct jail *j, char *out, size_t outlen)
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

static int send_filter(struct jail *j, char *err, size_t errlen)
{
	size_t len;
	const void *bpf = seccomp_set_bpf(j->sb->sc, &len);
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_FILTER, 0, (uint32_t)len };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)bpf, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (sendmsg(j->sock, &mh, MSG_NOSIGNAL) < 0) {
		snprintf(err, errlen, "sending the seccomp filter to the init: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * The launcher's pre-exec child either execs the jail binary (its CLOEXEC
 * error pipe closes: end of file) or writes errno and stage and exits.
 */
static int launched(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd pf = { .fd = j->exec_r, .events = POLLIN };
	int e[2], rc, st;
	ssize_t n;

	if (j->exec_r < 0)
		return 0;
	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		snprintf(err, errlen, "starting %s: no exec within %d ms", j->sb->path, timeout_ms);
		return -ETIMEDOUT;
	}
	do
		n = read(j->exec_r, e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(j->exec_r);
	j->exec_r = -1;
	if (n != (ssize_t)sizeof(e))
		return 0;
	st = e[1] > 0 && e[1] < (int)ARRAY_SIZE(jail_child_stages) ? e[1] : 0;
	while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
		;
	j->pid = -1;
	snprintf(err, errlen, "starting %s: %s: %s", j->sb->path, jail_child_stages[st],
		 strerror(e[0]));
	return -e[0];
}

int jail_ready(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	struct {
		struct initmsg_hdr h;
		struct initmsg_hello hello;
	} m;
	struct pollfd pf = { .fd = j->sock, .events = POLLIN };
	char said[256];
	ssize_t n;
	int rc;

	if (j->broken) {
		snprintf(err, errlen, "the jail broke in an earlier step");
		return -EIO;
	}
	if (j->ready)
		return 0;
	rc = launched(j, timeout_ms, err, errlen);
	if (rc < 0) {
		j->broken = true;
		return rc;
	}
	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		j->broken = true;
		snprintf(err, errlen, "the jail did not start within %d ms", timeout_ms);
		return -ETIMEDOUT;
	}
	n = recv(j->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(m) || m.h.magic != INITMSG_MAGIC || m.h.type != INITMSG_HELLO) {
		j->broken = true;
		jail_said(j, said, sizeof(said));
		snprintf(err, errlen, "the jail did not start: %s",
			 said[0] ? said : n == 0 ? "it exited without a word" :
			 "its init sent no hello");
		return -EIO;
	}
	if (m.hello.version != INITMSG_VERSION) {
		j->broken = true;
		snprintf(err, errlen, "goboxd-init speaks protocol %u, this goboxd %u: install both "
			 "from the same build", (unsigned)m.hello.version, (unsigned)INITMSG_VERSION);
		return -EPROTO;
	}
	if (j->first_sent) {
		rc = entered(j, timeout_ms);
		if (rc < 0) {
			j->broken = true;
			snprintf(err, errlen, "the jail's init did not answer ENTER: %s", strerror(-rc));
			return rc;
		}
	}
	rc = send_filter(j, err, errlen);
	if (rc < 0) {
		j->broken = true;
		return rc;
	}
	j->ready = true;
	return 0;
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
		rc = cg_step_kill(j->cg);
		if (rc < 0)
			log_warn("killing jail cgroup: %s", strerror(-rc));
	}
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	cg_step_destroy(j->cg);
	/* the init, if it entered it, and whatever its first program left */
	cg_step_destroy(j->first);
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
