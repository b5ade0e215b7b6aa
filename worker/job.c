#include "autoconf.h"

#include "worker/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobdir.h"
#include "common/log.h"
#include "common/placeholder.h"
#include "common/util.h"
#include "nsjail/policy.h"
#include "worker/jail.h"

#define JAIL_BOX POLICY_BOX_DIR
#define JAIL_TMP POLICY_TMP_DIR

/* Every step starts from this; the language's env is applied on top. */
const char *const job_base_env[5] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=" JAIL_TMP,
	"TMPDIR=" JAIL_TMP,
	"LANG=C.UTF-8",
	NULL,
};

/* Base env with the language's entries replacing same-named ones. */
static char **merge_env(char **lang_env)
{
	size_t nb = ARRAY_SIZE(job_base_env) - 1, nl = 0, k = 0;
	char **out;

	while (lang_env && lang_env[nl])
		nl++;
	out = xcalloc(nb + nl + 1, sizeof(*out));
	for (size_t i = 0; i < nb; i++) {
		size_t klen = strcspn(job_base_env[i], "=") + 1;
		bool overridden = false;

		for (size_t j = 0; j < nl; j++)
			overridden |= strncmp(lang_env[j], job_base_env[i], klen) == 0;
		if (!overridden)
			out[k++] = xstrdup(job_base_env[i]);
	}
	for (size_t j = 0; j < nl; j++)
		out[k++] = xstrdup(lang_env[j]);
	out[k] = NULL;
	return out;
}

struct step_plan {
	char **argv;
	char **envp;
};

static void plan_free(struct step_plan *p)
{
	strv_free_array(p->argv);
	strv_free_array(p->envp);
	p->argv = p->envp = NULL;
}

static int plan_step(const struct job_request *req, const struct lang_step *step,
		     char **flags, const struct limits *lim, struct step_plan *p)
{
	const char **names = xcalloc(req->nfiles + 1, sizeof(*names));
	struct expand_ctx ctx = {
		.source = req->files[0].name,
		.artifact = req->artifact,
		.sources = names,
		.flags = (const char *const *)flags,
		.box = JAIL_BOX,
		.tmp = JAIL_TMP,
		.memory_mb = (unsigned long)(lim->memory_kb / 1024),
	};
	static const char *const none[] = { NULL };
	char **lang_env = NULL;
	int rc;

	if (!flags)
		ctx.flags = none;
	for (size_t i = 0; i < req->nfiles; i++)
		names[i] = req->files[i].name;
	rc = placeholder_expand_argv(step, &ctx, &p->argv);
	if (rc == 0)
		rc = placeholder_expand_env(step, &ctx, &lang_env);
	if (rc == 0)
		p->envp = merge_env(lang_env);
	strv_free_array(lang_env);
	free(names);
	if (rc < 0)
		plan_free(p);
	return rc;
}

static void spec_fill(struct step_spec *s, const struct job_request *req,
		      const struct step_plan *p, const struct limits *lim, const struct config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->argv = (const char *const *)p->argv;
	s->envp = (const char *const *)p->envp;
	s->limits = *lim;
	s->tmp_exec = req->lang->tmp_exec;
	if (req->format == REQ_CODIZE) {
		s->combined_cap = cfg->output_limit_bytes;
		s->stdout_cap = cfg->output_limit_bytes;
		s->stderr_cap = cfg->output_limit_bytes;
		s->want_interleaved = true;
	}
}

static void set_internal(struct job_result *res, const char *what, int err)
{
	if (res->internal_error)
		return;
	res->internal_error = true;
	snprintf(res->internal_msg, sizeof(res->internal_msg), "%.180s: %s", what, strerror(err));
	log_error("%s", res->internal_msg);
}

static void account(struct job_result *res, const struct step_result *r, bool build)
{
	if (build)
		res->build_ms += r->wall_ms;
	else
		res->run_ms += r->wall_ms;
	res->cpu_ms += r->cpu_ms;
	if (r->memory_peak_kb > res->memory_peak_kb)
		res->memory_peak_kb = r->memory_peak_kb;
}

static void run_build(const struct job_env *env, const struct job_request *req,
		      struct job_result *res)
{
	const struct run_outcome *o = &res->build.outcome;
	struct step_plan p = { 0 };
	struct step_spec s;
	int rc;

	res->has_build = true;
	rc = plan_step(req, &req->lang->build, req->build_flags, &req->build_limits, &p);
	if (rc < 0) {
		res->build_status = BS_INTERNAL_ERROR;
		set_internal(res, "expanding the build command", -rc);
		return;
	}
	spec_fill(&s, req, &p, &req->build_limits, env->cfg);
	s.open_files = req->lang->build.open_files;
	rc = sandbox_run(env->jail, &s, &res->build);
	account(res, &res->build, true);
	plan_free(&p);
	if (rc < 0 || o->internal_error) {
		res->build_status = BS_INTERNAL_ERROR;
		if (!res->internal_error) {
			res->internal_error = true;
			snprintf(res->internal_msg, sizeof(res->internal_msg), "build sandbox: %.200s",
				 res->build.internal_msg);
		}
		return;
	}
	/* Warnings on stderr do not fail a build; a non-zero exit does. */
	res->build_status = o->exited && o->exit_code == 0 && !o->timed_out && !o->oom &&
					    !o->output_limited ?
				    BS_OK : BS_FAILED;
}

/*
 * One test, from the state the build left: the job directory restored from
 * its snapshot (the first test finds it untouched), a fresh /tmp, and
 * nothing of an earlier test alive. The run command is the same for all.
 */
static void run_test(const struct job_env *env, const struct job_request *req,
		     const struct step_plan *p, size_t i, struct job_result *res)
{
	const struct req_test *t = &req->tests[i];
	struct test_result *tr = &res->tests[i];
	struct jobdir *d = jail_jobdir(env->jail);
	const struct buf *judged = &tr->r.out;
	struct step_spec s;
	enum compare_result cmp = CMP_EQUAL;
	int rc = 0;

	spec_fill(&s, req, p, &req->run_limits, env->cfg);
	s.open_files = req->lang->run.open_files;
	if (!t->input_file) {
		s.stdin_data = t->stdin_data;
		s.stdin_len = t->stdin_len;
	}
	if (i > 0)
		rc = jobdir_restore(d, env->uid, env->gid);
	if (rc < 0) {
		tr->r.outcome.internal_error = true;
		snprintf(tr->r.internal_msg, sizeof(tr->r.internal_msg),
			 "restoring the job directory: %s", strerror(-rc));
	} else if (t->input_file &&
		   (rc = jobdir_write(d, t->input_file, t->stdin_data, t->stdin_len, 0644)) < 0) {
		tr->r.outcome.internal_error = true;
		snprintf(tr->r.internal_msg, sizeof(tr->r.internal_msg),
			 "writing the input file: %s", strerror(-rc));
	} else {
		rc = sandbox_run(env->jail, &s, &tr->r);
	}
	tr->ran = true;
	account(res, &tr->r, false);
	if (rc < 0 || tr->r.outcome.internal_error) {
		tr->status = TS_INTERNAL_ERROR;
		if (!res->internal_error) {
			res->internal_error = true;
			snprintf(res->internal_msg, sizeof(res->internal_msg), "test %zu sandbox: %.200s",
				 i + 1, tr->r.internal_msg);
		}
		return;
	}
	if (t->output_file) {
		/* Every process of the test is gone: the file can no longer change. */
		rc = jobdir_read(d, t->output_file, (size_t)req->run_limits.output_kb * 1024,
				 &tr->file_out);
		if (rc == -ENOENT || rc == -EINVAL) {
			tr->file_missing = true;
		} else if (rc < 0) {
			tr->status = TS_INTERNAL_ERROR;
			set_internal(res, "reading the output file", -rc);
			return;
		}
		judged = &tr->file_out;
	}
	if (t->expected)
		cmp = output_compare_by(&req->compare, judged->data ? judged->data : "",
					judged->len, t->expected, t->expected_len);
	/* A missing output file is no answer, whatever was expected. */
	if (tr->file_missing)
		cmp = CMP_DIFFERENT;
	tr->status = verdict_for_test(&tr->r.outcome, t->expected != NULL || tr->file_missing,
				      cmp);
	/* An output file cut at the cap cannot be the right answer. */
	if (tr->status == TS_ACCEPTED && tr->file_out.truncated && t->expected)
		tr->status = TS_WRONG_OUTPUT;
}

static void run_tests(const struct job_env *env, const struct job_request *req,
		      struct job_result *res)
{
	struct step_plan p = { 0 };
	int rc = plan_step(req, &req->lang->run, req->run_flags, &req->run_limits, &p);

	if (rc < 0) {
		for (size_t i = 0; i < req->ntests; i++)
			res->tests[i].status = TS_INTERNAL_ERROR;
		set_internal(res, "expanding the run command", -rc);
		return;
	}
	for (size_t i = 0; i < req->ntests; i++)
		run_test(env, req, &p, i, res);
	plan_free(&p);
}

static void all_tests(struct job_result *res, enum test_status st)
{
	for (size_t i = 0; i < res->ntests; i++)
		res->tests[i].status = st;
}

int job_run(const struct job_env *env, const struct job_request *req, struct job_result *res)
{
	struct jobdir *d = jail_jobdir(env->jail);
	enum test_status *sts;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	step_result_init(&res->build);
	res->ntests = req->ntests;
	res->tests = xcalloc(req->ntests, sizeof(*res->tests));
	for (size_t i = 0; i < req->ntests; i++) {
		step_result_init(&res->tests[i].r);
		buf_init(&res->tests[i].file_out, 0);
		res->tests[i].status = TS_NOT_EXECUTED;
	}
	res->build_status = BS_OK;

	if (!d)
		rc = -EINVAL;
	for (size_t i = 0; i < req->nfiles && rc == 0; i++)
		rc = jobdir_write(d, req->files[i].name, req->files[i].data, req->files[i].len,
				  0644);
	if (rc < 0)
		set_internal(res, "writing a source file", -rc);
	if (rc == 0 && req->lang->has_build)
		run_build(env, req, res);
	/* With one test there is nothing to restore: no snapshot either. */
	if (rc == 0 && res->build_status == BS_OK && req->ntests > 1) {
		rc = jobdir_snapshot(d);
		if (rc < 0)
			set_internal(res, "keeping the built job directory", -rc);
	}
	if (rc == 0 && res->build_status == BS_OK)
		run_tests(env, req, res);
	else if (rc < 0)
		all_tests(res, TS_INTERNAL_ERROR);

	sts = xcalloc(req->ntests, sizeof(*sts));
	for (size_t i = 0; i < req->ntests; i++)
		sts[i] = res->tests[i].status;
	res->top = verdict_top_level(res->build_status, sts, req->ntests);
	free(sts);
	return 0;
}

void job_result_free(struct job_result *res)
{
	if (!res)
		return;
	step_result_free(&res->build);
	for (size_t i = 0; i < res->ntests && res->tests; i++) {
		step_result_free(&res->tests[i].r);
		buf_free(&res->tests[i].file_out);
	}
	free(res->tests);
	res->tests = NULL;
	res->ntests = 0;
}
