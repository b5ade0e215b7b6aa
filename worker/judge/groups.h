/*
 * Early stop and test groups (IOI subtasks), as pure functions of the
 * request and the statuses its tests have so far. Tests run in index
 * order, each at most once, so a test's fate depends only on the tests
 * before it. docs/api.md has the rules in words.
 */
#ifndef GOBOXD_GROUPS_H
#define GOBOXD_GROUPS_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/judge/request.h"
#include "common/verdict.h"

/*
 * Whether test i must run, given the final statuses of tests 0..i-1:
 * not after a failure when the request says stop_on_failure, nor when
 * it belongs to groups only, each of which stops on failure and has
 * failed already. A test outside every group runs (it still decides the
 * top-level status). "Failure": any status but accepted and skipped.
 */
bool groups_test_needed(const struct job_request *req, const enum test_status *sts, size_t i);

struct group_verdict {
	enum test_status status;   /* accepted, skipped, or its first failure */
	double points;             /* the group's points when accepted, else 0 */
	bool decided;              /* nothing later can change it */
};

/*
 * Group g once tests 0..done-1 have their final statuses: decided at its
 * first failure (in index order), or when all its tests are done. Its
 * status is then accepted (all accepted), its first failure, or skipped
 * (no failure of its own, but some of its tests were skipped).
 */
void groups_judge(const struct req_group *g, const enum test_status *sts, size_t done,
		  struct group_verdict *out);

#endif
