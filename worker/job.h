/*
 * The job runner: one request in one jail (worker/jail.h): build once,
 * then each test from the state the build left; verdicts. Both wire
 * formats go through here. The jail, and with it the job directory, is
 * the caller's to destroy.
 */
#ifndef GOBOXD_JOB_H
#define GOBOXD_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/request.h"
#include "common/verdict.h"
#include "worker/sandbox.h"

struct test_result {
	enum test_status status;
	struct step_result r;
	bool ran;
	/* File I/O tests: what the program left in the test's output_file. */
	struct buf file_out;
	bool file_missing;          /* no such regular file after the run */
};

struct job_result {
	bool has_build;
	enum build_status build_status;
	struct step_result build;
	struct test_result *tests;
	size_t ntests;
	enum test_status top;
	bool internal_error;
	char internal_msg[256];
	uint64_t build_ms, run_ms, cpu_ms, memory_peak_kb;
};

/* The environment every step starts from (NULL-terminated). */
extern const char *const job_base_env[5];

struct job_env {
	struct jail *jail;          /* this job's own, ready or starting */
	const struct config *cfg;
	uid_t uid;
	gid_t gid;
};

/* Runs the job; returns 0 (the result says what happened) or -ENOMEM. */
int job_run(const struct job_env *env, const struct job_request *req, struct job_result *res);
void job_result_free(struct job_result *res);

#endif
