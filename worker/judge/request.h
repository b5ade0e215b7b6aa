/*
 * What a job asks for: the language, the files, the flags and limits, the
 * tests, the judge's own programs. One model serves both wire formats,
 * whose parsers (worker/http/api_run.c, api_codize.c) fill it completely
 * validated, before anything touches the disk.
 */
#ifndef GOBOXD_REQUEST_H
#define GOBOXD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/lang/langtab.h"
#include "common/limits.h"
#include "common/outtext.h"
#include "common/verdict.h"
#include "worker/judge/outfiles.h"

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

/*
 * How the steps capture a job's output, and how much of it its answer
 * may carry: the API that parsed the job sets it as its answer needs, so
 * that the job, its steps and the build cache never ask which API a job
 * came by.
 */
struct req_capture {
	size_t stream_cap;       /* each stream and the interleaved one at most (bytes); 0: the
				    step's own limits alone */
	bool pin_cpu;            /* every step on one CPU, nproc 1 (as Codize's jail) */
	enum outtext_format budget_format; /* how the answer carries the output */
	uint64_t budget_bytes;   /* the job's output, as budget_format counts it */
};

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
	const struct lang *lang;   /* borrowed from the table in force */
	struct req_file *files;    /* files[0] is the source / entry point */
	size_t nfiles;
	char *artifact;            /* resolved artifact name, NULL if none */
	char **build_flags;        /* a string vector (common/strv.h), checked */
	char **run_flags;          /* a string vector, checked */
	/* The program's own arguments, after everything the language's run
	 * command gives (Judge0's command_line_arguments, Piston's args):
	 * a string vector, NULL when none. */
	char **run_args;
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
	/* What the build and run steps run in place of the language's own
	 * command lines, where the API's differ (Piston's scripts): a cmd
	 * or args left NULL is the step's own; NULL, the language's. */
	const struct lang_piston_cmd *build_cmdline;
	const struct lang_piston_cmd *run_cmdline;
	/* Capture stdout and stderr as one stream too, as they interleaved
	 * (Piston's "output", Judge0's redirect_stderr_to_stdout, Codize's
	 * "output"). */
	bool interleave;
	struct req_capture capture;
	/* The job directory's files to read back after the last test, within
	 * these bounds (Judge0's post_execution_filesystem: every file; /run's
	 * return_files: those its patterns name, match then never NULL);
	 * max_files 0: none. */
	struct outfiles_bounds files_out;
	/* The tests may use a network (POST /run's "network", Judge0's
	 * enable_network): the parsers set it only where the operator
	 * allows it (--network). */
	bool network;
	/* What the API that parsed the job keeps for its answer, freed with
	 * the request by api_free (NULL: nothing). */
	void *api;
	void (*api_free)(void *api);
};

/* A client error, as both parsers report it: HTTP status, stable code,
 * message, and the field path. */
struct req_error {
	int http_status;       /* 400 or 413 */
	char code[48];         /* e.g. "invalid_filename" */
	char message[512];
	char path[128];        /* e.g. "tests[3].stdin", "" if none; Codize: "files.0.name" */
};

void request_free(struct job_request *r);
/*
 * The artifact of a language with artifact: from_request when the request
 * names none: the entry class the source declares (or its default, which
 * may follow the file's name), or for languages without entry patterns
 * the file's stem. malloc'd.
 */
char *request_default_artifact(const struct lang *lang, const struct req_file *src);
/*
 * The source file's name for a language with source_filename:
 * from_request when the request names none: its source_default, else the
 * entry class inferred from the source (or the entry's default) with the
 * entry's suffix. NULL when the language can infer nothing (then the
 * request must name it). malloc'd.
 */
char *request_default_source(const struct lang *lang, const char *source);

#endif
