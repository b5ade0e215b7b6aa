/*
 * The sandbox policy, as data: what the jailed program sees (mounts, user,
 * hostname) and which system calls it may not make. Both jail drivers
 * (worker/sandbox/jail_nsjail.c, worker/sandbox/jail_bwrap.c) and the seccomp builder
 * (worker/sandbox/seccomp.c) render these tables; nothing else decides policy.
 */
#ifndef GOBOXD_POLICY_H
#define GOBOXD_POLICY_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/lang/jailpath.h"

/* Identity and layout inside the jail (the paths: common/lang/jailpath.h). */
#define POLICY_INSIDE_UID 65534
#define POLICY_INSIDE_GID 65534
#define POLICY_HOSTNAME "sandbox"
/* goboxd-init is bound here read-only; it unmounts it once running. */
#define POLICY_INIT_PATH "/.goboxd-init"

enum policy_mount_kind {
	/* A host path shown read-only at the same place: a directory or file
	 * is bind-mounted, a symlink is recreated with the same target (so
	 * /lib -> usr/lib stays a symlink on merged-/usr hosts). */
	POLICY_MOUNT_HOST_RO,
	/* A character device bound read-write (null, zero, ...). */
	POLICY_MOUNT_DEVICE,
	/* A symlink created inside the jail: path -> target. */
	POLICY_MOUNT_SYMLINK,
};

struct policy_mount {
	const char *path;
	enum policy_mount_kind kind;
	const char *target;   /* POLICY_MOUNT_SYMLINK only */
};

/* Every entry is optional: a host path that does not exist is skipped. */
extern const struct policy_mount policy_mounts[];
extern const size_t policy_mounts_count;

enum policy_sys_action {
	POLICY_SYSCALL_KILL,         /* kill the process with SIGSYS: a clear runtime error */
	POLICY_SYSCALL_EPERM,        /* fail with EPERM: a harmless read some libraries make */
	POLICY_SYSCALL_ENOSYS,       /* pretend the call does not exist: runtimes fall back */
};

struct policy_syscall {
	const char *name;     /* kernel name, resolved with libseccomp */
	enum policy_sys_action action;
};

/* Denied outright, whatever the arguments: everywhere in a jail (the
 * baseline filter, under the jail binary and the init too), and to the
 * programs alone (the filter each installs). */
extern const struct policy_syscall policy_denied_everywhere[];
extern const size_t policy_denied_everywhere_count;
extern const struct policy_syscall policy_denied_syscalls[];
extern const size_t policy_denied_syscalls_count;

/*
 * Numbers for the denied calls newer than the libseccomp goboxd is built
 * with (Debian 12's 2.5.4 stops at Linux 6.2). Calls added since Linux 5.1
 * (424 and up) have one number on every architecture. A denied call found
 * neither here nor by libseccomp is left out: the kernel then does not
 * have it either, as far as anyone building goboxd could know.
 */
struct policy_syscall_nr {
	const char *name;
	int nr;
};

extern const struct policy_syscall_nr policy_syscall_nrs[];
extern const size_t policy_syscall_nrs_count;

/*
 * Calls that act on a process named by their arguments, refused with EPERM
 * when they name the jail's init (POLICY_INIT_PID: pid 1 of the programs'
 * pid namespace, where no program may make a namespace of its own) or
 * every process of a group or a uid, the init's among them: its limits,
 * nice value, I/O priority and scheduling class pass to every program it
 * starts after, the next user's job's too. A program's own, and its
 * children's, stay its to change. The filter compares the arguments' low
 * 32 bits, as the kernel reads a pid_t or an int.
 */
#define POLICY_INIT_PID 1

struct policy_init_guard {
	const char *name;
	unsigned pid_arg;       /* the argument that names a process */
	int which_arg;          /* -1, or the argument that says what pid_arg names */
	int which_process;      /* ...its value for one process */
	int which_many[2];      /* ...its values for a process group and a uid */
};

extern const struct policy_init_guard policy_init_guards[];
extern const size_t policy_init_guards_count;

/*
 * clone(2) with any of these flags kills the process (new namespaces).
 * CLONE_NEWTIME is absent on purpose: its bit (0x80) is part of the exit
 * signal byte for clone(2) and only reachable through clone3/unshare.
 */
extern const unsigned long policy_clone_ns_flags[];
extern const size_t policy_clone_ns_flags_count;

/*
 * socket(2) only for these families, socketpair(2) only for AF_UNIX; any
 * other family fails with POLICY_SOCKET_ERRNO. The family is an int: the
 * filter compares the argument's low 32 bits, as the kernel reads it.
 * A job without a network gets policy_socket_families: AF_UNIX, and
 * AF_NETLINK, which answers route and address queries (getifaddrs) and,
 * to a program without capabilities, changes nothing. A job with one
 * (network.h) gets policy_network_families as well: AF_INET and AF_INET6.
 * So a job without a network leaves nothing of the internet protocols in
 * its namespace (no counter, flow label or socket state), which lets the
 * jail keep the namespace for the next job (init.c, reset_network).
 * Everything else (PACKET, VSOCK, the many rarely used protocol families)
 * stays out of reach: this rule is the second wall behind the empty
 * namespace.
 */
extern const int policy_socket_families[];
extern const size_t policy_socket_families_count;
extern const int policy_network_families[];
extern const size_t policy_network_families_count;
#define POLICY_SOCKETPAIR_FAMILY AF_UNIX
#define POLICY_SOCKET_ERRNO EPERM

/*
 * ioctl(2) requests refused (POLICY_IOCTL_ERRNO) whatever the fd: those
 * of a terminal that reach past the program's own use of it (a live
 * session's program holds one, worker/sandbox/sandbox_run.c): typing into
 * its input (TIOCSTI), another line discipline (TIOCSETD, the kernel's
 * less-trodden code), the console's (TIOCCONS, TIOCLINUX). The request
 * is an unsigned int: its low 32 bits are compared, as for sockets.
 */
extern const unsigned int policy_denied_ioctls[];
extern const size_t policy_denied_ioctls_count;
#define POLICY_IOCTL_ERRNO EPERM

/* RLIMIT_NOFILE inside the jail. */
#define POLICY_NOFILE 256

#endif
