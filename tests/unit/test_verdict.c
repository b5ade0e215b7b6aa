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

	cr_expect_eq(verdict_for_test(&e, true, CMP_EQUAL), TS_RUNTIME_ERROR);
	cr_expect_eq(verdict_for_test(&s, true, CMP_EQUAL), TS_RUNTIME_ERROR);
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

Test(verdict, top_level)
{
	enum test_status all_ok[] = { TS_ACCEPTED, TS_ACCEPTED };
	enum test_status mixed[] = { TS_ACCEPTED, TS_WHITESPACE_MISMATCH, TS_TIME_EXCEEDED };

	cr_expect_eq(verdict_top_level(BS_OK, all_ok, 2), TS_ACCEPTED);
	cr_expect_eq(verdict_top_level(BS_OK, mixed, 3), TS_WHITESPACE_MISMATCH);
	cr_expect_eq(verdict_top_level(BS_FAILED, all_ok, 2), TS_BUILD_FAILED);
	cr_expect_eq(verdict_top_level(BS_INTERNAL_ERROR, all_ok, 2), TS_INTERNAL_ERROR);
	cr_expect_eq(verdict_top_level(BS_OK, mixed + 2, 1), TS_TIME_EXCEEDED);
}

/* A skipped test was not judged: it neither fails nor passes the job. */
Test(verdict, top_level_passes_over_skipped)
{
	enum test_status later[] = { TS_SKIPPED, TS_RUNTIME_ERROR, TS_SKIPPED };
	enum test_status only[] = { TS_ACCEPTED, TS_SKIPPED };

	cr_expect_eq(verdict_top_level(BS_OK, later, 3), TS_RUNTIME_ERROR);
	cr_expect_eq(verdict_top_level(BS_OK, only, 2), TS_ACCEPTED);
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
