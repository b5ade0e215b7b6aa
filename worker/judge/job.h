/*
 * The job runner: one request in one jail (worker/sandbox/jail.h): build once,
 * then each test from the state the build left; verdicts. Both wire
 * formats go through here. The jail, and with it the job directory, is
 * the caller's to destroy. A request with a judge program (an interactor
 * or a checker) gets a second jail for it, under a uid of its own, which
 * the job starts and destroys: built once, run beside the solution
 * (interactor) or after it (checker) in each test.
 */
#ifndef GOBOXD_JOB_H
#define GOBOXD_JOB_H

#include "worker/judge/jobresult.h"

/* Runs the job; returns 0: the result says what happened, sandbox faults
 * included. */
int job_run(const struct job_env *env, const struct job_request *req, struct job_result *res);
void job_result_free(struct job_result *res);

#endif
