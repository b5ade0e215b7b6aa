#include "autoconf.h"

#include "worker/worker.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/channel.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "worker/judge/request.h"
#include "common/util.h"
#include "worker/conn.h"
#include "worker/http/api.h"
#include "worker/judge/buildcache.h"
#include "worker/http/http.h"
#include "worker/judge/job.h"
#include "worker/http/routes.h"
#include "worker/http/wire.h"
#include "common/auth.h"
#include "worker/outbox.h"
#include "worker/http/callback.h"
#include "worker/jobthread.h"
#include "worker/submissions.h"
#include "worker/sandbox/sandbox.h"

#define MAX_EVENTS 64
#define TICK_MS 200

struct worker {
	const struct worker_ctx *ctx;
	const struct config *cfg;
	int epfd, sigfd, evfd;
	bool listening;
	uint64_t accept_resume_ms; /* accepting paused (out of fds) until then */
	bool stop_now;
	struct conn_set conns;    /* its draining is the worker's */
	struct sandbox *sandbox;
	struct buildcache *cache; /* NULL: --build-cache-mb 0, or it could not open */
	char sandbox_error[256];
	struct route_ctx rctx;
	struct jobthread job;
	/* The loop's own notes on the job in the thread. */
	struct conn *job_conn;  /* whose it is; NULL once its client is gone */
	uint64_t job_started_ms;
	char job_method[16];
	char job_path[64];
	uid_t uid;
	gid_t gid;
	uid_t judge_uid;        /* its jobs' judge programs (gid the same) */
	struct submissions subs;  /* Judge0's, kept in the store */
	struct outbox callbacks;
	int64_t job_sub;        /* the stored submission the job runs, 0: none */
	uint64_t job_queued_ms;
	struct auth_view *auth; /* its copy of the tokens in force */
};

/* Tags for epoll data: pointers to these identify the fd. */
static char tag_listen, tag_channel, tag_sig, tag_ev;

static void tell_master(struct worker *w, enum channel_type type, const int *fds, size_t nfds)
{
	int rc = channel_send(w->ctx->channel_fd, type, NULL, 0, fds, nfds);

	if (rc < 0)
		log_error("channel_send(type %d): %s", type, strerror(-rc));
}

/* The master counts a dispatched connection as a running job until told. */
static void give_back_slot(void *arg, struct conn *c)
{
	struct worker *w = arg;

	if (!c->job_slot)
		return;
	c->job_slot = false;
	tell_master(w, CHANNEL_DONE, NULL, 0);
}

/* A connection closes: a job that still runs for it answers nobody. */
static void forget_conn(void *arg, struct conn *c)
{
	struct worker *w = arg;

	if (w->job.req && w->job_conn == c)
		w->job_conn = NULL;
	give_back_slot(w, c);
}

/* A stored submission's id to the master (type SUBMITTED or DEFER). If
 * it cannot be sent the store still keeps it, queued or running: the
 * master's next start runs it. */
static void tell_master_of(struct worker *w, enum channel_type type, int64_t id)
{
	int rc = channel_send(w->ctx->channel_fd, type, &id, sizeof(id), NULL, 0);

	if (rc < 0)
		log_error("telling the master %s of submission %lld: %s",
			  type == CHANNEL_DEFER ? "to run it again later" : "to queue it",
			  (long long)id, strerror(-rc));
}

/* A submission went into the store: the master queues it. */
static void tell_submitted(void *arg, int64_t id)
{
	tell_master_of(arg, CHANNEL_SUBMITTED, id);
}

/* A submission to run again later: the master waits a while first. */
static void tell_deferred(void *arg, int64_t id)
{
	tell_master_of(arg, CHANNEL_DEFER, id);
}

/* ---- jobs ---------------------------------------------------------- */

/* A job is in the thread: the loop's notes on it, and the shared stats. */
static void job_began(struct worker *w, struct conn *c, const char *method, const char *path)
{
	w->job_conn = c;
	w->job_started_ms = now_ms();
	snprintf(w->job_method, sizeof(w->job_method), "%s", method);
	snprintf(w->job_path, sizeof(w->job_path), "%s", path);
	atomic_fetch_add(&w->ctx->stats->in_flight, 1);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].state, WS_BUSY);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].job_started_ms, wall_ms());
}

static int start_job(struct worker *w, struct conn *c, struct job_request *req,
		     const struct api_format *f, bool stream)
{
	char hdr[128];
	int rc;

	conn_headers(c, hdr, sizeof(hdr), NULL);
	rc = jobthread_submit(&w->job, req, f, stream, conn_keep_alive(&w->conns, c), hdr);
	if (rc < 0)
		return rc;
	job_began(w, c, c->hp.req.method, c->hp.req.path);
	c->streaming = stream;
	c->state = C_JOB;
	conn_watch(&w->conns, c);
	return 0;
}

static void record_job(struct worker *w, const struct jobthread *j, const struct conn *c)
{
	struct job_record rec = { 0 };
	const struct job_result *res = &j->res;

	rec.end_wall_ms = wall_ms();
	snprintf(rec.lang, sizeof(rec.lang), "%s", j->req->lang->id);
	rec.status = (uint8_t)res->top;
	rec.api = j->format->stats_id;
	rec.queue_ms = c ? (uint32_t)c->queued_ms : (uint32_t)w->job_queued_ms;
	rec.build_ms = (uint32_t)res->build_ms;
	rec.run_ms = (uint32_t)res->run_ms;
	rec.cpu_ms = (uint32_t)res->cpu_ms;
	rec.memory_peak_kb = res->memory_peak_kb;
	stats_push(w->ctx->stats, &rec, res->internal_error);
}

/*
 * The job thread's answer goes out as it is, without a copy, unless the
 * connection stopped being keep-alive meanwhile (the worker began to
 * drain, the client half-closed): then its head is written again.
 */
static void take_answer(struct conn *c, struct jobthread *j, bool ka)
{
	struct buf *a = &j->answer;
	const char *end = a->data ? strstr(a->data, "\r\n\r\n") : NULL;

	/* A streamed answer's head is gone already: its end follows as it
	 * is, and a connection that stopped being keep-alive closes after. */
	if (j->head_sent) {
		buf_append(&c->out, a->data, a->len);
		return;
	}
	if (!end)
		return;
	if (ka != j->ka) {
		end += 4;
		http_format_response(&c->out, j->status, "application/json", end,
				     a->len - (size_t)(end - a->data), ka, j->hdr);
		return;
	}
	conn_take_out(c, a);
}

/*
 * A streamed answer's client went away: its job stops at once (its
 * programs are killed, nothing more runs) and the connection goes now.
 * The job's end, soon, frees the worker.
 */
static void cancel_streamed_job(struct worker *w, struct conn *c)
{
	jobthread_cancel(&w->job);
	log_info("the client of a streamed answer went away: its job stops");
	conn_free(&w->conns, c);
}

static void finish_job(struct worker *w);

/* Send what a streamed answer has; a send that fails means its client
 * is gone. */
static void stream_flush(struct worker *w, struct conn *c)
{
	conn_flush(&w->conns, c);
	if (c->peer_closed) {
		c->state = C_JOB;
		cancel_streamed_job(w, c);
	}
}

/* Events of a connection whose streamed answer is being made: room to
 * send, or its client's end (a half-close included, as nginx reads it). */
static void stream_conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		cancel_streamed_job(w, c);
		return;
	}
	if (events & EPOLLOUT)
		stream_flush(w, c);
}

/* The job thread has news: lines of a streamed answer, or the job's end. */
static void take_job_progress(struct worker *w)
{
	struct conn *c = w->job_conn;
	struct buf lines;
	bool done;

	jobthread_take(&w->job, &lines, &done);
	if (c && lines.len) {
		conn_take_out(c, &lines);
		if (done)
			conn_flush(&w->conns, c);
		else
			stream_flush(w, c);
	}
	buf_free(&lines);
	if (done)
		finish_job(w);
}

static void finish_job(struct worker *w)
{
	struct jobthread *j = &w->job;
	struct conn *c = w->job_conn;
	cJSON *extra = cJSON_CreateObject();

	atomic_fetch_sub(&w->ctx->stats->in_flight, 1);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].state,
		     w->conns.draining ? WS_DRAINING : WS_IDLE);
	atomic_fetch_add(&w->ctx->stats->workers[w->ctx->index].jobs_done, 1);
	record_job(w, j, c);

	if (j->status == 500 && extra)
		cJSON_AddStringToObject(extra, "error", j->res.internal_msg[0] ?
					j->res.internal_msg : "could not build the response");
	if (extra) {
		cJSON_AddStringToObject(extra, "language", j->req->lang->id);
		cJSON_AddStringToObject(extra, "job_status", verdict_test_status_name(j->res.top));
		cJSON_AddNumberToObject(extra, "queue_ms", c ? (double)c->queued_ms : 0);
		cJSON_AddNumberToObject(extra, "build_ms", (double)j->res.build_ms);
		cJSON_AddBoolToObject(extra, "build_cached", j->res.build_cached);
		cJSON_AddNumberToObject(extra, "run_ms", (double)j->res.run_ms);
		cJSON_AddNumberToObject(extra, "cpu_ms", (double)j->res.cpu_ms);
		cJSON_AddNumberToObject(extra, "memory_peak_kb", (double)j->res.memory_peak_kb);
	}
	if (w->job_sub) {
		char id[32];

		/* a result the store refused stays with the loop until it takes it */
		if (j->unstored) {
			submissions_keep(&w->subs, w->job_sub, j->unstored);
			j->unstored = NULL;
		}
		snprintf(id, sizeof(id), "%lld", (long long)w->job_sub);
		if (extra) {
			cJSON_AddStringToObject(extra, "msg", "submission");
			cJSON_AddStringToObject(extra, "submission", id);
			log_json(LOG_INFO, extra);
		}
		extra = NULL;
		w->job_sub = 0;
		submissions_lease_end(&w->subs);
	}
	if (c) {
		bool ka = conn_keep_alive(&w->conns, c);

		c->streaming = false;
		take_answer(c, j, ka);
		conn_log(c, w->job_method, w->job_path, j->status, w->job_started_ms - c->queued_ms,
			 extra);
		extra = NULL;
		c->state = C_READING;
		conn_next_request(c, ka);
	}
	/* The master counts this job as running until told, client or not. */
	tell_master(w, CHANNEL_DONE, NULL, 0);
	cJSON_Delete(extra);
	jobthread_reset(j);
	w->job_conn = NULL;
	if (c)
		conn_process(&w->conns, c);
}

/* ---- requests ------------------------------------------------------ */

/*
 * Whether a /run client asks for a streamed answer: Accept names
 * application/x-ndjson (with a q above 0). Chunks need HTTP/1.1.
 */
static bool wants_ndjson(const struct http_request *r)
{
	static const char type[] = "application/x-ndjson";
	const char *p = http_header_get(r, "accept");

	if (!p || r->http_major != 1 || r->http_minor < 1)
		return false;
	while (*p) {
		size_t n = strcspn(p, ","); /* one media range and its parameters */
		size_t t;
		const char *q;

		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		t = strcspn(p, ";,");
		if (t > n)
			t = n;
		while (t && (p[t - 1] == ' ' || p[t - 1] == '\t'))
			t--;
		if (t == sizeof(type) - 1 && strncasecmp(p, type, t) == 0) {
			q = memmem(p, n, "q=", 2);
			if (!q || strtod(q + 2, NULL) > 0)
				return true;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * An answer given before any job runs, already in c->out: logged (with
 * extra, which conn_log takes), the request's job freed, the master
 * told that this connection holds no job, and on to the next request.
 */
static void answer_before_job(struct worker *w, struct conn *c, struct job_request *job,
			      int status, cJSON *extra, bool ka)
{
	const struct http_request *r = &c->hp.req;

	conn_log(c, r->method, r->path, status, c->req_start_ms, extra);
	request_free(job);
	give_back_slot(w, c);
	conn_next_request(c, ka);
}

/* A request refused before any job: its format's own error body. */
static void refuse_job(struct worker *w, struct conn *c, const struct api_refusal *no, bool ka)
{
	char hdr[128];
	cJSON *extra = no->code[0] ? cJSON_CreateObject() : NULL;

	conn_headers(c, hdr, sizeof(hdr), NULL);
	if (no->body)
		http_format_response(&c->out, no->status, "application/json", no->body,
				     strlen(no->body), ka, hdr);
	else
		http_format_error(&c->out, 500, "out_of_memory", "no memory", ka, hdr);
	if (extra)
		cJSON_AddStringToObject(extra, "error_code", no->code);
	answer_before_job(w, c, NULL, no->body ? no->status : 500, extra, ka);
}

/* A job request: validate now (bad ones never queue), then run or move. */
static void handle_job(struct worker *w, struct conn *c)
{
	const struct http_request *r = &c->hp.req;
	const struct api_format *f = wire_of_path(r->path);
	struct api_refusal no = { 0 };
	struct job_request *job = NULL;
	bool ka = conn_keep_alive(&w->conns, c);
	char hdr[160], why[320];
	int rc;

	rc = f->parse(r, w->ctx->langs, w->cfg, &job, &no);
	if (rc == 0 && f->stored && !submissions_store_ready(&w->subs, why, sizeof(why))) {
		/* its result could never be answered for by its token */
		struct req_error e = { .http_status = 503 };

		request_free(job);
		job = NULL;
		snprintf(e.message, sizeof(e.message), "%s", why);
		no = (struct api_refusal){ .status = 503, .body = f->error(&e) };
		rc = -EIO;
	}
	if (rc < 0) {
		refuse_job(w, c, &no, ka);
		free(no.body);
		return;
	}
	if (!c->job_slot) {
		request_free(job);
		c->state = C_HANDOFF;
		return;
	}
	if (!w->sandbox) {
		conn_headers(c, hdr, sizeof(hdr), "Retry-After: 5\r\n");
		http_format_error(&c->out, 503, "sandbox_unavailable", w->sandbox_error, ka, hdr);
		answer_before_job(w, c, job, 503, NULL, ka);
		return;
	}
	/* The job has its own copy of everything: while it runs, the worker
	 * need not hold the request's bytes twice more. */
	buf_free(&c->hp.req.body);
	buf_free(&c->raw);
	conn_compact_input(c);
	/* the job thread is idle: what it reads of the job may change now */
	snprintf(w->job.owner, sizeof(w->job.owner), "%s", c->who.owner);
	rc = start_job(w, c, job, f, f->streams && wants_ndjson(r));
	if (rc < 0) {
		conn_respond_error(c, 500, "internal_error", "could not start the job thread", ka);
		answer_before_job(w, c, job, 500, NULL, ka);
		return;
	}
	c->job_slot = false; /* spent: the job's end reports CHANNEL_DONE */
}

/* The token a request carries: X-Auth-Token or X-Auth-User (Judge0's
 * names), or Authorization: Bearer. NULL when none. */
static const char *request_token(const struct http_request *r)
{
	const char *t = http_header_get(r, "x-auth-token");
	const char *a;

	if (!t)
		t = http_header_get(r, "x-auth-user");
	if (t)
		return t;
	a = http_header_get(r, "authorization");
	if (a && !strncasecmp(a, "Bearer ", 7))
		return a + 7 + strspn(a + 7, " ");
	return NULL;
}

/*
 * With --auth-tokens, every request but the probes' (unless
 * --auth-probes) needs a token of the file: without one, 401 in the
 * words of the API its path belongs to. True when it may go on.
 */
static bool authorized(struct worker *w, struct conn *c, bool ka)
{
	const struct http_request *r = &c->hp.req;
	struct req_error e = { .http_status = 401, .code = "unauthorized",
			       .message = "a valid token is required (X-Auth-Token, or Authorization:"
					  " Bearer)" };
	const char *token;
	char hdr[192], *body;

	/* The master's tokens, not this generation's: a worker that a reload
	 * retires still serves the connections it holds. */
	token = request_token(r);
	if (auth_shared_allows(w->ctx->auth, &w->auth, routes_is_probe(r->path), token,
			       token ? strlen(token) : 0, &c->who))
		return true;
	conn_headers(c, hdr, sizeof(hdr), "WWW-Authenticate: Bearer\r\n");
	/* in the words of the API the path belongs to */
	body = wire_of_path(r->path)->error(&e);
	if (body)
		http_format_response(&c->out, 401, "application/json", body, strlen(body), ka, hdr);
	else
		http_format_error(&c->out, 401, e.code, e.message, ka, hdr);
	free(body);
	answer_before_job(w, c, NULL, 401, NULL, ka);
	return false;
}

/*
 * A request is let in once, at its headers when it has a body (before
 * any of it is read), else when it is whole: its id, its count, its
 * token. False: refused, its answer in c->out.
 */
static bool admit(struct worker *w, struct conn *c, bool ka)
{
	if (c->admitted)
		return true;
	c->admitted = true;
	conn_request_id(c, &c->hp.req);
	atomic_fetch_add(&w->ctx->stats->requests_total, 1);
	return authorized(w, c, ka);
}

/* The headers of a request with a body: a body that its sender may not
 * send is never read, nor a 100 Continue promised for it. */
static bool headers_complete(void *arg, struct conn *c)
{
	return admit(arg, c, false);
}

/* A whole request, from the connection's parser. */
static void handle_request(void *arg, struct conn *c)
{
	struct worker *w = arg;
	const struct http_request *r = &c->hp.req;
	enum route_kind kind = routes_classify(r);
	bool ka = conn_keep_alive(&w->conns, c);
	char hdr[128];
	int status;

	if (!admit(w, c, ka))
		return;
	/* Judge0's token checks: the token was good */
	if (!strcmp(r->method, "POST") &&
	    (!strcmp(r->path, "/authenticate") || !strcmp(r->path, "/authorize"))) {
		conn_headers(c, hdr, sizeof(hdr), NULL);
		http_format_response(&c->out, 200, "application/json", "{}", 2, ka, hdr);
		conn_log(c, r->method, r->path, 200, c->req_start_ms, NULL);
		conn_next_request(c, ka);
		return;
	}
	if (kind == ROUTE_SUBMISSIONS) {
		conn_headers(c, hdr, sizeof(hdr), NULL);
		status = submissions_handle(&w->subs, r, &c->who, ka, hdr, &c->out);
		conn_log(c, r->method, r->path, status, c->req_start_ms, NULL);
		conn_next_request(c, ka);
		return;
	}
	if (kind == ROUTE_JOB) {
		handle_job(w, c);
		return;
	}
	conn_headers(c, hdr, sizeof(hdr), NULL);
	status = routes_simple(&w->rctx, r, ka, hdr, &c->out);
	conn_log(c, r->method, r->path, status, c->req_start_ms, NULL);
	conn_next_request(c, ka);
}

/* Move the connection to the master's queue: fd plus unparsed bytes. */
static void handoff(void *arg, struct conn *c)
{
	struct worker *w = arg;
	const char *data;
	size_t len;
	int fds[2];
	int mfd;

	if (conn_handoff_bytes(c, &data, &len) < 0) {
		conn_free(&w->conns, c);
		return;
	}
	mfd = channel_memfd_from(data, len);
	if (mfd < 0) {
		log_error("memfd_create: %s", strerror(-mfd));
		conn_respond_error(c, 503, "overloaded", "could not queue the job", false);
		c->state = C_CLOSING;
		return;
	}
	fds[0] = c->fd;
	fds[1] = mfd;
	tell_master(w, CHANNEL_ENQUEUE, fds, 2);
	close(mfd);
	conn_free(&w->conns, c);
}

static void accept_all(struct worker *w)
{
	for (;;) {
		int fd = accept4(w->ctx->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/*
				 * Out of fds: the pending connection stays readable, so
				 * stop watching the socket for a moment rather than spin.
				 */
				log_warn("accept4: %s; pausing accepts for 100 ms", strerror(errno));
				epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->ctx->listen_fd, NULL);
				w->listening = false;
				w->accept_resume_ms = now_ms() + 100;
			} else if (errno != EAGAIN) {
				log_warn("accept4: %s", strerror(errno));
			}
			return;
		}
		conn_new(&w->conns, fd);
	}
}

/*
 * A connection the master hands over, with the bytes its first worker had
 * read. Whatever happens, its client hears an answer: a request that no
 * longer fits (a reload lowered the caps) gets 413, a failure 503.
 */
static void adopt_dispatched(struct worker *w, int fds[2], uint64_t queued_ms)
{
	char *data = NULL;
	size_t len = 0;
	struct conn *c;
	int rc = channel_memfd_read(fds[1], &data, &len, conn_handoff_max(w->cfg));

	close(fds[1]);
	set_nonblock(fds[0], true);
	c = conn_new(&w->conns, fds[0]);
	if (!c) {
		free(data);
		tell_master(w, CHANNEL_DONE, NULL, 0);
		return;
	}
	c->job_slot = true;
	c->queued_ms = queued_ms;
	if (rc < 0) {
		random_hex(c->reqid, 8);
		if (rc == -EMSGSIZE)
			conn_respond_error(c, 413, "body_too_large",
					   "the request and what was pipelined after it exceed "
					   "this server's caps", false);
		else
			conn_respond_error(c, 503, "overloaded", "could not take the job over",
					   false);
		conn_log(c, "-", "-", rc == -EMSGSIZE ? 413 : 503, now_ms(), NULL);
		give_back_slot(w, c);
		c->state = C_CLOSING;
	} else {
		/* The memfd's bytes become the input as they are: no second copy. */
		conn_adopt_input(c, data, len);
	}
	conn_process(&w->conns, c);
}

/*
 * A stored submission the master dispatched: its job runs with no client
 * (its result goes to the store). Whatever happens, the master hears
 * DONE: it counts the submission as running until then.
 */
static void run_stored(struct worker *w, int64_t id, uint64_t queued_ms)
{
	struct job_request *job = NULL;
	int rc;

	if (id == CHANNEL_RUN_LEASE && !w->sandbox) {
		/* a shared store's work is for the nodes that can run it */
		tell_master(w, CHANNEL_EMPTY, NULL, 0);
		return;
	}
	if (!w->sandbox) {
		/* as a client's job gets 503: this server runs nothing */
		submissions_fail(&w->subs, id, w->sandbox_error);
		tell_master(w, CHANNEL_DONE, NULL, 0);
		return;
	}
	if (id == CHANNEL_RUN_LEASE) {
		rc = submissions_lease(&w->subs, &id, &job);
		if (rc < 0) {
			tell_master(w, rc == -ENOENT ? CHANNEL_EMPTY : CHANNEL_DONE, NULL, 0);
			return;
		}
	} else {
		rc = submissions_take(&w->subs, id, &job);
		if (rc < 0) {
			/* the store failed, not the submission: it starts later */
			if (rc != -ENOENT && rc != -ECANCELED)
				tell_deferred(w, id);
			tell_master(w, CHANNEL_DONE, NULL, 0);
			return;
		}
	}
	rc = jobthread_submit_stored(&w->job, job, wire_named(SUBMISSIONS_API), id);
	if (rc < 0) {
		log_error("submission %lld: the job thread is not running", (long long)id);
		request_free(job);
		submissions_lease_end(&w->subs);
		tell_master(w, CHANNEL_DONE, NULL, 0);
		return;
	}
	job_began(w, NULL, "RUN", "/submissions");
	w->job_sub = id;
	w->job_queued_ms = queued_ms;
}

/* A message from the master, checked against the channel's table: only
 * the types the master sends come here, each with its fds. */
static void on_master_message(void *arg, struct channel_msg *m)
{
	struct worker *w = arg;
	uint64_t queued_ms;

	switch (m->type) {
	case CHANNEL_QUIT:
		w->conns.draining = true;
		break;
	case CHANNEL_DISPATCH:
		memcpy(&queued_ms, m->payload, sizeof(queued_ms));
		adopt_dispatched(w, m->fds, queued_ms);
		break;
	case CHANNEL_RUN: {
		struct channel_run run;

		memcpy(&run, m->payload, sizeof(run));
		run_stored(w, run.id, run.queued_ms);
		break;
	}
	case CHANNEL_ENQUEUE:
	case CHANNEL_IDLE:
	case CHANNEL_DONE:
	case CHANNEL_EMPTY:
	case CHANNEL_SUBMITTED:
	case CHANNEL_DEFER:
		break; /* a worker's own: channel_recv refused them */
	}
}

static void read_master_channel(struct worker *w)
{
	int rc = channel_readable(w->ctx->channel_fd, CHANNEL_TO_WORKER, "the master",
				  on_master_message, w);

	if (rc < 0) {
		/* The master is gone (or its channel failed): finish up and leave. */
		w->conns.draining = true;
		w->stop_now = true;
	}
}

static void read_worker_signals(struct worker *w)
{
	struct signalfd_siginfo si;

	while (read(w->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
		case SIGHUP:
			w->conns.draining = true;
			break;
		case SIGQUIT:
			w->stop_now = true;
			break;
		default:
			break;
		}
	}
}

static void start_draining(struct worker *w)
{
	w->accept_resume_ms = 0;
	if (w->listening) {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->ctx->listen_fd, NULL);
		w->listening = false;
	}
	if (!w->job.req)
		atomic_store(&w->ctx->stats->workers[w->ctx->index].state, WS_DRAINING);
}

/* ---- set-up -------------------------------------------------------- */

static int setup_fds(struct worker *w)
{
	sigset_t mask;
	struct epoll_event ev = { .events = EPOLLIN };

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	w->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->sigfd < 0 || w->epfd < 0 || w->evfd < 0)
		return -errno;
	set_nonblock(w->ctx->listen_fd, true);
	ev.data.ptr = &tag_listen;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ctx->listen_fd, &ev) < 0)
		return -errno;
	w->listening = true;
	ev.data.ptr = &tag_channel;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ctx->channel_fd, &ev) < 0)
		return -errno;
	ev.data.ptr = &tag_sig;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sigfd, &ev) < 0)
		return -errno;
	ev.data.ptr = &tag_ev;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev) < 0)
		return -errno;
	return 0;
}

/* The index-th CPU this process may use (modulo their number). */
static int pick_cpu(unsigned index, unsigned *out)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	n = CPU_COUNT(&set);
	if (n <= 0)
		return -ENOENT;
	index %= (unsigned)n;
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (index-- == 0) {
			*out = c;
			return 0;
		}
	}
	return -ENOENT;
}

static void setup_sandbox(struct worker *w)
{
	const struct config *cfg = w->cfg;
	char name[32];
	struct sandbox_opts o = {
		.jail = cfg->jail,
		.nsjail_path = cfg->nsjail_path,
		.bwrap_path = cfg->bwrap_path,
		.cgroup_root = cfg->cgroup_root,
		.cgroup_name = name,
		.init_path = cfg->init_path,
		.jail_dir = cfg->jail_dir,
		.uid = w->uid,
		.gid = w->gid,
		.tmpfs_kb = cfg->tmpfs_kb,
		.disk_bytes = cfg->job_disk_kb * 1024,
		.disk_files = cfg->job_disk_files,
		.jobs_per_jail = cfg->jobs_per_jail,
	};
	const char **mounts = langtab_mounts(w->ctx->langs);
	int rc;

	/* Codize requests are pinned even without --pin-cpus (job.c). */
	o.has_cpu = pick_cpu(w->ctx->index, &o.cpu) == 0;
	o.pin_cpu = cfg->pin_cpus && o.has_cpu;

	/* Prefixed with the master pid: see cgroup_sweep. */
	snprintf(name, sizeof(name), "%d-w%u", (int)getppid(), w->ctx->index);
	o.ro_mounts = mounts;
	/* Before the job disk is mounted over the jail dir: the cache stays
	 * on the host's disk, one for every worker, and reached by its fd. */
	rc = buildcache_open(cfg->jail_dir, (uint64_t)cfg->build_cache_mb << 20, w->ctx->stats,
			     &w->cache);
	if (rc < 0)
		log_error("the build cache in %s/" BUILDCACHE_DIR " is off: %s", cfg->jail_dir,
			  strerror(-rc));
	buildcache_job_disk(w->cache, o.disk_bytes, o.disk_bytes ? o.disk_files : 0);
	rc = sandbox_open(&o, &w->sandbox, w->sandbox_error, sizeof(w->sandbox_error));
	free(mounts);
	if (rc < 0) {
		w->sandbox = NULL;
		log_error("sandbox unavailable: %s", w->sandbox_error);
		w->rctx.sandbox_error = w->sandbox_error;
		return;
	}
	w->rctx.jail_name = sandbox_driver_name(w->sandbox);
	w->rctx.jail_version = sandbox_driver_version(w->sandbox);
	w->rctx.jail_path = sandbox_driver_path(w->sandbox);
}

/* The job thread, with all that a job runs with but its jail. */
static int start_job_thread(struct worker *w)
{
	struct job_env env = { .cfg = w->cfg, .uid = w->uid, .gid = w->gid, .sandbox = w->sandbox,
			       .judge_uid = w->judge_uid, .judge_gid = w->judge_uid,
			       .cache = w->cache };

	int rc = jobthread_start(&w->job, &env, w->evfd);

	w->job.langs = w->ctx->langs;
	w->job.callbacks = &w->callbacks;
	return rc;
}

static void worker_loop(struct worker *w)
{
	struct epoll_event evs[MAX_EVENTS];
	uint64_t last_sweep = now_ms();

	while (!w->stop_now) {
		int n = epoll_wait(w->epfd, evs, MAX_EVENTS, TICK_MS);

		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &tag_listen) {
				accept_all(w);
			} else if (p == &tag_channel) {
				read_master_channel(w);
			} else if (p == &tag_sig) {
				read_worker_signals(w);
			} else if (p == &tag_ev) {
				uint64_t v;

				if (read(w->evfd, &v, sizeof(v)) > 0 && w->job.req)
					take_job_progress(w);
			} else {
				struct conn *c = p;

				if (c->dead)
					continue;
				if (c->state == C_JOB && c->streaming) {
					stream_conn_event(w, c, evs[i].events);
					continue;
				}
				if (c->state == C_JOB && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
					/* Reported whatever the mask: stop watching until the
					 * job ends; its answer will find the socket gone. */
					c->peer_closed = true;
					conn_unwatch(&w->conns, c);
					continue;
				}
				conn_event(&w->conns, c, evs[i].events);
			}
		}
		conn_set_free_dead(&w->conns);
		if (w->accept_resume_ms && now_ms() >= w->accept_resume_ms && !w->conns.draining) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_listen };

			if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ctx->listen_fd, &ev) == 0)
				w->listening = true;
			w->accept_resume_ms = 0;
		}
		if (w->conns.draining)
			start_draining(w);
		if (now_ms() - last_sweep >= TICK_MS || w->conns.draining) {
			conn_set_sweep(&w->conns);
			submissions_tick(&w->subs);
			last_sweep = now_ms();
		}
		if (w->conns.draining && !w->job.req && w->conns.n == 0)
			break;
	}
}

/* What a worker is before it opens anything: its ids, its routes' view,
 * its names (log role, thread name, process title). */
static void worker_init(struct worker *w, const struct worker_ctx *ctx)
{
	char role[32];

	memset(w, 0, sizeof(*w));
	w->ctx = ctx;
	w->cfg = ctx->cfg;
	w->uid = config_sandbox_uid(ctx->cfg, CONFIG_SANDBOX_WORKER, ctx->index);
	w->gid = w->uid;
	/* A judge program runs under a uid of its own, one per worker. */
	w->judge_uid = config_sandbox_uid(ctx->cfg, CONFIG_SANDBOX_JUDGE, ctx->index);
	w->rctx.cfg = ctx->cfg;
	w->rctx.langs = ctx->langs;
	w->rctx.generation = ctx->generation;
	w->rctx.stats = ctx->stats;
	w->rctx.probes = ctx->probes;
	w->rctx.jail_name = "";
	w->rctx.jail_version = "";
	w->rctx.jail_path = "";
	snprintf(role, sizeof(role), "worker-%u", ctx->index);
	log_set_role(role);
	prctl(PR_SET_NAME, role, 0, 0, 0);
	proctitle_set("goboxd: worker %u", ctx->index);
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
}

/* A worker that ends when asked (not a fast stop): what it holds goes,
 * refused results to the master first. */
static void worker_end(struct worker *w)
{
	const struct worker_ctx *ctx = w->ctx;

	conn_set_close(&w->conns);
	jobthread_stop(&w->job);
	submissions_flush(&w->subs);
	outbox_stop(&w->callbacks);
	submissions_close(&w->subs);
	atomic_store(&ctx->stats->workers[ctx->index].state, WS_EMPTY);
	atomic_store(&ctx->stats->workers[ctx->index].pid, 0);
	sandbox_close(w->sandbox);
	buildcache_close(w->cache);
	auth_view_free(w->auth);
}

int worker_main(const struct worker_ctx *ctx)
{
	struct worker w;
	const struct conn_hooks hooks = { .arg = &w, .request = handle_request,
					  .headers = headers_complete, .handoff = handoff,
					  .no_job = give_back_slot, .closing = forget_conn };
	int rc;

	worker_init(&w, ctx);
	/* The master died before we got here. Not getppid() == 1: in a
	 * container the master itself is pid 1. */
	if (getppid() != ctx->master_pid)
		return 0;

	if (setup_fds(&w) < 0) {
		log_error("worker set-up failed: %s", strerror(errno));
		return 1;
	}
	conn_set_init(&w.conns, w.epfd, w.cfg, &hooks);
	/* one worker removes the expired submissions and watches the store;
	 * every one takes new ones */
	submissions_open(&w.subs, ctx->cfg, ctx->langs, ctx->store_refused, ctx->index == 0,
			 ctx->stats, &w.callbacks);
	w.subs.submitted = tell_submitted;
	w.subs.deferred = tell_deferred;
	w.subs.arg = &w;
	setup_sandbox(&w);
	if (geteuid() == 0 && (rc = sandbox_keep_caps()) < 0) {
		log_error("dropping capabilities failed: %s", strerror(-rc));
		return WORKER_EXIT_CONFIG;
	}
	/* libcurl's set-up, before any thread */
	if (callback_global_init() < 0 ||
	    outbox_start(&w.callbacks, w.cfg,
			    store_url_shared(w.cfg->store) ? w.cfg->store : NULL, ctx->stats,
			    ctx->index) < 0) {
		log_error("starting the callback sender failed");
		return 1;
	}
	/* After the drop: a thread keeps the capabilities it was born with. */
	if (w.sandbox && start_job_thread(&w) < 0) {
		log_error("starting the job thread failed");
		return 1;
	}
	atomic_store(&ctx->stats->workers[ctx->index].pid, getpid());
	atomic_store(&ctx->stats->workers[ctx->index].generation, ctx->generation);
	atomic_store(&ctx->stats->workers[ctx->index].state, WS_IDLE);
	tell_master(&w, CHANNEL_IDLE, NULL, 0);

	worker_loop(&w);

	if (w.job.req) {
		/*
		 * Fast stop (SIGQUIT, or the master vanished): leave at once. The
		 * jail child dies with us (PR_SET_PDEATHSIG) and the master's
		 * sweeper removes the job directory and cgroup.
		 */
		return 0;
	}
	worker_end(&w);
	return 0;
}
