#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "common/util.h"

TestSuite(strv);

/* v holds exactly want, in order, and ends with NULL. */
static void expect_strings(char *const *v, const char *const *want)
{
	size_t i;

	cr_assert_not_null(v);
	for (i = 0; want[i]; i++) {
		cr_assert_not_null(v[i], "the vector ends at %zu, before '%s'", i, want[i]);
		cr_assert_str_eq(v[i], want[i], "string %zu", i);
	}
	cr_assert_null(v[i], "an extra string at %zu: '%s'", i, v[i]);
}

Test(strv, new_is_empty_not_null)
{
	char **v = strv_new();

	cr_assert_not_null(v);
	cr_assert_null(v[0]);
	cr_assert_eq(strv_len(v), 0);
	strv_free(v);
}

Test(strv, null_is_an_empty_vector)
{
	char **copy = strv_dup(NULL);

	cr_assert_eq(strv_len(NULL), 0);
	cr_assert_not(strv_contains(NULL, "a"));
	expect_strings(copy, (const char *const[]){ NULL });
	strv_free(copy);
	strv_free(NULL);
}

Test(strv, push_grows_from_null_and_keeps_order)
{
	static const char *const words[] = { "one", "two", "three", "four", "five", NULL };
	char **v = NULL;

	for (size_t i = 0; words[i]; i++) {
		strv_push(&v, xstrdup(words[i]));
		cr_assert_eq(strv_len(v), i + 1);
		cr_assert_null(v[i + 1]);
	}
	expect_strings(v, words);
	strv_free(v);
}

Test(strv, push_onto_a_copy_and_an_empty_vector)
{
	char *base[] = { "-O2", "-Wall", NULL };
	char **v = strv_dup(base);
	char **e = strv_new();

	strv_push(&v, xstrdup("-g"));
	expect_strings(v, (const char *const[]){ "-O2", "-Wall", "-g", NULL });
	strv_push(&e, xstrdup("x"));
	expect_strings(e, (const char *const[]){ "x", NULL });
	strv_free(v);
	strv_free(e);
}

Test(strv, dup_is_deep)
{
	char a[] = "alpha", b[] = "beta";
	char *orig[] = { a, b, NULL };
	char **copy = strv_dup(orig);

	cr_assert_neq(copy, orig);
	cr_assert_neq(copy[0], orig[0], "the strings are copied, not shared");
	a[0] = 'A';
	b[0] = 'B';
	expect_strings(copy, (const char *const[]){ "alpha", "beta", NULL });
	strv_free(copy);
}

Test(strv, contains_whole_strings_only)
{
	char *v[] = { "python", "py3", "", NULL };

	cr_assert(strv_contains(v, "python"));
	cr_assert(strv_contains(v, "py3"));
	cr_assert(strv_contains(v, ""));
	cr_assert_not(strv_contains(v, "py"));
	cr_assert_not(strv_contains(v, "python3"));
	cr_assert_not(strv_contains(v, "Python"));
}

Test(strv, len_stops_at_the_first_null)
{
	char *v[] = { "a", "b", NULL, "c", NULL };

	cr_assert_eq(strv_len(v), 2);
	cr_assert_not(strv_contains(v, "c"));
}
