/* The table of wire formats (wire.h), and each API's parser adapted to
 * its one signature. */
#include "autoconf.h"

#include "worker/http/wire.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "worker/http/api_judge0.h"
#include "worker/http/routes.h"

static const char *body_of(const struct http_request *r)
{
	return r->body.data ? r->body.data : "";
}

/* A parser's req_error as the format's refusal. */
static void refuse(struct api_refusal *no, const struct api_format *f, const struct req_error *e)
{
	no->status = e->http_status ? e->http_status : 400;
	no->body = f->error(e);
	snprintf(no->code, sizeof(no->code), "%s", e->code);
}

/* A parser that reports one error (goboxd's own, Piston's). */
typedef int (*one_error_parser)(const char *body, size_t len, const struct langtab *t,
				const struct config *cfg, struct job_request **out,
				struct req_error *e);

static int parse_with(one_error_parser parse, const struct api_format *f,
		      const struct http_request *r, const struct langtab *t,
		      const struct config *cfg, struct job_request **job, struct api_refusal *no)
{
	struct req_error e = { 0 };
	int rc = parse(body_of(r), r->body.len, t, cfg, job, &e);

	if (rc < 0)
		refuse(no, f, &e);
	return rc;
}

static int native_parse(const struct http_request *r, const struct langtab *t,
			const struct config *cfg, struct job_request **job, struct api_refusal *no)
{
	return parse_with(api_run_parse, &wire_formats[0], r, t, cfg, job, no);
}

static int codize_parse(const struct http_request *r, const struct langtab *t,
			const struct config *cfg, struct job_request **job, struct api_refusal *no)
{
	struct req_error errs[16];
	size_t n = 0;
	int rc;

	memset(errs, 0, sizeof(errs));
	rc = api_codize_parse(body_of(r), r->body.len, t, cfg, job, errs, 16, &n);
	if (rc < 0) {
		/* every failing field at once, as Codize lists them */
		no->status = errs[0].http_status ? errs[0].http_status : 400;
		no->body = api_codize_error(errs, n ? n : 1);
		snprintf(no->code, sizeof(no->code), "%s", errs[0].code);
	}
	return rc;
}

/* Codize's codes are upper case ("unauthorized": UNAUTHORIZED). */
static char *codize_error(const struct req_error *e)
{
	struct req_error upper = *e;

	for (char *p = upper.code; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return api_codize_error(&upper, 1);
}

static int piston_parse(const struct http_request *r, const struct langtab *t,
			const struct config *cfg, struct job_request **job, struct api_refusal *no)
{
	return parse_with(api_piston_parse, &wire_formats[3], r, t, cfg, job, no);
}

static char *judge0_error(const struct req_error *e)
{
	return api_judge0_error(e->message);
}

const struct api_format wire_formats[WIRE_FORMATS] = {
	{ .name = "native", .stats_id = 0, .streams = true, .parse = native_parse,
	  .answer = api_run_answer_json, .error = api_run_answer_error },
	{ .name = "codize", .stats_id = 1, .parse = codize_parse, .answer = api_codize_json,
	  .error = codize_error },
	{ .name = "judge0", .stats_id = 2, .stored = true, .parse = api_judge0_parse_waited,
	  .error = judge0_error },
	{ .name = "piston", .stats_id = 3, .parse = piston_parse, .answer = api_piston_json,
	  .error = api_piston_error },
};

const struct api_format *wire_named(const char *name)
{
	for (size_t i = 0; i < WIRE_FORMATS; i++)
		if (!strcmp(wire_formats[i].name, name))
			return &wire_formats[i];
	return NULL;
}

const struct api_format *wire_of_path(const char *path)
{
	switch (routes_api(path)) {
	case API_CODIZE:
		return &wire_formats[1];
	case API_JUDGE0:
		return &wire_formats[2];
	case API_PISTON:
		return &wire_formats[3];
	case API_NATIVE:
		break;
	}
	return &wire_formats[0];
}
