#include "autoconf.h"

#include "worker/judge/groups.h"

#include <stdint.h>

static bool failed(enum test_status s)
{
	return s != TS_ACCEPTED && s != TS_SKIPPED;
}

static bool group_has(const struct req_group *g, size_t i)
{
	for (size_t k = 0; k < g->ntests; k++)
		if (g->tests[k] == i)
			return true;
	return false;
}

/* A failure among the group's tests below done. */
static bool group_failed(const struct req_group *g, const enum test_status *sts, size_t done)
{
	for (size_t k = 0; k < g->ntests; k++)
		if (g->tests[k] < done && failed(sts[g->tests[k]]))
			return true;
	return false;
}

bool groups_test_needed(const struct job_request *req, const enum test_status *sts, size_t i)
{
	bool grouped = false;

	if (req->stop_on_failure)
		for (size_t k = 0; k < i; k++)
			if (failed(sts[k]))
				return false;
	for (size_t g = 0; g < req->ngroups; g++) {
		const struct req_group *gr = &req->groups[g];

		if (!group_has(gr, i))
			continue;
		grouped = true;
		/* one group that still wants it is enough */
		if (!gr->stop_on_failure || !group_failed(gr, sts, i))
			return true;
	}
	return !grouped;
}

void groups_judge(const struct req_group *g, const enum test_status *sts, size_t done,
		  struct group_verdict *out)
{
	size_t first = SIZE_MAX, ndone = 0;
	bool skipped = false;

	for (size_t k = 0; k < g->ntests; k++) {
		size_t t = g->tests[k];

		if (t >= done)
			continue;
		ndone++;
		if (t < first && failed(sts[t]))
			first = t;
		skipped |= sts[t] == TS_SKIPPED;
	}
	out->points = 0;
	out->decided = first != SIZE_MAX || ndone == g->ntests;
	if (first != SIZE_MAX)
		out->status = sts[first];
	else if (skipped)
		out->status = TS_SKIPPED;
	else
		out->status = TS_ACCEPTED;
	if (out->decided && out->status == TS_ACCEPTED)
		out->points = g->points;
}
