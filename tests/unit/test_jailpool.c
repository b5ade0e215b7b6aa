/*
 * A worker's two jails (worker/jailpool.c) on pretend jails: whatever the
 * reset thread and the job thread do meanwhile, a worker holds two jails
 * at most, and every jail started is torn down exactly once.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "worker/jailpool.h"

#define MAX_JAILS 64

/* A pretend jail: what became of it. */
struct jail {
	int id;
	bool files;     /* its job directory is there */
	int destroyed;  /* times torn down: 1 in the end */
	bool fail;      /* its next reset fails */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct jail jails[MAX_JAILS];
	int started, live, most_live;
	pthread_t job_thread; /* the test's own, which plays it */
	bool hold;      /* the reset thread's next reset waits for release */
	bool holding;   /* that reset is waiting */
	bool released;
} fake = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int fake_start(void *arg, struct jail **out, char *err, size_t errlen)
{
	struct jail *j;

	(void)arg;
	pthread_mutex_lock(&fake.mu);
	if (fake.started == MAX_JAILS) {
		pthread_mutex_unlock(&fake.mu);
		snprintf(err, errlen, "no more pretend jails");
		return -EAGAIN;
	}
	j = &fake.jails[fake.started];
	j->id = fake.started++;
	j->files = true;
	if (++fake.live > fake.most_live)
		fake.most_live = fake.live;
	pthread_mutex_unlock(&fake.mu);
	*out = j;
	return 0;
}

static int fake_recycle(struct jail *j, char *err, size_t errlen)
{
	pthread_mutex_lock(&fake.mu);
	if (fake.hold && !pthread_equal(pthread_self(), fake.job_thread)) {
		fake.hold = false;
		fake.holding = true;
		pthread_cond_broadcast(&fake.cv);
		while (!fake.released)
			pthread_cond_wait(&fake.cv, &fake.mu);
	}
	pthread_mutex_unlock(&fake.mu);
	if (j->fail) {
		snprintf(err, errlen, "pretend jail %d does not reset", j->id);
		return -EIO;
	}
	return 0;
}

static void fake_discard_files(struct jail *j)
{
	j->files = false;
}

static void fake_destroy(struct jail *j)
{
	pthread_mutex_lock(&fake.mu);
	j->files = false;
	j->destroyed++;
	fake.live--;
	pthread_mutex_unlock(&fake.mu);
}

static const struct jailpool_ops fake_ops = {
	.start = fake_start,
	.recycle = fake_recycle,
	.discard_files = fake_discard_files,
	.destroy = fake_destroy,
};

static void fresh(void)
{
	memset(fake.jails, 0, sizeof(fake.jails));
	fake.started = fake.live = fake.most_live = 0;
	fake.job_thread = pthread_self();
	fake.hold = fake.holding = fake.released = false;
}

TestSuite(jailpool, .init = fresh, .timeout = 20);

/* Until the reset thread waits in the held jail's reset. */
static void wait_holding(void)
{
	pthread_mutex_lock(&fake.mu);
	while (!fake.holding)
		pthread_cond_wait(&fake.cv, &fake.mu);
	pthread_mutex_unlock(&fake.mu);
}

static void hold_next_reset(void)
{
	pthread_mutex_lock(&fake.mu);
	fake.hold = true;
	fake.holding = fake.released = false;
	pthread_mutex_unlock(&fake.mu);
}

static void release(void)
{
	pthread_mutex_lock(&fake.mu);
	fake.released = true;
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
}

/* Until the reset thread has handed back what it was given. */
static void wait_reset_done(struct jailpool *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->resetting)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

/* One job, as the job thread runs it: its jail, given back after. */
static struct jail *one_job(struct jailpool *p)
{
	struct jail *j;

	jailpool_refill(p);
	j = jailpool_take(p);
	cr_assert_not_null(j);
	jailpool_give(p, j);
	return j;
}

static void assert_all_torn_down_once(void)
{
	for (int i = 0; i < fake.started; i++) {
		cr_assert_eq(fake.jails[i].destroyed, 1, "jail %d torn down %d times", i,
			     fake.jails[i].destroyed);
		cr_assert_not(fake.jails[i].files, "jail %d left its files", i);
	}
	cr_assert_eq(fake.live, 0);
}

/*
 * The first job's jail is slow to reset, so the second job's, started
 * meanwhile, is reset in line; the first's reset ends while the second
 * is warm. The third job takes the warm one: giving it back must not
 * push the first out of the reset thread's hands (it was lost, alive,
 * and a worker came to hold more jails than it may).
 */
static void a_slow_reset_and_two_jobs(struct jailpool *p)
{
	hold_next_reset();
	(void)one_job(p);
	wait_holding();
	(void)one_job(p);
	release();
	wait_reset_done(p);
	(void)one_job(p);
	wait_reset_done(p);
}

Test(jailpool, a_reset_that_ends_while_the_other_jail_serves_is_not_lost)
{
	struct jailpool p;

	cr_assert_eq(jailpool_open(&p, &fake_ops, NULL, 2), 0);
	a_slow_reset_and_two_jobs(&p);
	cr_assert_eq(fake.started, 2);
	cr_assert_eq(one_job(&p)->id, 0, "the jail whose reset ended serves the next job");
	jailpool_close(&p);
	cr_assert_eq(fake.most_live, 2);
	assert_all_torn_down_once();
}

Test(jailpool, two_jails_at_most_however_the_resets_fall)
{
	struct jailpool p;

	cr_assert_eq(jailpool_open(&p, &fake_ops, NULL, 2), 0);
	for (int round = 0; round < 10; round++) {
		a_slow_reset_and_two_jobs(&p);
		(void)one_job(&p);
		cr_assert_leq(fake.live, 2, "round %d: %d live jails", round, fake.live);
	}
	jailpool_close(&p);
	cr_assert_eq(fake.started, 2, "no jail was lost, so none had to be started anew");
	assert_all_torn_down_once();
}

static int wakes;

static void count_wake(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fake.mu);
	wakes++;
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
}

Test(jailpool, a_jail_that_does_not_reset_goes_and_another_takes_its_place)
{
	struct jailpool p;
	struct jail *first;

	cr_assert_eq(jailpool_open(&p, &fake_ops, NULL, 2), 0);
	wakes = 0;
	p.wake = count_wake;
	jailpool_refill(&p);
	first = jailpool_take(&p);
	first->fail = true;
	jailpool_give(&p, first);
	wait_reset_done(&p);
	cr_assert_not(first->files, "its files go at once");
	cr_assert_eq(first->destroyed, 0, "the job thread tears it down, when idle");
	/* the job thread, waiting for a job, is told (the suite's timeout
	 * fails the test when it never is) */
	pthread_mutex_lock(&fake.mu);
	while (!wakes)
		pthread_cond_wait(&fake.cv, &fake.mu);
	pthread_mutex_unlock(&fake.mu);
	cr_assert_eq(wakes, 1);
	while (jailpool_idle_work(&p))
		;
	cr_assert_eq(first->destroyed, 1);
	cr_assert_neq(one_job(&p), first);
	jailpool_close(&p);
	assert_all_torn_down_once();
}

Test(jailpool, with_one_jail_each_is_reset_before_the_next_job)
{
	struct jailpool p;

	cr_assert_eq(jailpool_open(&p, &fake_ops, NULL, 1), 0);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(one_job(&p)->id, 0);
	fake.jails[0].fail = true;
	cr_assert_eq(one_job(&p)->id, 0, "its reset fails after this job");
	cr_assert_eq(one_job(&p)->id, 1, "a new jail in its place");
	jailpool_close(&p);
	cr_assert_eq(fake.most_live, 2, "the failed one waited to be torn down");
	assert_all_torn_down_once();
}
