#include "autoconf.h"

/*
 * The part of node-semver (npm's semver package, version 7) that Piston's
 * clients send as a runtime's "version": a range read as node-semver
 * reads it, matched against a release. No I/O; tests/unit/test_semver.c
 * holds node-semver's answers.
 */
#include "worker/http/semver.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"

/*
 * Piston picks a runtime with semver.satisfies(runtime.version, range).
 * A runtime's version is a release (x.y.z), never a prerelease, which
 * keeps the rules short: node-semver's prerelease filter applies only to
 * prerelease versions, and an upper bound "<2.0.0-0" is "<2.0.0" here.
 * Numbers follow node-semver: no leading zeros, at most 2^53 - 1.
 */
#define SV_MAX_NUMBER 9007199254740991ull

/* A version in a range: n numbers before the first wildcard (0-3). */
struct sv_partial {
	int n;
	uint64_t v[3];
	bool pre;    /* a prerelease: sorts just below the release v */
	bool plain;  /* its prefix is "" or "v": a whole version's must be */
};

enum sv_op { SV_NONE, SV_EQ, SV_LT, SV_LE, SV_GT, SV_GE, SV_TILDE, SV_CARET };

static bool sv_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool sv_ident_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-';
}

/* nr: "0" or a digit string without a leading zero, at most SV_MAX_NUMBER. */
static bool sv_number(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	if (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > SV_MAX_NUMBER)
			return false;
	}
	*p = s;
	*out = v;
	return true;
}

/*
 * Dot-separated identifiers of [0-9A-Za-z-]; in a prerelease a numeric
 * one has no leading zero.
 */
static bool sv_identifiers(const char **p, const char *end, bool pre)
{
	const char *s = *p;

	for (;;) {
		const char *start = s;
		bool digits = true;

		while (s < end && sv_ident_char(*s)) {
			digits &= *s >= '0' && *s <= '9';
			s++;
		}
		if (s == start || (pre && digits && s - start > 1 && *start == '0'))
			return false;
		if (s >= end || *s != '.')
			break;
		s++;
	}
	*p = s;
	return true;
}

/*
 * [v=]* xr ( . xr ( . xr qualifier? )? )?, xr being a number or x, X, *;
 * blanks in the prefix too where node-semver's regular expression reads
 * the text whole (a hyphen range), not split at blanks.
 */
static bool sv_parse_partial(const char **p, const char *end, bool blanks,
			     struct sv_partial *out)
{
	const char *s = *p;
	struct sv_partial r = { .n = -1 };
	int parts = 0;

	while (s < end && (*s == 'v' || *s == '=' || (blanks && sv_blank(*s))))
		s++;
	r.plain = s == *p || (s == *p + 1 && **p == 'v');
	for (;;) {
		if (s < end && (*s == 'x' || *s == 'X' || *s == '*')) {
			if (r.n < 0)
				r.n = parts;
			s++;
		} else if (!sv_number(&s, end, &r.v[parts])) {
			return false;
		}
		if (++parts == 3 || s >= end || *s != '.')
			break;
		s++;
	}
	if (r.n < 0)
		r.n = parts;
	if (parts == 3 && s < end && *s == '-') {
		s++;
		if (!sv_identifiers(&s, end, true))
			return false;
		r.pre = true;
	}
	if (parts == 3 && s < end && *s == '+') {
		s++;
		if (!sv_identifiers(&s, end, false))
			return false;
	}
	/* a prerelease on a wildcard means nothing */
	r.pre = r.pre && r.n == 3;
	*p = s;
	*out = r;
	return true;
}

/* The release v against a (a prerelease of it when pre): -1, 0, 1. */
static int sv_cmp(const uint64_t v[3], uint64_t a, uint64_t b, uint64_t c, bool pre)
{
	const uint64_t w[3] = { a, b, c };

	for (int i = 0; i < 3; i++)
		if (v[i] != w[i])
			return v[i] < w[i] ? -1 : 1;
	return pre ? 1 : 0;
}

/* Whether v lies in [lo, hi), the releases a partial with n < 3 stands for. */
static bool sv_in_span(const uint64_t v[3], const struct sv_partial *p, bool ge_lo, bool lt_hi)
{
	uint64_t M = p->v[0], m = p->n > 1 ? p->v[1] : 0;
	bool above = sv_cmp(v, M, m, 0, false) >= 0;
	bool below = p->n == 1 ? sv_cmp(v, M + 1, 0, 0, false) < 0 :
				 sv_cmp(v, M, m + 1, 0, false) < 0;

	return (!ge_lo || above) && (!lt_hi || below);
}

/* A primitive or a bare partial: "1.2.3", ">=1.2", "<1.x", "=*". */
static bool sv_primitive(const uint64_t v[3], enum sv_op op, const struct sv_partial *p)
{
	if (p->n == 0)
		return op != SV_LT && op != SV_GT;
	if (p->n == 3) {
		int c = sv_cmp(v, p->v[0], p->v[1], p->v[2], p->pre);

		switch (op) {
		case SV_LT:
			return c < 0;
		case SV_LE:
			return c <= 0;
		case SV_GT:
			return c > 0;
		case SV_GE:
			return c >= 0;
		default:
			return c == 0;
		}
	}
	switch (op) {
	case SV_LT:     /* <1.2: below 1.2.0 */
		return !sv_in_span(v, p, true, false);
	case SV_LE:     /* <=1.2: below 1.3.0 */
		return sv_in_span(v, p, false, true);
	case SV_GT:     /* >1.2: from 1.3.0 */
		return !sv_in_span(v, p, false, true);
	case SV_GE:
		return sv_in_span(v, p, true, false);
	default:
		return sv_in_span(v, p, true, true);
	}
}

/* ~1.2.3: >=1.2.3 <1.3.0; ~1.2 and ~1: as 1.2.x and 1.x. */
static bool sv_tilde(const uint64_t v[3], const struct sv_partial *p)
{
	if (p->n < 3)
		return sv_primitive(v, SV_EQ, p);
	return sv_cmp(v, p->v[0], p->v[1], p->v[2], p->pre) >= 0 &&
	       sv_cmp(v, p->v[0], p->v[1] + 1, 0, false) < 0;
}

/* ^: up to the next change of the leftmost non-zero number. */
static bool sv_caret(const uint64_t v[3], const struct sv_partial *p)
{
	uint64_t M = p->v[0], m = p->v[1], pt = p->v[2];

	if (p->n < 2 || (p->n == 2 && M == 0))
		return sv_primitive(v, SV_EQ, p);
	if (sv_cmp(v, M, m, p->n == 3 ? pt : 0, p->pre) < 0)
		return false;
	if (M > 0)
		return sv_cmp(v, M + 1, 0, 0, false) < 0;
	if (m > 0)
		return sv_cmp(v, 0, m + 1, 0, false) < 0;
	return sv_cmp(v, 0, 0, pt + 1, false) < 0;
}

static bool sv_comparator(const uint64_t v[3], enum sv_op op, const struct sv_partial *p)
{
	if (op == SV_TILDE)
		return sv_tilde(v, p);
	if (op == SV_CARET)
		return sv_caret(v, p);
	return sv_primitive(v, op, p);
}

static enum sv_op sv_parse_op(const char **p, const char *end)
{
	static const struct { const char *s; enum sv_op op; } ops[] = {
		{ "~>", SV_TILDE }, { "~", SV_TILDE }, { "^", SV_CARET }, { ">=", SV_GE },
		{ "<=", SV_LE }, { ">", SV_GT }, { "<", SV_LT }, { "=", SV_EQ },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		size_t n = strlen(ops[i].s);

		if ((size_t)(end - *p) >= n && memcmp(*p, ops[i].s, n) == 0) {
			*p += n;
			return ops[i].op;
		}
	}
	return SV_NONE;
}

static const char *sv_skip_blanks(const char *s, const char *end)
{
	while (s < end && sv_blank(*s))
		s++;
	return s;
}

/* "A - B": 0 and *match when [s, end) is one, -EINVAL when it is a bad
 * one, -ENOENT when it is not one. */
static int sv_hyphen(const uint64_t v[3], const char *s, const char *end, bool *match)
{
	struct sv_partial a, b;
	const char *q = s;

	if (!sv_parse_partial(&q, end, true, &a) || q >= end || !sv_blank(*q))
		return -ENOENT;
	q = sv_skip_blanks(q, end);
	if (q >= end || *q != '-' || q + 1 >= end || !sv_blank(q[1]))
		return -ENOENT;
	q = sv_skip_blanks(q + 1, end);
	if (!sv_parse_partial(&q, end, true, &b) || sv_skip_blanks(q, end) != end)
		return -ENOENT;
	/* node-semver keeps a whole version's text as written: ">==1.2.3" is no range */
	if ((a.n == 3 && !a.plain) || (b.n == 3 && !b.pre && !b.plain)) {
		*match = false;
		return -EINVAL;
	}
	*match = (a.n == 0 || sv_primitive(v, SV_GE, &a)) &&
		 (b.n == 0 || sv_primitive(v, SV_LE, &b));
	return 0;
}

/* One alternative (between "||"): comparators, all of which must hold. 0, or -EINVAL. */
static int sv_alternative(const uint64_t v[3], const char *s, const char *end, bool *match)
{
	bool all = true;

	int rc;

	s = sv_skip_blanks(s, end);
	if ((rc = sv_hyphen(v, s, end, match)) != -ENOENT)
		return rc;
	while ((s = sv_skip_blanks(s, end)) < end) {
		enum sv_op op = sv_parse_op(&s, end);
		struct sv_partial p;

		if (op != SV_NONE)
			s = sv_skip_blanks(s, end);
		if (!sv_parse_partial(&s, end, false, &p) || (s < end && !sv_blank(*s)))
			return -EINVAL;
		/* a whole version after a primitive operator: at most a 'v' before it */
		if (p.n == 3 && !p.plain && op != SV_TILDE && op != SV_CARET)
			return -EINVAL;
		all = sv_comparator(v, op, &p) && all;
	}
	*match = all;
	return 0;
}

/* x.y.z, each a number as in a range. */
static bool sv_parse_version(const char *s, uint64_t v[3])
{
	const char *end = s + strlen(s);

	for (int i = 0; i < 3; i++) {
		if (i > 0 && (s >= end || *s++ != '.'))
			return false;
		if (!sv_number(&s, end, &v[i]))
			return false;
	}
	return s == end;
}

bool semver_range_matches(const char *range, const char *version)
{
	const char *s = range, *end = range + strlen(range);
	uint64_t v[3];
	bool any = false;

	if (!sv_parse_version(version, v))
		return false;
	/* node-semver refuses a whole range for one bad part, so all are read */
	for (;;) {
		const char *bar = strstr(s, "||");
		const char *stop = bar ? bar : end;
		bool match = false;

		if (sv_alternative(v, s, stop, &match) < 0)
			return false;
		any |= match;
		if (!bar)
			return any;
		s = bar + 2;
	}
}
