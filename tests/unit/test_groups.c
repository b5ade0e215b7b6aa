#include "autoconf.h"

#include <criterion/criterion.h>
#include <string.h>

#include "worker/judge/groups.h"

#define A TS_ACCEPTED
#define W TS_WRONG_OUTPUT
#define T TS_TIME_EXCEEDED
#define S TS_SKIPPED
#define MAXT 8

/*
 * One request's shape and its tests' statuses in index order: which tests
 * run (the statuses of those that do not are ignored: they become
 * skipped), and each group's verdict at the end.
 */
struct group_case {
	const char *name;
	bool stop;                       /* the request's stop_on_failure */
	size_t ntests;
	struct {
		size_t tests[MAXT];
		size_t n;
		bool stop;
		double points;
	} groups[4];
	size_t ngroups;
	enum test_status outcome[MAXT];  /* what each test gives when it runs */
	const char *runs;                /* per test: 'r' runs, 's' skipped */
	enum test_status gstatus[4];
	double gpoints[4];
};

static const struct group_case cases[] = {
	{ "no groups, no stop: all run", false, 3, { { { 0 }, 0, false, 0 } }, 0,
	  { W, A, W }, "rrr", { 0 }, { 0 } },
	{ "stop_on_failure skips everything after the first failure", true, 4,
	  { { { 0 }, 0, false, 0 } }, 0, { A, T, A, A }, "rrss", { 0 }, { 0 } },
	{ "stop_on_failure with all accepted skips nothing", true, 3,
	  { { { 0 }, 0, false, 0 } }, 0, { A, A, A }, "rrr", { 0 }, { 0 } },
	{ "a group without stop runs on after its failure", false, 3,
	  { { { 0, 1, 2 }, 3, false, 10 } }, 1, { W, A, A }, "rrr", { W }, { 0 } },
	{ "a stopping group skips its later tests", false, 4,
	  { { { 0, 1, 2 }, 3, true, 10 }, { { 3 }, 1, true, 5 } }, 2,
	  { A, W, A, A }, "rrsr", { W, A }, { 0, 5 } },
	{ "a test in two groups runs while one of them still needs it", false, 3,
	  { { { 0, 2 }, 2, true, 10 }, { { 1, 2 }, 2, false, 20 } }, 2,
	  { W, A, A }, "rrr", { W, A }, { 0, 20 } },
	{ "a test whose every group stopped is skipped", false, 3,
	  { { { 0, 2 }, 2, true, 10 }, { { 1, 2 }, 2, true, 20 } }, 2,
	  { W, T, A }, "rrs", { W, T }, { 0, 0 } },
	{ "tests outside every group run and earn nothing", false, 3,
	  { { { 1 }, 1, true, 7 } }, 1, { W, A, W }, "rrr", { A }, { 7 } },
	{ "the request's stop overrides groups: an untouched group is skipped", true, 4,
	  { { { 0, 1 }, 2, false, 10 }, { { 2, 3 }, 2, false, 20 } }, 2,
	  { A, W, A, A }, "rrss", { W, S }, { 0, 0 } },
	{ "partial is a failure for a group", false, 2,
	  { { { 0, 1 }, 2, true, 10 } }, 1, { TS_PARTIAL, A }, "rs",
	  { TS_PARTIAL }, { 0 } },
	{ "a group's indexes may come in any order", false, 3,
	  { { { 2, 0 }, 2, true, 10 } }, 1, { W, A, A }, "rrs", { W }, { 0 } },
};

static void build_req(const struct group_case *c, struct job_request *r, struct req_group *g)
{
	memset(r, 0, sizeof(*r));
	r->ntests = c->ntests;
	r->stop_on_failure = c->stop;
	r->groups = g;
	r->ngroups = c->ngroups;
	for (size_t i = 0; i < c->ngroups; i++) {
		g[i].tests = (size_t *)c->groups[i].tests;
		g[i].ntests = c->groups[i].n;
		g[i].stop_on_failure = c->groups[i].stop;
		g[i].points = c->groups[i].points;
	}
}

Test(groups, cases)
{
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct group_case *c = &cases[k];
		struct req_group g[4];
		struct job_request r;
		enum test_status sts[MAXT];

		build_req(c, &r, g);
		for (size_t i = 0; i < c->ntests; i++) {
			bool run = groups_test_needed(&r, sts, i);

			cr_expect_eq(run, c->runs[i] == 'r', "%s: test %zu", c->name, i);
			sts[i] = run ? c->outcome[i] : TS_SKIPPED;
		}
		for (size_t i = 0; i < c->ngroups; i++) {
			struct group_verdict v;

			groups_judge(&g[i], sts, c->ntests, &v);
			cr_expect(v.decided, "%s: group %zu", c->name, i);
			cr_expect_eq(v.status, c->gstatus[i], "%s: group %zu is %s", c->name, i,
				     verdict_test_status_name(v.status));
			cr_expect_eq(v.points, c->gpoints[i], "%s: group %zu", c->name, i);
		}
	}
}

/* A group is decided at its first failure, or once all its tests are done. */
Test(groups, decided_as_soon_as_known)
{
	size_t idx[] = { 0, 2, 4 };
	struct req_group g = { .tests = idx, .ntests = 3, .points = 9 };
	enum test_status sts[5] = { A, W, A, A, A };
	struct group_verdict v;

	groups_judge(&g, sts, 1, &v);
	cr_expect_not(v.decided);
	groups_judge(&g, sts, 4, &v);
	cr_expect_not(v.decided);
	groups_judge(&g, sts, 5, &v);
	cr_expect(v.decided);
	cr_expect_eq(v.status, A);
	cr_expect_eq(v.points, 9);

	sts[2] = T;
	groups_judge(&g, sts, 3, &v);
	cr_expect(v.decided);
	cr_expect_eq(v.status, T);
	cr_expect_eq(v.points, 0);
}
