#include "autoconf.h"

#include "worker/jobthread.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/api.h"
#include "worker/http/api_judge0_result.h"
#include "worker/http/api_judge0_show.h"
#include "worker/http/http.h"
#include "worker/jailpool.h"
#include "worker/sandbox/jail.h"
#include "worker/submissions.h"

/* One line of a streamed answer, framed as a chunk (the head before the
 * first), handed to the loop. */
static void stream_line(struct jobthread *j, cJSON *line)
{
	char *text = line ? cJSON_PrintUnformatted(line) : NULL;
	uint64_t one = 1;
	struct buf b;

	cJSON_Delete(line);
	if (!text)
		return;
	buf_init(&b, 0);
	if (!j->head_sent)
		http_format_chunked_head(&b, 200, "application/x-ndjson", j->ka, j->hdr);
	j->head_sent = true;
	/* the line and its end in one chunk: a reader sees whole lines */
	buf_printf(&b, "%zx\r\n%s\n\r\n", strlen(text) + 1, text);
	free(text);
	pthread_mutex_lock(&j->mu);
	if (j->chunks.len == 0) {
		buf_free(&j->chunks);
		j->chunks = b;
	} else {
		buf_append(&j->chunks, b.data, b.len);
		buf_free(&b);
	}
	pthread_mutex_unlock(&j->mu);
	if (write(j->evfd, &one, sizeof(one)) < 0)
		log_error("write(eventfd): %s", strerror(errno));
}

/*
 * A step of a streamed job is judged: its line goes out now, and what it
 * captured is freed (the line holds a copy, and nothing reads it again),
 * so a long job holds its output once, not until the end.
 */
static void stream_step(void *arg, const struct job_request *req, struct job_result *res,
			enum job_event ev, size_t index)
{
	struct jobthread *j = arg;

	stream_line(j, api_run_answer_event(req, res, ev, index));
	if (ev == JOB_EV_TEST) {
		sandbox_step_result_free(&res->tests[index].r);
		sandbox_step_result_free(&res->tests[index].judge);
		buf_free(&res->tests[index].file_out);
	}
}

static void wake_loop(struct jobthread *j)
{
	uint64_t one = 1;

	if (write(j->evfd, &one, sizeof(one)) < 0)
		log_error("write(eventfd): %s", strerror(errno));
}

/* A live session's program runs: its pipes are the loop's now. */
static void live_started(void *arg, int in_w, int out_r, int err_r)
{
	struct jobthread *j = arg;

	pthread_mutex_lock(&j->mu);
	j->live.started = true;
	j->live.fds[0] = in_w;
	j->live.fds[1] = out_r;
	j->live.fds[2] = err_r;
	pthread_mutex_unlock(&j->mu);
	wake_loop(j);
}

static int live_take_signal(void *arg)
{
	struct jobthread *j = arg;
	int sig = 0;

	pthread_mutex_lock(&j->mu);
	if (j->nsignals) {
		sig = j->signals[0];
		memmove(j->signals, j->signals + 1, --j->nsignals * sizeof(j->signals[0]));
	}
	pthread_mutex_unlock(&j->mu);
	return sig;
}

/* A live session's build wrote: to the client as it comes. */
static void live_build_output(void *arg, bool is_err, const char *data, size_t len)
{
	struct jobthread *j = arg;

	pthread_mutex_lock(&j->mu);
	j->build_streamed = true;
	buf_append(is_err ? &j->live.build_err : &j->live.build_out, data, len);
	pthread_mutex_unlock(&j->mu);
	wake_loop(j);
}

/* A live session's build is over: its output went as it came, or (a
 * cached build, which ran nothing) goes now. */
static void live_step(void *arg, const struct job_request *req, struct job_result *res,
		      enum job_event ev, size_t index)
{
	struct jobthread *j = arg;
	const struct step_result *b = &res->build;

	if (ev != JOB_EV_BUILD)
		return;
	pthread_mutex_lock(&j->mu);
	j->live.built = true;
	j->live.build_ok = res->build_status == BS_OK;
	j->live.build_code = b->outcome.exited ? b->outcome.exit_code : -1;
	j->live.build_signal = b->outcome.term_signal;
	if (!j->build_streamed) {
		buf_append(&j->live.build_out, b->out.data, b->out.len);
		buf_append(&j->live.build_err, b->err.data, b->err.len);
	} else if (b->out_truncated || b->err_truncated) {
		buf_puts(b->err_truncated ? &j->live.build_err : &j->live.build_out,
			 TRUNCATION_MARKER);
	}
	pthread_mutex_unlock(&j->mu);
	wake_loop(j);
}

static void run_in_jail(struct jobthread *t, struct jail *j)
{
	struct job_env env = t->env;
	struct session_spec live = { .max_ms = t->env.cfg->session_max_time_ms,
				     .tty = t->tty.on, .rows = t->tty.rows, .cols = t->tty.cols,
				     .ctl_fd = t->ctl_fd, .started = live_started,
				     .build_output = live_build_output,
				     .take_signal = live_take_signal, .arg = t };

	env.jail = j;
	if (t->stream) {
		env.on_event = stream_step;
		env.event_arg = t;
	}
	if (t->session) {
		env.session = &live;
		env.on_event = live_step;
		env.event_arg = t;
	}

	if (j) {
		t->rc = job_run(&env, t->req, &t->res);
		return;
	}
	memset(&t->res, 0, sizeof(t->res));
	t->res.internal_error = true;
	snprintf(t->res.internal_msg, sizeof(t->res.internal_msg),
		 "no jail could be started (see the worker's log)");
	t->rc = -EIO;
}

/*
 * The end of a streamed answer: the summary line, or the sandbox's
 * failure when it came after the first line (the status, 200, is sent),
 * then the last chunk.
 */
static void stream_tail(struct jobthread *j)
{
	cJSON *line;
	char *text;

	if (j->rc < 0 || j->res.internal_error) {
		cJSON *err;

		j->status = 500;
		line = cJSON_CreateObject();
		cJSON_AddStringToObject(line, "type", "error");
		err = cJSON_AddObjectToObject(line, "error");
		cJSON_AddStringToObject(err, "code", "internal_error");
		cJSON_AddStringToObject(err, "message", j->res.internal_msg[0] ?
					j->res.internal_msg : "the sandbox failed");
	} else {
		line = api_run_answer_summary(j->req, &j->res);
	}
	text = line ? cJSON_PrintUnformatted(line) : NULL;
	cJSON_Delete(line);
	if (text) {
		buf_printf(&j->answer, "%zx\r\n%s\n\r\n", strlen(text) + 1, text);
		free(text);
	}
	buf_puts(&j->answer, HTTP_LAST_CHUNK);
}

/* How many more times (a second apart) a result is offered to a shared
 * store that does not answer: a lost result runs the job again later. */
#define FINISH_RETRIES 30

/* The thread's store, opened at its first need. */
static struct store *thread_store(struct jobthread *j)
{
	if (!j->store && store_open(j->env.cfg->store, j->env.cfg->store_max_bytes, &j->store,
				    j->store_error, sizeof(j->store_error)) < 0) {
		log_error("the submission store: %s", j->store_error);
		j->store = NULL;
	} else if (j->store) {
		store_set_node(j->store, j->env.cfg->node_name);
	}
	return j->store;
}

/* A finished submission's callback, to the worker's callback thread. */
static void call_back(struct jobthread *j, const struct store_sub *sub, const char *url)
{
	char *body;

	if (!j->callbacks || !url)
		return;
	body = api_judge0_show_callback_body(sub, j->langs);
	if (body)
		outbox_add(j->callbacks, sub->id, sub->token, url, body);
	free(body);
}

/*
 * A stored submission's end: its result into the store, then its
 * callback. A shared store that does not answer is tried again for a
 * while (a database restarting); one that says another node finished it
 * first keeps that node's result, and that node calls back. A result the
 * store refuses (its disk full) goes to the loop (j->unstored), which
 * offers it again until it is taken: a submission is never left
 * Processing because one write failed.
 */
static void finish_stored(struct jobthread *j, const char *result)
{
	struct store_sub sub;
	struct store *st = thread_store(j);
	/* (a lock another connection holds is waited for: the store's busy timeout) */
	int rc = st ? store_finish(st, j->sub, result) : -EIO;

	bool shared = store_url_shared(j->env.cfg->store);

	for (unsigned i = 0; rc == -EIO && shared && i < FINISH_RETRIES; i++) {
		sleep(1);
		st = thread_store(j);
		rc = st ? store_finish(st, j->sub, result) : -EIO;
	}
	if (rc == -ENOENT && shared) {
		log_info("submission %lld: another node finished it first; its result stands",
			 (long long)j->sub);
		return;
	}
	if (rc == -ENOENT) {
		log_warn("submission %lld: removed or finished while it ran; its result is dropped",
			 (long long)j->sub);
		return;
	}
	if (rc < 0) {
		log_error("submission %lld: its result could not be stored (%s); it is offered again"
			  " until the store takes it", (long long)j->sub,
			  st ? strerror(-rc) : j->store_error);
		j->unstored = xstrdup(result);
		return;
	}
	/* the submission as stored (its token, its times) only for a callback */
	if (!j->callbacks || !api_judge0_callback(j->req) || store_get(st, j->sub, &sub) < 0)
		return;
	call_back(j, &sub, sub.callback_url);
	store_sub_free(&sub);
}

/*
 * A Judge0 job's end: a stored one's result goes to the store; a waiting
 * client's submission is stored finished (so that its token answers
 * later too) and answered 201 as GET would show it.
 */
static void judge0_answer(struct jobthread *j)
{
	char *result = api_judge0_result(j->req, &j->res, j->rc);
	struct store_sub sub = { .state = STORE_DONE };
	struct store *st;
	cJSON *shown;
	char *body = NULL, err[256];
	int status = 201;

	job_result_free(&j->res);
	if (j->sub) {
		finish_stored(j, result);
		free(result);
		return;
	}
	sub.request = (char *)api_judge0_stored(j->req);
	sub.result = result;
	sub.created_ms = sub.started_ms = j->started_wall_ms;
	sub.finished_ms = wall_ms();
	st = thread_store(j);
	if (!st || store_add_done(st, SUBMISSIONS_API, j->owner, sub.request, result, sub.started_ms,
				  sub.token, err, sizeof(err)) < 0) {
		char msg[320];

		/* no token to answer for it: nothing is promised, the client
		 * may send it again */
		log_error("a waited-for submission was not stored: %s", st ? err : j->store_error);
		snprintf(msg, sizeof(msg), "the submission ran but could not be stored: %.200s",
			 st ? err : j->store_error);
		body = api_judge0_error(msg);
		status = 503;
		shown = NULL;
	} else {
		/* as Judge0, a waited-for submission calls back too */
		call_back(j, &sub, api_judge0_callback(j->req));
		struct judge0_view view = api_judge0_job_view(j->req);

		shown = api_judge0_show(&sub, &view, j->langs);
	}
	if (!shown && status == 201) {
		shown = cJSON_CreateObject();
		cJSON_AddStringToObject(shown, "error", API_JUDGE0_NOT_UTF8);
		cJSON_AddStringToObject(shown, "token", sub.token);
	}
	if (shown)
		body = cJSON_PrintUnformatted(shown);
	cJSON_Delete(shown);
	free(result);
	j->status = status;
	if (!body || http_response_around(&j->answer, status, "application/json", body,
					  strlen(body), j->ka, j->hdr) < 0) {
		j->status = 500;
		http_format_error(&j->answer, 500, "out_of_memory", "could not build the response",
				  j->ka, j->hdr);
	}
}

/*
 * The answer, in the job thread: the JSON tree holds copies of the output,
 * so the captured output is freed before the tree is printed, and the head
 * is written around the printed body: a big answer is held at most twice
 * (tree and text), never on the loop.
 */
static void build_answer(struct jobthread *j)
{
	cJSON *tree = NULL;
	char *body = NULL;

	buf_init(&j->answer, 0);
	j->status = 200;
	/* a live session's client has had all it gets, frame by frame */
	if (j->session)
		return;
	/* the store answers for such a job, and its result goes there */
	if (j->format->stored) {
		judge0_answer(j);
		return;
	}
	if (j->head_sent) {
		stream_tail(j);
		return;
	}
	if (j->rc < 0 || j->res.internal_error) {
		j->status = 500;
		http_format_error(&j->answer, 500, "internal_error",
				  j->res.internal_msg[0] ? j->res.internal_msg : "the sandbox failed",
				  j->ka, j->hdr);
		return;
	}
	tree = j->format->answer(j->req, &j->res);
	job_result_free(&j->res);
	body = tree ? cJSON_PrintUnformatted(tree) : NULL;
	cJSON_Delete(tree);
	if (!body || http_response_around(&j->answer, 200, "application/json", body,
					  strlen(body), j->ka, j->hdr) < 0) {
		j->status = 500;
		http_format_error(&j->answer, 500, "out_of_memory", "could not build the response",
				  j->ka, j->hdr);
	}
}

/* Until a job comes (or the thread must end), the pool's idle work:
 * the teardown stays off any request's path. True: a job came. */
static bool wait_for_job(struct jobthread *js, struct jailpool *pool)
{
	bool quit;

	pthread_mutex_lock(&js->mu);
	while (!js->pending && !js->quit) {
		js->pool_work = false;
		pthread_mutex_unlock(&js->mu);
		bool worked = jailpool_idle_work(pool);

		pthread_mutex_lock(&js->mu);
		if (!worked && !js->pending && !js->quit && !js->pool_work)
			pthread_cond_wait(&js->cv, &js->mu);
	}
	quit = js->quit;
	js->pending = false;
	pthread_mutex_unlock(&js->mu);
	return !quit;
}

/* From the pool's reset thread: a failed jail to tear down while idle. */
static void pool_wake(void *arg)
{
	struct jobthread *js = arg;

	pthread_mutex_lock(&js->mu);
	js->pool_work = true;
	pthread_mutex_unlock(&js->mu);
	pthread_cond_signal(&js->cv);
}

static void *thread_main(void *arg)
{
	struct jobthread *js = arg;
	struct jailpool pool;
	uint64_t one = 1;
	int rc = jailpool_open(&pool, &jailpool_jails, js->env.sandbox,
			       js->env.cfg->jails_per_worker);

	pool.wake = pool_wake;
	pool.wake_arg = js;
	if (rc < 0)
		log_warn("no thread to reset jails (%s): each is reset before the next job",
			 strerror(-rc));
	for (;;) {
		struct jail *j;

		jailpool_refill(&pool);
		if (!wait_for_job(js, &pool))
			break;
		j = jailpool_take(&pool);
		run_in_jail(js, j);
		build_answer(js);
		pthread_mutex_lock(&js->mu);
		js->done = true;
		pthread_mutex_unlock(&js->mu);
		if (write(js->evfd, &one, sizeof(one)) < 0)
			log_error("write(eventfd): %s", strerror(errno));
		/* Once this answer is on its way: the jail is reset for a later
		 * job while the next runs in the other. */
		jailpool_give(&pool, j);
	}
	jailpool_close(&pool);
	return NULL;
}

int jobthread_start(struct jobthread *t, const struct job_env *env, int evfd)
{
	sigset_t all, old;
	int rc;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	buf_init(&t->chunks, 0);
	t->evfd = evfd;
	t->cancel_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	t->ctl_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->cancel_fd < 0 || t->ctl_fd < 0)
		return -errno;
	buf_init(&t->live.build_out, 0);
	buf_init(&t->live.build_err, 0);
	t->env = *env;
	t->env.cancel_fd = t->cancel_fd;
	t->env.cancel_flag = &t->cancelled;
	/* The job thread must never take a signal meant for the loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&t->thread, NULL, thread_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -rc;
	t->running = true;
	return 0;
}

void jobthread_stop(struct jobthread *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->mu);
	t->quit = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	t->running = false;
	close(t->cancel_fd);
	t->cancel_fd = -1;
	close(t->ctl_fd);
	t->ctl_fd = -1;
	store_close(t->store);
	t->store = NULL;
}

static int submit(struct jobthread *t, struct job_request *req, const struct api_format *f,
		  bool stream, bool keep_alive, const char *hdr, int64_t sub, bool session)
{
	if (!t->running)
		return -ESRCH;
	memset(&t->res, 0, sizeof(t->res));
	t->req = req;
	t->format = f;
	t->sub = sub;
	t->started_wall_ms = wall_ms();
	t->stream = stream;
	t->session = session;
	t->nsignals = 0;
	t->head_sent = false;
	t->done = false;
	t->ka = keep_alive;
	snprintf(t->hdr, sizeof(t->hdr), "%s", hdr);
	/* Signalled once the lock is let go: woken while it was held, the
	 * job thread would only wait for it again, a switch each way. */
	pthread_mutex_lock(&t->mu);
	t->pending = true;
	pthread_mutex_unlock(&t->mu);
	pthread_cond_signal(&t->cv);
	return 0;
}

int jobthread_submit(struct jobthread *t, struct job_request *req, const struct api_format *f,
		     bool stream, bool keep_alive, const char *hdr)
{
	return submit(t, req, f, stream, keep_alive, hdr, 0, false);
}

int jobthread_submit_session(struct jobthread *t, struct job_request *req,
			     const struct api_format *f, const struct jobthread_tty *tty)
{
	if (!t->running)
		return -ESRCH;
	pthread_mutex_lock(&t->mu);
	t->tty = *tty;
	t->build_streamed = false;
	t->live.started = t->live.built = t->live.build_ok = false;
	buf_reset(&t->live.build_out);
	buf_reset(&t->live.build_err);
	pthread_mutex_unlock(&t->mu);
	/* submit clears the flag; the thread reads it only once pending is set */
	return submit(t, req, f, false, false, "", 0, true);
}

void jobthread_take_live(struct jobthread *t, struct jobthread_live *out)
{
	pthread_mutex_lock(&t->mu);
	*out = t->live;
	t->live.started = false;
	t->live.built = false;
	buf_init(&t->live.build_out, 0);
	buf_init(&t->live.build_err, 0);
	pthread_mutex_unlock(&t->mu);
}

void jobthread_signal(struct jobthread *t, int sig)
{
	uint64_t one = 1;

	pthread_mutex_lock(&t->mu);
	if (t->nsignals < JOBTHREAD_SIGNALS)
		t->signals[t->nsignals++] = sig;
	pthread_mutex_unlock(&t->mu);
	if (write(t->ctl_fd, &one, sizeof(one)) < 0)
		log_error("write(eventfd): %s", strerror(errno));
}

int jobthread_submit_stored(struct jobthread *t, struct job_request *req,
			    const struct api_format *f, int64_t id)
{
	return submit(t, req, f, false, false, "", id, false);
}

void jobthread_take(struct jobthread *t, struct buf *chunks, bool *done)
{
	pthread_mutex_lock(&t->mu);
	*chunks = t->chunks;
	buf_init(&t->chunks, 0);
	*done = t->done;
	pthread_mutex_unlock(&t->mu);
}

void jobthread_cancel(struct jobthread *t)
{
	uint64_t one = 1;

	atomic_store_explicit(&t->cancelled, true, memory_order_release);
	if (write(t->cancel_fd, &one, sizeof(one)) < 0)
		log_error("write(eventfd): %s", strerror(errno));
}

/* The cancel of a job that is over: the next one starts uncancelled. */
static void cancel_reset(struct jobthread *j)
{
	uint64_t v;

	while (read(j->cancel_fd, &v, sizeof(v)) > 0)
		;
	atomic_store_explicit(&j->cancelled, false, memory_order_relaxed);
}

void jobthread_reset(struct jobthread *t)
{
	free(t->unstored);
	t->unstored = NULL;
	buf_free(&t->answer);
	buf_free(&t->chunks);
	buf_free(&t->live.build_out);
	buf_free(&t->live.build_err);
	t->session = false;
	cancel_reset(t);
	job_result_free(&t->res);
	request_free(t->req);
	t->req = NULL;
}
