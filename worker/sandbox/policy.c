#include "autoconf.h"

#include "worker/sandbox/policy.h"

#include <sched.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "common/util.h"

/*
 * /etc is never bound whole: it holds the operator's configuration. Only
 * what the Debian toolchains read is shown (Java reaches its launcher and
 * its conf/ through /etc/alternatives and /etc/java-17-openjdk; fpc,
 * gnucobol, mono, php, R keep their configuration there). There is no
 * user or group database, as under Codize: uid and gid 65534 have no
 * name, and no language looks one up. The host's loader cache,
 * name-service configuration and time zone are not shown either: the
 * loader searches the multiarch library directories itself, and the time
 * zone is UTC.
 *
 * /dev holds Codize's two devices, null and urandom, and random, which
 * the JVM languages need (below); no zero, full or shm: no language needs
 * them. And the links to the standard streams, through which programs
 * reopen the worker's pipes.
 */
const struct policy_mount policy_mounts[] = {
	{ "/usr", POLICY_MOUNT_HOST_RO, NULL },
	/* Mounts of their own, so that the mount table shows each one's
	 * flags as Codize's does (its programs grep /proc/mounts for them). */
	{ "/usr/bin", POLICY_MOUNT_HOST_RO, NULL },
	{ "/usr/lib", POLICY_MOUNT_HOST_RO, NULL },
	{ "/usr/lib64", POLICY_MOUNT_HOST_RO, NULL },
	{ "/lib", POLICY_MOUNT_HOST_RO, NULL },
	{ "/lib32", POLICY_MOUNT_HOST_RO, NULL },
	{ "/lib64", POLICY_MOUNT_HOST_RO, NULL },
	{ "/libx32", POLICY_MOUNT_HOST_RO, NULL },
	{ "/bin", POLICY_MOUNT_HOST_RO, NULL },
	{ "/sbin", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/alternatives", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/java-17-openjdk", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/fpc.cfg", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/fpc-3.2.2.cfg", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/gnucobol", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/mono", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/php", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/R", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/octave.conf", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/findlib.conf", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/ocamlfind.conf", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/perl", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/racket", POLICY_MOUNT_HOST_RO, NULL },
	{ "/etc/swi-prolog", POLICY_MOUNT_HOST_RO, NULL },
	{ "/dev/null", POLICY_MOUNT_DEVICE, NULL },
	/* The JDK seeds SecureRandom from /dev/random (java.security's
	 * securerandom.source); without it, it times thread scheduling for
	 * seconds instead (Clojure's destructuring stalls on it). */
	{ "/dev/random", POLICY_MOUNT_DEVICE, NULL },
	{ "/dev/urandom", POLICY_MOUNT_DEVICE, NULL },
	{ "/dev/fd", POLICY_MOUNT_SYMLINK, "/proc/self/fd" },
	{ "/dev/stdin", POLICY_MOUNT_SYMLINK, "/proc/self/fd/0" },
	{ "/dev/stdout", POLICY_MOUNT_SYMLINK, "/proc/self/fd/1" },
	{ "/dev/stderr", POLICY_MOUNT_SYMLINK, "/proc/self/fd/2" },
};
const size_t policy_mounts_count = ARRAY_SIZE(policy_mounts);

/*
 * Decided call by call. A forbidden call kills the program with SIGSYS, so
 * that an attempt shows as a runtime error (signal SIGSYS) rather than as
 * a mysterious failure further on. The exceptions are calls a runtime
 * makes on its own and must see fail to fall back: clone3 (glibc's
 * pthread_create and posix_spawn try it first), io_uring (libuv, in Node,
 * probes it) and Linux AIO (libaio users fall back to threads) get ENOSYS,
 * as on a kernel without them; and calls ordinary commands make whose
 * refusal they report themselves (hostname, chroot: EPERM, which the
 * kernel would answer anyway, for lack of the capability).
 *
 * Denied everywhere in a jail: to the jail binary (bwrap, nsjail) and
 * goboxd-init as well as to every program. None of them makes any of
 * these calls, so they are in the baseline filter, which the jail's
 * launcher installs once before the jail binary and which every program
 * inherits (worker/sandbox/seccomp.c). The filter each program installs
 * before its exec holds only policy_denied_syscalls, below: the kernel
 * compiles a filter and fills its action cache as it is installed, the
 * longest step of a program's start, and the shorter the filter the
 * shorter the step (docs/benchmarks.md).
 */
const struct policy_syscall policy_denied_everywhere[] = {
	/* other processes' memory and state */
	{ "ptrace", POLICY_SYSCALL_KILL },
	{ "process_vm_readv", POLICY_SYSCALL_KILL },
	{ "process_vm_writev", POLICY_SYSCALL_KILL },
	{ "pidfd_getfd", POLICY_SYSCALL_KILL },
	{ "kcmp", POLICY_SYSCALL_KILL },
	{ "migrate_pages", POLICY_SYSCALL_KILL },
	{ "move_pages", POLICY_SYSCALL_KILL },
	{ "process_madvise", POLICY_SYSCALL_KILL },
	/* NUMA placement: nothing to place on a judge. get_mempolicy and
	 * set_mempolicy stay allowed: libnuma's constructor probes them
	 * (and sets, then resets, the calling thread's own policy) in every
	 * program linked with it, Octave among goboxd's languages. */
	{ "mbind", POLICY_SYSCALL_KILL },
	{ "set_mempolicy_home_node", POLICY_SYSCALL_KILL },
	/* kernel subsystems with a long record of privilege escalations */
	{ "bpf", POLICY_SYSCALL_KILL },
	{ "keyctl", POLICY_SYSCALL_KILL },
	{ "add_key", POLICY_SYSCALL_KILL },
	{ "request_key", POLICY_SYSCALL_KILL },
	{ "io_uring_setup", POLICY_SYSCALL_ENOSYS },
	{ "io_uring_enter", POLICY_SYSCALL_ENOSYS },
	{ "io_uring_register", POLICY_SYSCALL_ENOSYS },
	{ "io_setup", POLICY_SYSCALL_ENOSYS },
	{ "io_destroy", POLICY_SYSCALL_ENOSYS },
	{ "io_submit", POLICY_SYSCALL_ENOSYS },
	{ "io_cancel", POLICY_SYSCALL_ENOSYS },
	{ "io_getevents", POLICY_SYSCALL_ENOSYS },
	{ "io_pgetevents", POLICY_SYSCALL_ENOSYS },
	{ "perf_event_open", POLICY_SYSCALL_KILL },
	{ "userfaultfd", POLICY_SYSCALL_KILL },
	{ "open_by_handle_at", POLICY_SYSCALL_KILL },
	{ "name_to_handle_at", POLICY_SYSCALL_KILL },
	{ "lookup_dcookie", POLICY_SYSCALL_KILL },
	{ "fanotify_init", POLICY_SYSCALL_KILL },
	{ "fanotify_mark", POLICY_SYSCALL_KILL },
	{ "memfd_secret", POLICY_SYSCALL_KILL },
	/* the program's own confinement: nothing to add to goboxd's */
	{ "landlock_create_ruleset", POLICY_SYSCALL_KILL },
	{ "landlock_add_rule", POLICY_SYSCALL_KILL },
	{ "landlock_restrict_self", POLICY_SYSCALL_KILL },
	{ "lsm_get_self_attr", POLICY_SYSCALL_KILL },
	{ "lsm_set_self_attr", POLICY_SYSCALL_KILL },
	{ "lsm_list_modules", POLICY_SYSCALL_KILL },
	/* the machine itself */
	{ "kexec_load", POLICY_SYSCALL_KILL },
	{ "kexec_file_load", POLICY_SYSCALL_KILL },
	{ "init_module", POLICY_SYSCALL_KILL },
	{ "finit_module", POLICY_SYSCALL_KILL },
	{ "delete_module", POLICY_SYSCALL_KILL },
	{ "reboot", POLICY_SYSCALL_KILL },
	{ "swapon", POLICY_SYSCALL_KILL },
	{ "swapoff", POLICY_SYSCALL_KILL },
	{ "acct", POLICY_SYSCALL_KILL },
	{ "settimeofday", POLICY_SYSCALL_KILL },
	{ "clock_settime", POLICY_SYSCALL_KILL },
	{ "clock_adjtime", POLICY_SYSCALL_KILL },
	{ "adjtimex", POLICY_SYSCALL_KILL },
	{ "quotactl", POLICY_SYSCALL_KILL },
	{ "quotactl_fd", POLICY_SYSCALL_KILL },
	{ "vhangup", POLICY_SYSCALL_KILL },
	{ "syslog", POLICY_SYSCALL_KILL },
	{ "iopl", POLICY_SYSCALL_KILL },
	{ "ioperm", POLICY_SYSCALL_KILL },
	{ "uselib", POLICY_SYSCALL_KILL },
};
const size_t policy_denied_everywhere_count = ARRAY_SIZE(policy_denied_everywhere);

/* Denied to the programs only: the jail binary and the init make these
 * calls themselves (the mount table, namespaces, the hostname, each
 * program's CPUs and filter). */
const struct policy_syscall policy_denied_syscalls[] = {
	/* execution domains: READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE */
	{ "personality", POLICY_SYSCALL_KILL },
	/* the mount table and the root */
	{ "mount", POLICY_SYSCALL_KILL },
	{ "umount2", POLICY_SYSCALL_KILL },
	{ "pivot_root", POLICY_SYSCALL_KILL },
	{ "chroot", POLICY_SYSCALL_EPERM },
	{ "fsopen", POLICY_SYSCALL_KILL },
	{ "fsconfig", POLICY_SYSCALL_KILL },
	{ "fsmount", POLICY_SYSCALL_KILL },
	{ "fspick", POLICY_SYSCALL_KILL },
	{ "move_mount", POLICY_SYSCALL_KILL },
	{ "open_tree", POLICY_SYSCALL_KILL },
	{ "mount_setattr", POLICY_SYSCALL_KILL },
	/* namespaces: the user namespace is the kernel's largest attack surface */
	{ "unshare", POLICY_SYSCALL_KILL },
	{ "setns", POLICY_SYSCALL_KILL },
	/* clone3 passes its flags in memory, out of seccomp's reach: ENOSYS
	 * makes glibc fall back to clone, whose flags are filtered */
	{ "clone3", POLICY_SYSCALL_ENOSYS },
	/* the program's own confinement: nothing to add to goboxd's */
	{ "seccomp", POLICY_SYSCALL_KILL },
	/* with --pin-cpus a program must stay on its CPU; a runtime that
	 * binds threads (libgomp) warns and goes on */
	{ "sched_setaffinity", POLICY_SYSCALL_EPERM },
	{ "sethostname", POLICY_SYSCALL_EPERM },
	{ "setdomainname", POLICY_SYSCALL_EPERM },
};
const size_t policy_denied_syscalls_count = ARRAY_SIZE(policy_denied_syscalls);

const int policy_socket_families[] = { AF_UNIX, AF_NETLINK };
const size_t policy_socket_families_count = ARRAY_SIZE(policy_socket_families);
const int policy_network_families[] = { AF_INET, AF_INET6 };
const size_t policy_network_families_count = ARRAY_SIZE(policy_network_families);

const unsigned int policy_denied_ioctls[] = { TIOCSTI, TIOCSETD, TIOCCONS, TIOCLINUX };
const size_t policy_denied_ioctls_count = ARRAY_SIZE(policy_denied_ioctls);

const struct policy_syscall_nr policy_syscall_nrs[] = {
	{ "lsm_get_self_attr", 459 },
	{ "lsm_set_self_attr", 460 },
	{ "lsm_list_modules", 461 },
};
const size_t policy_syscall_nrs_count = ARRAY_SIZE(policy_syscall_nrs);

const unsigned long policy_clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
	CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};
const size_t policy_clone_ns_flags_count = ARRAY_SIZE(policy_clone_ns_flags);

/* ioprio_set's "which" (linux/ioprio.h, which libc does not export) */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP 2
#define IOPRIO_WHO_USER 3

/* sched_setaffinity is refused whatever it names (policy_denied_syscalls). */
const struct policy_init_guard policy_init_guards[] = {
	{ "prlimit64", 0, -1, 0, { 0, 0 } },
	{ "sched_setscheduler", 0, -1, 0, { 0, 0 } },
	{ "sched_setparam", 0, -1, 0, { 0, 0 } },
	{ "sched_setattr", 0, -1, 0, { 0, 0 } },
	{ "setpriority", 1, 0, PRIO_PROCESS, { PRIO_PGRP, PRIO_USER } },
	{ "ioprio_set", 1, 0, IOPRIO_WHO_PROCESS, { IOPRIO_WHO_PGRP, IOPRIO_WHO_USER } },
};
const size_t policy_init_guards_count = ARRAY_SIZE(policy_init_guards);
