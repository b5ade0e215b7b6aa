/*
 * The baseline filter (worker/sandbox/seccomp.c) in a child process, as
 * the jail's launcher installs it before the jail binary: it kills what
 * nobody in a jail calls (policy_denied_everywhere), and lets through
 * what the jail binary and goboxd-init do call, which the programs' own
 * filter refuses them. Each call is made with arguments that can change
 * nothing: what counts is whether the filter kills the process.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/sandbox/policy.h"
#include "worker/sandbox/seccomp.h"

/* The wait status of a child that installs the baseline, then makes the
 * system call nr with arguments a0..a2 and exits 0. */
static int under_baseline(long nr, long a0, long a1, long a2)
{
	struct seccomp_set *s = NULL;
	char err[256] = "";
	int status = 0;
	pid_t pid;

	cr_assert_eq(seccomp_set_build(&s, err, sizeof(err)), 0, "seccomp_set_build: %s", err);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_set_apply_baseline(s) < 0)
			_exit(100);
		syscall(nr, a0, a1, a2);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	seccomp_set_free(s);
	return status;
}

static bool killed_by_the_filter(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

Test(seccomp, the_baseline_kills_what_nobody_in_a_jail_calls)
{
	static const struct {
		const char *name;
		long nr;
	} calls[] = {
		{ "keyctl", SYS_keyctl },       { "ptrace", SYS_ptrace },
		{ "bpf", SYS_bpf },             { "perf_event_open", SYS_perf_event_open },
		{ "userfaultfd", SYS_userfaultfd }, { "kexec_load", SYS_kexec_load },
		{ "syslog", SYS_syslog },       { "iopl", SYS_iopl },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int status = under_baseline(calls[i].nr, -1, 0, 0);

		cr_assert(killed_by_the_filter(status), "%s: status 0x%x", calls[i].name, status);
	}
}

/* Not killed: it failed, or did nothing, as the kernel answers it. */
Test(seccomp, the_baseline_lets_the_jail_binary_and_the_init_do_their_work)
{
	static const struct {
		const char *name;
		long nr, a0, a1, a2;
	} calls[] = {
		/* a null source and target, flags of none: EFAULT or EPERM */
		{ "mount", SYS_mount, 0, 0, 0 },
		{ "umount2", SYS_umount2, 0, 0, 0 },
		{ "unshare", SYS_unshare, 0, 0, 0 },
		{ "setns", SYS_setns, -1, 0, 0 },
		{ "sethostname", SYS_sethostname, 0, 0, 0 },
		{ "personality", SYS_personality, 0xffffffffL, 0, 0 },
		{ "move_mount", SYS_move_mount, -1, 0, -1 },
		{ "sched_getaffinity", SYS_sched_getaffinity, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int status = under_baseline(calls[i].nr, calls[i].a0, calls[i].a1, calls[i].a2);

		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status 0x%x",
			  calls[i].name, status);
	}
}

/* A call is in one table or the other: in both, the programs' filter
 * would hold a rule the baseline already holds for them. */
Test(seccomp, no_call_is_denied_twice)
{
	for (size_t i = 0; i < policy_denied_everywhere_count; i++)
		for (size_t j = 0; j < policy_denied_syscalls_count; j++)
			cr_assert_str_neq(policy_denied_everywhere[i].name,
					  policy_denied_syscalls[j].name);
}
