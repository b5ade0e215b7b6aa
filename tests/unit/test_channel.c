#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/channel.h"
#include "common/util.h"

static int sv[2];

static void setup(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
}

TestSuite(channel, .init = setup, .fini = teardown);

/* The fds this process has open: a refused message must leave none behind. */
static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* One fd of a kind: S a socket, F a memfd (a regular file), P a pipe. */
static int make_fd(char kind, int *extra)
{
	int p[2];

	*extra = -1;
	if (kind == 'F')
		return memfd_create("test", MFD_CLOEXEC);
	if (kind == 'S')
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	else
		cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	*extra = p[1];
	return p[0];
}

/* Anything, as a peer that does not follow the table could send it. */
static void send_raw(int sock, const void *data, size_t len, const int *fds, size_t nfds)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	cr_assert_eq(sendmsg(sock, &mh, 0), (ssize_t)len);
}

/*
 * What reaches one end, and whether it is taken (1) or refused
 * (-EBADMSG). Each rule of the table is broken once: the check is all
 * that stands between a worker and the master.
 */
static const struct recv_case {
	const char *name;
	enum channel_direction to;
	uint32_t magic;
	uint32_t type;
	size_t payload;   /* bytes after the header */
	size_t bytes;     /* instead of header and payload, when set */
	const char *fds;  /* one letter an fd, as make_fd */
	int want;
} recv_cases[] = {
	{ "ENQUEUE with its client and memfd", CHANNEL_TO_MASTER, CHANNEL_MAGIC,
	  CHANNEL_ENQUEUE, 0, 0, "SF", 1 },
	{ "IDLE", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_IDLE, 0, 0, "", 1 },
	{ "DONE with who held the worker", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DONE, 4, 0,
	  "", 1 },
	{ "DONE without who held the worker", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DONE, 0,
	  0, "", -EBADMSG },
	{ "DISPATCH with its wait", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_DISPATCH, 8, 0,
	  "SF", 1 },
	{ "QUIT", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_QUIT, 0, 0, "", 1 },
	{ "DEFER with its id", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DEFER, 8, 0, "", 1 },
	{ "DEFER to a worker", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_DEFER, 8, 0, "",
	  -EBADMSG },
	{ "DEFER without its id", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DEFER, 0, 0, "",
	  -EBADMSG },
	{ "DEFER with an fd", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DEFER, 8, 0, "S",
	  -EBADMSG },
	/* shape */
	{ "shorter than a header", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_IDLE, 0, 5, "",
	  -EBADMSG },
	{ "a wrong magic", CHANNEL_TO_MASTER, 0x1234, CHANNEL_IDLE, 0, 0, "", -EBADMSG },
	{ "type 0", CHANNEL_TO_MASTER, CHANNEL_MAGIC, 0, 0, 0, "", -EBADMSG },
	{ "an unknown type", CHANNEL_TO_MASTER, CHANNEL_MAGIC, 99, 0, 0, "", -EBADMSG },
	/* direction: a worker never dispatches nor quits the master */
	{ "DISPATCH to the master", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DISPATCH, 8, 0,
	  "SF", -EBADMSG },
	{ "QUIT to the master", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_QUIT, 0, 0, "",
	  -EBADMSG },
	{ "ENQUEUE to a worker", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0, 0, "SF",
	  -EBADMSG },
	/* payload size */
	{ "DISPATCH without its wait", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_DISPATCH, 0, 0,
	  "SF", -EBADMSG },
	{ "DISPATCH with a byte more", CHANNEL_TO_WORKER, CHANNEL_MAGIC, CHANNEL_DISPATCH, 9, 0,
	  "SF", -EBADMSG },
	{ "IDLE with a payload", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_IDLE, 8, 0, "",
	  -EBADMSG },
	{ "DONE bigger than any message", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_DONE, 4000,
	  0, "", -EBADMSG },
	/* fd count */
	{ "ENQUEUE without fds", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0, 0, "",
	  -EBADMSG },
	{ "ENQUEUE with its client alone", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0,
	  0, "S", -EBADMSG },
	{ "ENQUEUE with three fds", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0, 0,
	  "SFF", -EBADMSG },
	{ "ENQUEUE with eight fds", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0, 0,
	  "SFFFFFFF", -EBADMSG },
	{ "IDLE with an fd", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_IDLE, 0, 0, "S",
	  -EBADMSG },
	/* fd kinds */
	{ "ENQUEUE whose client is a pipe", CHANNEL_TO_MASTER, CHANNEL_MAGIC, CHANNEL_ENQUEUE, 0,
	  0, "PF", -EBADMSG },
	{ "DISPATCH whose memfd is a socket", CHANNEL_TO_WORKER, CHANNEL_MAGIC,
	  CHANNEL_DISPATCH, 8, 0, "SS", -EBADMSG },
};

static void check_recv_case(const struct recv_case *c)
{
	unsigned char data[sizeof(struct channel_header) + 4000] = { 0 };
	struct channel_header h = { .magic = c->magic, .type = c->type };
	size_t len = c->bytes ? c->bytes : sizeof(h) + c->payload;
	size_t nfds = strlen(c->fds);
	int fds[8], extra[8];
	struct channel_msg m;
	size_t before;
	int rc;

	memcpy(data, &h, sizeof(h));
	data[sizeof(h)] = 42; /* the first byte of a payload, when there is one */
	for (size_t i = 0; i < nfds; i++)
		fds[i] = make_fd(c->fds[i], &extra[i]);
	send_raw(sv[1], data, len, fds, nfds);
	before = open_fds();
	rc = channel_recv(sv[0], c->to, "the test", &m);
	cr_expect_eq(rc, c->want, "%s: %d, not %d", c->name, rc, c->want);
	if (rc == 1) {
		cr_expect_eq((uint32_t)m.type, c->type, "%s", c->name);
		cr_expect_eq(m.len, c->payload, "%s", c->name);
		cr_expect(m.len == 0 || m.payload[0] == 42, "%s", c->name);
		cr_expect_eq(m.nfds, nfds, "%s", c->name);
		for (size_t i = 0; i < m.nfds; i++) {
			cr_expect(fcntl(m.fds[i], F_GETFD) & FD_CLOEXEC, "%s", c->name);
			close(m.fds[i]);
		}
	}
	cr_expect_eq(open_fds(), before, "%s: its fds were not closed", c->name);
	for (size_t i = 0; i < nfds; i++) {
		close(fds[i]);
		if (extra[i] >= 0)
			close(extra[i]);
	}
}

Test(channel, every_message_is_held_against_the_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(recv_cases); i++)
		check_recv_case(&recv_cases[i]);
}

Test(channel, message_with_two_fds_round_trips)
{
	uint64_t waited = 42;
	struct channel_msg got;
	char *data;
	size_t len;
	int p[2];
	int mfd = channel_memfd_from("GET / HTTP/1.1\r\n\r\n", 18);

	cr_assert(mfd >= 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	int out[2] = { p[0], mfd };

	cr_assert_eq(channel_send(sv[0], CHANNEL_DISPATCH, &waited, sizeof(waited), out, 2), 0);
	cr_assert_eq(channel_recv(sv[1], CHANNEL_TO_WORKER, "the master", &got), 1);
	cr_assert_eq(got.nfds, 2);
	cr_assert_eq(got.type, CHANNEL_DISPATCH);
	cr_assert_eq(got.len, sizeof(waited));
	cr_assert_eq(memcmp(got.payload, &waited, sizeof(waited)), 0);
	cr_assert_eq(channel_memfd_read(got.fds[1], &data, &len, 1024), 0);
	cr_assert_eq(len, 18);
	cr_assert_eq(memcmp(data, "GET / HTTP/1.1\r\n\r\n", 18), 0);
	cr_assert_eq(channel_memfd_read(got.fds[1], &data, &len, 4), -EMSGSIZE);
	free(data);
	for (int i = 0; i < 2; i++)
		close(got.fds[i]);
	close(p[0]);
	close(p[1]);
	close(mfd);
}

Test(channel, nothing_waiting_and_eof)
{
	struct channel_msg got;

	cr_assert_eq(channel_recv(sv[1], CHANNEL_TO_MASTER, "a worker", &got), -EAGAIN);
	close(sv[0]);
	sv[0] = -1;
	cr_assert_eq(channel_recv(sv[1], CHANNEL_TO_MASTER, "a worker", &got), 0);
}

/*
 * A worker that dies with a message of the master's unread: the kernel
 * reports ECONNRESET once, ahead of what the worker had sent (a client
 * handed over just before), and that still arrives.
 */
Test(channel, what_a_dead_peer_sent_is_read_past_its_reset)
{
	struct channel_msg got;
	int client[2], mfd = channel_memfd_from("x", 1);

	cr_assert(mfd >= 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client), 0);
	int fds[2] = { client[0], mfd };

	cr_assert_eq(channel_send(sv[1], CHANNEL_ENQUEUE, NULL, 0, fds, 2), 0);
	cr_assert_eq(channel_send(sv[0], CHANNEL_QUIT, NULL, 0, NULL, 0), 0);
	close(sv[1]);
	sv[1] = -1;
	cr_assert_eq(channel_recv(sv[0], CHANNEL_TO_MASTER, "a worker", &got), 1);
	cr_assert_eq(got.type, CHANNEL_ENQUEUE);
	cr_assert_eq(got.nfds, 2);
	cr_assert_eq(channel_recv(sv[0], CHANNEL_TO_MASTER, "a worker", &got), 0, "then the end");
	close(got.fds[0]);
	close(got.fds[1]);
	close(client[0]);
	close(client[1]);
	close(mfd);
}

/* A sender's mistake is caught before it leaves: the table binds both ends. */
Test(channel, a_message_the_table_does_not_allow_is_not_sent)
{
	uint64_t waited = 1;
	int fds[3] = { 0, 1, 2 };

	cr_assert_eq(channel_send(sv[0], CHANNEL_ENQUEUE, NULL, 0, fds, 3), -EINVAL);
	cr_assert_eq(channel_send(sv[0], CHANNEL_ENQUEUE, NULL, 0, fds, 1), -EINVAL);
	cr_assert_eq(channel_send(sv[0], CHANNEL_IDLE, &waited, sizeof(waited), NULL, 0),
		     -EINVAL);
	cr_assert_eq(channel_send(sv[0], CHANNEL_DISPATCH, NULL, 0, fds, 2), -EINVAL);
	cr_assert_eq(channel_send(sv[0], (enum channel_type)99, NULL, 0, NULL, 0), -EINVAL);
}

struct seen {
	enum channel_type types[8];
	size_t n;
};

static void note(void *arg, struct channel_msg *m)
{
	struct seen *s = arg;

	for (size_t i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	if (s->n < ARRAY_SIZE(s->types))
		s->types[s->n++] = m->type;
}

/* Everything waiting is read in one call, in order, and a refused message
 * in the middle costs only itself. */
Test(channel, readable_hands_over_each_good_message_in_order)
{
	struct channel_header bad = { .magic = CHANNEL_MAGIC, .type = CHANNEL_QUIT };
	struct seen s = { .n = 0 };
	uint32_t held = 1;

	cr_assert_eq(channel_send(sv[1], CHANNEL_IDLE, NULL, 0, NULL, 0), 0);
	send_raw(sv[1], &bad, sizeof(bad), NULL, 0);
	cr_assert_eq(channel_send(sv[1], CHANNEL_DONE, &held, sizeof(held), NULL, 0), 0);
	cr_assert_eq(channel_readable(sv[0], CHANNEL_TO_MASTER, "a worker", note, &s), 0);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.types[0], CHANNEL_IDLE);
	cr_assert_eq(s.types[1], CHANNEL_DONE);
	close(sv[1]);
	sv[1] = -1;
	cr_assert_eq(channel_readable(sv[0], CHANNEL_TO_MASTER, "a worker", note, &s), -EPIPE);
	cr_assert_eq(s.n, 2);
}
