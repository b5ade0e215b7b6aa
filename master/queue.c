#include "autoconf.h"

#include "master/queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

void queue_init(struct queue *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	queue_resize(q, cap);
}

void queue_free(struct queue *q)
{
	struct queue_entry e;

	while (queue_pop(q, &e) == 0) {
		if (e.fd >= 0)
			close(e.fd);
		if (e.memfd >= 0)
			close(e.memfd);
	}
	free(q->v);
	memset(q, 0, sizeof(*q));
}

/* Storage is a ring of max(cap, len) slots, re-laid out on resize. */
void queue_resize(struct queue *q, size_t cap)
{
	size_t slots = cap > q->len ? cap : q->len;
	struct queue_entry *v;

	if (slots == 0) {
		free(q->v);
		q->v = NULL;
		q->cap = 0;
		q->head = 0;
		return;
	}
	v = xcalloc(slots, sizeof(*v));
	/* (entries imply slots: len > 0 only with cap > 0) */
	for (size_t i = 0; i < q->len && q->cap; i++)
		v[i] = q->v[(q->head + i) % q->cap];
	free(q->v);
	q->v = v;
	q->head = 0;
	q->cap = slots;
	q->bound = cap;
}

int queue_push(struct queue *q, const struct queue_entry *e)
{
	if (q->len >= q->bound || q->len >= q->cap)
		return -ENOSPC;
	q->v[(q->head + q->len) % q->cap] = *e;
	q->len++;
	return 0;
}

int queue_pop(struct queue *q, struct queue_entry *out)
{
	if (q->len == 0)
		return -ENOENT;
	*out = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	return 0;
}

int queue_unpop(struct queue *q, const struct queue_entry *e)
{
	if (q->len >= q->cap)
		return -ENOSPC;
	q->head = (q->head + q->cap - 1) % q->cap;
	q->v[q->head] = *e;
	q->len++;
	return 0;
}

uint64_t queue_oldest_ms(const struct queue *q)
{
	return q->len ? q->v[q->head].enq_ms : 0;
}

void queue_push_unbounded(struct queue *q, const struct queue_entry *e)
{
	if (q->len >= q->cap)
		queue_resize(q, q->cap ? q->cap * 2 : 64);
	queue_push(q, e);
}
