#include "autoconf.h"

#include "worker/sandbox/policy.h"

#include <sched.h>

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
	{ "/usr", PM_HOST_RO, NULL },
	/* Mounts of their own, so that the mount table shows each one's
	 * flags as Codize's does (its programs grep /proc/mounts for them). */
	{ "/usr/bin", PM_HOST_RO, NULL },
	{ "/usr/lib", PM_HOST_RO, NULL },
	{ "/usr/lib64", PM_HOST_RO, NULL },
	{ "/lib", PM_HOST_RO, NULL },
	{ "/lib32", PM_HOST_RO, NULL },
	{ "/lib64", PM_HOST_RO, NULL },
	{ "/libx32", PM_HOST_RO, NULL },
	{ "/bin", PM_HOST_RO, NULL },
	{ "/sbin", PM_HOST_RO, NULL },
	{ "/etc/alternatives", PM_HOST_RO, NULL },
	{ "/etc/java-17-openjdk", PM_HOST_RO, NULL },
	{ "/etc/fpc.cfg", PM_HOST_RO, NULL },
	{ "/etc/fpc-3.2.2.cfg", PM_HOST_RO, NULL },
	{ "/etc/gnucobol", PM_HOST_RO, NULL },
	{ "/etc/mono", PM_HOST_RO, NULL },
	{ "/etc/php", PM_HOST_RO, NULL },
	{ "/etc/R", PM_HOST_RO, NULL },
	{ "/etc/octave.conf", PM_HOST_RO, NULL },
	{ "/etc/findlib.conf", PM_HOST_RO, NULL },
	{ "/etc/ocamlfind.conf", PM_HOST_RO, NULL },
	{ "/etc/perl", PM_HOST_RO, NULL },
	{ "/etc/racket", PM_HOST_RO, NULL },
	{ "/etc/swi-prolog", PM_HOST_RO, NULL },
	{ "/dev/null", PM_DEVICE, NULL },
	/* The JDK seeds SecureRandom from /dev/random (java.security's
	 * securerandom.source); without it, it times thread scheduling for
	 * seconds instead (Clojure's destructuring stalls on it). */
	{ "/dev/random", PM_DEVICE, NULL },
	{ "/dev/urandom", PM_DEVICE, NULL },
	{ "/dev/fd", PM_SYMLINK, "/proc/self/fd" },
	{ "/dev/stdin", PM_SYMLINK, "/proc/self/fd/0" },
	{ "/dev/stdout", PM_SYMLINK, "/proc/self/fd/1" },
	{ "/dev/stderr", PM_SYMLINK, "/proc/self/fd/2" },
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
 */
const struct policy_syscall policy_denied_syscalls[] = {
	/* other processes' memory and state */
	{ "ptrace", PSA_KILL },
	{ "process_vm_readv", PSA_KILL },
	{ "process_vm_writev", PSA_KILL },
	{ "pidfd_getfd", PSA_KILL },
	{ "kcmp", PSA_KILL },
	{ "migrate_pages", PSA_KILL },
	{ "move_pages", PSA_KILL },
	{ "process_madvise", PSA_KILL },
	/* NUMA placement: nothing to place on a judge. get_mempolicy and
	 * set_mempolicy stay allowed: libnuma's constructor probes them
	 * (and sets, then resets, the calling thread's own policy) in every
	 * program linked with it, Octave among goboxd's languages. */
	{ "mbind", PSA_KILL },
	{ "set_mempolicy_home_node", PSA_KILL },
	/* execution domains: READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE */
	{ "personality", PSA_KILL },
	/* the mount table and the root */
	{ "mount", PSA_KILL },
	{ "umount2", PSA_KILL },
	{ "pivot_root", PSA_KILL },
	{ "chroot", PSA_EPERM },
	{ "fsopen", PSA_KILL },
	{ "fsconfig", PSA_KILL },
	{ "fsmount", PSA_KILL },
	{ "fspick", PSA_KILL },
	{ "move_mount", PSA_KILL },
	{ "open_tree", PSA_KILL },
	{ "mount_setattr", PSA_KILL },
	/* namespaces: the user namespace is the kernel's largest attack surface */
	{ "unshare", PSA_KILL },
	{ "setns", PSA_KILL },
	/* clone3 passes its flags in memory, out of seccomp's reach: ENOSYS
	 * makes glibc fall back to clone, whose flags are filtered */
	{ "clone3", PSA_ENOSYS },
	/* kernel subsystems with a long record of privilege escalations */
	{ "bpf", PSA_KILL },
	{ "keyctl", PSA_KILL },
	{ "add_key", PSA_KILL },
	{ "request_key", PSA_KILL },
	{ "io_uring_setup", PSA_ENOSYS },
	{ "io_uring_enter", PSA_ENOSYS },
	{ "io_uring_register", PSA_ENOSYS },
	{ "io_setup", PSA_ENOSYS },
	{ "io_destroy", PSA_ENOSYS },
	{ "io_submit", PSA_ENOSYS },
	{ "io_cancel", PSA_ENOSYS },
	{ "io_getevents", PSA_ENOSYS },
	{ "io_pgetevents", PSA_ENOSYS },
	{ "perf_event_open", PSA_KILL },
	{ "userfaultfd", PSA_KILL },
	{ "open_by_handle_at", PSA_KILL },
	{ "name_to_handle_at", PSA_KILL },
	{ "lookup_dcookie", PSA_KILL },
	{ "fanotify_init", PSA_KILL },
	{ "fanotify_mark", PSA_KILL },
	{ "memfd_secret", PSA_KILL },
	/* the program's own confinement: nothing to add to goboxd's */
	{ "seccomp", PSA_KILL },
	{ "landlock_create_ruleset", PSA_KILL },
	{ "landlock_add_rule", PSA_KILL },
	{ "landlock_restrict_self", PSA_KILL },
	{ "lsm_get_self_attr", PSA_KILL },
	{ "lsm_set_self_attr", PSA_KILL },
	{ "lsm_list_modules", PSA_KILL },
	/* the machine itself */
	{ "kexec_load", PSA_KILL },
	{ "kexec_file_load", PSA_KILL },
	{ "init_module", PSA_KILL },
	{ "finit_module", PSA_KILL },
	{ "delete_module", PSA_KILL },
	{ "reboot", PSA_KILL },
	{ "swapon", PSA_KILL },
	{ "swapoff", PSA_KILL },
	{ "acct", PSA_KILL },
	{ "settimeofday", PSA_KILL },
	{ "clock_settime", PSA_KILL },
	{ "clock_adjtime", PSA_KILL },
	/* with --pin-cpus a program must stay on its CPU; a runtime that
	 * binds threads (libgomp) warns and goes on */
	{ "sched_setaffinity", PSA_EPERM },
	{ "adjtimex", PSA_KILL },
	{ "quotactl", PSA_KILL },
	{ "quotactl_fd", PSA_KILL },
	{ "vhangup", PSA_KILL },
	{ "syslog", PSA_KILL },
	{ "iopl", PSA_KILL },
	{ "ioperm", PSA_KILL },
	{ "uselib", PSA_KILL },
	{ "sethostname", PSA_EPERM },
	{ "setdomainname", PSA_EPERM },
};
const size_t policy_denied_syscalls_count = ARRAY_SIZE(policy_denied_syscalls);

const int policy_socket_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
const size_t policy_socket_families_count = ARRAY_SIZE(policy_socket_families);

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
