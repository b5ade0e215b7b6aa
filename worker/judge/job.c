#include "autoconf.h"

#include "worker/judge/job.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/judge/groups.h"
#include "worker/sandbox/jobdir.h"
#include "common/log.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/network.h"
#include "worker/judge/jobstep.h"
#include "worker/judge/judge.h"

/* The request's files, as the build finds them in a new job directory. */
static int write_files(struct jobdir *d, const struct job_request *req)
{
	int rc = 0;

	for (size_t i = 0; i < req->nfiles && rc == 0; i++)
		rc = jobdir_write(d, req->files[i].name, req->files[i].data, req->files[i].len,
				  0644);
	return rc;
}

/* ---- the build cache (worker/judge/buildcache.h) ----------------------------- */

#define BUILD_MAX_TOOLS 16

/* Where a command name without a slash is found: sandbox_base_env's PATH. */
static const char *tool_path(const char *cmd, char *buf, size_t n)
{
	static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
					    "/usr/bin", "/sbin", "/bin" };

	if (strchr(cmd, '/'))
		return cmd[0] == '/' ? cmd : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(buf, n, "%s/%s", dirs[i], cmd);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/*
 * The toolchain's identity: its command's file and every host file the
 * command line names (a compiler's jar, a build script), as their inodes
 * and times say; NULL-terminated in ids, strings in store. An argument
 * that is a shell script ("sh -c '... exec /usr/lib/go-1.23/bin/go ...'")
 * names its tools inside: each word of it that is an absolute path counts
 * too, so that a compiler upgraded in place changes the key.
 */
static void build_tools(char **argv, const char **ids, char (*store)[512])
{
	static const char stops[] = " \t\n;&|()<>\"'=`";
	char buf[PATH_MAX];
	size_t k = 0;

	for (size_t i = 0; argv[i] && k < BUILD_MAX_TOOLS; i++) {
		const char *path = i == 0 ? tool_path(argv[0], buf, sizeof(buf)) :
			argv[i][0] == '/' ? argv[i] : NULL;

		if (path && buildcache_tool_id(path, store[k], sizeof(store[k])) == 0)
			ids[k] = store[k], k++;
		for (const char *w = argv[i]; i > 0 && *w && k < BUILD_MAX_TOOLS;) {
			size_t n = strcspn(w, stops);

			/* a whole argument that is one path was counted above */
			if (w[0] == '/' && n != strlen(argv[i]) && n < sizeof(buf)) {
				memcpy(buf, w, n);
				buf[n] = '\0';
				if (buildcache_tool_id(buf, store[k], sizeof(store[k])) == 0)
					ids[k] = store[k], k++;
			}
			w += n;
			w += strspn(w, stops);
		}
	}
	ids[k] = NULL;
}

/* The cache's key of the solution's build: everything that decides it. */
static int build_key(const struct job_env *env, const struct job_request *req,
		     unsigned char key[SHA256_LEN])
{
	struct buildcache_file *files = xcalloc(req->nfiles, sizeof(*files));
	char store[BUILD_MAX_TOOLS][512];
	const char *tools[BUILD_MAX_TOOLS + 1];
	struct jobstep_plan p = { 0 };
	int rc = jobstep_plan_make(req, &req->lang->build, req->build_flags, &req->build_limits, &p);

	if (rc == 0) {
		struct buildcache_input in = {
			.lang_id = req->lang->id,
			.lang_version = req->lang->version_hint,
			.argv = (const char *const *)p.argv,
			.envp = (const char *const *)p.envp,
			.tools = tools,
			.limits = &req->build_limits,
			.open_files = req->lang->build.open_files,
			.tmp_exec = req->lang->tmp_exec,
			.capture = &req->capture,
			.interleave = req->interleave,
			.job_output_bytes = env->cfg->max_job_output_bytes,
			.jail = sandbox_driver_name(env->sandbox),
			.files = files,
			.nfiles = req->nfiles,
		};

		for (size_t i = 0; i < req->nfiles; i++)
			files[i] = (struct buildcache_file){ req->files[i].name, req->files[i].data,
							     req->files[i].len };
		build_tools(p.argv, tools, store);
		buildcache_key(&in, key);
	}
	jobstep_plan_free(&p);
	free(files);
	return rc;
}

/*
 * The solution's build, from the cache when the same build succeeded
 * before: the job directory becomes what it left and the answer shows its
 * recorded output, which costs the job's output budget what it cost then.
 * The job's own build_ms is the time the cache took.
 */
static void run_build(const struct job_env *env, const struct job_request *req,
		      struct job_result *res)
{
	struct jobdir *d = jail_jobdir(env->jail);
	unsigned char key[SHA256_LEN];
	bool keyed = env->cache && build_key(env, req, key) == 0;
	uint64_t left = res->budget.left, spent, t0 = now_ms();
	int rc;

	res->has_build = true;
	if (keyed) {
		rc = buildcache_fetch(env->cache, key, d, env->uid, env->gid, &res->build, &spent);
		if (rc == 0) {
			res->build_cached = true;
			res->build_status = BS_OK;
			res->budget.left -= spent < left ? spent : left;
			res->build_ms += now_ms() - t0;
			return;
		}
		/* An entry that could not be taken is gone: the job directory
		 * is the request's again and the build runs. */
		if (rc != -ENOENT &&
		    ((rc = jobdir_clear(d, env->uid, env->gid)) < 0 || (rc = write_files(d, req)) < 0)) {
			res->build_status = BS_INTERNAL_ERROR;
			jobstep_internal(res, "writing the source files again after the build cache", -rc);
			return;
		}
	}
	res->build_status = jobstep_build(env, env->jail, req, &res->build, res, "build");
	if (keyed && res->build_status == BS_OK) {
		rc = buildcache_store(env->cache, key, d, &res->build, left - res->budget.left);
		if (rc < 0 && rc != -EFBIG)
			log_warn("keeping a %s build in the build cache: %s", req->lang->id,
				 strerror(-rc));
	}
}

/*
 * The test's input file, in place of whatever the build left under that
 * name: a file, a directory, or a symlink to a host file, which is removed
 * as a link and never followed (the write below creates a new file).
 */
static int write_input(struct jobdir *d, const char *name, const struct req_test *t)
{
	int rc = jobdir_remove_at(d->fd, name);

	if (rc < 0 && rc != -ENOENT)
		return rc;
	return jobdir_write(d, name, t->stdin_data, t->stdin_len, 0644);
}

/*
 * Before a test: the job directory restored from its snapshot (the first
 * test finds it untouched), and the test's input file. 0, or negative
 * errno with the reason in tr->r.
 */
static int test_prepare(const struct job_env *env, const struct req_test *t, size_t i,
			struct test_result *tr)
{
	struct jobdir *d = jail_jobdir(env->jail);
	const char *what = "restoring the job directory";
	int rc = i > 0 ? jobdir_restore(d, env->uid, env->gid) : 0;

	if (rc == 0 && t->input_file) {
		what = "writing the input file";
		rc = write_input(d, t->input_file, t);
	}
	if (rc < 0) {
		tr->r.outcome.internal_error = true;
		snprintf(tr->r.internal_msg, sizeof(tr->r.internal_msg), "%s: %s", what,
			 strerror(-rc));
	}
	return rc;
}

/*
 * The solution's run, its answer judged: the output file read when the
 * test names one, then the checker's verdict, or the comparison with the
 * expected answer, or the run's own outcome.
 */
static void test_judge(const struct job_env *env, const struct job_request *req,
		       struct judge *judge, size_t i, struct job_result *res)
{
	const struct req_test *t = &req->tests[i];
	struct test_result *tr = &res->tests[i];
	const struct buf *judged = &tr->r.out;
	struct verdict_answer answer = { .expected = t->expected != NULL, .cmp = CMP_EQUAL };

	if (t->output_file) {
		/* Every process of the test is gone: the file can no longer change. */
		int rc = jobdir_read(jail_jobdir(env->jail), t->output_file,
				     (size_t)req->run_limits.output_kb * 1024, &tr->file_out);

		if (rc == -ENOENT || rc == -EINVAL) {
			tr->file_missing = true;
		} else if (rc < 0) {
			tr->status = TS_INTERNAL_ERROR;
			jobstep_internal(res, "reading the output file", -rc);
			return;
		}
		/* Past the job's budget it is cut, as past its own cap. */
		jobstep_fit_budget(res, &tr->file_out, false);
		judged = &tr->file_out;
	}
	answer.file_missing = tr->file_missing;
	answer.file_truncated = tr->file_out.truncated;
	if (judge) {
		/* The checker judges an answer: a run that failed, or left no
		 * whole answer, has none. */
		tr->status = verdict_before_checker(&tr->r.outcome, &answer);
		if (tr->status == TS_ACCEPTED)
			judge_run_checker(judge, env, req, judged, i, res);
		judge_done(res, tr);
		return;
	}
	if (t->expected)
		answer.cmp = verdict_compare_by(&req->compare, judged->data ? judged->data : "",
						judged->len, t->expected, t->expected_len);
	tr->status = verdict_for_answer(&tr->r.outcome, &answer);
}

/*
 * One test, from the state the build left, with a fresh /tmp and nothing
 * of an earlier test alive: prepared, run, judged. The run command is the
 * same for all. An interactive test is run and judged at once, with its
 * interactor.
 */
static void run_test(const struct job_env *env, const struct job_request *req,
		     const struct jobstep_plan *p, struct judge *judge, struct network *net,
		     size_t i, struct job_result *res)
{
	const struct req_test *t = &req->tests[i];
	struct test_result *tr = &res->tests[i];
	struct step_spec s;
	int rc;

	jobstep_spec(&s, req, p, &req->run_limits, env);
	s.open_files = req->lang->run.open_files;
	s.budget = &res->budget;
	s.network = net;
	if (!t->input_file) {
		s.stdin_data = t->stdin_data;
		s.stdin_len = t->stdin_len;
	}
	rc = test_prepare(env, t, i, tr);
	if (rc == 0 && judge && judge_interactive(judge)) {
		judge_run_interactive(judge, env, req, &s, i, res);
		judge_done(res, tr);
		return;
	}
	if (rc == 0 && env->session) {
		struct session_spec live = *env->session;

		live.step = &s;
		rc = sandbox_session(env->jail, &live, &tr->r);
	} else if (rc == 0) {
		rc = sandbox_run(env->jail, &s, &tr->r);
	}
	tr->ran = true;
	jobstep_account(res, &tr->r, false);
	if (rc < 0 || tr->r.outcome.internal_error)
		jobstep_test_internal(res, tr, i, tr->r.internal_msg);
	else
		test_judge(env, req, judge, i, res);
}

/* ---- what the job has reported: early stop, groups, events ------------- */

/* What has been reported so far, and the statuses groups are judged on. */
struct progress {
	bool build, judge;
	size_t tests;               /* tests 0..tests-1 are reported */
	enum test_status *sts;
};

/* The client went away: stop here (a step that saw it was killed). */
static bool job_cancelled(const struct job_env *env, struct job_result *res)
{
	if (!res->cancelled && env->cancel_flag)
		res->cancelled = atomic_load_explicit(env->cancel_flag, memory_order_acquire);
	return res->cancelled;
}

/* An event, to a client that is still there (a step killed for the
 * cancel reports nothing of its own). */
static void report(const struct job_env *env, const struct job_request *req,
		   struct job_result *res, enum job_event ev, size_t index)
{
	if (env->on_event && !job_cancelled(env, res))
		env->on_event(env->event_arg, req, res, ev, index);
}

/* Test i is final: report it, then every group it decides. */
static void report_test(const struct job_env *env, const struct job_request *req,
			struct job_result *res, struct progress *pg, size_t i)
{
	pg->sts[i] = res->tests[i].status;
	pg->tests = i + 1;
	report(env, req, res, JOB_EV_TEST, i);
	for (size_t g = 0; g < res->ngroups; g++) {
		struct group_verdict v;

		if (res->groups[g].decided)
			continue;
		groups_judge(&req->groups[g], pg->sts, pg->tests, &v);
		if (!v.decided)
			continue;
		res->groups[g] = (struct group_result){ v.status, v.points, true };
		res->points += v.points;
		report(env, req, res, JOB_EV_GROUP, g);
	}
}

/* At the end: whatever the job did not reach, as it stands. */
static void report_rest(const struct job_env *env, const struct job_request *req,
			struct job_result *res, struct progress *pg)
{
	if (!pg->build)
		report(env, req, res, JOB_EV_BUILD, 0);
	if (res->judge.present && !pg->judge)
		report(env, req, res, JOB_EV_JUDGE_BUILD, 0);
	pg->build = pg->judge = true;
	for (size_t i = pg->tests; i < res->ntests; i++)
		report_test(env, req, res, pg, i);
}

/*
 * In index order, each at most once: a test that an earlier failure made
 * unneeded (stop_on_failure, a group's) is skipped, never run.
 */
static void run_tests(const struct job_env *env, const struct job_request *req,
		      struct judge *judge, struct network *net, struct job_result *res,
		      struct progress *pg)
{
	struct jobstep_plan p = { 0 };
	int rc = jobstep_plan_make(req, &req->lang->run, req->run_flags, &req->run_limits, &p);

	for (size_t i = 0; rc == 0 && req->run_args && req->run_args[i]; i++)
		strv_push(&p.argv, xstrdup(req->run_args[i]));
	if (rc < 0) {
		for (size_t i = 0; i < req->ntests; i++)
			res->tests[i].status = TS_INTERNAL_ERROR;
		jobstep_internal(res, "expanding the run command", -rc);
		return;
	}
	for (size_t i = 0; i < req->ntests && !job_cancelled(env, res); i++) {
		if (groups_test_needed(req, pg->sts, i))
			run_test(env, req, &p, judge, net, i, res);
		else
			res->tests[i].status = TS_SKIPPED;
		/* killed for the cancel: no verdict of its own (the job's
		 * record then says not_executed, never the kill's signal) */
		if (job_cancelled(env, res))
			res->tests[i].status = TS_NOT_EXECUTED;
		report_test(env, req, res, pg, i);
	}
	jobstep_plan_free(&p);
}

static void all_tests(struct job_result *res, enum test_status st)
{
	for (size_t i = 0; i < res->ntests; i++)
		res->tests[i].status = st;
}

/* ---- the job, step by step ------------------------------------------------ */

struct job_state {
	const struct job_env *env;
	const struct job_request *req;
	struct job_result *res;
	struct jobdir *d;
	struct judge *judge;    /* the interactor or checker, while usable */
	struct network *net;    /* the tests' network, where the request asked */
	struct progress pg;
	int fault;              /* a job fault: every test is internal_error */
};

/*
 * Asked before every step: no fault, a solution that built, the judge's
 * program usable where the job has one, and the client still there (a
 * step killed for the cancel failed for no fault of its own: from then
 * res->cancelled stops the job, and says it has no verdict).
 */
static bool may_go_on(struct job_state *js)
{
	const struct job_result *res = js->res;

	/* the client first: a build it cancelled failed for no fault */
	return !job_cancelled(js->env, js->res) && js->fault == 0 && res->build_status == BS_OK &&
	       (!res->judge.present || js->judge);
}

static void step_files(struct job_state *js)
{
	js->fault = js->d ? write_files(js->d, js->req) : -EINVAL;
	if (js->fault < 0)
		jobstep_internal(js->res, "writing a source file", -js->fault);
}

/* Its jail starts now and sets itself up while the solution builds. */
static void step_judge_open(struct job_state *js)
{
	if (!js->req->interactor && !js->req->checker)
		return;
	js->judge = judge_open(js->env, js->req, js->res);
	if (!js->judge)
		js->fault = -EIO;  /* recorded by judge_open */
}

static void step_build(struct job_state *js)
{
	if (js->req->lang->has_build)
		run_build(js->env, js->req, js->res);
	js->pg.build = true;
	report(js->env, js->req, js->res, JOB_EV_BUILD, 0);
}

/* What the tests start from. With one test there is nothing to restore:
 * no snapshot either. */
static void step_snapshot(struct job_state *js)
{
	if (js->req->ntests <= 1)
		return;
	js->fault = jobdir_snapshot(js->d);
	if (js->fault < 0)
		jobstep_internal(js->res, "keeping the built job directory", -js->fault);
}

/* The judge's program, only for a solution that built. */
static void step_judge_build(struct job_state *js)
{
	if (!js->judge)
		return;
	if (!judge_prepare(js->judge, js->env, js->req, js->res)) {
		judge_destroy(js->judge);
		js->judge = NULL;
	}
	js->pg.judge = true;
	report(js->env, js->req, js->res, JOB_EV_JUDGE_BUILD, 0);
}

/* The tests' network, after the build (which never has one): where the
 * request asked and the operator allows it (the parsers refuse it
 * otherwise). */
static void step_network(struct job_state *js)
{
	char err[256];
	int rc;

	/* a live session's program is watched by its own loop, which reads
	 * no network counters: the parsers never ask for one there */
	if (!js->req->network || js->env->session)
		return;
	if (!js->env->network) {
		js->fault = -EPERM;
		jobstep_fault(js->res, "this server gives no job a network");
		return;
	}
	rc = network_open(js->env->jail, js->env->network, &js->net, err, sizeof(err));
	if (rc < 0) {
		js->fault = rc;
		jobstep_fault(js->res, "the job's network: %s", err);
		return;
	}
	js->res->has_network = true;
}

static void step_tests(struct job_state *js)
{
	run_tests(js->env, js->req, js->judge, js->net, js->res, &js->pg);
}

/* The files the last test left, read back where the request asks. A
 * directory that cannot be read gives none: the verdicts stand. */
static void step_files_out(struct job_state *js)
{
	int rc;

	if (!js->req->files_out.max_files)
		return;
	rc = outfiles_collect(js->d->fd, &js->req->files_out, &js->res->files);
	if (rc < 0)
		log_warn("reading the job directory's files back: %s", strerror(-rc));
}

static void (*const job_steps[])(struct job_state *) = {
	step_files, step_judge_open, step_build, step_snapshot, step_judge_build, step_network,
	step_tests, step_files_out,
};

static void job_result_init(struct job_result *res, const struct job_request *req)
{
	memset(res, 0, sizeof(*res));
	sandbox_step_result_init(&res->build);
	sandbox_step_result_init(&res->judge.r);
	res->ntests = req->ntests;
	res->tests = xcalloc(req->ntests, sizeof(*res->tests));
	for (size_t i = 0; i < req->ntests; i++) {
		sandbox_step_result_init(&res->tests[i].r);
		sandbox_step_result_init(&res->tests[i].judge);
		buf_init(&res->tests[i].file_out, 0);
		res->tests[i].status = TS_NOT_EXECUTED;
	}
	res->build_status = BS_OK;
	res->ngroups = req->ngroups;
	res->groups = req->ngroups ? xcalloc(req->ngroups, sizeof(*res->groups)) : NULL;
	for (size_t g = 0; g < req->ngroups; g++)
		res->max_points += req->groups[g].points;
	/* as the answer carries the output (its API said how) */
	outtext_budget_init(&res->budget, req->capture.budget_format, req->capture.budget_bytes);
}

int job_run(const struct job_env *env, const struct job_request *req, struct job_result *res)
{
	struct job_state js = { .env = env, .req = req, .res = res, .d = jail_jobdir(env->jail) };

	job_result_init(res, req);
	js.pg.sts = xcalloc(req->ntests, sizeof(*js.pg.sts));
	for (size_t i = 0; i < ARRAY_SIZE(job_steps) && may_go_on(&js); i++)
		job_steps[i](&js);
	if (js.fault < 0)
		all_tests(res, TS_INTERNAL_ERROR);
	judge_destroy(js.judge);
	network_close(js.net, &res->network);
	report_rest(env, req, res, &js.pg);

	/* A build killed for a cancel (the solution's or the judge's) did
	 * not fail: the verdict module says not_executed first. */
	res->top = verdict_top_level(&(struct verdict_job){
		.build = res->build_status,
		.judge_build = res->judge.present ? res->judge.status : BS_OK,
		.cancelled = res->cancelled,
		.tests = js.pg.sts,
		.ntests = req->ntests,
	});
	free(js.pg.sts);
	return 0;
}

void job_result_free(struct job_result *res)
{
	if (!res)
		return;
	sandbox_step_result_free(&res->build);
	sandbox_step_result_free(&res->judge.r);
	for (size_t i = 0; i < res->ntests && res->tests; i++) {
		sandbox_step_result_free(&res->tests[i].r);
		sandbox_step_result_free(&res->tests[i].judge);
		buf_free(&res->tests[i].file_out);
	}
	free(res->tests);
	res->tests = NULL;
	res->ntests = 0;
	free(res->groups);
	res->groups = NULL;
	res->ngroups = 0;
	outfiles_free(&res->files);
}
