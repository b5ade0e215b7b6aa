#include "autoconf.h"

#include "common/verdict.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Advance *pos to the next token; false at the end. */
static bool next_token(const char *s, size_t len, size_t *pos, size_t *start, size_t *tlen)
{
	size_t i = *pos;

	while (i < len && is_space((unsigned char)s[i]))
		i++;
	if (i == len) {
		*pos = i;
		return false;
	}
	*start = i;
	while (i < len && !is_space((unsigned char)s[i]))
		i++;
	*tlen = i - *start;
	*pos = i;
	return true;
}

/*
 * The lenient rule compares token sequences, a token being a maximal run of
 * bytes other than space, \t, \n, \v, \f and \r. So trailing newlines,
 * "\r\n" line ends, runs of blanks and blank lines never matter, but
 * "1 2" and "12" stay different.
 */
static bool tokens_match(const struct compare_spec *spec, const char *got, size_t got_len,
			 const char *want, size_t want_len);

enum compare_result verdict_compare(const char *got, size_t got_len, const char *want,
				    size_t want_len)
{
	static const struct compare_spec tokens = { .mode = COMPARE_TOKENS };

	if (got_len == want_len && (got_len == 0 || memcmp(got, want, got_len) == 0))
		return CMP_EQUAL;
	return tokens_match(&tokens, got, got_len, want, want_len) ? CMP_WHITESPACE :
								     CMP_DIFFERENT;
}

/* The longest token read as a number; longer ones compare as bytes. */
#define NUMBER_MAX 128

/* A decimal number spelled the way judges print them: [+-]digits[.digits][e[+-]digits]. */
static bool decimal_token(const char *s, size_t len, double *out)
{
	char buf[NUMBER_MAX + 1];
	size_t i = 0, digits = 0;
	char *end;

	if (len == 0 || len > NUMBER_MAX)
		return false;
	if (s[i] == '+' || s[i] == '-')
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (digits == 0)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t exp = 0;

		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			exp++;
		if (exp == 0)
			return false;
	}
	if (i != len)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	return end == buf + len && isfinite(*out);
}

static bool tokens_close(const struct compare_spec *spec, const char *g, size_t gl,
			 const char *w, size_t wl)
{
	double a, b, diff;

	if (gl == wl && memcmp(g, w, gl) == 0)
		return true;
	if (spec->mode != COMPARE_FLOAT || !decimal_token(g, gl, &a) || !decimal_token(w, wl, &b))
		return false;
	diff = fabs(a - b);
	return diff <= spec->abs_tol || diff <= spec->rel_tol * fabs(b);
}

/* Both token sequences end together and every pair of tokens matches. */
static bool tokens_match(const struct compare_spec *spec, const char *got, size_t got_len,
			 const char *want, size_t want_len)
{
	size_t gp = 0, wp = 0;

	for (;;) {
		size_t gs = 0, gl = 0, ws = 0, wl = 0;
		bool g = next_token(got, got_len, &gp, &gs, &gl);
		bool w = next_token(want, want_len, &wp, &ws, &wl);

		if (!g || !w)
			return g == w;
		if (!tokens_close(spec, got + gs, gl, want + ws, wl))
			return false;
	}
}

enum compare_result verdict_compare_by(const struct compare_spec *spec, const char *got,
				       size_t got_len, const char *want, size_t want_len)
{
	if (spec->mode == COMPARE_EXACT)
		return verdict_compare(got, got_len, want, want_len);
	return tokens_match(spec, got, got_len, want, want_len) ? CMP_EQUAL : CMP_DIFFERENT;
}

/*
 * Precedence, first match wins:
 *   internal_error  the sandbox failed; nothing about the program is known
 *   memory_exceeded an OOM kill often looks like SIGKILL or a timeout too
 *   time_exceeded   a timer kill is a SIGKILL, so it outranks the signal
 *   wrong_output    output cap hit: the captured output was cut, so it
 *                   cannot be the right answer, whatever the exit status
 *   disk_exceeded   killed by SIGXFSZ, or failed with its disk full: the
 *                   write that failed is the likeliest reason
 *   runtime_error   killed by a signal, or a non-zero exit, or a
 *                   program of the job's own that the kernel cannot run
 *   comparison      with no expected output, a clean run is accepted
 * An outcome that reports neither an exit nor a signal is the sandbox's
 * fault (internal_error): the program's fate is unknown.
 */
enum test_status verdict_for_test(const struct run_outcome *o, bool have_expected,
				  enum compare_result cmp)
{
	if (o->internal_error)
		return TS_INTERNAL_ERROR;
	if (o->oom)
		return TS_MEMORY_EXCEEDED;
	if (o->timed_out)
		return TS_TIME_EXCEEDED;
	if (o->output_limited)
		return TS_WRONG_OUTPUT;
	if (o->term_signal == SIGXFSZ ||
	    (o->disk_full && (o->term_signal != 0 || (o->exited && o->exit_code != 0))))
		return TS_DISK_EXCEEDED;
	if (o->term_signal != 0 || o->exec_format_error)
		return TS_RUNTIME_ERROR;
	if (!o->exited)
		return TS_INTERNAL_ERROR;
	if (o->exit_code != 0)
		return TS_RUNTIME_ERROR;
	if (!have_expected)
		return TS_ACCEPTED;
	switch (cmp) {
	case CMP_EQUAL:
		return TS_ACCEPTED;
	case CMP_WHITESPACE:
		return TS_WHITESPACE_MISMATCH;
	case CMP_DIFFERENT:
		break;
	}
	return TS_WRONG_OUTPUT;
}

enum test_status verdict_for_answer(const struct run_outcome *o, const struct verdict_answer *a)
{
	enum test_status st = verdict_for_test(o, a->expected || a->file_missing,
					       a->file_missing ? CMP_DIFFERENT : a->cmp);

	if (st == TS_ACCEPTED && a->expected && a->file_truncated)
		return TS_WRONG_OUTPUT;
	return st;
}

enum test_status verdict_before_checker(const struct run_outcome *o,
					const struct verdict_answer *a)
{
	enum test_status own = verdict_for_test(o, false, CMP_EQUAL);

	if (own != TS_ACCEPTED)
		return own;
	return a->file_missing || a->file_truncated ? TS_WRONG_OUTPUT : TS_ACCEPTED;
}

enum build_status verdict_for_build(const struct run_outcome *o)
{
	if (o->internal_error)
		return BS_INTERNAL_ERROR;
	return o->exited && o->exit_code == 0 && !o->timed_out && !o->oom && !o->output_limited ?
		       BS_OK : BS_FAILED;
}

enum test_status verdict_top_level(const struct verdict_job *job)
{
	if (job->cancelled)
		return TS_NOT_EXECUTED;
	if (job->build == BS_FAILED)
		return TS_BUILD_FAILED;
	if (job->build == BS_INTERNAL_ERROR || job->judge_build != BS_OK)
		return TS_INTERNAL_ERROR;
	for (size_t i = 0; i < job->ntests; i++)
		if (job->tests[i] != TS_ACCEPTED && job->tests[i] != TS_SKIPPED)
			return job->tests[i];
	return TS_ACCEPTED;
}

/*
 * The points a partial verdict's message starts with: its first token, or
 * the one after a leading "points" (testlib's spelling), a decimal number
 * from 0 to 1. -ENOENT when there is none.
 */
static int parse_points(const char *msg, size_t len, double *out)
{
	size_t pos = 0, start = 0, tlen = 0;
	double v;

	if (!next_token(msg, len, &pos, &start, &tlen))
		return -ENOENT;
	if (tlen == 6 && memcmp(msg + start, "points", 6) == 0 &&
	    !next_token(msg, len, &pos, &start, &tlen))
		return -ENOENT;
	if (!decimal_token(msg + start, tlen, &v) || v < 0 || v > 1)
		return -ENOENT;
	*out = v;
	return 0;
}

enum test_status verdict_from_judge_exit(int exit_code, const char *msg, size_t len,
					 double *points, char *why, size_t whylen)
{
	why[0] = '\0';
	switch (exit_code) {
	case 0:
		return TS_ACCEPTED;
	case 1:
		return TS_WRONG_OUTPUT;
	case 2:
		return TS_WHITESPACE_MISMATCH;
	case 3:
		snprintf(why, whylen, "judge failure (exit code 3)");
		return TS_INTERNAL_ERROR;
	case 7:
		if (parse_points(msg ? msg : "", msg ? len : 0, points) == 0)
			return TS_PARTIAL;
		snprintf(why, whylen, "exit code 7 (partial) without points from 0 to 1 at the "
			 "start of its message");
		return TS_INTERNAL_ERROR;
	default:
		snprintf(why, whylen, "exit code %d, which is no verdict (0, 1, 2, 3 or 7)",
			 exit_code);
		return TS_INTERNAL_ERROR;
	}
}

enum test_status verdict_from_judge(const struct run_outcome *o, const char *who,
				    const char *msg, size_t len, double *points, char *why,
				    size_t whylen)
{
	char sig[32], reason[160];
	enum test_status st;

	why[0] = '\0';
	if (o->internal_error)
		snprintf(why, whylen, "the %s's sandbox failed", who);
	else if (o->oom)
		snprintf(why, whylen, "the %s went over its memory limit", who);
	else if (o->timed_out)
		snprintf(why, whylen, "the %s went over its time limit", who);
	else if (o->output_limited)
		snprintf(why, whylen, "the %s went over its output limit", who);
	else if (o->term_signal)
		snprintf(why, whylen, "the %s was killed by %s", who,
			 verdict_signal_name(o->term_signal, sig, sizeof(sig)));
	else if (!o->exited)
		snprintf(why, whylen, "the %s's end is unknown", who);
	if (why[0])
		return TS_INTERNAL_ERROR;
	st = verdict_from_judge_exit(o->exit_code, msg, len, points, reason, sizeof(reason));
	if (st == TS_INTERNAL_ERROR)
		snprintf(why, whylen, "the %s: %s", who, reason);
	return st;
}

/*
 * A failure that the end of the dialogue may have caused: an interactor
 * that has given its verdict and gone leaves the solution reading end of
 * file (a Python EOFError, exit 1) or writing into a closed pipe
 * (SIGPIPE). Which of the two ended first cannot be told reliably under
 * load (each jail's init reaps its own), so such an end is judged by the
 * interactor's verdict; a limit or any other signal is the solution's own.
 */
static bool dialogue_end_failure(const struct run_outcome *o)
{
	return (o->exited && o->exit_code != 0) || o->term_signal == SIGPIPE;
}

enum test_status verdict_interactive(const struct verdict_dialogue *d, double *points,
				     char *why, size_t whylen)
{
	enum test_status own = TS_ACCEPTED, judged;

	why[0] = '\0';
	if (d->wall_limit)
		return TS_TIME_EXCEEDED;
	if (!d->solution_ended_for_interactor)
		own = verdict_for_test(d->solution, false, CMP_EQUAL);
	if (own != TS_ACCEPTED && !dialogue_end_failure(d->solution))
		return own;
	judged = verdict_from_judge(d->interactor, "interactor", d->message, d->message_len,
				    points, why, whylen);
	if (own != TS_ACCEPTED && (judged == TS_ACCEPTED || judged == TS_PARTIAL))
		return own;
	return judged;
}

const char *verdict_test_status_name(enum test_status s)
{
	switch (s) {
	case TS_ACCEPTED:
		return "accepted";
	case TS_WRONG_OUTPUT:
		return "wrong_output";
	case TS_WHITESPACE_MISMATCH:
		return "output_whitespace_mismatch";
	case TS_TIME_EXCEEDED:
		return "time_exceeded";
	case TS_MEMORY_EXCEEDED:
		return "memory_exceeded";
	case TS_RUNTIME_ERROR:
		return "runtime_error";
	case TS_NOT_EXECUTED:
		return "not_executed";
	case TS_INTERNAL_ERROR:
		return "internal_error";
	case TS_BUILD_FAILED:
		return "build_failed";
	case TS_PARTIAL:
		return "partial";
	case TS_DISK_EXCEEDED:
		return "disk_exceeded";
	case TS_SKIPPED:
		return "skipped";
	}
	return "internal_error";
}

const char *verdict_build_status_name(enum build_status s)
{
	switch (s) {
	case BS_OK:
		return "ok";
	case BS_FAILED:
		return "failed";
	case BS_INTERNAL_ERROR:
		return "internal_error";
	}
	return "internal_error";
}

const char *verdict_signal_name(int sig, char *buf, size_t n)
{
	const char *abbr = sigabbrev_np(sig);

	if (abbr)
		snprintf(buf, n, "SIG%s", abbr);
	else
		snprintf(buf, n, "SIG%d", sig);
	return buf;
}
