#include "autoconf.h"

/*
 * One program in a jail: its cgroup and pipes, the RUN message to the
 * jail's init, the loop that feeds and reads it and watches its limits,
 * and its outcome (sandbox_run, sandbox_run_once). Its steps are
 * sandbox_run.h's, for an interactive test to drive two runs at once.
 */
#include "worker/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "common/limits.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/network.h"
#include "worker/sandbox/procctl.h"
#include "worker/sandbox/sandbox_ctx.h"
#include "worker/sandbox/sandbox_run.h"

#define DRAIN_MS 1000
/* After a kill, how long the init may take to report the exit. */
#define REAP_GRACE_MS 2000
#define FALLBACK_OUTPUT_CAP (1024 * 1024)
#define NPROC_SLACK 8192

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

int sandbox_run_internal(struct run *run, int rc, const char *fmt, ...)
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
		return sandbox_run_internal(run, -EINVAL, "empty argv");
	for (const char *const *p = s->envp; p && *p; p++)
		if (!strchr(*p, '=') || **p == '=')
			return sandbox_run_internal(run, -EINVAL, "bad environment entry \"%.100s\"", *p);
	return 0;
}

/* The program's stdin, stdout and stderr: three pipes. */
static int open_pipes(struct run *run)
{
	uid_t uid = jail_uid(run->j);
	gid_t gid = jail_gid(run->j);
	int rc = 0;

	if (!run->dialogue) {
		rc = pipe_cloexec(&run->in_r, &run->in_w);
		if (rc == 0)
			rc = pipe_cloexec(&run->out_r, &run->out_w);
	}
	if (rc == 0)
		rc = pipe_cloexec(&run->err_r, &run->err_w);
	if (rc < 0)
		return sandbox_run_internal(run, rc, "pipe2: %s", strerror(-rc));
	/*
	 * The pipes were made by the worker; handing the program's ends to the
	 * sandbox uid lets it reopen them by name (/dev/stdin is
	 * /proc/self/fd/0, and opening that checks the pipe's owner).
	 */
	if ((!run->dialogue &&
	     (fchown(run->in_r, uid, gid) < 0 || fchown(run->out_w, uid, gid) < 0)) ||
	    fchown(run->err_w, uid, gid) < 0)
		return sandbox_run_internal(run, -errno, "fchown(pipe): %s", strerror(errno));
	if ((!run->dialogue &&
	     (set_nonblock(run->in_w, true) < 0 || set_nonblock(run->out_r, true) < 0)) ||
	    set_nonblock(run->err_r, true) < 0)
		return sandbox_run_internal(run, -errno, "fcntl(O_NONBLOCK): %s", strerror(errno));
	/* both ends the worker's: the init may hold them (sandbox_run_drain);
	 * a dialogue's stdout is the other program's stdin, and its end of
	 * file that program's to see when this one closes it */
	if (!run->dialogue)
		run->run_flags |= INITMSG_RUN_HOLD_OUTPUT;
	return 0;
}

/*
 * A live session's terminal: a new pseudo-terminal of the worker's, its
 * program side (TIOCGPTPEER: no name is looked up) as the program's
 * stdin, stdout and stderr, owned by the sandbox uid as the pipes are,
 * its size the client's. The program takes it as its controlling
 * terminal (INITMSG_RUN_TTY); the terminal's side, non-blocking, is the
 * loop's stdin and stdout both.
 */
static int open_terminal(struct run *run)
{
	struct winsize ws = { .ws_row = run->tty->rows, .ws_col = run->tty->cols };
	int ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), pts = -1;

	if (ptm < 0)
		return sandbox_run_internal(run, -errno, "posix_openpt: %s", strerror(errno));
	run->in_w = ptm;
	if (unlockpt(ptm) < 0 || ioctl(ptm, TIOCSWINSZ, &ws) < 0 ||
	    (pts = ioctl(ptm, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return sandbox_run_internal(run, -errno, "a terminal: %s", strerror(errno));
	run->in_r = pts;
	if (fchown(pts, jail_uid(run->j), jail_gid(run->j)) < 0)
		return sandbox_run_internal(run, -errno, "fchown(terminal): %s", strerror(errno));
	run->out_w = fcntl(pts, F_DUPFD_CLOEXEC, 0);
	run->err_w = run->out_w < 0 ? -1 : fcntl(pts, F_DUPFD_CLOEXEC, 0);
	run->out_r = run->err_w < 0 ? -1 : fcntl(ptm, F_DUPFD_CLOEXEC, 0);
	if (run->out_r < 0)
		return sandbox_run_internal(run, -errno, "dup(terminal): %s", strerror(errno));
	if (set_nonblock(ptm, true) < 0)
		return sandbox_run_internal(run, -errno, "fcntl(O_NONBLOCK): %s", strerror(errno));
	run->run_flags |= INITMSG_RUN_TTY;
	return 0;
}

int sandbox_run_prepare(struct run *run)
{
	const struct step_spec *s = run->s;
	struct cgroup_limits cl = {
		.memory_bytes = s->limits.memory_kb * 1024,
		.pids = s->limits.max_processes,
	};
	char err[256] = "";
	int rc;

	rc = run->tty ? open_terminal(run) : open_pipes(run);
	if (rc < 0)
		return rc;
	/* The jail's programs are born in the cgroup its init entered. */
	run->cg = jail_take_first_cgroup(run->j);
	if (run->cg) {
		run->cgroup_borrowed = true;
		run->run_flags |= INITMSG_RUN_IN_PLACE;
		if (cl.pids)
			cl.pids++;      /* the init waits in it */
		rc = cgroup_step_set_limits(run->cg, &cl, err, sizeof(err));
		return rc < 0 ? sandbox_run_internal(run, rc, "cgroup: %s", err) : 0;
	}
	rc = cgroup_step_create(run->sandbox->shared.cgroups, &cl, &run->cg, err, sizeof(err));
	if (rc < 0)
		return sandbox_run_internal(run, rc, "cgroup: %s", err);
	rc = cgroup_step_open_procs(run->cg, run->cgfds, ARRAY_SIZE(run->cgfds));
	if (rc < 0)
		return sandbox_run_internal(run, rc, "opening the step cgroup: %s", strerror(-rc));
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

int sandbox_run_send(struct run *run)
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
	if (m.cpu < 0)
		memcpy(m.cpus, run->sandbox->program_cpus, sizeof(m.cpus));
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
		rc = sandbox_run_internal(run, -E2BIG, "command line and environment exceed %d bytes",
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
		rc = sandbox_run_internal(run, (int)n, "sending to the jail's init: %s", strerror((int)-n));
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

void sandbox_run_kill(struct run *run)
{
	if (run->killed)
		return;
	run->killed = true;
	run->reap_by_ms = now_ms() + REAP_GRACE_MS;
	cgroup_step_kill(run->cg);
}

/* Killed for a time limit, the wall clock's or the CPU's. */
void sandbox_run_time_out(struct run *run)
{
	run->r->outcome.timed_out = true;
	sandbox_run_kill(run);
}

/* A deadline (0: none) that has come. */
bool sandbox_run_past(uint64_t deadline_ms, uint64_t now)
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
void sandbox_run_read_end(const struct run *run, const struct cgroup_stats *st,
			  struct run_outcome *o)
{
	if (over_cpu_limit(run, st->cpu_us))
		o->timed_out = true;
	if (run->exec_format) {
		o->exec_format_error = true;
	} else if (WIFEXITED(run->status)) {
		o->exited = true;
		o->exit_code = WEXITSTATUS(run->status);
	} else if (WIFSIGNALED(run->status)) {
		o->term_signal = WTERMSIG(run->status);
	}
	o->oom = st->oom_killed;
}

/* A program killed but not reported dead in time: its init is broken. */
int sandbox_run_reap_overdue(struct run *run, uint64_t now)
{
	if (!run->killed || run->reaped || now < run->reap_by_ms)
		return 0;
	jail_break(run->j);
	return sandbox_run_internal(run, -ETIMEDOUT, "the jail's init did not report the program's end");
}

/* Milliseconds from now to next, for poll. */
int sandbox_run_poll_ms(uint64_t next, uint64_t now)
{
	return next > now ? (int)(next - now) : 0;
}

/* next becomes t when t (0: none) comes earlier. */
void sandbox_run_min_at(uint64_t *next, uint64_t t)
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
	if (run->s->on_output && take)
		run->s->on_output(run->s->output_arg, is_err, data, take);
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
	sandbox_run_kill(run);
}

/* Read what is there; false at EOF or on error (the fd is then closed). */
bool sandbox_run_pump_read(struct run *run, int *fd)
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
int sandbox_run_init_message(struct run *run)
{
	struct {
		struct initmsg_hdr h;
		union {
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
		return sandbox_run_internal(run, -EIO, "the jail's init died");
	}
	if (n < (ssize_t)sizeof(m.h) || m.h.magic != INITMSG_MAGIC ||
	    m.h.len != (size_t)n - sizeof(m.h)) {
		jail_break(run->j);
		return sandbox_run_internal(run, -EPROTO, "the jail's init sent a malformed message");
	}
	if (m.h.id != run->id) {
		/* A FAILED with id 0 answers the FILTER message. */
		if (m.h.id == 0 && m.h.type == INITMSG_FAILED) {
			jail_break(run->j);
			return sandbox_run_internal(run, -EPROTO, "the jail's init refused the seccomp filter");
		}
		return 0;       /* an answer about an earlier step */
	}
	switch (m.h.type) {
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
		/* a file of the job directory (./a.out, the client's Executable)
		 * that is no program: the job's fault; a command of the language
		 * file's (an absolute path) that is none is the server's */
		if (m.u.failed.stage == INITMSG_STAGE_EXEC && m.u.failed.err == ENOEXEC &&
		    run->s->argv[0][0] != '/') {
			run->exec_format = true;
			return 0;
		}
		return sandbox_run_internal(run, -m.u.failed.err ? -m.u.failed.err : -EIO,
				"starting %s: %s: %s", run->s->argv[0],
				initmsg_stage_name(m.u.failed.stage), strerror(m.u.failed.err));
	default:
		break;
	}
	jail_break(run->j);
	return sandbox_run_internal(run, -EPROTO, "the jail's init sent an unexpected message");
}

/* Kill the step when us, its CPU time, is over its limit. */
void sandbox_run_cpu_limit(struct run *run, uint64_t us)
{
	if (over_cpu_limit(run, us))
		sandbox_run_time_out(run);
}

static void check_cpu(struct run *run)
{
	uint64_t us;

	if (run->s->limits.cpu_ms && cgroup_step_cpu_us(run->cg, &us) == 0)
		sandbox_run_cpu_limit(run, us);
	/* as often: the network's caps */
	network_check(run->s->network);
}

static int next_timeout(struct run *run, uint64_t now)
{
	uint64_t next = run->next_cpu_ms;

	sandbox_run_min_at(&next, run->killed ? run->reap_by_ms : run->deadline_ms);
	return sandbox_run_poll_ms(next, now);
}

/* The job's cancel descriptor, watched until it has fired once. */
bool sandbox_run_watch_cancel(const struct run *run)
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

		if (sandbox_run_watch_cancel(run))
			pf[nf++] = (struct pollfd){ .fd = run->s->cancel_fd, .events = POLLIN };
		if (run->in_w >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->in_w, .events = POLLOUT };
		if (run->out_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
		if (run->err_r >= 0)
			pf[nf++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
		pf[nf++] = (struct pollfd){ .fd = jail_sock(run->j), .events = POLLIN };
		if (poll(pf, (nfds_t)nf, next_timeout(run, now)) < 0 && errno != EINTR)
			return sandbox_run_internal(run, -errno, "poll: %s", strerror(errno));
		for (int i = 0; i < nf; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == run->s->cancel_fd) {
				run->r->cancelled = true;
				sandbox_run_kill(run);
			} else if (pf[i].fd == run->in_w) {
				pump_stdin(run);
			} else if (pf[i].fd == run->out_r) {
				sandbox_run_pump_read(run, &run->out_r);
			} else if (pf[i].fd == run->err_r) {
				sandbox_run_pump_read(run, &run->err_r);
			} else {
				rc = sandbox_run_init_message(run);
				if (rc < 0)
					return rc;
			}
		}
		now = now_ms();
		if (sandbox_run_past(run->deadline_ms, now) && !run->killed)
			sandbox_run_time_out(run);
		if (now >= run->next_cpu_ms) {
			check_cpu(run);
			cgroup_step_sample(run->cg);
			run->next_cpu_ms = now + CPU_POLL_MS;
		}
		rc = sandbox_run_reap_overdue(run, now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sandbox_run_emptied(struct run *run)
{
	int rc = cgroup_step_kill(run->cg);

	run->emptied = rc == 0;
	return rc;
}

/*
 * After the program is gone: end what is left and read the pipes to EOF.
 * Where the init holds them until the program is reaped (it is, and
 * INITMSG_RUN_HOLD_OUTPUT), nothing that could write to them is left
 * once the cgroup is empty: what they hold now is all of it.
 */
void sandbox_run_drain(struct run *run)
{
	uint64_t until = now_ms() + DRAIN_MS;

	sandbox_run_emptied(run);
	close_fd(&run->in_w);
	if (run->emptied && (run->run_flags & INITMSG_RUN_HOLD_OUTPUT)) {
		if (run->out_r >= 0 && sandbox_run_pump_read(run, &run->out_r))
			close_fd(&run->out_r);
		if (run->err_r >= 0 && sandbox_run_pump_read(run, &run->err_r))
			close_fd(&run->err_r);
		return;
	}
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
				sandbox_run_pump_read(run, &run->out_r);
			else
				sandbox_run_pump_read(run, &run->err_r);
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

/*
 * The step's peak memory: how far its cgroup's counter rose above its base
 * (cgroup_step_stats). In a cgroup that served a program before (the
 * jail's first, set back between programs) that counter need not rise
 * for a small program at all: the kernel charges a cgroup in per-CPU
 * batches and keeps what a batch left over, and what the program before
 * freed late (its kernel objects, a grace period after its end) goes back
 * there, all of it in the base; a C hello's pages come out of that, and
 * the peak stays the base (max_usage_in_bytes and memory.peak alike; a
 * C hello in 78 of 300 tests through /run on cgroup v1, and still about
 * one run in eight with memory.force_empty, which drains the batches,
 * before each). A counter that never rose says nothing of the program,
 * which did use memory: then its own largest resident set (wait4's
 * ru_maxrss, from the init's EXITED) is the measure.
 */
static uint64_t peak_kb(const struct cgroup_stats *st, const struct step_result *r)
{
	uint64_t kb = st->memory_peak_bytes / 1024;

	return kb ? kb : r->memory_rss_peak_kb;
}

int sandbox_run_finish(struct run *run)
{
	struct step_result *r = run->r;
	struct run_outcome *o = &r->outcome;
	struct cgroup_stats st;
	int rc;

	r->wall_ms = now_ms() - run->start_ms;
	rc = cgroup_step_stats(run->cg, &st);
	if (rc < 0)
		return sandbox_run_internal(run, rc, "reading the step cgroup: %s", strerror(-rc));
	r->cpu_ms = st.cpu_us / 1000;
	r->memory_peak_kb = peak_kb(&st, r);
	sandbox_run_read_end(run, &st, o);
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
void sandbox_run_init(struct run *run, struct jail *j, const struct step_spec *s,
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
void sandbox_run_release(struct run *run)
{
	int *fds[] = { &run->in_w, &run->out_r, &run->err_r, &run->in_r, &run->out_w,
		       &run->err_w, &run->cgfds[0], &run->cgfds[1], &run->cgfds[2] };

	/* A borrowed cgroup stays with its jail, the init in it, and serves
	 * the next program once this one's processes are gone. */
	if (run->cg && run->cgroup_borrowed) {
		if (run->emptied || cgroup_step_kill(run->cg) == 0)
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

void sandbox_run_sigpipe_hold(sigset_t *old)
{
	sigset_t pipe_set;

	sigpipe_only(&pipe_set);
	pthread_sigmask(SIG_BLOCK, &pipe_set, old);
}

void sandbox_run_sigpipe_release(const sigset_t *old)
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

	sandbox_run_init(&run, j, s, r);
	rc = jail_ready(j, JAIL_READY_MS, err, sizeof(err));
	if (rc < 0)
		return sandbox_run_internal(&run, rc, "%s", err);
	run.id = jail_next_id(j);

	sandbox_run_sigpipe_hold(&old);
	rc = sandbox_run_prepare(&run);
	if (rc == 0)
		rc = sandbox_run_send(&run);
	if (rc == 0)
		rc = run_loop(&run);
	if (rc == 0) {
		sandbox_run_drain(&run);
		rc = sandbox_run_finish(&run);
	}
	sandbox_run_release(&run);
	sandbox_run_sigpipe_release(&old);
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
