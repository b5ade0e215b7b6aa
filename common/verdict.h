/* Status vocabulary, output comparison and the outcome-to-status mapping. */
#ifndef GOBOXD_VERDICT_H
#define GOBOXD_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

enum test_status {
	TS_ACCEPTED,
	TS_WRONG_OUTPUT,
	TS_WHITESPACE_MISMATCH,
	TS_TIME_EXCEEDED,
	TS_MEMORY_EXCEEDED,
	TS_RUNTIME_ERROR,
	TS_NOT_EXECUTED,
	TS_INTERNAL_ERROR,
	TS_BUILD_FAILED,   /* top-level only */
	/* A judge program (interactor, checker) gave part of the test's
	 * points (testlib's exit code 7). */
	TS_PARTIAL,
	/* It wrote past a disk limit (the job disk's bytes or files, its
	 * /tmp's, or the largest file it may write) and did not end cleanly. */
	TS_DISK_EXCEEDED,
	/* Not run: an earlier failure made it unneeded (stop_on_failure,
	 * worker/judge/groups.h). Never a job's top-level status. */
	TS_SKIPPED,
};

enum build_status { BS_OK, BS_FAILED, BS_INTERNAL_ERROR };

enum compare_result { CMP_EQUAL, CMP_WHITESPACE, CMP_DIFFERENT };

/*
 * Exact byte equality gives CMP_EQUAL. Otherwise, if both sides are equal
 * once every run of whitespace (space, \t, \r, \n, \v, \f) is treated as one
 * separator and leading/trailing whitespace is dropped, CMP_WHITESPACE.
 * Else CMP_DIFFERENT.
 */
enum compare_result verdict_compare(const char *got, size_t got_len, const char *want,
				    size_t want_len);

/*
 * The comparison a request chooses (its "compare" field):
 *   exact   verdict_compare() above: equal, whitespace only, or different
 *           (the default);
 *   tokens  equal token sequences are CMP_EQUAL, whitespace never matters;
 *   float   token by token: equal bytes, or both tokens decimal numbers
 *           (digits, one point, an exponent; no hex, inf or nan) within
 *           abs_tol of each other or within rel_tol times the expected
 *           value; the token counts must match.
 */
enum compare_mode { COMPARE_EXACT, COMPARE_TOKENS, COMPARE_FLOAT };

struct compare_spec {
	enum compare_mode mode;
	double abs_tol, rel_tol;     /* float only; finite, >= 0 */
};

#define COMPARE_FLOAT_DEFAULT_TOL 1e-6

enum compare_result verdict_compare_by(const struct compare_spec *spec, const char *got,
				       size_t got_len, const char *want, size_t want_len);

/* What happened to one sandboxed run, as measured. */
struct run_outcome {
	bool internal_error;  /* the sandbox failed, not the program */
	bool timed_out;       /* wall or CPU limit hit */
	bool oom;             /* cgroup OOM kill or memory limit hit */
	bool output_limited;  /* killed for exceeding the output cap */
	bool disk_full;       /* its job disk or its /tmp was full when it ended */
	/* The program the job gave (a file of the job directory) is not one
	 * the kernel runs: execve's ENOEXEC. Its fault, never the sandbox's. */
	bool exec_format_error;
	bool exited;          /* normal exit (exit_code valid) */
	int exit_code;
	int term_signal;      /* 0 unless killed by a signal */
};

/* The pure mapping: outcome plus comparison to a test status. */
enum test_status verdict_for_test(const struct run_outcome *o, bool have_expected,
				  enum compare_result cmp);

/* The answer a test is judged on: its stdout, or its output file. */
struct verdict_answer {
	bool expected;          /* there is an expected output, and cmp compares with it */
	enum compare_result cmp;
	bool file_missing;      /* file I/O: no output file was left */
	bool file_truncated;    /* file I/O: the output file was cut at its cap */
};

/*
 * A test judged without a judge program: verdict_for_test on the answer.
 * A missing output file is no answer (wrong_output after a clean run,
 * expected output or not); one cut at its cap cannot be the right answer.
 */
enum test_status verdict_for_answer(const struct run_outcome *o, const struct verdict_answer *a);
/*
 * A test a checker judges, before it runs: the solution's own failure
 * (verdict_for_test with nothing to compare), else wrong_output when it
 * left no whole output file to check. TS_ACCEPTED: the checker decides.
 */
enum test_status verdict_before_checker(const struct run_outcome *o,
					const struct verdict_answer *a);
/* A build's status: ok when it exited 0 within its limits (warnings on
 * stderr do not fail it), internal_error when the sandbox failed. */
enum build_status verdict_for_build(const struct run_outcome *o);

/* What the verdict of a whole job depends on. */
struct verdict_job {
	enum build_status build;
	/* The judge program's build; BS_OK when the job has no judge program. */
	enum build_status judge_build;
	/* Stopped for its client: what was killed has no verdict. */
	bool cancelled;
	const enum test_status *tests;
	size_t ntests;
};

/*
 * The job's top-level status: not_executed when it was cancelled; the
 * build's failure; internal_error when its judge program could not be
 * built or started (it judged nothing); else the first test status in
 * order that is neither accepted nor skipped, accepted if there is none.
 */
enum test_status verdict_top_level(const struct verdict_job *job);

/*
 * A judge program's verdict from its exit code, by the testlib
 * convention: 0 accepted, 1 wrong_output, 2 output_whitespace_mismatch
 * (testlib's presentation error), 7 partial. With 7 the message (its
 * stderr) starts with the points, a fraction of the test from 0 to 1,
 * either bare ("0.5 three of six") or as testlib writes them ("points
 * 0.5 ..."); they go to *points. 3 (testlib's judge failure), any other
 * code, or 7 without valid points is the judge's own failure:
 * TS_INTERNAL_ERROR, with the reason in why.
 */
enum test_status verdict_from_judge_exit(int exit_code, const char *msg, size_t len,
					 double *points, char *why, size_t whylen);
/*
 * A judge program's verdict on a test, from its run: its own failure (one
 * of its limits, a signal, an end that is unknown) is TS_INTERNAL_ERROR and
 * never the solution's; else verdict_from_judge_exit on its exit code and
 * msg (its stderr). who names the judge ("checker", "interactor") in why,
 * the reason of an internal_error ("" otherwise).
 */
enum test_status verdict_from_judge(const struct run_outcome *o, const char *who,
				    const char *msg, size_t len, double *points, char *why,
				    size_t whylen);

/* An interactive test as it ended. */
struct verdict_dialogue {
	const struct run_outcome *solution;
	const struct run_outcome *interactor;
	const char *message;    /* the interactor's stderr */
	size_t message_len;
	/* The pair's wall limit came while both ran. */
	bool wall_limit;
	/* goboxd ended the solution for the interactor: it had given its
	 * verdict and gone, or asked for the end through the protocol. */
	bool solution_ended_for_interactor;
};

/*
 * An interactive test's verdict, in this order:
 *   1. the wall limit came while both ran: time_exceeded;
 *   2. the solution's own limits (memory, time, output) or a signal
 *      other than SIGPIPE: that verdict;
 *   3. the interactor's own failure (a limit, a signal): internal_error;
 *   4. the interactor's exit code (testlib's convention), but a solution
 *      that exited non-zero or by SIGPIPE after an accepting interactor
 *      (0 or 7) is runtime_error.
 * A solution goboxd ended for the interactor is never blamed for that.
 * points and why as for verdict_from_judge.
 */
enum test_status verdict_interactive(const struct verdict_dialogue *d, double *points,
				     char *why, size_t whylen);

const char *verdict_test_status_name(enum test_status s);
const char *verdict_build_status_name(enum build_status s);

/* "SIGSEGV" for 11 (SIG<number> when the name is unknown), written to buf. */
const char *verdict_signal_name(int sig, char *buf, size_t n);

#endif
