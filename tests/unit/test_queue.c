#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>

#include "master/queue.h"

static struct queue_entry entry(int id)
{
	struct queue_entry e = { .fd = -1 - id, .memfd = -1, .enq_ms = (uint64_t)id };

	return e;
}

Test(queue, fifo_order_and_bound)
{
	struct queue q;
	struct queue_entry e;

	queue_init(&q, 3);
	for (int i = 1; i <= 3; i++) {
		struct queue_entry in = entry(i);

		cr_assert_eq(queue_push(&q, &in), 0);
	}
	e = entry(4);
	cr_assert_eq(queue_push(&q, &e), -ENOSPC);
	cr_assert_eq(queue_oldest_ms(&q), 1);
	for (int i = 1; i <= 3; i++) {
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.enq_ms, (uint64_t)i);
	}
	cr_assert_eq(queue_pop(&q, &e), -ENOENT);
	cr_assert_eq(queue_oldest_ms(&q), 0);
	free(q.v);
}

Test(queue, wraps_around_and_unpops_to_front)
{
	struct queue q;
	struct queue_entry e;

	queue_init(&q, 2);
	for (int round = 0; round < 5; round++) {
		struct queue_entry a = entry(10 + round), b = entry(20 + round);

		cr_assert_eq(queue_push(&q, &a), 0);
		cr_assert_eq(queue_push(&q, &b), 0);
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.enq_ms, (uint64_t)(10 + round));
		cr_assert_eq(queue_unpop(&q, &e), 0);
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.enq_ms, (uint64_t)(10 + round));
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.enq_ms, (uint64_t)(20 + round));
	}
	free(q.v);
}

Test(queue, disabled_queue_refuses)
{
	struct queue q;
	struct queue_entry e = entry(1);

	queue_init(&q, 0);
	cr_assert_eq(queue_push(&q, &e), -ENOSPC);
	queue_free(&q);
}

Test(queue, resize_keeps_entries_in_order)
{
	struct queue q;
	struct queue_entry e;

	queue_init(&q, 4);
	for (int i = 1; i <= 4; i++) {
		struct queue_entry in = entry(i);

		cr_assert_eq(queue_push(&q, &in), 0);
	}
	cr_assert_eq(queue_pop(&q, &e), 0);
	/* shrink below the current length: nothing is dropped */
	queue_resize(&q, 1);
	e = entry(9);
	cr_assert_eq(queue_push(&q, &e), -ENOSPC);
	for (int i = 2; i <= 4; i++) {
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.enq_ms, (uint64_t)i);
	}
	queue_resize(&q, 8);
	e = entry(5);
	cr_assert_eq(queue_push(&q, &e), 0);
	free(q.v);
}

Test(queue, unbounded_pushes_grow_and_keep_their_order)
{
	struct queue q;
	struct queue_entry e;

	queue_init(&q, 0);
	for (int64_t i = 1; i <= 1000; i++) {
		struct queue_entry in = { .fd = -1, .memfd = -1, .enq_ms = (uint64_t)i, .sub = i };

		queue_push_unbounded(&q, &in);
	}
	cr_assert_eq(q.len, 1000);
	for (int64_t i = 1; i <= 1000; i++) {
		cr_assert_eq(queue_pop(&q, &e), 0);
		cr_assert_eq(e.sub, i);
	}
	cr_assert_eq(queue_pop(&q, &e), -ENOENT);
	queue_free(&q);
}
