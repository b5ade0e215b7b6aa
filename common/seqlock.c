#include "autoconf.h"

#include "common/seqlock.h"

#include <string.h>
#include <unistd.h>

void seqlock_write(_Atomic uint64_t *seq, void *dst, const void *src, size_t n)
{
	atomic_fetch_add(seq, 1);
	atomic_thread_fence(memory_order_release);
	memcpy(dst, src, n);
	atomic_thread_fence(memory_order_release);
	atomic_fetch_add(seq, 1);
}

void seqlock_read(const _Atomic uint64_t *seq, void *dst, const void *src, size_t n)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint64_t s1 = atomic_load(seq), s2;

		if (s1 & 1) {
			usleep(100);
			continue;
		}
		memcpy(dst, src, n);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load(seq);
		if (s1 == s2)
			return;
	}
	memset(dst, 0, n);
}
