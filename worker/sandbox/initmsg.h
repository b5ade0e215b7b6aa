/*
 * The messages between a worker and goboxd-init, the pid 1 of each jail.
 *
 * They travel over a SOCK_SEQPACKET socketpair (one message per packet; fds
 * ride along with SCM_RIGHTS). Both ends are built from the same tree, so a
 * message is a fixed header followed by its body; HELLO carries the
 * protocol version and the worker refuses an init that speaks another.
 *
 *   init   -> worker  HELLO     once, when the jail is ready
 *   worker -> init    FILTER    once, the seccomp program every child installs
 *                               (but a job's with a network, NETWORK);
 *                               a RUN before it is refused (FAILED, protocol)
 *   worker -> init    ENTER     at most once, before any RUN: fds, one
 *                               cgroup.procs file per hierarchy; the init
 *                               moves itself into that cgroup, so that the
 *                               first program is born there (no migration,
 *                               which can sleep, on the request's path)
 *   init   -> worker  ENTERED   it is in (id 0), or FAILED with id 0
 *   worker -> init    RUN       start a program; fds: stdin, stdout, stderr,
 *                               then one cgroup.procs file per hierarchy
 *   init   -> worker  FAILED    it could not be started (stage and errno)
 *   init   -> worker  EXITED    its exact wait status, once reaped (a
 *                               program that started is not told apart:
 *                               the worker has nothing to do until it ends)
 *   worker -> init    RESET     the job is over, the jail serves another:
 *                               every process killed and reaped, /tmp
 *                               unmounted, IPC objects removed, the
 *                               network namespace kept or a new one, the
 *                               pid counter back
 *                               to 1, the next program's /tmp and IPC
 *                               namespace made (init.c, reset_steps); with one fd
 *                               (a detached mount, worker/sandbox/disks.h)
 *                               and a path as its body: the next job's
 *                               box, mounted there in place of the last
 *                               right after RESET_DONE, before the init
 *                               reads another message (it exits if it
 *                               cannot)
 *   init   -> worker  RESET_DONE all of that holds (id 0), or FAILED with id
 *                               0, stage RESET: the worker ends the jail
 *   worker -> init    CLEAR     between two programs that share the first
 *                               cgroup, once the worker emptied it: what
 *                               the last program left beyond its processes
 *                               goes now (its /tmp unmounted, its IPC
 *                               objects removed), so that its memory is
 *                               uncharged before the worker sets the
 *                               cgroup's counters back
 *   init   -> worker  CLEARED   done (id 0), or FAILED with id 0, stage
 *                               TMP
 *   worker -> init    NETWORK   a job's network starts (worker/sandbox/
 *                               network.h): the namespaces to enter, which
 *                               only the init may open (it is not dumpable);
 *                               its body, the seccomp program for the job's
 *                               programs from now on, which lets internet
 *                               sockets through; the job's RESET makes a
 *                               new network namespace
 *   init   -> worker  NETWORK_NS two fds, its user namespace and its
 *                               network namespace (id 0), or FAILED with
 *                               id 0, stage NETWORK
 *
 * Every RUN carries an id that its answers repeat, so several programs may
 * run in one jail at once (two sides of an interactive test). The worker
 * ends the jail by closing its end: the init kills everything and exits.
 */
#ifndef GOBOXD_INITMSG_H
#define GOBOXD_INITMSG_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INITMSG_VERSION 12
#define INITMSG_MAGIC 0x67626931u   /* "gbi1" */
/* The init's end of the socketpair, inside the jail. */
#define INITMSG_FD 3

/* The init's one argument, given when the driver leaves it in the
 * worker's network namespace (bwrap): it makes the jail's own, always,
 * before any program runs. Without it the driver made one (nsjail). */
#define INITMSG_ARG_NEW_NETWORK "--new-network"
/* Largest packet either side sends (argv and environment included). */
#define INITMSG_MAX (128 * 1024)
/* stdin, stdout, stderr and at most three cgroup hierarchies (v1). */
#define INITMSG_MAX_FDS 6
#define INITMSG_MAX_FILTER 4096     /* BPF instructions */
/* The words of initmsg_run.cpus: CPU_SETSIZE (1024) CPUs. */
#define INITMSG_CPU_WORDS 16

enum initmsg_type {
	INITMSG_HELLO = 1,
	INITMSG_FILTER,
	INITMSG_RUN,
	INITMSG_FAILED,
	INITMSG_EXITED,
	INITMSG_ENTER,
	INITMSG_ENTERED,
	INITMSG_RESET,
	INITMSG_RESET_DONE,
	INITMSG_CLEAR,
	INITMSG_CLEARED,
	INITMSG_NETWORK,
	INITMSG_NETWORK_NS,
};

struct initmsg_hdr {
	uint32_t magic;
	uint32_t type;
	uint32_t id;            /* RUN and its answers */
	uint32_t len;           /* bytes after the header */
};

struct initmsg_hello {
	uint32_t version;
	int32_t pid;            /* the init's own pid, as it sees it (1) */
};

/* RUN flags */
#define INITMSG_RUN_FRESH_TMP 0x1u      /* mount a new, empty /tmp before starting */
#define INITMSG_RUN_TMP_NOEXEC 0x2u     /* ...with noexec */
/* Start with SIGPIPE ignored: a write to a pipe nobody reads fails with
 * EPIPE instead of killing (an interactor whose solution has gone). */
#define INITMSG_RUN_SIGPIPE_IGNORED 0x4u
/* Born in the init's own cgroup (the one ENTER moved it into), joining
 * none: the RUN carries no cgroup.procs fds. Every program of a job may
 * be, one after the other (CLEAR between them). */
#define INITMSG_RUN_IN_PLACE 0x8u
/* fd 0 is a terminal (a live session's): the program, leader of a
 * session of its own, takes it as its controlling terminal. */
#define INITMSG_RUN_TTY 0x10u
/* fds 1 and 2 are the worker's pipes, which the init keeps open until it
 * has reaped the program and sent its EXITED: no end of file wakes the
 * worker while the program exits, and once it has emptied the cgroup,
 * what the pipes hold is all there will be. */
#define INITMSG_RUN_HOLD_OUTPUT 0x20u

enum initmsg_rlimit {
	INITMSG_RLIMIT_CPU,
	INITMSG_RLIMIT_FSIZE,
	INITMSG_RLIMIT_NOFILE,
	INITMSG_RLIMIT_NPROC,
	INITMSG_RLIMIT_CORE,
	INITMSG_RLIMIT_MEMLOCK,
	INITMSG_RLIMIT_COUNT
};

struct initmsg_run {
	uint32_t flags;
	uint32_t uid, gid;      /* inside the jail */
	uint32_t ncgroup;       /* cgroup.procs fds after the three stdio fds */
	int32_t cpu;            /* the one CPU the program may run on; -1: any */
	/* Where cpu is -1: the CPUs the program runs on, a cpu_set_t's bytes;
	 * none set: the init's own. A worker that keeps itself and its jails
	 * on one CPU gives its programs the CPUs it had before
	 * (worker/worker.c, keep_to_own_cpu). */
	uint64_t cpus[INITMSG_CPU_WORDS];
	uint64_t tmp_bytes;     /* size of the fresh /tmp */
	uint64_t tmp_inodes;    /* and how many files it may hold */
	uint64_t rlimit[INITMSG_RLIMIT_COUNT]; /* soft = hard; UINT64_MAX: unlimited */
	uint32_t argc, envc;
	/* then: cwd, argv[0..argc-1], envp[0..envc-1], each NUL-terminated */
};

/* Where starting a program failed, for the worker's error message. */
enum initmsg_stage {
	INITMSG_STAGE_FORK = 1,
	INITMSG_STAGE_TMP,
	INITMSG_STAGE_SETSID,
	INITMSG_STAGE_CGROUP,
	INITMSG_STAGE_FDS,
	INITMSG_STAGE_RLIMITS,
	INITMSG_STAGE_CHDIR,
	INITMSG_STAGE_CREDENTIALS,
	INITMSG_STAGE_CAPABILITIES,
	INITMSG_STAGE_NO_NEW_PRIVS,
	INITMSG_STAGE_SECCOMP,
	INITMSG_STAGE_EXEC,
	INITMSG_STAGE_PROTOCOL,
	INITMSG_STAGE_CPU,
	INITMSG_STAGE_IPC,
	INITMSG_STAGE_SIGNALS,
	INITMSG_STAGE_RESET,
	INITMSG_STAGE_TTY,
	INITMSG_STAGE_NETWORK,
};

struct initmsg_failed {
	uint32_t stage;
	int32_t err;            /* errno */
};

/* EXITED flags: its /tmp was full (bytes or files) when it ended */
#define INITMSG_EXITED_TMP_FULL 0x1u

struct initmsg_exited {
	int32_t status;         /* as waitpid(2) gave it */
	uint32_t flags;
	/* the largest resident set of the program or any child it waited for
	 * (wait4's ru_maxrss): its memory without the page cache */
	uint64_t maxrss_kb;
};

/*
 * A capped tmpfs (a program's /tmp, a job's disk) counts as full when a
 * write would fail: a tmpfs fills page by page, so a program that met
 * ENOSPC leaves less than a few pages free, and one that met it for files
 * leaves no inode. The init and the worker decide it the same way.
 */
#define INITMSG_FULL_SLACK (64 * 1024)

static inline bool initmsg_fs_full(const struct statvfs *sv)
{
	return (uint64_t)sv->f_bavail * sv->f_frsize < INITMSG_FULL_SLACK ||
	       (sv->f_files > 0 && sv->f_favail == 0);
}

/* Names of the stages, for messages ("execve", "cgroup"...). */
static inline const char *initmsg_stage_name(uint32_t stage)
{
	static const char *const names[] = {
		"?", "fork", "mounting /tmp", "setsid", "joining the cgroup", "stdio",
		"rlimits", "chdir", "setuid", "dropping capabilities", "no_new_privs",
		"seccomp", "execve", "protocol", "CPU affinity", "a fresh IPC namespace",
		"signals", "reset",
	};

	return stage < sizeof(names) / sizeof(names[0]) ? names[stage] : "?";
}

/*
 * The fds a pre-exec child hands over: fds[i] becomes fd i for each
 * i < n, and every fd from n up is closed. Those from cloexec_from up
 * close on exec (the error pipe, which a successful exec must close to
 * say so); the others stay open across it. Here, not in a .c file of the
 * worker, because both pre-exec children place their fds this way (the
 * worker's for the jail binary, the init's for each program) and
 * goboxd-init links libc alone.
 *
 * Each fd is first copied to n or above, so that placing one never
 * overwrites one not yet placed: fds[] may name the same fd twice, or an
 * fd sitting on another's target. On return fds[i] says where each one
 * is now: i after success; after a failure, a copy or the original, so
 * that the caller can still report through its error pipe. 0, or -errno.
 * Async-signal-safe.
 */
static inline int initmsg_place_fds(int *fds, int n, int cloexec_from)
{
	for (int i = 0; i < n; i++) {
		int copy = fcntl(fds[i], F_DUPFD_CLOEXEC, n);

		if (copy < 0)
			return -errno;
		fds[i] = copy;
	}
	for (int i = 0; i < n; i++) {
		int rc = i >= cloexec_from ? dup3(fds[i], i, O_CLOEXEC) : dup2(fds[i], i);

		if (rc < 0)
			return -errno;
	}
	for (int i = 0; i < n; i++)
		fds[i] = i;
	/* The copies and everything inherited; close_range came with 5.9. */
	if (syscall(SYS_close_range, (unsigned)n, ~0U, 0) < 0)
		for (int fd = n; fd < 65536; fd++)
			close(fd);
	return 0;
}

#endif
