/*
 * A connection's course driven over a socketpair, with a fake worker
 * behind struct conn_hooks: requests in pieces, pipelining, the sweep's
 * timeouts, a handoff and a client that goes away.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/config.h"
#include "common/util.h"
#include "worker/conn.h"

#define READ_TIMEOUT_MS 50
#define IDLE_TIMEOUT_MS 200
#define BIG_ANSWER (1024 * 1024)

/*
 * A worker of its own. Its request hook answers a request with its path
 * as the body, except two: /big (an answer larger than the socket takes
 * at once) and /handoff (moved, C_HANDOFF).
 */
struct loop {
	struct conn_set set;
	struct config cfg;
	int client;             /* the test's end; -1 once it closed it */
	int requests, handoffs, no_jobs, closed;
	size_t unsent_at_handoff;
	char moved[512];        /* the bytes the handoff carried */
	size_t moved_len;
	char last_body[64];     /* of the last whole request */
};

static void on_request(void *arg, struct conn *c)
{
	struct loop *l = arg;
	const char *path = c->hp.req.path;

	l->requests++;
	snprintf(l->last_body, sizeof(l->last_body), "%.*s", (int)c->hp.req.body.len,
		 c->hp.req.body.data ? c->hp.req.body.data : "");
	if (!strcmp(path, "/handoff")) {
		c->state = C_HANDOFF;
		return;
	}
	if (!strcmp(path, "/big")) {
		char *body = xmalloc(BIG_ANSWER);

		memset(body, 'b', BIG_ANSWER);
		http_format_response(&c->out, 200, "text/plain", body, BIG_ANSWER, true, NULL);
		free(body);
	} else {
		http_format_response(&c->out, 200, "text/plain", path, strlen(path), true, NULL);
	}
	conn_next_request(c, conn_keep_alive(&l->set, c));
}

/* Every body is let in, except a request to /refused. */
static bool on_headers(void *arg, struct conn *c)
{
	(void)arg;
	if (strcmp(c->hp.req.path, "/refused") != 0)
		return true;
	http_format_error(&c->out, 401, "unauthorized", "no token", false, NULL);
	conn_next_request(c, false);
	return false;
}

/* As the worker's: take what the connection carries, and let it go. */
static void on_handoff(void *arg, struct conn *c)
{
	struct loop *l = arg;
	const char *data;
	size_t len;

	l->handoffs++;
	l->unsent_at_handoff = c->out.len - c->out_off;
	cr_assert_eq(conn_handoff_bytes(c, &data, &len), 0);
	cr_assert_lt(len, sizeof(l->moved));
	memcpy(l->moved, data, len);
	l->moved_len = len;
	conn_free(&l->set, c);
}

static void on_no_job(void *arg, struct conn *c)
{
	(void)c;
	((struct loop *)arg)->no_jobs++;
}

static void on_closing(void *arg, struct conn *c)
{
	(void)c;
	((struct loop *)arg)->closed++;
}

static struct conn *loop_open(struct loop *l)
{
	const struct conn_hooks hooks = { .arg = l, .request = on_request, .headers = on_headers,
					  .handoff = on_handoff, .no_job = on_no_job,
					  .closing = on_closing };
	int sv[2], epfd = epoll_create1(EPOLL_CLOEXEC);
	struct conn *c;

	memset(l, 0, sizeof(*l));
	l->cfg.max_header_bytes = 1024;
	l->cfg.http_max_body_bytes = 4096;
	l->cfg.read_timeout_ms = READ_TIMEOUT_MS;
	l->cfg.keepalive_timeout_ms = IDLE_TIMEOUT_MS;
	cr_assert_geq(epfd, 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	conn_set_init(&l->set, epfd, &l->cfg, &hooks);
	c = conn_new(&l->set, sv[0]);
	cr_assert_not_null(c);
	l->client = sv[1];
	return c;
}

static void loop_close(struct loop *l)
{
	conn_set_close(&l->set);
	if (l->client >= 0)
		close(l->client);
	close(l->set.epfd);
}

static void send_all(struct loop *l, const char *data, size_t len)
{
	cr_assert_eq(send(l->client, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Everything the connection sent so far, appended to out; true at its end. */
static bool read_all(struct loop *l, struct buf *out)
{
	char tmp[65536];

	for (;;) {
		ssize_t n = recv(l->client, tmp, sizeof(tmp), 0);

		if (n == 0)
			return true;
		if (n < 0) {
			cr_assert_eq(errno, EAGAIN, "recv: %s", strerror(errno));
			return false;
		}
		cr_assert_eq(buf_append(out, tmp, (size_t)n), 0);
	}
}

static size_t count(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, k = strlen(needle);

	for (size_t i = 0; i + k <= len; i++)
		n += memcmp(hay + i, needle, k) == 0;
	return n;
}

/* The body of the index-th answer in out (0 first), NUL-terminated in dst. */
static const char *answer_body(const struct buf *out, unsigned index, char *dst, size_t n)
{
	const char *p = out->data, *end = out->data + out->len;

	for (;;) {
		const char *cl = strstr(p, "Content-Length: ");
		const char *body = strstr(p, "\r\n\r\n");
		size_t len;

		cr_assert(cl && body && cl < body, "answer %u is missing", index);
		len = strtoul(cl + 16, NULL, 10);
		body += 4;
		cr_assert_leq(body + len, end);
		if (index-- == 0) {
			cr_assert_lt(len, n);
			memcpy(dst, body, len);
			dst[len] = '\0';
			return dst;
		}
		p = body + len;
	}
}

Test(conn, a_request_that_comes_byte_by_byte_is_answered_once_whole)
{
	static const char req[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;

	buf_init(&got, 0);
	for (size_t i = 0; i < strlen(req); i++) {
		cr_assert_eq(l.requests, 0, "a request seen whole at byte %zu of %zu", i,
			     strlen(req));
		send_all(&l, req + i, 1);
		conn_event(&l.set, c, EPOLLIN);
	}
	cr_assert_eq(l.requests, 1);
	cr_assert_str_eq(l.last_body, "hello");
	cr_assert(!read_all(&l, &got), "the connection stays open");
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 200 "), 1);
	cr_assert_eq(c->state, C_READING);
	cr_assert_eq(l.closed, 0);
	buf_free(&got);
	loop_close(&l);
}

Test(conn, pipelined_requests_are_answered_in_order_each_once)
{
	static const char reqs[] = "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
				   "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
				   "GET /three HTTP/1.1\r\nHost: x\r\n\r\n"
				   "GET /fo";
	static const char rest[] = "ur HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char *const paths[] = { "/one", "/two", "/three", "/four" };
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;
	char body[64];

	buf_init(&got, 0);
	send_all(&l, reqs, strlen(reqs));
	conn_event(&l.set, c, EPOLLIN);
	cr_assert_eq(l.requests, 3, "the fourth is not whole yet");
	send_all(&l, rest, strlen(rest));
	conn_event(&l.set, c, EPOLLIN);
	cr_assert_eq(l.requests, 4);
	cr_assert(!read_all(&l, &got));
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 "), 4, "%.*s", (int)got.len, got.data);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_str_eq(answer_body(&got, i, body, sizeof(body)), paths[i]);
	cr_assert_eq(c->state, C_READING);
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_request_not_whole_within_the_read_timeout_gets_408_and_the_end)
{
	static const char part[] = "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;

	buf_init(&got, 0);
	send_all(&l, part, strlen(part));
	conn_event(&l.set, c, EPOLLIN);
	conn_set_sweep(&l.set);
	cr_assert_eq(l.closed, 0, "not yet late");
	cr_assert(!read_all(&l, &got));
	cr_assert_eq(got.len, 0);

	/* the request began longer ago than the read timeout (its client
	 * kept sending: the last byte is recent) */
	c->req_start_ms = now_ms() - READ_TIMEOUT_MS - 10;
	conn_set_sweep(&l.set);
	cr_assert_eq(l.closed, 1);
	cr_assert_eq(l.requests, 0);
	cr_assert(read_all(&l, &got), "the connection ends");
	cr_assert(got.len > 13 && strncmp(got.data, "HTTP/1.1 408 ", 13) == 0, "%.*s",
		  (int)got.len, got.data);
	cr_assert_eq(count(got.data, got.len, "Connection: close\r\n"), 1);
	buf_free(&got);
	loop_close(&l);
}

Test(conn, an_idle_keep_alive_connection_closes_after_the_idle_timeout_alone)
{
	static const char req[] = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;

	buf_init(&got, 0);
	send_all(&l, req, strlen(req));
	conn_event(&l.set, c, EPOLLIN);
	cr_assert(!read_all(&l, &got));
	cr_assert_eq(l.requests, 1);

	/* between requests the read timeout does not apply */
	c->last_active_ms = now_ms() - READ_TIMEOUT_MS - 10;
	conn_set_sweep(&l.set);
	cr_assert_eq(l.closed, 0);
	c->last_active_ms = now_ms() - IDLE_TIMEOUT_MS - 10;
	conn_set_sweep(&l.set);
	cr_assert_eq(l.closed, 1);
	cr_assert_eq(l.set.n, 0);
	cr_assert(read_all(&l, &got), "its client sees the end");
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 "), 1, "and no answer more");
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_body_sent_with_headers_refused_is_never_parsed)
{
	/* the client does not wait for 100 Continue: its body comes along,
	 * and a request after it */
	static const char req[] = "POST /refused HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
				  "GET /after HTTP/1.1\r\nHost: x\r\n\r\n";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;

	buf_init(&got, 0);
	send_all(&l, req, strlen(req));
	conn_event(&l.set, c, EPOLLIN);
	cr_assert_eq(l.requests, 0, "neither the refused body nor what follows is parsed");
	cr_assert_eq(c->state, C_LINGER);
	cr_assert(read_all(&l, &got), "shut for writing once answered");
	cr_assert(strncmp(got.data, "HTTP/1.1 401 ", 13) == 0, "%.*s", (int)got.len, got.data);
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 "), 1);
	cr_assert_eq(count(got.data, got.len, "Connection: close\r\n"), 1);
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_handoff_waits_until_every_earlier_answer_is_sent)
{
	static const char reqs[] = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char moved[] = "POST /handoff HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
				    "GET /next HTTP/1.1\r\nHost: x\r\n\r\n";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;
	char both[256];
	int turns = 0;

	buf_init(&got, 0);
	snprintf(both, sizeof(both), "%s%s", reqs, moved);
	send_all(&l, both, strlen(both));
	conn_event(&l.set, c, EPOLLIN);
	/* more unsent than a connection may hold: /handoff waits its turn */
	cr_assert_eq(l.requests, 1);
	cr_assert_eq(l.handoffs, 0, "the big answer is not all sent yet");

	/* the client takes its answer a piece at a time */
	while (l.handoffs == 0) {
		cr_assert_lt(++turns, 1000);
		read_all(&l, &got);
		conn_event(&l.set, c, EPOLLOUT);
	}
	cr_assert_eq(l.handoffs, 1);
	cr_assert_eq(l.unsent_at_handoff, 0);
	cr_assert_eq(l.requests, 2, "/handoff seen; nothing after it is parsed here");
	cr_assert_eq(l.closed, 1);
	/* the moved request as parsed, then what the parser had not seen */
	cr_assert_eq(l.moved_len, strlen(moved));
	cr_assert(memcmp(l.moved, moved, l.moved_len) == 0, "%.*s", (int)l.moved_len, l.moved);
	read_all(&l, &got);
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 200 "), 1);
	cr_assert_eq(got.len - (size_t)(strstr(got.data, "\r\n\r\n") + 4 - got.data),
		     (size_t)BIG_ANSWER, "the whole answer came before the move");
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_client_that_closes_mid_request_is_let_go_without_a_request)
{
	static const char part[] = "POST /gone HTTP/1.1\r\nHost: x\r\nContent-Len";
	struct loop l;
	struct conn *c = loop_open(&l);

	send_all(&l, part, strlen(part));
	conn_event(&l.set, c, EPOLLIN);
	close(l.client);
	l.client = -1;
	conn_event(&l.set, c, EPOLLIN | EPOLLRDHUP | EPOLLHUP);
	cr_assert_eq(l.requests, 0);
	cr_assert_eq(l.closed, 1);
	cr_assert_eq(l.set.n, 0);
	loop_close(&l);
}

Test(conn, a_client_that_half_closes_gets_its_whole_requests_answered_then_the_end)
{
	static const char reqs[] = "GET /whole HTTP/1.1\r\nHost: x\r\n\r\nGET /cut HTTP/1.1\r\nHo";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;
	char body[64];

	buf_init(&got, 0);
	send_all(&l, reqs, strlen(reqs));
	shutdown(l.client, SHUT_WR);
	conn_event(&l.set, c, EPOLLIN | EPOLLRDHUP);
	cr_assert_eq(l.requests, 1);
	cr_assert_eq(l.closed, 1);
	cr_assert(read_all(&l, &got), "the end after the answer");
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 "), 1);
	cr_assert_str_eq(answer_body(&got, 0, body, sizeof(body)), "/whole");
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_client_that_half_closes_after_two_whole_requests_hears_both)
{
	static const char reqs[] = "GET /first HTTP/1.1\r\nHost: x\r\n\r\n"
				   "GET /second HTTP/1.1\r\nHost: x\r\n\r\n";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;
	char body[64];

	buf_init(&got, 0);
	send_all(&l, reqs, strlen(reqs));
	shutdown(l.client, SHUT_WR);
	/* the end is read with the requests: the first answer must not be
	 * the last */
	conn_event(&l.set, c, EPOLLIN | EPOLLRDHUP);
	cr_assert_eq(l.requests, 2);
	cr_assert_eq(l.closed, 1);
	cr_assert(read_all(&l, &got), "the end after the answers");
	cr_assert_eq(count(got.data, got.len, "HTTP/1.1 "), 2);
	cr_assert_str_eq(answer_body(&got, 0, body, sizeof(body)), "/first");
	cr_assert_str_eq(answer_body(&got, 1, body, sizeof(body)), "/second");
	buf_free(&got);
	loop_close(&l);
}

Test(conn, a_request_the_parser_refuses_gets_its_error_runs_no_job_and_closes)
{
	static const char bad[] = "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
				  "Content-Length: 2\r\n\r\nab";
	struct loop l;
	struct conn *c = loop_open(&l);
	struct buf got;

	buf_init(&got, 0);
	send_all(&l, bad, strlen(bad));
	conn_event(&l.set, c, EPOLLIN);
	cr_assert_eq(l.requests, 0);
	cr_assert_eq(l.no_jobs, 1, "a dispatched token goes back");
	cr_assert_eq(l.closed, 1);
	cr_assert(read_all(&l, &got));
	cr_assert(strncmp(got.data, "HTTP/1.1 400 ", 13) == 0, "%.*s", (int)got.len, got.data);
	buf_free(&got);
	loop_close(&l);
}
