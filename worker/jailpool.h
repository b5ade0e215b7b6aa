/*
 * A worker's jails for its job thread: one warm for the next job, and the
 * last job's being reset meanwhile by a thread of its own, so that no job
 * waits for the reset of the one before it.
 *
 * A jail is reset after its job's answer (worker/sandbox/jail.c,
 * jail_recycle: every process killed, a new disk, /tmp and network,
 * the first cgroup set back): about 2 ms in which, before, a request that
 * came at once waited. Now the job thread hands the spent jail to the
 * reset thread and takes the other one, so a worker keeps at most two
 * live jails: one serving or warm, one resetting or warm. A jail whose
 * reset fails goes (its files at once, itself when the job thread is
 * idle), and a new one starts in its place. The job thread alone starts
 * and tears down jails (a jail dies with the thread that forked it); the
 * reset thread only resets.
 */
#ifndef GOBOXD_JAILPOOL_H
#define GOBOXD_JAILPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct jail;

/*
 * What the pool does to a jail: worker/sandbox/jail.h's functions
 * (jailpool_jails), or a test's. start: 0 and *out, or negative errno
 * with a reason; recycle: as jail_recycle.
 */
struct jailpool_ops {
	int (*start)(void *arg, struct jail **out, char *err, size_t errlen);
	int (*recycle)(struct jail *j, char *err, size_t errlen);
	void (*discard_files)(struct jail *j);
	void (*destroy)(struct jail *j);
};

/* The jails of a sandbox; arg: its struct sandbox. */
extern const struct jailpool_ops jailpool_jails;

/* Jails whose reset failed, torn down when the job thread is idle; past
 * this many, at once. */
#define JAILPOOL_SPENT_MAX 4

struct jailpool {
	const struct jailpool_ops *ops;
	void *arg;
	/* called by the reset thread when a reset failed: the job thread has
	 * idle work (jailpool_idle_work); NULL: none to call */
	void (*wake)(void *wake_arg);
	void *wake_arg;
	/* the job thread's own */
	struct jail *warm;      /* ready for the next job, or NULL */
	struct jail *spent[JAILPOOL_SPENT_MAX];
	size_t nspent;
	/* shared with the reset thread, under mu */
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct jail *resetting; /* handed over, its reset not done */
	struct jail *reset;     /* reset: ready for a job; none is handed over
				 * while it is taken */
	struct jail *failed;    /* its reset failed, its files gone: to tear down */
	bool quit;
};

/*
 * From the job thread, before any jail: with jails 2 (--jails-per-worker),
 * the reset thread started; with 1, each jail is reset in line, before
 * the next job, as when that thread cannot start. ops act on the jails,
 * given arg to start one. 0 or negative errno.
 */
int jailpool_open(struct jailpool *p, const struct jailpool_ops *ops, void *arg, unsigned jails);
/* Every jail torn down and the reset thread ended; from the job thread. */
void jailpool_close(struct jailpool *p);
/*
 * A jail for the next job: the warm one, or one whose reset is done (or
 * in flight: waited for, it is shorter than a start), or a new one. NULL
 * (logged) when none could be started.
 */
struct jail *jailpool_take(struct jailpool *p);
/* The jail of a job whose answer is on its way (NULL: none could be
 * started): to the reset thread, or reset here when that one is busy. */
void jailpool_give(struct jailpool *p, struct jail *j);
/*
 * A warm jail for the next job, before it comes: one whose reset is
 * done, or a new one started while the other resets (it returns at the
 * fork), so that two take turns.
 */
void jailpool_refill(struct jailpool *p);
/* One piece of work for an idle job thread (a failed jail torn down):
 * true when it did one, and may be called again. A reset that fails
 * while the job thread waits calls p->wake (set it after jailpool_open),
 * so that the jail does not wait for the next job to go. */
bool jailpool_idle_work(struct jailpool *p);

#endif
