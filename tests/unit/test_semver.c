#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdbool.h>

#include "worker/http/semver.h"

/*
 * Piston picks a runtime with node-semver's satisfies(version, range);
 * every expectation here is node-semver 7's answer (the version Piston
 * locks), written from its documented rules: x-ranges, tilde, caret,
 * hyphen ranges, ANDs and ORs, prereleases, and the ranges it refuses.
 */
struct sv_case {
	const char *range;
	const char *version;
	bool match;
};

static void expect_all(const struct sv_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(semver_range_matches(c[i].range, c[i].version), c[i].match,
			     "satisfies(%s, \"%s\") should be %s", c[i].version, c[i].range,
			     c[i].match ? "true" : "false");
}

#define EXPECT_ALL(cases) expect_all(cases, sizeof(cases) / sizeof(cases[0]))

Test(semver, any)
{
	static const struct sv_case c[] = {
		{ "*", "3.11.2", true }, { "x", "0.0.0", true }, { "X", "12.2.0", true },
		{ "", "3.11.2", true }, { "  ", "3.11.2", true }, { "x.x.x", "1.2.3", true },
		{ ">=*", "1.0.0", true }, { "<=*", "1.0.0", true }, { "=*", "1.0.0", true },
		/* nothing is below or above every version */
		{ "<*", "1.0.0", false }, { ">*", "1.0.0", false },
	};

	EXPECT_ALL(c);
}

Test(semver, exact)
{
	static const struct sv_case c[] = {
		{ "3.11.2", "3.11.2", true }, { "=3.11.2", "3.11.2", true },
		{ "v3.11.2", "3.11.2", true }, { "=v3.11.2", "3.11.2", true },
		{ " 3.11.2 ", "3.11.2", true }, { "= 3.11.2", "3.11.2", true },
		{ "3.11.1", "3.11.2", false }, { "3.11.20", "3.11.2", false },
		{ "3.11.2+build.5", "3.11.2", true },
		/* a prerelease of 3.11.2 is not 3.11.2 */
		{ "3.11.2-rc.1", "3.11.2", false },
	};

	EXPECT_ALL(c);
}

Test(semver, partial_and_x_ranges)
{
	static const struct sv_case c[] = {
		{ "3", "3.11.2", true }, { "3", "3.0.0", true }, { "3", "4.0.0", false },
		{ "3", "2.99.99", false }, { "3.11", "3.11.0", true }, { "3.11", "3.11.99", true },
		{ "3.11", "3.12.0", false }, { "3.11", "3.10.9", false }, { "3.x", "3.11.2", true },
		{ "3.X", "3.0.0", true }, { "3.*", "4.0.0", false }, { "3.11.x", "3.11.2", true },
		{ "3.11.*", "3.12.0", false }, { "3.x.x", "3.5.5", true },
		/* past the first wildcard, nothing counts */
		{ "3.x.7", "3.4.1", true },
		{ "=3.11", "3.11.5", true }, { "0", "0.9.9", true }, { "0", "1.0.0", false },
	};

	EXPECT_ALL(c);
}

Test(semver, operators)
{
	static const struct sv_case c[] = {
		{ ">=3.11.2", "3.11.2", true }, { ">=3.11.3", "3.11.2", false },
		{ ">3.11.2", "3.11.2", false }, { ">3.11.1", "3.11.2", true },
		{ "<3.11.2", "3.11.2", false }, { "<3.11.3", "3.11.2", true },
		{ "<=3.11.2", "3.11.2", true }, { "<=3.11.1", "3.11.2", false },
		/* partial operands: >3.11 is >=3.12.0, <=3.11 is <3.12.0 */
		{ ">3.11", "3.11.9", false }, { ">3.11", "3.12.0", true }, { ">3", "4.0.0", true },
		{ ">3", "3.99.0", false }, { ">=3", "3.0.0", true }, { ">=3.12", "3.11.2", false },
		{ "<3", "3.0.0", false }, { "<3", "2.9.9", true }, { "<3.11", "3.10.9", true },
		{ "<3.11", "3.11.0", false }, { "<=3", "3.99.99", true }, { "<=3", "4.0.0", false },
		{ "<=3.11", "3.11.9", true }, { "<=3.11", "3.12.0", false },
		{ ">= 3.11.2", "3.11.2", true }, { ">=v3.11.2", "3.11.2", true },
		{ "<3.x", "2.0.0", true }, { "<3.x", "3.0.0", false },
	};

	EXPECT_ALL(c);
}

Test(semver, tilde)
{
	static const struct sv_case c[] = {
		{ "~3.11.1", "3.11.2", true }, { "~3.11.2", "3.11.2", true },
		{ "~3.11.3", "3.11.2", false }, { "~3.11.1", "3.12.0", false },
		{ "~3.11", "3.11.9", true }, { "~3.11", "3.12.0", false }, { "~3", "3.99.0", true },
		{ "~3", "4.0.0", false }, { "~>3.11.0", "3.11.2", true }, { "~ 3.11", "3.11.2", true },
		{ "~0.2.3", "0.2.9", true }, { "~0.2.3", "0.3.0", false },
		{ "~3.11.2-beta", "3.11.2", true },
	};

	EXPECT_ALL(c);
}

Test(semver, caret)
{
	static const struct sv_case c[] = {
		{ "^3.10", "3.11.2", true }, { "^3.10.5", "3.11.2", true },
		{ "^3.11.3", "3.11.2", false }, { "^3", "3.99.0", true }, { "^3", "4.0.0", false },
		{ "^3.11.2", "4.0.0", false }, { "^3.x", "3.0.0", true }, { "^3.11.x", "3.99.0", true },
		/* below 1.0.0 the leftmost non-zero number is the one that may not change */
		{ "^0.2.3", "0.2.9", true }, { "^0.2.3", "0.3.0", false }, { "^0.2", "0.2.0", true },
		{ "^0.2", "0.3.0", false }, { "^0.0.3", "0.0.3", true }, { "^0.0.3", "0.0.4", false },
		{ "^0.0", "0.0.9", true }, { "^0.0", "0.1.0", false }, { "^0.0.x", "0.0.5", true },
		{ "^0.x", "0.9.0", true }, { "^0.x", "1.0.0", false }, { "^ 3.10", "3.11.2", true },
		{ "^3.11.2-rc.1", "3.11.2", true }, { "^0.0.3-rc", "0.0.3", true },
	};

	EXPECT_ALL(c);
}

Test(semver, hyphen)
{
	static const struct sv_case c[] = {
		{ "3.10 - 3.12", "3.11.2", true }, { "3.10 - 3.12", "3.12.9", true },
		{ "3.10 - 3.12", "3.13.0", false }, { "3.10 - 3.12", "3.9.0", false },
		{ "3.11.2 - 3.11.2", "3.11.2", true }, { "3.11.3 - 4", "3.11.2", false },
		{ "1.2.3 - 2.3.4", "2.3.4", true }, { "1.2.3 - 2.3.4", "2.3.5", false },
		{ "1 - 2", "2.9.9", true }, { "1 - 2", "3.0.0", false }, { "* - 3.0.0", "1.0.0", true },
		{ "v3.11.2 - 4", "3.11.2", true }, { "1.2.3 - 3.11.2-rc.1", "3.11.2", false },
	};

	EXPECT_ALL(c);
}

Test(semver, and_or)
{
	static const struct sv_case c[] = {
		{ ">=3 <4", "3.11.2", true }, { ">=3 <3.11", "3.11.2", false },
		{ ">=3.11.0 <=3.11.2", "3.11.2", true }, { ">=3.0.0\t<4.0.0", "3.11.2", true },
		{ ">=3  <4  3.11", "3.11.2", true }, { ">=3 <4 3.10", "3.11.2", false },
		{ "2 || 3", "3.11.2", true }, { "2||3", "3.11.2", true }, { "2 || 4", "3.11.2", false },
		{ "<3 || >=3.11.2 <3.12", "3.11.2", true }, { "1.2.3 || ", "3.11.2", true },
		{ "|| 1", "3.11.2", true }, { "||", "3.11.2", true },
		{ "3.10 - 3.12 || 1", "3.11.2", true },
	};

	EXPECT_ALL(c);
}

Test(semver, prerelease_bounds)
{
	static const struct sv_case c[] = {
		{ ">=3.11.2-beta", "3.11.2", true }, { ">3.11.2-beta", "3.11.2", true },
		{ "<3.11.2-0", "3.11.2", false }, { "<=3.11.2-beta", "3.11.2", false },
		{ "<3.11.3-0", "3.11.2", true }, { ">=3.11.2-alpha.1.x-y", "3.11.2", true },
	};

	EXPECT_ALL(c);
}

/* What node-semver cannot parse matches nothing, even beside a good part. */
Test(semver, refused_ranges)
{
	static const struct sv_case c[] = {
		{ "latest", "3.11.2", false }, { "3.11.2.1", "3.11.2", false },
		{ "03.11.2", "3.11.2", false }, { "3.011", "3.11.2", false },
		{ "a.b.c", "3.11.2", false }, { ">=", "3.11.2", false }, { "3.", "3.11.2", false },
		{ "3.11-beta", "3.11.2", false }, { "3.11.2-", "3.11.2", false },
		{ "3.11.2-01", "3.11.2", false }, { "3.11.2+", "3.11.2", false },
		{ "==3.11.2", "3.11.2", false }, { "vv3.11.2", "3.11.2", false },
		{ ">=3.11.2<4", "3.11.2", false }, { "> = 3", "3.11.2", false },
		{ "3 - ", "3.11.2", false }, { "1 - 2 - 3", "1.5.0", false },
		{ "* || latest", "3.11.2", false }, { "3 | 4", "3.11.2", false },
		{ "=>3", "3.11.2", false }, { "v 3.11.2", "3.11.2", false },
		{ "99999999999999999", "3.11.2", false }, { "3.11.2 ~", "3.11.2", false },
		{ "=1.2.3 - 4", "3.11.2", false },
	};

	EXPECT_ALL(c);
}

/* The runtime's side: a release x.y.z, else nothing matches it. */
Test(semver, refused_versions)
{
	static const struct sv_case c[] = {
		{ "*", "3.11", false }, { "*", "", false }, { "*", "3.11.2-rc.1", false },
		{ "*", "03.11.2", false },
		{ "*", "9007199254740991.0.0", true }, { "*", "9007199254740992.0.0", false },
	};

	EXPECT_ALL(c);
}
