/*
 * A worker's job thread: it runs one job at a time off the event loop,
 * builds the job's whole answer (a big one takes seconds to print, and
 * the loop must not), and takes each job's jail from its pool
 * (worker/jailpool.h: one warm, the last one resetting). It lives
 * as long as the worker: jails are forked from it and die with it
 * (PR_SET_PDEATHSIG follows the forking thread).
 *
 * The loop and the thread share only this struct. The loop hands a job
 * over with jobthread_submit; the thread says it has news by writing the
 * worker's eventfd, and the loop takes it with jobthread_take: a streamed
 * answer's chunks so far, and whether the job is over. Only once it is
 * over does the loop read the result and the answer, then it calls
 * jobthread_reset. The loop's only other word to a running job is
 * jobthread_cancel.
 */
#ifndef GOBOXD_JOBTHREAD_H
#define GOBOXD_JOBTHREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/store.h"
#include "worker/outbox.h"
#include "worker/http/api.h"
#include "worker/http/api_judge0.h"
#include "worker/judge/job.h"

/*
 * What a live session's job (worker/session.c) has for the loop: the
 * program's pipes once it runs (the loop's from then on), its build's
 * output as it comes (a cached build's at once), and the build's end.
 */
struct jobthread_live {
	bool started;
	int fds[3];             /* its stdin, stdout and stderr: the parent ends */
	bool built;
	bool build_ok;
	int build_code;         /* its exit code, -1: none */
	int build_signal;       /* the signal that ended it, 0: none */
	struct buf build_out, build_err;
};

#define JOBTHREAD_SIGNALS 8

/* A live session's terminal: none (on false), or one of rows and cols. */
struct jobthread_tty {
	bool on;
	unsigned short rows, cols;
};

struct jobthread {
	/* Every job's environment but its jail and its listener; fixed at
	 * start. */
	struct job_env env;
	int evfd;               /* the worker's: wakes the loop */
	/* Written by the loop when the streamed answer's client goes away:
	 * the job's programs are killed and nothing more runs (job_env).
	 * cancelled is set first: the job's check between its steps. */
	int cancel_fd;
	atomic_bool cancelled;
	bool running;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool pending;           /* a job waits for the thread (under mu) */
	bool quit;              /* the thread must end (under mu) */
	bool pool_work;         /* its jail pool has idle work (under mu) */
	struct job_request *req;    /* non-NULL while a job is on: from its submit to its reset */
	const struct api_format *format; /* the wire format it came in: its answer's */
	struct job_result res;
	int rc;
	/*
	 * The answer, built whole by the job thread so that the loop never
	 * spends time on a big one: its head says keep-alive as the
	 * connection did when the job started (the loop rewrites it in the
	 * rare case that changed), with the headers in hdr.
	 */
	bool ka;
	char hdr[128];
	struct buf answer;
	int status;
	/*
	 * A streamed answer (Accept: application/x-ndjson): the job thread
	 * prints each line as its step is judged and frames it as a chunk
	 * into chunks (the head first, with the first line), and wakes the
	 * loop; the loop only moves the bytes to the connection. answer then
	 * holds the last line and the end of the body. chunks and done are
	 * under mu; stream and head_sent are the job thread's while the job
	 * runs.
	 */
	bool stream;
	bool head_sent;
	struct buf chunks;
	bool done;              /* the job and its answer are finished (under mu) */
	/*
	 * Judge0's submissions: the one the job runs (0: its client waits),
	 * whose token made a waited-for one, and the thread's own
	 * connection to the store, opened at its first need (NULL then, and
	 * store_error says why). Set by the loop before the first job:
	 * langs, callbacks.
	 */
	int64_t sub;
	uint64_t started_wall_ms;
	char owner[AUTH_OWNER_LEN + 1];  /* whose token a waiting client's is */
	/* The stored submission's result when the store refused it: the
	 * loop's to take (submissions_keep) before jobthread_reset. */
	char *unstored;
	struct store *store;
	char store_error[256];
	const struct langtab *langs;
	struct outbox *callbacks;
	/* A live session's job: its news for the loop and the signals its
	 * client sent, under mu; ctl_fd wakes the job thread for them. */
	bool session;
	bool build_streamed;    /* its build's output went as it came (under mu) */
	struct jobthread_tty tty;
	int ctl_fd;
	struct jobthread_live live;
	int signals[JOBTHREAD_SIGNALS];
	size_t nsignals;
};

/* Start the thread (with every signal blocked): 0 or a negative errno. */
int jobthread_start(struct jobthread *t, const struct job_env *env, int evfd);
/* Let the thread end once its job is over, and wait for it. */
void jobthread_stop(struct jobthread *t);
/*
 * Give the thread a job: req is its own until jobthread_reset, the answer
 * will say keep-alive as keep_alive does, with the headers in hdr. 0, or
 * -ESRCH when the thread is not running.
 */
int jobthread_submit(struct jobthread *t, struct job_request *req, const struct api_format *f,
		     bool stream, bool keep_alive, const char *hdr);
/* Give the thread a stored submission's job (no client waits: its result
 * goes to the store, and to its callback). */
int jobthread_submit_stored(struct jobthread *t, struct job_request *req,
			    const struct api_format *f, int64_t id);
/* Give the thread a live session's job: its program's pipes (or its
 * terminal, tty) go to the loop (jobthread_take_live), nothing is
 * answered. */
int jobthread_submit_session(struct jobthread *t, struct job_request *req,
			     const struct api_format *f, const struct jobthread_tty *tty);
/* A live session's news since the last call (its build output the
 * caller's to free). */
void jobthread_take_live(struct jobthread *t, struct jobthread_live *out);
/* A signal for a live session's program (dropped past JOBTHREAD_SIGNALS waiting). */
void jobthread_signal(struct jobthread *t, int sig);
/* What the thread has for the loop: the chunks of a streamed answer made
 * since the last call (the caller's to free), and whether the job is over. */
void jobthread_take(struct jobthread *t, struct buf *chunks, bool *done);
/* Stop the running job at once: its programs are killed, nothing more runs. */
void jobthread_cancel(struct jobthread *t);
/* The job is over and the loop has what it needs of it: free it all. */
void jobthread_reset(struct jobthread *t);

#endif
