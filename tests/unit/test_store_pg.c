/*
 * The PostgreSQL store (common/store_pg.c) against a real server: a
 * private cluster per test (tests/pg-cluster), as two nodes would use it.
 * Skipped where PostgreSQL's server is not installed (setup.sh installs
 * it for the tests).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/store.h"
#include "common/util.h"

static char dir[] = "/var/tmp/goboxd-pg-XXXXXX";
static char url[256];
static bool missing;

static int cluster(const char *what, char *out, size_t outlen)
{
	char cmd[4096 + 128];
	FILE *p;
	int st;

	/* quoted: the checkout's path may hold spaces (configure refuses
	 * quotes and $ in it) */
	snprintf(cmd, sizeof(cmd), "'%s/tests/pg-cluster' %s %s/c", GOBOXD_SRCDIR, what, dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (out && !fgets(out, (int)outlen, p))
		out[0] = '\0';
	st = pclose(p);
	if (out)
		out[strcspn(out, "\n")] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void setup(void)
{
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0711), 0); /* the server runs as nobody */
	rc = cluster("start", url, sizeof(url));
	missing = rc == 77;
	cr_assert(rc == 0 || rc == 77, "tests/pg-cluster start: %d", rc);
}

static void teardown(void)
{
	char cmd[128];

	if (!missing)
		cluster("remove", NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(store_pg, .init = setup, .fini = teardown, .timeout = 60);

#define NEED_SERVER()                                                   \
	do {                                                            \
		if (missing)                                            \
			cr_skip_test("PostgreSQL's server is not installed"); \
	} while (0)

static struct store *node(const char *name)
{
	struct store *s = NULL;
	char err[256] = "";

	cr_assert_eq(store_open(url, 0, &s, err, sizeof(err)), 0, "%s", err);
	store_set_node(s, name);
	return s;
}

/* One value the server computes, as text (or "" for none). */
static void sql(const char *q, char *out, size_t outlen)
{
	PGconn *c = PQconnectdb(url);
	PGresult *r;

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	r = PQexec(c, q);
	cr_assert(PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK,
		  "%s: %s", q, PQerrorMessage(c));
	if (out)
		snprintf(out, outlen, "%s",
			 PQntuples(r) > 0 && PQnfields(r) > 0 ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	PQfinish(c);
}

static int64_t add(struct store *s, const char *request, const char *callback, char *token)
{
	char err[256] = "";
	int64_t id = 0;

	cr_assert_eq(store_add(s, "judge0", NULL, request, callback, token, &id, err, sizeof(err)), 0,
		     "%s", err);
	return id;
}

Test(store_pg, the_schema_is_made_once_and_a_newer_one_refused)
{
	struct store *a, *b;
	char v[32], err[256] = "";

	NEED_SERVER();
	a = node("a");
	b = node("b"); /* a second open finds it made */
	cr_expect(store_url_shared(url));
	sql("SELECT value FROM goboxd_meta WHERE key = 'schema_version'", v, sizeof(v));
	cr_expect_str_eq(v, "2");
	store_close(a);
	store_close(b);
	sql("UPDATE goboxd_meta SET value = '99' WHERE key = 'schema_version'", NULL, 0);
	cr_expect_eq(store_open(url, 0, &a, err, sizeof(err)), -EPROTO);
	cr_expect_not_null(strstr(err, "newer than this goboxd"), "%s", err);
	cr_expect_null(a);
}

Test(store_pg, an_unreachable_server_is_an_error_without_the_password)
{
	struct store *s = NULL;
	char err[256] = "";

	cr_expect_eq(store_open("postgresql://u:secret@127.0.0.1:1/db", 0, &s, err, sizeof(err)),
		     -EIO);
	cr_expect_null(s);
	cr_expect_not_null(strstr(err, "PostgreSQL at 127.0.0.1"), "%s", err);
	cr_expect_null(strstr(err, "secret"), "%s", err);
}

Test(store_pg, nodes_lease_each_submission_once_oldest_first)
{
	struct store *a, *b;
	struct store_sub sa, sb, none;
	char t1[STORE_TOKEN_LEN + 1], t2[STORE_TOKEN_LEN + 1], k1[STORE_TOKEN_LEN + 1];
	char k2[STORE_TOKEN_LEN + 1], k3[STORE_TOKEN_LEN + 1];
	int64_t id1, id2;

	NEED_SERVER();
	a = node("a");
	b = node("b");
	id1 = add(a, "{\"n\":1}", NULL, t1);
	id2 = add(b, "{\"n\":2}", NULL, t2);
	cr_assert_eq(store_lease(b, 30000, &sb, k1), 0);
	cr_expect_eq(sb.id, id1, "the oldest first");
	cr_expect_str_eq(sb.request, "{\"n\":1}");
	cr_expect_eq(sb.state, STORE_RUNNING);
	cr_expect_eq(sb.attempts, 1);
	cr_assert_eq(store_lease(a, 30000, &sa, k2), 0);
	cr_expect_eq(sa.id, id2);
	cr_expect_eq(store_lease(a, 30000, &none, k3), -ENOENT, "nothing else waits");
	cr_expect_eq(store_renew(b, id1, k1, 30000), 0);
	cr_expect_eq(store_renew(b, id1, k2, 30000), -ENOENT, "not with another's key");
	store_sub_free(&sa);
	store_sub_free(&sb);
	store_close(a);
	store_close(b);
}

Test(store_pg, a_page_lists_the_fleets_submissions_newest_first)
{
	struct store *a, *b;
	char t[4][STORE_TOKEN_LEN + 1], err[128];
	struct store_sub *page = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int64_t id;

	NEED_SERVER();
	a = node("a");
	b = node("b");
	add(a, "{\"n\":0}", NULL, t[0]);
	add(b, "{\"n\":1}", NULL, t[1]);
	add(a, "{\"n\":2}", NULL, t[2]);
	cr_assert_eq(store_add(b, "other", NULL, "{}", NULL, t[3], &id, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(store_list(b, "judge0", NULL, 0, 2, &page, &n, &total), 0);
	cr_expect_eq(total, 3u, "every node's, and no other API's");
	cr_assert_eq(n, 2u);
	cr_expect_str_eq(page[0].token, t[2]);
	cr_expect_str_eq(page[1].token, t[1]);
	cr_expect_str_eq(page[1].request, "{\"n\":1}");
	store_subs_free(page, n);
	cr_assert_eq(store_list(a, "judge0", NULL, 2, 2, &page, &n, &total), 0);
	cr_assert_eq(n, 1u);
	cr_expect_str_eq(page[0].token, t[0]);
	store_subs_free(page, n);
	store_close(a);
	store_close(b);
}

Test(store_pg, counts_by_a_number_of_the_texts_and_by_day)
{
	struct store *a;
	char t[3][STORE_TOKEN_LEN + 1];
	struct store_count *c = NULL;
	uint64_t bytes = 0, seen = 0;
	size_t n = 0;

	NEED_SERVER();
	a = node("a");
	cr_assert_eq(store_finish(a, add(a, "{\"lang\":71}", NULL, t[0]), "{\"status_id\":4}"), 0);
	add(a, "{\"lang\":71}", NULL, t[1]);
	add(a, "{\"lang\":\"x\"}", NULL, t[2]);
	cr_assert_eq(store_count(a, "judge0", STORE_BY_REQUEST, "lang", 0, &c, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (c[i].has_value)
			cr_expect_eq(c[i].value, 71);
		else
			cr_expect_eq(c[i].count, 1u, "a text is not a number");
		seen += c[i].count;
	}
	cr_expect_eq(seen, 3u);
	free(c);
	cr_assert_eq(store_count(a, "judge0", STORE_BY_RESULT, "status_id", 0, &c, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (c[i].state == STORE_DONE)
			cr_expect(c[i].has_value && c[i].value == 4 && c[i].count == 1);
		else
			cr_expect(!c[i].has_value && c[i].count == 2);
	free(c);
	cr_assert_eq(store_count(a, "judge0", STORE_BY_DAY, NULL, 0, &c, &n), 0);
	seen = 0;
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq((uint64_t)c[i].value, wall_ms() / 86400000u, "made today");
		seen += c[i].count;
	}
	cr_expect_eq(seen, 3u);
	free(c);
	cr_assert_eq(store_size(a, &bytes), 0);
	cr_expect_gt(bytes, 0u);
	store_close(a);
}

Test(store_pg, an_ended_lease_hands_it_on_and_the_first_result_stands)
{
	struct store *a, *b;
	struct store_sub sa, sb, got;
	char t[STORE_TOKEN_LEN + 1], ka[STORE_TOKEN_LEN + 1], kb[STORE_TOKEN_LEN + 1];
	char v[64];
	int64_t id;

	NEED_SERVER();
	a = node("a");
	b = node("b");
	id = add(a, "{}", NULL, t);
	cr_assert_eq(store_lease(a, 200, &sa, ka), 0);
	cr_expect_eq(store_lease(b, 30000, &sb, kb), -ENOENT, "a's while its lease lasts");
	usleep(400 * 1000);
	cr_assert_eq(store_lease(b, 30000, &sb, kb), 0, "a's lease ended: b takes it");
	cr_expect_eq(sb.id, id);
	cr_expect_eq(sb.attempts, 2);
	cr_expect_eq(store_renew(a, id, ka, 30000), -ENOENT, "a lost it");
	cr_expect_eq(store_finish(b, id, "{\"by\":\"b\"}"), 0);
	cr_expect_eq(store_finish(a, id, "{\"by\":\"a\"}"), -ENOENT, "written once");
	cr_assert_eq(store_find(a, t, &got), 0);
	cr_expect_eq(got.state, STORE_DONE);
	cr_expect_str_eq(got.result, "{\"by\":\"b\"}");
	store_sub_free(&got);
	sql("SELECT finished_by || ' ' || finished_count || ' ' || node FROM goboxd_submissions",
	    v, sizeof(v));
	cr_expect_str_eq(v, "b 1 b");
	store_sub_free(&sa);
	store_sub_free(&sb);
	store_close(a);
	store_close(b);
}

Test(store_pg, a_callback_not_delivered_in_time_goes_to_another_node)
{
	struct store *a, *b;
	struct store_sub s, *due = NULL;
	char t[STORE_TOKEN_LEN + 1], k[STORE_TOKEN_LEN + 1], v[32];
	size_t n = 9;
	int64_t id;

	NEED_SERVER();
	a = node("a");
	b = node("b");
	id = add(a, "{}", "http://example.test/cb", t);
	cr_assert_eq(store_lease(a, 30000, &s, k), 0);
	cr_assert_eq(store_finish(a, id, "{}"), 0);
	cr_expect_eq(store_callbacks_due(b, 60000, 8, &due, &n), 0);
	cr_expect_eq(n, 0, "the finisher has a minute to send it");
	free(due);
	/* a died without sending it: its minute is over */
	sql("UPDATE goboxd_submissions SET callback_due_ms = 0", NULL, 0);
	cr_assert_eq(store_callbacks_due(b, 60000, 8, &due, &n), 0);
	cr_assert_eq(n, 1);
	cr_expect_eq(due[0].id, id);
	cr_expect_str_eq(due[0].token, t);
	cr_expect_str_eq(due[0].callback_url, "http://example.test/cb");
	store_sub_free(&due[0]);
	free(due);
	cr_expect_eq(store_callbacks_due(a, 60000, 8, &due, &n), 0);
	cr_expect_eq(n, 0, "b's now, for its minute");
	free(due);
	cr_expect_eq(store_callback_done(b, id), 0);
	sql("SELECT callback_state FROM goboxd_submissions", v, sizeof(v));
	cr_expect_str_eq(v, "2");
	sql("UPDATE goboxd_submissions SET callback_due_ms = 0", NULL, 0);
	cr_expect_eq(store_callbacks_due(a, 60000, 8, &due, &n), 0);
	cr_expect_eq(n, 0, "delivered: never again");
	free(due);
	store_sub_free(&s);
	store_close(a);
	store_close(b);
}

Test(store_pg, a_callback_is_given_up_after_its_rounds)
{
	struct store *a;
	struct store_sub s, *due = NULL;
	char t[STORE_TOKEN_LEN + 1], k[STORE_TOKEN_LEN + 1], v[32];
	size_t n = 0, total = 0;
	int64_t id;

	NEED_SERVER();
	a = node("a");
	id = add(a, "{}", "http://example.test/cb", t);
	cr_assert_eq(store_lease(a, 30000, &s, k), 0);
	cr_assert_eq(store_finish(a, id, "{}"), 0);
	for (int i = 0; i < 10; i++) {
		sql("UPDATE goboxd_submissions SET callback_due_ms = 0", NULL, 0);
		cr_assert_eq(store_callbacks_due(a, 60000, 8, &due, &n), 0);
		total += n;
		for (size_t j = 0; j < n; j++)
			store_sub_free(&due[j]);
		free(due);
	}
	cr_expect_eq(total, 4, "four rounds after the finisher's, then none");
	sql("SELECT callback_state FROM goboxd_submissions", v, sizeof(v));
	cr_expect_str_eq(v, "3");
	store_sub_free(&s);
	store_close(a);
}

Test(store_pg, expiry_keeps_what_waits_and_what_still_calls_back)
{
	struct store *a;
	struct store_sub s;
	char t1[STORE_TOKEN_LEN + 1], t2[STORE_TOKEN_LEN + 1], t3[STORE_TOKEN_LEN + 1];
	char k[STORE_TOKEN_LEN + 1], v[32], err[128];
	size_t removed = 0;
	int64_t id2;

	NEED_SERVER();
	a = node("a");
	cr_assert_eq(store_add_done(a, "judge0", NULL, "{}", "{}", 1, t1, err, sizeof(err)), 0, "%s",
		     err);
	id2 = add(a, "{}", "http://example.test/cb", t2);
	add(a, "{}", NULL, t3);
	cr_assert_eq(store_lease(a, 30000, &s, k), 0);
	cr_assert_eq(s.id, id2);
	cr_assert_eq(store_finish(a, id2, "{}"), 0);
	cr_expect_eq(store_expire(a, wall_ms() + 60000, 100, &removed), 0);
	cr_expect_eq(removed, 1, "only the one done with no callback due");
	cr_expect_eq(store_delete(a, t3), -EBUSY, "queued");
	cr_expect_eq(store_delete(a, t1), -ENOENT, "gone");
	cr_expect_eq(store_callback_done(a, id2), 0);
	cr_expect_eq(store_delete(a, t2), 0);
	sql("SELECT count(*) FROM goboxd_submissions", v, sizeof(v));
	cr_expect_str_eq(v, "1");
	store_sub_free(&s);
	store_close(a);
}

Test(store_pg, the_overview_counts_the_fleet_and_its_beats)
{
	struct store *a, *b;
	struct store_overview ov;
	struct store_sub s;
	char t[STORE_TOKEN_LEN + 1], k[STORE_TOKEN_LEN + 1];

	NEED_SERVER();
	a = node("node-a");
	b = node("node-b");
	add(a, "{}", NULL, t);
	add(a, "{}", NULL, t);
	add(b, "{}", NULL, t);
	cr_assert_eq(store_lease(b, 30000, &s, k), 0);
	cr_assert_eq(store_beat(a, 1000, 4, 0), 0);
	cr_assert_eq(store_beat(b, 2000, 2, 1), 0);
	usleep(20 * 1000);
	cr_assert_eq(store_overview(a, &ov), 0);
	cr_expect_eq(ov.queued, 2);
	cr_expect_eq(ov.running, 1);
	cr_expect_geq(ov.oldest_queued_age_ms, 1);
	cr_assert_eq(ov.nodes, 2);
	cr_expect_str_eq(ov.node[0].name, "node-a");
	cr_expect_eq(ov.node[0].workers, 4);
	cr_expect_str_eq(ov.node[1].name, "node-b");
	cr_expect_eq(ov.node[1].running, 1);
	cr_expect_eq(ov.node[1].started_ms, 2000);
	cr_expect_lt(ov.node[1].heartbeat_age_ms, 10000);
	store_sub_free(&s);
	store_close(a);
	store_close(b);
}

Test(store_pg, a_connection_that_broke_is_made_again)
{
	struct store *a;
	struct store_sub s;
	char t[STORE_TOKEN_LEN + 1], t2[STORE_TOKEN_LEN + 1];

	NEED_SERVER();
	a = node("a");
	add(a, "{}", NULL, t);
	cr_assert_eq(cluster("restart", NULL, 0), 0);
	cr_assert_eq(store_find(a, t, &s), 0, "the next operation works on a new connection");
	store_sub_free(&s);
	add(a, "{}", NULL, t2);
	store_close(a);
}

Test(store_pg, a_database_made_anew_behind_the_url_gets_the_schema_again)
{
	struct store *a;
	struct store_sub s;
	char t[STORE_TOKEN_LEN + 1], v[32];

	NEED_SERVER();
	a = node("a");
	sql("DROP TABLE goboxd_submissions, goboxd_nodes, goboxd_meta", NULL, 0);
	add(a, "{}", NULL, t);
	cr_assert_eq(store_find(a, t, &s), 0);
	store_sub_free(&s);
	sql("SELECT value FROM goboxd_meta WHERE key = 'schema_version'", v, sizeof(v));
	cr_expect_str_eq(v, "2");
	store_close(a);
}

Test(store_pg, a_failure_keeps_the_servers_words)
{
	struct store *a;
	struct store_overview ov;

	NEED_SERVER();
	a = node("a");
	cr_expect_str_eq(store_error(a), "");
	cluster("stop", NULL, 0);
	cr_expect_eq(store_overview(a, &ov), -EIO);
	cr_expect_neq(store_error(a)[0], '\0');
	cr_expect_not_null(strstr(store_error(a), "127.0.0.1"), "%s", store_error(a));
	store_close(a);
}

#define OWNER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

Test(store_pg, a_submission_keeps_its_owner_and_a_page_can_be_one_owners)
{
	struct store *a;
	char t[3][STORE_TOKEN_LEN + 1], err[128];
	struct store_sub sub, *page = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int64_t id;

	NEED_SERVER();
	a = node("a");
	cr_assert_eq(store_add(a, "judge0", OWNER_A, "{}", NULL, t[0], &id, err, sizeof(err)), 0,
		     "%s", err);
	add(a, "{}", NULL, t[1]);
	cr_assert_eq(store_add_done(a, "judge0", OWNER_A, "{}", "{}", 1, t[2], err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(store_find(a, t[0], &sub), 0);
	cr_expect_str_eq(sub.owner, OWNER_A);
	store_sub_free(&sub);
	cr_assert_eq(store_list(a, "judge0", OWNER_A, 0, 10, &page, &n, &total), 0);
	cr_expect_eq(total, 2u);
	cr_assert_eq(n, 2u);
	cr_expect_str_eq(page[0].token, t[2]);
	cr_expect_str_eq(page[1].token, t[0]);
	store_subs_free(page, n);
	cr_assert_eq(store_list(a, "judge0", NULL, 0, 10, &page, &n, &total), 0);
	cr_expect_eq(total, 3u);
	store_subs_free(page, n);
	store_close(a);
}

Test(store_pg, a_token_that_is_not_text_is_no_submission_and_no_failure)
{
	struct store *a;
	struct store_sub sub;

	NEED_SERVER();
	a = node("a");
	/* PostgreSQL refuses bytes that are no UTF-8 with an error, which
	 * used to be the store's failure (503) */
	cr_expect_eq(store_find(a, "\xff\xfe\x80-not-utf-8", &sub), -ENOENT);
	cr_expect_eq(store_delete(a, "\xc3\x28"), -ENOENT);
	cr_expect_str_eq(store_error(a), "");
	store_close(a);
}

Test(store_pg, a_version_1_schema_gains_owners)
{
	struct store *a;
	char token[STORE_TOKEN_LEN + 1], v[32];
	struct store_sub sub;

	NEED_SERVER();
	a = node("a");
	add(a, "{}", NULL, token);
	store_close(a);
	sql("DROP INDEX goboxd_submissions_owner; ALTER TABLE goboxd_submissions DROP COLUMN owner;"
	    " UPDATE goboxd_meta SET value = '1' WHERE key = 'schema_version'", NULL, 0);
	a = node("a");
	sql("SELECT value FROM goboxd_meta WHERE key = 'schema_version'", v, sizeof(v));
	cr_expect_str_eq(v, "2");
	cr_assert_eq(store_find(a, token, &sub), 0);
	cr_expect_str_eq(sub.owner, "");
	store_sub_free(&sub);
	store_close(a);
}
