#include "autoconf.h"

#include "worker/judge/judge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/sandbox/jail.h"
#include "worker/judge/jobstep.h"

/*
 * What a judge program is handed in its control directory (the jail's
 * /judge, read-only to it), rewritten before each test, and the
 * arguments it gets: testlib's order. An interactor's second argument is
 * a scratch file of its own (testlib's interactor writes one); goboxd
 * does not read it.
 */
#define JUDGE_INPUT "input"
#define JUDGE_OUTPUT "output"
#define JUDGE_ANSWER "answer"
#define INTERACTOR_SCRATCH JAILPATH_TMP "/interactor-output"

/* An interactor that ends first with one of these lets the solution run on
 * to its own end, to be judged for its own failures too: accepted and
 * partial. Any other end stops the solution at once. */
#define SOLUTION_CONTINUES ((1u << 0) | (1u << 7))

struct judge {
	const struct job_request *prog;  /* req->interactor or req->checker */
	bool interactive;
	struct jail *jail;
	struct jobstep_plan plan;           /* its run command, testlib's arguments added */
	struct step_spec spec;           /* ...and the step it runs as, the same each test */
	bool snapshot;
};

bool judge_interactive(const struct judge *judge)
{
	return judge->interactive;
}

static const char *judge_name(const struct judge *judge)
{
	return judge->interactive ? "interactor" : "checker";
}

void judge_destroy(struct judge *judge)
{
	if (!judge)
		return;
	jobstep_plan_free(&judge->plan);
	jail_destroy(judge->jail);
	free(judge);
}

/*
 * Its jail (a uid of its own, a control directory), started before the
 * solution's build: jail_start_with does not wait for the jail, which
 * sets itself up while the build runs. NULL when it cannot start: res
 * says why.
 */
struct judge *judge_open(const struct job_env *env, const struct job_request *req,
			 struct job_result *res)
{
	struct jail_opts o = { .uid = env->judge_uid, .gid = env->judge_gid, .control_dir = true };
	struct judge *judge = xcalloc(1, sizeof(*judge));
	char err[256];

	judge->interactive = req->interactor != NULL;
	judge->prog = judge->interactive ? req->interactor : req->checker;
	if (jail_start_with(sandbox_jail_shared(env->sandbox), &o, &judge->jail, err,
			    sizeof(err)) < 0) {
		res->judge.present = true;
		res->judge.status = BS_INTERNAL_ERROR;
		jobstep_fault(res, "the %s's jail: %.200s", judge_name(judge), err);
		judge_destroy(judge);
		return NULL;
	}
	return judge;
}

/*
 * In its jail, once the solution has built: its files, its build (into
 * res->judge) and its run command. False when it cannot be used: res
 * says why (a failed build, or the sandbox's internal error).
 */
bool judge_prepare(struct judge *judge, const struct job_env *env,
		   const struct job_request *req, struct job_result *res)
{
	static const char *const itr_args[] = { JAILPATH_CONTROL "/" JUDGE_INPUT, INTERACTOR_SCRATCH,
						JAILPATH_CONTROL "/" JUDGE_ANSWER, NULL };
	static const char *const chk_args[] = { JAILPATH_CONTROL "/" JUDGE_INPUT,
						JAILPATH_CONTROL "/" JUDGE_OUTPUT,
						JAILPATH_CONTROL "/" JUDGE_ANSWER, NULL };
	struct jobdir *d = jail_jobdir(judge->jail);
	int rc = 0;

	res->judge.present = true;
	res->judge.status = BS_OK;
	for (size_t i = 0; i < judge->prog->nfiles && rc == 0; i++)
		rc = jobdir_write(d, judge->prog->files[i].name, judge->prog->files[i].data,
				  judge->prog->files[i].len, 0644);
	if (rc < 0) {
		res->judge.status = BS_INTERNAL_ERROR;
		jobstep_internal(res, "writing the judge program's files", -rc);
	} else if (judge->prog->lang->has_build) {
		res->judge.has_build = true;
		res->judge.status = jobstep_build(env, judge->jail, judge->prog, &res->judge.r, res,
						  judge->interactive ? "interactor build" :
								    "checker build");
	}
	if (res->judge.status == BS_OK) {
		rc = jobstep_plan_make(judge->prog, &judge->prog->lang->run, judge->prog->run_flags,
			       &judge->prog->run_limits, &judge->plan);
		if (rc < 0) {
			res->judge.status = BS_INTERNAL_ERROR;
			jobstep_internal(res, "expanding the judge program's run command", -rc);
		} else {
			for (const char *const *a = judge->interactive ? itr_args : chk_args; *a; a++)
				strv_push(&judge->plan.argv, xstrdup(*a));
			jobstep_spec(&judge->spec, judge->prog, &judge->plan, &judge->prog->run_limits,
				  env);
			judge->spec.open_files = judge->prog->lang->run.open_files;
		}
	}
	if (res->judge.status == BS_OK && req->ntests > 1) {
		rc = jobdir_snapshot(d);
		if (rc < 0) {
			res->judge.status = BS_INTERNAL_ERROR;
			jobstep_internal(res, "keeping the judge program's built directory", -rc);
		}
		judge->snapshot = rc == 0;
	}
	return res->judge.status == BS_OK;
}

/* One file of the control directory, replaced. */
static int control_write(struct jobdir *ctl, const char *name, const char *data, size_t len)
{
	if (unlinkat(ctl->fd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	/* root's, readable by the judge's group only */
	return jobdir_write(ctl, name, data ? data : "", data ? len : 0, 0640);
}

/* Before a test: the judge's directory as its build left it, and the
 * test's files in the control directory. */
static int judge_test_files(struct judge *judge, const struct job_env *env,
			    const struct req_test *t, const struct buf *output, size_t i,
			    char *err, size_t errlen)
{
	struct jobdir *ctl = jail_control_dir(judge->jail);
	int rc = 0;

	if (i > 0 && judge->snapshot)
		rc = jobdir_restore(jail_jobdir(judge->jail), env->judge_uid, env->judge_gid);
	if (rc < 0) {
		snprintf(err, errlen, "restoring the %s's directory: %s", judge_name(judge),
			 strerror(-rc));
		return rc;
	}
	rc = control_write(ctl, JUDGE_INPUT, t->stdin_data, t->stdin_len);
	if (rc == 0)
		rc = control_write(ctl, JUDGE_ANSWER, t->expected, t->expected_len);
	if (rc == 0 && output)
		rc = control_write(ctl, JUDGE_OUTPUT, output->data, output->len);
	if (rc < 0)
		snprintf(err, errlen, "writing the %s's files: %s", judge_name(judge),
			 strerror(-rc));
	return rc;
}

/* After its verdict, a judge program's part of a test keeps only what the
 * answer shows: its message, within the budget. */
void judge_done(struct job_result *res, struct test_result *tr)
{
	buf_free(&tr->judge.out);
	buf_free(&tr->judge.interleaved);
	jobstep_fit_budget(res, &tr->judge.err, true);
}

void judge_run_interactive(struct judge *judge, const struct job_env *env,
			   const struct job_request *req, const struct step_spec *sol,
			   size_t i, struct job_result *res)
{
	struct test_result *tr = &res->tests[i];
	struct interact_result ir;
	struct verdict_dialogue dialogue;
	struct interact_spec spec = {
		.solution = sol,
		.interactor = &judge->spec,
		.wall_ms = req->run_limits.wall_ms,
		.solution_continues = SOLUTION_CONTINUES,
		.protocol = true,
	};
	char err[256];
	int rc;

	sandbox_interact_result_init(&ir);
	rc = judge_test_files(judge, env, &req->tests[i], NULL, i, err, sizeof(err));
	if (rc < 0) {
		tr->ran = true;
		jobstep_test_internal(res, tr, i, err);
		sandbox_interact_result_free(&ir);
		return;
	}
	rc = sandbox_interact(env->jail, judge->jail, &spec, &ir);
	/* the results move to the test */
	sandbox_step_result_free(&tr->r);
	sandbox_step_result_free(&tr->judge);
	tr->r = ir.solution;
	tr->judge = ir.interactor;
	tr->ran = tr->judged = true;
	tr->idle = ir.idle;
	tr->terminated = ir.terminated;
	tr->protocol_errors = ir.protocol_errors;
	snprintf(tr->protocol_error, sizeof(tr->protocol_error), "%s", ir.protocol_error);
	jobstep_account(res, &tr->r, false);
	res->cpu_ms += tr->judge.cpu_ms;
	if (rc < 0 || tr->r.outcome.internal_error || tr->judge.outcome.internal_error) {
		jobstep_test_internal(res, tr, i, tr->r.outcome.internal_error ? tr->r.internal_msg :
									tr->judge.internal_msg);
		return;
	}
	dialogue = (struct verdict_dialogue){
		.solution = &tr->r.outcome,
		.interactor = &tr->judge.outcome,
		.message = tr->judge.err.data,
		.message_len = tr->judge.err.len,
		.wall_limit = ir.wall_limit,
		.solution_ended_for_interactor = ir.terminated || ir.stopped,
	};
	tr->status = verdict_interactive(&dialogue, &tr->points, tr->judge_error,
					 sizeof(tr->judge_error));
}

/* After a clean run with an answer (stdout or the output file): the
 * checker's verdict. */
void judge_run_checker(struct judge *judge, const struct job_env *env,
		       const struct job_request *req, const struct buf *output, size_t i,
		       struct job_result *res)
{
	struct test_result *tr = &res->tests[i];
	char err[256];
	int rc;

	rc = judge_test_files(judge, env, &req->tests[i], output, i, err, sizeof(err));
	if (rc < 0) {
		jobstep_test_internal(res, tr, i, err);
		return;
	}
	rc = sandbox_run(judge->jail, &judge->spec, &tr->judge);
	tr->judged = true;
	res->cpu_ms += tr->judge.cpu_ms;
	if (rc < 0 || tr->judge.outcome.internal_error) {
		jobstep_test_internal(res, tr, i, tr->judge.internal_msg);
		return;
	}
	tr->status = verdict_from_judge(&tr->judge.outcome, judge_name(judge), tr->judge.err.data,
					tr->judge.err.len, &tr->points, tr->judge_error,
					sizeof(tr->judge_error));
}
