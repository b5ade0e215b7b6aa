#include "autoconf.h"

#include "worker/jailpool.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "common/log.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/sandbox.h"

static int start_sandbox_jail(void *arg, struct jail **out, char *err, size_t errlen)
{
	return jail_start(sandbox_jail_shared(arg), NULL, out, err, errlen);
}

static void discard_jail_files(struct jail *j)
{
	(void)jail_discard_files(j); /* it logs what it could not remove */
}

const struct jailpool_ops jailpool_jails = {
	.start = start_sandbox_jail,
	.recycle = jail_recycle,
	.discard_files = discard_jail_files,
	.destroy = jail_destroy,
};

/* A new jail; NULL (logged) when none could be started. */
static struct jail *start_jail(const struct jailpool *p)
{
	struct jail *j = NULL;
	char err[256];

	if (p->ops->start(p->arg, &j, err, sizeof(err)) < 0) {
		log_error("preparing a jail: %s", err);
		return NULL;
	}
	return j;
}

/* Whether the jail of the job just answered serves the next one too: a
 * reset that cannot be completed is logged, and the jail goes. A kernel
 * that cannot reset a cgroup's peak says so once: every job then gets a
 * new jail. */
static bool recycle(const struct jailpool *p, struct jail *j)
{
	static atomic_bool said_unsupported;
	char err[256];
	int rc = p->ops->recycle(j, err, sizeof(err));

	if (rc == -EDQUOT) {
		log_debug("a new jail: %s", err);
	} else if (rc == -EOPNOTSUPP) {
		if (!atomic_exchange(&said_unsupported, true))
			log_info("a new jail for every job: %s", err);
	} else if (rc < 0) {
		log_warn("the jail does not serve another job: %s", err);
	}
	return rc == 0;
}

static void *reset_main(void *arg)
{
	struct jailpool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct jail *j;
		bool ok;

		while (!p->resetting && !p->quit)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->quit)
			break;
		j = p->resetting;
		pthread_mutex_unlock(&p->mu);
		ok = recycle(p, j);
		/* The jail may wait, its files may not: the next job's share
		 * the job disk with them. */
		if (!ok)
			p->ops->discard_files(j);
		pthread_mutex_lock(&p->mu);
		p->resetting = NULL;
		if (ok)
			p->reset = j;
		else
			p->failed = j;
		pthread_cond_broadcast(&p->cv);
		if (!ok && p->wake) {
			pthread_mutex_unlock(&p->mu);
			p->wake(p->wake_arg);
			pthread_mutex_lock(&p->mu);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int jailpool_open(struct jailpool *p, const struct jailpool_ops *ops, void *arg, unsigned jails)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->arg = arg;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (jails < 2)
		return 0;
	rc = pthread_create(&p->thread, NULL, reset_main, p);
	if (rc != 0)
		return -rc;
	p->running = true;
	return 0;
}

/* Torn down at once when the list is full, or later when idle. */
static void add_spent(struct jailpool *p, struct jail *j)
{
	if (!j)
		return;
	if (p->nspent == JAILPOOL_SPENT_MAX)
		p->ops->destroy(p->spent[--p->nspent]);
	p->spent[p->nspent++] = j;
}

/* What the reset thread finished: a jail ready (or NULL), and a failed
 * one to the spent list. With wait, a reset in flight is waited for. */
static struct jail *collect(struct jailpool *p, bool wait)
{
	struct jail *ready, *failed;

	pthread_mutex_lock(&p->mu);
	while (wait && p->resetting)
		pthread_cond_wait(&p->cv, &p->mu);
	ready = p->reset;
	failed = p->failed;
	p->reset = p->failed = NULL;
	pthread_mutex_unlock(&p->mu);
	add_spent(p, failed);
	return ready;
}

struct jail *jailpool_take(struct jailpool *p)
{
	struct jail *j = p->warm;

	p->warm = NULL;
	if (!j)
		j = collect(p, true);
	return j ? j : start_jail(p);
}

void jailpool_give(struct jailpool *p, struct jail *j)
{
	bool handed = false;

	if (!j)
		return;
	/* A reset the thread finished meanwhile is taken first: the
	 * thread's one slot for a finished jail must be free before it is
	 * handed another, or the jail in it would be lost, alive. */
	if (!p->warm)
		p->warm = collect(p, false);
	pthread_mutex_lock(&p->mu);
	if (p->running && !p->resetting && !p->reset) {
		p->resetting = j;
		handed = true;
	}
	pthread_mutex_unlock(&p->mu);
	if (handed) {
		/* after the unlock, as jobthread.c's submit */
		pthread_cond_signal(&p->cv);
		return;
	}
	if (recycle(p, j)) {
		if (!p->warm) {
			p->warm = j;
			return;
		}
		/* two ready already: this one is one too many */
	}
	p->ops->discard_files(j);
	add_spent(p, j);
}

void jailpool_refill(struct jailpool *p)
{
	if (p->warm)
		return;
	p->warm = collect(p, false);
	/* None is ready: a new one, while the other (if any) resets. Two at
	 * most, and without a reset in flight the next job would wait for a
	 * start anyway: better now than then. */
	if (!p->warm)
		p->warm = start_jail(p);
}

bool jailpool_idle_work(struct jailpool *p)
{
	struct jail *failed;

	pthread_mutex_lock(&p->mu);
	failed = p->failed;
	p->failed = NULL;
	pthread_mutex_unlock(&p->mu);
	add_spent(p, failed);
	if (!p->nspent)
		return false;
	p->ops->destroy(p->spent[--p->nspent]);
	return true;
}

void jailpool_close(struct jailpool *p)
{
	if (p->running) {
		pthread_mutex_lock(&p->mu);
		p->quit = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		p->running = false;
	}
	/* the thread is gone: nothing is shared any more */
	add_spent(p, p->resetting);
	add_spent(p, p->reset);
	add_spent(p, p->failed);
	add_spent(p, p->warm);
	p->resetting = p->reset = p->failed = p->warm = NULL;
	while (p->nspent)
		p->ops->destroy(p->spent[--p->nspent]);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}
