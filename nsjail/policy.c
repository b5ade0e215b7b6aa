#include "autoconf.h"

#include "nsjail/policy.h"

#include <sched.h>

#include "common/util.h"

/*
 * /etc is never bound whole: it holds the operator's configuration. Only
 * what the dynamic loader, name lookups and the Debian toolchains read is
 * shown (Java reaches its launcher and its conf/ through /etc/alternatives
 * and /etc/java-17-openjdk; fpc, gnucobol, mono, php, R keep their
 * configuration there).
 */
const struct policy_mount policy_mounts[] = {
	{ "/usr", PM_HOST_RO, NULL },
	{ "/lib", PM_HOST_RO, NULL },
	{ "/lib32", PM_HOST_RO, NULL },
	{ "/lib64", PM_HOST_RO, NULL },
	{ "/libx32", PM_HOST_RO, NULL },
	{ "/bin", PM_HOST_RO, NULL },
	{ "/sbin", PM_HOST_RO, NULL },
	{ "/etc/ld.so.cache", PM_HOST_RO, NULL },
	{ "/etc/ld.so.conf", PM_HOST_RO, NULL },
	{ "/etc/ld.so.conf.d", PM_HOST_RO, NULL },
	{ "/etc/alternatives", PM_HOST_RO, NULL },
	{ "/etc/passwd", PM_HOST_RO, NULL },
	{ "/etc/group", PM_HOST_RO, NULL },
	{ "/etc/nsswitch.conf", PM_HOST_RO, NULL },
	{ "/etc/localtime", PM_HOST_RO, NULL },
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
	{ "/dev/zero", PM_DEVICE, NULL },
	{ "/dev/full", PM_DEVICE, NULL },
	{ "/dev/random", PM_DEVICE, NULL },
	{ "/dev/urandom", PM_DEVICE, NULL },
	{ "/dev/fd", PM_SYMLINK, "/proc/self/fd" },
	{ "/dev/stdin", PM_SYMLINK, "/proc/self/fd/0" },
	{ "/dev/stdout", PM_SYMLINK, "/proc/self/fd/1" },
	{ "/dev/stderr", PM_SYMLINK, "/proc/self/fd/2" },
	/* POSIX shared memory and semaphores land in the capped /tmp. */
	{ "/dev/shm", PM_SYMLINK, "/tmp" },
};
const size_t policy_mounts_count = ARRAY_SIZE(policy_mounts);

/*
 * EPERM rather than a kill: glibc, the JVM, Go and Node probe several of
 * these (clone3, io_uring, userfaultfd, perf_event_open) and fall back when
 * told no; a kill would turn a harmless probe into a runtime error.
 */
const struct policy_syscall policy_denied_syscalls[] = {
	/* other processes' memory and state */
	{ "ptrace", PSA_EPERM },
	{ "process_vm_readv", PSA_EPERM },
	{ "process_vm_writev", PSA_EPERM },
	{ "pidfd_getfd", PSA_EPERM },
	{ "kcmp", PSA_EPERM },
	{ "migrate_pages", PSA_EPERM },
	{ "move_pages", PSA_EPERM },
	/* the mount table and the root */
	{ "mount", PSA_EPERM },
	{ "umount2", PSA_EPERM },
	{ "pivot_root", PSA_EPERM },
	{ "chroot", PSA_EPERM },
	{ "fsopen", PSA_EPERM },
	{ "fsconfig", PSA_EPERM },
	{ "fsmount", PSA_EPERM },
	{ "fspick", PSA_EPERM },
	{ "move_mount", PSA_EPERM },
	{ "open_tree", PSA_EPERM },
	{ "mount_setattr", PSA_EPERM },
	/* namespaces: the user namespace is the kernel's largest attack surface */
	{ "unshare", PSA_EPERM },
	{ "setns", PSA_EPERM },
	/* clone3 passes its flags in memory, out of seccomp's reach: ENOSYS
	 * makes glibc fall back to clone, whose flags are filtered */
	{ "clone3", PSA_ENOSYS },
	/* kernel subsystems with a long record of privilege escalations */
	{ "bpf", PSA_EPERM },
	{ "keyctl", PSA_EPERM },
	{ "add_key", PSA_EPERM },
	{ "request_key", PSA_EPERM },
	{ "io_uring_setup", PSA_EPERM },
	{ "io_uring_enter", PSA_EPERM },
	{ "io_uring_register", PSA_EPERM },
	{ "perf_event_open", PSA_EPERM },
	{ "userfaultfd", PSA_EPERM },
	{ "open_by_handle_at", PSA_EPERM },
	{ "name_to_handle_at", PSA_EPERM },
	{ "lookup_dcookie", PSA_EPERM },
	{ "fanotify_init", PSA_EPERM },
	/* the machine itself */
	{ "kexec_load", PSA_EPERM },
	{ "kexec_file_load", PSA_EPERM },
	{ "init_module", PSA_EPERM },
	{ "finit_module", PSA_EPERM },
	{ "delete_module", PSA_EPERM },
	{ "reboot", PSA_EPERM },
	{ "swapon", PSA_EPERM },
	{ "swapoff", PSA_EPERM },
	{ "acct", PSA_EPERM },
	{ "settimeofday", PSA_EPERM },
	{ "clock_settime", PSA_EPERM },
	{ "clock_adjtime", PSA_EPERM },
	{ "adjtimex", PSA_EPERM },
	{ "quotactl", PSA_EPERM },
	{ "quotactl_fd", PSA_EPERM },
	{ "vhangup", PSA_EPERM },
	{ "syslog", PSA_EPERM },
	{ "iopl", PSA_EPERM },
	{ "ioperm", PSA_EPERM },
	{ "uselib", PSA_EPERM },
	{ "sethostname", PSA_EPERM },
	{ "setdomainname", PSA_EPERM },
};
const size_t policy_denied_syscalls_count = ARRAY_SIZE(policy_denied_syscalls);

const unsigned long policy_clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
	CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};
const size_t policy_clone_ns_flags_count = ARRAY_SIZE(policy_clone_ns_flags);
