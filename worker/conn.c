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
#include "worker/http/api.h"
#include "worker/judge/buildcache.h"
#include "worker/http/http.h"
#include "worker/judge/job.h"
#include "worker/http/routes.h"
#include "worker/jobthread.h"
#include "worker/sandbox/sandbox.h"

#define READ_CHUNK 65536
/*
 * What one connection may make its worker keep, whatever its client does:
 * input read ahead of the parser (pipelined requests wait in the socket
 * beyond it), and answers not yet sent (past that, the connection is
 * neither read nor parsed until the client takes some). A buffer that
 * grew past CONN_BUF_KEEP for one big request or answer is freed once
 * empty.
 */
#define READ_AHEAD (256 * 1024)
#define OUT_HIGH (256 * 1024)
#define CONN_BUF_KEEP (64 * 1024)
#define MAX_EVENTS 64
#define TICK_MS 200

enum conn_state {
	C_READING,   /* parsing requests, answering simple ones */
	C_JOB,       /* its job runs in the job thread */
	C_HANDOFF,   /* a job request waits for the output to drain, then moves */
	C_CLOSING,   /* write what is left, then close */
};

struct conn {
	int fd;
	enum conn_state state;
	struct buf in;        /* read; from in_off on, not yet fed to the parser */
	struct buf raw;       /* bytes of the request being parsed (for handoff) */
	struct buf out;       /* answers; from out_off on, not yet sent */
	size_t in_off, out_off; /* consumed by offset: no memmove per request or send */
	struct http_parser hp;
	uint64_t last_active_ms;
	uint64_t req_start_ms; /* first byte of the current request, 0 if none */
	uint64_t queued_ms;    /* time the job waited in the master's queue */
	unsigned served;       /* requests answered on it */
	bool job_token;        /* dispatched by the master: may run one job */
	bool streaming;        /* its job's answer goes out line by line */
	bool peer_closed;
	bool dead;             /* closed; freed after the current epoll batch */
	uint32_t events;       /* what epoll watches for it now; 0: not in epoll */
	char reqid[33];
	struct conn *prev, *next;
};

struct worker {
	const struct worker_ctx *ctx;
	const struct config *cfg;
	int epfd, sigfd, evfd;
	bool listening;
	uint64_t accept_resume_ms; /* accepting paused (out of fds) until then */
	bool draining;
	bool stop_now;
	struct conn *conns;
	struct conn *dead;     /* closed this batch, freed after it */
	size_t nconns;
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
};

/* Tags for epoll data: pointers to these identify the fd. */
static char tag_listen, tag_channel, tag_sig, tag_ev;

static void conn_free(struct worker *w, struct conn *c);
static void conn_process(struct worker *w, struct conn *c);
static void conn_flush(struct worker *w, struct conn *c);

static size_t in_left(const struct conn *c)
{
	return c->in.len - c->in_off;
}

static size_t out_left(const struct conn *c)
{
	return c->out.len - c->out_off;
}

/* An emptied buffer that one big request or answer made large. */
static void release_if_large(struct buf *b)
{
	if (b->len == 0 && b->cap > CONN_BUF_KEEP)
		buf_free(b);
}

/* Only what is still to be parsed stays, in a block of its size (a
 * dispatched connection's first block holds its whole request). */
static void conn_compact_input(struct conn *c)
{
	struct buf rest;

	if (!c->in_off)
		return;
	buf_init(&rest, 0);
	if (buf_append(&rest, c->in.data + c->in_off, in_left(c)) < 0)
		return;
	buf_free(&c->in);
	c->in = rest;
	c->in_off = 0;
}

/* Parse more of this connection's input now? Not while its answers pile up. */
static bool conn_may_read(const struct conn *c)
{
	return c->state == C_READING && out_left(c) < OUT_HIGH;
}

/*
 * Watch for input only while requests are being read and the client takes
 * its answers: during a job or a handoff, or with OUT_HIGH unsent, the
 * input waits in the socket (level-triggered epoll would otherwise report
 * it again and again). Watch for output while some is pending.
 */
static void ep_update(struct worker *w, struct conn *c)
{
	uint32_t want = (conn_may_read(c) ? EPOLLIN | EPOLLRDHUP : 0) |
			(out_left(c) ? EPOLLOUT : 0);

	/* A streamed answer's client that goes away stops its job: its end
	 * must be seen even while nothing is read. */
	if (c->state == C_JOB && c->streaming)
		want |= EPOLLRDHUP;
	struct epoll_event ev = { .events = want, .data.ptr = c };

	if (c->dead || want == c->events)
		return;
	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = want;
}

static struct conn *conn_new(struct worker *w, int fd)
{
	struct conn *c = xcalloc(1, sizeof(*c));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };

	c->fd = fd;
	c->events = ev.events;
	buf_init(&c->in, 0);
	buf_init(&c->raw, 0);
	buf_init(&c->out, 0);
	http_parser_init(&c->hp, w->cfg->max_header_bytes, w->cfg->max_body_bytes);
	c->last_active_ms = now_ms();
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		log_error("epoll_ctl(ADD, %d): %s", fd, strerror(errno));
		http_parser_free(&c->hp);
		free(c);
		close(fd);
		return NULL;
	}
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	return c;
}

static void tell_master(struct worker *w, enum channel_type type, const int *fds, size_t nfds)
{
	int rc = channel_send(w->ctx->channel_fd, type, NULL, 0, fds, nfds);

	if (rc < 0)
		log_error("channel_send(type %d): %s", type, strerror(-rc));
}

/* The master counts a dispatched connection as a running job until told. */
static void conn_drop_token(struct worker *w, struct conn *c)
{
	if (!c->job_token)
		return;
	c->job_token = false;
	tell_master(w, CHANNEL_DONE, NULL, 0);
}

static void conn_free(struct worker *w, struct conn *c)
{
	if (w->job.req && w->job_conn == c) {
		/* The job thread still works for it: detach, answer nobody. */
		w->job_conn = NULL;
	}
	conn_drop_token(w, c);
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->nconns--;
	/* Later events of this epoll batch may still name it: free it after. */
	c->dead = true;
	c->fd = -1;
	c->prev = NULL;
	c->next = w->dead;
	w->dead = c;
}

static void free_dead(struct worker *w)
{
	while (w->dead) {
		struct conn *c = w->dead;

		w->dead = c->next;
		buf_free(&c->in);
		buf_free(&c->raw);
		buf_free(&c->out);
		http_parser_free(&c->hp);
		free(c);
	}
}

static void set_reqid(struct conn *c, const struct http_request *r)
{
	const char *id = http_header_get(r, "x-request-id");
	size_t n = id ? strlen(id) : 0;
	bool ok = n > 0 && n < sizeof(c->reqid);

	for (size_t i = 0; ok && i < n; i++)
		ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z') ||
		     (id[i] >= 'A' && id[i] <= 'Z') || id[i] == '-' || id[i] == '_';
	if (ok)
		memcpy(c->reqid, id, n + 1);
	else
		random_hex(c->reqid, 8);
}

static void access_log(struct conn *c, const char *method, const char *path, int status,
		       uint64_t started_ms, cJSON *extra)
{
	cJSON *o = extra ? extra : cJSON_CreateObject();

	if (!o)
		return;
	cJSON_AddStringToObject(o, "msg", "request");
	cJSON_AddStringToObject(o, "request_id", c->reqid);
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "status", status);
	cJSON_AddNumberToObject(o, "duration_ms", (double)(now_ms() - started_ms));
	log_json(LOG_INFO, o);
}

static bool conn_keep_alive(const struct worker *w, const struct conn *c)
{
	return c->hp.req.keep_alive && !w->draining && !c->peer_closed;
}

static void extra_headers(const struct conn *c, char *out, size_t n, const char *more)
{
	snprintf(out, n, "X-Request-Id: %s\r\n%s", c->reqid, more ? more : "");
}

/* Finish the current request: forget its bytes, ready the parser. */
static void conn_next_request(struct conn *c, bool keep_alive)
{
	http_parser_next(&c->hp);
	buf_reset(&c->raw);
	release_if_large(&c->raw);
	c->served++;
	c->req_start_ms = 0;
	if (!keep_alive)
		c->state = C_CLOSING;
}

static void respond_error(struct worker *w, struct conn *c, int status, const char *code,
			  const char *msg, bool keep_alive)
{
	char hdr[128];

	extra_headers(c, hdr, sizeof(hdr), NULL);
	http_format_error(&c->out, status, code, msg, keep_alive, hdr);
}

/* ---- jobs ---------------------------------------------------------- */

static int start_job(struct worker *w, struct conn *c, struct job_request *req, bool stream)
{
	char hdr[128];
	int rc;

	extra_headers(c, hdr, sizeof(hdr), NULL);
	rc = jobthread_submit(&w->job, req, stream, conn_keep_alive(w, c), hdr);
	if (rc < 0)
		return rc;
	w->job_conn = c;
	c->streaming = stream;
	w->job_started_ms = now_ms();
	snprintf(w->job_method, sizeof(w->job_method), "%s", c->hp.req.method);
	snprintf(w->job_path, sizeof(w->job_path), "%s", c->hp.req.path);
	atomic_fetch_add(&w->ctx->stats->in_flight, 1);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].state, WS_BUSY);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].job_started_ms, wall_ms());
	c->state = C_JOB;
	ep_update(w, c);
	return 0;
}

static void record_job(struct worker *w, const struct jobthread *j, const struct conn *c)
{
	struct job_record rec = { 0 };
	const struct job_result *res = &j->res;

	rec.end_wall_ms = wall_ms();
	snprintf(rec.lang, sizeof(rec.lang), "%s", j->req->lang->id);
	rec.status = (uint8_t)res->top;
	rec.api = j->req->format == REQ_CODIZE;
	rec.queue_ms = c ? (uint32_t)c->queued_ms : 0;
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
static void conn_take_answer(struct conn *c, struct jobthread *j, bool ka)
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
	if (out_left(c) == 0) {
		buf_free(&c->out);
		c->out = *a;
		c->out_off = 0;
		buf_init(a, 0);
		return;
	}
	buf_append(&c->out, a->data, a->len);
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
	conn_free(w, c);
}

static void finish_job(struct worker *w);

/* Send what a streamed answer has; a send that fails means its client
 * is gone. */
static void stream_flush(struct worker *w, struct conn *c)
{
	conn_flush(w, c);
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
		if (out_left(c) == 0) {
			buf_free(&c->out);
			c->out = lines;
			c->out_off = 0;
			buf_init(&lines, 0);
		} else {
			buf_append(&c->out, lines.data, lines.len);
		}
		if (done)
			conn_flush(w, c);
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
		     w->draining ? WS_DRAINING : WS_IDLE);
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
	if (c) {
		bool ka = conn_keep_alive(w, c);

		c->streaming = false;
		conn_take_answer(c, j, ka);
		access_log(c, w->job_method, w->job_path, j->status, w->job_started_ms - c->queued_ms,
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
		conn_process(w, c);
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
 * extra, which access_log takes), the request's job freed, the master
 * told that this connection holds no job, and on to the next request.
 */
static void answer_before_job(struct worker *w, struct conn *c, struct job_request *job,
			      int status, cJSON *extra, bool ka)
{
	const struct http_request *r = &c->hp.req;

	access_log(c, r->method, r->path, status, c->req_start_ms, extra);
	request_free(job);
	conn_drop_token(w, c);
	conn_next_request(c, ka);
}

/* A bad request: the API's own error body (400 or 413). */
static void refuse_job(struct worker *w, struct conn *c, enum route_kind kind,
		       const struct req_error *errs, size_t nerr, bool ka)
{
	char *body = kind == ROUTE_JOB_CODIZE ? api_codize_error(errs, nerr ? nerr : 1) :
						 api_run_answer_error(&errs[0]);
	int status = errs[0].http_status ? errs[0].http_status : 400;
	char hdr[128];
	cJSON *extra = cJSON_CreateObject();

	extra_headers(c, hdr, sizeof(hdr), NULL);
	if (body)
		http_format_response(&c->out, status, "application/json", body, strlen(body), ka,
				     hdr);
	else
		http_format_error(&c->out, 500, "out_of_memory", "no memory", ka, hdr);
	free(body);
	if (extra)
		cJSON_AddStringToObject(extra, "error_code", errs[0].code);
	answer_before_job(w, c, NULL, status, extra, ka);
}

/* A job request: validate now (bad ones never queue), then run or move. */
static void handle_job(struct worker *w, struct conn *c, enum route_kind kind)
{
	const struct http_request *r = &c->hp.req;
	struct job_request *job = NULL;
	struct req_error errs[16];
	size_t nerr = 0;
	bool ka = conn_keep_alive(w, c);
	char hdr[160];
	int rc;

	memset(errs, 0, sizeof(errs));
	if (kind == ROUTE_JOB_CODIZE)
		rc = api_codize_parse(r->body.data ? r->body.data : "", r->body.len, w->ctx->langs,
				      w->cfg, &job, errs, ARRAY_SIZE(errs), &nerr);
	else
		rc = api_run_parse(r->body.data ? r->body.data : "", r->body.len, w->ctx->langs,
				   w->cfg, &job, &errs[0]);
	if (rc < 0) {
		refuse_job(w, c, kind, errs, nerr, ka);
		return;
	}
	if (!c->job_token) {
		request_free(job);
		c->state = C_HANDOFF;
		return;
	}
	if (!w->sandbox) {
		extra_headers(c, hdr, sizeof(hdr), "Retry-After: 5\r\n");
		http_format_error(&c->out, 503, "sandbox_unavailable", w->sandbox_error, ka, hdr);
		answer_before_job(w, c, job, 503, NULL, ka);
		return;
	}
	/* The job has its own copy of everything: while it runs, the worker
	 * need not hold the request's bytes twice more. */
	buf_free(&c->hp.req.body);
	buf_free(&c->raw);
	conn_compact_input(c);
	rc = start_job(w, c, job, kind == ROUTE_JOB_NATIVE && wants_ndjson(r));
	if (rc < 0) {
		respond_error(w, c, 500, "internal_error", "could not start the job thread", ka);
		answer_before_job(w, c, job, 500, NULL, ka);
		return;
	}
	c->job_token = false; /* spent: the job's end reports CHANNEL_DONE */
}

static void handle_request(struct worker *w, struct conn *c)
{
	const struct http_request *r = &c->hp.req;
	enum route_kind kind = routes_classify(r);
	bool ka = conn_keep_alive(w, c);
	char hdr[128];
	int status;

	set_reqid(c, r);
	atomic_fetch_add(&w->ctx->stats->requests_total, 1);
	if (kind != ROUTE_SIMPLE) {
		handle_job(w, c, kind);
		return;
	}
	extra_headers(c, hdr, sizeof(hdr), NULL);
	status = routes_simple(&w->rctx, r, ka, hdr, &c->out);
	access_log(c, r->method, r->path, status, c->req_start_ms, NULL);
	conn_next_request(c, ka);
}

/*
 * The most a handed-off connection carries: one request the parser
 * accepted, and what was read ahead of the parser (under READ_AHEAD plus
 * one read). The worker it goes to keeps that much, so nothing a client
 * pipelined is lost on the way.
 */
static size_t handoff_max(const struct config *cfg)
{
	return http_request_max_bytes(cfg->max_header_bytes, cfg->max_body_bytes) + READ_AHEAD +
	       READ_CHUNK;
}

/* Move the connection to the master's queue: fd plus unparsed bytes. */
static void conn_handoff(struct worker *w, struct conn *c)
{
	int fds[2];
	int mfd;

	/* What the parser consumed for this request, then what it has not seen. */
	if (in_left(c) && buf_append(&c->raw, c->in.data + c->in_off, in_left(c)) < 0) {
		conn_free(w, c);
		return;
	}
	mfd = channel_memfd_from(c->raw.data ? c->raw.data : "", c->raw.len);
	if (mfd < 0) {
		log_error("memfd_create: %s", strerror(-mfd));
		respond_error(w, c, 503, "overloaded", "could not queue the job", false);
		c->state = C_CLOSING;
		return;
	}
	fds[0] = c->fd;
	fds[1] = mfd;
	tell_master(w, CHANNEL_ENQUEUE, fds, 2);
	close(mfd);
	conn_free(w, c);
}

static void conn_flush(struct worker *w, struct conn *c)
{
	while (out_left(c) > 0) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, out_left(c), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			c->state = C_CLOSING;
			c->out_off = c->out.len;
			c->peer_closed = true;
			break;
		}
		c->out_off += (size_t)n;
		c->last_active_ms = now_ms();
	}
	if (out_left(c) == 0) {
		buf_reset(&c->out);
		c->out_off = 0;
		release_if_large(&c->out);
	} else if (c->out_off > c->out.len / 2) {
		/* Moving the unsent half is paid for by the half sent. */
		buf_consume(&c->out, c->out_off);
		c->out_off = 0;
	}
	ep_update(w, c);
}

/* The parser used n bytes of the input. */
static void conn_consume_input(struct conn *c, size_t n)
{
	c->in_off += n;
	if (c->in_off == c->in.len) {
		buf_reset(&c->in);
		c->in_off = 0;
		release_if_large(&c->in);
	}
}

/* Parse and answer what the input holds, in order, while answers are taken. */
static void conn_parse(struct worker *w, struct conn *c)
{
	while (conn_may_read(c) && in_left(c) > 0) {
		size_t used = 0;
		enum http_feed f = http_parser_feed(&c->hp, c->in.data + c->in_off, in_left(c),
						    &used);

		if (used) {
			if (!c->req_start_ms)
				c->req_start_ms = now_ms();
			/* Kept for a handoff; a dispatched job runs here, whatever. */
			if (!c->job_token &&
			    buf_append(&c->raw, c->in.data + c->in_off, used) < 0) {
				c->state = C_CLOSING;
				break;
			}
			conn_consume_input(c, used);
		}
		if (f == HTTP_NEED_MORE)
			break;
		if (f == HTTP_HEADERS_DONE) {
			/*
			 * Only to a client that waits for it: when some of the body is
			 * here already (the client did not wait, or the connection was
			 * handed over with its request whole), the answer is omitted
			 * (RFC 9110, 10.1.1), so a job's client never hears it twice.
			 */
			if (c->hp.req.expect_continue && in_left(c) == 0)
				buf_puts(&c->out, HTTP_CONTINUE_RESPONSE);
			continue;
		}
		if (f == HTTP_ERROR) {
			random_hex(c->reqid, 8);
			respond_error(w, c, c->hp.err_status, c->hp.err_code, c->hp.err_msg, false);
			access_log(c, "-", "-", c->hp.err_status,
				   c->req_start_ms ? c->req_start_ms : now_ms(), NULL);
			conn_drop_token(w, c);
			c->state = C_CLOSING;
			break;
		}
		handle_request(w, c);
	}
}

static void conn_process(struct worker *w, struct conn *c)
{
	/* A flush that makes room lets the rest of the input be parsed. */
	do {
		conn_parse(w, c);
		conn_flush(w, c);
	} while (conn_may_read(c) && in_left(c) > 0);
	if (c->state == C_HANDOFF && out_left(c) == 0) {
		conn_handoff(w, c);
		return;
	}
	if ((c->state == C_CLOSING || (c->peer_closed && c->state == C_READING)) &&
	    out_left(c) == 0)
		conn_free(w, c);
}

static void conn_readable(struct worker *w, struct conn *c)
{
	char tmp[READ_CHUNK];

	if (!conn_may_read(c)) {
		/*
		 * Hold input back until the current job or handoff is done, or
		 * until the client takes its answers. A hang-up or error is
		 * reported whatever the mask: a connection that is done must be
		 * let go now, or epoll reports it again and again.
		 */
		conn_process(w, c);
		return;
	}
	if (c->in_off) {
		buf_consume(&c->in, c->in_off);
		c->in_off = 0;
	}
	while (in_left(c) < READ_AHEAD) {
		ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);

		if (n > 0) {
			c->last_active_ms = now_ms();
			if (buf_append(&c->in, tmp, (size_t)n) < 0) {
				conn_free(w, c);
				return;
			}
			continue;
		}
		if (n == 0) {
			c->peer_closed = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			c->peer_closed = true;
		break;
	}
	conn_process(w, c);
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
		conn_new(w, fd);
	}
}

/*
 * A connection the master hands over, with the bytes its first worker had
 * read. Whatever happens, its client hears an answer: a request that no
 * longer fits (a reload lowered the caps) gets 413, a failure 503.
 */
static void conn_dispatched(struct worker *w, int fds[2], uint64_t queued_ms)
{
	char *data = NULL;
	size_t len = 0;
	struct conn *c;
	int rc = channel_memfd_read(fds[1], &data, &len, handoff_max(w->cfg));

	close(fds[1]);
	set_nonblock(fds[0], true);
	c = conn_new(w, fds[0]);
	if (!c) {
		free(data);
		tell_master(w, CHANNEL_DONE, NULL, 0);
		return;
	}
	c->job_token = true;
	c->queued_ms = queued_ms;
	if (rc < 0) {
		random_hex(c->reqid, 8);
		if (rc == -EMSGSIZE)
			respond_error(w, c, 413, "body_too_large",
				      "the request and what was pipelined after it exceed this "
				      "server's caps", false);
		else
			respond_error(w, c, 503, "overloaded", "could not take the job over",
				      false);
		access_log(c, "-", "-", rc == -EMSGSIZE ? 413 : 503, now_ms(), NULL);
		conn_drop_token(w, c);
		c->state = C_CLOSING;
	} else {
		/* The memfd's bytes become the input as they are: no second copy. */
		buf_free(&c->in);
		c->in.data = data;
		c->in.len = len;
		c->in.cap = len + 1;
	}
	conn_process(w, c);
}

/* A message from the master, checked against the channel's table: only
 * the types the master sends come here, each with its fds. */
static void on_master_message(void *arg, struct channel_msg *m)
{
	struct worker *w = arg;
	uint64_t queued_ms;

	switch (m->type) {
	case CHANNEL_QUIT:
		w->draining = true;
		break;
	case CHANNEL_DISPATCH:
		memcpy(&queued_ms, m->payload, sizeof(queued_ms));
		conn_dispatched(w, m->fds, queued_ms);
		break;
	case CHANNEL_ENQUEUE:
	case CHANNEL_IDLE:
	case CHANNEL_DONE:
		break; /* a worker's own: channel_recv refused them */
	}
}

static void read_master_channel(struct worker *w)
{
	int rc = channel_readable(w->ctx->channel_fd, CHANNEL_TO_WORKER, "the master",
				  on_master_message, w);

	if (rc < 0) {
		/* The master is gone (or its channel failed): finish up and leave. */
		w->draining = true;
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
			w->draining = true;
			break;
		case SIGQUIT:
			w->stop_now = true;
			break;
		default:
			break;
		}
	}
}

/* Slow clients and idle keep-alive connections. */
static void sweep_conns(struct worker *w)
{
	uint64_t now = now_ms();
	struct conn *c = w->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->state == C_JOB)
			continue;
		if (c->state == C_READING && http_parser_in_request(&c->hp) && c->req_start_ms &&
		    now - c->req_start_ms > w->cfg->read_timeout_ms) {
			random_hex(c->reqid, 8);
			respond_error(w, c, 408, "request_timeout",
				      "the request was not received in time", false);
			access_log(c, "-", "-", 408, c->req_start_ms, NULL);
			c->state = C_CLOSING;
			conn_flush(w, c);
			if (out_left(c) == 0 || now - c->last_active_ms > 1000)
				conn_free(w, c);
			continue;
		}
		/*
		 * Draining closes idle keep-alive connections, but not one that was
		 * accepted and has not sent its first request yet: its client is
		 * about to, and a reload must not make it fail.
		 */
		if (c->state == C_READING && !http_parser_in_request(&c->hp) &&
		    out_left(c) == 0 &&
		    ((w->draining && (c->served > 0 ||
				      now - c->last_active_ms > w->cfg->read_timeout_ms)) ||
		     now - c->last_active_ms > w->cfg->keepalive_timeout_ms)) {
			conn_free(w, c);
			continue;
		}
		if (out_left(c) > 0 && now - c->last_active_ms > w->cfg->read_timeout_ms)
			conn_free(w, c); /* a client that does not read its answer */
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

	return jobthread_start(&w->job, &env, w->evfd);
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
					epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
					c->events = 0;
					continue;
				}
				if (evs[i].events & EPOLLOUT)
					conn_flush(w, c);
				if (c->dead)
					continue;
				if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
					conn_readable(w, c);
				else
					conn_process(w, c);
			}
		}
		free_dead(w);
		if (w->accept_resume_ms && now_ms() >= w->accept_resume_ms && !w->draining) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_listen };

			if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->ctx->listen_fd, &ev) == 0)
				w->listening = true;
			w->accept_resume_ms = 0;
		}
		if (w->draining)
			start_draining(w);
		if (now_ms() - last_sweep >= TICK_MS || w->draining) {
			sweep_conns(w);
			last_sweep = now_ms();
		}
		if (w->draining && !w->job.req && w->nconns == 0)
			break;
	}
}

int worker_main(const struct worker_ctx *ctx)
{
	struct worker w;
	char role[32];
	int rc;

	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.cfg = ctx->cfg;
	w.uid = config_sandbox_uid(ctx->cfg, CONFIG_SANDBOX_WORKER, ctx->index);
	w.gid = w.uid;
	/* A judge program runs under a uid of its own, one per worker. */
	w.judge_uid = config_sandbox_uid(ctx->cfg, CONFIG_SANDBOX_JUDGE, ctx->index);
	w.rctx.cfg = ctx->cfg;
	w.rctx.langs = ctx->langs;
	w.rctx.generation = ctx->generation;
	w.rctx.stats = ctx->stats;
	w.rctx.probes = ctx->probes;
	w.rctx.jail_name = "";
	w.rctx.jail_version = "";
	w.rctx.jail_path = "";
	snprintf(role, sizeof(role), "worker-%u", ctx->index);
	log_set_role(role);
	prctl(PR_SET_NAME, role, 0, 0, 0);
	proctitle_set("goboxd: worker %u", ctx->index);
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	/* The master died before we got here. Not getppid() == 1: in a
	 * container the master itself is pid 1. */
	if (getppid() != ctx->master_pid)
		return 0;

	if (setup_fds(&w) < 0) {
		log_error("worker set-up failed: %s", strerror(errno));
		return 1;
	}
	setup_sandbox(&w);
	if (geteuid() == 0 && (rc = sandbox_keep_caps()) < 0) {
		log_error("dropping capabilities failed: %s", strerror(-rc));
		return WORKER_EXIT_CONFIG;
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
	while (w.conns)
		conn_free(&w, w.conns);
	free_dead(&w);
	jobthread_stop(&w.job);
	atomic_store(&ctx->stats->workers[ctx->index].state, WS_EMPTY);
	atomic_store(&ctx->stats->workers[ctx->index].pid, 0);
	sandbox_close(w.sandbox);
	buildcache_close(w.cache);
	return 0;
}
