#include "autoconf.h"

#include "common/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/seqlock.h"
#include "common/util.h"
#include "common/verdict.h"

/* Every status has its counter (partial is the last one). */
_Static_assert(TS_SKIPPED < STATS_NSTATUS, "STATS_NSTATUS is smaller than the status vocabulary");

const uint32_t stats_bucket_ms[STATS_NBUCKETS - 1] = {
	10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
};

struct stats *stats_map(void)
{
	void *p = mmap(NULL, sizeof(struct stats), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct stats *s;

	if (p == MAP_FAILED)
		return NULL;
	s = p;
	atomic_store(&s->started_wall_ms, wall_ms());
	return s;
}

void stats_unmap(struct stats *s)
{
	if (s)
		munmap(s, sizeof(*s));
}

/* Find or claim the per-language slot; NULL when the table is full. */
static struct lang_stats *lang_slot(struct stats *s, const char *id)
{
	for (size_t i = 0; i < STATS_MAX_LANGS; i++) {
		struct lang_stats *l = &s->langs[i];
		uint32_t used = atomic_load(&l->used);
		uint32_t zero = 0;

		if (used == 2) {
			if (strncmp(l->id, id, sizeof(l->id) - 1) == 0)
				return l;
			continue;
		}
		if (used == 0 && atomic_compare_exchange_strong(&l->used, &zero, 1)) {
			snprintf(l->id, sizeof(l->id), "%s", id);
			atomic_store(&l->used, 2);
			return l;
		}
		/* Another process is claiming this one: it may be ours; look on. */
	}
	return NULL;
}

static size_t bucket_of(uint64_t ms)
{
	size_t b = 0;

	while (b < STATS_NBUCKETS - 1 && ms > stats_bucket_ms[b])
		b++;
	return b;
}

void stats_push(struct stats *s, const struct job_record *r, bool internal_error)
{
	uint64_t idx = atomic_fetch_add(&s->ring_head, 1);
	struct ring_slot *slot = &s->ring[idx % STATS_RING_SIZE];
	uint64_t total = (uint64_t)r->queue_ms + r->build_ms + r->run_ms;
	struct lang_stats *l;

	atomic_store(&slot->seq, 2 * idx + 1);
	atomic_thread_fence(memory_order_release);
	slot->rec = *r;
	atomic_thread_fence(memory_order_release);
	atomic_store(&slot->seq, 2 * idx + 2);

	atomic_fetch_add(&s->jobs_total, 1);
	if (r->status < STATS_NSTATUS)
		atomic_fetch_add(&s->by_status[r->status], 1);
	if (internal_error) {
		atomic_fetch_add(&s->jobs_failed_internal, 1);
		atomic_store(&s->last_internal_error_ms, r->end_wall_ms);
	}
	l = lang_slot(s, r->lang);
	if (l) {
		if (r->status < STATS_NSTATUS)
			atomic_fetch_add(&l->by_status[r->status], 1);
		atomic_fetch_add(&l->buckets[bucket_of(total)], 1);
		atomic_fetch_add(&l->duration_sum_ms, total);
		atomic_fetch_add(&l->count, 1);
	}
}

size_t stats_recent(const struct stats *s, struct job_record *out, size_t max)
{
	uint64_t head = atomic_load(&s->ring_head);
	size_t n = 0;

	for (uint64_t k = 0; k < STATS_RING_SIZE && k < head && n < max; k++) {
		uint64_t idx = head - 1 - k;
		const struct ring_slot *slot = &s->ring[idx % STATS_RING_SIZE];
		uint64_t s1 = atomic_load(&slot->seq), s2;

		if (s1 != 2 * idx + 2)
			continue; /* being written, overwritten, or left half-written */
		out[n] = slot->rec;
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load(&slot->seq);
		if (s1 == s2)
			n++;
	}
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

uint32_t stats_percentile(const struct job_record *recs, size_t n, unsigned p)
{
	uint32_t *v;
	uint32_t res;
	size_t rank;

	if (n == 0)
		return 0;
	v = xreallocarray(NULL, n, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = recs[i].queue_ms + recs[i].build_ms + recs[i].run_ms;
	qsort(v, n, sizeof(*v), cmp_u32);
	/* nearest-rank */
	rank = (p * n + 99) / 100;
	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	res = v[rank - 1];
	free(v);
	return res;
}

void stats_store_publish(struct stats *s, const struct store_seen *seen)
{
	seqlock_write(&s->store_seq, &s->store_seen, seen, sizeof(*seen));
}

void stats_store_read(const struct stats *s, struct store_seen *out)
{
	seqlock_read(&s->store_seq, out, &s->store_seen, sizeof(*out));
}
