#include "autoconf.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/entry.h"
#include "common/lang/validate.h"

/* The reason entry_compile gives for pattern, or "" when it compiles. */
static void compile_why(const char *pattern, char *why, size_t whylen)
{
	regex_t re, locate;

	why[0] = '\0';
	if (entry_compile(pattern, &re, &locate, why, whylen) == 0) {
		entry_free(&re, &locate);
		why[0] = '\0';
	} else {
		cr_expect_neq(why[0], '\0', "'%s': refused without a reason", pattern);
	}
}

Test(entry, refusals_name_the_pattern)
{
	static const struct {
		const char *pattern, *why;
	} c[] = {
		{ "(a)\\1", "'(a)\\1' back-references are not allowed" },
		{ "a)(b", "'a)(b' has a ')' without its '('" },
		{ "class [a-z]+", "'class [a-z]+' has no group to name the entry" },
		{ "(a+)+)+", "'(a+)+)+' has a ')' without its '('" },
		{ "(b++++++++++++++++++++++++++++++++)",
		  "'(b++++++++++++++++++++++++++++++++)' repeats too much (stacked or nested "
		  "repetitions)" },
	};
	char why[400];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		compile_why(c[i].pattern, why, sizeof(why));
		cr_expect_str_eq(why, c[i].why, "'%s'", c[i].pattern);
	}
	/* regcomp's own complaint follows a colon */
	compile_why("class (", why, sizeof(why));
	cr_expect(strncmp(why, "'class (': ", 11) == 0, "%s", why);
	compile_why("(^|\n)[[:blank:]]*class[[:blank:]]+([[:alnum:]_]+)", why, sizeof(why));
	cr_expect_str_eq(why, "");
}

static char *find(const char *pattern, const char *src)
{
	regex_t re, locate;
	char why[400], *e;

	cr_assert_eq(entry_compile(pattern, &re, &locate, why, sizeof(why)), 0, "%s", why);
	e = entry_find(&re, &locate, src);
	entry_free(&re, &locate);
	return e;
}

static void expect_found(const char *pattern, const char *src, const char *want)
{
	char *e = find(pattern, src);

	if (want)
		cr_expect(e && strcmp(e, want) == 0, "'%s' in \"%s\": %s, not %s", pattern, src,
			  e ? e : "(none)", want);
	else
		cr_expect_null(e, "'%s' in \"%s\": %s", pattern, src, e);
	free(e);
}

Test(entry, the_match_that_ends_first_at_its_longest)
{
	const char *cls = "class ([A-Za-z]+)[^{]*[{][^}]*main";

	expect_found(cls, "class Alpha { main } class Beta { main }", "Alpha");
	/* Outer's match runs to the same "main" as Inner's: the inner one */
	expect_found(cls, "class Outer { class Inner { main", "Inner");
	/* the whole name, not the letter that ended the earliest match */
	expect_found("(^|\n)object ([a-z]+)", "x\nobject longname {", "longname");
	expect_found(cls, "interface X {}", NULL);
	expect_found(cls, "", NULL);
	/* the last group that took part names the entry */
	expect_found("(a)|(b)", "b", "b");
	expect_found("(a)|(b)", "a", "a");
}

Test(entry, a_name_longer_than_a_file_name_is_none)
{
	char src[FILENAME_MAX_LEN + 16];

	memset(src, 'n', FILENAME_MAX_LEN + 1);
	src[FILENAME_MAX_LEN + 1] = '\0';
	expect_found("([n]+)", src, NULL);
	src[FILENAME_MAX_LEN] = '\0';
	expect_found("([n]+)", src, src);
	/* an empty group names nothing */
	expect_found("x(y*)", "x", NULL);
}
