/*
 * A worker's side of stored submissions against a SQLite store in a
 * temporary directory: taken in (POST), taken to run, a result the store
 * refuses kept and stored on a later tick, what is still refused when
 * the worker ends handed to the master. The store refuses as a full disk
 * does: the file may grow no more (RLIMIT_FSIZE; each test runs in a
 * process of its own).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/store.h"
#include "common/util.h"
#include "worker/outbox.h"
#include "worker/submissions.h"

#define BIG_RESULT (256 * 1024)

static char dir[] = "/tmp/goboxd-subs-XXXXXX";
static char db[96];
static struct config cfg;
static struct langtab *langs;

/* What the worker's hooks told the master. */
static int64_t submitted[8], deferred[8];
static size_t nsubmitted, ndeferred;

static void on_submitted(void *arg, int64_t id)
{
	(void)arg;
	cr_assert_lt(nsubmitted, 8);
	submitted[nsubmitted++] = id;
}

static void on_deferred(void *arg, int64_t id)
{
	(void)arg;
	cr_assert_lt(ndeferred, 8);
	deferred[ndeferred++] = id;
}

static void setup(void)
{
	static const char py[] = "id: py3\nname: Python\nsource_filename: solution.py\n"
				 "judge0: { id: 71, name: \"Python (3.11.2)\" }\n"
				 "run: { cmd: /usr/bin/python3, args: [\"{{source}}\"] }\n"
				 "probe: [/usr/bin/python3]\n";
	char path[128], err[512] = "";
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/py3.yaml", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(py, f);
	fclose(f);
	config_defaults(&cfg);
	snprintf(db, sizeof(db), "%s/db/submissions.db", dir);
	cfg.store = db;
	cfg.store_max_bytes = 0;
	cr_assert_eq(langtab_load(dir, &cfg.limits_max, &langs, err, sizeof(err)), 0, "%s", err);
	nsubmitted = ndeferred = 0;
	/* the store's file that may not grow fails its write, it does not kill */
	signal(SIGXFSZ, SIG_IGN);
}

static void teardown(void)
{
	char cmd[128];

	langtab_free(langs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(submissions, .init = setup, .fini = teardown);

static void open_subs(struct submissions *s)
{
	memset(s, 0, sizeof(*s));
	s->submitted = on_submitted;
	s->deferred = on_deferred;
	submissions_open(s, &cfg, langs, NULL, false, NULL, NULL);
	cr_assert_not_null(s->store, "%s", s->error);
}

/* The disk is full (writes past a few KiB fail), or no longer. */
static void disk_full(bool full)
{
	struct rlimit rl;

	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = full ? 64 * 1024 : rl.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

/* POST /submissions as a client would: the new one's id. */
static int64_t post(struct submissions *s, const char *body)
{
	struct http_request r;
	struct auth_who who = { .is_operator = true };
	struct buf out;
	int status;

	memset(&r, 0, sizeof(r));
	strcpy(r.method, "POST");
	r.path = "/submissions";
	buf_init(&r.body, 0);
	cr_assert_eq(buf_append(&r.body, body, strlen(body)), 0);
	buf_init(&out, 0);
	status = submissions_handle(s, &r, &who, true, "", &out);
	cr_assert_eq(status, 201, "%.*s", (int)out.len, out.data);
	cr_assert_not_null(strstr(out.data, "\"token\""), "%s", out.data);
	buf_free(&out);
	buf_free(&r.body);
	cr_assert_gt(nsubmitted, 0, "the master hears of it");
	return submitted[nsubmitted - 1];
}

static const char hello[] = "{\"source_code\": \"print(1)\", \"language_id\": 71}";

static enum store_state state_of(struct submissions *s, int64_t id, char **result)
{
	struct store_sub sub;
	enum store_state st;

	cr_assert_eq(store_get(s->store, id, &sub), 0);
	st = sub.state;
	if (result)
		*result = sub.result ? xstrdup(sub.result) : NULL;
	store_sub_free(&sub);
	return st;
}

/* Taken to run, as a worker the master dispatched it to does. */
static void take(struct submissions *s, int64_t id)
{
	struct job_request *job = NULL;

	cr_assert_eq(submissions_take(s, id, &job), 0);
	cr_assert_not_null(job);
	request_free(job);
	cr_assert_eq(state_of(s, id, NULL), STORE_RUNNING);
}

static char *big_result(char fill)
{
	char *r = xmalloc(BIG_RESULT + 1);

	memset(r, fill, BIG_RESULT);
	r[0] = '"';
	r[BIG_RESULT - 1] = '"';
	r[BIG_RESULT] = '\0';
	return r;
}

/* The result, refused by the store (its disk full) as the job thread's
 * write was, and kept by the loop. */
static void refused_then_kept(struct submissions *s, int64_t id, char fill)
{
	char *result = big_result(fill);
	int rc;

	disk_full(true);
	rc = store_finish(s->store, id, result);
	disk_full(false);
	cr_assert_lt(rc, 0, "the full disk refuses it");
	submissions_keep(s, id, result);
}

/* Its retry is due now (rather than a second from now). */
static void tick_due(struct submissions *s)
{
	s->unstored_retry_ms = now_ms();
	submissions_tick(s);
}

Test(submissions, one_taken_in_runs_once_and_a_done_one_never_again)
{
	struct submissions s;
	struct job_request *job = NULL;
	int64_t id;

	open_subs(&s);
	id = post(&s, hello);
	cr_assert_eq(state_of(&s, id, NULL), STORE_QUEUED);
	take(&s, id);
	cr_assert_eq(store_finish(s.store, id, "{}"), 0);
	cr_expect_eq(submissions_take(&s, id, &job), -ENOENT);
	cr_expect_null(job);
	cr_expect_eq(submissions_take(&s, id + 1000, &job), -ENOENT, "one that never was");
	submissions_close(&s);
}

Test(submissions, one_whose_worker_died_in_every_attempt_is_failed_not_run)
{
	struct submissions s;
	struct job_request *job = NULL;
	unsigned attempts;
	char *result;
	int64_t id;

	open_subs(&s);
	id = post(&s, hello);
	/* each attempt's worker died, and it was dispatched again */
	for (int i = 0; i < SUBMISSION_MAX_ATTEMPTS; i++)
		cr_assert_eq(store_start(s.store, id, &attempts), 0);
	cr_expect_eq(submissions_take(&s, id, &job), -ECANCELED);
	cr_expect_null(job);
	cr_assert_eq(state_of(&s, id, &result), STORE_DONE);
	cr_expect_not_null(strstr(result, "every attempt"), "%s", result);
	free(result);
	submissions_close(&s);
}

Test(submissions, a_result_the_store_refused_is_stored_on_a_tick_once_it_takes_writes)
{
	struct submissions s;
	char *result, *want = big_result('r');
	int64_t id;

	open_subs(&s);
	id = post(&s, hello);
	take(&s, id);
	refused_then_kept(&s, id, 'r');
	cr_assert_gt(s.unstored_retry_ms, 0, "a retry is planned");

	/* due, and the disk still full: kept, and tried again later */
	disk_full(true);
	tick_due(&s);
	disk_full(false);
	cr_assert_not_null(s.unstored);
	cr_assert_gt(s.unstored_retry_ms, now_ms());
	/* not due yet: the store would take it, but it is not offered */
	submissions_tick(&s);
	cr_assert_not_null(s.unstored);
	cr_assert_eq(state_of(&s, id, NULL), STORE_RUNNING);

	tick_due(&s);
	cr_assert_null(s.unstored);
	cr_expect_eq(s.unstored_bytes, 0);
	cr_expect_eq(s.unstored_retry_ms, 0, "nothing more to retry");
	cr_assert_eq(state_of(&s, id, &result), STORE_DONE);
	cr_expect_str_eq(result, want);
	cr_expect_eq(ndeferred, 0);
	free(result);
	free(want);
	submissions_close(&s);
}

Test(submissions, a_result_stored_late_is_called_back)
{
	static const char with_callback[] = "{\"source_code\": \"print(1)\", \"language_id\": 71,"
					    " \"callback_url\": \"http://cb.example/done\"}";
	struct outbox cb;
	struct submissions s;
	struct outbox_item *it;
	uint64_t wait;
	int64_t id;

	/* the senders' queue without its threads: what is added waits there */
	memset(&cb, 0, sizeof(cb));
	cb.running = true;
	cr_assert_eq(pthread_mutex_init(&cb.mu, NULL), 0);
	cr_assert_eq(pthread_cond_init(&cb.cv, NULL), 0);
	cb.q = outbox_queue_new(1 << 20, 1 << 20, 1);
	open_subs(&s);
	s.callbacks = &cb;
	id = post(&s, with_callback);
	take(&s, id);
	refused_then_kept(&s, id, 'c');
	disk_full(true);
	tick_due(&s);
	disk_full(false);
	cr_expect_eq(outbox_queue_bytes(cb.q), 0, "no callback before it is stored");
	tick_due(&s);
	it = outbox_queue_take(cb.q, now_ms(), &wait);
	cr_assert_not_null(it, "its callback waits to be sent");
	cr_expect_str_eq(it->url, "http://cb.example/done");
	cr_expect_eq(it->id, id);
	cr_expect_not_null(strstr(it->body, "\"token\""), "%s", it->body);
	cr_assert_not(outbox_queue_done(cb.q, it, 0, now_ms()));
	outbox_item_free(it);
	submissions_close(&s);
	outbox_queue_free(cb.q);
	pthread_cond_destroy(&cb.cv);
	pthread_mutex_destroy(&cb.mu);
}

Test(submissions, flush_hands_the_still_refused_to_the_master_in_order)
{
	struct submissions s;
	int64_t a, b;

	open_subs(&s);
	a = post(&s, hello);
	b = post(&s, hello);
	take(&s, a);
	take(&s, b);
	refused_then_kept(&s, b, 'b');
	refused_then_kept(&s, a, 'a');
	disk_full(true);
	submissions_flush(&s);
	disk_full(false);
	cr_assert_eq(ndeferred, 2, "each is run again");
	cr_expect_eq(deferred[0], b);
	cr_expect_eq(deferred[1], a);
	cr_expect_null(s.unstored);
	cr_expect_eq(s.unstored_bytes, 0);
	cr_expect_eq(state_of(&s, a, NULL), STORE_RUNNING);
	submissions_close(&s);
}

Test(submissions, flush_stores_what_the_store_takes_and_defers_nothing)
{
	struct submissions s;
	char *result;
	int64_t id;

	open_subs(&s);
	id = post(&s, hello);
	take(&s, id);
	refused_then_kept(&s, id, 'f');
	submissions_flush(&s);
	cr_expect_eq(ndeferred, 0);
	cr_expect_null(s.unstored);
	cr_assert_eq(state_of(&s, id, &result), STORE_DONE);
	cr_expect_eq(strlen(result), BIG_RESULT);
	free(result);
	submissions_close(&s);
}
