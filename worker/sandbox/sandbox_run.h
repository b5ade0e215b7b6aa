/*
 * One program's run in a jail (sandbox_run.c), as sandbox_run and
 * sandbox_run_once use it and as an interactive test (sandbox_interact.c)
 * drives two of them at once: its state, and its steps. Nothing outside
 * worker/sandbox/sandbox*.c includes this.
 */
#ifndef GOBOXD_SANDBOX_RUN_H
#define GOBOXD_SANDBOX_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/outtext.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/sandbox.h"

/* How often a running program's CPU time is read. */
#define CPU_POLL_MS 50

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
	bool exec_format;       /* the job's own program could not be run (ENOEXEC) */
	bool reaped;
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
	/* A live session's terminal (session_spec): in_w and out_r are its
	 * side, in_r, out_w and err_w the program's; no err_r. */
	const struct session_spec *tty;
	uint32_t run_flags;     /* more INITMSG_RUN_* flags for the RUN message */
	bool cgroup_borrowed;       /* cg is the jail's first cgroup, not ours */
	/* The last kill left cg empty: nothing has entered it since (only the
	 * init's RUN starts a program there), so the release need not look
	 * again (sandbox_run_emptied). */
	bool emptied;
};

/* Whatever is left in the run's cgroup killed, until none is left (the
 * init spared in a borrowed one); 0, or negative errno. */
int sandbox_run_emptied(struct run *run);

/* A run of step s in jail j into r, nothing started yet. */
void sandbox_run_init(struct run *run, struct jail *j, const struct step_spec *s,
		      struct step_result *r);
/* Its cgroup, its pipes and the fds the init is handed: 0, or negative
 * errno with the internal error set in the result. */
int sandbox_run_prepare(struct run *run);
/* The RUN message to the jail's init, with the program's fds. */
int sandbox_run_send(struct run *run);
/* One message from the init. 0, or negative errno (internal error set). */
int sandbox_run_init_message(struct run *run);
/* Read what is there; false at EOF or on error (the fd is then closed). */
bool sandbox_run_pump_read(struct run *run, int *fd);
/* Kill everything in the run's cgroup. */
void sandbox_run_kill(struct run *run);
/* Killed for a time limit, the wall clock's or the CPU's. */
void sandbox_run_time_out(struct run *run);
/* Kill the run when us, its CPU time, is over its limit. */
void sandbox_run_cpu_limit(struct run *run, uint64_t us);
/* A program killed but not reported dead in time: its init is broken. */
int sandbox_run_reap_overdue(struct run *run, uint64_t now);
/* The job's cancel descriptor, watched until it has fired once. */
bool sandbox_run_watch_cancel(const struct run *run);
/* After the program is gone: end what is left and read the pipes to EOF. */
void sandbox_run_drain(struct run *run);
/* The outcome from the cgroup's figures: the result complete. */
int sandbox_run_finish(struct run *run);
/* The memory and OOM part of an outcome from the cgroup's statistics. */
void sandbox_run_read_end(const struct run *run, const struct cgroup_stats *st,
			  struct run_outcome *o);
/* Whatever is left of a run: its cgroup (and anything in it), its fds. */
void sandbox_run_release(struct run *run);
/* The run's internal error: message in the result; returns rc. */
int sandbox_run_internal(struct run *run, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Time helpers of the loops: deadline passed; poll's timeout until next;
 * *next lowered to t (0: none). */
bool sandbox_run_past(uint64_t deadline_ms, uint64_t now);
int sandbox_run_poll_ms(uint64_t next, uint64_t now);
void sandbox_run_min_at(uint64_t *next, uint64_t t);
/* SIGPIPE held while the loops write to pipes a program may close. */
void sandbox_run_sigpipe_hold(sigset_t *old);
void sandbox_run_sigpipe_release(const sigset_t *old);

#endif
