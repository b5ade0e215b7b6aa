#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/config.h"
#include "worker/conn.h"

TestSuite(conn);

#define MAX_HDR 1024
#define MAX_BODY 4096

/* A worker of its own: what its hooks saw, and whether it lets a body in. */
struct fake {
	struct conn_set set;
	struct config cfg;
	int client;             /* the test's end of the connection */
	bool let_in;
	int headers, requests, closed;
	size_t body_len;        /* of the last whole request */
};

static void on_request(void *arg, struct conn *c)
{
	struct fake *f = arg;

	f->requests++;
	f->body_len = c->hp.req.body.len;
	http_format_response(&c->out, 200, "text/plain", "ok", 2, true, NULL);
	conn_next_request(c, true);
}

/* As the worker refuses a request without a token. */
static bool on_headers(void *arg, struct conn *c)
{
	struct fake *f = arg;

	f->headers++;
	if (f->let_in)
		return true;
	http_format_error(&c->out, 401, "unauthorized", "no token", false, NULL);
	conn_next_request(c, false);
	return false;
}

static void on_handoff(void *arg, struct conn *c)
{
	(void)arg;
	(void)c;
	cr_assert_fail("no request here is handed over");
}

static void on_no_job(void *arg, struct conn *c)
{
	(void)arg;
	(void)c;
}

static void on_closing(void *arg, struct conn *c)
{
	(void)c;
	((struct fake *)arg)->closed++;
}

static struct conn *fake_open(struct fake *f, bool let_in)
{
	const struct conn_hooks hooks = { .arg = f, .request = on_request, .headers = on_headers,
					  .handoff = on_handoff, .no_job = on_no_job,
					  .closing = on_closing };
	int sv[2], epfd = epoll_create1(EPOLL_CLOEXEC);
	struct conn *c;

	memset(f, 0, sizeof(*f));
	f->let_in = let_in;
	f->cfg.max_header_bytes = MAX_HDR;
	f->cfg.http_max_body_bytes = MAX_BODY;
	f->cfg.read_timeout_ms = 10000;
	f->cfg.keepalive_timeout_ms = 10000;
	cr_assert_geq(epfd, 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	conn_set_init(&f->set, epfd, &f->cfg, &hooks);
	c = conn_new(&f->set, sv[0]);
	cr_assert_not_null(c);
	f->client = sv[1];
	return c;
}

static void fake_close(struct fake *f)
{
	conn_set_close(&f->set);
	close(f->client);
	close(f->set.epfd);
}

static void client_send(struct fake *f, const char *data, size_t len)
{
	cr_assert_eq(send(f->client, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* What the connection sent so far; "" when nothing, "EOF" at its end. */
static const char *client_read(struct fake *f, char *out, size_t n)
{
	ssize_t got = recv(f->client, out, n - 1, 0);

	if (got == 0)
		return "EOF";
	if (got < 0) {
		cr_assert_eq(errno, EAGAIN);
		got = 0;
	}
	out[got] = '\0';
	return out;
}

static const char head[] = "POST /run HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
			   "Content-Length: 4000\r\n\r\n";

Test(conn, a_body_refused_at_its_headers_is_never_read_nor_promised)
{
	struct fake f;
	struct conn *c = fake_open(&f, false);
	char got[4096], body[MAX_BODY];

	client_send(&f, head, strlen(head));
	conn_event(&f.set, c, EPOLLIN);
	cr_assert_eq(f.headers, 1);
	client_read(&f, got, sizeof(got));
	cr_assert(strncmp(got, "HTTP/1.1 401 ", 13) == 0, "the refusal comes first: %s", got);
	cr_assert_null(strstr(got, "100 Continue"), "%s", got);
	cr_assert_not_null(strstr(got, "Connection: close\r\n"), "%s", got);
	/* shut for writing once answered: its client sees the end */
	cr_assert_str_eq(client_read(&f, got, sizeof(got)), "EOF");
	cr_assert_eq(c->state, C_LINGER);

	/* what the client still sends is dropped, never parsed nor kept */
	memset(body, 'x', sizeof(body));
	client_send(&f, body, 3000);
	conn_event(&f.set, c, EPOLLIN);
	cr_assert_eq(c->state, C_LINGER);
	cr_assert_eq(c->in.len, 0);
	cr_assert_eq(f.requests, 0);
	cr_assert_eq(f.closed, 0);

	/* and it closes at its client's end */
	shutdown(f.client, SHUT_WR);
	conn_event(&f.set, c, EPOLLIN | EPOLLRDHUP);
	cr_assert_eq(f.closed, 1);
	cr_assert_eq(f.set.n, 0);
	fake_close(&f);
}

Test(conn, a_lingering_client_that_sends_more_than_a_request_is_closed)
{
	struct fake f;
	struct conn *c = fake_open(&f, false);
	char got[4096], body[16384];

	client_send(&f, head, strlen(head));
	conn_event(&f.set, c, EPOLLIN);
	client_read(&f, got, sizeof(got));
	cr_assert_eq(c->state, C_LINGER);
	/* one request takes at most 2 * (MAX_HDR + MAX_BODY) = 10240 bytes */
	memset(body, 'x', sizeof(body));
	client_send(&f, body, sizeof(body));
	conn_event(&f.set, c, EPOLLIN);
	cr_assert_eq(f.closed, 1);
	fake_close(&f);
}

Test(conn, a_body_let_in_at_its_headers_is_promised_and_read)
{
	struct fake f;
	struct conn *c = fake_open(&f, true);
	char got[4096], body[4000];

	client_send(&f, head, strlen(head));
	conn_event(&f.set, c, EPOLLIN);
	cr_assert_eq(f.headers, 1);
	cr_assert_str_eq(client_read(&f, got, sizeof(got)), HTTP_CONTINUE_RESPONSE);
	memset(body, 'x', sizeof(body));
	client_send(&f, body, sizeof(body));
	conn_event(&f.set, c, EPOLLIN);
	cr_assert_eq(f.requests, 1);
	cr_assert_eq(f.body_len, sizeof(body));
	cr_assert(strncmp(client_read(&f, got, sizeof(got)), "HTTP/1.1 200 ", 13) == 0, "%s",
		  got);
	cr_assert_eq(c->state, C_READING);
	cr_assert_eq(f.headers, 1, "once per request");
	fake_close(&f);
}
