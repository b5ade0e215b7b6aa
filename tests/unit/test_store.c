#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/store.h"
#include "common/util.h"

static char dir[] = "/tmp/goboxd-store-XXXXXX";
static char path[64];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/db/submissions.db", dir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static struct store *open_store(uint64_t max_bytes)
{
	struct store *s = NULL;
	char err[256] = "";

	cr_assert_eq(store_open(path, max_bytes, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

TestSuite(store, .init = setup, .fini = teardown);

Test(store, a_submission_goes_from_queued_to_done)
{
	struct store *s = open_store(0);
	struct store_sub sub;
	char token[STORE_TOKEN_LEN + 1], err[128];
	unsigned attempts = 0;
	int64_t id;

	cr_assert_eq(store_add(s, "judge0", NULL, "{\"a\":1}", "http://x/cb", token, &id, err,
			       sizeof(err)), 0, "%s", err);
	cr_expect_eq(strlen(token), STORE_TOKEN_LEN);
	cr_expect_eq(token[14], '4', "a version 4 UUID: %s", token);
	cr_assert_eq(store_find(s, token, &sub), 0);
	cr_expect_eq(sub.id, id);
	cr_expect_eq(sub.state, STORE_QUEUED);
	cr_expect_str_eq(sub.request, "{\"a\":1}");
	cr_expect_str_eq(sub.api, "judge0");
	cr_expect_str_eq(sub.callback_url, "http://x/cb");
	cr_expect_null(sub.result);
	cr_expect_neq(sub.created_ms, 0);
	store_sub_free(&sub);

	cr_assert_eq(store_start(s, id, &attempts), 0);
	cr_expect_eq(attempts, 1);
	cr_expect_eq(store_delete(s, token), -EBUSY, "a running one stays");
	cr_assert_eq(store_finish(s, id, "{\"r\":2}"), 0);
	cr_expect_eq(store_finish(s, id, "{\"r\":3}"), -ENOENT, "finished once");
	cr_expect_eq(store_start(s, id, &attempts), -ENOENT, "a done one never runs again");
	cr_assert_eq(store_get(s, id, &sub), 0);
	cr_expect_eq(sub.state, STORE_DONE);
	cr_expect_str_eq(sub.result, "{\"r\":2}");
	cr_expect_neq(sub.finished_ms, 0);
	store_sub_free(&sub);

	{
		struct stat st;

		cr_assert_eq(stat(path, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0600, "clients' code is its owner's alone");
	}
	cr_expect_eq(store_delete(s, token), 0);
	cr_expect_eq(store_find(s, token, &sub), -ENOENT);
	cr_expect_eq(store_delete(s, token), -ENOENT);
	store_close(s);
}

Test(store, pending_ones_outlive_the_handle_and_running_ones_are_queued_again)
{
	struct store *s = open_store(0);
	char token[STORE_TOKEN_LEN + 1], err[128];
	int64_t ids[3], *pending = NULL;
	unsigned attempts;
	struct store_sub sub;
	size_t n = 0;

	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(store_add(s, "judge0", NULL, "{}", NULL, token, &ids[i], err, sizeof(err)),
			     0);
	cr_assert_eq(store_start(s, ids[0], &attempts), 0);
	cr_assert_eq(store_start(s, ids[1], &attempts), 0);
	cr_assert_eq(store_finish(s, ids[1], "{}"), 0);
	store_close(s);

	s = open_store(0);
	cr_assert_eq(store_pending(s, true, &pending, &n), 0);
	cr_assert_eq(n, 2);
	cr_expect_eq(pending[0], ids[0], "oldest first");
	cr_expect_eq(pending[1], ids[2]);
	free(pending);
	cr_assert_eq(store_get(s, ids[0], &sub), 0);
	cr_expect_eq(sub.state, STORE_QUEUED, "the running one is queued again");
	cr_expect_eq(sub.attempts, 1, "and its attempt counted");
	store_sub_free(&sub);
	store_close(s);
}

Test(store, a_full_store_refuses_and_keeps_what_it_has)
{
	struct store *s = open_store(256 * 1024);
	char token[STORE_TOKEN_LEN + 1], err[128] = "";
	char *big = xmalloc(16 * 1024 + 1);
	int64_t *pending = NULL;
	size_t npending = 0;
	int64_t id;
	int rc = 0;
	size_t added = 0;

	memset(big, 'x', 16 * 1024);
	big[16 * 1024] = '\0';
	for (size_t i = 0; i < 100 && rc == 0; i++) {
		rc = store_add(s, "judge0", NULL, big, NULL, token, &id, err, sizeof(err));
		added += rc == 0;
	}
	cr_expect_eq(rc, -ENOSPC, "%s", err);
	cr_expect_not_null(strstr(err, "the submission store is full"), "%s", err);
	cr_expect_gt(added, 4);
	cr_assert_eq(store_pending(s, false, &pending, &npending), 0);
	cr_expect_eq(npending, added, "nothing lost when full");
	free(pending);
	/* what it took still finishes, with results as big as the requests */
	for (int64_t k = id - (int64_t)added + 1; k <= id; k++) {
		unsigned attempts;

		cr_assert_eq(store_start(s, k, &attempts), 0);
		cr_assert_eq(store_finish(s, k, big), 0, "submission %lld", (long long)k);
	}
	cr_assert_eq(store_pending(s, false, &pending, &npending), 0);
	cr_expect_eq(npending, 0, "every one it took is done");
	free(pending);
	free(big);
	store_close(s);
}

Test(store, expire_removes_only_old_done_ones)
{
	struct store *s = open_store(0);
	char token[STORE_TOKEN_LEN + 1], old[STORE_TOKEN_LEN + 1], err[128];
	struct store_sub sub;
	size_t removed = 9;
	int64_t id;

	cr_assert_eq(store_add_done(s, "judge0", NULL, "{}", "{}", wall_ms(), old, err, sizeof(err)),
		     0);
	cr_assert_eq(store_add(s, "judge0", NULL, "{}", NULL, token, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_expire(s, wall_ms() - 60000, 10, &removed), 0);
	cr_expect_eq(removed, 0, "a new one stays");
	cr_assert_eq(store_expire(s, wall_ms() + 60000, 10, &removed), 0);
	cr_expect_eq(removed, 1);
	cr_expect_eq(store_find(s, old, &sub), -ENOENT);
	cr_expect_eq(store_find(s, token, &sub), 0, "a queued one is never expired");
	store_sub_free(&sub);
	store_close(s);
}

Test(store, a_store_readable_by_others_is_made_private)
{
	struct store *s = open_store(0);
	struct stat st;

	store_close(s);
	cr_assert_eq(chmod(path, 0644), 0);
	s = open_store(0);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "an older store is made its owner's alone");
	store_close(s);
}

Test(store, a_newer_schema_and_an_unknown_url_are_refused)
{
	struct store *s = open_store(0);
	char err[256] = "";
	char cmd[512];

	store_close(s);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version = 7' 2>/dev/null || "
		 "python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
		 "c.execute(\"PRAGMA user_version = 7\"); c.commit()' %s", path, path);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(store_open(path, 0, &s, err, sizeof(err)), -EPROTO);
	cr_expect_not_null(strstr(err, "newer than this goboxd"), "%s", err);
	cr_expect_eq(store_open("mysql://h/db", 0, &s, err, sizeof(err)), -EINVAL);
	cr_expect_not_null(strstr(err, "no store backend"), "%s", err);
}

Test(store, a_page_lists_one_apis_submissions_newest_first)
{
	struct store *s = open_store(0);
	char tokens[5][STORE_TOKEN_LEN + 1], other[STORE_TOKEN_LEN + 1], err[128], req[16];
	struct store_sub *page = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int64_t id;

	for (int i = 0; i < 5; i++) {
		snprintf(req, sizeof(req), "{\"i\":%d}", i);
		cr_assert_eq(store_add(s, "judge0", NULL, req, NULL, tokens[i], &id, err, sizeof(err)), 0);
	}
	cr_assert_eq(store_add(s, "other", NULL, "{}", NULL, other, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_list(s, "judge0", NULL, 1, 2, &page, &n, &total), 0);
	cr_expect_eq(total, 5u, "another API's submission is not counted");
	cr_assert_eq(n, 2u);
	cr_expect_str_eq(page[0].token, tokens[3]);
	cr_expect_str_eq(page[0].request, "{\"i\":3}");
	cr_expect_str_eq(page[1].token, tokens[2]);
	store_subs_free(page, n);
	cr_assert_eq(store_list(s, "judge0", NULL, 4, 10, &page, &n, &total), 0);
	cr_assert_eq(n, 1u, "the last page holds what is left");
	cr_expect_str_eq(page[0].token, tokens[0]);
	store_subs_free(page, n);
	cr_assert_eq(store_list(s, "judge0", NULL, 50, 10, &page, &n, &total), 0);
	cr_expect_eq(n, 0u);
	cr_expect_eq(total, 5u);
	store_subs_free(page, n);
	store_close(s);
}

Test(store, a_page_leaves_no_read_open_on_its_connection)
{
	struct store *a = open_store(0), *b = open_store(0);
	char t1[STORE_TOKEN_LEN + 1], t2[STORE_TOKEN_LEN + 1], err[128];
	struct store_sub *page = NULL, sub;
	uint64_t total = 0;
	size_t n = 0;
	int64_t id;

	cr_assert_eq(store_add(a, "judge0", NULL, "{}", NULL, t1, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_add(a, "judge0", NULL, "{}", NULL, t2, &id, err, sizeof(err)), 0);
	/* a page shorter than what is there stops before the end of its rows */
	cr_assert_eq(store_list(a, "judge0", NULL, 0, 1, &page, &n, &total), 0);
	store_subs_free(page, n);
	cr_assert_eq(store_add(b, "judge0", NULL, "{}", NULL, t1, &id, err, sizeof(err)), 0);
	cr_expect_eq(store_find(a, t1, &sub), 0, "what another process added is seen");
	store_sub_free(&sub);
	store_close(a);
	store_close(b);
}

Test(store, counts_by_a_number_of_the_texts_and_by_day)
{
	struct store *s = open_store(0);
	char token[STORE_TOKEN_LEN + 1], err[128];
	struct store_count *c = NULL;
	uint64_t bytes = 0, seen = 0;
	size_t n = 0;
	int64_t id;

	cr_assert_eq(store_add(s, "judge0", NULL, "{\"lang\":71}", NULL, token, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_finish(s, id, "{\"status_id\":3}"), 0);
	cr_assert_eq(store_add(s, "judge0", NULL, "{\"lang\":71}", NULL, token, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_add(s, "judge0", NULL, "{\"lang\":\"x\"}", NULL, token, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_add(s, "other", NULL, "{\"lang\":71}", NULL, token, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_count(s, "judge0", STORE_BY_REQUEST, "lang", 0, &c, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (c[i].has_value && c[i].value == 71 && c[i].state == STORE_DONE)
			cr_expect_eq(c[i].count, 1u);
		else if (c[i].has_value && c[i].value == 71)
			cr_expect_eq(c[i].state, STORE_QUEUED);
		else
			cr_expect_not(c[i].has_value, "a text is not a number");
		seen += c[i].count;
	}
	cr_expect_eq(seen, 3u, "the other API's is not counted");
	free(c);
	cr_assert_eq(store_count(s, "judge0", STORE_BY_RESULT, "status_id", 0, &c, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (c[i].state == STORE_DONE)
			cr_expect(c[i].has_value && c[i].value == 3 && c[i].count == 1);
		else
			cr_expect(!c[i].has_value && c[i].count == 2);
	free(c);
	cr_assert_eq(store_count(s, "judge0", STORE_BY_DAY, NULL, 0, &c, &n), 0);
	seen = 0;
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq((uint64_t)c[i].value, wall_ms() / 86400000u, "made today");
		seen += c[i].count;
	}
	cr_expect_eq(seen, 3u);
	free(c);
	cr_assert_eq(store_count(s, "judge0", STORE_BY_DAY, NULL, wall_ms() + 60000, &c, &n), 0);
	cr_expect_eq(n, 0u, "none made since a time to come");
	free(c);
	cr_expect_eq(store_count(s, "judge0", STORE_BY_REQUEST, "a'b", 0, &c, &n), -EINVAL);
	cr_assert_eq(store_size(s, &bytes), 0);
	cr_expect_gt(bytes, 0u);
	store_close(s);
}

Test(store, a_store_someone_else_could_have_written_is_refused)
{
	struct store *s = open_store(0), *none = NULL;
	char err[512] = "";

	store_close(s);
	cr_assert_eq(chmod(path, 0666), 0);
	cr_expect_eq(store_open(path, 0, &none, err, sizeof(err)), -EPERM);
	cr_expect_null(none);
	cr_expect_not_null(strstr(err, path), "the message names it: %s", err);
	cr_expect_not_null(strstr(err, "written by others"), "%s", err);
	cr_assert_eq(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		cr_assert_eq(chown(path, 65534, 65534), 0);
		cr_expect_eq(store_open(path, 0, &none, err, sizeof(err)), -EPERM);
		cr_expect_not_null(strstr(err, "is owned by uid 65534"), "%s", err);
	}
}

Test(store, the_cap_counts_a_submission_added_finished)
{
	struct store *s = open_store(64 * 1024);
	char token[STORE_TOKEN_LEN + 1], err[128];
	char *big = xmalloc(30 * 1024);
	int rc = 0, added = 0;

	memset(big, 'r', 30 * 1024 - 1);
	big[30 * 1024 - 1] = '\0';
	for (int i = 0; i < 20 && rc == 0; i++) {
		rc = store_add_done(s, "judge0", NULL, "{}", big, 1, token, err, sizeof(err));
		added += rc == 0;
	}
	cr_expect_eq(rc, -ENOSPC, "a waited-for submission fills the store too");
	cr_expect(added >= 1 && added < 3, "%d results of 30 KiB in a 64 KiB store", added);
	rc = store_add(s, "judge0", NULL, big, NULL, token, &(int64_t){ 0 }, err, sizeof(err));
	cr_expect_eq(rc, -ENOSPC, "and then an async one of the same size is refused");
	free(big);
	store_close(s);
}

Test(store, its_directories_are_made_searchable_and_unlistable)
{
	char deep[128], level[128];
	struct store *s = NULL;
	char err[256] = "";
	struct stat st;

	snprintf(deep, sizeof(deep), "%s/state/goboxd/submissions.db", dir);
	cr_assert_eq(store_open(deep, 0, &s, err, sizeof(err)), 0, "%s", err);
	store_close(s);
	snprintf(level, sizeof(level), "%s/state/goboxd", dir);
	cr_assert_eq(stat(level, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0711, "a jail dir under it stays reachable");
	/* one an older goboxd made private is opened up as far as that */
	cr_assert_eq(chmod(level, 0700), 0);
	cr_assert_eq(store_open(deep, 0, &s, err, sizeof(err)), 0, "%s", err);
	store_close(s);
	cr_assert_eq(stat(level, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0711);
	cr_assert_eq(stat(deep, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "the file stays its owner's alone");
}

#define OWNER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define OWNER_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

Test(store, a_submission_keeps_its_owner_and_a_page_can_be_one_owners)
{
	struct store *s = open_store(0);
	char ta[2][STORE_TOKEN_LEN + 1], tb[STORE_TOKEN_LEN + 1], tn[STORE_TOKEN_LEN + 1];
	char err[128];
	struct store_sub sub, *page = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int64_t id;

	cr_assert_eq(store_add(s, "judge0", OWNER_A, "{}", NULL, ta[0], &id, err, sizeof(err)), 0);
	cr_assert_eq(store_add(s, "judge0", OWNER_B, "{}", NULL, tb, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_add_done(s, "judge0", OWNER_A, "{}", "{}", 1, ta[1], err, sizeof(err)), 0);
	cr_assert_eq(store_add(s, "judge0", NULL, "{}", NULL, tn, &id, err, sizeof(err)), 0);
	cr_assert_eq(store_find(s, tb, &sub), 0);
	cr_expect_str_eq(sub.owner, OWNER_B);
	store_sub_free(&sub);
	cr_assert_eq(store_find(s, tn, &sub), 0);
	cr_expect_str_eq(sub.owner, "", "made without a token: nobody's");
	store_sub_free(&sub);
	cr_assert_eq(store_list(s, "judge0", OWNER_A, 0, 10, &page, &n, &total), 0);
	cr_expect_eq(total, 2u, "only A's are counted for A");
	cr_assert_eq(n, 2u);
	cr_expect_str_eq(page[0].token, ta[1]);
	cr_expect_str_eq(page[1].token, ta[0]);
	store_subs_free(page, n);
	cr_assert_eq(store_list(s, "judge0", NULL, 0, 10, &page, &n, &total), 0);
	cr_expect_eq(total, 4u, "an operator's page: everyone's");
	store_subs_free(page, n);
	store_close(s);
}

Test(store, a_version_1_store_gains_owners_and_keeps_its_submissions)
{
	static const char v1[] =
		"CREATE TABLE submissions (id INTEGER PRIMARY KEY AUTOINCREMENT,"
		" token TEXT NOT NULL UNIQUE, api TEXT NOT NULL, state INTEGER NOT NULL,"
		" request TEXT NOT NULL, result TEXT, callback_url TEXT,"
		" created_ms INTEGER NOT NULL, started_ms INTEGER NOT NULL DEFAULT 0,"
		" finished_ms INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0);"
		"INSERT INTO submissions (token, api, state, request, created_ms) VALUES"
		" ('00000000-0000-4000-8000-000000000001', 'judge0', 0, '{}', 1);"
		"PRAGMA user_version = 1;";
	char db_dir[80], err[256] = "";
	struct store *s = NULL;
	struct store_sub sub;
	sqlite3 *db = NULL;

	snprintf(db_dir, sizeof(db_dir), "%s/db", dir);
	cr_assert_eq(mkdir(db_dir, 0700), 0);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	cr_assert_eq(chmod(path, 0600), 0);
	cr_assert_eq(store_open(path, 0, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(store_find(s, "00000000-0000-4000-8000-000000000001", &sub), 0);
	cr_expect_str_eq(sub.owner, "");
	cr_expect_eq(sub.state, STORE_QUEUED);
	store_sub_free(&sub);
	store_close(s);
}

Test(store, a_token_of_another_shape_is_no_submission)
{
	struct store *s = open_store(0);
	char token[STORE_TOKEN_LEN + 1], err[128], upper[STORE_TOKEN_LEN + 1];
	struct store_sub sub;
	int64_t id;

	cr_assert_eq(store_add(s, "judge0", NULL, "{}", NULL, token, &id, err, sizeof(err)), 0);
	cr_expect(store_token_valid(token));
	for (size_t i = 0; i <= STORE_TOKEN_LEN; i++)
		upper[i] = (char)(token[i] >= 'a' && token[i] <= 'f' ? token[i] - 32 : token[i]);
	cr_expect_not(store_token_valid(upper));
	cr_expect_not(store_token_valid("\xff\xfe"));
	cr_expect_not(store_token_valid(""));
	cr_expect_not(store_token_valid("00000000-0000-4000-8000-0000000000012"));
	cr_expect_not(store_token_valid("00000000x0000-4000-8000-000000000001"));
	cr_expect_eq(store_find(s, "\xff\xfe\x80", &sub), -ENOENT);
	cr_expect_eq(store_find(s, "' OR 1=1 --", &sub), -ENOENT);
	cr_expect_eq(store_delete(s, "\xc3\x28"), -ENOENT);
	store_close(s);
}

/* In a child: the store's file may grow no more (RLIMIT_FSIZE), as on a
 * full disk; a refused write tells why, never "not an error". */
Test(store, a_write_the_disk_refuses_says_why)
{
	struct store *s = open_store(0);
	char token[STORE_TOKEN_LEN + 1], err[256] = "";
	char *big = xmalloc(256 * 1024);
	int status;
	pid_t pid;

	memset(big, 'q', 256 * 1024 - 1);
	big[256 * 1024 - 1] = '\0';
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		rc = store_add(s, "judge0", NULL, big, NULL, token, &(int64_t){ 0 }, err,
			       sizeof(err));
		if (rc == 0)
			_exit(3);
		if (strstr(err, "not an error") || !strstr(err, "the submission store"))
			_exit(4);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit %d", WEXITSTATUS(status));
	free(big);
	store_close(s);
}

Test(store, a_claim_is_held_by_its_descriptor_alone)
{
	struct store *s = open_store(0), *t = open_store(0);
	char err[256] = "";
	int fd = -1, again = -1;

	cr_assert_eq(store_claim(s, &fd, err, sizeof(err)), 0, "%s", err);
	cr_assert_geq(fd, 0);
	store_close(s);
	cr_expect_eq(store_claim(t, &again, err, sizeof(err)), -EBUSY,
		     "the claim outlives the connection");
	cr_expect_not_null(strstr(err, "another goboxd serves this store"), "%s", err);
	cr_expect_eq(again, -1);
	close(fd);
	cr_expect_eq(store_claim(t, &again, err, sizeof(err)), 0, "%s", err);
	close(again);
	store_close(t);
}
