#include "autoconf.h"

#include "worker/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "worker/sandbox/jobdir.h"
#include "common/limits.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/sandbox/cgroup.h"
#include "worker/sandbox/disks.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/procctl.h"
#include "worker/sandbox/seccomp.h"

const char *const sandbox_base_env[5] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=" JAILPATH_TMP,
	"TMPDIR=" JAILPATH_TMP,
	"LANG=C.UTF-8",
	NULL,
};

#define CPU_POLL_MS 50
#define DRAIN_MS 1000
/* After a kill, how long the init may take to report the exit. */
#define REAP_GRACE_MS 2000
#define JAIL_READY_MS 10000
#define FALLBACK_OUTPUT_CAP (1024 * 1024)
#define NPROC_SLACK 8192
#define INIT_NAME "goboxd-init"

/* The worker's sandbox context, made once per worker (sandbox_open). */
struct sandbox {
	struct jail_shared shared; /* what every jail takes from it */
	char version[256];      /* the jail binary's version line */
	uint64_t tmpfs_kb;      /* each program's fresh /tmp */
	uint64_t tmp_files;     /* nr_inodes of each /tmp; 0: no cap */
	bool disk_quota;        /* jail_dir is the capped job disk */
	int cpu;                /* the CPU of pinned steps; -1: none */
	bool pin_all;           /* every step on cpu, not only those that ask */
};

/* ---- opening ---------------------------------------------------------- */

static bool is_executable(const char *path)
{
	struct stat st;

	return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static int use_driver(struct sandbox *sandbox, const struct jail_driver *drv, const char *path,
		      char *err, size_t errlen)
{
	if (!is_executable(path)) {
		snprintf(err, errlen, "jail %s: %s is not an executable file", drv->name, path);
		return -ENOENT;
	}
	sandbox->shared.driver = drv;
	sandbox->shared.path = xstrdup(path);
	return 0;
}

static int pick_driver(const struct sandbox_opts *o, struct sandbox *sandbox, char *err,
		       size_t errlen)
{
	const char *nsj = o->nsjail_path ? o->nsjail_path : "/usr/local/bin/nsjail";
	const char *bw = o->bwrap_path ? o->bwrap_path : "/usr/bin/bwrap";

	switch (o->jail) {
	case JAIL_KIND_AUTO:
		if (is_executable(nsj))
			return use_driver(sandbox, &jail_nsjail, nsj, err, errlen);
		if (is_executable(bw))
			return use_driver(sandbox, &jail_bwrap, bw, err, errlen);
		snprintf(err, errlen, "no jail binary: neither %s nor %s is executable", nsj, bw);
		return -ENOENT;
	case JAIL_KIND_NSJAIL:
		return use_driver(sandbox, &jail_nsjail, nsj, err, errlen);
	case JAIL_KIND_BWRAP:
		return use_driver(sandbox, &jail_bwrap, bw, err, errlen);
	}
	snprintf(err, errlen, "unknown jail kind %d", (int)o->jail);
	return -EINVAL;
}

/*
 * goboxd-init: the configured path, else next to the running binary (the
 * build tree, or an installation that keeps both in one place), else where
 * `make install` puts it.
 */
static int find_init(const struct sandbox_opts *o, struct sandbox *sandbox, char *err,
		     size_t errlen)
{
	char self[PATH_MAX], cand[PATH_MAX + sizeof(INIT_NAME)];
	ssize_t n;
	char *slash;

	if (o->init_path) {
		if (!is_executable(o->init_path)) {
			snprintf(err, errlen, "init %s is not an executable file", o->init_path);
			return -ENOENT;
		}
		sandbox->shared.init_path = xstrdup(o->init_path);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand), "%s/%s", self, INIT_NAME);
			if (is_executable(cand)) {
				sandbox->shared.init_path = xstrdup(cand);
				return 0;
			}
		}
	}
	if (is_executable(GOBOXD_PKGLIBEXECDIR "/" INIT_NAME)) {
		sandbox->shared.init_path = xstrdup(GOBOXD_PKGLIBEXECDIR "/" INIT_NAME);
		return 0;
	}
	snprintf(err, errlen, "%s not found next to goboxd nor in %s (set --init-path)", INIT_NAME,
		 GOBOXD_PKGLIBEXECDIR);
	return -ENOENT;
}

/* First line of "<jail> --version"; "" when the jail has no such flag. */
static void read_version(struct sandbox *sandbox)
{
	const struct jail_shared *shared = &sandbox->shared;
	char buf[256];
	size_t off = 0;
	int p[2];
	pid_t pid;

	sandbox->version[0] = '\0';
	if (!shared->driver->version_arg || pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(p[1], 1);
		dup2(nul, 2);
		close_fds_from(3);
		execl(shared->path, shared->path, shared->driver->version_arg, (char *)NULL);
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
	snprintf(sandbox->version, sizeof(sandbox->version), "%s", buf);
}

static void add_mount(struct jail_shared *shared, enum jail_mount_kind k, const char *path,
		      const char *target)
{
	struct jail_mount *m;

	shared->mounts = xreallocarray(shared->mounts, shared->nmounts + 1, sizeof(*shared->mounts));
	m = &shared->mounts[shared->nmounts++];
	m->kind = k;
	m->path = xstrdup(path);
	m->src = xstrdup(path);
	m->target = target ? xstrdup(target) : NULL;
}

/* Match the policy against this host: what exists, and what is a symlink. */
static void resolve_mounts(struct jail_shared *shared)
{
	for (size_t i = 0; i < policy_mounts_count; i++) {
		const struct policy_mount *pm = &policy_mounts[i];
		char target[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (pm->kind == POLICY_MOUNT_SYMLINK) {
			add_mount(shared, JAIL_MOUNT_SYMLINK, pm->path, pm->target);
			continue;
		}
		if (lstat(pm->path, &st) < 0)
			continue;
		if (pm->kind == POLICY_MOUNT_DEVICE) {
			if (S_ISCHR(st.st_mode))
				add_mount(shared, JAIL_MOUNT_DEV_BIND, pm->path, NULL);
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
					add_mount(shared, JAIL_MOUNT_RO_BIND, pm->path, NULL);
				continue;
			}
			add_mount(shared, JAIL_MOUNT_SYMLINK, pm->path, target);
			continue;
		}
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
			add_mount(shared, JAIL_MOUNT_RO_BIND, pm->path, NULL);
	}
}

/* The languages' extra paths, each once. */
static void copy_ro_mounts(struct jail_shared *shared, const char *const *in)
{
	size_t n = 0, k = 0;

	while (in && in[n])
		n++;
	shared->ro_mounts = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp(shared->ro_mounts[j], in[i]) == 0;
		if (!dup)
			shared->ro_mounts[k++] = xstrdup(in[i]);
	}
}

/*
 * The job disk: a tmpfs over the jail directory, capped in bytes and files,
 * seen by this process and the jails it starts only. Its pages are charged
 * to the cgroup of whoever wrote them, and it vanishes with the last
 * process of the namespace, so a crash leaves nothing on the host's disk.
 * Mounts made here must not reach the host: the namespace is made a slave
 * of the host's before anything is mounted (host mounts still show).
 */
static int mount_job_disk(const struct sandbox_opts *o, char *err, size_t errlen)
{
	char opts[96];
	int rc;

	if (unshare(CLONE_NEWNS) < 0) {
		rc = -errno;
		snprintf(err, errlen, "unshare(CLONE_NEWNS) for the job disk: %s", strerror(errno));
		return rc;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "making / a mount slave: %s", strerror(errno));
		return rc;
	}
	snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu,mode=0711",
		 (unsigned long long)o->disk_bytes, (unsigned long long)o->disk_files);
	if (mount("goboxd-jobs", o->jail_dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		rc = -errno;
		snprintf(err, errlen, "mounting the job disk (tmpfs %s) on %s: %s", opts,
			 o->jail_dir, strerror(errno));
		return rc;
	}
	return 0;
}

/*
 * Launching jails needs root's uid but only these; docs/architecture.md
 * says why each one is kept.
 */
int sandbox_keep_caps(void)
{
	static const cap_value_t keep[] = {
		CAP_CHOWN,        /* job directory and files to the sandbox uid */
		CAP_DAC_OVERRIDE, /* remove what the sandbox wrote; cgroupfs */
		CAP_FOWNER,       /* chmod/unlink files owned by the sandbox uid */
		CAP_KILL,         /* kill jailed processes running as the sandbox uid */
		CAP_SETUID,       /* the jail child drops to the sandbox uid */
		CAP_SETGID,
	};

	return caps_keep(keep, ARRAY_SIZE(keep));
}

int sandbox_open(const struct sandbox_opts *o, struct sandbox **out, char *err, size_t errlen)
{
	struct sandbox *sandbox = xcalloc(1, sizeof(*sandbox));
	int rc;

	rc = pick_driver(o, sandbox, err, errlen);
	if (rc == 0)
		rc = find_init(o, sandbox, err, errlen);
	if (rc < 0)
		goto fail;
	if (o->uid == 0 || o->gid == 0) {
		snprintf(err, errlen, "sandbox uid/gid must not be root");
		rc = -EINVAL;
		goto fail;
	}
	if (!o->jail_dir || o->jail_dir[0] != '/') {
		snprintf(err, errlen, "the jail directory must be an absolute path");
		rc = -EINVAL;
		goto fail;
	}
	sandbox->shared.jail_dir = xstrdup(o->jail_dir);
	sandbox->shared.uid = o->uid;
	sandbox->shared.gid = o->gid;
	sandbox->shared.jobs_per_jail = o->jobs_per_jail ? o->jobs_per_jail : 1;
	sandbox->tmpfs_kb = o->tmpfs_kb ? o->tmpfs_kb : 65536;
	sandbox->tmp_files = o->disk_files;
	if (o->disk_bytes) {
		rc = mount_job_disk(o, err, errlen);
		if (rc == 0)
			rc = disks_open(o->jail_dir, o->disk_bytes, o->disk_files,
					&sandbox->shared.disks, err, errlen);
		if (rc < 0)
			goto fail;
		sandbox->disk_quota = true;
	}
	sandbox->cpu = o->has_cpu || o->pin_cpu ? (int)o->cpu : -1;
	sandbox->pin_all = o->pin_cpu;
	rc = seccomp_set_build(&sandbox->shared.seccomp, err, errlen);
	if (rc < 0)
		goto fail;
	rc = cgroup_tree_open(o->cgroup_root, o->cgroup_name, &sandbox->shared.cgroups, err, errlen);
	if (rc < 0)
		goto fail;
	resolve_mounts(&sandbox->shared);
	copy_ro_mounts(&sandbox->shared, o->ro_mounts);
	read_version(sandbox);
	*out = sandbox;
	return 0;
fail:
	sandbox_close(sandbox);
	return rc;
}

void sandbox_close(struct sandbox *sandbox)
{
	struct jail_shared *shared;

	if (!sandbox)
		return;
	shared = &sandbox->shared;
	if (shared->cgroups)
		cgroup_tree_close(shared->cgroups);
	seccomp_set_free(shared->seccomp);
	for (size_t i = 0; i < shared->nmounts; i++) {
		free(shared->mounts[i].path);
		free(shared->mounts[i].src);
		free(shared->mounts[i].target);
	}
	free(shared->mounts);
	strv_free(shared->ro_mounts);
	free(shared->path);
	free(shared->init_path);
	free(shared->jail_dir);
	disks_close(shared->disks);
	free(sandbox);
}

const char *sandbox_driver_name(const struct sandbox *sandbox)
{
	return sandbox->shared.driver->name;
}

const char *sandbox_driver_version(const struct sandbox *sandbox)
{
	return sandbox->version;
}

const char *sandbox_driver_path(const struct sandbox *sandbox)
{
	return sandbox->shared.path;
}

const struct jail_shared *sandbox_jail_shared(const struct sandbox *sandbox)
{
	return &sandbox->shared;
}

void sandbox_step_result_init(struct step_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out, 0);
	buf_init(&r->err, 0);
	buf_init(&r->interleaved, 0);
}

void sandbox_step_result_free(struct step_result *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
	buf_free(&r->interleaved);
}

/* ---- one step: state ---------------------------------------------------- */

struct run {
	struct jail *j;
	struct sandbox *sandbox;
	const struct step_spec *s;
	struct step_result *r;
	struct cgroup_step *cg;
	uint32_t id;
	/* parent ends */
	int in_w, out_r, err_r;
	/* the program's ends and its cgroup.procs files, sent to the init */
	int in_r, out_w, err_w;
	int cgfds[3];
	int ncg;
	int status;
	uint32_t exit_flags;    /* INITMSG_EXITED_* from the init's EXITED */
	bool started, reaped;
	size_t in_off;
	size_t out_cap, err_cap;
	size_t kept_out, kept_err;
	struct outtext_stream cost_out, cost_err; /* for the job's budget */
	bool limited;           /* a cap was hit: everything after is dropped */
	bool killed;
	uint64_t start_ms, deadline_ms, next_cpu_ms, reap_by_ms;
	/* An interactive test's side: stdin and stdout are the caller's pipes
	 * (in_r, out_w, handed to the init), not ours to feed or read. */
	bool dialogue;
	uint32_t run_flags;     /* more INITMSG_RUN_* flags for the RUN message */
	bool cgroup_borrowed;       /* cg is the jail's first cgroup, not ours */
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

/* ---- one step: preparation ---------------------------------------------- */

static int check_spec(struct run *run)
{
	const struct step_spec *s = run->s;

	if (!s->argv || !s->argv[0])
		return internal(run, -EINVAL, "empty argv");
	for (const char *const *p = s->envp; p && *p; p++)
		if (!strchr(*p, '=') || **p == '=')
			return internal(run, -EINVAL, "bad environment entry \"%.100s\"", *p);
	return 0;
}

static int prepare(struct run *run)
{
	const struct step_spec *s = run->s;
	struct cgroup_limits cl = {
		.memory_bytes = s->limits.memory_kb * 1024,
		.pids = s->limits.max_processes,
	};
	uid_t uid = jail_uid(run->j);
	gid_t gid = jail_gid(run->j);
	char err[256] = "";
	int rc = 0;

	if (!run->dialogue) {
		rc = pipe_cloexec(&run->in_r, &run->in_w);
		if (rc == 0)
			rc = pipe_cloexec(&run->out_r, &run->out_w);
	}
	if (rc == 0)
		rc = pipe_cloexec(&run->err_r, &run->err_w);
	if (rc < 0)
		return internal(run, rc, "pipe2: %s", strerror(-rc));
	/*
	 * The pipes were made by the worker; handing the program's ends to the
	 * sandbox uid lets it reopen them by name (/dev/stdin is
	 * /proc/self/fd/0, and opening that checks the pipe's owner).
	 */
	if ((!run->dialogue &&
	     (fchown(run->in_r, uid, gid) < 0 || fchown(run->out_w, uid, gid) < 0)) ||
	    fchown(run->err_w, uid, gid) < 0)
		return internal(run, -errno, "fchown(pipe): %s", strerror(errno));
	if ((!run->dialogue &&
	     (set_nonblock(run->in_w, true) < 0 || set_nonblock(run->out_r, true) < 0)) ||
	    set_nonblock(run->err_r, true) < 0)
		return internal(run, -errno, "fcntl(O_NONBLOCK): %s", strerror(errno));
	/* The jail's programs are born in the cgroup its init entered. */
	run->cg = jail_take_first_cgroup(run->j);
	if (run->cg) {
		run->cgroup_borrowed = true;
		run->run_flags |= INITMSG_RUN_IN_PLACE;
		if (cl.pids)
			cl.pids++;      /* the init waits in it */
		rc = cgroup_step_set_limits(run->cg, &cl, err, sizeof(err));
		return rc < 0 ? internal(run, rc, "cgroup: %s", err) : 0;
	}
	rc = cgroup_step_create(run->sandbox->shared.cgroups, &cl, &run->cg, err, sizeof(err));
	if (rc < 0)
		return internal(run, rc, "cgroup: %s", err);
	rc = cgroup_step_open_procs(run->cg, run->cgfds, ARRAY_SIZE(run->cgfds));
	if (rc < 0)
		return internal(run, rc, "opening the step cgroup: %s", strerror(-rc));
	run->ncg = rc;
	return 0;
}

/* ---- one step: the RUN message ------------------------------------------ */

static uint64_t rl_value(uint64_t v)
{
	return v == RLIM_INFINITY ? UINT64_MAX : v;
}

static void fill_rlimits(struct run *run, struct initmsg_run *m)
{
	const struct limits *l = &run->s->limits;
	struct rlimit cur;
	uint64_t nproc;

	/* A backstop only: the cgroup's CPU usage is what goboxd judges. */
	m->rlimit[INITMSG_RLIMIT_CPU] = l->cpu_ms ? (l->cpu_ms + 999) / 1000 + 1 : UINT64_MAX;
	m->rlimit[INITMSG_RLIMIT_FSIZE] = l->fsize_kb ? l->fsize_kb * 1024 : UINT64_MAX;
	m->rlimit[INITMSG_RLIMIT_NOFILE] = run->s->open_files ? run->s->open_files : POLICY_NOFILE;
	/* RLIMIT_NPROC counts every process of the host uid, and the kernel
	 * releases the count of a torn-down jail lazily: a tight value makes
	 * back-to-back jobs fail with EAGAIN. The cgroup's pids limit is the
	 * real one; this only stops a runaway that somehow escaped it. */
	nproc = (uint64_t)l->max_processes + NPROC_SLACK;
	if (getrlimit(RLIMIT_NPROC, &cur) == 0 && rl_value(cur.rlim_max) < nproc)
		nproc = rl_value(cur.rlim_max);
	m->rlimit[INITMSG_RLIMIT_NPROC] = nproc;
	m->rlimit[INITMSG_RLIMIT_CORE] = 0;
	/* Nothing to pin: locked memory only helps a program starve others. */
	m->rlimit[INITMSG_RLIMIT_MEMLOCK] = 0;
}

/* argv[0] as the init must exec it: relative means under the box. */
static void put_argv0(struct buf *b, const char *a0)
{
	if (a0[0] != '/') {
		buf_puts(b, JAILPATH_BOX "/");
		while (a0[0] == '.' && a0[1] == '/')
			a0 += 2;
	}
	buf_append(b, a0, strlen(a0) + 1);
}

static int send_run(struct run *run)
{
	const struct step_spec *s = run->s;
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_RUN, run->id, 0 };
	struct tmp_size tmp;
	struct initmsg_run m = {
		.flags = INITMSG_RUN_FRESH_TMP | (s->tmp_exec ? 0 : INITMSG_RUN_TMP_NOEXEC) |
			 run->run_flags,
		.uid = POLICY_INSIDE_UID,
		.gid = POLICY_INSIDE_GID,
		.ncgroup = (uint32_t)run->ncg,
		.cpu = run->sandbox->pin_all || s->pin_cpu ? run->sandbox->cpu : -1,
	};
	int fds[INITMSG_MAX_FDS] = { run->in_r, run->out_w, run->err_w };
	struct buf b;
	struct iovec iov;
	size_t nfds = 3 + (size_t)run->ncg;
	ssize_t n;
	int rc = 0;

	rc = check_spec(run);
	if (rc < 0)
		goto out_fds;
	for (int i = 0; i < run->ncg; i++)
		fds[3 + i] = run->cgfds[i];
	fill_rlimits(run, &m);
	limits_tmp(&s->limits, run->sandbox->tmpfs_kb, run->sandbox->tmp_files, &tmp);
	m.tmp_bytes = tmp.bytes;
	m.tmp_inodes = tmp.files;
	for (const char *const *p = s->argv; *p; p++)
		m.argc++;
	for (const char *const *p = s->envp; p && *p; p++)
		m.envc++;
	/* No limit on the buffer itself: a cut message would reach the init
	 * as a malformed RUN. The protocol's cap is checked below; what
	 * validation lets through (64 flags of 256 bytes, the file names,
	 * the language's arguments and environment) stays far under it. */
	buf_init(&b, 0);
	buf_append(&b, &h, sizeof(h));
	buf_append(&b, &m, sizeof(m));
	buf_append(&b, JAILPATH_BOX, sizeof(JAILPATH_BOX));
	put_argv0(&b, s->argv[0]);
	for (size_t i = 1; i < m.argc; i++)
		buf_append(&b, s->argv[i], strlen(s->argv[i]) + 1);
	for (const char *const *p = s->envp; p && *p; p++)
		buf_append(&b, *p, strlen(*p) + 1);
	if (b.len > INITMSG_MAX) {
		rc = internal(run, -E2BIG, "command line and environment exceed %d bytes",
			      INITMSG_MAX);
		goto out;
	}
	h.len = (uint32_t)(b.len - sizeof(h));
	memcpy(b.data, &h, sizeof(h));
	iov.iov_base = b.data;
	iov.iov_len = b.len;
	run->start_ms = now_ms();
	n = send_fds(jail_sock(run->j), &iov, 1, fds, nfds);
	if (n < 0) {
		jail_break(run->j);
		rc = internal(run, (int)n, "sending to the jail's init: %s", strerror((int)-n));
	}
out:
	buf_free(&b);
out_fds:
	/* The init holds them now (or nobody needs them). */
	close_fd(&run->in_r);
	close_fd(&run->out_w);
	close_fd(&run->err_w);
	for (int i = 0; i < run->ncg; i++)
		close_fd(&run->cgfds[i]);
	return rc;
}

/* ---- one step: the parent loop ------------------------------------------ */

static void kill_step(struct run *run)
{
	if (run->killed)
		return;
	run->killed = true;
	run->reap_by_ms = now_ms() + REAP_GRACE_MS;
	cgroup_step_kill(run->cg);
}

/* Killed for a time limit, the wall clock's or the CPU's. */
static void time_out(struct run *run)
{
	run->r->outcome.timed_out = true;
	kill_step(run);
}

/* A deadline (0: none) that has come. */
static bool past(uint64_t deadline_ms, uint64_t now)
{
	return deadline_ms && now >= deadline_ms;
}

/* The time limit on the CPU: us, its cgroup's CPU time, is over it. */
static bool over_cpu_limit(const struct run *run, uint64_t us)
{
	return run->s->limits.cpu_ms && us > (uint64_t)run->s->limits.cpu_ms * 1000;
}

/*
 * How a reaped program ended, into o: its wait status, which its init
 * reports (nothing to guess), and its limits as its cgroup tells them. The
 * memory limit is what the kernel did, not how close the usage came: on
 * cgroup v1 the usage and its failure count include page cache, which the
 * kernel reclaims at the limit instead of killing anything. What goboxd
 * stopped while it ran (a deadline, a cap) is in o already.
 */
static void read_end(const struct run *run, const struct cgroup_stats *st, struct run_outcome *o)
{
	if (over_cpu_limit(run, st->cpu_us))
		o->timed_out = true;
	if (WIFEXITED(run->status)) {
		o->exited = true;
		o->exit_code = WEXITSTATUS(run->status);
	} else if (WIFSIGNALED(run->status)) {
		o->term_signal = WTERMSIG(run->status);
	}
	o->oom = st->oom_killed;
}

/* A program killed but not reported dead in time: its init is broken. */
static int reap_overdue(struct run *run, uint64_t now)
{
	if (!run->killed || run->reaped || now < run->reap_by_ms)
		return 0;
	jail_break(run->j);
	return internal(run, -ETIMEDOUT, "the jail's init did not report the program's end");
}

/* Milliseconds from now to next, for poll. */
static int poll_ms(uint64_t next, uint64_t now)
{
	return next > now ? (int)(next - now) : 0;
}

/* next becomes t when t (0: none) comes earlier. */
static void min_at(uint64_t *next, uint64_t t)
{
	if (t && t < *next)
		*next = t;
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
	if (run->s->budget)
		take = outtext_take(run->s->budget, is_err ? &run->cost_err : &run->cost_out, data,
				    take);
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
			capture(run, *fd == run->err_r, chunk, (size_t)n);
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

/* One message from the init. 0, or negative errno (internal error set). */
static int init_message(struct run *run)
{
	struct {
		struct initmsg_hdr h;
		union {
			struct initmsg_started started;
			struct initmsg_failed failed;
			struct initmsg_exited exited;
		} u;
	} m;
	ssize_t n;

	do
		n = recv(jail_sock(run->j), &m, sizeof(m), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0) {
		jail_break(run->j);
		return internal(run, -EIO, "the jail's init died");
	}
	if (n < (ssize_t)sizeof(m.h) || m.h.magic != INITMSG_MAGIC ||
	    m.h.len != (size_t)n - sizeof(m.h)) {
		jail_break(run->j);
		return internal(run, -EPROTO, "the jail's init sent a malformed message");
	}
	if (m.h.id != run->id) {
		/* A FAILED with id 0 answers the FILTER message. */
		if (m.h.id == 0 && m.h.type == INITMSG_FAILED) {
			jail_break(run->j);
			return internal(run, -EPROTO, "the jail's init refused the seccomp filter");
		}
		return 0;       /* an answer about an earlier step */
	}
	switch (m.h.type) {
	case INITMSG_STARTED:
		run->started = true;
		return 0;
	case INITMSG_EXITED:
		if (m.h.len != sizeof(m.u.exited))
			break;
		run->status = m.u.exited.status;
		run->exit_flags = m.u.exited.flags;
		run->r->memory_rss_peak_kb = m.u.exited.maxrss_kb;
		run->reaped = true;
		return 0;
	case INITMSG_FAILED:
		if (m.h.len != sizeof(m.u.failed))
			break;
		run->reaped = true;
		return internal(run, -m.u.failed.err ? -m.u.failed.err : -EIO,
				"starting %s: %s: %s", run->s->argv[0],
				initmsg_stage_name(m.u.failed.stage), strerror(m.u.failed.err));
	default:
		break;
	}
	jail_break(run->j);
	return internal(run, -EPROTO, "the jail's init sent an unexpected message");
}

/* Kill the step when us, its CPU time, is over its limit. */
static void cpu_limit(struct run *run, uint64_t us)
{
	if (over_cpu_limit(run, us))
		time_out(run);
}

static void check_cpu(struct run *run)
{
	uint64_t us;

	if (run->s->limits.cpu_ms && cgroup_step_cpu_us(run->cg, &us) == 0)
		cpu_limit(run, us);
}

static int next_timeout(struct run *run, uint64_t now)
{
	uint64_t next = run->next_cpu_ms;

	min_at(&next, run->killed ? run->reap_by_ms : run->deadline_ms);
	return poll_ms(next, now);
}

/* The job's cancel descriptor, watched until it has fired once. */
static bool watch_cancel(const struct run *run)
{
	return run->s->cancel_fd > 0 && !run->r->cancelled;
}

static int run_loop(struct run *run)
{
	uint64_t now = now_ms();
	int rc;

	run->deadline_ms = run->s->limits.wall_ms ? run->start_ms + run->s->limits.wall_ms : 0;
	run->next_cpu_ms = now + CPU_POLL_MS;
	if (run->s->stdin_len == 0)
		close_fd(&run->in_w);
	while (!run->reaped) {
		struct pollfd pf[5];
		int nf = 0;

		if (watch_cancel(run))
			pf[nf++] = (struct pollfd){ .fd = run->s->cancel_fd, .events = POLLIN };
		if (run->in_w >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->in_w, .events = POLLOUT };
		if (run->out_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
		if (run->err_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
		pf[nf++] = (struct pollfd){ .fd = jail_sock(run->j), .events = POLLIN };
		if (poll(pf, (nfds_t)nf, next_timeout(run, now)) < 0 && errno != EINTR)
			return internal(run, -errno, "poll: %s", strerror(errno));
		for (int i = 0; i < nf; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == run->s->cancel_fd) {
				run->r->cancelled = true;
				kill_step(run);
			} else if (pf[i].fd == run->in_w) {
				pump_stdin(run);
			} else if (pf[i].fd == run->out_r) {
				pump_read(run, &run->out_r);
			} else if (pf[i].fd == run->err_r) {
				pump_read(run, &run->err_r);
			} else {
				rc = init_message(run);
				if (rc < 0)
					return rc;
			}
		}
		now = now_ms();
		if (past(run->deadline_ms, now) && !run->killed)
			time_out(run);
		if (now >= run->next_cpu_ms) {
			check_cpu(run);
			cgroup_step_sample(run->cg);
			run->next_cpu_ms = now + CPU_POLL_MS;
		}
		rc = reap_overdue(run, now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* After the program is gone: end what is left and read the pipes to EOF. */
static void drain(struct run *run)
{
	uint64_t until = now_ms() + DRAIN_MS;

	cgroup_step_kill(run->cg);
	close_fd(&run->in_w);
	while (run->out_r >= 0 || run->err_r >= 0) {
		struct pollfd pf[2];
		int nf = 0;
		uint64_t now = now_ms();

		if (now >= until)
			break;
		if (run->out_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
		if (run->err_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
		if (poll(pf, (nfds_t)nf, (int)(until - now)) <= 0)
			continue;
		for (int i = 0; i < nf; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == run->out_r)
				pump_read(run, &run->out_r);
			else
				pump_read(run, &run->err_r);
		}
	}
}

/* ---- one step: the outcome ---------------------------------------------- */

/* The job disk is full (what a program left stays until the next
 * restore): the jail's own (disks.h), or the worker's. */
static bool disk_full(const struct run *run)
{
	struct statvfs sv;

	return run->sandbox->disk_quota && statvfs(jail_box_dir(run->j), &sv) == 0 &&
	       initmsg_fs_full(&sv);
}

static int finish(struct run *run)
{
	struct step_result *r = run->r;
	struct run_outcome *o = &r->outcome;
	struct cgroup_stats st;
	int rc;

	r->wall_ms = now_ms() - run->start_ms;
	rc = cgroup_step_stats(run->cg, &st);
	if (rc < 0)
		return internal(run, rc, "reading the step cgroup: %s", strerror(-rc));
	r->cpu_ms = st.cpu_us / 1000;
	r->memory_peak_kb = st.memory_peak_bytes / 1024;
	read_end(run, &st, o);
	o->disk_full = (run->exit_flags & INITMSG_EXITED_TMP_FULL) || disk_full(run);
	return 0;
}

/* The sandbox of a jail it started: what the jail was given is the first
 * member of its sandbox. */
static struct sandbox *sandbox_of(const struct jail *j)
{
	return (struct sandbox *)((char *)jail_shared_of(j) - offsetof(struct sandbox, shared));
}

/* A run of step s in jail j into r, nothing started yet. */
static void run_init(struct run *run, struct jail *j, const struct step_spec *s,
		     struct step_result *r)
{
	uint64_t dflt = s->limits.output_kb ? s->limits.output_kb * 1024 : FALLBACK_OUTPUT_CAP;

	*run = (struct run){
		.j = j, .sandbox = sandbox_of(j), .s = s, .r = r,
		.in_w = -1, .out_r = -1, .err_r = -1,
		.in_r = -1, .out_w = -1, .err_w = -1,
		.cgfds = { -1, -1, -1 },
	};
	buf_reset(&r->out);
	buf_reset(&r->err);
	buf_reset(&r->interleaved);
	memset(&r->outcome, 0, sizeof(r->outcome));
	r->out_truncated = r->err_truncated = false;
	r->wall_ms = r->cpu_ms = r->memory_peak_kb = r->memory_rss_peak_kb = 0;
	r->internal_msg[0] = '\0';
	run->out_cap = s->stdout_cap ? s->stdout_cap : (size_t)dflt;
	run->err_cap = s->stderr_cap ? s->stderr_cap : (size_t)dflt;
}

/* Whatever is left of a run: its cgroup (and anything in it), its fds. */
static void run_release(struct run *run)
{
	int *fds[] = { &run->in_w, &run->out_r, &run->err_r, &run->in_r, &run->out_w,
		       &run->err_w, &run->cgfds[0], &run->cgfds[1], &run->cgfds[2] };

	/* A borrowed cgroup stays with its jail, the init in it, and serves
	 * the next program once this one's processes are gone. */
	if (run->cg && run->cgroup_borrowed) {
		if (cgroup_step_kill(run->cg) == 0)
			jail_give_back_first_cgroup(run->j);
	} else if (run->cg)
		cgroup_step_destroy(run->cg);
	run->cg = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		close_fd(fds[i]);
}

/*
 * A program that stops reading its stdin (or a protocol client that goes
 * away before its answer) must not kill the worker with SIGPIPE: keep it
 * pending while the step runs and discard it after.
 */
static void sigpipe_only(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGPIPE);
}

static void sigpipe_hold(sigset_t *old)
{
	sigset_t pipe_set;

	sigpipe_only(&pipe_set);
	pthread_sigmask(SIG_BLOCK, &pipe_set, old);
}

static void sigpipe_release(const sigset_t *old)
{
	const struct timespec zero = { 0, 0 };
	sigset_t pipe_set;

	sigpipe_only(&pipe_set);
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int sandbox_run(struct jail *j, const struct step_spec *s, struct step_result *r)
{
	struct run run;
	char err[256];
	sigset_t old;
	int rc;

	run_init(&run, j, s, r);
	rc = jail_ready(j, JAIL_READY_MS, err, sizeof(err));
	if (rc < 0)
		return internal(&run, rc, "%s", err);
	run.id = jail_next_id(j);

	sigpipe_hold(&old);
	rc = prepare(&run);
	if (rc == 0)
		rc = send_run(&run);
	if (rc == 0)
		rc = run_loop(&run);
	if (rc == 0) {
		drain(&run);
		rc = finish(&run);
	}
	run_release(&run);
	sigpipe_release(&old);
	return rc;
}

int sandbox_run_once(struct sandbox *sandbox, const char *box_dir, const struct step_spec *s,
		     struct step_result *r)
{
	struct jail *j = NULL;
	char err[256];
	int rc = jail_start(&sandbox->shared, box_dir, &j, err, sizeof(err));

	if (rc < 0) {
		memset(&r->outcome, 0, sizeof(r->outcome));
		r->outcome.internal_error = true;
		snprintf(r->internal_msg, sizeof(r->internal_msg), "%s", err);
		return rc;
	}
	rc = sandbox_run(j, s, r);
	jail_destroy(j);
	return rc;
}

/* ---- an interactive test ------------------------------------------------ */

/* After the solution has ended, the interactor may go on until the wall
 * limit or this long, whichever comes later. */
#define INTERACT_TAIL_MS 1000
/*
 * A deadlock is told at the wall limit: over the last IDLE_WINDOW_MS (half
 * the run when it is shorter, so that start-up does not count) both sides
 * together used at most IDLE_CPU_PERMILLE of one CPU. Blocked in read,
 * they use none.
 */
#define IDLE_WINDOW_MS 500
#define IDLE_CPU_PERMILLE 20
#define IDLE_SAMPLES 32

struct cpu_sample {
	uint64_t ms;
	uint64_t us;            /* both sides' CPU time together */
};

struct pair {
	struct run solution, interactor;
	const struct interact_spec *s;
	struct interact_result *r;
	struct procctl *procctl;
	uint64_t deadline_ms;   /* the pair's wall limit, 0: none */
	uint64_t interactor_deadline_ms; /* set when the solution has ended */
	uint64_t term_at_ms;    /* end of the terminate grace, 0: none */
	uint64_t next_cpu_ms;
	uint64_t loop_start_ms;
	bool solution_end_seen, interactor_end_seen;
	struct cpu_sample samples[IDLE_SAMPLES];
	size_t nsamples;
};

void sandbox_interact_result_init(struct interact_result *r)
{
	memset(r, 0, sizeof(*r));
	sandbox_step_result_init(&r->solution);
	sandbox_step_result_init(&r->interactor);
}

void sandbox_interact_result_free(struct interact_result *r)
{
	sandbox_step_result_free(&r->solution);
	sandbox_step_result_free(&r->interactor);
}

static uint64_t both_cpu_us(const struct pair *pair)
{
	uint64_t a = 0, b = 0;

	cgroup_step_cpu_us(pair->solution.cg, &a);
	cgroup_step_cpu_us(pair->interactor.cg, &b);
	return a + b;
}

static void push_sample(struct pair *pair, uint64_t now, uint64_t us)
{
	pair->samples[pair->nsamples++ % IDLE_SAMPLES] = (struct cpu_sample){ now, us };
}

static bool was_idle(const struct pair *pair, uint64_t now)
{
	uint64_t window = (now - pair->loop_start_ms) / 2;
	const struct cpu_sample *best = NULL;
	size_t n = pair->nsamples < IDLE_SAMPLES ? pair->nsamples : IDLE_SAMPLES;

	if (window > IDLE_WINDOW_MS)
		window = IDLE_WINDOW_MS;
	/* the newest sample at least a window old */
	for (size_t i = 0; i < n; i++) {
		const struct cpu_sample *c = &pair->samples[i];

		if (c->ms + window <= now && (!best || c->ms > best->ms))
			best = c;
	}
	if (!best || now == best->ms)
		return false;
	return (both_cpu_us(pair) - best->us) <= (now - best->ms) * IDLE_CPU_PERMILLE;
}

/* ---- the protocol's view of the solution -------------------------------- */

/*
 * The solution's state: running, or its end as its verdict will read it
 * (read_end's limits, in verdict_for_test's order), unless goboxd ended
 * it for a terminate wait.
 */
static void protocol_status(void *arg, struct procctl_status *st)
{
	struct pair *pair = arg;
	struct run *run = &pair->solution;
	struct run_outcome o = run->r->outcome;
	struct cgroup_stats cs;

	cgroup_step_cpu_us(run->cg, &st->cpu_us);
	cgroup_step_memory_now(run->cg, &st->memory_bytes);
	st->state = PCS_RUNNING;
	if (!run->reaped)
		return;
	if (pair->r->terminated) {
		st->state = PCS_TERMINATED;
		return;
	}
	if (cgroup_step_stats(run->cg, &cs) < 0)
		cs = (struct cgroup_stats){ 0 };
	read_end(run, &cs, &o);
	switch (verdict_for_test(&o, false, CMP_EQUAL)) {
	case TS_MEMORY_EXCEEDED:
		st->state = PCS_MEMORY;
		return;
	case TS_TIME_EXCEEDED:
		st->state = PCS_TIME;
		return;
	case TS_WRONG_OUTPUT:   /* with nothing to compare: the output cap */
		st->state = PCS_OUTPUT;
		return;
	default:
		break;
	}
	st->state = o.exited ? PCS_EXITED : PCS_SIGNALED;
	st->code = o.exited ? o.exit_code : o.term_signal;
}

static void protocol_terminate(void *arg)
{
	struct pair *pair = arg;

	if (!pair->solution.reaped && !pair->term_at_ms)
		pair->term_at_ms = now_ms() + SANDBOX_TERMINATE_GRACE_MS;
}

static bool protocol_ended(void *arg)
{
	const struct pair *pair = arg;

	return pair->solution.reaped;
}

static const struct procctl_ops protocol_ops = { protocol_status, protocol_terminate,
						 protocol_ended };

/* ---- the loop ------------------------------------------------------------ */

static int pair_timeout(const struct pair *pair, uint64_t now)
{
	uint64_t next = pair->next_cpu_ms;

	if (!pair->solution.killed && !pair->solution.reaped) {
		min_at(&next, pair->deadline_ms);
		min_at(&next, pair->term_at_ms);
	}
	if (pair->solution.reaped && !pair->interactor.killed)
		min_at(&next, pair->interactor_deadline_ms);
	if (pair->solution.killed && !pair->solution.reaped)
		min_at(&next, pair->solution.reap_by_ms);
	if (pair->interactor.killed && !pair->interactor.reaped)
		min_at(&next, pair->interactor.reap_by_ms);
	return poll_ms(next, now);
}

/* The interactor's exit lets the solution run on. */
static bool solution_continues(const struct pair *pair)
{
	const struct run *interactor = &pair->interactor;
	const struct run_outcome *o = &interactor->r->outcome;
	int code;

	if (!WIFEXITED(interactor->status) || o->timed_out || o->output_limited)
		return false;
	code = WEXITSTATUS(interactor->status);
	return code < 32 && (pair->s->solution_continues & (1u << code));
}

static void pair_ends(struct pair *pair, uint64_t now)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;

	if (solution->reaped && !pair->solution_end_seen) {
		pair->solution_end_seen = true;
		pair->interactor_deadline_ms = now + INTERACT_TAIL_MS;
		if (pair->deadline_ms > pair->interactor_deadline_ms)
			pair->interactor_deadline_ms = pair->deadline_ms;
	}
	if (interactor->reaped && !pair->interactor_end_seen) {
		pair->interactor_end_seen = true;
		if (!solution->reaped && !solution->killed && !solution_continues(pair)) {
			pair->r->stopped = true;
			kill_step(solution);
		}
	}
}

static void pair_timers(struct pair *pair, uint64_t now)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;

	if (past(pair->term_at_ms, now) && !solution->reaped && !solution->killed) {
		pair->r->terminated = true;
		kill_step(solution);
	}
	if (past(pair->deadline_ms, now) && !solution->reaped && !solution->killed) {
		if (!interactor->reaped) {
			pair->r->wall_limit = true;
			pair->r->idle = was_idle(pair, now);
			kill_step(interactor);
		}
		time_out(solution);
	}
	if (solution->reaped && !interactor->reaped && !interactor->killed &&
	    now >= pair->interactor_deadline_ms)
		time_out(interactor);
	if (now >= pair->next_cpu_ms) {
		/* one reading of each side serves its limit and the idle check */
		uint64_t su = 0, iu = 0;

		cgroup_step_cpu_us(solution->cg, &su);
		cgroup_step_cpu_us(interactor->cg, &iu);
		if (!solution->reaped)
			cpu_limit(solution, su);
		if (!interactor->reaped)
			cpu_limit(interactor, iu);
		cgroup_step_sample(solution->cg);
		cgroup_step_sample(interactor->cg);
		push_sample(pair, now, su + iu);
		pair->next_cpu_ms = now + CPU_POLL_MS;
	}
}

/*
 * A kill finds the solution dying on its own when its init had not yet
 * reported the end (a process frees its memory before its parent learns of
 * its death): then goboxd did not stop or terminate it, its own end stands.
 * Only SIGKILL is goboxd's.
 */
static void solution_reaped(struct pair *pair)
{
	int st = pair->solution.status;

	if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
		pair->r->stopped = pair->r->terminated = false;
}

static int pair_events(struct pair *pair, const struct pollfd *pf, int nf)
{
	bool serve = false;
	int rc = 0;

	for (int i = 0; i < nf && rc == 0; i++) {
		int fd = pf[i].fd;

		if (!pf[i].revents)
			continue;
		if (!pair->solution.reaped && fd == jail_sock(pair->solution.j)) {
			rc = init_message(&pair->solution);
			if (pair->solution.reaped)
				solution_reaped(pair);
		} else if (!pair->interactor.reaped && fd == jail_sock(pair->interactor.j))
			rc = init_message(&pair->interactor);
		else if (fd == pair->solution.err_r)
			pump_read(&pair->solution, &pair->solution.err_r);
		else if (fd == pair->interactor.err_r)
			pump_read(&pair->interactor, &pair->interactor.err_r);
		else if (pair->procctl && procctl_owns_fd(pair->procctl, fd))
			serve = true;
		else if (fd == pair->solution.s->cancel_fd && watch_cancel(&pair->solution)) {
			/* the client went away: both sides go */
			pair->solution.r->cancelled = pair->interactor.r->cancelled = true;
			if (!pair->solution.reaped)
				kill_step(&pair->solution);
			if (!pair->interactor.reaped)
				kill_step(&pair->interactor);
		}
	}
	if (rc == 0 && pair->procctl && (serve || pair->solution.reaped))
		procctl_service(pair->procctl);
	return rc;
}

static void poll_in(struct pollfd *pf, int *nf, int fd)
{
	pf[(*nf)++] = (struct pollfd){ .fd = fd, .events = POLLIN };
}

static int pair_loop(struct pair *pair)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;
	uint64_t now = now_ms();
	int rc;

	pair->deadline_ms = pair->s->wall_ms ? solution->start_ms + pair->s->wall_ms : 0;
	pair->next_cpu_ms = now + CPU_POLL_MS;
	pair->loop_start_ms = now;
	push_sample(pair, now, both_cpu_us(pair));
	while (!(solution->reaped && interactor->reaped)) {
		struct pollfd pf[7];
		int nf = 0;

		if (watch_cancel(solution))
			poll_in(pf, &nf, solution->s->cancel_fd);
		if (!solution->reaped)
			poll_in(pf, &nf, jail_sock(solution->j));
		if (!interactor->reaped)
			poll_in(pf, &nf, jail_sock(interactor->j));
		if (solution->err_r >= 0)
			poll_in(pf, &nf, solution->err_r);
		if (interactor->err_r >= 0)
			poll_in(pf, &nf, interactor->err_r);
		if (pair->procctl)
			nf += procctl_pollfds(pair->procctl, pf + nf);
		if (poll(pf, (nfds_t)nf, pair_timeout(pair, now)) < 0 && errno != EINTR)
			return internal(solution, -errno, "poll: %s", strerror(errno));
		rc = pair_events(pair, pf, nf);
		if (rc < 0)
			return rc;
		now = now_ms();
		pair_ends(pair, now);
		pair_timers(pair, now);
		rc = reap_overdue(solution, now);
		if (rc == 0)
			rc = reap_overdue(interactor, now);
		if (rc < 0)
			return rc;
	}
	/* a terminate answer waits for the end, which has come */
	if (pair->procctl)
		procctl_service(pair->procctl);
	return 0;
}

/* ---- set-up -------------------------------------------------------------- */

/*
 * The two pipes of the dialogue, handed to the inits (the worker keeps no
 * end). Each end belongs to a program of another uid, and both ends share
 * one inode, so no single owner lets both sides reopen their end by name
 * (/dev/stdin): the inode is opened to all instead. Only a process that
 * may look into the owner's /proc/<pid>/fd could name it.
 */
static int dialogue_pipes(struct pair *pair)
{
	/* solution -> interactor, then interactor -> solution; run_release
	 * closes whatever was made */
	int rc = pipe_cloexec(&pair->interactor.in_r, &pair->solution.out_w);

	if (rc == 0)
		rc = pipe_cloexec(&pair->solution.in_r, &pair->interactor.out_w);
	if (rc < 0)
		return internal(&pair->solution, rc, "pipe2: %s", strerror(-rc));
	if (fchmod(pair->interactor.in_r, 0666) < 0 || fchmod(pair->solution.in_r, 0666) < 0)
		return internal(&pair->solution, -errno, "fchmod(pipe): %s", strerror(errno));
	return 0;
}

static int pair_ready(struct pair *pair)
{
	char err[256];
	int rc = jail_ready(pair->solution.j, JAIL_READY_MS, err, sizeof(err));

	if (rc < 0)
		return internal(&pair->solution, rc, "%s", err);
	rc = jail_ready(pair->interactor.j, JAIL_READY_MS, err, sizeof(err));
	if (rc < 0)
		return internal(&pair->interactor, rc, "the interactor's jail: %s", err);
	pair->solution.id = jail_next_id(pair->solution.j);
	pair->interactor.id = jail_next_id(pair->interactor.j);
	return 0;
}

static int pair_protocol(struct pair *pair)
{
	struct run *interactor = &pair->interactor;
	struct jobdir *ctl = jail_control_dir(interactor->j);
	char err[256];
	int rc;

	if (!pair->s->protocol)
		return 0;
	if (!ctl)
		return internal(interactor, -EINVAL,
				"the interactor's jail has no control directory");
	rc = procctl_start(ctl->fd, jail_uid(interactor->j), jail_gid(interactor->j), &protocol_ops,
			   pair, &pair->procctl, err, sizeof(err));
	if (rc < 0)
		return internal(interactor, rc, "%s", err);
	return 0;
}

int sandbox_interact(struct jail *solution_jail, struct jail *interactor_jail,
		     const struct interact_spec *s, struct interact_result *r)
{
	struct pair pair;
	sigset_t old;
	int rc;

	memset(&pair, 0, sizeof(pair));
	pair.s = s;
	pair.r = r;
	r->terminated = r->stopped = r->wall_limit = r->idle = false;
	r->protocol_errors = 0;
	r->protocol_error[0] = '\0';
	run_init(&pair.solution, solution_jail, s->solution, &r->solution);
	run_init(&pair.interactor, interactor_jail, s->interactor, &r->interactor);
	pair.solution.dialogue = pair.interactor.dialogue = true;
	/* An interactor writing to a solution that has gone gets EPIPE, and
	 * says so, instead of dying as if it had failed. */
	pair.interactor.run_flags = INITMSG_RUN_SIGPIPE_IGNORED;

	rc = pair_ready(&pair);
	if (rc < 0)
		return rc;
	sigpipe_hold(&old);
	rc = dialogue_pipes(&pair);
	if (rc == 0)
		rc = prepare(&pair.solution);
	if (rc == 0)
		rc = prepare(&pair.interactor);
	if (rc == 0)
		rc = pair_protocol(&pair);
	if (rc == 0)
		rc = send_run(&pair.solution);
	if (rc == 0)
		rc = send_run(&pair.interactor);
	if (rc == 0)
		rc = pair_loop(&pair);
	if (rc == 0) {
		drain(&pair.solution);
		drain(&pair.interactor);
		rc = finish(&pair.solution);
		if (rc == 0)
			rc = finish(&pair.interactor);
	}
	if (pair.procctl) {
		r->protocol_errors = procctl_errors(pair.procctl);
		snprintf(r->protocol_error, sizeof(r->protocol_error), "%s",
			 procctl_last_error(pair.procctl));
		procctl_stop(pair.procctl);
	}
	run_release(&pair.solution);
	run_release(&pair.interactor);
	sigpipe_release(&old);
	return rc;
}
