/*
 * The judge's program of a job: an interactor or a checker, in a jail of
 * its own under a uid of its own, with a control directory (the jail's
 * /judge) that holds each test's files. Started before the solution's
 * build, built once the solution has built, then run beside the solution
 * (interactor) or after it (checker) in each test.
 */
#ifndef GOBOXD_JUDGE_H
#define GOBOXD_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "worker/judge/jobresult.h"

struct judge;

/*
 * Its jail, started: jail_start_with does not wait for the jail, which
 * sets itself up while the solution builds. NULL when it cannot start:
 * res says why.
 */
struct judge *judge_open(const struct job_env *env, const struct job_request *req,
			 struct job_result *res);
void judge_destroy(struct judge *judge);
/*
 * In its jail, once the solution has built: its files, its build (into
 * res->judge) and its run command. False when it cannot be used: res
 * says why (a failed build, or the sandbox's internal error).
 */
bool judge_prepare(struct judge *judge, const struct job_env *env,
		   const struct job_request *req, struct job_result *res);
/* An interactor (each test runs both at once), not a checker. */
bool judge_interactive(const struct judge *judge);
/* Interactive test i: the solution's step sol and the interactor at once,
 * then the pair's verdict. */
void judge_run_interactive(struct judge *judge, const struct job_env *env,
			   const struct job_request *req, const struct step_spec *sol,
			   size_t i, struct job_result *res);
/* After a clean run of test i with an answer (stdout or the output
 * file): the checker's verdict. */
void judge_run_checker(struct judge *judge, const struct job_env *env,
		       const struct job_request *req, const struct buf *output, size_t i,
		       struct job_result *res);
/* After its verdict, a judge program's part of a test keeps only what the
 * answer shows: its message, within the budget. */
void judge_done(struct job_result *res, struct test_result *tr);

#endif
