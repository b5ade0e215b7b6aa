/*
 * The worker's sandbox context, and one sandboxed step: run a program in a
 * jail (worker/sandbox/jail.h), born in the jail's first cgroup (set back
 * for it; a cgroup of its own where that cannot be), feed stdin, capture
 * stdout and stderr up to their caps, enforce wall and CPU time, collect
 * CPU, peak memory and OOM from the cgroup, and kill what the program left
 * in it.
 *
 * Blocking: the caller is the worker's job thread.
 */
#ifndef GOBOXD_SANDBOX_H
#define GOBOXD_SANDBOX_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/limits.h"
#include "common/outtext.h"
#include "common/verdict.h"

/* Process-wide sandbox context, made once per worker. */
struct sandbox;

struct sandbox_opts {
	enum jail_kind jail;        /* auto resolves to nsjail, then bwrap */
	const char *nsjail_path;
	const char *bwrap_path;
	const char *cgroup_root;    /* NULL: discover */
	const char *cgroup_name;    /* this worker's sub-tree, e.g. "w3" */
	const char *init_path;      /* goboxd-init; NULL: next to goboxd, then installed */
	const char *jail_dir;       /* where jails make their job directories */
	const char *const *ro_mounts; /* extra host paths bound read-only (the
				       * languages'), NULL-terminated or NULL */
	uid_t uid;                  /* host uid the jailed program runs as */
	gid_t gid;
	uint64_t tmpfs_kb;          /* each program's fresh /tmp */
	/*
	 * The job disk: when disk_bytes is not 0, sandbox_open gives this
	 * process a mount namespace of its own and mounts a tmpfs of that
	 * size, holding at most disk_files files, over jail_dir, so that every
	 * job directory made here shares that cap. It must be called while
	 * the process has one thread and CAP_SYS_ADMIN. disk_files also caps
	 * the files of each program's /tmp (0: no cap).
	 */
	uint64_t disk_bytes;
	uint64_t disk_files;
	/*
	 * pin_cpu: every program runs on CPU cpu. has_cpu: only the steps
	 * that ask for it (step_spec.pin_cpu) do.
	 */
	bool pin_cpu;
	bool has_cpu;
	unsigned cpu;
	/*
	 * The CPUs every other program runs on. NULL: the init's, which are
	 * this process's, as its jails inherit them. A worker that keeps
	 * itself (and so its jails) on one CPU gives the ones it had before.
	 */
	const cpu_set_t *program_cpus;
	/* How many jobs one jail serves, reset between them (jail_recycle);
	 * 0 or 1: a new jail for every job. */
	unsigned jobs_per_jail;
	/* Jobs may have a network (worker/sandbox/network.h): every jail's
	 * /etc/resolv.conf names its resolver, a file of the jail dir. */
	bool network;
};

/*
 * 0 and *out, or negative errno with a reason in err (no jail binary, no
 * usable cgroup hierarchy...).
 */
int sandbox_open(const struct sandbox_opts *o, struct sandbox **out, char *err, size_t errlen);
/*
 * After sandbox_open, in a process that launches jails (a worker, the
 * prober): keep only the capabilities that takes, no_new_privs set
 * (caps_keep). Before any thread starts. 0 or negative errno.
 */
int sandbox_keep_caps(void);
void sandbox_close(struct sandbox *sandbox);
/* "nsjail" or "bwrap", and the jail binary's version line (may be ""). */
const char *sandbox_driver_name(const struct sandbox *sandbox);
const char *sandbox_driver_version(const struct sandbox *sandbox);
const char *sandbox_driver_path(const struct sandbox *sandbox);

struct jail_shared;
/* What every jail of this sandbox takes from it (worker/sandbox/jail.h). */
const struct jail_shared *sandbox_jail_shared(const struct sandbox *sandbox);

struct jail;
struct network;

struct step_spec {
	const char *const *argv;    /* argv[0]: absolute, or relative to the box */
	const char *const *envp;    /* whole environment of the program */
	struct limits limits;
	bool tmp_exec;              /* /tmp without noexec */
	unsigned open_files;        /* RLIMIT_NOFILE; 0: POLICY_NOFILE */
	const char *stdin_data;     /* may be NULL: empty stdin */
	size_t stdin_len;
	/* Caps on what is kept; going past a cap kills the program and sets
	 * output_limited. Zero: limits.output_kb for each stream. */
	size_t stdout_cap;
	size_t stderr_cap;
	size_t combined_cap;        /* 0: no cap on stdout+stderr together */
	/* The job's output budget (common/outtext.h), shared by its steps:
	 * output past it is cut as past a cap. NULL: none. */
	struct outtext_budget *budget;
	bool want_interleaved;      /* also record both streams in write order */
	bool pin_cpu;               /* on the sandbox's CPU (sandbox_opts.has_cpu) */
	/* Readable when the job must stop now (its client went away): the
	 * program is killed and the result says cancelled. 0: none (a spec
	 * starts zeroed, and fd 0 is never such a descriptor). */
	int cancel_fd;
	/* Called with what is kept of the output as it is read (a live
	 * session's build, shown as it goes); NULL: nothing to call. */
	void (*on_output)(void *arg, bool is_err, const char *data, size_t len);
	void *output_arg;
	/* The job's network (worker/sandbox/network.h): its caps checked as
	 * the program runs. NULL: none. */
	struct network *network;
};

struct step_result {
	struct run_outcome outcome;
	struct buf out;             /* captured stdout (truncated at cap) */
	struct buf err;             /* captured stderr (truncated at cap) */
	struct buf interleaved;     /* only if want_interleaved */
	bool out_truncated, err_truncated;
	uint64_t wall_ms;
	uint64_t cpu_ms;
	/* the step cgroup's, page cache included; the resident set below
	 * where the cgroup's counter never rose (sandbox_run.c's peak_kb) */
	uint64_t memory_peak_kb;
	uint64_t memory_rss_peak_kb; /* the largest resident set of its processes */
	char internal_msg[256];     /* set when outcome.internal_error */
	bool cancelled;             /* killed for spec.cancel_fd: no verdict */
};

void sandbox_step_result_init(struct step_result *r);
void sandbox_step_result_free(struct step_result *r);

/*
 * Run one step in jail j, from a fresh /tmp, in the jail's first cgroup
 * (or a cgroup of its own where that cannot be).
 * Returns 0 when the step ran (whatever the program did: see r->outcome),
 * or negative errno when the sandbox itself failed (then
 * r->outcome.internal_error is set and r->internal_msg says why).
 */
int sandbox_run(struct jail *j, const struct step_spec *s, struct step_result *r);
/* The same in a jail of its own around box_dir (probes, tests). */
int sandbox_run_once(struct sandbox *sandbox, const char *box_dir, const struct step_spec *s,
		     struct step_result *r);

/*
 * An interactive test: the solution and the interactor at once, each in a
 * jail of its own, the solution's stdout piped to the interactor's stdin
 * and the interactor's stdout to the solution's stdin (the worker holds
 * neither pipe). Their stderr is captured as in sandbox_run. With
 * protocol set, the worker serves the process management protocol
 * (worker/sandbox/procctl.h) for the solution in the interactor's control
 * directory while the test runs.
 */
struct interact_spec {
	const struct step_spec *solution;   /* its stdin_data is not used */
	const struct step_spec *interactor; /* its wall_ms is not used */
	uint32_t wall_ms;           /* the pair's wall limit */
	/* Exit codes (below 32) of an interactor that ends first after which
	 * the solution still runs to its own end, under its limits; any other
	 * end of the interactor stops the solution at once. */
	uint32_t solution_continues;
	bool protocol;
};

struct interact_result {
	struct step_result solution;
	struct step_result interactor;
	/* goboxd ended the solution (its kill, SIGKILL, ended it), and not
	 * for a limit of its own: */
	bool terminated;            /* the protocol's terminate wait, after the grace */
	bool stopped;               /* the interactor had ended (solution_continues) */
	/* The wall limit came while both ran: the solution is timed out and
	 * the interactor was killed with it (not a failure of its own). */
	bool wall_limit;
	/* ...and neither had used CPU time for a while: both were blocked,
	 * waiting for each other. */
	bool idle;
	unsigned protocol_errors;   /* rule breaks by the protocol's client */
	char protocol_error[128];   /* the last one */
};

void sandbox_interact_result_init(struct interact_result *r);
void sandbox_interact_result_free(struct interact_result *r);

/* How long a terminated program may take to exit by itself. */
#define SANDBOX_TERMINATE_GRACE_MS 50

/*
 * Run one interactive test in two ready (or starting) jails, the
 * interactor's with a control directory when protocol is set. Returns 0
 * when both ran (whatever they did), or negative errno when the sandbox
 * failed (then the failing side's internal_error is set).
 */
int sandbox_interact(struct jail *solution_jail, struct jail *interactor_jail,
		     const struct interact_spec *s, struct interact_result *r);

/*
 * A live session's program (worker/sandbox/sandbox_session.c): its stdin,
 * stdout and stderr are pipes whose ends the caller's loop moves from
 * the moment it starts (started hands them over, non-blocking; they are
 * then the loop's to close), so nothing of its output is captured here.
 * step's stdin_data and caps are not used; its wall limit is max_ms. A
 * signal the client sends is fetched through take_signal whenever ctl_fd
 * is readable; the step's cancel_fd ends it at once.
 */
struct session_spec {
	const struct step_spec *step;
	uint32_t max_ms;
	/* A terminal in place of the three pipes: the program's stdin, stdout
	 * and stderr are its one side, of rows and cols; in_w and out_r the
	 * other (the same terminal), err_r -1. */
	bool tty;
	unsigned short rows, cols;
	int ctl_fd;
	void (*started)(void *arg, int in_w, int out_r, int err_r);
	/* the build's output as it is read (step_spec.on_output) */
	void (*build_output)(void *arg, bool is_err, const char *data, size_t len);
	int (*take_signal)(void *arg);   /* 0: none */
	void *arg;
};

/* 0 when it ran (whatever it did: r->outcome, wall, CPU and memory, r->cancelled
 * when cancel_fd ended it), or negative errno when the sandbox failed. */
int sandbox_session(struct jail *j, const struct session_spec *s, struct step_result *r);

/* The marker appended to a captured stream that hit its cap. */
#define TRUNCATION_MARKER "\n[goboxd: output truncated]\n"

/* The environment every jailed program starts from (NULL-terminated); a
 * language's env entries replace same-named ones (worker/judge/job.c). */
extern const char *const sandbox_base_env[5];

#endif
