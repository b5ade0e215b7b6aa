#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cjson/cJSON.h>

#include "common/buf.h"
#include "worker/http/http.h"

TestSuite(http);

#define MAX_HDR 1024
#define MAX_BODY 4096

/*
 * A fake connection: bytes arrive in arbitrary pieces, are kept while the
 * parser has not used them, and every outcome is written to a transcript so
 * that different ways of cutting the same stream can be compared.
 */
struct feeder {
	struct http_parser p;
	struct buf pending;
	struct buf log;
	size_t stream_off;     /* bytes of the stream consumed so far */
	size_t ends[8];        /* stream offset at each HTTP_REQUEST_DONE */
	int nreq;
	int nheaders_done;
	int err_status;
	char err_code[64];
	char err_msg[160];
};

static void feeder_init(struct feeder *c, size_t max_hdr, size_t max_body)
{
	memset(c, 0, sizeof(*c));
	http_parser_init(&c->p, max_hdr, max_body);
	buf_init(&c->pending, 0);
	buf_init(&c->log, 0);
	buf_append(&c->pending, "", 0);
}

static void feeder_free(struct feeder *c)
{
	http_parser_free(&c->p);
	buf_free(&c->pending);
	buf_free(&c->log);
}

static void note_request(struct feeder *c)
{
	const struct http_request *r = &c->p.req;

	buf_printf(&c->log, "REQ %s %s q=%s v=%u.%u ka=%d ec=%d",
		   r->method, r->path, r->query ? r->query : "(none)",
		   r->http_major, r->http_minor, r->keep_alive, r->expect_continue);
	for (size_t i = 0; i < r->nheaders; i++)
		buf_printf(&c->log, " [%s=%s]", r->headers[i].name, r->headers[i].value);
	buf_printf(&c->log, " body=%zu:", r->body.len);
	buf_append(&c->log, r->body.data, r->body.len);
	buf_puts(&c->log, "\n");
}

static void feeder_input(struct feeder *c, const char *data, size_t len)
{
	buf_append(&c->pending, data, len);
	for (;;) {
		size_t used = 12345;
		enum http_feed res = http_parser_feed(&c->p, c->pending.data, c->pending.len, &used);

		cr_assert_leq(used, c->pending.len);
		buf_consume(&c->pending, used);
		c->stream_off += used;
		switch (res) {
		case HTTP_NEED_MORE:
			cr_assert_eq(c->pending.len, 0, "NEED_MORE must use all input");
			return;
		case HTTP_HEADERS_DONE:
			c->nheaders_done++;
			buf_puts(&c->log, "HEADERS\n");
			break;
		case HTTP_REQUEST_DONE:
			cr_assert(!http_parser_in_request(&c->p));
			if (c->nreq < 8)
				c->ends[c->nreq] = c->stream_off;
			c->nreq++;
			note_request(c);
			http_parser_next(&c->p);
			break;
		case HTTP_ERROR:
			c->err_status = c->p.err_status;
			snprintf(c->err_code, sizeof(c->err_code), "%s", c->p.err_code);
			snprintf(c->err_msg, sizeof(c->err_msg), "%s", c->p.err_msg);
			buf_printf(&c->log, "ERROR %d %s\n", c->p.err_status, c->p.err_code);
			return;
		}
	}
}

/* Whole stream in one read. */
static void run_whole(struct feeder *c, const char *s, size_t max_hdr, size_t max_body)
{
	feeder_init(c, max_hdr, max_body);
	feeder_input(c, s, strlen(s));
}

static char *transcript(const char *s, size_t len, size_t split, size_t step)
{
	struct feeder c;
	size_t len_log;
	char *out;

	feeder_init(&c, MAX_HDR, MAX_BODY);
	if (step) {
		for (size_t i = 0; i < len && !c.err_status; i += step)
			feeder_input(&c, s + i, len - i < step ? len - i : step);
	} else {
		feeder_input(&c, s, split);
		if (!c.err_status)
			feeder_input(&c, s + split, len - split);
	}
	out = buf_steal(&c.log, &len_log);
	feeder_free(&c);
	return out;
}

Test(http, complete_get)
{
	struct feeder c;

	feeder_init(&c, MAX_HDR, MAX_BODY);
	feeder_input(&c, "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n", 47);
	cr_assert_eq(c.nreq, 0, "the request is incomplete until its blank line");
	cr_assert(http_parser_in_request(&c.p));
	feeder_free(&c);

	feeder_init(&c, MAX_HDR, MAX_BODY);
	{
		const char *s = "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n";
		const struct http_request *r;
		size_t used;

		cr_assert(!http_parser_in_request(&c.p));
		cr_assert_eq(http_parser_feed(&c.p, s, strlen(s), &used), HTTP_REQUEST_DONE);
		cr_assert_eq(used, strlen(s));
		r = &c.p.req;
		cr_assert_str_eq(r->method, "GET");
		cr_assert_str_eq(r->path, "/healthz");
		cr_assert_null(r->query);
		cr_assert_eq(r->nheaders, 2);
		cr_assert_str_eq(r->headers[0].name, "host");
		cr_assert_str_eq(r->headers[0].value, "x");
		cr_assert_str_eq(http_header_get(r, "user-agent"), "t");
		cr_assert_null(http_header_get(r, "content-length"));
		cr_assert_eq(r->body.len, 0);
		cr_assert(r->keep_alive);
		cr_assert(!r->expect_continue);
		cr_assert_eq(r->http_major, 1);
		cr_assert_eq(r->http_minor, 1);
	}
	feeder_free(&c);
}

Test(http, header_names_lowercased_values_trimmed)
{
	struct feeder c;

	feeder_init(&c, MAX_HDR, MAX_BODY);
	{
		const char *s = "GET / HTTP/1.1\r\nX-MiXeD-Case:   v a l  \r\nEmpty:\r\nNext: 1\r\n\r\n";
		size_t used;

		cr_assert_eq(http_parser_feed(&c.p, s, strlen(s), &used), HTTP_REQUEST_DONE);
		cr_assert_str_eq(c.p.req.headers[0].name, "x-mixed-case");
		cr_assert_str_eq(http_header_get(&c.p.req, "x-mixed-case"), "v a l");
		cr_assert_str_eq(http_header_get(&c.p.req, "empty"), "");
		cr_assert_str_eq(http_header_get(&c.p.req, "next"), "1");
		cr_assert_eq(c.p.req.nheaders, 3);
	}
	feeder_free(&c);
}

Test(http, post_with_content_length)
{
	struct feeder c;
	const char *s = "POST /run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			"Content-Length: 13\r\n\r\n{\"a\":\"hello\"}";

	run_whole(&c, s, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 1);
	cr_assert_eq(c.nheaders_done, 1, "a request with a body reports its headers");
	cr_assert_eq(c.ends[0], strlen(s));
	cr_assert_str_eq(c.log.data,
			 "HEADERS\n"
			 "REQ POST /run q=(none) v=1.1 ka=1 ec=0 [host=x] [content-type=application/json]"
			 " [content-length=13] body=13:{\"a\":\"hello\"}\n");
	feeder_free(&c);
}

Test(http, chunked_body)
{
	struct feeder c;
	const char *s = "POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
			"5\r\nhello\r\n"
			"7;ext=1\r\n, world\r\n"
			"0\r\nX-Trailer: t\r\n\r\n";

	run_whole(&c, s, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.err_status, 0, "%s", c.err_msg);
	cr_assert_eq(c.nreq, 1);
	cr_assert_eq(c.ends[0], strlen(s));
	cr_assert_str_eq(c.log.data,
			 "HEADERS\n"
			 "REQ POST /run q=(none) v=1.1 ka=1 ec=0 [transfer-encoding=chunked]"
			 " body=12:hello, world\n");
	feeder_free(&c);
}

static const char pipeline3[] =
	"POST /run HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nfirst"
	"GET /info?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"
	"POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
	"3\r\nabc\r\n0\r\n\r\n";

Test(http, split_at_every_byte_boundary)
{
	size_t len = strlen(pipeline3);
	char *whole = transcript(pipeline3, len, len, 0);
	char *one = transcript(pipeline3, len, 0, 1);

	cr_assert_str_eq(one, whole, "byte-by-byte feeding differs");
	for (size_t split = 0; split <= len; split++) {
		char *t = transcript(pipeline3, len, split, 0);

		cr_assert_str_eq(t, whole, "split at %zu differs", split);
		free(t);
	}
	for (size_t step = 2; step < 9; step++) {
		char *t = transcript(pipeline3, len, 0, step);

		cr_assert_str_eq(t, whole, "reads of %zu bytes differ", step);
		free(t);
	}
	/* The transcript itself is right, not just stable. */
	cr_assert_str_eq(whole,
			 "HEADERS\n"
			 "REQ POST /run q=(none) v=1.1 ka=1 ec=0 [host=a] [content-length=5] body=5:first\n"
			 "REQ GET /info q=x=1 v=1.1 ka=1 ec=0 [host=a] body=0:\n"
			 "HEADERS\n"
			 "REQ POST /run q=(none) v=1.1 ka=1 ec=1 [transfer-encoding=chunked]"
			 " [expect=100-continue] body=3:abc\n");
	free(whole);
	free(one);
}

Test(http, pipelined_two_and_three)
{
	const char *r1 = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
	const char *r2 = "POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz";
	const char *r3 = "GET /c?q HTTP/1.1\r\n\r\n";
	char two[256], three[256];
	struct feeder c;

	snprintf(two, sizeof(two), "%s%s", r1, r2);
	run_whole(&c, two, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 2);
	cr_assert_eq(c.ends[0], strlen(r1));
	cr_assert_eq(c.ends[1], strlen(r1) + strlen(r2));
	feeder_free(&c);

	snprintf(three, sizeof(three), "%s%s%s", r1, r2, r3);
	run_whole(&c, three, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 3);
	cr_assert_eq(c.ends[0], strlen(r1));
	cr_assert_eq(c.ends[1], strlen(r1) + strlen(r2));
	cr_assert_eq(c.ends[2], strlen(three));
	feeder_free(&c);

	/* Answered one at a time: each call stops after one request. */
	{
		struct http_parser p;
		size_t used, off = 0;

		http_parser_init(&p, MAX_HDR, MAX_BODY);
		cr_assert_eq(http_parser_feed(&p, three, strlen(three), &used), HTTP_REQUEST_DONE);
		cr_assert_eq(used, strlen(r1));
		cr_assert_str_eq(p.req.path, "/a");
		/* Feeding again before next() must not lose the request. */
		cr_assert_eq(http_parser_feed(&p, three + used, strlen(three) - used, &used),
			     HTTP_REQUEST_DONE);
		cr_assert_eq(used, 0);
		cr_assert_str_eq(p.req.path, "/a");
		http_parser_next(&p);
		off = strlen(r1);
		cr_assert_eq(http_parser_feed(&p, three + off, strlen(three) - off, &used),
			     HTTP_HEADERS_DONE);
		off += used;
		cr_assert_eq(http_parser_feed(&p, three + off, strlen(three) - off, &used),
			     HTTP_REQUEST_DONE);
		off += used;
		cr_assert_eq(off, strlen(r1) + strlen(r2));
		cr_assert_str_eq(p.req.path, "/b");
		cr_assert_str_eq(p.req.body.data, "xyz");
		http_parser_next(&p);
		cr_assert_eq(http_parser_feed(&p, three + off, strlen(three) - off, &used),
			     HTTP_REQUEST_DONE);
		cr_assert_eq(off + used, strlen(three));
		cr_assert_str_eq(p.req.path, "/c");
		cr_assert_str_eq(p.req.query, "q");
		http_parser_free(&p);
	}
}

static int keep_alive_of(const char *s)
{
	struct feeder c;
	int ka;

	run_whole(&c, s, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 1, "%s", s);
	ka = strstr(c.log.data, " ka=1 ") != NULL;
	feeder_free(&c);
	return ka;
}

Test(http, keep_alive_defaults)
{
	cr_assert(keep_alive_of("GET / HTTP/1.1\r\n\r\n"));
	cr_assert(!keep_alive_of("GET / HTTP/1.0\r\n\r\n"));
	cr_assert(!keep_alive_of("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
	cr_assert(!keep_alive_of("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n"));
	cr_assert(keep_alive_of("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
	cr_assert(keep_alive_of("POST / HTTP/1.0\r\nConnection: Keep-Alive\r\n"
				"Content-Length: 2\r\n\r\nhi"));
	cr_assert(!keep_alive_of("POST / HTTP/1.1\r\nConnection: close\r\n"
				 "Content-Length: 2\r\n\r\nhi"));
}

Test(http, connection_close_then_more_bytes)
{
	struct feeder c;

	/* The caller closes after this one; the extra bytes must not crash. */
	run_whole(&c, "GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET /x HTTP/1.1\r\n\r\n",
		  MAX_HDR, MAX_BODY);
	cr_assert_geq(c.nreq, 1);
	cr_assert(strstr(c.log.data, "REQ GET / q=(none) v=1.1 ka=0") == c.log.data);
	feeder_free(&c);
}

static void expect_error(const char *s, size_t max_hdr, size_t max_body, int status,
			 const char *code)
{
	struct feeder c;

	run_whole(&c, s, max_hdr, max_body);
	cr_assert_eq(c.err_status, status, "%s: got %d (%s)", s, c.err_status, c.err_msg);
	cr_assert_str_eq(c.err_code, code);
	cr_assert_eq(c.nreq, 0);
	cr_assert_neq(c.err_msg[0], '\0');
	/* Errors are sticky until next(). */
	{
		size_t used = 99;

		cr_assert_eq(http_parser_feed(&c.p, "GET / HTTP/1.1\r\n\r\n", 18, &used), HTTP_ERROR);
		cr_assert_eq(used, 0);
	}
	feeder_free(&c);
}

Test(http, oversize_headers_431)
{
	char s[2048];
	char big[1500];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(s, sizeof(s), "GET / HTTP/1.1\r\nX-Big: %s\r\n\r\n", big);
	expect_error(s, MAX_HDR, MAX_BODY, 431, "headers_too_large");

	/* The URL counts too. */
	snprintf(s, sizeof(s), "GET /%s HTTP/1.1\r\n\r\n", big);
	expect_error(s, MAX_HDR, MAX_BODY, 431, "headers_too_large");

	/* Header bytes that never finish also hit the cap. */
	snprintf(s, sizeof(s), "GET / HTTP/1.1\r\nX-Big: %s", big);
	expect_error(s, MAX_HDR, MAX_BODY, 431, "headers_too_large");
}

Test(http, header_cap_is_exact)
{
	const char *head = "GET / HTTP/1.1\r\nX: ";
	char s[256];
	size_t fill;
	struct feeder c;

	/* A header section of exactly 100 bytes passes; 101 does not. */
	fill = 100 - strlen(head) - 4;
	snprintf(s, sizeof(s), "%s%.*s\r\n\r\n", head, (int)fill,
		 "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
	cr_assert_eq(strlen(s), 100);
	run_whole(&c, s, 100, MAX_BODY);
	cr_assert_eq(c.nreq, 1, "%s", c.err_msg);
	feeder_free(&c);
	run_whole(&c, s, 99, MAX_BODY);
	cr_assert_eq(c.err_status, 431);
	feeder_free(&c);
}

Test(http, too_many_headers_431)
{
	struct buf b;

	buf_init(&b, 0);
	buf_puts(&b, "GET / HTTP/1.1\r\n");
	for (int i = 0; i < HTTP_MAX_HEADERS; i++)
		buf_printf(&b, "H%d: v\r\n", i);
	buf_puts(&b, "\r\n");
	{
		struct feeder c;

		run_whole(&c, b.data, 1 << 20, MAX_BODY);
		cr_assert_eq(c.nreq, 1, "exactly HTTP_MAX_HEADERS is fine");
		feeder_free(&c);
	}
	b.len -= 2;
	buf_puts(&b, "One-More: v\r\n\r\n");
	expect_error(b.data, 1 << 20, MAX_BODY, 431, "headers_too_large");
	buf_free(&b);
}

Test(http, oversize_content_length_413_before_body)
{
	const char *s = "POST /run HTTP/1.1\r\nContent-Length: 4097\r\n\r\n";
	struct http_parser p;
	size_t used;

	http_parser_init(&p, MAX_HDR, MAX_BODY);
	cr_assert_eq(http_parser_feed(&p, s, strlen(s), &used), HTTP_ERROR);
	cr_assert_eq(p.err_status, 413);
	cr_assert_str_eq(p.err_code, "body_too_large");
	http_parser_free(&p);

	/* At the cap is fine. */
	{
		struct feeder c;
		char *body = malloc(MAX_BODY + 1);
		struct buf req;

		memset(body, 'b', MAX_BODY);
		body[MAX_BODY] = '\0';
		buf_init(&req, 0);
		buf_printf(&req, "POST /run HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s", MAX_BODY, body);
		run_whole(&c, req.data, MAX_HDR, MAX_BODY);
		cr_assert_eq(c.nreq, 1, "%s", c.err_msg);
		feeder_free(&c);
		buf_free(&req);
		free(body);
	}
}

Test(http, oversize_chunked_413)
{
	struct buf b;
	char chunk[1001];

	memset(chunk, 'c', 1000);
	chunk[1000] = '\0';
	buf_init(&b, 0);
	buf_puts(&b, "POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
	/* Small chunks: the running total trips the cap. */
	for (int i = 0; i < 5; i++)
		buf_printf(&b, "3e8\r\n%s\r\n", chunk);
	buf_puts(&b, "0\r\n\r\n");
	expect_error(b.data, MAX_HDR, MAX_BODY, 413, "body_too_large");

	/* One huge chunk is refused from its size line alone. */
	expect_error("POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFF\r\n",
		     MAX_HDR, MAX_BODY, 413, "body_too_large");
	buf_free(&b);
}

/*
 * Feed a chunked request's head, then filler again and again in pieces, as
 * a client that never stops would; the bytes used before the parser
 * refused (0 if it never did).
 */
static size_t flood_until_refused(const char *head, const char *filler, size_t limit,
				  struct feeder *c)
{
	size_t fl = strlen(filler);

	feeder_init(c, MAX_HDR, MAX_BODY);
	feeder_input(c, head, strlen(head));
	while (!c->err_status && c->stream_off < limit)
		feeder_input(c, filler, fl);
	return c->err_status ? c->stream_off : 0;
}

Test(http, chunk_extensions_count_against_the_header_cap)
{
	const char *head = "POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	char big[MAX_HDR + 2];
	struct buf b;
	struct feeder c;
	size_t used;

	/* One extension that never ends: refused once it passes the cap. */
	used = flood_until_refused("POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;",
				   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				   1 << 20, &c);
	cr_assert_neq(used, 0, "a 1 MiB chunk extension was taken");
	cr_assert_lt(used, 2 * MAX_HDR, "refused only after %zu bytes", used);
	cr_assert_eq(c.err_status, 413);
	cr_assert_str_eq(c.err_code, "body_too_large");
	cr_assert(strstr(c.err_msg, "chunk extensions"), "%s", c.err_msg);
	feeder_free(&c);

	/* Small ones on many chunks add up: names and values both count. */
	buf_init(&b, 0);
	buf_puts(&b, head);
	for (int i = 0; i < 80; i++)
		buf_puts(&b, "10;name=valuevaluevalue\r\n0123456789abcdef\r\n");
	buf_puts(&b, "0\r\n\r\n");
	run_whole(&c, b.data, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.err_status, 413, "%d %s", c.err_status, c.err_msg);
	cr_assert(strstr(c.err_msg, "chunk extensions"), "%s", c.err_msg);
	feeder_free(&c);
	buf_free(&b);

	/* Under the cap they are allowed, and not part of the body. */
	memset(big, 'e', sizeof(big));
	buf_init(&b, 0);
	buf_printf(&b, "%s5;%.*s\r\nhello\r\n0\r\n\r\n", head, MAX_HDR - 8, big);
	run_whole(&c, b.data, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 1, "%s", c.err_msg);
	cr_assert(strstr(c.log.data, " body=5:hello\n"), "%s", c.log.data);
	feeder_free(&c);
	buf_free(&b);

	/* /v1/run refuses in Codize's words. */
	expect_error("POST /v1/run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;"
		     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		     64, MAX_BODY, 413, "REQUEST_BODY_TOO_LARGE");
}

Test(http, chunk_framing_is_bounded_by_the_body)
{
	const char *head = "POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	struct buf b;
	struct feeder c;
	size_t used;

	/* A chunk size padded with zeros reaches no callback at all. */
	used = flood_until_refused(head, "0000000000000000000000000000000000000000000000000000000",
				   1 << 20, &c);
	cr_assert_neq(used, 0, "1 MiB of a chunk size line was taken");
	cr_assert_lt(used, 2 * MAX_HDR, "refused only after %zu bytes", used);
	cr_assert_eq(c.err_status, 413);
	cr_assert(strstr(c.err_msg, "chunk framing"), "%s", c.err_msg);
	feeder_free(&c);

	/* One-byte chunks: five bytes of framing each, past the header cap
	 * plus the body once there are more than MAX_HDR / 4 of them. */
	buf_init(&b, 0);
	buf_puts(&b, head);
	for (int i = 0; i < MAX_HDR / 4 + 8; i++)
		buf_puts(&b, "1\r\nx\r\n");
	buf_puts(&b, "0\r\n\r\n");
	expect_error(b.data, MAX_HDR, MAX_BODY, 413, "body_too_large");
	buf_reset(&b);

	/* Eight-byte chunks up to the body cap: less framing than body. */
	buf_puts(&b, head);
	for (int i = 0; i < MAX_BODY / 8; i++)
		buf_puts(&b, "8\r\n01234567\r\n");
	buf_puts(&b, "0\r\nX-Trailer: t\r\n\r\n");
	run_whole(&c, b.data, MAX_HDR, MAX_BODY);
	cr_assert_eq(c.nreq, 1, "%s", c.err_msg);
	cr_assert_leq(b.len, http_request_max_bytes(MAX_HDR, MAX_BODY));
	feeder_free(&c);
	buf_free(&b);
}

Test(http, malformed_request_line_400)
{
	expect_error("GARBAGE\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("GET\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("GET / FTP/1.1\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("\x01\x02\x03 / HTTP/1.1\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
}

Test(http, bad_header_400)
{
	expect_error("GET / HTTP/1.1\r\nNo colon here\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("GET / HTTP/1.1\r\nBad@Name: v\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("GET / HTTP/1.1\r\n Folded: v\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	expect_error("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", MAX_HDR, MAX_BODY, 400,
		     "bad_request");
	/* Request smuggling shapes. */
	expect_error("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		     MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
		     "0\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nxx",
		     MAX_HDR, MAX_BODY, 400, "bad_request");
}

Test(http, error_message_carries_llhttp_reason)
{
	struct feeder c;

	run_whole(&c, "GET / HTTP/1.1\r\nNo colon here\r\n\r\n", MAX_HDR, MAX_BODY);
	cr_assert_eq(c.err_status, 400);
	cr_assert(strstr(c.err_msg, "header") || strstr(c.err_msg, "Header") ||
		  strstr(c.err_msg, "token"), "%s", c.err_msg);
	feeder_free(&c);
}

/* HTTP/2.0 (and any version but 1.0/1.1) is 505, not 400. */
Test(http, unsupported_version_505)
{
	expect_error("GET / HTTP/2.0\r\n\r\n", MAX_HDR, MAX_BODY, 505,
		     "http_version_not_supported");
	expect_error("GET / HTTP/0.9\r\n\r\n", MAX_HDR, MAX_BODY, 505,
		     "http_version_not_supported");
	expect_error("GET / HTTP/1.2\r\n\r\n", MAX_HDR, MAX_BODY, 505,
		     "http_version_not_supported");
	expect_error("GET / HTTP/3.0\r\n\r\n", MAX_HDR, MAX_BODY, 505,
		     "http_version_not_supported");
	expect_error("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", MAX_HDR, MAX_BODY, 505,
		     "http_version_not_supported");
	/* HTTP/0.9 "simple request": no version at all. */
	expect_error("GET /\r\n\r\n", MAX_HDR, MAX_BODY, 505, "http_version_not_supported");
	/* A version that is not even well formed is a plain 400. */
	expect_error("GET / HTTP/11.1\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
	expect_error("GET / HTTP/1.x\r\n\r\n", MAX_HDR, MAX_BODY, 400, "bad_request");
}

Test(http, connect_501_upgrade_ignored)
{
	struct feeder c;

	expect_error("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n",
		     MAX_HDR, MAX_BODY, 501, "not_implemented");
	run_whole(&c, "GET /healthz HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\n"
		  "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
		  "GET /info HTTP/1.1\r\n\r\n", MAX_HDR, MAX_BODY);
	cr_assert_eq(c.err_status, 0, "%s", c.err_msg);
	cr_assert_eq(c.nreq, 2, "served as HTTP/1.1, the next request still parsed");
	feeder_free(&c);
}

Test(http, expect_continue)
{
	const char *head = "POST /run HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\n"
			   "Content-Length: 4\r\n\r\n";
	struct http_parser p;
	size_t used;

	http_parser_init(&p, MAX_HDR, MAX_BODY);
	cr_assert_eq(http_parser_feed(&p, head, strlen(head), &used), HTTP_HEADERS_DONE);
	cr_assert_eq(used, strlen(head));
	cr_assert(p.req.expect_continue);
	cr_assert_str_eq(p.req.path, "/run");
	cr_assert_str_eq(p.req.method, "POST");
	cr_assert(http_parser_in_request(&p));
	/* Nothing more arrived yet. */
	cr_assert_eq(http_parser_feed(&p, head + used, 0, &used), HTTP_NEED_MORE);
	cr_assert_eq(http_parser_feed(&p, "ab", 2, &used), HTTP_NEED_MORE);
	cr_assert_eq(http_parser_feed(&p, "cd", 2, &used), HTTP_REQUEST_DONE);
	cr_assert_eq(used, 2);
	cr_assert_str_eq(p.req.body.data, "abcd");
	cr_assert(p.req.expect_continue);
	http_parser_next(&p);

	/* No body, no HEADERS_DONE; HTTP/1.0 never waits for 100. */
	{
		const char *g = "GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n";
		const char *o = "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n";

		cr_assert_eq(http_parser_feed(&p, g, strlen(g), &used), HTTP_REQUEST_DONE);
		http_parser_next(&p);
		cr_assert_eq(http_parser_feed(&p, o, strlen(o), &used), HTTP_HEADERS_DONE);
		cr_assert(!p.req.expect_continue);
		http_parser_next(&p);
		cr_assert_eq(http_parser_feed(&p, head, strlen(head), &used), HTTP_HEADERS_DONE);
		cr_assert(p.req.expect_continue);
	}
	http_parser_free(&p);
	cr_assert_str_eq(HTTP_CONTINUE_RESPONSE, "HTTP/1.1 100 Continue\r\n\r\n");
}

/*
 * A request's headers are reported before any byte of its body is used,
 * even when the body came with them: the worker checks its token there,
 * and a refused body is never buffered.
 */
Test(http, headers_done_comes_before_any_body_byte)
{
	const char *req = "POST /run HTTP/1.1\r\nHost: x\r\nX-Auth-Token: t0ken\r\n"
			  "Content-Length: 10\r\n\r\n0123456789";
	const char *body = strstr(req, "\r\n\r\n") + 4;
	struct http_parser p;
	size_t used;

	http_parser_init(&p, MAX_HDR, MAX_BODY);
	cr_assert_eq(http_parser_feed(&p, req, strlen(req), &used), HTTP_HEADERS_DONE);
	cr_assert_eq(used, (size_t)(body - req));
	cr_assert_eq(p.req.body.len, 0);
	cr_assert_str_eq(http_header_get(&p.req, "x-auth-token"), "t0ken");
	cr_assert_str_eq(p.req.path, "/run");
	http_parser_free(&p);
}

Test(http, query_split)
{
	struct feeder c;

	run_whole(&c, "GET /run?lang=py3&x=%20y HTTP/1.1\r\n\r\n"
		  "GET /a?b?c HTTP/1.1\r\n\r\nGET /e? HTTP/1.1\r\n\r\n", MAX_HDR, MAX_BODY);
	cr_assert_str_eq(c.log.data,
			 "REQ GET /run q=lang=py3&x=%20y v=1.1 ka=1 ec=0 body=0:\n"
			 "REQ GET /a q=b?c v=1.1 ka=1 ec=0 body=0:\n"
			 "REQ GET /e q= v=1.1 ka=1 ec=0 body=0:\n");
	feeder_free(&c);
}

Test(http, absolute_form_url)
{
	struct feeder c;

	run_whole(&c, "GET http://localhost:8080/info?a=1 HTTP/1.1\r\n\r\n"
		  "GET HTTPS://example.org HTTP/1.1\r\n\r\n"
		  "OPTIONS * HTTP/1.1\r\n\r\n", MAX_HDR, MAX_BODY);
	cr_assert_str_eq(c.log.data,
			 "REQ GET /info q=a=1 v=1.1 ka=1 ec=0 body=0:\n"
			 "REQ GET / q=(none) v=1.1 ka=1 ec=0 body=0:\n"
			 "REQ OPTIONS * q=(none) v=1.1 ka=1 ec=0 body=0:\n");
	feeder_free(&c);
}

Test(http, leading_blank_lines_between_requests)
{
	struct feeder c;

	run_whole(&c, "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx\r\nGET /b HTTP/1.1\r\n\r\n",
		  MAX_HDR, MAX_BODY);
	cr_assert_eq(c.err_status, 0, "%s", c.err_msg);
	cr_assert_eq(c.nreq, 2);
	feeder_free(&c);
}

/* Split a formatted response into its head lines and body. */
static void check_response(const char *resp, const char *status_line, const char *conn_hdr,
			   const char *extra, const char **body)
{
	const char *end = strstr(resp, "\r\n\r\n");
	const char *cl;

	cr_assert_not_null(end);
	cr_assert(strncmp(resp, status_line, strlen(status_line)) == 0, "%s", resp);
	cr_assert_not_null(strstr(resp, conn_hdr));
	if (extra)
		cr_assert_not_null(strstr(resp, extra));
	*body = end + 4;
	cl = strstr(resp, "\r\nContent-Length: ");
	cr_assert_not_null(cl);
	cr_assert(cl < end);
	cr_assert_eq(strtoul(cl + 18, NULL, 10), strlen(*body));
}

Test(http, format_response)
{
	struct buf out;
	const char *body;

	buf_init(&out, 0);
	cr_assert_eq(http_format_response(&out, 200, "application/json", "{\"status\":\"ok\"}", 15,
					  true, NULL), 0);
	check_response(out.data, "HTTP/1.1 200 OK\r\n", "\r\nConnection: keep-alive\r\n", NULL,
		       &body);
	cr_assert_str_eq(body, "{\"status\":\"ok\"}");
	cr_assert_not_null(strstr(out.data, "\r\nContent-Type: application/json\r\n"));

	buf_reset(&out);
	cr_assert_eq(http_format_response(&out, 503, "text/plain", "busy", 4, false,
					  "Retry-After: 1\r\n"), 0);
	check_response(out.data, "HTTP/1.1 503 Service Unavailable\r\n", "\r\nConnection: close\r\n",
		       "\r\nRetry-After: 1\r\n\r\n", &body);
	cr_assert_str_eq(body, "busy");

	/* Appends, does not replace. */
	cr_assert_eq(http_format_response(&out, 204, NULL, NULL, 0, true, NULL), 0);
	cr_assert_not_null(strstr(out.data, "busyHTTP/1.1 204 "));
	buf_free(&out);

	/* A capped buffer that cannot take the response is left as it was. */
	buf_init(&out, 40);
	buf_puts(&out, "keep");
	cr_assert_lt(http_format_response(&out, 200, "text/plain", "0123456789", 10, true, NULL), 0);
	cr_assert_eq(out.len, 4);
	cr_assert_str_eq(out.data, "keep");
	buf_free(&out);
}

/* A body made elsewhere gets the same head, in front of it in its own block. */
Test(http, response_around_a_body_is_the_same_response)
{
	static const char *const bodies[] = { "", "{\"status\":\"ok\"}", "x\0y" };
	static const size_t lens[] = { 0, 15, 3 };

	for (size_t i = 0; i < 3; i++) {
		struct buf want, got;
		char *body = malloc(lens[i] + 1);

		memcpy(body, bodies[i], lens[i] + 1);
		buf_init(&want, 0);
		buf_init(&got, 0);
		buf_puts(&got, "dropped");
		cr_assert_eq(http_format_response(&want, 200, "application/json", bodies[i], lens[i],
						  i == 1, "X-Request-Id: r\r\n"), 0);
		cr_assert_eq(http_response_around(&got, 200, "application/json", body, lens[i],
						  i == 1, "X-Request-Id: r\r\n"), 0);
		cr_assert_eq(got.len, want.len);
		cr_assert_eq(memcmp(got.data, want.data, want.len), 0, "%s", got.data);
		cr_assert_eq(got.data[got.len], '\0');
		cr_assert_gt(got.cap, got.len);
		buf_free(&want);
		buf_free(&got);
	}
}

Test(http, format_error_is_escaped_json)
{
	struct buf out;
	const char *body;
	cJSON *root, *err;

	buf_init(&out, 0);
	cr_assert_eq(http_format_error(&out, 400, "invalid_filename",
				       "bad \"name\"\nwith\\newline\t</script>", false, NULL), 0);
	check_response(out.data, "HTTP/1.1 400 Bad Request\r\n", "\r\nConnection: close\r\n",
		       "\r\nContent-Type: application/json\r\n", &body);
	cr_assert_null(strchr(body, '\n'), "a raw newline leaked into the JSON: %s", body);
	root = cJSON_Parse(body);
	cr_assert_not_null(root, "%s", body);
	err = cJSON_GetObjectItemCaseSensitive(root, "error");
	cr_assert(cJSON_IsObject(err));
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring,
			 "invalid_filename");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring,
			 "bad \"name\"\nwith\\newline\t</script>");
	cJSON_Delete(root);

	buf_reset(&out);
	cr_assert_eq(http_format_error(&out, 431, "headers_too_large", NULL, true,
				       "X-A: 1\r\nX-B: 2\r\n"), 0);
	check_response(out.data, "HTTP/1.1 431 Request Header Fields Too Large\r\n",
		       "\r\nConnection: keep-alive\r\n", "\r\nX-A: 1\r\nX-B: 2\r\n\r\n", &body);
	root = cJSON_Parse(body);
	cr_assert_not_null(root);
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(root, "error"), "code")->valuestring,
			 "headers_too_large");
	cJSON_Delete(root);
	buf_free(&out);
}

/* /v1/run is refused in Codize's words, also by the HTTP layer. */
Test(http, codize_route_413_in_codize_words)
{
	const char *s = "POST /v1/run HTTP/1.1\r\nContent-Length: 4097\r\n\r\n";
	struct http_parser p;
	struct buf out;
	const char *body;
	size_t used;
	cJSON *root;

	http_parser_init(&p, MAX_HDR, MAX_BODY);
	cr_assert_eq(http_parser_feed(&p, s, strlen(s), &used), HTTP_ERROR);
	cr_assert_eq(p.err_status, 413);
	cr_assert_str_eq(p.err_code, "REQUEST_BODY_TOO_LARGE");
	cr_assert_str_eq(p.err_msg, "request body too large");
	buf_init(&out, 0);
	cr_assert_eq(http_format_error(&out, 413, p.err_code, p.err_msg, false, NULL), 0);
	check_response(out.data, "HTTP/1.1 413 Content Too Large\r\n", "\r\nConnection: close\r\n",
		       "\r\nContent-Type: application/json\r\n", &body);
	root = cJSON_Parse(body);
	cr_assert_not_null(root, "%s", body);
	/* top level for Codize's clients, under "error" as goboxd writes errors */
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "code")->valuestring,
			 "REQUEST_BODY_TOO_LARGE");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "message")->valuestring,
			 "request body too large");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(root, "error"), "code")->valuestring,
			 "REQUEST_BODY_TOO_LARGE");
	cJSON_Delete(root);
	buf_free(&out);
	http_parser_free(&p);
	/* native errors keep their one shape */
	buf_init(&out, 0);
	cr_assert_eq(http_format_error(&out, 413, "body_too_large", "x", false, NULL), 0);
	cr_assert_null(strstr(out.data, "\"code\":\"body_too_large\",\"message\":\"x\"}}{"));
	root = cJSON_Parse(strstr(out.data, "\r\n\r\n") + 4);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(root, "code"));
	cJSON_Delete(root);
	buf_free(&out);
}

Test(http, status_text_covers_used_statuses)
{
	static const int used[] = { 100, 200, 400, 401, 404, 405, 408, 411, 413, 414, 429, 431,
				    500, 501, 503, 505 };

	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		cr_assert_str_neq(http_status_text(used[i]), "Unknown", "%d", used[i]);
	cr_assert_str_eq(http_status_text(401), "Unauthorized");
	cr_assert_str_eq(http_status_text(404), "Not Found");
	cr_assert_str_eq(http_status_text(413), "Content Too Large");
	cr_assert_str_eq(http_status_text(799), "Unknown");
}

Test(http, parser_error_roundtrip_through_format)
{
	struct feeder c;
	struct buf out;
	cJSON *root;
	const char *body;

	run_whole(&c, "GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", MAX_HDR, MAX_BODY);
	buf_init(&out, 0);
	cr_assert_eq(http_format_error(&out, c.p.err_status, c.p.err_code, c.p.err_msg, false,
				       NULL), 0);
	body = strstr(out.data, "\r\n\r\n") + 4;
	root = cJSON_Parse(body);
	cr_assert_not_null(root);
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(root, "error"), "code")->valuestring,
			 "bad_request");
	cJSON_Delete(root);
	buf_free(&out);
	feeder_free(&c);
}

Test(http, query_parameters_are_found_and_decoded)
{
	struct http_request r = { .query = "fields=stdout,status&wait=true&x&tokens=a%2Cb+c&"
					   "bad=%zz&nul=a%00b&wait=false" };
	char *v;

	v = http_query_param(&r, "wait");
	cr_assert_str_eq(v, "true", "the first occurrence counts");
	free(v);
	v = http_query_param(&r, "fields");
	cr_assert_str_eq(v, "stdout,status");
	free(v);
	v = http_query_param(&r, "tokens");
	cr_assert_str_eq(v, "a,b c", "%%XX and '+' decoded");
	free(v);
	v = http_query_param(&r, "x");
	cr_assert_str_eq(v, "", "a name without '='");
	free(v);
	v = http_query_param(&r, "bad");
	cr_assert_str_eq(v, "%zz", "a '%%' without two hex digits stays");
	free(v);
	cr_assert_null(http_query_param(&r, "nul"), "a NUL is never a C string's middle");
	cr_assert_null(http_query_param(&r, "wai"), "a prefix is not the name");
	cr_assert_null(http_query_param(&r, "base64_encoded"));
	r.query = NULL;
	cr_assert_null(http_query_param(&r, "wait"));
}
