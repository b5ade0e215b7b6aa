#include "autoconf.h"

#include "worker/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "nsjail/policy.h"
#include "worker/cgroup.h"
#include "worker/jail.h"
#include "worker/seccomp.h"

#define CPU_POLL_MS 50
#define WAKE_POLL_MS 5
/* How long only the jail must be left before it is woken. */
#define WAKE_IDLE_MS 3
#define DRAIN_MS 1000
#define FALLBACK_OUTPUT_CAP (1024 * 1024)
#define MAX_CG_PIDS 256
#define NPROC_SLACK 8192

struct sandbox {
	const struct jail_driver *drv;
	char *path;
	char version[256];
	struct cg_tree *cg;
	struct seccomp_set *sc;
	struct jail_mount *mounts;
	size_t nmounts;
	uid_t uid;
	gid_t gid;
	uint64_t tmpfs_kb;
};

/* ---- opening ---------------------------------------------------------- */

static bool is_executable(const char *path)
{
	struct stat st;

	return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static int use_driver(struct sandbox *sb, const struct jail_driver *drv, const char *path,
		      char *err, size_t errlen)
{
	if (!is_executable(path)) {
		snprintf(err, errlen, "jail %s: %s is not an executable file", drv->name, path);
		return -ENOENT;
	}
	sb->drv = drv;
	sb->path = xstrdup(path);
	return 0;
}

static int pick_driver(const struct sandbox_opts *o, struct sandbox *sb, char *err, size_t errlen)
{
	const char *nsj = o->nsjail_path ? o->nsjail_path : "/usr/local/bin/nsjail";
	const char *bw = o->bwrap_path ? o->bwrap_path : "/usr/bin/bwrap";

	switch (o->jail) {
	case JAIL_KIND_AUTO:
		if (is_executable(nsj))
			return use_driver(sb, &jail_nsjail, nsj, err, errlen);
		if (is_executable(bw))
			return use_driver(sb, &jail_bwrap, bw, err, errlen);
		snprintf(err, errlen, "no jail binary: neither %s nor %s is executable", nsj, bw);
		return -ENOENT;
	case JAIL_KIND_NSJAIL:
		return use_driver(sb, &jail_nsjail, nsj, err, errlen);
	case JAIL_KIND_BWRAP:
		return use_driver(sb, &jail_bwrap, bw, err, errlen);
	}
	snprintf(err, errlen, "unknown jail kind %d", (int)o->jail);
	return -EINVAL;
}

/* First line of "<jail> --version"; "" when the jail has no such flag. */
static void read_version(struct sandbox *sb)
{
	char buf[256];
	size_t off = 0;
	int p[2];
	pid_t pid;

	sb->version[0] = '\0';
	if (!sb->drv->version_arg || pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(p[1], 1);
		dup2(nul, 2);
		close_fds_from(3);
		execl(sb->path, sb->path, sb->drv->version_arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0) {
		ssize_t n;

		while (off + 1 < sizeof(buf) &&
		       ((n = read(p[0], buf + off, sizeof(buf) - 1 - off)) > 0 ||
			(n < 0 && errno == EINTR)))
			off += n > 0 ? (size_t)n : 0;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(p[0]);
	buf[off] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(sb->version, sizeof(sb->version), "%s", buf);
}

static void add_mount(struct sandbox *sb, enum jail_mount_kind k, const char *path,
		      const char *target, bool need_proc)
{
	struct jail_mount *m;

	sb->mounts = realloc(sb->mounts, (sb->nmounts + 1) * sizeof(*sb->mounts));
	if (!sb->mounts)
		abort();
	m = &sb->mounts[sb->nmounts++];
	m->kind = k;
	m->path = xstrdup(path);
	m->target = target ? xstrdup(target) : NULL;
	m->need_proc = need_proc;
}

/* Match the policy against this host: what exists, and what is a symlink. */
static void resolve_mounts(struct sandbox *sb)
{
	for (size_t i = 0; i < policy_mounts_count; i++) {
		const struct policy_mount *pm = &policy_mounts[i];
		char target[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (pm->kind == PM_SYMLINK) {
			add_mount(sb, JM_SYMLINK, pm->path, pm->target, pm->need_proc);
			continue;
		}
		if (lstat(pm->path, &st) < 0)
			continue;
		if (pm->kind == PM_DEVICE) {
			if (S_ISCHR(st.st_mode))
				add_mount(sb, JM_DEV_BIND, pm->path, NULL, pm->need_proc);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			n = readlink(pm->path, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			/* /etc/localtime and friends point outside the policy:
			 * bind what they resolve to instead of a dangling link. */
			if (strncmp(pm->path, "/etc/", 5) == 0) {
				if (stat(pm->path, &st) == 0)
					add_mount(sb, JM_RO_BIND, pm->path, NULL, pm->need_proc);
				continue;
			}
			add_mount(sb, JM_SYMLINK, pm->path, target, pm->need_proc);
			continue;
		}
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
			add_mount(sb, JM_RO_BIND, pm->path, NULL, pm->need_proc);
	}
}

int sandbox_open(const struct sandbox_opts *o, struct sandbox **out, char *err, size_t errlen)
{
	struct sandbox *sb = xcalloc(1, sizeof(*sb));
	int rc;

	rc = pick_driver(o, sb, err, errlen);
	if (rc < 0)
		goto fail;
	if (o->uid == 0 || o->gid == 0) {
		snprintf(err, errlen, "sandbox uid/gid must not be root");
		rc = -EINVAL;
		goto fail;
	}
	sb->uid = o->uid;
	sb->gid = o->gid;
	sb->tmpfs_kb = o->tmpfs_kb ? o->tmpfs_kb : 65536;
	rc = seccomp_set_build(&sb->sc, err, errlen);
	if (rc < 0)
		goto fail;
	rc = cg_tree_open(o->cgroup_root, o->cgroup_name, &sb->cg, err, errlen);
	if (rc < 0)
		goto fail;
	resolve_mounts(sb);
	read_version(sb);
	*out = sb;
	return 0;
fail:
	sandbox_close(sb);
	return rc;
}

void sandbox_close(struct sandbox *sb)
{
	if (!sb)
		return;
	if (sb->cg)
		cg_tree_close(sb->cg);
	seccomp_set_free(sb->sc);
	for (size_t i = 0; i < sb->nmounts; i++) {
		free(sb->mounts[i].path);
		free(sb->mounts[i].target);
	}
	free(sb->mounts);
	free(sb->path);
	free(sb);
}

const char *sandbox_driver_name(const struct sandbox *sb)
{
	return sb->drv->name;
}

const char *sandbox_driver_version(const struct sandbox *sb)
{
	return sb->version;
}

const char *sandbox_driver_path(const struct sandbox *sb)
{
	return sb->path;
}

void step_result_init(struct step_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out, 0);
	buf_init(&r->err, 0);
	buf_init(&r->interleaved, 0);
}

void step_result_free(struct step_result *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
	buf_free(&r->interleaved);
}

/* ---- one step: state ---------------------------------------------------- */

struct run {
	struct sandbox *sb;
	const struct step_spec *s;
	struct step_result *r;
	struct cg_step *cg;
	struct jail_args args;
	char *envp_empty[1];
	struct rlimit rl_cpu, rl_fsize, rl_nofile, rl_nproc, rl_core;
	/* parent ends */
	int in_w, out_r, err_r, side_fd, exec_r;
	/* child ends, closed by the parent after fork */
	int in_r, out_w, err_w, side_child, exec_w;
	int pidfd;
	pid_t pid;
	int status;
	bool reaped;
	size_t in_off;
	size_t out_cap, err_cap;
	size_t kept_out, kept_err;
	bool limited;           /* a cap was hit: everything after is dropped */
	bool killed;
	uint64_t start_ms, deadline_ms, next_cpu_ms, next_wake_ms, idle_since_ms;
	struct buf side;        /* the jail's log (nsjail) */
};

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static int internal(struct run *run, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int internal(struct run *run, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run->r->internal_msg, sizeof(run->r->internal_msg), fmt, ap);
	va_end(ap);
	run->r->outcome.internal_error = true;
	return rc;
}

static int make_pipe(int *rd, int *wr)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	*rd = p[0];
	*wr = p[1];
	return 0;
}

/* ---- one step: preparation (everything the child needs, before fork) ---- */

static void prepare_rlimits(struct run *run)
{
	const struct limits *l = &run->s->limits;
	struct rlimit cur;
	rlim_t cpu_s, fsize;

	/* A backstop only: the cgroup's CPU usage is what goboxd judges. */
	cpu_s = l->cpu_ms ? (l->cpu_ms + 999) / 1000 + 1 : RLIM_INFINITY;
	run->rl_cpu.rlim_cur = cpu_s;
	run->rl_cpu.rlim_max = cpu_s == RLIM_INFINITY ? RLIM_INFINITY : cpu_s + 1;
	fsize = l->fsize_kb ? (rlim_t)l->fsize_kb * 1024 : RLIM_INFINITY;
	run->rl_fsize.rlim_cur = run->rl_fsize.rlim_max = fsize;
	run->rl_nofile.rlim_cur = run->rl_nofile.rlim_max = POLICY_NOFILE;
	/* RLIMIT_NPROC counts every process of the host uid, and the kernel
	 * releases the count of a torn-down jail lazily: a tight value makes
	 * back-to-back steps fail with EAGAIN. The cgroup's pids limit is the
	 * real one; this only stops a runaway that somehow escaped it. */
	run->rl_nproc.rlim_cur = run->rl_nproc.rlim_max =
		(rlim_t)l->max_processes + run->sb->drv->helpers + NPROC_SLACK;
	if (getrlimit(RLIMIT_NPROC, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
	    run->rl_nproc.rlim_max > cur.rlim_max)
		run->rl_nproc.rlim_cur = run->rl_nproc.rlim_max = cur.rlim_max;
	run->rl_core.rlim_cur = run->rl_core.rlim_max = 0;
}

static int prepare_side(struct run *run)
{
	size_t len;
	const void *bpf;
	int rc;

	if (run->sb->drv->side == JAIL_SIDE_LOG_OUT) {
		rc = make_pipe(&run->side_fd, &run->side_child);
		if (rc < 0)
			return internal(run, rc, "pipe2: %s", strerror(-rc));
		return 0;
	}
	/* A fresh memfd per step: bwrap reads it to the end, and a shared
	 * file offset would leave the next step an empty program. */
	run->side_child = memfd_create("goboxd-bpf", MFD_CLOEXEC);
	if (run->side_child < 0)
		return internal(run, -errno, "memfd_create: %s", strerror(errno));
	bpf = seccomp_set_bpf(run->sb->sc, &len);
	rc = write_all(run->side_child, bpf, len);
	if (rc == 0 && lseek(run->side_child, 0, SEEK_SET) < 0)
		rc = -errno;
	if (rc < 0)
		return internal(run, rc, "writing the seccomp program: %s", strerror(-rc));
	return 0;
}

static int prepare(struct run *run)
{
	const struct step_spec *s = run->s;
	struct jail_env env = {
		.path = run->sb->path,
		.uid = run->sb->uid,
		.gid = run->sb->gid,
		.tmpfs_kb = run->sb->tmpfs_kb,
		.mounts = run->sb->mounts,
		.nmounts = run->sb->nmounts,
		.seccomp = run->sb->sc,
	};
	struct cg_limits cl = {
		.memory_bytes = s->limits.memory_kb * 1024,
		.pids = s->limits.max_processes ?
			s->limits.max_processes + run->sb->drv->helpers : 0,
	};
	char err[256] = "";
	int rc;

	if (!s->box_dir || s->box_dir[0] != '/')
		return internal(run, -EINVAL, "box_dir must be an absolute path");
	if (!s->argv || !s->argv[0])
		return internal(run, -EINVAL, "empty argv");
	for (const char *const *p = s->envp; p && *p; p++)
		if (!strchr(*p, '=') || **p == '=')
			return internal(run, -EINVAL, "bad environment entry \"%.100s\"", *p);
	rc = run->sb->drv->build_argv(&env, s, &run->args, err, sizeof(err));
	if (rc < 0)
		return internal(run, rc, "%s", err);
	prepare_rlimits(run);
	rc = make_pipe(&run->in_r, &run->in_w);
	if (rc == 0)
		rc = make_pipe(&run->out_r, &run->out_w);
	if (rc == 0)
		rc = make_pipe(&run->err_r, &run->err_w);
	if (rc == 0)
		rc = make_pipe(&run->exec_r, &run->exec_w);
	if (rc < 0)
		return internal(run, rc, "pipe2: %s", strerror(-rc));
	rc = prepare_side(run);
	if (rc < 0)
		return rc;
	if (set_nonblock(run->in_w, true) < 0 || set_nonblock(run->out_r, true) < 0 ||
	    set_nonblock(run->err_r, true) < 0 ||
	    (run->side_fd >= 0 && set_nonblock(run->side_fd, true) < 0))
		return internal(run, -errno, "fcntl(O_NONBLOCK): %s", strerror(errno));
	rc = cg_step_create(run->sb->cg, &cl, &run->cg, err, sizeof(err));
	if (rc < 0)
		return internal(run, rc, "cgroup: %s", err);
	return 0;
}

/* ---- one step: the pre-exec child (async-signal-safe calls only) -------- */

static void child_fail(struct run *run, int step)
{
	int e[2] = { errno, step };

	(void)!write(run->exec_w, e, sizeof(e));
	_exit(127);
}

enum child_step {
	CS_SIGNALS = 1, CS_SETSID, CS_CGROUP, CS_FDS, CS_RLIMITS, CS_CREDS,
	CS_PDEATHSIG, CS_NNP, CS_SECCOMP, CS_EXEC,
};

static const char *const child_step_names[] = {
	"", "signals", "setsid", "cgroup enter", "fds", "rlimits", "setuid",
	"pdeathsig", "no_new_privs", "seccomp", "execve",
};

/*
 * The fds the jail gets are first copied above every fd in use, so that
 * placing them at 0..4 cannot overwrite one not yet placed.
 */
static void child_fds(struct run *run)
{
	int src[5] = { run->in_r, run->out_w, run->err_w, run->side_child, run->exec_w };
	int tmp[5];

	for (int i = 0; i < 5; i++) {
		tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16);
		if (tmp[i] < 0)
			child_fail(run, CS_FDS);
	}
	run->exec_w = tmp[4];
	for (int i = 0; i < 5; i++) {
		if (dup2(tmp[i], i) < 0)
			child_fail(run, CS_FDS);
	}
	run->exec_w = 4;
	/* The error pipe must still close on a successful exec. */
	if (fcntl(4, F_SETFD, FD_CLOEXEC) < 0)
		child_fail(run, CS_FDS);
	close_fds_from(5);
}

static void child_creds(struct run *run)
{
	uid_t uid = run->sb->uid;
	gid_t gid = run->sb->gid;

	/*
	 * The pipes were made by the worker; handing them to the sandbox uid
	 * lets the program reopen them by name (/dev/stdin is /proc/self/fd/0,
	 * and opening that checks the pipe's owner).
	 */
	for (int fd = 0; fd <= 2; fd++)
		if (fchown(fd, uid, gid) < 0)
			child_fail(run, CS_CREDS);
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		child_fail(run, CS_CREDS);
	/* Make sure root cannot be taken back. */
	if (setuid(0) == 0 || setgid(0) == 0) {
		errno = EPERM;
		child_fail(run, CS_CREDS);
	}
}

static void __attribute__((noreturn)) child_run(struct run *run, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(run, CS_SIGNALS);
	if (setsid() < 0)
		child_fail(run, CS_SETSID);
	if (cg_step_enter(run->cg) < 0) {
		errno = EIO;
		child_fail(run, CS_CGROUP);
	}
	child_fds(run);
	if (setrlimit(RLIMIT_CPU, &run->rl_cpu) < 0 ||
	    setrlimit(RLIMIT_FSIZE, &run->rl_fsize) < 0 ||
	    setrlimit(RLIMIT_NOFILE, &run->rl_nofile) < 0 ||
	    setrlimit(RLIMIT_NPROC, &run->rl_nproc) < 0 ||
	    setrlimit(RLIMIT_CORE, &run->rl_core) < 0)
		child_fail(run, CS_RLIMITS);
	child_creds(run);
	/* After the uid change, which clears the parent-death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(run, CS_PDEATHSIG);
	if (getppid() != parent)
		_exit(127);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(run, CS_NNP);
	if (seccomp_set_apply_baseline(run->sb->sc) < 0)
		child_fail(run, CS_SECCOMP);
	execve(run->sb->path, run->args.v, run->envp_empty);
	child_fail(run, CS_EXEC);
	_exit(127);
}

static int spawn(struct run *run)
{
	sigset_t all, old;
	pid_t parent = getpid();
	int e[2];
	ssize_t n;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	run->start_ms = now_ms();
	run->pid = fork();
	if (run->pid == 0)
		child_run(run, parent);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (run->pid < 0)
		return internal(run, -errno, "fork: %s", strerror(errno));
	close_fd(&run->in_r);
	close_fd(&run->out_w);
	close_fd(&run->err_w);
	close_fd(&run->side_child);
	close_fd(&run->exec_w);
	do {
		n = read(run->exec_r, e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close_fd(&run->exec_r);
	if (n == (ssize_t)sizeof(e)) {
		int step = e[1] > 0 && e[1] < (int)ARRAY_SIZE(child_step_names) ? e[1] : 0;

		while (waitpid(run->pid, NULL, 0) < 0 && errno == EINTR)
			;
		run->reaped = true;
		return internal(run, -e[0], "starting %s: %s: %s", run->sb->path,
				child_step_names[step], strerror(e[0]));
	}
	run->pidfd = (int)syscall(SYS_pidfd_open, run->pid, 0);
	return 0;
}

/* ---- one step: the parent loop ------------------------------------------ */

static void kill_step(struct run *run)
{
	if (run->killed)
		return;
	run->killed = true;
	cg_step_kill(run->cg);
	/* The jail is in the cgroup too; this only matters if the kill
	 * above gave up early. */
	if (!run->reaped)
		kill(run->pid, SIGKILL);
}

static void capture(struct run *run, bool is_err, const char *data, size_t n)
{
	struct step_result *r = run->r;
	struct buf *b = is_err ? &r->err : &r->out;
	size_t *kept = is_err ? &run->kept_err : &run->kept_out;
	size_t cap = is_err ? run->err_cap : run->out_cap;
	size_t take = n;

	if (run->limited)
		return;
	if (*kept + take > cap)
		take = cap - *kept;
	if (run->s->combined_cap) {
		size_t both = run->kept_out + run->kept_err;
		size_t room = both < run->s->combined_cap ? run->s->combined_cap - both : 0;

		if (take > room)
			take = room;
	}
	buf_append(b, data, take);
	if (run->s->want_interleaved)
		buf_append(&r->interleaved, data, take);
	*kept += take;
	if (take == n)
		return;
	run->limited = true;
	buf_puts(b, TRUNCATION_MARKER);
	if (run->s->want_interleaved)
		buf_puts(&r->interleaved, TRUNCATION_MARKER);
	if (is_err)
		r->err_truncated = true;
	else
		r->out_truncated = true;
	r->outcome.output_limited = true;
	kill_step(run);
}

/* Read what is there; false at EOF or on error (the fd is then closed). */
static bool pump_read(struct run *run, int *fd)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(*fd, chunk, sizeof(chunk));

		if (n > 0) {
			if (*fd == run->out_r)
				capture(run, false, chunk, (size_t)n);
			else if (*fd == run->err_r)
				capture(run, true, chunk, (size_t)n);
			else
				buf_append(&run->side, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		close_fd(fd);
		return false;
	}
}

static void pump_stdin(struct run *run)
{
	const struct step_spec *s = run->s;

	while (run->in_off < s->stdin_len) {
		ssize_t n = write(run->in_w, s->stdin_data + run->in_off, s->stdin_len - run->in_off);

		if (n > 0) {
			run->in_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		break;  /* EPIPE: the program stopped reading, which is its right */
	}
	close_fd(&run->in_w);
}

static bool try_reap(struct run *run)
{
	pid_t p;

	if (run->reaped)
		return true;
	do {
		p = waitpid(run->pid, &run->status, WNOHANG);
	} while (p < 0 && errno == EINTR);
	if (p == run->pid || (p < 0 && errno == ECHILD))
		run->reaped = true;
	return run->reaped;
}

static bool pid_is_zombie(pid_t pid)
{
	char path[64], stat[512];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, stat, sizeof(stat)) <= 0)
		return true;    /* gone */
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * nsjail -Mo reaps its child, then pause()s until the next signal; if the
 * child's SIGCHLD came in between, that is its 1 s timer tick. Once the
 * cgroup holds nothing alive but nsjail for a few ms, SIGCHLD (which it
 * handles as a no-op) ends the pause; repeat until it exits.
 */
static void wake_check(struct run *run, uint64_t now)
{
	pid_t pids[MAX_CG_PIDS];
	int n = cg_step_pids(run->cg, pids, ARRAY_SIZE(pids));
	bool only_jail = n >= 0;

	for (int i = 0; i < n && only_jail; i++) {
		if (pids[i] != run->pid && !pid_is_zombie(pids[i]))
			only_jail = false;
	}
	if (!only_jail) {
		run->idle_since_ms = 0;
		return;
	}
	if (!run->idle_since_ms)
		run->idle_since_ms = now;
	else if (now - run->idle_since_ms >= WAKE_IDLE_MS)
		kill(run->pid, SIGCHLD);
}

static void check_cpu(struct run *run)
{
	uint64_t us;

	if (!run->s->limits.cpu_ms || cg_step_cpu_us(run->cg, &us) < 0)
		return;
	if (us > (uint64_t)run->s->limits.cpu_ms * 1000) {
		run->r->outcome.timed_out = true;
		kill_step(run);
	}
}

static int next_timeout(struct run *run, uint64_t now)
{
	uint64_t next = run->next_cpu_ms;

	if (run->deadline_ms && run->deadline_ms < next)
		next = run->deadline_ms;
	if (run->sb->drv->needs_wake && run->next_wake_ms < next)
		next = run->next_wake_ms;
	/* Without a pidfd the jail's exit is only seen by polling. */
	if (run->pidfd < 0 && now + 10 < next)
		next = now + 10;
	return next > now ? (int)(next - now) : 0;
}

static int loop(struct run *run)
{
	uint64_t now = now_ms();

	run->deadline_ms = run->s->limits.wall_ms ? run->start_ms + run->s->limits.wall_ms : 0;
	run->next_cpu_ms = now + CPU_POLL_MS;
	run->next_wake_ms = now + WAKE_POLL_MS;
	if (run->s->stdin_len == 0)
		close_fd(&run->in_w);
	while (!try_reap(run)) {
		struct pollfd pf[5];
		int nf = 0;

		if (run->in_w >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->in_w, .events = POLLOUT };
		if (run->out_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
		if (run->err_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
		if (run->side_fd >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->side_fd, .events = POLLIN };
		if (run->pidfd >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->pidfd, .events = POLLIN };
		if (poll(pf, (nfds_t)nf, next_timeout(run, now)) < 0 && errno != EINTR)
			return internal(run, -errno, "poll: %s", strerror(errno));
		for (int i = 0; i < nf; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == run->in_w)
				pump_stdin(run);
			else if (pf[i].fd == run->out_r)
				pump_read(run, &run->out_r);
			else if (pf[i].fd == run->err_r)
				pump_read(run, &run->err_r);
			else if (pf[i].fd == run->side_fd)
				pump_read(run, &run->side_fd);
		}
		now = now_ms();
		if (run->deadline_ms && now >= run->deadline_ms && !run->killed) {
			run->r->outcome.timed_out = true;
			kill_step(run);
		}
		if (now >= run->next_cpu_ms) {
			check_cpu(run);
			run->next_cpu_ms = now + CPU_POLL_MS;
		}
		if (run->sb->drv->needs_wake && now >= run->next_wake_ms) {
			wake_check(run, now);
			run->next_wake_ms = now + WAKE_POLL_MS;
		}
	}
	return 0;
}

/* After the jail is gone: end what is left and read the pipes to EOF. */
static void drain(struct run *run)
{
	uint64_t until = now_ms() + DRAIN_MS;

	cg_step_kill(run->cg);
	close_fd(&run->in_w);
	while (run->out_r >= 0 || run->err_r >= 0 || run->side_fd >= 0) {
		struct pollfd pf[3];
		int nf = 0;
		uint64_t now = now_ms();

		if (now >= until)
			break;
		if (run->out_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
		if (run->err_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
		if (run->side_fd >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->side_fd, .events = POLLIN };
		if (poll(pf, (nfds_t)nf, (int)(until - now)) <= 0)
			continue;
		for (int i = 0; i < nf; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == run->out_r)
				pump_read(run, &run->out_r);
			else if (pf[i].fd == run->err_r)
				pump_read(run, &run->err_r);
			else
				pump_read(run, &run->side_fd);
		}
	}
}

/* ---- one step: the outcome ---------------------------------------------- */

static int finish(struct run *run)
{
	struct step_result *r = run->r;
	struct run_outcome *o = &r->outcome;
	struct cg_stats st;
	char msg[256];
	int rc;

	r->wall_ms = now_ms() - run->start_ms;
	rc = cg_step_stats(run->cg, &st);
	if (rc < 0)
		return internal(run, rc, "reading the step cgroup: %s", strerror(-rc));
	r->cpu_ms = st.cpu_us / 1000;
	r->memory_peak_kb = st.memory_peak_bytes / 1024;
	if (run->s->limits.cpu_ms && r->cpu_ms > run->s->limits.cpu_ms)
		o->timed_out = true;

	if (WIFEXITED(run->status)) {
		int code = WEXITSTATUS(run->status);

		if (!run->killed &&
		    run->sb->drv->own_failure(code, &run->side, &r->err, msg, sizeof(msg)))
			return internal(run, -EIO, "%s", msg);
		/* Both jails report a program killed by signal N as 128+N. */
		if (code > 128 && code < 128 + 65) {
			o->term_signal = code - 128;
		} else {
			o->exited = true;
			o->exit_code = code;
		}
	} else if (WIFSIGNALED(run->status)) {
		o->term_signal = WTERMSIG(run->status);
	}
	/* Reaching the limit alone (reclaim, a failed allocation) counts when
	 * the program did not finish cleanly. */
	o->oom = st.oom_killed ||
		 (st.memory_limit_hit && !(o->exited && o->exit_code == 0));
	return 0;
}

int sandbox_run(struct sandbox *sb, const struct step_spec *s, struct step_result *r)
{
	struct run run = {
		.sb = sb, .s = s, .r = r,
		.in_w = -1, .out_r = -1, .err_r = -1, .side_fd = -1, .exec_r = -1,
		.in_r = -1, .out_w = -1, .err_w = -1, .side_child = -1, .exec_w = -1,
		.pidfd = -1, .pid = -1,
	};
	uint64_t dflt = s->limits.output_kb ? s->limits.output_kb * 1024 : FALLBACK_OUTPUT_CAP;
	sigset_t pipe_set, old;
	int rc;

	buf_reset(&r->out);
	buf_reset(&r->err);
	buf_reset(&r->interleaved);
	memset(&r->outcome, 0, sizeof(r->outcome));
	r->out_truncated = r->err_truncated = false;
	r->wall_ms = r->cpu_ms = r->memory_peak_kb = 0;
	r->internal_msg[0] = '\0';
	run.out_cap = s->stdout_cap ? s->stdout_cap : (size_t)dflt;
	run.err_cap = s->stderr_cap ? s->stderr_cap : (size_t)dflt;
	jail_args_init(&run.args);
	buf_init(&run.side, 64 * 1024);

	/* A program that stops reading its stdin must not kill the worker
	 * with SIGPIPE: keep it pending and discard it below. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);

	rc = prepare(&run);
	if (rc == 0)
		rc = spawn(&run);
	if (rc == 0 && !run.reaped) {
		rc = loop(&run);
		if (rc < 0) {
			kill_step(&run);
			while (!run.reaped && waitpid(run.pid, &run.status, 0) < 0 && errno == EINTR)
				;
			run.reaped = true;
		}
	}
	if (rc == 0) {
		drain(&run);
		rc = finish(&run);
	}

	if (run.pid > 0 && !run.reaped) {
		kill(run.pid, SIGKILL);
		while (waitpid(run.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (run.cg)
		cg_step_destroy(run.cg);
	{
		int *fds[] = { &run.in_w, &run.out_r, &run.err_r, &run.side_fd, &run.exec_r,
			       &run.in_r, &run.out_w, &run.err_w, &run.side_child, &run.exec_w,
			       &run.pidfd };

		for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
			close_fd(fds[i]);
	}
	buf_free(&run.side);
	jail_args_free(&run.args);
	{
		const struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
