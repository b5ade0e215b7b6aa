/*
 * Job slots shared by the master and its workers: the limit holds
 * whoever starts a job, a worker is held by one side at a time, what
 * waits at the master goes first, and an ending gives everything back.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "common/admit.h"

static struct admit a;

static void fresh(void)
{
	memset(&a, 0, sizeof(a));
}

TestSuite(admit, .init = fresh);

Test(admit, the_limit_holds_for_the_master_and_the_workers_alike)
{
	cr_assert(admit_reserve(&a, 2));
	cr_assert(admit_take(&a, 0));
	cr_assert(admit_self(&a, 1, 2), "a second slot is free");
	cr_assert_not(admit_self(&a, 2, 2), "both slots are taken");
	cr_assert_not(admit_reserve(&a, 2));
	cr_assert_eq(admit_running(&a), 2);
	cr_assert_eq(atomic_load(&a.holder[2]), ADMIT_FREE, "a refused worker holds nothing");
}

Test(admit, a_worker_the_master_took_cannot_take_a_job_itself)
{
	cr_assert(admit_reserve(&a, 4));
	cr_assert(admit_take(&a, 3));
	cr_assert_not(admit_self(&a, 3, 4));
	cr_assert_eq(admit_running(&a), 1, "its failed try gave its slot back");
}

Test(admit, the_master_cannot_take_a_worker_that_runs_its_own_job)
{
	cr_assert(admit_self(&a, 5, 4));
	cr_assert_not(admit_take(&a, 5));
	cr_assert_eq(atomic_load(&a.holder[5]), ADMIT_SELF);
	admit_untake(&a, 5);
	cr_assert_eq(atomic_load(&a.holder[5]), ADMIT_SELF, "untake gives back only the master's");
}

Test(admit, whatever_waits_at_the_master_goes_first)
{
	admit_set_waiting(&a, 1);
	cr_assert_not(admit_self(&a, 0, 4));
	cr_assert_eq(admit_running(&a), 0);
	admit_set_waiting(&a, 0);
	cr_assert(admit_self(&a, 0, 4));
}

Test(admit, an_ending_frees_the_worker_and_its_slot_once)
{
	cr_assert(admit_self(&a, 0, 1));
	cr_assert(admit_end(&a, 0));
	cr_assert_eq(admit_running(&a), 0);
	cr_assert_not(admit_end(&a, 0), "a DONE with nothing held gives nothing back");
	cr_assert_eq(admit_running(&a), 0);
	cr_assert(admit_reserve(&a, 1));
	cr_assert(admit_take(&a, 0));
	cr_assert(admit_end(&a, 0));
	cr_assert_eq(admit_running(&a), 0);
	admit_unreserve(&a);
	cr_assert_eq(admit_running(&a), 0, "never below zero");
}

Test(admit, a_worker_ends_its_own_holding_and_may_take_its_next_job_at_once)
{
	cr_assert(admit_self(&a, 2, 1));
	cr_assert_eq(admit_release(&a, 2), ADMIT_SELF);
	cr_assert_eq(admit_running(&a), 0);
	cr_assert(admit_self(&a, 2, 1), "its slot and itself are free again");
	cr_assert_eq(admit_release(&a, 2), ADMIT_SELF);
	cr_assert(admit_reserve(&a, 1));
	cr_assert(admit_take(&a, 2));
	cr_assert_eq(admit_release(&a, 2), ADMIT_MASTER, "it says whose job it was");
	cr_assert_eq(admit_release(&a, 2), ADMIT_FREE, "a second ending gives nothing back");
	cr_assert_eq(admit_running(&a), 0);
	cr_assert_not(admit_end(&a, 2), "nor does its death after");
}

Test(admit, a_new_worker_in_a_slot_starts_free)
{
	cr_assert(admit_self(&a, 7, 4));
	admit_reset(&a, 7);
	cr_assert(admit_take(&a, 7));
}

/* Threads race as the master and as workers, two for each worker: none
 * may ever see more jobs running than the limit, nor a worker held twice. */
#define RACERS 6
#define ROUNDS 20000
#define LIMIT 2

static _Atomic unsigned running_seen, most, held[RACERS / 2], twice;

static bool try_one(size_t me, size_t worker)
{
	if (me % 2)
		return admit_self(&a, worker, LIMIT);
	if (!admit_reserve(&a, LIMIT))
		return false;
	if (admit_take(&a, worker))
		return true;
	admit_unreserve(&a);
	return false;
}

static void *race(void *arg)
{
	size_t me = (size_t)arg, worker = me / 2;

	for (int r = 0; r < ROUNDS; r++) {
		unsigned now, seen;

		if (!try_one(me, worker))
			continue;
		if (atomic_fetch_add(&held[worker], 1) != 0)
			atomic_fetch_add(&twice, 1);
		now = atomic_fetch_add(&running_seen, 1) + 1;
		seen = atomic_load(&most);
		while (now > seen && !atomic_compare_exchange_weak(&most, &seen, now))
			;
		atomic_fetch_sub(&running_seen, 1);
		atomic_fetch_sub(&held[worker], 1);
		if (!admit_end(&a, worker))
			atomic_fetch_add(&twice, 1);
	}
	return NULL;
}

Test(admit, racing_sides_never_run_more_than_the_limit)
{
	pthread_t t[RACERS];

	for (size_t i = 0; i < RACERS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, race, (void *)i), 0);
	for (size_t i = 0; i < RACERS; i++)
		pthread_join(t[i], NULL);
	cr_assert_gt(atomic_load(&most), 0, "some took a slot");
	cr_assert_leq(atomic_load(&most), LIMIT);
	cr_assert_eq(atomic_load(&twice), 0, "a worker was held by both sides");
	cr_assert_eq(admit_running(&a), 0);
}
