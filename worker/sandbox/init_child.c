/*
 * goboxd-init's programs, from the RUN to the exec: the RUN's body read
 * into a plan, and the child that carries it out.
 *
 * The child is what runs user code, so its set-up is a list (child_run):
 * it leaves the init's signal mask, takes a session of its own, joins its
 * step's cgroup, puts its fds in place, sets its rlimits, its working
 * directory, its CPU and its credentials, drops every capability, sets
 * no_new_privs, installs the seccomp filter, and only then execs; each
 * step says why it stands where it does. A step that fails sends its
 * stage and errno to the init through the error pipe. Until the exec it
 * runs in the init's memory (init_child_spawn), so it only makes
 * async-signal-safe calls. Libc only, like the rest of goboxd-init.
 */

#include "autoconf.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox/init_child.h"
#include "worker/sandbox/initmsg.h"

/*
 * The steps, in child_run's order: each returns 0 or -errno, and its
 * comment says why it stands where it does.
 */

/* First: the init blocks SIGCHLD for its signalfd, and a program starts
 * with nothing blocked (and SIGPIPE ignored when the RUN asks). */
static int child_reset_signals(const struct initmsg_run *r)
{
	sigset_t none;

	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return -errno;
	if (r->flags & INITMSG_RUN_SIGPIPE_IGNORED) {
		struct sigaction ign;

		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		if (sigaction(SIGPIPE, &ign, NULL) < 0)
			return -errno;
	}
	return 0;
}

/* Early, as it depends on nothing: a session of its own, so that what the
 * program sends its process group reaches no other program of the jail. */
static int child_new_session(void)
{
	return setsid() < 0 ? -errno : 0;
}

/* Once its fds are in place: a terminal on fd 0 (INITMSG_RUN_TTY) is the
 * program's controlling terminal, its process group the one in front, so
 * that the terminal's Ctrl-C and a window's new size reach it. */
static int child_take_terminal(const struct initmsg_run *r)
{
	if (!(r->flags & INITMSG_RUN_TTY))
		return 0;
	return ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0 ? -errno : 0;
}

/* Before anything the program's set-up allocates: from here on all of it,
 * and the program, is charged to its step's cgroup. Born there already
 * when the RUN carries no fds (the init entered the cgroup itself). */
static int child_join_cgroup(const struct init_child_plan *p)
{
	for (unsigned i = 0; i < p->run->ncgroup; i++) {
		ssize_t n;

		do
			n = write(p->fds[3 + i], "0", 1);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
	}
	return 0;
}

/* After the cgroup join, whose fds this closes, and before the rlimits, as
 * a low RLIMIT_NOFILE could refuse the copies it makes on the way: stdio
 * to 0..2, the error pipe to 3, everything else closed. */
static int child_place_fds(struct init_child_plan *p)
{
	int fds[4] = { p->fds[0], p->fds[1], p->fds[2], p->err_w };
	int rc = initmsg_place_fds(fds, 4, 3);

	p->err_w = fds[3];
	return rc;
}

/* Before the credentials: a uid change checks RLIMIT_NPROC (the kernel
 * then refuses the exec of a user over it), so the program's own limits
 * must be in place by then. */
static int child_set_rlimits(const struct initmsg_run *r)
{
	static const int resource[INITMSG_RLIMIT_COUNT] = {
		[INITMSG_RLIMIT_CPU] = RLIMIT_CPU, [INITMSG_RLIMIT_FSIZE] = RLIMIT_FSIZE,
		[INITMSG_RLIMIT_NOFILE] = RLIMIT_NOFILE, [INITMSG_RLIMIT_NPROC] = RLIMIT_NPROC,
		[INITMSG_RLIMIT_CORE] = RLIMIT_CORE, [INITMSG_RLIMIT_MEMLOCK] = RLIMIT_MEMLOCK,
	};

	for (int i = 0; i < INITMSG_RLIMIT_COUNT; i++) {
		struct rlimit rl = { r->rlimit[i], r->rlimit[i] };

		if (r->rlimit[i] == UINT64_MAX)
			rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
		if (setrlimit(resource[i], &rl) < 0)
			return -errno;
	}
	return 0;
}

/* Anywhere before exec: the program runs under the init's own uid inside
 * the jail (POLICY_INSIDE_UID), and the init holds no capability that
 * bypasses a permission, so this reaches nothing the program could not. */
static int child_enter_cwd(const char *cwd)
{
	return chdir(cwd) < 0 ? -errno : 0;
}

/*
 * After the cgroup join: joining a cpuset cgroup resets the affinity to
 * the cpuset's CPUs. On the one CPU the RUN pins, or else on the CPUs it
 * names, when it names any: the worker's, from before it kept itself and
 * its jails on one. A cpuset that has since left none of those (EINVAL)
 * leaves the program on the init's, as a RUN that names none does.
 */
static int child_set_cpus(const struct initmsg_run *r)
{
	cpu_set_t set;
	bool named = false;

	_Static_assert(sizeof(set) == sizeof(r->cpus), "initmsg_run.cpus holds a cpu_set_t");
	if (r->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(r->cpu, &set);
		return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
	}
	for (int i = 0; i < INITMSG_CPU_WORDS; i++)
		named |= r->cpus[i] != 0;
	if (!named)
		return 0;
	memcpy(&set, r->cpus, sizeof(set));
	if (sched_setaffinity(0, sizeof(set), &set) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

/* The gid before the uid, whose change can take away the right to change
 * the gid (the groups are none since the launcher's setgroups); before
 * the capabilities go, as a uid change can alter them. */
static int child_set_credentials(const struct initmsg_run *r)
{
	/* the system calls themselves: libc's wrappers may broadcast the
	 * change to what they take for threads of the process */
	if (syscall(SYS_setresgid, r->gid, r->gid, r->gid) < 0 ||
	    syscall(SYS_setresuid, r->uid, r->uid, r->uid) < 0)
		return -errno;
	return 0;
}

/* After the credentials and the last step that needed CAP_SYS_ADMIN (the
 * IPC namespace): every capability, ambient ones included. */
static int child_drop_capabilities(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

/* Before the filter: without CAP_SYS_ADMIN the kernel installs a seccomp
 * filter only under no_new_privs. */
static int child_no_new_privs(void)
{
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* Last before exec: from here on the filter applies, execve included.
 * There always is one: do_run (init.c) refuses a RUN that came before it. */
static int child_install_filter(const struct init_child_plan *p)
{
	struct sock_fprog prog = { p->filter_len, p->filter };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ? -errno : 0;
}

/* Returns only when the exec failed. */
static int child_exec(const struct init_child_plan *p)
{
	execve(p->argv[0], p->argv, p->envp);
	return -errno;
}

/* A step that failed: its stage and errno to the worker through the error
 * pipe (wherever child_place_fds left it), and the child is done. */
static void child_check(const struct init_child_plan *p, uint32_t stage, int rc)
{
	struct initmsg_failed f = { stage, -rc };

	if (rc >= 0)
		return;
	(void)!write(p->err_w, &f, sizeof(f));
	_exit(127);
}

/* From clone to exec, in the order the kernel needs (each step says why). */
static void __attribute__((noreturn)) child_run(struct init_child_plan *p)
{
	const struct initmsg_run *r = p->run;

	child_check(p, INITMSG_STAGE_SIGNALS, child_reset_signals(r));
	child_check(p, INITMSG_STAGE_SETSID, child_new_session());
	child_check(p, INITMSG_STAGE_CGROUP, child_join_cgroup(p));
	child_check(p, INITMSG_STAGE_FDS, child_place_fds(p));
	child_check(p, INITMSG_STAGE_TTY, child_take_terminal(r));
	child_check(p, INITMSG_STAGE_RLIMITS, child_set_rlimits(r));
	child_check(p, INITMSG_STAGE_CHDIR, child_enter_cwd(p->cwd));
	child_check(p, INITMSG_STAGE_CPU, child_set_cpus(r));
	child_check(p, INITMSG_STAGE_CREDENTIALS, child_set_credentials(r));
	child_check(p, INITMSG_STAGE_CAPABILITIES, child_drop_capabilities());
	child_check(p, INITMSG_STAGE_NO_NEW_PRIVS, child_no_new_privs());
	child_check(p, INITMSG_STAGE_SECCOMP, child_install_filter(p));
	child_check(p, INITMSG_STAGE_EXEC, child_exec(p));
	_exit(127);             /* not reached: child_exec returns -errno */
}

/*
 * The child is started with clone(CLONE_VM | CLONE_VFORK), as posix_spawn
 * does: it runs on this stack, in the init's memory, until its exec gives
 * it memory of its own, and the init is suspended until then (or the
 * child's end), as it waited for that anyway. A fork would copy the
 * init's page tables and then fault on every page either side writes
 * first: on a paravirtualized host that was about a millisecond a
 * program, more than everything else the init does for it. The child
 * writes nothing the init reads (its plan is its own copy, on this
 * stack), calls no libc function that takes a lock, and changes only its
 * own task: credentials, limits, signal actions and seccomp are per
 * process without CLONE_THREAD and CLONE_SIGHAND. The one thing of the
 * memory's that a change of uid would set, its dumpable flag, stays as
 * hide_from_programs (init.c) left it: the ids the child sets are the init's own.
 */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

struct spawn {
	const struct init_child_plan *plan;
};

static int child_main(void *arg)
{
	const struct spawn *sp = arg;
	struct init_child_plan p = *sp->plan;

	child_run(&p);
}

pid_t init_child_spawn(const struct init_child_plan *p)
{
	struct spawn sp = { p };

	return clone(child_main, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
		     &sp);
}

/* ---- the RUN's body -------------------------------------------------- */

/* The NUL-terminated string at *s, which then moves past it; NULL when
 * none ends before end. */
static char *next_string(char **s, char *end)
{
	char *str = *s;
	char *nul = str < end ? memchr(str, '\0', (size_t)(end - str)) : NULL;

	if (!nul)
		return NULL;
	*s = nul + 1;
	return str;
}

int init_child_parse(char *body, size_t len, struct init_child_plan *p, char **vec, size_t nvec)
{
	const struct initmsg_run *r = (const struct initmsg_run *)body;
	char *s = body + sizeof(*r), *end = body + len;
	size_t need;

	if (len < sizeof(*r) || r->argc == 0 || r->ncgroup > INITMSG_MAX_FDS - 3)
		return -EINVAL;
	need = (size_t)r->argc + r->envc + 2;
	if (need > nvec)
		return -E2BIG;
	p->run = r;
	p->argv = vec;
	p->envp = vec + r->argc + 1;
	p->cwd = next_string(&s, end);
	if (!p->cwd)
		return -EINVAL;
	for (uint32_t i = 0; i < r->argc; i++) {
		p->argv[i] = next_string(&s, end);
		if (!p->argv[i])
			return -EINVAL;
	}
	for (uint32_t i = 0; i < r->envc; i++) {
		p->envp[i] = next_string(&s, end);
		if (!p->envp[i])
			return -EINVAL;
	}
	p->argv[r->argc] = NULL;
	p->envp[r->envc] = NULL;
	return 0;
}
