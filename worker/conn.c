#include "autoconf.h"

#include "worker/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

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
/*
 * A request refused at its headers leaves its body unsent or unread, and
 * a socket closed with bytes unread answers with a reset that may destroy
 * the refusal before its client reads it (RFC 9112, 9.6). So such a
 * connection is shut for writing once its answer is out, and what its
 * client still sends is read and dropped, never kept: until the client
 * closes, for LINGER_MS at most, and no more than one request may take.
 */
#define LINGER_MS 2000

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

/* A dispatched connection's first block holds its whole request. */
void conn_compact_input(struct conn *c)
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
void conn_watch(struct conn_set *s, struct conn *c)
{
	uint32_t want = (conn_may_read(c) || c->state == C_LINGER ? EPOLLIN | EPOLLRDHUP : 0) |
			(out_left(c) ? EPOLLOUT : 0);

	/* A streamed answer's client that goes away stops its job: its end
	 * must be seen even while nothing is read. */
	if (c->state == C_JOB && c->streaming)
		want |= EPOLLRDHUP;
	struct epoll_event ev = { .events = want, .data.ptr = c };

	if (c->dead || c->live || want == c->events)
		return;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = want;
}

void conn_unwatch(struct conn_set *s, struct conn *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->events = 0;
}

void conn_set_init(struct conn_set *s, int epfd, const struct config *cfg,
		const struct conn_hooks *hooks)
{
	memset(s, 0, sizeof(*s));
	s->epfd = epfd;
	s->cfg = cfg;
	s->hooks = *hooks;
}

struct conn *conn_new(struct conn_set *s, int fd)
{
	struct conn *c = xcalloc(1, sizeof(*c));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };

	c->fd = fd;
	c->events = ev.events;
	buf_init(&c->in, 0);
	buf_init(&c->raw, 0);
	buf_init(&c->out, 0);
	http_parser_init(&c->hp, s->cfg->max_header_bytes, s->cfg->http_max_body_bytes);
	c->last_active_ms = now_ms();
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		log_error("epoll_ctl(ADD, %d): %s", fd, strerror(errno));
		http_parser_free(&c->hp);
		free(c);
		close(fd);
		return NULL;
	}
	c->next = s->list;
	if (s->list)
		s->list->prev = c;
	s->list = c;
	s->n++;
	return c;
}

void conn_free(struct conn_set *s, struct conn *c)
{
	s->hooks.closing(s->hooks.arg, c);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->list = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n--;
	/* Later events of this epoll batch may still name it: free it after. */
	c->dead = true;
	c->fd = -1;
	c->prev = NULL;
	c->next = s->dead;
	s->dead = c;
}

void conn_set_free_dead(struct conn_set *s)
{
	while (s->dead) {
		struct conn *c = s->dead;

		s->dead = c->next;
		buf_free(&c->in);
		buf_free(&c->raw);
		buf_free(&c->out);
		http_parser_free(&c->hp);
		free(c);
	}
}

void conn_set_close(struct conn_set *s)
{
	while (s->list)
		conn_free(s, s->list);
	conn_set_free_dead(s);
}

void conn_request_id(struct conn *c, const struct http_request *r)
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

void conn_log(const struct conn *c, const char *method, const char *path, int status,
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

bool conn_keep_alive(const struct conn_set *s, const struct conn *c)
{
	/* A client that half-closed still hears every request it sent
	 * before: the connection stays while input waits to be parsed. */
	return c->hp.req.keep_alive && !s->draining && (!c->peer_closed || in_left(c) > 0);
}

void conn_headers(const struct conn *c, char *out, size_t n, const char *more)
{
	snprintf(out, n, "X-Request-Id: %s\r\n%s", c->reqid, more ? more : "");
}

void conn_next_request(struct conn *c, bool keep_alive)
{
	http_parser_next(&c->hp);
	buf_reset(&c->raw);
	release_if_large(&c->raw);
	c->served++;
	c->req_start_ms = 0;
	c->admitted = false;
	if (!keep_alive)
		c->state = C_CLOSING;
}

void conn_respond_error(struct conn *c, int status, const char *code, const char *msg,
			bool keep_alive)
{
	char hdr[128];

	conn_headers(c, hdr, sizeof(hdr), NULL);
	http_format_error(&c->out, status, code, msg, keep_alive, hdr);
}

void conn_take_out(struct conn *c, struct buf *b)
{
	if (out_left(c) == 0) {
		buf_free(&c->out);
		c->out = *b;
		c->out_off = 0;
		buf_init(b, 0);
		return;
	}
	buf_append(&c->out, b->data, b->len);
}

void conn_adopt_input(struct conn *c, char *data, size_t len)
{
	buf_free(&c->in);
	c->in.data = data;
	c->in.len = len;
	c->in.cap = len + 1;
	c->in_off = 0;
}

/*
 * The most a handed-off connection carries: one request the parser
 * accepted, and what was read ahead of the parser (under READ_AHEAD plus
 * one read). The worker it goes to keeps that much, so nothing a client
 * pipelined is lost on the way.
 */
size_t conn_handoff_max(const struct config *cfg)
{
	return http_request_max_bytes(cfg->max_header_bytes, cfg->http_max_body_bytes) + READ_AHEAD +
	       READ_CHUNK;
}

int conn_handoff_bytes(struct conn *c, const char **data, size_t *len)
{
	/* What the parser consumed for this request, then what it has not seen. */
	if (in_left(c) && buf_append(&c->raw, c->in.data + c->in_off, in_left(c)) < 0)
		return -1;
	*data = c->raw.data ? c->raw.data : "";
	*len = c->raw.len;
	return 0;
}

void conn_flush(struct conn_set *s, struct conn *c)
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
	conn_watch(s, c);
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
static void conn_parse(struct conn_set *s, struct conn *c)
{
	while (conn_may_read(c) && in_left(c) > 0) {
		size_t used = 0;
		enum http_feed f = http_parser_feed(&c->hp, c->in.data + c->in_off, in_left(c),
						    &used);

		if (used) {
			if (!c->req_start_ms)
				c->req_start_ms = now_ms();
			/* Kept for a handoff; a dispatched job runs here, whatever. */
			if (!c->job_slot &&
			    buf_append(&c->raw, c->in.data + c->in_off, used) < 0) {
				c->state = C_CLOSING;
				break;
			}
			conn_consume_input(c, used);
		}
		if (f == HTTP_NEED_MORE)
			break;
		if (f == HTTP_HEADERS_DONE) {
			/* Before any of the body is parsed or promised: a request
			 * that may not go on (no token) never has it read. */
			if (!s->hooks.headers(s->hooks.arg, c)) {
				c->body_unread = true;
				c->state = C_CLOSING;
				break;
			}
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
			conn_respond_error(c, c->hp.err_status, c->hp.err_code, c->hp.err_msg, false);
			conn_log(c, "-", "-", c->hp.err_status,
				 c->req_start_ms ? c->req_start_ms : now_ms(), NULL);
			s->hooks.no_job(s->hooks.arg, c);
			c->state = C_CLOSING;
			break;
		}
		s->hooks.request(s->hooks.arg, c);
	}
}

/*
 * Drop what a lingering connection's client sends, as much as one read
 * ahead per event; close at its end, or once it sent more than one
 * request may take.
 */
static void conn_drop_input(struct conn_set *s, struct conn *c)
{
	char tmp[READ_CHUNK];

	for (size_t got = 0; got < READ_AHEAD;) {
		ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 || (size_t)n >= c->linger_left) {
			conn_free(s, c);
			return;
		}
		c->linger_left -= (size_t)n;
		got += (size_t)n;
	}
	/* more may be waiting: the next event reads it */
}

/* Its answer is out and the rest of its request is not wanted (see
 * LINGER_MS): shut for writing, then drop what comes. */
static void conn_linger(struct conn_set *s, struct conn *c)
{
	if (shutdown(c->fd, SHUT_WR) < 0) {
		conn_free(s, c);
		return;
	}
	buf_free(&c->in);
	buf_free(&c->raw);
	c->in_off = 0;
	c->state = C_LINGER;
	c->linger_until_ms = now_ms() + LINGER_MS;
	c->linger_left = http_request_max_bytes(s->cfg->max_header_bytes, s->cfg->http_max_body_bytes);
	conn_watch(s, c);
	conn_drop_input(s, c);
}

void conn_process(struct conn_set *s, struct conn *c)
{
	/* A flush that makes room lets the rest of the input be parsed. */
	do {
		conn_parse(s, c);
		conn_flush(s, c);
	} while (conn_may_read(c) && in_left(c) > 0);
	if (c->state == C_HANDOFF && out_left(c) == 0) {
		s->hooks.handoff(s->hooks.arg, c);
		return;
	}
	if (c->state == C_CLOSING && c->body_unread && !c->peer_closed && out_left(c) == 0)
		conn_linger(s, c);
	else if ((c->state == C_CLOSING || (c->peer_closed && c->state == C_READING)) &&
		 out_left(c) == 0)
		conn_free(s, c);
}

static void conn_readable(struct conn_set *s, struct conn *c)
{
	char tmp[READ_CHUNK];

	if (!conn_may_read(c)) {
		/*
		 * Hold input back until the current job or handoff is done, or
		 * until the client takes its answers. A hang-up or error is
		 * reported whatever the mask: a connection that is done must be
		 * let go now, or epoll reports it again and again.
		 */
		conn_process(s, c);
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
				conn_free(s, c);
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
	conn_process(s, c);
}

void conn_event(struct conn_set *s, struct conn *c, uint32_t events)
{
	if (c->state == C_LINGER) {
		conn_drop_input(s, c);
		return;
	}
	if (events & EPOLLOUT)
		conn_flush(s, c);
	if (c->dead)
		return;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		conn_readable(s, c);
	else
		conn_process(s, c);
}

void conn_set_sweep(struct conn_set *s)
{
	uint64_t now = now_ms();
	struct conn *c = s->list, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->state == C_JOB)
			continue;
		if (c->state == C_LINGER) {
			if (now >= c->linger_until_ms)
				conn_free(s, c);
			continue;
		}
		if (c->state == C_READING && http_parser_in_request(&c->hp) && c->req_start_ms &&
		    now - c->req_start_ms > s->cfg->read_timeout_ms) {
			random_hex(c->reqid, 8);
			conn_respond_error(c, 408, "request_timeout",
					   "the request was not received in time", false);
			conn_log(c, "-", "-", 408, c->req_start_ms, NULL);
			c->state = C_CLOSING;
			conn_flush(s, c);
			if (out_left(c) == 0 || now - c->last_active_ms > 1000)
				conn_free(s, c);
			continue;
		}
		/*
		 * Draining closes idle keep-alive connections, but not one that was
		 * accepted and has not sent its first request yet: its client is
		 * about to, and a reload must not make it fail.
		 */
		if (c->state == C_READING && !http_parser_in_request(&c->hp) &&
		    out_left(c) == 0 &&
		    ((s->draining && (c->served > 0 ||
				      now - c->last_active_ms > s->cfg->read_timeout_ms)) ||
		     now - c->last_active_ms > s->cfg->keepalive_timeout_ms)) {
			conn_free(s, c);
			continue;
		}
		if (out_left(c) > 0 && now - c->last_active_ms > s->cfg->read_timeout_ms)
			conn_free(s, c); /* a client that does not read its answer */
	}
}
