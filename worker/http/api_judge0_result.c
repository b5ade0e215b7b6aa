#include "autoconf.h"

/*
 * A finished Judge0 job's result (api_judge0_result.h): each run's
 * status from its outcome (and Judge0's comparison of its output), the
 * last run's output and the runs' averages, what the program left in
 * its directory.
 */
#include "worker/http/api_judge0_result.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/log.h"
#include "common/util.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_status.h"
#include "worker/judge/zipfiles.h"

/* Judge0's comparison: each line's trailing blanks, then the text's, go. */
static size_t strip_judge0(const char *s, size_t n, char *out)
{
	size_t o = 0, line = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '\n') {
			size_t end = i;

			while (end > line && strchr(" \t\r\v\f", s[end - 1]) && s[end - 1])
				end--;
			memcpy(out + o, s + line, end - line);
			o += end - line;
			if (i < n)
				out[o++] = '\n';
			line = i + 1;
		}
	}
	while (o && (strchr(" \t\r\n\v\f", out[o - 1]) || out[o - 1] == '\0'))
		o--;
	return o;
}

static bool judge0_same(const char *got, size_t glen, const char *want, size_t wlen)
{
	char *a = xmalloc(glen + 1), *b = xmalloc(wlen + 1);
	size_t na = strip_judge0(got, glen, a), nb = strip_judge0(want, wlen, b);
	bool same = na == nb && memcmp(a, b, na) == 0;

	free(a);
	free(b);
	return same;
}

static void add_text(cJSON *o, const char *key, const struct buf *b)
{
	char *e;

	if (!b->len) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	e = base64_encode(b->data, b->len);
	cJSON_AddStringToObject(o, key, e);
	free(e);
}

static void add_seconds(cJSON *o, const char *key, double s)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", s);
	cJSON_AddStringToObject(o, key, text);
}

/* One run's status and message, from its outcome and its output. */
static int run_status(const struct judge0_job *j, const struct step_result *r, char *msg,
		      size_t n)
{
	const struct run_outcome *o = &r->outcome;
	const struct buf *out = j->redirect ? &r->interleaved : &r->out;

	msg[0] = '\0';
	if (o->internal_error) {
		snprintf(msg, n, "%s", r->internal_msg);
		return J0_INTERNAL_ERROR;
	}
	if (o->timed_out) {
		snprintf(msg, n, "Time limit exceeded");
		return J0_TIME_LIMIT;
	}
	if (o->output_limited) {
		snprintf(msg, n, "Output limit exceeded");
		return J0_SIGXFSZ;
	}
	if (o->oom) {
		snprintf(msg, n, "Memory limit exceeded");
		return J0_RUNTIME_OTHER;
	}
	if (o->term_signal) {
		snprintf(msg, n, "Caught fatal signal %d", o->term_signal);
		switch (o->term_signal) {
		case SIGSEGV:
			return J0_SIGSEGV;
		case SIGXFSZ:
			return J0_SIGXFSZ;
		case SIGFPE:
			return J0_SIGFPE;
		case SIGABRT:
			return J0_SIGABRT;
		default:
			return J0_RUNTIME_OTHER;
		}
	}
	if (o->disk_full) {
		snprintf(msg, n, "Disk limit exceeded");
		return J0_RUNTIME_OTHER;
	}
	if (o->exec_format_error) {
		snprintf(msg, n, "Exec format error");
		return J0_EXEC_FORMAT_ERROR;
	}
	if (o->exited && o->exit_code != 0) {
		snprintf(msg, n, "Exited with error status %d", o->exit_code);
		return J0_NZEC;
	}
	if (!j->expected || judge0_same(out->data ? out->data : "", out->len, j->expected,
					j->expected_len))
		return J0_ACCEPTED;
	return J0_WRONG_ANSWER;
}

static char *print_result(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	cJSON_Delete(o);
	return s;
}

char *api_judge0_result_failed(const char *message)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "status_id", J0_INTERNAL_ERROR);
	cJSON_AddStringToObject(o, "message", message);
	return print_result(o);
}

/* Judge0 1.14's post_execution_filesystem: a zip of what the run left in
 * its directory, base64-encoded; null when it left nothing readable. */
static void add_filesystem(cJSON *o, const struct outfiles *files)
{
	char *zip = NULL, *e, err[256];
	size_t len = 0;

	if (!files->n || zipfiles_pack(files, &zip, &len, err, sizeof(err)) < 0) {
		if (files->n)
			log_warn("post_execution_filesystem: %s", err);
		cJSON_AddNullToObject(o, "post_execution_filesystem");
		return;
	}
	e = base64_encode(zip, len);
	cJSON_AddStringToObject(o, "post_execution_filesystem", e);
	free(e);
	free(zip);
}

char *api_judge0_result(const struct job_request *req, const struct job_result *res, int rc)
{
	const struct judge0_job *j = req->api;
	cJSON *o = cJSON_CreateObject();
	const struct step_result *last = NULL;
	double cpu = 0, wall = 0, mem = 0;
	size_t ran = 0;
	int status = J0_ACCEPTED;
	char msg[256] = "";

	if (rc < 0 || (res->internal_error && res->build_status != BS_FAILED)) {
		cJSON_Delete(o);
		return api_judge0_result_failed(res->internal_msg[0] ? res->internal_msg :
					       "the sandbox failed");
	}
	if (res->has_build && res->build_status == BS_FAILED) {
		struct buf tle;

		cJSON_AddNumberToObject(o, "status_id", J0_COMPILATION_ERROR);
		if (res->build.outcome.timed_out) {
			buf_init(&tle, 0);
			buf_puts(&tle, "Compilation time limit exceeded.");
			add_text(o, "compile_output", &tle);
			buf_free(&tle);
		} else {
			add_text(o, "compile_output", &res->build.interleaved);
		}
		return print_result(o);
	}
	for (size_t i = 0; i < res->ntests && res->tests[i].ran; i++) {
		last = &res->tests[i].r;
		status = run_status(j, last, msg, sizeof(msg));
		cpu += (double)last->cpu_ms / 1000.0;
		wall += (double)last->wall_ms / 1000.0;
		mem += (double)last->memory_peak_kb;
		ran++;
		if (status != J0_ACCEPTED)
			break;
	}
	if (!last)
		return api_judge0_result_failed("the program did not run");
	cJSON_AddNumberToObject(o, "status_id", status);
	if (res->has_build)
		add_text(o, "compile_output", &res->build.interleaved);
	add_text(o, "stdout", j->redirect ? &last->interleaved : &last->out);
	if (j->redirect) {
		cJSON_AddNullToObject(o, "stderr");
	} else {
		add_text(o, "stderr", &last->err);
	}
	if (msg[0])
		cJSON_AddStringToObject(o, "message", msg);
	/* isolate_job.rb: metadata's exitcode, or 0 (a signal, a kill) */
	cJSON_AddNumberToObject(o, "exit_code", last->outcome.exited ? last->outcome.exit_code : 0);
	if (last->outcome.term_signal)
		cJSON_AddNumberToObject(o, "exit_signal", last->outcome.term_signal);
	add_seconds(o, "time", cpu / (double)ran);
	add_seconds(o, "wall_time", wall / (double)ran);
	cJSON_AddNumberToObject(o, "memory", floor(mem / (double)ran));
	add_filesystem(o, &res->files);
	return print_result(o);
}
