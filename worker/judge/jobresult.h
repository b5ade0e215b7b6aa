/*
 * The words of a job (worker/judge/job.c), shared by its parts
 * (jobstep.c, judge.c) and by those who read its result (the answers,
 * the job thread): each test's and the build's result, the job's, its
 * events, and the environment it runs in.
 */
#ifndef GOBOXD_JOBRESULT_H
#define GOBOXD_JOBRESULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/outtext.h"
#include "worker/judge/request.h"
#include "common/verdict.h"
#include "worker/judge/buildcache.h"
#include "worker/sandbox/network.h"
#include "worker/sandbox/sandbox.h"

struct test_result {
	enum test_status status;
	struct step_result r;
	bool ran;
	/* File I/O tests: what the program left in the test's output_file. */
	struct buf file_out;
	bool file_missing;          /* no such regular file after the run */
	/* The judge program's part (interactor or checker), when it ran: */
	struct step_result judge;
	bool judged;
	double points;              /* TS_PARTIAL only */
	char judge_error[224];      /* why the judge made it internal_error, or "" */
	/* Interactive tests only: */
	bool idle;                  /* the wall limit came while both sides waited */
	bool terminated;            /* ended by the protocol's terminate wait */
	unsigned protocol_errors;   /* rule breaks by the interactor's protocol use */
	char protocol_error[128];   /* the last one */
};

/* The judge's program (an interactor or a checker), built once per job. */
struct judge_build {
	bool present;
	bool has_build;
	enum build_status status;
	struct step_result r;
};

/* A group's verdict (worker/judge/groups.h), as the answer shows it. */
struct group_result {
	enum test_status status;
	double points;
	bool decided;
};

struct job_result {
	bool has_build;
	enum build_status build_status;
	struct step_result build;
	bool build_cached;          /* build is the build cache's record: nothing ran */
	struct judge_build judge;
	struct test_result *tests;
	size_t ntests;
	/* With groups: each one's verdict, and the points of those accepted. */
	struct group_result *groups;
	size_t ngroups;
	double points, max_points;
	enum test_status top;
	bool internal_error;
	bool cancelled;             /* stopped for env->cancel_fd: nobody waits */
	char internal_msg[256];
	uint64_t build_ms, run_ms, cpu_ms, memory_peak_kb;
	/* What the answer may still take of output (--max-job-output-size):
	 * every step's capture draws on it, so the answer stays bounded
	 * whatever the number of tests times their output. */
	struct outtext_budget budget;
	/* The files req->files_out asked for, as the last test left them. */
	struct outfiles files;
	/* The tests' network, where the request asked for one: what it
	 * carried, and whether a cap ended it. */
	bool has_network;
	struct network_usage network;
};

/*
 * What a job reports as soon as it is judged, in this order: the build,
 * the judge program's build (when there is one), then each test in index
 * order, each group right after the test that decides it (groups that
 * only the end decides come after the last test). Every test and group
 * is reported once, whatever happened (a failed build reports its
 * not_executed tests too); nothing is reported after a cancel.
 */
enum job_event { JOB_EV_BUILD, JOB_EV_JUDGE_BUILD, JOB_EV_TEST, JOB_EV_GROUP };

/* Called in the job's thread; index is the test's or the group's. The
 * result's fields for that step are final; the callee may free a
 * test's captured output (nothing reads it after its event). */
typedef void (*job_event_fn)(void *arg, const struct job_request *req, struct job_result *res,
			     enum job_event ev, size_t index);

struct job_env {
	struct jail *jail;          /* this job's own, ready or starting */
	const struct config *cfg;
	uid_t uid;
	gid_t gid;
	/* A job with an interactor or a checker starts a second jail in
	 * sandbox for it, run as judge_uid:judge_gid (never the solution's). */
	struct sandbox *sandbox;
	uid_t judge_uid;
	gid_t judge_gid;
	/* Readable when the job must stop at once (its client went away):
	 * its programs are killed, nothing more runs. 0: none. */
	int cancel_fd;
	/* Set before cancel_fd is written: what the job asks between its
	 * steps, without a system call (the steps' waits poll cancel_fd).
	 * NULL: none. */
	const atomic_bool *cancel_flag;
	job_event_fn on_event;      /* NULL: nobody listens */
	void *event_arg;
	struct buildcache *cache;   /* the solution's builds, NULL: none */
	/* A live session's job (worker/session.c): its one test is the
	 * program, run with its pipes handed to the loop. NULL: none. */
	const struct session_spec *session;
	/* What a job's network may do (--network); NULL: the operator
	 * gives none, and a request that asks was refused already. */
	const struct network_policy *network;
};

#endif
