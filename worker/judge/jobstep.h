/*
 * A step of a job: its command and environment planned from the
 * language (placeholders expanded, the base environment under the
 * language's), the step_spec it runs as, a build run in a jail, and what
 * each step adds to the job's result: its time and memory, its share of
 * the output budget, a sandbox fault.
 */
#ifndef GOBOXD_JOBSTEP_H
#define GOBOXD_JOBSTEP_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/limits.h"
#include "worker/judge/jobresult.h"
#include "worker/sandbox/jail.h"

/* A step's command line and environment, as run in the jail. */
struct jobstep_plan {
	char **argv;
	char **envp;
};

/* step of req's language, with flags (NULL: none) and the limits lim
 * (for the {memory_mb} placeholder). 0, or negative errno. */
int jobstep_plan_make(const struct job_request *req, const struct lang_step *step,
		      char **flags, const struct limits *lim, struct jobstep_plan *p);
void jobstep_plan_free(struct jobstep_plan *p);
/* s for plan p under lim, as env runs every step (the cancel fd, the
 * wire format's caps and CPU pinning). */
void jobstep_spec(struct step_spec *s, const struct job_request *req,
		  const struct jobstep_plan *p, const struct limits *lim,
		  const struct job_env *env);
/* Build req (the solution's or the judge's program) in jail into r; who
 * names it in a fault. */
enum build_status jobstep_build(const struct job_env *env, struct jail *jail,
				const struct job_request *req, struct step_result *r,
				struct job_result *res, const char *who);
/* The job's sandbox fault (a 5xx), logged; the first one's words are kept. */
void jobstep_fault(struct job_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* jobstep_fault for what failed with errno err. */
void jobstep_internal(struct job_result *res, const char *what, int err);
/* A sandbox failure of test i: a server fault. */
void jobstep_test_internal(struct job_result *res, struct test_result *tr, size_t i,
			   const char *msg);
/*
 * Output read after a step (a test's output file) or shown but not judged
 * by goboxd (a judge program's message), cut to what the answer may still
 * take of the job's budget; marker: the truncation marker added. True
 * when all of it fit.
 */
bool jobstep_fit_budget(struct job_result *res, struct buf *b, bool marker);
/* A step's wall time (to the build's or the tests'), CPU time and peak. */
void jobstep_account(struct job_result *res, const struct step_result *r, bool build);

#endif
