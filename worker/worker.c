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

#include "common/admit.h"
#include "common/buf.h"
#include "common/channel.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/stats.h"
#include "worker/judge/request.h"
#include "common/util.h"
#include "worker/conn.h"
#include "worker/answer.h"
#include "worker/from_master.h"
#include "worker/http/api.h"
#include "worker/judge/buildcache.h"
#include "worker/http/http.h"
#include "worker/judge/job.h"
#include "worker/http/routes.h"
#include "worker/http/try_page.h"
#include "worker/http/wire.h"
#include "common/auth.h"
#include "worker/outbox.h"
#include "worker/http/callback.h"
#include "worker/jobthread.h"
#include "worker/submissions.h"
#include "worker/to_master.h"
#include "worker/worker_state.h"
#include "worker/sandbox/sandbox.h"
#include "worker/session.h"
#include "worker/http/websocket.h"

#define MAX_EVENTS 64
#define TICK_MS 200

/* Tags for epoll data: pointers to these identify the fd. */
static char tag_listen, tag_channel, tag_sig, tag_ev;

/* A connection closes: a job that still runs for it answers nobody. */
static void forget_conn(void *arg, struct conn *c)
{
	struct worker *w = arg;

	if (w->job.req && w->job_conn == c)
		w->job_conn = NULL;
	session_conn_closing(w, c);
	to_master_give_back_slot(w, c);
}

/* ---- requests ------------------------------------------------------ */

static int start_job(struct worker *w, struct conn *c, struct job_request *req,
		     const struct api_format *f, bool stream)
{
	char hdr[128];
	int rc;

	conn_headers(c, hdr, sizeof(hdr), NULL);
	rc = jobthread_submit(&w->job, req, f, stream, conn_keep_alive(&w->conns, c), hdr);
	if (rc < 0)
		return rc;
	answer_job_began(w, c, c->hp.req.method, c->hp.req.path);
	c->streaming = stream;
	c->state = C_JOB;
	conn_watch(&w->conns, c);
	return 0;
}

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
	to_master_give_back_slot(w, c);
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

/*
 * Whether this worker runs the job of a request it read itself, with no
 * hop through the master and no second parse: it is of the current
 * generation and idle, nothing waits at the master, and a job slot is
 * free (common/admit.h). Its end reports DONE as a dispatched job's does.
 */
static bool take_job_itself(struct worker *w, struct conn *c)
{
	struct stats *st = w->ctx->stats;

	if (w->conns.draining || !w->sandbox || w->job.req || w->session ||
	    w->ctx->generation != atomic_load(&st->generation) ||
	    !admit_self(&st->admit, w->ctx->index, w->cfg->max_concurrency))
		return false;
	c->job_slot = true;
	c->queued_ms = 0;
	atomic_fetch_add(&st->jobs_taken_directly, 1);
	return true;
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
	if (!c->job_slot && !take_job_itself(w, c)) {
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

/*
 * A live session's request (GET /sessions, GET /api/v2/connect): a
 * WebSocket offer, let in as a job is (a job slot, here or through the
 * master's queue: the 101 is sent by the worker that runs it).
 */
static void handle_session(struct worker *w, struct conn *c)
{
	const struct http_request *r = &c->hp.req;
	char accept[WEBSOCKET_ACCEPT_LEN], hdr[192];
	const char *why = "";
	int status = websocket_check(r, accept, &why);

	if (status) {
		struct req_error e = { .http_status = status, .code = "bad_upgrade" };
		char *body;

		snprintf(e.message, sizeof(e.message), "%s", why);
		conn_headers(c, hdr, sizeof(hdr), status == 426 ?
			     "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" : NULL);
		body = wire_of_path(r->path)->error(&e);
		if (body)
			http_format_response(&c->out, status, "application/json", body,
					     strlen(body), false, hdr);
		free(body);
		answer_before_job(w, c, NULL, status, NULL, false);
		return;
	}
	if (!c->job_slot && !take_job_itself(w, c)) {
		c->state = C_HANDOFF;
		return;
	}
	if (!w->sandbox || session_open(w, c, strcmp(r->path, "/sessions") ? SESSION_PISTON :
						   SESSION_NATIVE, accept) < 0) {
		conn_headers(c, hdr, sizeof(hdr), "Retry-After: 5\r\n");
		http_format_error(&c->out, 503, "sandbox_unavailable",
				  w->sandbox ? "no memory for the session" : w->sandbox_error, false,
				  hdr);
		answer_before_job(w, c, NULL, 503, NULL, false);
		return;
	}
	conn_log(c, r->method, r->path, 101, c->req_start_ms, NULL);
}

/* The token a request carries: X-Auth-Token or X-Auth-User (Judge0's
 * names), or Authorization: Bearer; for a session's WebSocket upgrade,
 * which a browser cannot give headers, ?token= too (*query holds it
 * then, to free). NULL when none. */
static const char *request_token(const struct http_request *r, char **query)
{
	const char *t = http_header_get(r, "x-auth-token");
	const char *a, *up;

	*query = NULL;
	if (!t)
		t = http_header_get(r, "x-auth-user");
	if (t)
		return t;
	a = http_header_get(r, "authorization");
	if (a && !strncasecmp(a, "Bearer ", 7))
		return a + 7 + strspn(a + 7, " ");
	up = http_header_get(r, "upgrade");
	if (routes_classify(r) == ROUTE_SESSION && up && !strcasecmp(up, "websocket"))
		*query = http_query_param(r, "token");
	return *query;
}

/*
 * With --auth-tokens, every request but the probes' (unless
 * --auth-probes) and the page to try sessions (static, it asks for its
 * token itself) needs a token of the file: without one, 401 in the
 * words of the API its path belongs to. True when it may go on.
 */
static bool authorized(struct worker *w, struct conn *c, bool ka)
{
	const struct http_request *r = &c->hp.req;
	struct req_error e = { .http_status = 401, .code = "unauthorized",
			       .message = "a valid token is required (X-Auth-Token, or Authorization:"
					  " Bearer)" };
	const char *token;
	char hdr[192], *body, *query;
	bool ok;

	if (w->cfg->try_page && try_page_owns(r->path))
		return true;
	/* The master's tokens, not this generation's: a worker that a reload
	 * retires still serves the connections it holds. */
	token = request_token(r, &query);
	ok = auth_shared_allows(w->ctx->auth, &w->auth, routes_is_probe(r->path), token,
				token ? strlen(token) : 0, &c->who);
	free(query);
	if (ok)
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
	if (kind == ROUTE_SESSION) {
		handle_session(w, c);
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
	to_master_tell(w, CHANNEL_ENQUEUE, fds, 2);
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

/* The index-th CPU of set (modulo their number). */
static int pick_cpu(const cpu_set_t *set, unsigned index, unsigned *out)
{
	int n = CPU_COUNT(set);

	if (n <= 0)
		return -ENOENT;
	index %= (unsigned)n;
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		if (index-- == 0) {
			*out = c;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * First, before any thread, keeper or jail is born, as each inherits it:
 * the worker's CPU (worker i: the i-th CPU this process may use), and,
 * with --pin-workers (the default) and more than one CPU to choose from,
 * the worker kept on it. A request's steps then pass from the loop to the
 * job thread, to the init and back on one CPU, where otherwise the
 * scheduler may wake each on another (docs/benchmarks.md). The programs
 * are not kept there: the sandbox gives them the CPUs the worker had
 * before (sandbox_opts.program_cpus), unless pinned.
 */
static void keep_to_own_cpu(struct worker *w)
{
	cpu_set_t one;
	int rc;

	w->has_cpu = sched_getaffinity(0, sizeof(w->cpus), &w->cpus) == 0 &&
		     pick_cpu(&w->cpus, w->ctx->index, &w->cpu) == 0;
	if (!w->has_cpu || !w->cfg->pin_workers || CPU_COUNT(&w->cpus) < 2)
		return;
	CPU_ZERO(&one);
	CPU_SET(w->cpu, &one);
	rc = sched_setaffinity(0, sizeof(one), &one);
	if (rc < 0)
		log_warn("keeping worker %u on CPU %u: %s", w->ctx->index, w->cpu,
			 strerror(errno));
	w->kept = rc == 0;
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
		.network = cfg->network,
	};
	const char **mounts = langtab_mounts(w->ctx->langs);
	int rc;

	/* Codize requests are pinned even without --pin-cpus (job.c). */
	o.has_cpu = w->has_cpu;
	o.cpu = w->cpu;
	o.pin_cpu = cfg->pin_cpus && o.has_cpu;
	o.program_cpus = w->kept ? &w->cpus : NULL;

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

	w->network = (struct network_policy){
		.slirp4netns = w->cfg->slirp4netns_path,
		.allow = &w->cfg->network_nets,
		.max_bytes = w->cfg->network_max_bytes,
		.max_connections = w->cfg->network_max_connections,
	};
	env.network = w->cfg->network ? &w->network : NULL;

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
				from_master_read(w);
			} else if (p == &tag_sig) {
				read_worker_signals(w);
			} else if (p == &tag_ev) {
				uint64_t v;

				if (read(w->evfd, &v, sizeof(v)) > 0 && w->job.req)
					answer_progress(w);
			} else if (!session_event(w, p, evs[i].events)) {
				struct conn *c = p;

				if (c->dead)
					continue;
				if (c->state == C_JOB && c->streaming) {
					answer_stream_event(w, c, evs[i].events);
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
			session_tick(w);
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
	w->session_progress = session_progress;
	w->session_job_done = session_job_done;
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
					  .no_job = to_master_give_back_slot, .closing = forget_conn };
	int rc;

	worker_init(&w, ctx);
	/* The master died before we got here. Not getppid() == 1: in a
	 * container the master itself is pid 1. */
	if (getppid() != ctx->master_pid)
		return 0;
	keep_to_own_cpu(&w);

	if (setup_fds(&w) < 0) {
		log_error("worker set-up failed: %s", strerror(errno));
		return 1;
	}
	conn_set_init(&w.conns, w.epfd, w.cfg, &hooks);
	/* one worker removes the expired submissions and watches the store;
	 * every one takes new ones */
	submissions_open(&w.subs, ctx->cfg, ctx->langs, ctx->store_refused, ctx->index == 0,
			 ctx->stats, &w.callbacks);
	w.subs.submitted = to_master_submitted;
	w.subs.deferred = to_master_deferred;
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
	to_master_tell(&w, CHANNEL_IDLE, NULL, 0);

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
