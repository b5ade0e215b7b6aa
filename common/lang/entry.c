#include "autoconf.h"

/*
 * Entry patterns: the regular expressions with which a language finds the
 * class a program's source declares as its entry (docs/languages.md,
 * "entry"). A pattern is refused before glibc compiles it where glibc's
 * compile would blow up, and a match is found in a few linear passes over
 * the client's source.
 */
#include "common/lang/entry.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/validate.h"
#include "common/util.h"

/*
 * glibc's regcomp copies a repeated subexpression: "E+" becomes "EE*" and
 * "E{2,5}" five copies of E, so stacked or nested repetitions grow the
 * compiled pattern exponentially ("(((a+)+)+)+", or "b" and a hundred
 * '+': gigabytes in the master at load). Its epsilon closures are then
 * cubic in the nodes that match nothing (a group's open and close, the
 * branch of every '?' and '*'): "(((a?)?)?){300}", 2,400 nodes, took
 * 12.7 s to load under the sanitizers. Refuse a pattern whose tree,
 * counted the way regcomp builds it (two nodes for a group, two for
 * '?' and '*'), would pass this many nodes; the shipped patterns need
 * under 200.
 */
#define ENTRY_MAX_NODES 1024
#define ENTRY_MAX_DEPTH 16

/* The end of the bracket expression that starts at p ('['), or NULL. */
static const char *bracket_end(const char *p)
{
	const char *q = p + 1;

	if (*q == '^')
		q++;
	if (*q == ']')
		q++;
	for (; *q && *q != ']'; q++) {
		if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
			const char *e = strchr(q + 2, q[1]);

			while (e && e[1] != ']')
				e = strchr(e + 1, q[1]);
			if (!e)
				return NULL;
			q = e + 1;
		}
	}
	return *q ? q : NULL;
}

/* "{m}", "{m,}", "{m,n}" at p: the largest count of copies, or 0. */
static uint64_t interval_copies(const char *p, const char **end)
{
	uint64_t m = 0, n;
	const char *q = p + 1;

	if (*q < '0' || *q > '9')
		return 0;
	/* every digit is read; past the cap the count just stays above it */
	for (; *q >= '0' && *q <= '9'; q++)
		m = m > ENTRY_MAX_NODES ? m : m * 10 + (uint64_t)(*q - '0');
	n = m;
	if (*q == ',') {
		q++;
		n = m + 1; /* "{m,}": m copies and a star */
		if (*q >= '0' && *q <= '9') {
			n = 0;
			for (; *q >= '0' && *q <= '9'; q++)
				n = n > ENTRY_MAX_NODES ? n : n * 10 + (uint64_t)(*q - '0');
		}
	}
	if (*q != '}')
		return 0;
	*end = q;
	return (n > m ? n : m) + 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a || a + b > ENTRY_MAX_NODES ? ENTRY_MAX_NODES + 1 : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > (ENTRY_MAX_NODES + 1) / b ? ENTRY_MAX_NODES + 1 : a * b;
}

/*
 * Why an entry pattern is refused before regcomp sees it, or NULL: too
 * large once repetitions are copied, groups nested too deep or unbalanced,
 * or a back-reference (matching with one backtracks, and the source it
 * runs on is the client's).
 */
static const char *pattern_problem(const char *p)
{
	/* per open group: nodes so far, and the size of its last atom */
	uint64_t total[ENTRY_MAX_DEPTH + 1] = { 0 }, last[ENTRY_MAX_DEPTH + 1] = { 0 };
	int d = 0;

	for (const char *q = p; *q; q++) {
		const char *e;
		uint64_t k, atom = 1;

		switch (*q) {
		case '\\':
			if (q[1] >= '1' && q[1] <= '9')
				return "back-references are not allowed";
			if (q[1])
				q++;
			break;
		case '[':
			if (!(e = bracket_end(q)))
				return NULL; /* regcomp says what is wrong */
			q = e;
			break;
		case '(':
			if (d == ENTRY_MAX_DEPTH)
				return "groups are nested too deep";
			d++;
			total[d] = last[d] = 0;
			continue;
		case ')':
			if (d == 0)
				return "has a ')' without its '('";
			atom = sat_add(total[d], 2);
			d--;
			break;
		case '|':
			total[d] = sat_add(total[d], 1);
			last[d] = 0;
			continue;
		case '*':
		case '?':
			/* the repeated atom gains its branch node: a copy of it
			 * ("(a?){9}") copies that too */
			total[d] = sat_add(total[d], 2);
			last[d] = sat_add(last[d], 2);
			if (total[d] > ENTRY_MAX_NODES)
				return "repeats too much (stacked or nested repetitions)";
			continue;
		case '+':
			/* E+ is E E*: one more copy of the last atom */
			total[d] = sat_add(total[d], last[d] + 1);
			last[d] = sat_add(sat_mul(last[d], 2), 1);
			if (total[d] > ENTRY_MAX_NODES)
				return "repeats too much (stacked or nested repetitions)";
			continue;
		case '{':
			if ((k = interval_copies(q, &e)) == 0)
				break; /* a literal '{' */
			q = e;
			total[d] = sat_add(total[d], sat_add(sat_mul(last[d], k - 1), k));
			last[d] = sat_add(sat_mul(last[d], k), k);
			if (total[d] > ENTRY_MAX_NODES)
				return "repeats too much (stacked or nested repetitions)";
			continue;
		default:
			break;
		}
		total[d] = sat_add(total[d], atom);
		last[d] = atom;
		if (total[d] > ENTRY_MAX_NODES)
			return "repeats too much (stacked or nested repetitions)";
	}
	/* an unclosed '(' is regcomp's to report */
	return NULL;
}

/*
 * P is compiled twice: as written, and as "^.*(P)", which entry_find
 * uses to find where matches are in one pass. The first compile's errors
 * and group count are the author's.
 */
int entry_compile(const char *pattern, regex_t *re, regex_t *locate, char *why, size_t whylen)
{
	const char *bad = pattern_problem(pattern);
	char reason[160], *wrapped;
	int rc;

	if (bad) {
		snprintf(why, whylen, "'%s' %s", pattern, bad);
		return -EINVAL;
	}
	rc = regcomp(re, pattern, REG_EXTENDED);
	if (rc != 0) {
		regerror(rc, re, reason, sizeof(reason));
		snprintf(why, whylen, "'%s': %s", pattern, reason);
		return -EINVAL;
	}
	if (re->re_nsub == 0) {
		regfree(re);
		snprintf(why, whylen, "'%s' has no group to name the entry", pattern);
		return -EINVAL;
	}
	wrapped = xasprintf("^.*(%s)", pattern);
	rc = regcomp(locate, wrapped, REG_EXTENDED);
	free(wrapped);
	if (rc != 0 || locate->re_nsub != re->re_nsub + 1) {
		regfree(re);
		if (rc == 0)
			regfree(locate);
		snprintf(why, whylen, "'%s' is not one whole expression", pattern);
		return -EINVAL;
	}
	return 0;
}

void entry_free(regex_t *re, regex_t *locate)
{
	regfree(re);
	regfree(locate);
}

/*
 * A plain search would try the pattern P from every line start, each try
 * running as far as "[^}]*" lets it: quadratic in the source, 30 s for 256 KiB of "class A" lines. Instead,
 * "^.*(P)" is run anchored, each run one pass over the text: first to
 * find where the earliest match ends (a binary search over prefixes, each
 * check stopping at its first match), then in that prefix, where its
 * greedy ".*" gives the latest start of a match ending there. P itself
 * then runs from that start, where it matches at once, for its longest
 * match (the whole name, not the letter that ended the earliest match;
 * the search from there may run to the end once, never from every line).
 * So the entry is the declaration whose match ends first: the first one,
 * or of two that end at the same "main(", the inner one.
 */
char *entry_find(const regex_t *re, const regex_t *locate, const char *src)
{
	size_t len = strlen(src), lo = 0, hi = len, g = re->re_nsub < 9 ? re->re_nsub : 9;
	regmatch_t m[10];
	size_t n;

	/* nmatch 0: the pass stops where the first match ends; REG_STARTEND
	 * takes the range from m[0] all the same */
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	if (regexec(locate, src, 0, m, REG_STARTEND) != 0)
		return NULL;
	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		m[0].rm_so = 0;
		m[0].rm_eo = (regoff_t)mid;
		if (regexec(locate, src, 0, m, REG_STARTEND | REG_NOTEOL) == 0)
			hi = mid;
		else
			lo = mid;
	}
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)hi;
	if (regexec(locate, src, 2, m, REG_STARTEND | (hi < len ? REG_NOTEOL : 0)) != 0)
		return NULL;
	/*
	 * One byte back: glibc lets the "^" of "(^|\n)" match just after a
	 * newline inside the wrapped pattern, so the start it reports may be
	 * one past the newline that P alone needs.
	 */
	m[0].rm_so = m[1].rm_so > 0 ? m[1].rm_so - 1 : 0;
	m[0].rm_eo = (regoff_t)len;
	if (regexec(re, src, g + 1, m, REG_STARTEND) != 0)
		return NULL;
	while (g > 0 && m[g].rm_so < 0)
		g--;
	n = (size_t)(m[g].rm_eo - m[g].rm_so);
	if (g == 0 || n == 0 || n > FILENAME_MAX_LEN)
		return NULL;
	return xstrndup(src + m[g].rm_so, n);
}
