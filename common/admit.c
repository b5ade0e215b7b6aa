#include "autoconf.h"

#include "common/admit.h"

void admit_reset(struct admit *a, size_t i)
{
	atomic_store(&a->holder[i], ADMIT_FREE);
}

bool admit_reserve(struct admit *a, unsigned limit)
{
	uint32_t n = atomic_load(&a->running);

	do {
		if (n >= limit)
			return false;
	} while (!atomic_compare_exchange_weak(&a->running, &n, n + 1));
	return true;
}

void admit_unreserve(struct admit *a)
{
	uint32_t n = atomic_load(&a->running);

	/* never below zero, whatever a caller got wrong */
	while (n > 0 && !atomic_compare_exchange_weak(&a->running, &n, n - 1))
		;
}

static bool take_as(struct admit *a, size_t i, enum admit_holder who)
{
	uint32_t free_word = ADMIT_FREE;

	return atomic_compare_exchange_strong(&a->holder[i], &free_word, (uint32_t)who);
}

bool admit_take(struct admit *a, size_t i)
{
	return take_as(a, i, ADMIT_MASTER);
}

void admit_untake(struct admit *a, size_t i)
{
	uint32_t mine = ADMIT_MASTER;

	atomic_compare_exchange_strong(&a->holder[i], &mine, ADMIT_FREE);
}

bool admit_self(struct admit *a, size_t i, unsigned limit)
{
	if (atomic_load(&a->waiting) > 0 || atomic_load(&a->holder[i]) != ADMIT_FREE)
		return false;
	if (!admit_reserve(a, limit))
		return false;
	if (take_as(a, i, ADMIT_SELF))
		return true;
	admit_unreserve(a);
	return false;
}

enum admit_holder admit_release(struct admit *a, size_t i)
{
	uint32_t held = atomic_exchange(&a->holder[i], ADMIT_FREE);

	if (held != ADMIT_FREE)
		admit_unreserve(a);
	return (enum admit_holder)held;
}

bool admit_end(struct admit *a, size_t i)
{
	return admit_release(a, i) != ADMIT_FREE;
}

void admit_set_waiting(struct admit *a, size_t n)
{
	atomic_store(&a->waiting, n > UINT32_MAX ? UINT32_MAX : (uint32_t)n);
}

unsigned admit_running(const struct admit *a)
{
	return atomic_load(&a->running);
}
