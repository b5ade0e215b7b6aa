/*
 * The sandbox process management protocol (SPEC.md section 7): the worker
 * serves it for one running program (an interactive test's solution) to a
 * client in another jail (the interactor), through two FIFOs in a
 * directory that only the client's jail shows (jail_control_dir, at
 * JAILPATH_CONTROL inside):
 *
 *   wait    the client opens it, writes '1' (keep running) or '0'
 *           (terminate), closes it;
 *   status  the client then opens it and reads to end of file: three
 *           lines, the program's CPU time in microseconds, its memory in
 *           bytes, and its state ("running", "exited with code 3"...).
 *
 * Any number of keep-running waits; one terminate wait, last: the caller
 * gives the program a grace period and then kills it, and the answer waits
 * for its end. A client that breaks the rules gets a state line starting
 * with "error: " (or end of file), never a hung worker.
 *
 * The worker keeps the wait FIFO open for reading and writing, so that a
 * client's open never blocks and the worker never sees end of file. The
 * status FIFO is the hard half: opening a FIFO for writing waits for a
 * reader, and nothing can be polled for that. A small thread blocks in
 * that open and hands each fd to the caller's loop; after each answer the
 * FIFO is replaced by a fresh one before the answer's fd is closed, so
 * that the client reading it sees end of file and the next open waits for
 * the next answer.
 */
#ifndef GOBOXD_PROCCTL_H
#define GOBOXD_PROCCTL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Names in the control directory. */
#define PROCCTL_WAIT "wait"
#define PROCCTL_STATUS "status"

enum procctl_state {
	PCS_RUNNING,
	PCS_EXITED,             /* code: the exit code */
	PCS_SIGNALED,           /* code: the signal */
	PCS_TIME,               /* killed by goboxd: a time limit */
	PCS_MEMORY,             /* killed: the memory limit */
	PCS_OUTPUT,             /* killed: its output went over the cap */
	PCS_TERMINATED,         /* killed: still running after the terminate grace */
};

struct procctl_status {
	uint64_t cpu_us;        /* cumulative, the program's cgroup */
	uint64_t memory_bytes;  /* now, the program's cgroup */
	enum procctl_state state;
	int code;
};

/* The served program, as the caller's loop knows it. */
struct procctl_ops {
	void (*status)(void *arg, struct procctl_status *out);
	/* The first terminate wait arrived: give the program its grace and
	 * kill it if it is still running then. */
	void (*terminate)(void *arg);
	/* Its end is known (the final status is what status() gives). */
	bool (*ended)(void *arg);
};

struct procctl;

/*
 * Serve the protocol in the directory dirfd (root's, searchable by the
 * client): fresh FIFOs owned by uid:gid (wait write-only, status
 * read-only for them) and the opener thread. 0 and *out, or negative
 * errno with a reason.
 */
int procctl_start(int dirfd, uid_t uid, gid_t gid, const struct procctl_ops *ops, void *arg,
		  struct procctl **out, char *err, size_t errlen);
/* Adds the fds to poll for POLLIN to pf (two); returns how many. */
int procctl_pollfds(const struct procctl *p, struct pollfd *pf);
bool procctl_owns_fd(const struct procctl *p, int fd);
/* Read requests, take a status fd, answer what can be answered. Call when
 * one of its fds is readable, and when ended() may have become true. */
void procctl_service(struct procctl *p);
/* The number of rule breaks seen, and the last one ("" when none). */
unsigned procctl_errors(const struct procctl *p);
const char *procctl_last_error(const struct procctl *p);
/* Stop the thread, close everything (a client waiting for an answer gets
 * end of file), free. NULL is fine. */
void procctl_stop(struct procctl *p);

/*
 * The three lines of an answer into buf (NUL-terminated); with error set,
 * the state line is "error: <error>". Returns the length, or the length
 * it would have had (snprintf's rule).
 */
size_t procctl_format(const struct procctl_status *st, const char *error, char *buf,
		      size_t len);

#endif
