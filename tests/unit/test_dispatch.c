/*
 * The master's dispatch with fake workers: which head goes next, the
 * concurrency limit, and what becomes of an entry no worker took.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "master/dispatch.h"

#define MAX_CALLS 16

/*
 * The master's side, faked: idle workers take entries until there are
 * none; rc[i], when set, is what the i-th hand-over answers instead. The
 * job slots are real (common/admit.h): dispatch reserves one for each.
 */
struct fake {
	struct admit admit;
	unsigned idle;
	int rc[MAX_CALLS];
	unsigned calls;
	uint64_t handed[MAX_CALLS]; /* each taken entry's enq_ms, in order */
	unsigned nhanded;
	uint64_t refused[MAX_CALLS];
	unsigned nrefused;
	struct queue clients, subs;
};

static int fake_hand_over(void *arg, const struct queue_entry *e)
{
	struct fake *f = arg;
	unsigned i = f->calls++;

	cr_assert_lt(i, MAX_CALLS, "dispatch does not stop");
	if (f->rc[i])
		return f->rc[i];
	if (f->idle == 0)
		return -EAGAIN;
	f->idle--;
	f->handed[f->nhanded++] = e->enq_ms;
	return 0;
}

static void fake_overloaded(void *arg, struct queue_entry *e)
{
	struct fake *f = arg;

	cr_assert_eq(e->sub, 0, "only a client is refused");
	f->refused[f->nrefused++] = e->enq_ms;
}

static const struct dispatch_hooks hooks = { .hand_over = fake_hand_over,
					     .overloaded = fake_overloaded };

static void fake_init(struct fake *f, unsigned idle)
{
	memset(f, 0, sizeof(*f));
	f->idle = idle;
	queue_init(&f->clients, MAX_CALLS);
	queue_init(&f->subs, 0);
}

static void fake_free(struct fake *f)
{
	queue_free(&f->clients);
	queue_free(&f->subs);
}

/* Entries are told apart by their enqueue time. */
static void add_client(struct fake *f, uint64_t enq_ms)
{
	struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = enq_ms };

	cr_assert_eq(queue_push(&f->clients, &e), 0);
}

static void add_sub(struct fake *f, uint64_t enq_ms)
{
	struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = enq_ms,
				 .sub = (int64_t)enq_ms + 1000 };

	queue_push_unbounded(&f->subs, &e);
}

static void run(struct fake *f, bool stopping, unsigned limit)
{
	struct dispatch_hooks h = hooks;

	h.arg = f;
	dispatch_run(&f->clients, &f->subs, stopping, &f->admit, limit, &h);
}

Test(dispatch, the_head_that_waited_longest_goes_first_clients_on_a_tie)
{
	static const uint64_t order[] = { 10, 20, 30, 30, 40, 50 };
	struct fake f;

	fake_init(&f, 10);
	cr_assert_null(dispatch_next(&f.clients, &f.subs, false), "nothing waits");
	add_client(&f, 10);
	add_client(&f, 30);
	add_client(&f, 50);
	add_sub(&f, 20);
	add_sub(&f, 30);
	add_sub(&f, 40);
	cr_assert_eq(dispatch_next(&f.clients, &f.subs, false), &f.clients);
	run(&f, false, 10);
	cr_assert_eq(f.nhanded, 6);
	for (unsigned i = 0; i < 6; i++)
		cr_assert_eq(f.handed[i], order[i], "hand-over %u: %lu", i,
			     (unsigned long)f.handed[i]);
	cr_assert_eq(f.clients.len + f.subs.len, 0);
	fake_free(&f);
}

Test(dispatch, the_tie_goes_to_the_client)
{
	struct fake f;

	fake_init(&f, 1);
	add_sub(&f, 7);
	add_client(&f, 7);
	run(&f, false, 10);
	cr_assert_eq(f.nhanded, 1);
	cr_assert_eq(f.clients.len, 0, "the client went");
	cr_assert_eq(f.subs.len, 1);
	fake_free(&f);
}

Test(dispatch, a_stopping_master_leaves_stored_submissions_in_the_store)
{
	struct fake f;

	fake_init(&f, 10);
	add_sub(&f, 1);
	add_client(&f, 5);
	add_sub(&f, 6);
	run(&f, true, 10);
	cr_assert_eq(f.nhanded, 1);
	cr_assert_eq(f.handed[0], 5);
	cr_assert_eq(f.subs.len, 2);
	cr_assert_null(dispatch_next(&f.clients, &f.subs, true));
	cr_assert_eq(dispatch_next(&f.clients, &f.subs, false), &f.subs);
	fake_free(&f);
}

Test(dispatch, no_more_run_than_the_limit)
{
	struct fake f;

	fake_init(&f, 10);
	for (uint64_t t = 1; t <= 5; t++)
		add_client(&f, t);
	atomic_store(&f.admit.running, 3);
	run(&f, false, 4);
	cr_assert_eq(f.nhanded, 1, "one slot was free");
	cr_assert_eq(admit_running(&f.admit), 4);
	cr_assert_eq(f.clients.len, 4);

	/* at the limit, no worker is even asked */
	run(&f, false, 4);
	cr_assert_eq(f.calls, 1);
	cr_assert_eq(f.clients.len, 4);

	/* a job ends: the next oldest goes */
	admit_unreserve(&f.admit);
	run(&f, false, 4);
	cr_assert_eq(f.nhanded, 2);
	cr_assert_eq(f.handed[1], 2);
	fake_free(&f);
}

Test(dispatch, an_entry_no_worker_takes_keeps_its_place_at_the_head)
{
	struct fake f;

	fake_init(&f, 0);
	add_client(&f, 1);
	add_client(&f, 2);
	add_sub(&f, 3);
	run(&f, false, 10);
	cr_assert_eq(f.calls, 1, "dispatch stops at the first that no worker takes");
	cr_assert_eq(f.nhanded + f.nrefused, 0);
	cr_assert_eq(admit_running(&f.admit), 0, "the slot it reserved is back");
	cr_assert_eq(f.clients.len, 2);
	cr_assert_eq(queue_oldest_ms(&f.clients), 1);

	/* a worker becomes idle: the same head goes first */
	f.idle = 1;
	run(&f, false, 10);
	cr_assert_eq(f.nhanded, 1);
	cr_assert_eq(f.handed[0], 1);
	cr_assert_eq(queue_oldest_ms(&f.clients), 2);
	fake_free(&f);
}

Test(dispatch, a_client_that_cannot_be_sent_is_refused_and_the_next_goes)
{
	struct fake f;

	fake_init(&f, 10);
	add_client(&f, 1);
	add_client(&f, 2);
	f.rc[0] = -ENOMEM;
	run(&f, false, 10);
	cr_assert_eq(f.nrefused, 1);
	cr_assert_eq(f.refused[0], 1);
	cr_assert_eq(f.nhanded, 1);
	cr_assert_eq(f.handed[0], 2);
	cr_assert_eq(f.clients.len, 0);
	cr_assert_eq(admit_running(&f.admit), 1, "only the one sent holds a slot");
	fake_free(&f);
}

Test(dispatch, a_submission_that_cannot_be_sent_waits_at_the_head)
{
	struct fake f;
	struct queue_entry e;

	fake_init(&f, 10);
	add_sub(&f, 1);
	add_client(&f, 2);
	f.rc[0] = -ENOMEM;
	run(&f, false, 10);
	cr_assert_eq(f.calls, 1, "dispatch stops");
	cr_assert_eq(f.nrefused + f.nhanded, 0);
	cr_assert_eq(f.subs.len, 1);
	cr_assert_eq(queue_pop(&f.subs, &e), 0);
	cr_assert_eq(e.sub, 1001, "the same submission, kept whole");
	cr_assert_eq(e.enq_ms, 1, "with its age");
	cr_assert_eq(f.clients.len, 1);
	fake_free(&f);
}
