#include "autoconf.h"

/*
 * goboxd's own API, the answer: a job's result as POST /run's 200 body
 * (the files it asked back included), whole or streamed as events, and
 * the 400/413 error body. The request is api_run.c's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/outtext.h"
#include "common/util.h"
#include "worker/http/api.h"

static void add_text(cJSON *o, const char *key, const struct buf *b)
{
	char *clean = outtext_utf8(b->data ? b->data : "", b->len);

	cJSON_AddStringToObject(o, key, clean);
	free(clean);
}

static void add_exit(cJSON *o, const struct run_outcome *oc)
{
	char sig[32];

	if (oc->exited)
		cJSON_AddNumberToObject(o, "exit_code", oc->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	if (oc->term_signal)
		cJSON_AddStringToObject(o, "signal", verdict_signal_name(oc->term_signal, sig, sizeof(sig)));
	else
		cJSON_AddNullToObject(o, "signal");
}

/* Time and memory of a step that ran: the cgroup's peak counts the page
 * cache the step made; the resident peak is its processes' own memory. */
static void add_usage(cJSON *o, const struct step_result *r)
{
	cJSON_AddNumberToObject(o, "duration_ms", (double)r->wall_ms);
	cJSON_AddNumberToObject(o, "cpu_time_ms", (double)r->cpu_ms);
	cJSON_AddNumberToObject(o, "memory_peak_kb", (double)r->memory_peak_kb);
	cJSON_AddNumberToObject(o, "memory_rss_peak_kb", (double)r->memory_rss_peak_kb);
}

static cJSON *build_json(enum build_status status, bool has_build, const struct step_result *r,
			 bool cached)
{
	cJSON *b = cJSON_CreateObject();
	enum test_status limit;

	cJSON_AddStringToObject(b, "status", verdict_build_status_name(status));
	/* the build cache's record of the same build: nothing ran */
	cJSON_AddBoolToObject(b, "cached", cached);
	if (!has_build) {
		cJSON_AddStringToObject(b, "stdout", "");
		cJSON_AddStringToObject(b, "stderr", "");
		cJSON_AddNumberToObject(b, "duration_ms", 0);
		cJSON_AddBoolToObject(b, "skipped", true);
		return b;
	}
	add_text(b, "stdout", &r->out);
	add_text(b, "stderr", &r->err);
	add_usage(b, r);
	add_exit(b, &r->outcome);
	/* Which limit stopped the build, read as a test's verdict would. */
	limit = verdict_for_test(&r->outcome, false, CMP_EQUAL);
	cJSON_AddBoolToObject(b, "timed_out", r->outcome.timed_out);
	cJSON_AddBoolToObject(b, "memory_exceeded", limit == TS_MEMORY_EXCEEDED);
	cJSON_AddBoolToObject(b, "disk_exceeded", limit == TS_DISK_EXCEEDED);
	return b;
}

/* File I/O tests: {"name", "content" (null when there was no such file), "truncated"}. */
static void add_output_file(cJSON *o, const struct req_test *rt, const struct test_result *t)
{
	cJSON *f;

	if (!rt->output_file)
		return;
	f = cJSON_AddObjectToObject(o, "output_file");
	cJSON_AddStringToObject(f, "name", rt->output_file);
	if (!t->ran || t->file_missing)
		cJSON_AddNullToObject(f, "content");
	else
		add_text(f, "content", &t->file_out);
	cJSON_AddBoolToObject(f, "truncated", t->file_out.truncated);
}

/*
 * What the judge's program (interactor or checker) said of a test: its
 * stderr as checker_message, partial points, why it failed; for an
 * interactive test, whether a time limit found both sides waiting and
 * whether the protocol ended the solution.
 */
static void add_judge(cJSON *o, const struct job_request *req, const struct test_result *t)
{
	if (!req->interactor && !req->checker)
		return;
	if (t->judged)
		add_text(o, "checker_message", &t->judge.err);
	else
		cJSON_AddNullToObject(o, "checker_message");
	if (t->status == TS_PARTIAL)
		cJSON_AddNumberToObject(o, "points", t->points);
	if (t->judge_error[0])
		cJSON_AddStringToObject(o, "judge_error", t->judge_error);
	if (!req->interactor)
		return;
	cJSON_AddBoolToObject(o, "idle", t->idle);
	cJSON_AddBoolToObject(o, "terminated", t->terminated);
	cJSON_AddNumberToObject(o, "protocol_errors", t->protocol_errors);
	if (t->protocol_error[0])
		cJSON_AddStringToObject(o, "protocol_error", t->protocol_error);
}

static cJSON *test_json(const struct job_request *req, const struct req_test *rt,
			const struct test_result *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "status", verdict_test_status_name(t->status));
	if (!t->ran) {
		cJSON_AddStringToObject(o, "stdout", "");
		cJSON_AddStringToObject(o, "stderr", "");
		cJSON_AddNumberToObject(o, "duration_ms", 0);
		cJSON_AddNumberToObject(o, "memory_peak_kb", 0);
		return o;
	}
	add_text(o, "stdout", &t->r.out);
	add_text(o, "stderr", &t->r.err);
	add_usage(o, &t->r);
	add_exit(o, &t->r.outcome);
	cJSON_AddBoolToObject(o, "stdout_truncated", t->r.out_truncated);
	cJSON_AddBoolToObject(o, "stderr_truncated", t->r.err_truncated);
	add_output_file(o, rt, t);
	add_judge(o, req, t);
	return o;
}

static cJSON *group_json(const struct job_request *req, const struct job_result *res, size_t g)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "status", verdict_test_status_name(res->groups[g].status));
	cJSON_AddNumberToObject(o, "points", res->groups[g].points);
	cJSON_AddNumberToObject(o, "max_points", req->groups[g].points);
	return o;
}

static cJSON *judge_build_json(const struct job_result *res)
{
	return build_json(res->judge.status, res->judge.has_build, &res->judge.r, false);
}

static const char *judge_build_key(const struct job_request *req)
{
	return req->interactor ? "interactor_build" : "checker_build";
}

/* The answer's own fields, those that are not a step's: the streamed
 * answer's last line carries them. */
static void add_summary(cJSON *o, const struct job_request *req, const struct job_result *res)
{
	cJSON_AddStringToObject(o, "status", verdict_test_status_name(res->top));
	cJSON_AddStringToObject(o, "language", req->lang->id);
	if (req->has_groups) {
		cJSON_AddNumberToObject(o, "points", res->points);
		cJSON_AddNumberToObject(o, "max_points", res->max_points);
	}
}

/*
 * The files return_files named, as the last test left them: {"path",
 * "size", "mode" (octal, "0644"), "content_base64"}, and how many a cap
 * left out. Nothing when the request named none.
 */
static void add_files(cJSON *o, const struct job_request *req, const struct job_result *res)
{
	const struct outfiles *f = &res->files;
	cJSON *a;

	if (!req->files_out.match)
		return;
	a = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < f->n; i++) {
		cJSON *e = cJSON_CreateObject();
		/* a name that is not UTF-8 cannot be a JSON string as it is */
		char *path = outtext_utf8(f->v[i].path, strlen(f->v[i].path));
		char *b64 = base64_encode(f->v[i].data, f->v[i].len);
		char mode[8];

		snprintf(mode, sizeof(mode), "%04o", (unsigned)(f->v[i].mode & 07777));
		cJSON_AddStringToObject(e, "path", path);
		cJSON_AddNumberToObject(e, "size", (double)f->v[i].len);
		cJSON_AddStringToObject(e, "mode", mode);
		cJSON_AddStringToObject(e, "content_base64", b64);
		cJSON_AddItemToArray(a, e);
		free(path);
		free(b64);
	}
	cJSON_AddNumberToObject(o, "files_left_out", (double)f->left_out);
}

/*
 * The tests' network, where the request asked for one: the bytes it
 * carried each way, as its interface counted them, and which cap ended
 * it early ("bytes", "connections"; "failed": the stack itself ended),
 * or null.
 */
static void add_network(cJSON *o, const struct job_request *req, const struct job_result *res)
{
	const char *cut = network_cut_name(res->network.cut);
	cJSON *n;

	if (!req->network || !res->has_network)
		return;
	n = cJSON_AddObjectToObject(o, "network");
	cJSON_AddNumberToObject(n, "bytes_sent", (double)res->network.bytes_sent);
	cJSON_AddNumberToObject(n, "bytes_received", (double)res->network.bytes_received);
	if (cut)
		cJSON_AddStringToObject(n, "cut", cut);
	else
		cJSON_AddNullToObject(n, "cut");
}

cJSON *api_run_answer_json(const struct job_request *req, const struct job_result *res)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *tests, *groups;

	if (!o)
		return NULL;
	add_summary(o, req, res);
	cJSON_AddItemToObject(o, "build", build_json(res->build_status, res->has_build,
						     &res->build, res->build_cached));
	/* the judge's program, once the solution's build let it be built */
	if (res->judge.present)
		cJSON_AddItemToObject(o, judge_build_key(req), judge_build_json(res));
	tests = cJSON_AddArrayToObject(o, "tests");
	for (size_t i = 0; i < res->ntests; i++)
		cJSON_AddItemToArray(tests, test_json(req, &req->tests[i], &res->tests[i]));
	if (req->has_groups) {
		groups = cJSON_AddArrayToObject(o, "groups");
		for (size_t g = 0; g < res->ngroups; g++)
			cJSON_AddItemToArray(groups, group_json(req, res, g));
	}
	add_files(o, req, res);
	add_network(o, req, res);
	if (res->internal_error)
		cJSON_AddStringToObject(o, "internal_error", res->internal_msg);
	return o;
}

cJSON *api_run_answer_event(const struct job_request *req, const struct job_result *res,
		     enum job_event ev, size_t index)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	switch (ev) {
	case JOB_EV_BUILD:
		cJSON_AddStringToObject(o, "type", "build");
		cJSON_AddItemToObject(o, "build", build_json(res->build_status, res->has_build,
							     &res->build, res->build_cached));
		break;
	case JOB_EV_JUDGE_BUILD:
		cJSON_AddStringToObject(o, "type", judge_build_key(req));
		cJSON_AddItemToObject(o, judge_build_key(req), judge_build_json(res));
		break;
	case JOB_EV_TEST:
		cJSON_AddStringToObject(o, "type", "test");
		cJSON_AddNumberToObject(o, "index", (double)index);
		cJSON_AddItemToObject(o, "test", test_json(req, &req->tests[index],
							   &res->tests[index]));
		break;
	case JOB_EV_GROUP:
		cJSON_AddStringToObject(o, "type", "group");
		cJSON_AddNumberToObject(o, "index", (double)index);
		cJSON_AddItemToObject(o, "group", group_json(req, res, index));
		break;
	}
	return o;
}

cJSON *api_run_answer_summary(const struct job_request *req, const struct job_result *res)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "type", "result");
	add_summary(o, req, res);
	add_files(o, req, res);
	if (res->internal_error)
		cJSON_AddStringToObject(o, "internal_error", res->internal_msg);
	return o;
}

char *api_run_answer_error(const struct req_error *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(o, "error");
	char *s;

	cJSON_AddStringToObject(err, "code", e->code[0] ? e->code : "invalid_request");
	cJSON_AddStringToObject(err, "message", e->message);
	if (e->path[0])
		cJSON_AddStringToObject(err, "path", e->path);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
