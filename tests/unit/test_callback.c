#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "worker/http/callback.h"

static void callback_suite_init(void)
{
	cr_assert_eq(callback_global_init(), 0);
}

static void callback_suite_fini(void)
{
	callback_global_cleanup();
}

TestSuite(callback, .init = callback_suite_init, .fini = callback_suite_fini, .timeout = 10);

/* ---- the address rule ---- */

struct addr_case {
	const char *addr;
	const char *why;    /* NULL: allowed */
};

static const struct addr_case addr_cases[] = {
	{ "8.8.8.8", NULL },
	{ "1.0.0.0", NULL },
	{ "10.1.2.3", "private" },        /* the operator's other machines */
	{ "172.16.0.1", "private" },
	{ "172.31.255.255", "private" },
	{ "172.32.0.0", NULL },
	{ "192.168.1.1", "private" },
	{ "100.64.0.1", "private" },
	{ "198.18.0.1", "private" },
	{ "11.0.0.1", NULL },
	{ "126.255.255.255", NULL },
	{ "128.0.0.0", NULL },
	{ "169.253.255.255", NULL },
	{ "169.255.0.0", NULL },
	{ "223.255.255.255", NULL },
	{ "255.255.255.254", NULL },
	{ "0.0.0.0", "unspecified" },
	{ "0.255.255.255", "unspecified" },
	{ "127.0.0.1", "loopback" },
	{ "127.255.255.254", "loopback" },
	{ "169.254.0.0", "link-local" },
	{ "169.254.169.254", "a cloud's metadata service" },
	{ "169.254.170.2", "a cloud's metadata service" },
	{ "169.254.1.1", "link-local" },
	{ "100.100.100.200", "a cloud's metadata service" },
	{ "168.63.129.16", "a cloud's metadata service" },
	{ "224.0.0.1", "multicast" },
	{ "239.255.255.255", "multicast" },
	{ "255.255.255.255", "broadcast" },
	{ "2001:db8::1", NULL },
	{ "2606:4700::1111", NULL },
	{ "fec0::1", NULL },
	{ "fe7f:ffff::1", NULL },
	{ "::2", NULL },
	{ "::ffff:8.8.8.8", NULL },
	{ "::ffff:169.253.1.1", NULL },
	{ "::", "unspecified" },
	{ "::1", "loopback" },
	{ "fe80::1", "link-local" },
	{ "febf:ffff::1", "link-local" },
	{ "ff02::1", "multicast" },
	{ "ff0e::1", "multicast" },
	{ "::ffff:127.0.0.1", "loopback" },
	{ "::ffff:127.1.2.3", "loopback" },
	{ "::ffff:0.0.0.0", "unspecified" },
	{ "::ffff:169.254.169.254", "a cloud's metadata service" },
	{ "::ffff:10.0.0.1", "private" },
	{ "fd00::1", "private" },
	{ "fc00::1", "private" },
	{ "fd00:ec2::254", "a cloud's metadata service" },
	{ "::ffff:224.0.0.1", "multicast" },
	{ "::ffff:255.255.255.255", "broadcast" },
};

/* A sockaddr for an address literal; its length. */
static size_t make_addr(const char *s, struct sockaddr_storage *buf)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(80) };

	if (inet_pton(AF_INET, s, &s4.sin_addr) == 1) {
		memcpy(buf, &s4, sizeof(s4));
		return sizeof(s4);
	}
	cr_assert_eq(inet_pton(AF_INET6, s, &s6.sin6_addr), 1, "%s", s);
	memcpy(buf, &s6, sizeof(s6));
	return sizeof(s6);
}

Test(callback, addr_rule_table)
{
	struct sockaddr_storage ss;
	const struct sockaddr *sa = (const struct sockaddr *)&ss;

	for (size_t i = 0; i < sizeof(addr_cases) / sizeof(addr_cases[0]); i++) {
		const struct addr_case *t = &addr_cases[i];
		size_t len = make_addr(t->addr, &ss);
		const char *why = "untouched";
		bool refused;

		refused = callback_addr_refused(sa, len, false, NULL, &why);
		cr_expect_eq(refused, t->why != NULL, "%s: refused=%d", t->addr, refused);
		if (t->why)
			cr_expect_str_eq(why, t->why, "%s", t->addr);
		else
			cr_expect_str_eq(why, "untouched", "%s: why set when allowed", t->addr);
		/* allow_local lifts the local rules, never the private or the
		 * metadata ones */
		refused = callback_addr_refused(sa, len, true, NULL, &why);
		cr_expect_eq(refused, t->why && (!strcmp(t->why, "private") ||
						 !strcmp(t->why, "a cloud's metadata service")),
			     "%s with allow_local: refused=%d", t->addr, refused);
	}
}

Test(callback, addr_rule_private_ranges_the_operator_allows)
{
	struct sockaddr_storage ss;
	const struct sockaddr *sa = (const struct sockaddr *)&ss;
	struct cidr_list allow;
	const char *why = NULL;
	char err[128];
	size_t len;

	cr_assert_eq(cidr_list_parse("10.2.0.0/16, fd00:1::/32", &allow, err, sizeof(err)), 0, "%s",
		     err);
	len = make_addr("10.2.3.4", &ss);
	cr_expect_not(callback_addr_refused(sa, len, false, &allow, &why));
	len = make_addr("10.3.0.1", &ss);
	cr_expect(callback_addr_refused(sa, len, false, &allow, &why), "outside the range");
	len = make_addr("fd00:1:2::3", &ss);
	cr_expect_not(callback_addr_refused(sa, len, false, &allow, &why));
	len = make_addr("::ffff:10.2.0.9", &ss);
	cr_expect_not(callback_addr_refused(sa, len, false, &allow, &why), "mapped IPv4 too");
	/* no allow-list opens a metadata service */
	cr_assert_eq(cidr_list_parse("100.64.0.0/10,fd00::/8", &allow, err, sizeof(err)), 0);
	len = make_addr("100.100.100.200", &ss);
	cr_expect(callback_addr_refused(sa, len, true, &allow, &why));
	len = make_addr("fd00:ec2::254", &ss);
	cr_expect(callback_addr_refused(sa, len, true, &allow, &why));
}

Test(callback, this_hosts_own_addresses)
{
	struct sockaddr_storage ss;
	size_t len = make_addr("127.0.0.1", &ss);

	cr_expect(callback_addr_is_host((const struct sockaddr *)&ss, len), "lo is this host's");
	len = make_addr("8.8.8.8", &ss);
	cr_expect_not(callback_addr_is_host((const struct sockaddr *)&ss, len));
}

Test(callback, addr_rule_non_inet_always_refused)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "/run/docker.sock" };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x08080808) };
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	const char *why = NULL;

	for (int allow = 0; allow <= 1; allow++) {
		why = NULL;
		cr_expect(callback_addr_refused((struct sockaddr *)&un, sizeof(un), allow, NULL, &why));
		cr_expect_str_eq(why, "not an internet address");
		cr_expect(callback_addr_refused(&sa, sizeof(sa), allow, NULL, &why));
		/* a public address, but shorter than its family's sockaddr */
		cr_expect(callback_addr_refused((struct sockaddr *)&s4, sizeof(s4) - 1, allow, NULL, &why));
		cr_expect(callback_addr_refused((struct sockaddr *)&s4, 1, allow, NULL, &why));
		cr_expect(callback_addr_refused(NULL, 0, allow, NULL, &why));
	}
	cr_expect_not(callback_addr_refused((struct sockaddr *)&s4, sizeof(s4), false, NULL, &why));
}

/* ---- URL check ---- */

Test(callback, url_check_accepts)
{
	static const char *const good[] = {
		"http://example.com",
		"http://example.com/",
		"https://example.com/judge/callback?id=42&x=y",
		"HTTP://Example.COM:8080/a/b",
		"HtTpS://example.com:443/",
		"http://192.0.2.7:81/cb",
		"http://[2001:db8::1]:8443/cb",
		"http://127.0.0.1/",   /* the address rule is callback_put's */
	};
	char err[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(callback_url_check(good[i], err, sizeof(err)), 0, "%s: %s", good[i],
			     err);
	}
}

Test(callback, url_check_refuses)
{
	static const char *const bad[] = {
		"ftp://example.com/x",
		"file:///etc/passwd",
		"gopher://example.com/",
		"dict://example.com:11211/",
		"http://",
		"http:///path",
		"http:/example.com/",
		"http:example.com",
		"http:\\\\example.com/",
		"http://\\example.com/",
		"http://example.com\\@evil.example/",
		"not a url",
		"example.com/path",
		"",
		"http://user:pass@example.com/",
		"http://user@example.com/",
		"http://:pass@example.com/",
		"http://example.com/a b",
		"http://example.com/a\tb",
		"http://example.com/\r\nX-Injected: 1",
		" http://example.com/",
		"http://example.com/\x7f",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(callback_url_check(bad[i], err, sizeof(err)), -EINVAL, "%s", bad[i]);
		cr_expect_neq(err[0], '\0', "%s: no reason given", bad[i]);
	}
	cr_expect_eq(callback_url_check(NULL, err, sizeof(err)), -EINVAL);
}

Test(callback, url_check_length)
{
	static const char head[] = "http://example.com/";
	char url[3001], err[128];

	memcpy(url, head, strlen(head));
	memset(url + strlen(head), 'a', sizeof(url) - strlen(head));
	url[3000] = '\0';
	cr_expect_eq(callback_url_check(url, err, sizeof(err)), -EINVAL);
	/* the limit is 2048: exactly that passes, one more does not */
	url[2048] = '\0';
	cr_expect_eq(callback_url_check(url, err, sizeof(err)), 0, "%s", err);
	url[2048] = 'a';
	url[2049] = '\0';
	cr_expect_eq(callback_url_check(url, err, sizeof(err)), -EINVAL);
}

/* ---- callback_put against a server of our own on 127.0.0.1 ---- */

/* however a test goes, its servers stop by themselves after this long */
#define SRV_LIFETIME_MS 3000
#define SRV_BODY_MAX (4 << 20)

/* What a server answers. */
struct srv_cfg {
	int status;              /* 0: read the request, never answer */
	size_t answer_len;       /* answer body bytes */
	bool no_length;          /* no Content-Length: the body ends at close */
	const char *location;    /* a Location header */
};

struct srv {
	int lfd;
	int stopfd;              /* eventfd: the test is done with us */
	unsigned short port;
	pthread_t thread;
	struct srv_cfg cfg;
	char location[128];
	/* what was seen */
	int nconn;
	bool got_request;
	char method[16];
	char path[256];
	char ctype[128];
	bool saw_expect;
	char *body;
	size_t body_len;
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd (or the stop signal) until deadline: 1 ready, 0 not. */
static int srv_wait(struct srv *s, int fd, long long deadline)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = s->stopfd, .events = POLLIN } };
	long long left;

	for (;;) {
		left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		if (poll(p, 2, (int)left) < 0)
			return 0;
		if (p[1].revents)
			return 0;
		if (p[0].revents)
			return 1;
	}
}

static const char *hdr_value(char *line, const char *name)
{
	size_t n = strlen(name);

	if (strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* Read one request: head, then a Content-Length body. */
static void srv_read_request(struct srv *s, int fd, long long deadline)
{
	char head[8192], *end = NULL, *line, *next;
	size_t n = 0, clen = 0, have;
	const char *v;
	ssize_t r;

	while (!end && n < sizeof(head) - 1 && srv_wait(s, fd, deadline)) {
		r = recv(fd, head + n, sizeof(head) - 1 - n, 0);
		if (r <= 0)
			return;
		n += (size_t)r;
		head[n] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end)
		return;
	*end = '\0';
	have = n - (size_t)(end + 4 - head);
	next = strstr(head, "\r\n");
	if (next)
		*next = '\0';
	sscanf(head, "%15s %255s", s->method, s->path);
	for (line = next ? next + 2 : NULL; line; line = next) {
		next = strstr(line, "\r\n");
		if (next) {
			*next = '\0';
			next += 2;
		}
		if ((v = hdr_value(line, "Content-Type")))
			snprintf(s->ctype, sizeof(s->ctype), "%s", v);
		else if ((v = hdr_value(line, "Content-Length")))
			clen = strtoul(v, NULL, 10);
		else if (hdr_value(line, "Expect"))
			s->saw_expect = true;
	}
	if (clen > SRV_BODY_MAX || have > clen)
		return;
	s->body = malloc(clen + 1);
	memcpy(s->body, end + 4, have);
	/* an Expect: 100-continue client waits here for a second */
	while (have < clen && srv_wait(s, fd, deadline)) {
		r = recv(fd, s->body + have, clen - have, 0);
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	s->body[have] = '\0';
	s->body_len = have;
	s->got_request = have == clen;
}

static void srv_answer(struct srv *s, int fd, long long deadline)
{
	const struct srv_cfg *c = &s->cfg;
	char head[512];
	char *body;
	int n;

	if (c->status == 0) {
		/* hold the connection until the client gives up */
		srv_wait(s, fd, deadline);
		return;
	}
	n = snprintf(head, sizeof(head), "HTTP/1.1 %d Test\r\nConnection: close\r\n", c->status);
	if (s->location[0])
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Location: %s\r\n", s->location);
	if (c->status != 204 && !c->no_length)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Length: %zu\r\n",
			      c->answer_len);
	n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
	send(fd, head, (size_t)n, MSG_NOSIGNAL);
	if (c->status == 204 || !c->answer_len)
		return;
	body = malloc(c->answer_len);
	memset(body, 'x', c->answer_len);
	send(fd, body, c->answer_len, MSG_NOSIGNAL);
	free(body);
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	long long deadline = mono_ms() + SRV_LIFETIME_MS;
	int fd;

	while (srv_wait(s, s->lfd, deadline)) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		s->nconn++;
		if (!s->got_request) {
			srv_read_request(s, fd, deadline);
			srv_answer(s, fd, deadline);
		}
		close(fd);
	}
	return NULL;
}

/* A server on 127.0.0.1, in a thread, answering as cfg says. */
static void srv_start(struct srv *s, struct srv_cfg cfg)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	snprintf(s->location, sizeof(s->location), "%s", cfg.location ? cfg.location : "");
	s->cfg.location = NULL;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(s->lfd, 0);
	cr_assert_eq(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(s->lfd, 16), 0);
	cr_assert_eq(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	s->stopfd = eventfd(0, EFD_CLOEXEC);
	cr_assert_geq(s->stopfd, 0);
	cr_assert_eq(pthread_create(&s->thread, NULL, srv_main, s), 0);
}

/* Stop the server; a connection still in the backlog is counted too. */
static void srv_stop(struct srv *s)
{
	uint64_t one = 1;
	int fd;

	cr_assert_eq(write(s->stopfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	pthread_join(s->thread, NULL);
	while ((fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		s->nconn++;
		close(fd);
	}
	close(s->lfd);
	close(s->stopfd);
}

static void srv_free(struct srv *s)
{
	free(s->body);
}

static const char json_body[] = "{\"stdout\":\"aGk=\",\"status\":{\"id\":3,\"description\":\"Accepted\"},\"token\":\"t\xc3\xa9\"}";

static int put_to(struct srv *s, const char *path, unsigned timeout_ms, bool allow_local,
		  const char *body, size_t len, char *err, size_t errlen)
{
	struct callback_opts o = { .timeout_ms = timeout_ms, .allow_local = allow_local };
	char url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", s->port, path);
	err[0] = '\0';
	return callback_put(url, body, len, &o, err, errlen);
}

Test(callback, put_200_delivers_the_body)
{
	struct srv s;
	char err[256];

	srv_start(&s, (struct srv_cfg){ .status = 200, .answer_len = 17 });
	cr_expect_eq(put_to(&s, "/cb/7?x=1", 2000, true, json_body, strlen(json_body), err,
			    sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	cr_expect_eq(s.nconn, 1);
	cr_assert(s.got_request);
	cr_expect_str_eq(s.method, "PUT");
	cr_expect_str_eq(s.path, "/cb/7?x=1");
	cr_expect_str_eq(s.ctype, "application/json");
	cr_expect_not(s.saw_expect);
	cr_expect_eq(s.body_len, strlen(json_body));
	cr_expect_eq(memcmp(s.body, json_body, s.body_len), 0, "body: %s", s.body);
	srv_free(&s);
}

Test(callback, put_204)
{
	struct srv s;
	char err[256];

	srv_start(&s, (struct srv_cfg){ .status = 204 });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	cr_expect(s.got_request);
	cr_expect_str_eq(s.method, "PUT");
	cr_expect_str_eq(s.body, "{}");
	srv_free(&s);
}

/* libcurl sends Expect: 100-continue with a large body unless told not
 * to, then waits a second for an answer our server never gives */
Test(callback, put_large_body_without_expect)
{
	size_t len = (3u << 20) / 2;
	char *big = malloc(len), err[256];
	struct srv s;

	for (size_t i = 0; i < len; i++)
		big[i] = (char)('a' + i % 26);
	srv_start(&s, (struct srv_cfg){ .status = 200 });
	cr_expect_eq(put_to(&s, "/big", 900, true, big, len, err, sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	cr_expect_not(s.saw_expect);
	cr_assert(s.got_request);
	cr_expect_eq(s.body_len, len);
	cr_expect_eq(memcmp(s.body, big, len), 0);
	srv_free(&s);
	free(big);
}

Test(callback, put_large_answer_still_counts)
{
	struct srv s;
	char err[256];

	/* longer than callback_put keeps: its status still decides */
	srv_start(&s, (struct srv_cfg){ .status = 200, .answer_len = 200 * 1024 });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	srv_free(&s);

	srv_start(&s, (struct srv_cfg){ .status = 200, .answer_len = 200 * 1024, .no_length = true });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	srv_free(&s);

	srv_start(&s, (struct srv_cfg){ .status = 503, .answer_len = 200 * 1024 });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), -EPROTO, "%s", err);
	cr_expect(strstr(err, "503"), "%s", err);
	srv_stop(&s);
	srv_free(&s);
}

Test(callback, put_500_is_eproto)
{
	struct srv s;
	char err[256];

	srv_start(&s, (struct srv_cfg){ .status = 500, .answer_len = 5 });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), -EPROTO);
	cr_expect(strstr(err, "500"), "%s", err);
	srv_stop(&s);
	cr_expect_eq(s.nconn, 1);
	srv_free(&s);
}

Test(callback, put_redirect_not_followed)
{
	struct srv s, target;
	char err[256], where[96];

	srv_start(&target, (struct srv_cfg){ .status = 200 });
	snprintf(where, sizeof(where), "http://127.0.0.1:%u/elsewhere", target.port);
	srv_start(&s, (struct srv_cfg){ .status = 302, .location = where });
	cr_expect_eq(put_to(&s, "/", 2000, true, "{}", 2, err, sizeof(err)), -EPROTO);
	cr_expect(strstr(err, "302"), "%s", err);
	cr_expect(strstr(err, "redirect"), "%s", err);
	srv_stop(&s);
	srv_stop(&target);
	cr_expect_eq(s.nconn, 1);
	cr_expect_eq(target.nconn, 0, "the redirect was followed");
	srv_free(&s);
	srv_free(&target);
}

Test(callback, put_no_answer_times_out)
{
	struct srv s;
	char err[256];
	long long t0, took;

	srv_start(&s, (struct srv_cfg){ .status = 0 });
	t0 = mono_ms();
	cr_expect_eq(put_to(&s, "/", 300, true, "{}", 2, err, sizeof(err)), -ETIMEDOUT, "%s", err);
	took = mono_ms() - t0;
	srv_stop(&s);
	cr_expect(s.got_request, "the request never arrived");
	/* not a benchmark: a bound at several times the limit, only to show
	 * that the limit is what ended the exchange */
	cr_expect_lt(took, 2000, "took %lld ms", took);
	srv_free(&s);
}

/* The address literal in every spelling libcurl understands: the rule
 * applies to the address connected to, not to the text of the URL. */
Test(callback, put_loopback_refused)
{
	static const char *const hosts[] = { "127.0.0.1", "127.1", "0x7f.1", "2130706433",
					     "0177.0.0.1", "[::ffff:127.0.0.1]" };
	struct callback_opts o = { .timeout_ms = 2000, .allow_local = false };
	char url[96], err[256];
	struct srv s;

	srv_start(&s, (struct srv_cfg){ .status = 200 });
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		snprintf(url, sizeof(url), "http://%s:%u/", hosts[i], s.port);
		err[0] = '\0';
		cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EACCES, "%s: %s",
			     url, err);
		cr_expect(strstr(err, "127.0.0.1 refused: loopback"), "%s: %s", url, err);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", s.port);
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EACCES);
	cr_expect_str_eq(err, "address 127.0.0.1 refused: loopback");
	srv_stop(&s);
	cr_expect_eq(s.nconn, 0, "a refused address was connected to");
	srv_free(&s);
}

Test(callback, put_localhost_name_refused)
{
	struct callback_opts o = { .timeout_ms = 2000, .allow_local = false };
	struct srv s;
	char url[64], err[256] = "";

	srv_start(&s, (struct srv_cfg){ .status = 200 });
	snprintf(url, sizeof(url), "http://localhost:%u/", s.port);
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EACCES, "%s", err);
	cr_expect(strstr(err, "refused: loopback"), "%s", err);
	srv_stop(&s);
	cr_expect_eq(s.nconn, 0, "a refused address was connected to");
	srv_free(&s);
}

Test(callback, put_bad_url_or_timeout_sends_nothing)
{
	struct callback_opts o = { .timeout_ms = 2000, .allow_local = true };
	struct srv s;
	char url[96], err[256] = "";

	srv_start(&s, (struct srv_cfg){ .status = 200 });
	snprintf(url, sizeof(url), "ftp://127.0.0.1:%u/", s.port);
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EINVAL);
	snprintf(url, sizeof(url), "http://u:p@127.0.0.1:%u/", s.port);
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EINVAL);
	/* 0 would be no limit at all to libcurl */
	o.timeout_ms = 0;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", s.port);
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EINVAL);
	/* a key that would be a second header */
	o.timeout_ms = 2000;
	o.idempotency_key = "abc\r\nX-Injected: 1";
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EINVAL);
	srv_stop(&s);
	cr_expect_eq(s.nconn, 0);
	srv_free(&s);
}

Test(callback, put_connection_refused_is_eio)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct callback_opts o = { .timeout_ms = 2000, .allow_local = true };
	socklen_t alen = sizeof(a);
	char url[64], err[256] = "";
	int fd;

	/* bound, so no other test gets the port, but not listening */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", ntohs(a.sin_port));
	cr_expect_eq(callback_put(url, "{}", 2, &o, err, sizeof(err)), -EIO, "%s", err);
	cr_expect_neq(err[0], '\0');
	close(fd);
}

/* http_proxy from the environment would send the callback, and the
 * address rule's decision, to someone else */
Test(callback, put_ignores_proxy_from_environment)
{
	struct srv s, proxy;
	char where[64], err[256];

	srv_start(&proxy, (struct srv_cfg){ .status = 200 });
	srv_start(&s, (struct srv_cfg){ .status = 204 });
	snprintf(where, sizeof(where), "http://127.0.0.1:%u", proxy.port);
	/* Criterion runs each test in a child of its own */
	cr_assert_eq(setenv("http_proxy", where, 1), 0);
	cr_assert_eq(setenv("HTTP_PROXY", where, 1), 0);
	cr_assert_eq(setenv("ALL_PROXY", where, 1), 0);
	cr_assert_eq(unsetenv("no_proxy"), 0);
	cr_assert_eq(unsetenv("NO_PROXY"), 0);
	cr_expect_eq(put_to(&s, "/direct", 2000, true, "{}", 2, err, sizeof(err)), 0, "%s", err);
	srv_stop(&s);
	srv_stop(&proxy);
	cr_expect_eq(s.nconn, 1);
	cr_expect_str_eq(s.path, "/direct");
	cr_expect_eq(proxy.nconn, 0, "the environment's proxy was used");
	srv_free(&s);
	srv_free(&proxy);
}
