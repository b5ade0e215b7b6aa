#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	cr_expect(auth_check(a, "front-end-0123456789", 20, NULL));
	cr_expect(auth_check(a, "second-token-abcdefgh", 21, NULL));
	cr_expect_not(auth_check(a, "front-end-012345678", 19, NULL), "a prefix is not the token");
	cr_expect_not(auth_check(a, "front-end-01234567890", 21, NULL), "nor a longer one");
	cr_expect_not(auth_check(a, "# the judge's front end", 23, NULL), "comments are no tokens");
	cr_expect_not(auth_check(a, "", 0, NULL));
	cr_expect_not(auth_check(a, NULL, 0, NULL));
	cr_expect_not(auth_check(NULL, "front-end-0123456789", 20, NULL));
	auth_free(a);
}

Test(auth, a_bad_file_is_refused_with_its_line)
{
	cr_expect_null(load("good-token-0123456789\nshort\n", -EINVAL, ":2: token too short"));
	cr_expect_null(load("has a blank in it 0123\n", -EINVAL, ":1: after a token only"));
	cr_expect_null(load("good-token-0123456789 admin\n", -EINVAL, ":1: after a token only"));
	cr_expect_null(load("\tgood-token-0123456789\n", -EINVAL, ":1: token too short"));
	cr_expect_null(load("bad\x01token-0123456789 operator\n", -EINVAL, ":1: a token is printable"));
	cr_expect_null(load("# only a comment\n\n", -EINVAL, "no token in it"));
	cr_expect_eq(auth_load("/nonexistent/goboxd-tokens", &(struct auth *){ NULL }, (char[64]){ 0 },
			       64), -ENOENT);
}

Test(auth, an_operator_token_is_marked_on_its_line)
{
	struct auth *a = load("client-token-0123456789\n"
			      "operator-token-0123456789 \t operator \n", 0, NULL);
	bool op = true;

	cr_assert_not_null(a);
	cr_expect_eq(auth_count(a), 2);
	cr_expect(auth_check(a, "client-token-0123456789", 23, &op));
	cr_expect_not(op, "a client's token is no operator's");
	cr_expect(auth_check(a, "operator-token-0123456789", 25, &op));
	cr_expect(op);
	cr_expect_not(auth_check(a, "operator-token-0123456789 operator", 34, &op),
		      "the word is no part of the token");
	cr_expect_not(op);
	auth_free(a);
}

Test(auth, an_owner_names_a_token_without_telling_it)
{
	char one[AUTH_OWNER_LEN + 1], again[AUTH_OWNER_LEN + 1], other[AUTH_OWNER_LEN + 1];

	auth_owner("client-token-0123456789", 23, one);
	auth_owner("client-token-0123456789", 23, again);
	auth_owner("client-token-012345678", 22, other);
	cr_expect_eq(strlen(one), AUTH_OWNER_LEN);
	cr_expect_eq(strspn(one, "0123456789abcdef"), AUTH_OWNER_LEN);
	cr_expect_str_eq(one, again, "the same token, the same owner: across restarts too");
	cr_expect_str_neq(one, other);
	cr_expect_null(strstr(one, "client"));
}

#define ONE "front-end-0123456789"
#define TWO "second-token-abcdefgh"

static bool allows(const struct auth_shared *s, struct auth_view **copy, bool probe,
		   const char *token)
{
	return auth_shared_allows(s, copy, probe, token, token ? strlen(token) : 0, NULL);
}

Test(auth, the_shared_tokens_are_those_last_published)
{
	struct auth_shared *s = auth_shared_map();
	struct auth *both = load(ONE "\n" TWO "\n", 0, NULL), *two = load(TWO "\n", 0, NULL);
	struct auth_view *copy = NULL;

	cr_assert_not_null(s);
	/* never published: nobody in but the probes */
	cr_expect_not(allows(s, &copy, false, ONE));
	cr_expect(allows(s, &copy, true, NULL));
	auth_shared_publish(s, both, false);
	cr_expect(allows(s, &copy, false, ONE));
	cr_expect(allows(s, &copy, false, TWO));
	cr_expect_not(allows(s, &copy, false, NULL));
	cr_expect_not(allows(s, &copy, false, ONE "x"));
	cr_expect(allows(s, &copy, true, NULL), "the probes stay open");
	/* a reload: the copy taken before follows it */
	auth_shared_publish(s, two, true);
	cr_expect_not(allows(s, &copy, false, ONE), "a removed token stops at once");
	cr_expect(allows(s, &copy, false, TWO));
	cr_expect_not(allows(s, &copy, true, NULL), "--auth-probes");
	cr_expect(allows(s, &copy, true, TWO));
	/* no --auth-tokens any more */
	auth_shared_publish(s, NULL, false);
	cr_expect(allows(s, &copy, false, NULL));
	{
		struct auth_who who;

		cr_expect(auth_shared_allows(s, &copy, false, NULL, 0, &who));
		cr_expect(who.is_operator, "without tokens everything is everybody's");
		cr_expect_str_eq(who.owner, "");
	}
	auth_view_free(copy);
	auth_free(both);
	auth_free(two);
	auth_shared_unmap(s);
}

Test(auth, who_a_request_is_follows_its_token)
{
	struct auth_shared *s = auth_shared_map();
	struct auth *a = load(ONE "\n" TWO " operator\n", 0, NULL);
	struct auth_view *copy = NULL;
	struct auth_who who;
	char owner[AUTH_OWNER_LEN + 1];

	cr_assert_not_null(s);
	auth_shared_publish(s, a, false);
	cr_expect(auth_shared_allows(s, &copy, false, ONE, strlen(ONE), &who));
	auth_owner(ONE, strlen(ONE), owner);
	cr_expect_str_eq(who.owner, owner);
	cr_expect_not(who.is_operator);
	cr_expect(auth_shared_allows(s, &copy, false, TWO, strlen(TWO), &who));
	cr_expect(who.is_operator);
	cr_expect_not(auth_shared_allows(s, &copy, false, "no-such-token-0123", 18, &who));
	cr_expect_str_eq(who.owner, "", "a refused request is nobody");
	cr_expect_not(who.is_operator);
	auth_view_free(copy);
	auth_free(a);
	auth_shared_unmap(s);
}

Test(auth, a_child_forked_before_a_publication_checks_against_it)
{
	struct auth_shared *s = auth_shared_map();
	struct auth *one = load(ONE "\n", 0, NULL), *two = load(TWO "\n", 0, NULL);
	struct auth_view *copy = NULL;
	int ready[2], go[2], status;
	char b;
	pid_t pid;

	cr_assert_not_null(s);
	auth_shared_publish(s, one, false);
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		bool before = allows(s, &copy, false, ONE);

		/* the master's reload happens between these */
		if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(3);
		_exit(before && !allows(s, &copy, false, ONE) && allows(s, &copy, false, TWO) ?
		      0 : 1);
	}
	cr_assert_eq(read(ready[0], &b, 1), 1);
	auth_shared_publish(s, two, false);
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child kept its tokens of before (status %d)", status);
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
	auth_free(one);
	auth_free(two);
	auth_shared_unmap(s);
}
