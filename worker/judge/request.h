/*
 * Requests of both wire formats, parsed and completely validated before
 * anything touches the disk. One job model serves /run and /v1/run.
 */
#ifndef GOBOXD_REQUEST_H
#define GOBOXD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/limits.h"
#include "common/verdict.h"

struct req_file {
	char *name;
	char *data;
	size_t len;
};

struct req_test {
	char *stdin_data;
	size_t stdin_len;
	char *expected;      /* NULL: no expected output given */
	size_t expected_len;
	char *input_file;    /* file I/O: stdin_data goes into this file, NULL: stdin */
	char *output_file;   /* file I/O: this file is judged, NULL: stdout */
};

enum req_format { REQ_NATIVE, REQ_CODIZE };

/*
 * A group of tests (an IOI subtask): it earns its points only when every
 * one of its tests is accepted. docs/api.md has the whole rule.
 */
struct req_group {
	size_t *tests;          /* indexes into tests, distinct, as given */
	size_t ntests;          /* at least 1 */
	bool stop_on_failure;   /* its other tests are not needed once one fails */
	double points;          /* finite, 0 to REQ_MAX_POINTS */
};

/* Bounds of "groups": each is a subtask, and a contest problem has a few. */
#define REQ_MAX_GROUPS 256
#define REQ_MAX_POINTS 1e9

struct job_request {
	enum req_format format;
	const struct lang *lang;   /* borrowed from the table in force */
	struct req_file *files;    /* files[0] is the source / entry point */
	size_t nfiles;
	char *artifact;            /* resolved artifact name, NULL if none */
	char **build_flags;        /* a string vector (common/strv.h), checked */
	char **run_flags;          /* a string vector, checked */
	struct limits build_limits; /* merged and clamped */
	struct limits run_limits;
	struct req_test *tests;
	size_t ntests;
	struct compare_spec compare; /* how stdout meets expected_stdout */
	/* After the first test that is not accepted, the rest are skipped. */
	bool stop_on_failure;
	struct req_group *groups;  /* NULL when the request has none */
	size_t ngroups;
	bool has_groups;           /* "groups" was given (even empty) */
	/*
	 * The judge's own programs (native /run only), NULL when absent; at
	 * most one of the two. Each is a request of its own shape without
	 * tests: language, files, artifact, build and run settings.
	 *   interactor  runs beside the solution in every test, the two
	 *               talking through stdin and stdout; its exit code is
	 *               the verdict;
	 *   checker     runs after every test on its input, the program's
	 *               output and the expected answer; its exit code is the
	 *               verdict.
	 */
	struct job_request *interactor;
	struct job_request *checker;
};

/* A client error: HTTP status, stable code, message, and the field path. */
struct req_error {
	int http_status;       /* 400 or 413 */
	char code[48];         /* e.g. "invalid_filename" */
	char message[512];
	char path[128];        /* e.g. "tests[3].stdin", "" if none; Codize: "files.0.name" */
};

/* Codize's error codes (its handler's own, upper case). */
#define CODIZE_VALIDATION_ERROR "VALIDATION_ERROR"
#define CODIZE_INVALID_BODY "INVALID_REQUEST_BODY"
#define CODIZE_BODY_TOO_LARGE "REQUEST_BODY_TOO_LARGE"

/* Native POST /run. 0 and *out, or -1 with *e filled. */
int request_parse_native(const char *body, size_t len, const struct langtab *t,
			 const struct config *cfg, struct job_request **out,
			 struct req_error *e);
/*
 * Codize POST /v1/run. Same contract; a VALIDATION_ERROR lists every
 * failing field, so each is appended to errs (up to maxerrs) with its
 * Codize path ("files.1.content") and message. INVALID_REQUEST_BODY (not
 * an object, a field of the wrong type) and REQUEST_BODY_TOO_LARGE (413)
 * come as one entry with an empty path.
 */
int request_parse_codize(const char *body, size_t len, const struct langtab *t,
			 const struct config *cfg, struct job_request **out,
			 struct req_error *errs, size_t maxerrs, size_t *nerrs);
void request_free(struct job_request *r);
/*
 * The artifact of a language with artifact: from_request when the request
 * names none: the entry class the source declares (or its default, which
 * may follow the file's name), or for languages without entry patterns
 * the file's stem. malloc'd.
 */
char *request_default_artifact(const struct lang *lang, const struct req_file *src);

#endif
