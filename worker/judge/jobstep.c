#include "autoconf.h"

#include "worker/judge/jobstep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/sandbox/jail.h"

/* Base env with the language's entries replacing same-named ones. */
static char **merge_env(char **lang_env)
{
	size_t nb = ARRAY_SIZE(sandbox_base_env) - 1, nl = strv_len(lang_env), k = 0;
	char **out;

	out = xcalloc(nb + nl + 1, sizeof(*out));
	for (size_t i = 0; i < nb; i++) {
		size_t klen = strcspn(sandbox_base_env[i], "=") + 1;
		bool overridden = false;

		for (size_t j = 0; j < nl; j++)
			overridden |= strncmp(lang_env[j], sandbox_base_env[i], klen) == 0;
		if (!overridden)
			out[k++] = xstrdup(sandbox_base_env[i]);
	}
	for (size_t j = 0; j < nl; j++)
		out[k++] = xstrdup(lang_env[j]);
	out[k] = NULL;
	return out;
}

void jobstep_plan_free(struct jobstep_plan *p)
{
	strv_free(p->argv);
	strv_free(p->envp);
	p->argv = p->envp = NULL;
}

int jobstep_plan_make(const struct job_request *req, const struct lang_step *step,
		      char **flags, const struct limits *lim, struct jobstep_plan *p)
{
	const char **names = xcalloc(req->nfiles + 1, sizeof(*names));
	struct expand_ctx ctx = {
		.source = req->files[0].name,
		.artifact = req->artifact,
		.sources = names,
		.flags = (const char *const *)flags,
		.default_flags = (const char *const *)step->default_flags,
		.box = JAILPATH_BOX,
		.tmp = JAILPATH_TMP,
		.memory_mb = (unsigned long)(lim->memory_kb / 1024),
	};
	static const char *const none[] = { NULL };
	char **lang_env = NULL;
	char *const *args;
	const char *cmd;
	int rc;

	if (!flags)
		ctx.flags = none;
	for (size_t i = 0; i < req->nfiles; i++)
		names[i] = req->files[i].name;
	langtab_step_cmdline(step, step == &req->lang->build ? req->build_cmdline :
				   step == &req->lang->run   ? req->run_cmdline :
							       NULL,
			     &cmd, &args);
	rc = placeholder_expand_argv(cmd, args, &ctx, &p->argv);
	if (rc == 0)
		rc = placeholder_expand_env(step->env, &ctx, &lang_env);
	if (rc == 0)
		p->envp = merge_env(lang_env);
	strv_free(lang_env);
	free(names);
	if (rc < 0)
		jobstep_plan_free(p);
	return rc;
}

void jobstep_spec(struct step_spec *s, const struct job_request *req,
		  const struct jobstep_plan *p, const struct limits *lim,
		  const struct job_env *env)
{
	memset(s, 0, sizeof(*s));
	s->cancel_fd = env->cancel_fd;
	s->argv = (const char *const *)p->argv;
	s->envp = (const char *const *)p->envp;
	s->limits = *lim;
	s->tmp_exec = req->lang->tmp_exec;
	s->want_interleaved = req->interleave;
	if (req->capture.stream_cap) {
		s->combined_cap = req->capture.stream_cap;
		s->stdout_cap = req->capture.stream_cap;
		s->stderr_cap = req->capture.stream_cap;
	}
	/* nproc is 1 and a program's threads share one CPU, in its build too */
	s->pin_cpu = req->capture.pin_cpu;
}

void jobstep_fault(struct job_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->internal_error)
		return;
	res->internal_error = true;
	va_start(ap, fmt);
	vsnprintf(res->internal_msg, sizeof(res->internal_msg), fmt, ap);
	va_end(ap);
	log_error("%s", res->internal_msg);
}

void jobstep_internal(struct job_result *res, const char *what, int err)
{
	jobstep_fault(res, "%.180s: %s", what, strerror(err));
}

/*
 * Output read after a step (a test's output file) or shown but not judged
 * by goboxd (a judge program's message), cut to what the answer may still
 * take of the job's budget. The judge is not blamed for it: its message is
 * only shown. True when all of it fit.
 */
bool jobstep_fit_budget(struct job_result *res, struct buf *b, bool marker)
{
	struct outtext_stream st = { 0 };
	size_t n = outtext_take(&res->budget, &st, b->data ? b->data : "", b->len);

	if (n == b->len)
		return true;
	buf_truncate(b, n);
	b->truncated = true;
	if (marker)
		buf_puts(b, TRUNCATION_MARKER);
	return false;
}

void jobstep_account(struct job_result *res, const struct step_result *r, bool build)
{
	if (build)
		res->build_ms += r->wall_ms;
	else
		res->run_ms += r->wall_ms;
	res->cpu_ms += r->cpu_ms;
	if (r->memory_peak_kb > res->memory_peak_kb)
		res->memory_peak_kb = r->memory_peak_kb;
}

/* Build req (the solution's or the judge's program) in jail into r. */
enum build_status jobstep_build(const struct job_env *env, struct jail *jail,
				const struct job_request *req, struct step_result *r,
				struct job_result *res, const char *who)
{
	const struct run_outcome *o = &r->outcome;
	struct jobstep_plan p = { 0 };
	struct step_spec s;
	int rc;

	rc = jobstep_plan_make(req, &req->lang->build, req->build_flags, &req->build_limits, &p);
	if (rc < 0) {
		jobstep_internal(res, "expanding the build command", -rc);
		return BS_INTERNAL_ERROR;
	}
	jobstep_spec(&s, req, &p, &req->build_limits, env);
	s.open_files = req->lang->build.open_files;
	s.budget = &res->budget;
	/* a live session's build (it has no judge to build): shown as it goes */
	if (env->session && env->session->build_output) {
		s.on_output = env->session->build_output;
		s.output_arg = env->session->arg;
	}
	rc = sandbox_run(jail, &s, r);
	jobstep_account(res, r, true);
	jobstep_plan_free(&p);
	if (rc < 0 || o->internal_error) {
		jobstep_fault(res, "%s sandbox: %.200s", who, r->internal_msg);
		return BS_INTERNAL_ERROR;
	}
	return verdict_for_build(o);
}

/* A sandbox failure of a test: a server fault. */
void jobstep_test_internal(struct job_result *res, struct test_result *tr, size_t i,
			   const char *msg)
{
	tr->status = TS_INTERNAL_ERROR;
	jobstep_fault(res, "test %zu sandbox: %.200s", i + 1, msg);
}
