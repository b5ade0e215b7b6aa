#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"

static char path[] = "/tmp/goboxd-auth-XXXXXX";

static struct auth *load(const char *text, int want_rc, const char *want_err)
{
	int fd = mkstemp(path);
	struct auth *a = NULL;
	char err[256] = "";
	int rc;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = auth_load(path, &a, err, sizeof(err));
	unlink(path);
	strcpy(path, "/tmp/goboxd-auth-XXXXXX");
	cr_assert_eq(rc, want_rc, "%s", err);
	if (want_err)
		cr_expect_not_null(strstr(err, want_err), "%s", err);
	return a;
}

Test(auth, tokens_of_the_file_and_no_others_let_in)
{
	struct auth *a = load("# the judge's front end\n\nfront-end-0123456789\r\n"
			      "second-token-abcdefgh\n", 0, NULL);

	cr_expect_eq(auth_count(a), 2);
	cr_expect(auth_check(a, "front-end-0123456789", 20));
	cr_expect(auth_check(a, "second-token-abcdefgh", 21));
	cr_expect_not(auth_check(a, "front-end-012345678", 19), "a prefix is not the token");
	cr_expect_not(auth_check(a, "front-end-01234567890", 21), "nor a longer one");
	cr_expect_not(auth_check(a, "# the judge's front end", 23), "comments are no tokens");
	cr_expect_not(auth_check(a, "", 0));
	cr_expect_not(auth_check(a, NULL, 0));
	cr_expect_not(auth_check(NULL, "front-end-0123456789", 20));
	auth_free(a);
}

Test(auth, a_bad_file_is_refused_with_its_line)
{
	cr_expect_null(load("good-token-0123456789\nshort\n", -EINVAL, ":2: token too short"));
	cr_expect_null(load("has a blank in it 0123\n", -EINVAL, ":1: a token is printable"));
	cr_expect_null(load("# only a comment\n\n", -EINVAL, "no token in it"));
	cr_expect_eq(auth_load("/nonexistent/goboxd-tokens", &(struct auth *){ NULL }, (char[64]){ 0 },
			       64), -ENOENT);
}
