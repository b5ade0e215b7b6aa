#include "autoconf.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "common/verdict.h"

static enum compare_result cmp(const char *got, const char *want)
{
	return verdict_compare(got, strlen(got), want, strlen(want));
}

Test(compare, exact_bytes)
{
	cr_expect_eq(cmp("hi", "hi"), CMP_EQUAL);
	cr_expect_eq(cmp("", ""), CMP_EQUAL);
	cr_expect_eq(cmp("1 2\n", "1 2\n"), CMP_EQUAL);
}

Test(compare, whitespace_only_differences)
{
	cr_expect_eq(cmp("hi\n", "hi"), CMP_WHITESPACE);
	cr_expect_eq(cmp("  hi", "hi\n\n"), CMP_WHITESPACE);
	cr_expect_eq(cmp("1 2\r\n3\r\n", "1 2\n3\n"), CMP_WHITESPACE);
	cr_expect_eq(cmp("1\t\t2", "1 2"), CMP_WHITESPACE);
	cr_expect_eq(cmp("1\v2\f", "1\n2"), CMP_WHITESPACE);
	cr_expect_eq(cmp("a\n\n\nb", "a\nb"), CMP_WHITESPACE);
	cr_expect_eq(cmp("\n", ""), CMP_WHITESPACE);
	cr_expect_eq(cmp("", " \t\r\n"), CMP_WHITESPACE);
}

Test(compare, real_differences)
{
	cr_expect_eq(cmp("HI", "hi"), CMP_DIFFERENT);
	cr_expect_eq(cmp("12", "1 2"), CMP_DIFFERENT);
	cr_expect_eq(cmp("1 2", "12"), CMP_DIFFERENT);
	cr_expect_eq(cmp("1 2 3", "1 2"), CMP_DIFFERENT);
	cr_expect_eq(cmp("1 2", "1 2 3"), CMP_DIFFERENT);
	cr_expect_eq(cmp("", "x"), CMP_DIFFERENT);
	cr_expect_eq(cmp("x", ""), CMP_DIFFERENT);
	cr_expect_eq(cmp("ab", "abc"), CMP_DIFFERENT);
}

Test(compare, nul_bytes_are_not_whitespace)
{
	cr_expect_eq(verdict_compare("a\0b", 3, "a b", 3), CMP_DIFFERENT);
	cr_expect_eq(verdict_compare("a\0b", 3, "a\0b", 3), CMP_EQUAL);
	cr_expect_eq(verdict_compare("a\0b\n", 4, "a\0b", 3), CMP_WHITESPACE);
}

static const struct run_outcome clean = { .exited = true };

Test(verdict, clean_run_compared)
{
	cr_expect_eq(verdict_for_test(&clean, true, CMP_EQUAL), TS_ACCEPTED);
	cr_expect_eq(verdict_for_test(&clean, true, CMP_WHITESPACE), TS_WHITESPACE_MISMATCH);
	cr_expect_eq(verdict_for_test(&clean, true, CMP_DIFFERENT), TS_WRONG_OUTPUT);
}

Test(verdict, no_expected_output_accepts_a_clean_run)
{
	cr_expect_eq(verdict_for_test(&clean, false, CMP_DIFFERENT), TS_ACCEPTED);
	struct run_outcome o = { .exited = true, .exit_code = 1 };
	cr_expect_eq(verdict_for_test(&o, false, CMP_EQUAL), TS_RUNTIME_ERROR);
}

Test(verdict, runtime_errors)
{
	struct run_outcome e = { .exited = true, .exit_code = 3 };
	struct run_outcome s = { .term_signal = SIGSEGV };

	struct run_outcome x = { .exec_format_error = true };

	cr_expect_eq(verdict_for_test(&e, true, CMP_EQUAL), TS_RUNTIME_ERROR);
	cr_expect_eq(verdict_for_test(&s, true, CMP_EQUAL), TS_RUNTIME_ERROR);
	cr_expect_eq(verdict_for_test(&x, false, CMP_EQUAL), TS_RUNTIME_ERROR,
		     "a program of the job's own the kernel cannot run: no exit, no signal");
}

Test(verdict, precedence)
{
	struct run_outcome o = {
		.internal_error = true, .oom = true, .timed_out = true,
		.output_limited = true, .term_signal = SIGKILL,
	};

	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_INTERNAL_ERROR);
	o.internal_error = false;
	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_MEMORY_EXCEEDED);
	o.oom = false;
	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_TIME_EXCEEDED);
	o.timed_out = false;
	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_WRONG_OUTPUT);
	o.output_limited = false;
	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_RUNTIME_ERROR);
}

Test(verdict, output_cut_is_never_accepted)
{
	struct run_outcome o = { .exited = true, .output_limited = true };

	cr_expect_eq(verdict_for_test(&o, true, CMP_EQUAL), TS_WRONG_OUTPUT);
	cr_expect_eq(verdict_for_test(&o, false, CMP_EQUAL), TS_WRONG_OUTPUT);
}

Test(verdict, disk_limits)
{
	struct run_outcome xfsz = { .term_signal = SIGXFSZ };
	struct run_outcome failed_full = { .exited = true, .exit_code = 1, .disk_full = true };
	struct run_outcome crashed_full = { .term_signal = SIGSEGV, .disk_full = true };
	struct run_outcome clean_full = { .exited = true, .disk_full = true };
	struct run_outcome timed_full = { .timed_out = true, .term_signal = SIGKILL,
					  .disk_full = true };
	struct run_outcome oom_full = { .oom = true, .term_signal = SIGKILL, .disk_full = true };

	cr_expect_eq(verdict_for_test(&xfsz, true, CMP_EQUAL), TS_DISK_EXCEEDED);
	cr_expect_eq(verdict_for_test(&failed_full, true, CMP_EQUAL), TS_DISK_EXCEEDED);
	cr_expect_eq(verdict_for_test(&crashed_full, false, CMP_EQUAL), TS_DISK_EXCEEDED);
	/* a full disk names a failure, it does not make one */
	cr_expect_eq(verdict_for_test(&clean_full, true, CMP_EQUAL), TS_ACCEPTED);
	cr_expect_eq(verdict_for_test(&clean_full, true, CMP_DIFFERENT), TS_WRONG_OUTPUT);
	/* the time and memory limits stopped it, whatever the disk */
	cr_expect_eq(verdict_for_test(&timed_full, true, CMP_EQUAL), TS_TIME_EXCEEDED);
	cr_expect_eq(verdict_for_test(&oom_full, true, CMP_EQUAL), TS_MEMORY_EXCEEDED);
}

Test(verdict, neither_exit_nor_signal_is_internal)
{
	struct run_outcome o = { 0 };

	cr_expect_eq(verdict_for_test(&o, false, CMP_EQUAL), TS_INTERNAL_ERROR);
}

static enum test_status top(enum build_status build, enum build_status judge_build,
			    bool cancelled, const enum test_status *tests, size_t n)
{
	struct verdict_job job = { build, judge_build, cancelled, tests, n };

	return verdict_top_level(&job);
}

Test(verdict, top_level)
{
	enum test_status all_ok[] = { TS_ACCEPTED, TS_ACCEPTED };
	enum test_status mixed[] = { TS_ACCEPTED, TS_WHITESPACE_MISMATCH, TS_TIME_EXCEEDED };

	cr_expect_eq(top(BS_OK, BS_OK, false, all_ok, 2), TS_ACCEPTED);
	cr_expect_eq(top(BS_OK, BS_OK, false, mixed, 3), TS_WHITESPACE_MISMATCH);
	cr_expect_eq(top(BS_FAILED, BS_OK, false, all_ok, 2), TS_BUILD_FAILED);
	cr_expect_eq(top(BS_INTERNAL_ERROR, BS_OK, false, all_ok, 2), TS_INTERNAL_ERROR);
	cr_expect_eq(top(BS_OK, BS_OK, false, mixed + 2, 1), TS_TIME_EXCEEDED);
}

/* A skipped test was not judged: it neither fails nor passes the job. */
Test(verdict, top_level_passes_over_skipped)
{
	enum test_status later[] = { TS_SKIPPED, TS_RUNTIME_ERROR, TS_SKIPPED };
	enum test_status only[] = { TS_ACCEPTED, TS_SKIPPED };

	cr_expect_eq(top(BS_OK, BS_OK, false, later, 3), TS_RUNTIME_ERROR);
	cr_expect_eq(top(BS_OK, BS_OK, false, only, 2), TS_ACCEPTED);
}

/* A judge program that could not be built judged nothing; a cancelled job
 * has no verdict, whatever its build and tests did before the cancel. */
Test(verdict, top_level_judge_build_and_cancel)
{
	enum test_status all_ok[] = { TS_ACCEPTED };
	enum test_status failed[] = { TS_WRONG_OUTPUT };

	cr_expect_eq(top(BS_OK, BS_FAILED, false, all_ok, 1), TS_INTERNAL_ERROR);
	cr_expect_eq(top(BS_OK, BS_INTERNAL_ERROR, false, all_ok, 1), TS_INTERNAL_ERROR);
	cr_expect_eq(top(BS_FAILED, BS_OK, false, all_ok, 1), TS_BUILD_FAILED);
	cr_expect_eq(top(BS_FAILED, BS_OK, true, all_ok, 1), TS_NOT_EXECUTED);
	cr_expect_eq(top(BS_OK, BS_FAILED, true, failed, 1), TS_NOT_EXECUTED);
	cr_expect_eq(top(BS_OK, BS_OK, true, failed, 1), TS_NOT_EXECUTED);
}

Test(verdict, names_match_the_spec)
{
	cr_expect_str_eq(verdict_test_status_name(TS_ACCEPTED), "accepted");
	cr_expect_str_eq(verdict_test_status_name(TS_WRONG_OUTPUT), "wrong_output");
	cr_expect_str_eq(verdict_test_status_name(TS_WHITESPACE_MISMATCH),
			 "output_whitespace_mismatch");
	cr_expect_str_eq(verdict_test_status_name(TS_TIME_EXCEEDED), "time_exceeded");
	cr_expect_str_eq(verdict_test_status_name(TS_MEMORY_EXCEEDED), "memory_exceeded");
	cr_expect_str_eq(verdict_test_status_name(TS_RUNTIME_ERROR), "runtime_error");
	cr_expect_str_eq(verdict_test_status_name(TS_NOT_EXECUTED), "not_executed");
	cr_expect_str_eq(verdict_test_status_name(TS_INTERNAL_ERROR), "internal_error");
	cr_expect_str_eq(verdict_test_status_name(TS_BUILD_FAILED), "build_failed");
	cr_expect_str_eq(verdict_test_status_name(TS_DISK_EXCEEDED), "disk_exceeded");
	cr_expect_str_eq(verdict_test_status_name(TS_SKIPPED), "skipped");
	cr_expect_str_eq(verdict_build_status_name(BS_OK), "ok");
	cr_expect_str_eq(verdict_build_status_name(BS_FAILED), "failed");
	cr_expect_str_eq(verdict_build_status_name(BS_INTERNAL_ERROR), "internal_error");
}

static enum compare_result cmp_by(enum compare_mode m, double abs_tol, double rel_tol,
				  const char *got, const char *want)
{
	struct compare_spec s = { .mode = m, .abs_tol = abs_tol, .rel_tol = rel_tol };

	return verdict_compare_by(&s, got, strlen(got), want, strlen(want));
}

Test(compare, exact_mode_is_the_default_rule)
{
	cr_expect_eq(cmp_by(COMPARE_EXACT, 0, 0, "hi\n", "hi\n"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_EXACT, 0, 0, "hi", "hi\n"), CMP_WHITESPACE);
	cr_expect_eq(cmp_by(COMPARE_EXACT, 0, 0, "1.0", "1"), CMP_DIFFERENT);
}

Test(compare, tokens_ignore_whitespace_only)
{
	cr_expect_eq(cmp_by(COMPARE_TOKENS, 0, 0, "1  2\r\n", "1 2"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_TOKENS, 0, 0, "\n\n", ""), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_TOKENS, 0, 0, "12", "1 2"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_TOKENS, 0, 0, "1 2 3", "1 2"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_TOKENS, 0, 0, "1.0", "1"), CMP_DIFFERENT);
}

Test(compare, float_tolerances)
{
	/* absolute */
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "0.3333333", "0.333333333"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "0.3334", "0.333333333"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 0.5, 0, "1", "1.5"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 0.25, 0, "1", "1.5"), CMP_DIFFERENT);
	/* relative to the expected value */
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 0, 1e-6, "1000000.5", "1000000"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 0, 1e-6, "1000002", "1000000"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 0, 1e-3, "1.23e5", "123000.1"), CMP_EQUAL);
	/* whitespace never matters, token counts do */
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 1e-6, "1.0000001\n2\n", "1 2.0000000"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 1e-6, "1 2", "1 2 3"), CMP_DIFFERENT);
	/* words compare as bytes; only decimal spellings are numbers */
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 1e-6, "YES 0.5", "YES 0.5000001"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 1e-6, "yes", "YES"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1, 1, "nan", "0"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1, 1, "inf", "1e308"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1, 1, "0x10", "16"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1, 1, "1e999", "1e308"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "-0", "0.0000001"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, ".5", "0.5"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "5.", "5"), CMP_EQUAL);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "1e", "1"), CMP_DIFFERENT);
	cr_expect_eq(cmp_by(COMPARE_FLOAT, 1e-6, 0, "-", "0"), CMP_DIFFERENT);
}

static enum test_status jv(int code, const char *msg, double *points, char *why)
{
	return verdict_from_judge_exit(code, msg, strlen(msg), points, why, 160);
}

Test(judge, testlib_exit_codes)
{
	double points = -1;
	char why[160];

	cr_expect_eq(jv(0, "ok", &points, why), TS_ACCEPTED);
	cr_expect_str_eq(why, "");
	cr_expect_eq(jv(1, "wrong answer", &points, why), TS_WRONG_OUTPUT);
	cr_expect_eq(jv(2, "wrong output format", &points, why), TS_WHITESPACE_MISMATCH);
	cr_expect_eq(jv(3, "FAIL bad test", &points, why), TS_INTERNAL_ERROR);
	cr_expect_str_eq(why, "judge failure (exit code 3)");
	cr_expect_eq(jv(4, "", &points, why), TS_INTERNAL_ERROR);
	cr_expect_str_eq(why, "exit code 4, which is no verdict (0, 1, 2, 3 or 7)");
	cr_expect_eq(points, -1, "points are set by a partial verdict only");
	cr_expect_str_eq(verdict_test_status_name(TS_PARTIAL), "partial");
}

Test(judge, partial_points)
{
	double points = -1;
	char why[160];

	cr_expect_eq(jv(7, "0.5 three of six", &points, why), TS_PARTIAL);
	cr_expect_float_eq(points, 0.5, 1e-12);
	cr_expect_eq(jv(7, "points 0.25 found it late\n", &points, why), TS_PARTIAL);
	cr_expect_float_eq(points, 0.25, 1e-12);
	cr_expect_eq(jv(7, "\n 1\n", &points, why), TS_PARTIAL);
	cr_expect_float_eq(points, 1.0, 1e-12);
	cr_expect_eq(jv(7, "0", &points, why), TS_PARTIAL);
	cr_expect_float_eq(points, 0.0, 1e-12);
	/* no points, or none from 0 to 1: the judge's failure */
	cr_expect_eq(jv(7, "half", &points, why), TS_INTERNAL_ERROR);
	cr_expect(strstr(why, "without points") != NULL, "%s", why);
	cr_expect_eq(jv(7, "", &points, why), TS_INTERNAL_ERROR);
	cr_expect_eq(jv(7, "1.5 too many", &points, why), TS_INTERNAL_ERROR);
	cr_expect_eq(jv(7, "-0.5", &points, why), TS_INTERNAL_ERROR);
	cr_expect_eq(jv(7, "0.5x", &points, why), TS_INTERNAL_ERROR);
	cr_expect_eq(jv(7, "nan", &points, why), TS_INTERNAL_ERROR);
	cr_expect_eq(verdict_from_judge_exit(7, NULL, 0, &points, why, sizeof(why)),
		     TS_INTERNAL_ERROR);
}

/* ---- the rules that job.c once held, as tables --------------------------- */

#define EXITED(code) { .exited = true, .exit_code = (code) }
#define SIGNALED(sig) { .term_signal = (sig) }

struct build_case {
	const char *name;
	struct run_outcome o;
	enum build_status want;
};

Test(verdict, build_status)
{
	static const struct build_case cases[] = {
		{ "exit 0", EXITED(0), BS_OK },
		{ "exit 0 with a full disk", { .exited = true, .disk_full = true }, BS_OK },
		{ "exit 1", EXITED(1), BS_FAILED },
		{ "killed", SIGNALED(SIGSEGV), BS_FAILED },
		{ "exit 0 but timed out", { .exited = true, .timed_out = true }, BS_FAILED },
		{ "exit 0 but oom", { .exited = true, .oom = true }, BS_FAILED },
		{ "exit 0 but output cut", { .exited = true, .output_limited = true }, BS_FAILED },
		{ "no end known", { 0 }, BS_FAILED },
		{ "sandbox failed", { .internal_error = true, .exited = true }, BS_INTERNAL_ERROR },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(verdict_for_build(&cases[i].o), cases[i].want, "%s", cases[i].name);
}

struct answer_case {
	const char *name;
	struct run_outcome o;
	struct verdict_answer a;
	enum test_status want;          /* verdict_for_answer */
	enum test_status before_checker; /* verdict_before_checker */
};

Test(verdict, answers)
{
	static const struct answer_case cases[] = {
		{ "stdout equal", EXITED(0), { .expected = true, .cmp = CMP_EQUAL },
		  TS_ACCEPTED, TS_ACCEPTED },
		{ "stdout different", EXITED(0), { .expected = true, .cmp = CMP_DIFFERENT },
		  TS_WRONG_OUTPUT, TS_ACCEPTED },
		{ "nothing expected", EXITED(0), { .cmp = CMP_DIFFERENT }, TS_ACCEPTED,
		  TS_ACCEPTED },
		{ "crash before any answer", SIGNALED(SIGSEGV), { .expected = true },
		  TS_RUNTIME_ERROR, TS_RUNTIME_ERROR },
		{ "file missing, something expected", EXITED(0),
		  { .expected = true, .cmp = CMP_EQUAL, .file_missing = true }, TS_WRONG_OUTPUT,
		  TS_WRONG_OUTPUT },
		{ "file missing, nothing expected", EXITED(0), { .file_missing = true },
		  TS_WRONG_OUTPUT, TS_WRONG_OUTPUT },
		{ "file missing after a crash", SIGNALED(SIGABRT), { .file_missing = true },
		  TS_RUNTIME_ERROR, TS_RUNTIME_ERROR },
		{ "file cut, its start equal", EXITED(0),
		  { .expected = true, .cmp = CMP_EQUAL, .file_truncated = true }, TS_WRONG_OUTPUT,
		  TS_WRONG_OUTPUT },
		{ "file cut, nothing expected", EXITED(0), { .file_truncated = true }, TS_ACCEPTED,
		  TS_WRONG_OUTPUT },
		{ "file cut and whitespace off", EXITED(0),
		  { .expected = true, .cmp = CMP_WHITESPACE, .file_truncated = true },
		  TS_WHITESPACE_MISMATCH, TS_WRONG_OUTPUT },
		{ "file cut by a time limit", { .timed_out = true, .term_signal = SIGKILL },
		  { .expected = true, .file_truncated = true }, TS_TIME_EXCEEDED,
		  TS_TIME_EXCEEDED },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct answer_case *c = &cases[i];

		cr_expect_eq(verdict_for_answer(&c->o, &c->a), c->want, "%s: %s", c->name,
			     verdict_test_status_name(verdict_for_answer(&c->o, &c->a)));
		cr_expect_eq(verdict_before_checker(&c->o, &c->a), c->before_checker,
			     "%s (checker): %s", c->name,
			     verdict_test_status_name(verdict_before_checker(&c->o, &c->a)));
	}
}

struct judge_case {
	const char *name;
	struct run_outcome o;
	const char *msg;
	enum test_status want;
	const char *why;        /* exact */
	double points;          /* -1: untouched */
};

Test(verdict, judge_program)
{
	static const struct judge_case cases[] = {
		{ "accepts", EXITED(0), "ok", TS_ACCEPTED, "", -1 },
		{ "rejects", EXITED(1), "wrong", TS_WRONG_OUTPUT, "", -1 },
		{ "presentation", EXITED(2), "", TS_WHITESPACE_MISMATCH, "", -1 },
		{ "partial", EXITED(7), "0.25 a quarter", TS_PARTIAL, "", 0.25 },
		{ "fails by itself", EXITED(3), "FAIL", TS_INTERNAL_ERROR,
		  "the checker: judge failure (exit code 3)", -1 },
		{ "no verdict code", EXITED(5), "", TS_INTERNAL_ERROR,
		  "the checker: exit code 5, which is no verdict (0, 1, 2, 3 or 7)", -1 },
		{ "out of memory", { .oom = true, .term_signal = SIGKILL }, "", TS_INTERNAL_ERROR,
		  "the checker went over its memory limit", -1 },
		{ "out of time", { .timed_out = true, .term_signal = SIGKILL }, "",
		  TS_INTERNAL_ERROR, "the checker went over its time limit", -1 },
		{ "too much output", { .output_limited = true, .exited = true }, "",
		  TS_INTERNAL_ERROR, "the checker went over its output limit", -1 },
		{ "crashed", SIGNALED(SIGSEGV), "", TS_INTERNAL_ERROR,
		  "the checker was killed by SIGSEGV", -1 },
		{ "end unknown", { 0 }, "", TS_INTERNAL_ERROR, "the checker's end is unknown", -1 },
		{ "sandbox failed", { .internal_error = true, .exited = true }, "",
		  TS_INTERNAL_ERROR, "the checker's sandbox failed", -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct judge_case *c = &cases[i];
		double points = -1;
		char why[224] = "stale";

		cr_expect_eq(verdict_from_judge(&c->o, "checker", c->msg, strlen(c->msg), &points,
						why, sizeof(why)),
			     c->want, "%s", c->name);
		cr_expect_str_eq(why, c->why, "%s", c->name);
		cr_expect_float_eq(points, c->points, 1e-12, "%s", c->name);
	}
}

struct dialogue_case {
	const char *name;
	struct run_outcome solution, interactor;
	const char *message;
	bool wall_limit, ended_for_interactor;
	enum test_status want;
};

Test(verdict, interactive)
{
	static const struct dialogue_case cases[] = {
		/* 1. the wall limit with both running, whatever else */
		{ "deadlock", SIGNALED(SIGKILL), SIGNALED(SIGKILL), "", true, false,
		  TS_TIME_EXCEEDED },
		{ "wall limit over a crash", SIGNALED(SIGSEGV), EXITED(0), "", true, false,
		  TS_TIME_EXCEEDED },
		/* 2. the solution's own limits and crashes */
		{ "solution out of memory", { .oom = true, .term_signal = SIGKILL }, EXITED(0), "",
		  false, false, TS_MEMORY_EXCEEDED },
		{ "solution out of time", { .timed_out = true, .term_signal = SIGKILL }, EXITED(1),
		  "", false, false, TS_TIME_EXCEEDED },
		{ "solution too chatty", { .output_limited = true, .term_signal = SIGKILL },
		  EXITED(0), "", false, false, TS_WRONG_OUTPUT },
		{ "solution crashed", SIGNALED(SIGSEGV), EXITED(0), "", false, false,
		  TS_RUNTIME_ERROR },
		{ "solution crashed, interactor failed", SIGNALED(SIGFPE), SIGNALED(SIGSEGV), "",
		  false, false, TS_RUNTIME_ERROR },
		/* 3. the interactor's own failure */
		{ "interactor crashed", EXITED(0), SIGNALED(SIGSEGV), "", false, false,
		  TS_INTERNAL_ERROR },
		{ "interactor out of time", EXITED(0), { .timed_out = true, .term_signal = SIGKILL },
		  "", false, false, TS_INTERNAL_ERROR },
		{ "interactor judge failure", EXITED(0), EXITED(3), "", false, false,
		  TS_INTERNAL_ERROR },
		/* 4. the interactor's verdict */
		{ "accepted", EXITED(0), EXITED(0), "", false, false, TS_ACCEPTED },
		{ "wrong answer", EXITED(0), EXITED(1), "", false, false, TS_WRONG_OUTPUT },
		{ "partial", EXITED(0), EXITED(7), "0.5", false, false, TS_PARTIAL },
		/* ...and a solution that failed at the dialogue's end */
		{ "EOF after a wrong answer", EXITED(1), EXITED(1), "", false, false,
		  TS_WRONG_OUTPUT },
		{ "SIGPIPE after a wrong answer", SIGNALED(SIGPIPE), EXITED(1), "", false, false,
		  TS_WRONG_OUTPUT },
		{ "EOF after accepting", EXITED(1), EXITED(0), "", false, false,
		  TS_RUNTIME_ERROR },
		{ "SIGPIPE after partial", SIGNALED(SIGPIPE), EXITED(7), "0.5", false, false,
		  TS_RUNTIME_ERROR },
		{ "EOF, interactor crashed", EXITED(1), SIGNALED(SIGSEGV), "", false, false,
		  TS_INTERNAL_ERROR },
		/* goboxd ended the solution for the interactor: never blamed */
		{ "stopped after accepting", SIGNALED(SIGKILL), EXITED(0), "", false, true,
		  TS_ACCEPTED },
		{ "terminated after partial", SIGNALED(SIGKILL), EXITED(7), "0.5", false, true,
		  TS_PARTIAL },
		{ "stopped after a wrong answer", SIGNALED(SIGKILL), EXITED(1), "", false, true,
		  TS_WRONG_OUTPUT },
		{ "not stopped: a kill is a crash", SIGNALED(SIGKILL), EXITED(0), "", false, false,
		  TS_RUNTIME_ERROR },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dialogue_case *c = &cases[i];
		struct verdict_dialogue d = {
			.solution = &c->solution,
			.interactor = &c->interactor,
			.message = c->message,
			.message_len = strlen(c->message),
			.wall_limit = c->wall_limit,
			.solution_ended_for_interactor = c->ended_for_interactor,
		};
		double points = -1;
		char why[224];
		enum test_status got = verdict_interactive(&d, &points, why, sizeof(why));

		cr_expect_eq(got, c->want, "%s: %s", c->name, verdict_test_status_name(got));
		cr_expect_eq(why[0] != '\0', got == TS_INTERNAL_ERROR, "%s: why \"%s\"", c->name,
			     why);
		if (got == TS_INTERNAL_ERROR)
			cr_expect(strstr(why, "interactor") != NULL, "%s: %s", c->name, why);
		if (got == TS_PARTIAL)
			cr_expect_float_eq(points, 0.5, 1e-12, "%s", c->name);
	}
}
