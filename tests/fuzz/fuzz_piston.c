/*
 * libFuzzer target: Piston's POST /api/v2/execute parser
 * (api_piston_parse), with the daemon's caps and with tight ones (the
 * smallest each option takes: the 413 and every size check are reached
 * from small inputs), its error body, and the node-semver range test on
 * the same input split at its first NUL byte: the range before it, the
 * version after it.
 */
#include "autoconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/api.h"
#include "worker/http/semver.h"
#include "worker/judge/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct langtab *table;
static struct config cfg, tight;

static void init(void)
{
	char err[512];

	config_defaults(&cfg);
	if (langtab_load(GOBOXD_SRCDIR "/languages", &cfg.limits_max, &table, err,
			 sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	tight = cfg;
	tight.max_source_bytes = 16;
	tight.max_test_stdin_bytes = 8;
	tight.max_files = 2;
	tight.max_file_bytes = 16;
	tight.max_run_body_bytes = 1024;
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_piston: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* Piston's error body: {"message": the refusal's message}. */
static void check_error_body(const struct req_error *e)
{
	char *body = api_piston_error(e);
	cJSON *o = body ? cJSON_Parse(body) : NULL;
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");

	if (!cJSON_IsObject(o) || !cJSON_IsString(msg))
		fail("an error body that is not {\"message\": string}", body);
	if (strcmp(msg->valuestring, e->message) != 0)
		fail("an error body whose message is not the refusal's", body);
	cJSON_Delete(o);
	free(body);
}

/* One parse: a success is a whole job; a failure says why, in bounds. */
static void parse(const uint8_t *data, size_t size, const struct config *c)
{
	struct job_request *r = NULL;
	struct req_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = api_piston_parse((const char *)data, size, table, c, &r, &e);
	if (rc == 0) {
		if (!r || !r->lang || r->nfiles < 1 || r->ntests != 1)
			fail("a job without language, files or its test", NULL);
		for (size_t i = 0; i < r->nfiles; i++)
			if (!r->files[i].name)
				fail("a file without a name", NULL);
		request_free(r);
		return;
	}
	if (r)
		fail("a refusal that sets its job", NULL);
	if (!(rc == -EINVAL && e.http_status == 400) && !(rc == -E2BIG && e.http_status == 413))
		fail("a refusal that is neither 400 (-EINVAL) nor 413 (-E2BIG)", e.message);
	if (!memchr(e.message, '\0', sizeof(e.message)) || !e.message[0])
		fail("a refusal without its message", NULL);
	check_error_body(&e);
}

/* node-semver's satisfies(version, range): must not crash; what it says is not checked. */
static void version_matches(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t rlen = nul ? (size_t)(nul - data) : size;
	size_t vlen = nul ? size - rlen - 1 : 0;
	char *range = malloc(rlen + 1), *version = malloc(vlen + 1);

	if (!range || !version)
		abort();
	memcpy(range, data, rlen);
	range[rlen] = '\0';
	memcpy(version, nul ? nul + 1 : data, vlen);
	version[vlen] = '\0';
	(void)semver_range_matches(range, version);
	/* a valid version too, so that the range's own parsing is reached */
	(void)semver_range_matches(range, "3.11.2");
	free(range);
	free(version);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!table)
		init();
	parse(data, size, &cfg);
	parse(data, size, &tight);
	version_matches(data, size);
	return 0;
}
