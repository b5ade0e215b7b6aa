/*
 * A live session, the loop's side: libwslay reads and writes the
 * WebSocket's frames straight on the socket (its callbacks), the
 * program's pipes sit in the worker's epoll beside it, and every buffer
 * between them is bounded: the program's output is read only while
 * fewer than QUEUE_HIGH bytes wait for the client, and the client's
 * frames only while its stdin and the answers to it (pongs included)
 * stay under their marks. What waits beyond waits in the kernel's
 * buffers, where the program (blocked in write) and the client (its
 * socket full) feel it.
 */
#include "autoconf.h"

#include "worker/session.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/stats.h"
#include "common/utf8.h"
#include "common/util.h"
#include "common/verdict.h"
#include "worker/answer.h"
#include "worker/conn.h"
#include "worker/http/websocket.h"
#include "worker/http/wire.h"
#include "worker/jobthread.h"
#include "worker/worker_state.h"

#define QUEUE_HIGH (256 * 1024)   /* frames waiting for the client */
#define STDIN_HIGH (64 * 1024)    /* stdin waiting for the program */
#define READ_TURN (64 * 1024)     /* socket bytes one event may take */
#define PIPE_CHUNK (16 * 1024)
#define PISTON_INIT_MS 1000       /* Piston's own: init within a second */
#define CLOSE_LINGER_MS 2000      /* a close frame the client does not take */
#define LINGER_DROP (1024 * 1024)

enum { P_IN, P_OUT, P_ERR };

struct session {
	struct worker *w;
	struct conn *c;           /* NULL once its client is gone */
	enum session_proto proto;
	wslay_event_context_ptr ws;
	bool job, job_over;       /* its job went to the thread; it is over */
	bool ending;              /* its end is decided: nothing more is read */
	bool error_sent;
	int fds[3];               /* the program's stdin, stdout, stderr: ours */
	char tags[3];             /* epoll's data for them */
	uint32_t fd_events[3];
	struct buf in;            /* stdin not yet written, from in_off */
	size_t in_off;
	bool close_stdin;
	bool tty;                 /* a terminal: fds[P_IN] and fds[P_OUT] are its side */
	struct winsize size;      /* the terminal's, as the client last gave it */
	uint64_t stdin_total, out_total;
	char hold[2][4];          /* a character cut by a read, per stream */
	size_t nhold[2];
	size_t turn;
	uint64_t opened_ms, last_ms, close_by_ms;
	const char *reason;       /* the status word of an end goboxd chose */
	uint16_t close_code;      /* the close decided, sent after what is queued */
	bool close_queued;
	bool shut;                /* the close is out, the socket shut for writing */
	size_t dropped;
	char close_reason[124];   /* a close frame holds at most 123 bytes of reason */
	uint32_t conn_events;
};

static void pump_out(struct session *s);
static void update_watch(struct session *s);
static void read_pipe(struct session *s, int i, bool drain);

/* ---- frames ---------------------------------------------------------- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
		       void *arg)
{
	struct session *s = arg;
	struct conn *c = s->c;
	ssize_t n;

	if (c->in.len > c->in_off) {
		/* what came behind the request's head (a handed-over one's too) */
		n = (ssize_t)(c->in.len - c->in_off < len ? c->in.len - c->in_off : len);
		memcpy(buf, c->in.data + c->in_off, (size_t)n);
		c->in_off += (size_t)n;
		return n;
	}
	if (s->turn >= READ_TURN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (len > READ_TURN - s->turn)
		len = READ_TURN - s->turn;
	do
		n = recv(c->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		s->turn += (size_t)n;
		return n;
	}
	wslay_event_set_error(ctx, n < 0 && errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK :
					 WSLAY_ERR_CALLBACK_FAILURE);
	if (n == 0 || errno != EAGAIN)
		c->peer_closed = true;
	return -1;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
		       void *arg)
{
	struct session *s = arg;
	ssize_t n;

	do
		n = send(s->c->fd, data, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n >= 0) {
		s->last_ms = now_ms();
		return n;
	}
	wslay_event_set_error(ctx, errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK :
				   WSLAY_ERR_CALLBACK_FAILURE);
	if (errno != EAGAIN)
		s->c->peer_closed = true;
	return -1;
}

static void send_text(struct session *s, char *text)
{
	struct wslay_event_msg m = { WSLAY_TEXT_FRAME, (const uint8_t *)text, 0 };

	if (!text || !s->c)
		goto out;
	m.msg_length = strlen(text);
	wslay_event_queue_msg(s->ws, &m);
out:
	free(text);
}

/* libwslay sends control frames before data: the close is queued only
 * once every message before it is out (pump_out). */
static void send_close(struct session *s, uint16_t code, const char *reason)
{
	if (!s->c || s->close_code)
		return;
	s->close_code = code;
	snprintf(s->close_reason, sizeof(s->close_reason), "%.120s", reason);
	s->ending = true;
	s->close_by_ms = now_ms() + CLOSE_LINGER_MS;
}

static void queue_close(struct session *s)
{
	if (!s->close_code || s->close_queued || wslay_event_get_queued_msg_count(s->ws))
		return;
	s->close_queued = true;
	wslay_event_queue_close(s->ws, s->close_code, (const uint8_t *)s->close_reason,
				strlen(s->close_reason));
}

static void send_error(struct session *s, const char *code, const char *message)
{
	s->error_sent = true;
	send_text(s, session_msg_error(s->proto, code, message));
}

/* ---- the program's pipes ------------------------------------------------ */

static void watch_fd(struct session *s, int i, uint32_t want)
{
	struct epoll_event ev = { .events = want, .data.ptr = &s->tags[i] };

	if (s->fds[i] < 0 || want == s->fd_events[i])
		return;
	if (epoll_ctl(s->w->epfd, EPOLL_CTL_MOD, s->fds[i], &ev) == 0)
		s->fd_events[i] = want;
}

static void close_pipe(struct session *s, int i)
{
	if (s->fds[i] < 0)
		return;
	epoll_ctl(s->w->epfd, EPOLL_CTL_DEL, s->fds[i], NULL);
	close(s->fds[i]);
	s->fds[i] = -1;
	s->fd_events[i] = 0;
}

/* The terminal's size, as the client gave it (a window the program is
 * told of with SIGWINCH). */
static void apply_size(struct session *s)
{
	if (s->tty && s->fds[P_IN] >= 0)
		(void)ioctl(s->fds[P_IN], TIOCSWINSZ, &s->size);
}

static size_t stdin_left(const struct session *s)
{
	return s->in.len - s->in_off;
}

static void write_stdin(struct session *s)
{
	while (s->fds[P_IN] >= 0 && stdin_left(s)) {
		ssize_t n = write(s->fds[P_IN], s->in.data + s->in_off, stdin_left(s));

		if (n > 0) {
			s->in_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		/* the program stopped reading: its right; what is left is dropped */
		s->in_off = s->in.len;
		close_pipe(s, P_IN);
	}
	if (!stdin_left(s)) {
		buf_reset(&s->in);
		s->in_off = 0;
		if (s->close_stdin)
			close_pipe(s, P_IN);
	}
}

/* How much of n bytes ends on a whole character; the rest waits. */
static size_t whole_chars(const char *d, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned need = utf8_lead_len((unsigned char)d[n - back]);

		if (need > 1)
			return need > back ? n - back : n;
		if (need == 1)
			return n;
	}
	return n;
}

static void emit(struct session *s, int i, const char *data, size_t n, bool last)
{
	int k = i == P_ERR;
	char *all = xmalloc(s->nhold[k] + n + 1);
	size_t len = s->nhold[k] + n, keep;

	memcpy(all, s->hold[k], s->nhold[k]);
	memcpy(all + s->nhold[k], data, n);
	keep = last ? len : whole_chars(all, len);
	s->nhold[k] = len - keep;
	memcpy(s->hold[k], all + keep, s->nhold[k]);
	if (keep)
		send_text(s, session_msg_output(s->proto, k, all, keep));
	free(all);
}

static void end_early(struct session *s, const char *reason, const char *code, const char *msg);

static void read_pipe(struct session *s, int i, bool drain)
{
	char chunk[PIPE_CHUNK];
	uint64_t cap = s->w->cfg->max_session_output;

	while (s->fds[i] >= 0 && (drain || wslay_event_get_queued_msg_length(s->ws) < QUEUE_HIGH)) {
		ssize_t n = read(s->fds[i], chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			emit(s, i, "", 0, true);
			close_pipe(s, i);
			return;
		}
		if (s->out_total + (uint64_t)n > cap) {
			emit(s, i, chunk, (size_t)(cap - s->out_total), true);
			s->out_total = cap;
			close_pipe(s, P_OUT);
			close_pipe(s, P_ERR);
			end_early(s, "output_limit", "output_limit",
				  "the program wrote more than --max-session-output: it is killed");
			return;
		}
		s->out_total += (uint64_t)n;
		emit(s, i, chunk, (size_t)n, false);
	}
}

/* ---- its end ------------------------------------------------------------ */

static void session_free(struct session *s)
{
	for (int i = 0; i < 3; i++)
		close_pipe(s, i);
	if (s->ws)
		wslay_event_context_free(s->ws);
	buf_free(&s->in);
	s->w->session = NULL;
	free(s);
}

/* The job's end is told with the exit: until then nothing is closed. */
static void end_early(struct session *s, const char *reason, const char *code, const char *msg)
{
	if (s->ending)
		return;
	s->reason = reason;
	send_error(s, code, msg);
	if (s->job && !s->job_over) {
		s->ending = true;
		jobthread_cancel(&s->w->job);
		return;
	}
	if (s->proto == SESSION_PISTON)
		send_close(s, 4002, "Notified Error");
	else
		send_close(s, 1008, code);
}

/* Its client is gone: the program goes at once, the connection now. */
static void client_gone(struct session *s)
{
	struct conn *c = s->c;

	if (s->job && !s->job_over)
		jobthread_cancel(&s->w->job);
	if (c)
		conn_free(&s->w->conns, c);  /* session_conn_closing follows */
}

void session_conn_closing(struct worker *w, struct conn *c)
{
	struct session *s = w->session;

	if (!s || s->c != c)
		return;
	s->c = NULL;
	for (int i = 0; i < 3; i++)
		close_pipe(s, i);
	if (s->job && !s->job_over) {
		jobthread_cancel(&w->job);
		return;  /* freed at the job's end */
	}
	session_free(s);
}

/* ---- the client's messages -------------------------------------------- */

/* A refused start's message, from its API's error body. */
static void refusal_text(const char *body, char *out, size_t n)
{
	cJSON *root = body ? cJSON_Parse(body) : NULL;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e ? e : root, "message");

	snprintf(out, n, "%s", cJSON_IsString(m) ? m->valuestring : "the start was refused");
	cJSON_Delete(root);
}

static int parse_start(struct session *s, struct session_msg *m, struct job_request **job,
		       const struct api_format **f)
{
	struct http_request r = { .method = "POST" };
	struct api_refusal no = { 0 };
	char why[200];
	int rc;

	r.path = s->proto == SESSION_PISTON ? "/api/v2/execute" : "/run";
	*f = wire_of_path(r.path);
	r.body.data = m->data;
	r.body.len = m->len;
	rc = (*f)->parse(&r, s->w->ctx->langs, s->w->cfg, job, &no);
	if (rc < 0) {
		refusal_text(no.body, why, sizeof(why));
		free(no.body);
		end_early(s, "refused", no.code[0] ? no.code : "invalid_request", why);
		return rc;
	}
	if ((*job)->ntests != 1 || (*job)->interactor || (*job)->checker) {
		request_free(*job);
		end_early(s, "refused", "invalid_request",
			  "a session runs one program: no tests, interactor or checker");
		return -EINVAL;
	}
	return 0;
}

static void start(struct session *s, struct session_msg *m)
{
	struct worker *w = s->w;
	struct job_request *job;
	const struct api_format *f;
	const struct req_test *t;

	if (parse_start(s, m, &job, &f) < 0)
		return;
	t = &job->tests[0];
	/* Piston's init stdin is not written in its interactive mode: neither here */
	if (t->stdin_len && s->proto == SESSION_NATIVE) {
		buf_append(&s->in, t->stdin_data, t->stdin_len);
		s->stdin_total += t->stdin_len;
	}
	if (s->proto == SESSION_PISTON)
		send_text(s, session_msg_runtime(job->lang->piston_runtime ? job->lang->piston_runtime :
						 job->lang->id, job->lang->piston_version ?
						 job->lang->piston_version : ""));
	if (job->lang->has_build)
		send_text(s, session_msg_stage(s->proto, true));
	snprintf(w->job.owner, sizeof(w->job.owner), "%s", s->c->who.owner);
	s->tty = m->tty;
	s->size = (struct winsize){ .ws_row = m->rows, .ws_col = m->cols };
	if (jobthread_submit_session(&w->job, job, f,
				     &(struct jobthread_tty){ m->tty, m->rows, m->cols }) < 0) {
		request_free(job);
		end_early(s, "internal_error", "internal_error", "could not start the job thread");
		return;
	}
	answer_job_began(w, s->c, "GET", s->proto == SESSION_PISTON ? "/api/v2/connect" :
							"/sessions");
	s->c->job_slot = false;  /* spent: the job's end reports DONE */
	s->job = true;
}

static void not_started(struct session *s)
{
	if (s->proto == SESSION_PISTON)
		send_close(s, 4003, "Not yet initialized");
	else
		end_early(s, "refused", "not_started", "send start first");
}

static void take_stdin(struct session *s, const char *data, size_t len)
{
	if (s->stdin_total + len > s->w->cfg->max_session_stdin) {
		end_early(s, "stdin_limit", "stdin_limit",
			  "the client sent more stdin than --max-session-stdin");
		return;
	}
	s->stdin_total += len;
	buf_append(&s->in, data, len);
	write_stdin(s);
}

/* A start that comes again: Piston's close code, or goboxd's error. */
static void started_again(struct session *s)
{
	if (s->proto == SESSION_PISTON)
		send_close(s, 4000, "Already Initialized");
	else
		end_early(s, "refused", "already_started", "the session has started");
}

/* A message for the program, once the session has started. */
static void for_program(struct session *s, struct session_msg *m)
{
	if (!s->job) {
		not_started(s);
	} else if (m->kind == SM_STDIN) {
		take_stdin(s, m->data, m->len);
	} else if (m->kind == SM_CLOSE_STDIN && s->tty) {
		/* a terminal stays: its end-of-file key, as one typed it */
		take_stdin(s, "\x04", 1);
	} else if (m->kind == SM_CLOSE_STDIN) {
		s->close_stdin = true;
		write_stdin(s);
	} else if (m->kind == SM_SIGNAL && !s->job_over) {
		jobthread_signal(&s->w->job, m->signal);
	} else if (m->kind == SM_RESIZE && !s->tty) {
		end_early(s, "refused", "invalid_message", "resize needs a session started with tty");
	} else if (m->kind == SM_RESIZE) {
		s->size = (struct winsize){ .ws_row = m->rows, .ws_col = m->cols };
		apply_size(s);
	}
}

static void message(struct session *s, const char *text, size_t len)
{
	struct session_msg m;

	session_msg_parse(s->proto, text, len, &m);
	if (m.kind == SM_START && s->job)
		started_again(s);
	else if (m.kind == SM_START)
		start(s, &m);
	else if (m.kind == SM_BAD && m.close_code)
		send_close(s, m.close_code, m.error);
	else if (m.kind == SM_BAD)
		end_early(s, "refused", m.code, m.error);
	else
		for_program(s, &m);
	session_msg_free(&m);
}

static void on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *a,
		   void *arg)
{
	struct session *s = arg;

	s->last_ms = now_ms();
	if (s->ending || wslay_is_ctrl_frame(a->opcode))
		return;
	if (a->opcode != WSLAY_TEXT_FRAME) {
		end_early(s, "refused", "invalid_message", "messages are JSON text frames");
		return;
	}
	message(s, (const char *)a->msg, a->msg_length);
}

/* ---- the socket ---------------------------------------------------------- */

static bool may_read(const struct session *s)
{
	return !s->ending && wslay_event_get_read_enabled(s->ws) &&
	       wslay_event_get_queued_msg_length(s->ws) < QUEUE_HIGH && stdin_left(s) < STDIN_HIGH;
}

static bool head_pending(const struct session *s)
{
	return s->c->out.len > s->c->out_off;
}

static void update_watch(struct session *s)
{
	struct conn *c = s->c;
	bool room = wslay_event_get_queued_msg_length(s->ws) < QUEUE_HIGH;
	uint32_t want;

	if (!c)
		return;
	want = EPOLLRDHUP | (may_read(s) || s->shut ? EPOLLIN : 0) |
	       (head_pending(s) || wslay_event_want_write(s->ws) ? EPOLLOUT : 0);
	if (want != s->conn_events) {
		struct epoll_event ev = { .events = want, .data.ptr = c };

		if (epoll_ctl(s->w->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
			s->conn_events = c->events = want;
	}
	watch_fd(s, P_IN, stdin_left(s) ? EPOLLOUT : 0);
	watch_fd(s, P_OUT, room ? EPOLLIN : 0);
	watch_fd(s, P_ERR, room ? EPOLLIN : 0);
}

/* Send what can go now; a close that is out ends the connection. */
static void pump_out(struct session *s)
{
	struct conn *c = s->c;

	if (!c || s->shut)
		return;
	if (head_pending(s))
		conn_flush(&s->w->conns, c);
	for (int round = 0; round < 2; round++) {
		if (!c->peer_closed && !head_pending(s) && wslay_event_want_write(s->ws) &&
		    wslay_event_send(s->ws) < 0)
			c->peer_closed = true;
		queue_close(s);
	}
	if (c->peer_closed) {
		client_gone(s);
		return;
	}
	if (!s->shut && wslay_event_get_close_sent(s->ws) && !wslay_event_want_write(s->ws) &&
	    (!s->job || s->job_over)) {
		/* a socket closed with bytes unread answers with a reset that may
		 * destroy the close frame: shut for writing, drop what comes */
		if (shutdown(c->fd, SHUT_WR) < 0) {
			conn_free(&s->w->conns, c);
			return;
		}
		s->shut = true;
		s->close_by_ms = now_ms() + CLOSE_LINGER_MS;
	}
	update_watch(s);
}

/* After the close: what the client still sends is dropped, at most
 * LINGER_DROP bytes, until it closes too. */
static void drop_input(struct session *s)
{
	char tmp[16384];

	for (;;) {
		ssize_t n = recv(s->c->fd, tmp, sizeof(tmp), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		s->dropped += n > 0 ? (size_t)n : 0;
		if (n <= 0 || s->dropped > LINGER_DROP) {
			conn_free(&s->w->conns, s->c);
			return;
		}
	}
}

static void socket_event(struct session *s, uint32_t events)
{
	struct conn *c = s->c;

	if (s->shut) {
		drop_input(s);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		client_gone(s);
		return;
	}
	if ((events & EPOLLIN) && may_read(s)) {
		s->turn = 0;
		if (wslay_event_recv(s->ws) < 0 || c->peer_closed) {
			client_gone(s);
			return;
		}
		/* a close from the client, or one wslay sent for a broken
		 * frame (1002) or a message over the cap (1009) */
		if (!wslay_event_get_read_enabled(s->ws) && !s->ending) {
			s->ending = true;
			s->close_by_ms = now_ms() + CLOSE_LINGER_MS;
			if (s->job && !s->job_over)
				jobthread_cancel(&s->w->job);
		}
	}
	pump_out(s);
}

bool session_event(struct worker *w, void *p, uint32_t events)
{
	struct session *s = w->session;

	if (!s)
		return false;
	if (s->c && p == s->c) {
		socket_event(s, events);
		return true;
	}
	if (p == &s->tags[P_IN]) {
		if (events & (EPOLLERR | EPOLLHUP))
			close_pipe(s, P_IN);
		write_stdin(s);
	} else if (p == &s->tags[P_OUT] || p == &s->tags[P_ERR]) {
		read_pipe(s, p == &s->tags[P_OUT] ? P_OUT : P_ERR, false);
	} else {
		return false;
	}
	pump_out(s);
	return true;
}

/* ---- the job's news ------------------------------------------------------- */

/* The program's pipes (or terminal), ours from now on. */
static void take_pipes(struct session *s, const int fds[3])
{
	for (int i = 0; i < 3; i++) {
		struct epoll_event ev = { .events = 0, .data.ptr = &s->tags[i] };

		s->fds[i] = fds[i];
		if (fds[i] < 0)
			continue;
		if (!s->c || epoll_ctl(s->w->epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			close(fds[i]);
			s->fds[i] = -1;
		}
	}
	/* a resize that came during the build */
	apply_size(s);
	if (s->c && !s->ending)
		send_text(s, session_msg_stage(s->proto, false));
	write_stdin(s);
}

/* The build's output as it came; once the build is over, what was held
 * of a character cut between two pieces, and Piston's end of the stage. */
static void build_news(struct session *s, struct jobthread_live *live)
{
	if (live->build_out.len)
		emit(s, P_OUT, live->build_out.data, live->build_out.len, false);
	if (live->build_err.len)
		emit(s, P_ERR, live->build_err.data, live->build_err.len, false);
	if (!live->built)
		return;
	emit(s, P_OUT, "", 0, true);
	emit(s, P_ERR, "", 0, true);
	if (s->proto == SESSION_PISTON) {
		struct session_exit e = { .build = true, .exit_code = live->build_code,
					  .signal = live->build_signal };

		send_text(s, session_msg_exit(s->proto, &e));
	}
}

void session_progress(struct worker *w)
{
	struct session *s = w->session;
	struct jobthread_live live;

	if (!s)
		return;
	jobthread_take_live(&w->job, &live);
	if (s->c && (live.built || live.build_out.len || live.build_err.len))
		build_news(s, &live);
	if (live.started)
		take_pipes(s, live.fds);
	buf_free(&live.build_out);
	buf_free(&live.build_err);
	pump_out(s);
}

/* The exit as its dialect tells it, from the job's result. */
static void tell_exit(struct session *s, const struct jobthread *j)
{
	const struct job_result *res = &j->res;
	const struct step_result *r = res->ntests ? &res->tests[0].r : &res->build;
	struct session_exit e = { .exit_code = -1 };

	if (j->rc < 0 || res->internal_error) {
		if (!s->error_sent)
			send_error(s, "internal_error", res->internal_msg[0] ? res->internal_msg :
							 "the sandbox failed");
		e.status = "internal_error";
	} else if (res->build_status != BS_OK) {
		if (s->proto == SESSION_PISTON)
			return;  /* its compile stage's exit was the last word */
		e.build = true;
		e.status = verdict_test_status_name(TS_BUILD_FAILED);
		r = &res->build;
	} else {
		e.status = s->reason ? s->reason : verdict_test_status_name(res->tests[0].status);
	}
	if (r->outcome.exited)
		e.exit_code = r->outcome.exit_code;
	e.signal = r->outcome.term_signal;
	e.time_ms = r->wall_ms;
	e.memory_kb = r->memory_peak_kb;
	send_text(s, session_msg_exit(s->proto, &e));
}

void session_job_done(struct worker *w)
{
	struct session *s = w->session;

	if (!s)
		return;
	s->job_over = true;
	if (!s->c) {
		session_free(s);
		return;
	}
	/* the program is gone: what its pipes still hold comes before its exit */
	read_pipe(s, P_OUT, true);
	read_pipe(s, P_ERR, true);
	for (int i = 0; i < 3; i++)
		close_pipe(s, i);
	if (!s->close_code && !wslay_event_get_close_sent(s->ws)) {
		tell_exit(s, &w->job);
		if (s->proto == SESSION_PISTON)
			send_close(s, s->error_sent ? 4002 : 4999,
				   s->error_sent ? "Notified Error" : "Job Completed");
		else
			send_close(s, s->reason ? 1008 : 1000, s->reason ? s->reason : "exited");
	}
	pump_out(s);
}

void session_tick(struct worker *w)
{
	struct session *s = w->session;
	uint64_t now = now_ms();

	if (!s || !s->c)
		return;
	if (s->close_by_ms && now >= s->close_by_ms && (!s->job || s->job_over)) {
		conn_free(&w->conns, s->c);
		return;
	}
	if (s->ending)
		return;
	if (!s->job && s->proto == SESSION_PISTON && now - s->opened_ms >= PISTON_INIT_MS) {
		send_close(s, 4001, "Initialization Timeout");
	} else if (now - s->last_ms >= w->cfg->session_idle_timeout_ms) {
		end_early(s, "idle_timeout", "idle_timeout",
			  "no frame either way for --session-idle-timeout");
	}
	pump_out(s);
}

int session_open(struct worker *w, struct conn *c, enum session_proto p, const char *accept)
{
	static const struct wslay_event_callbacks cbs = { .recv_callback = ws_recv,
							  .send_callback = ws_send,
							  .on_msg_recv_callback = on_msg };
	struct session *s = xcalloc(1, sizeof(*s));
	char hdr[160];

	s->w = w;
	s->c = c;
	s->proto = p;
	s->fds[0] = s->fds[1] = s->fds[2] = -1;
	s->opened_ms = s->last_ms = now_ms();
	buf_init(&s->in, 0);
	if (wslay_event_context_server_init(&s->ws, &cbs, s) != 0) {
		free(s);
		return -ENOMEM;
	}
	wslay_event_config_set_max_recv_msg_length(s->ws, w->cfg->max_session_frame);
	/* A session's messages are small and each one waited for: without
	 * this, one sent while the last is not yet acknowledged waits for
	 * the client's delayed ACK (40 ms) under Nagle's algorithm. */
	if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int)) < 0)
		log_debug("TCP_NODELAY: %s", strerror(errno));
	conn_headers(c, hdr, sizeof(hdr), NULL);
	websocket_switching(&c->out, accept, hdr);
	/* the connection is the session's: conn.c no longer watches it */
	c->state = C_JOB;
	c->live = true;
	s->conn_events = c->events;
	w->session = s;
	/* the 101 goes out as the connection's last answer (conn_process) */
	update_watch(s);
	return 0;
}
