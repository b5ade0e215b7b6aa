/*
 * libFuzzer target: Judge0's submission parser (api_judge0_parse), with
 * the daemon's caps and with tight ones, then what is done with a
 * submission it takes: the stored form parsed again (as
 * submissions_take does), and shown (api_judge0_show) with a synthetic
 * result.
 *
 * The first byte of an input is not the body but its switches:
 *
 *   bit 0      base64_encoded (texts given in base64)
 *   bits 1-2   the stored submission's state: queued, running, done
 *   bit 3      its result is api_judge0_result_failed's, not a run's
 *   bits 4-6   the run's outcome (result_outcome below)
 *   bit 7      a build that ran out of time
 *
 * The seeds start with '0' or '1' (plain or base64, queued, a run's
 * result) and the JSON after it.
 */
#include "autoconf.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/store.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_result.h"
#include "worker/http/api_judge0_show.h"
#include "worker/http/json_body.h"
#include "worker/judge/jobresult.h"
#include "worker/judge/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct langtab *table;
static struct config cfg, tight;

static void init(void)
{
	char err[512];

	config_defaults(&cfg);
	cfg.network = true; /* enable_network parsed too */
	if (langtab_load(GOBOXD_SRCDIR "/languages", &cfg.limits_max, &table, err,
			 sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	/* the smallest each option takes, where it has one */
	tight = cfg;
	tight.max_source_bytes = 16;
	tight.max_test_stdin_bytes = 8;
	tight.max_expected_bytes = 8;
	tight.max_files = 2;
	tight.max_file_bytes = 16;
	tight.max_run_body_bytes = 1024; /* additional_files' total */
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_judge0: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* A 422 body: {"field": ["message", ...], ...}, at least one of each. */
static void check_errors(const cJSON *errors)
{
	const cJSON *field, *msg;

	if (!cJSON_IsObject(errors) || !errors->child)
		fail("a refusal without errors", NULL);
	cJSON_ArrayForEach(field, errors) {
		if (!field->string || !field->string[0])
			fail("an error without a field name", NULL);
		if (!cJSON_IsArray(field) || !field->child)
			fail("a field whose errors are not a non-empty array", field->string);
		cJSON_ArrayForEach(msg, field)
			if (!cJSON_IsString(msg) || !msg->valuestring[0])
				fail("an error that is not a non-empty string", field->string);
	}
}

/* What a taken submission must be: its language, named files, a test. */
static void check_job(const struct job_request *job, const char *stored, const char *callback)
{
	if (!job || !job->lang || job->nfiles < 1 || job->ntests < 1 || !stored)
		fail("a job without language, files or tests", stored);
	for (size_t i = 0; i < job->nfiles; i++)
		if (!job->files[i].name || !job->files[i].data)
			fail("a file without a name or data", stored);
	if (!api_judge0_stored(job) || strcmp(api_judge0_stored(job), stored) != 0)
		fail("the job's stored form is not the one returned", stored);
	if (!callback != !api_judge0_callback(job) ||
	    (callback && strcmp(callback, api_judge0_callback(job)) != 0))
		fail("the job's callback_url is not the one returned", stored);
}

/* The stored form is read back (submissions_take): with base64 true, the same job. */
static void check_round_trip(const struct job_request *job, const char *stored,
			     const struct config *c)
{
	struct json_body_marker m;
	cJSON *root = json_body_parse(stored, strlen(stored), &m), *errors = NULL;
	struct job_request *again = NULL;
	char *stored2 = NULL, *callback2 = NULL, *why;

	if (!root)
		fail("the stored form is not JSON", stored);
	if (api_judge0_parse(root, &m, true, table, c, &again, &stored2, &callback2, &errors) < 0) {
		why = cJSON_PrintUnformatted(errors);
		fprintf(stderr, "fuzz_judge0: refused again: %s\n", why ? why : "?");
		free(why);
		fail("the stored form does not parse again", stored);
	}
	check_job(again, stored2, callback2);
	if (strcmp(stored, stored2) != 0) {
		fprintf(stderr, "fuzz_judge0: stored again: %s\n", stored2);
		fail("the stored form changes when parsed again", stored);
	}
	if (again->lang != job->lang || again->nfiles != job->nfiles ||
	    again->ntests != job->ntests)
		fail("the stored form parses into another job", stored);
	request_free(again);
	free(stored2);
	free(callback2);
	cJSON_Delete(root);
}

/* The run's outcome for result_outcome's three bits. */
static void result_outcome(struct run_outcome *o, unsigned sel, char *msg, size_t n)
{
	switch (sel & 7) {
	case 0:
		o->exited = true;
		break;
	case 1:
		o->exited = true;
		o->exit_code = 3;
		break;
	case 2:
		o->term_signal = SIGSEGV;
		break;
	case 3:
		o->term_signal = SIGKILL;
		o->timed_out = true;
		break;
	case 4:
		o->term_signal = SIGKILL;
		o->oom = true;
		break;
	case 5:
		o->output_limited = true;
		break;
	case 6:
		o->internal_error = true;
		snprintf(msg, n, "fuzz: the sandbox failed");
		break;
	default:
		o->exited = true;
		o->disk_full = true;
		break;
	}
}

/*
 * A result as if the job ran: each test echoes its stdin on stdout and
 * the source on stderr, the build prints the source. The job's own
 * bytes, so that what the input holds reaches the result's texts.
 */
static char *synthetic_result(const struct job_request *job, uint8_t sw)
{
	struct job_result res;
	unsigned sel = (sw >> 4) & 7;
	char *out;

	memset(&res, 0, sizeof(res));
	res.has_build = job->lang->has_build;
	res.build_status = res.has_build && sel == 7 ? BS_FAILED : BS_OK;
	res.build.outcome.exited = true;
	res.build.outcome.timed_out = (sw & 0x80) != 0;
	buf_init(&res.build.interleaved, 0);
	buf_append(&res.build.interleaved, job->files[0].data, job->files[0].len);
	res.ntests = job->ntests;
	res.tests = calloc(res.ntests, sizeof(*res.tests));
	if (!res.tests)
		abort();
	for (size_t i = 0; i < res.ntests; i++) {
		struct step_result *r = &res.tests[i].r;

		res.tests[i].ran = true;
		buf_init(&r->out, 0);
		buf_init(&r->err, 0);
		buf_init(&r->interleaved, 0);
		buf_append(&r->out, job->tests[i].stdin_data, job->tests[i].stdin_len);
		buf_append(&r->err, job->files[0].data, job->files[0].len);
		buf_append(&r->interleaved, r->out.data, r->out.len);
		buf_append(&r->interleaved, r->err.data, r->err.len);
		result_outcome(&r->outcome, sel, r->internal_msg, sizeof(r->internal_msg));
		r->cpu_ms = 12 * (i + 1);
		r->wall_ms = 20 * (i + 1);
		r->memory_peak_kb = 3000 + i;
	}
	out = api_judge0_result(job, &res, 0);
	for (size_t i = 0; i < res.ntests; i++) {
		buf_free(&res.tests[i].r.out);
		buf_free(&res.tests[i].r.err);
		buf_free(&res.tests[i].r.interleaved);
	}
	free(res.tests);
	buf_free(&res.build.interleaved);
	return out;
}

/* GET /submissions/TOKEN of what was stored, every field, both encodings. */
static void show(const struct job_request *job, char *stored, uint8_t sw)
{
	static const char token[] = "00000000-0000-4000-8000-000000000000";
	struct judge0_view b64 = { .base64 = true, .fields = ~0ull };
	struct judge0_view plain = { .base64 = false, .fields = ~0ull };
	struct store_sub sub;
	cJSON *shown;
	char *text;

	memset(&sub, 0, sizeof(sub));
	snprintf(sub.token, sizeof(sub.token), "%s", token);
	snprintf(sub.api, sizeof(sub.api), "judge0");
	sub.state = (sw >> 1) & 3 ? STORE_DONE : STORE_QUEUED;
	if (((sw >> 1) & 3) == 1)
		sub.state = STORE_RUNNING;
	sub.request = stored;
	sub.created_ms = 1700000000123ull;
	if (sub.state != STORE_QUEUED)
		sub.started_ms = sub.created_ms + 5;
	if (sub.state == STORE_DONE) {
		sub.finished_ms = sub.started_ms + 1000;
		sub.result = sw & 0x08 ? api_judge0_result_failed("fuzz: could not run") :
					 synthetic_result(job, sw);
		if (!sub.result)
			fail("no result", stored);
	}
	shown = api_judge0_show(&sub, &b64, table);
	if (!cJSON_IsObject(shown))
		fail("a submission not shown with base64_encoded=true", stored);
	text = cJSON_PrintUnformatted(shown);
	if (!text || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(shown, "token")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(shown, "token")->valuestring, token) != 0)
		fail("a shown submission without its token", stored);
	free(text);
	cJSON_Delete(shown);
	/* NULL here is Judge0's 400: a text that is not UTF-8 */
	shown = api_judge0_show(&sub, &plain, table);
	if (shown) {
		text = cJSON_PrintUnformatted(shown);
		free(text);
		cJSON_Delete(shown);
	}
	free(sub.result);
}

static void parse(const cJSON *root, const struct json_body_marker *m, bool base64,
		  const struct config *c, uint8_t sw)
{
	struct job_request *job = NULL;
	char *stored = NULL, *callback = NULL;
	cJSON *errors = NULL;

	if (api_judge0_parse(root, m, base64, table, c, &job, &stored, &callback, &errors) == 0) {
		if (errors)
			fail("a success with errors", stored);
		check_job(job, stored, callback);
		check_round_trip(job, stored, c);
		show(job, stored, sw);
		request_free(job);
		free(stored);
		free(callback);
		return;
	}
	if (job || stored || callback)
		fail("a refusal that sets its out-parameters", NULL);
	check_errors(errors);
	cJSON_Delete(errors);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_body_marker m;
	cJSON *root;
	uint8_t sw;

	if (!table)
		init();
	if (size < 1)
		return 0;
	sw = data[0];
	root = json_body_parse((const char *)data + 1, size - 1, &m);
	if (!root)
		return 0;
	parse(root, &m, sw & 1, &cfg, sw);
	parse(root, &m, sw & 1, &tight, sw);
	cJSON_Delete(root);
	return 0;
}
