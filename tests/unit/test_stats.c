#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/stats.h"

static struct job_record rec(const char *lang, uint8_t status, uint32_t run_ms)
{
	struct job_record r = { 0 };

	snprintf(r.lang, sizeof(r.lang), "%s", lang);
	r.status = status;
	r.run_ms = run_ms;
	return r;
}

Test(stats, push_and_read_back_newest_first)
{
	struct stats *s = stats_map();
	struct job_record out[8];
	struct job_record r;

	cr_assert_not_null(s);
	for (uint32_t i = 1; i <= 5; i++) {
		r = rec("py3", 0, i * 10);
		stats_push(s, &r, false);
	}
	r = rec("cpp", 7, 99);
	stats_push(s, &r, true);
	cr_assert_eq(stats_recent(s, out, 8), 6);
	cr_assert_str_eq(out[0].lang, "cpp");
	cr_assert_eq(out[1].run_ms, 50);
	cr_assert_eq(atomic_load(&s->jobs_total), 6);
	cr_assert_eq(atomic_load(&s->jobs_failed_internal), 1);
	cr_assert_eq(atomic_load(&s->by_status[0]), 5);
	stats_unmap(s);
}

Test(stats, shared_across_fork)
{
	struct stats *s = stats_map();
	struct job_record out[4];
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		struct job_record r = rec("js", 1, 5);

		stats_push(s, &r, false);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	cr_assert_eq(stats_recent(s, out, 4), 1);
	cr_assert_str_eq(out[0].lang, "js");
	stats_unmap(s);
}

Test(stats, half_written_slot_is_skipped)
{
	struct stats *s = stats_map();
	struct job_record out[4];
	struct job_record r = rec("py3", 0, 1);

	stats_push(s, &r, false);
	stats_push(s, &r, false);
	/* A writer that died between its two sequence stores. */
	atomic_store(&s->ring[1].seq, 2 * 1 + 1);
	cr_assert_eq(stats_recent(s, out, 4), 1);
	stats_unmap(s);
}

Test(stats, ring_wraps)
{
	struct stats *s = stats_map();
	struct job_record *out = calloc(STATS_RING_SIZE, sizeof(*out));

	for (uint32_t i = 0; i < STATS_RING_SIZE + 10; i++) {
		struct job_record r = rec("c", 0, i);

		stats_push(s, &r, false);
	}
	cr_assert_eq(stats_recent(s, out, STATS_RING_SIZE), STATS_RING_SIZE);
	cr_assert_eq(out[0].run_ms, STATS_RING_SIZE + 9);
	free(out);
	stats_unmap(s);
}

Test(stats, percentiles_nearest_rank)
{
	struct job_record r[100];

	for (int i = 0; i < 100; i++)
		r[i] = rec("x", 0, (uint32_t)(100 - i));
	cr_assert_eq(stats_percentile(r, 100, 50), 50);
	cr_assert_eq(stats_percentile(r, 100, 95), 95);
	cr_assert_eq(stats_percentile(r, 100, 99), 99);
	cr_assert_eq(stats_percentile(r, 0, 50), 0);
}
