#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/channel.h"

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

Test(channel, message_with_two_fds_round_trips)
{
	struct channel_msg m = { .magic = CHANNEL_MAGIC, .type = CHANNEL_DISPATCH, .worker = 3, .arg = 42 };
	struct channel_msg got;
	int p[2], fds[2];
	size_t n = 0;
	char *data;
	size_t len;
	int mfd = channel_memfd_from("GET / HTTP/1.1\r\n\r\n", 18);

	cr_assert(mfd >= 0);
	cr_assert_eq(pipe(p), 0);
	int out[2] = { p[0], mfd };

	cr_assert_eq(channel_send(sv[0], &m, out, 2), 0);
	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), 1);
	cr_assert_eq(n, 2);
	cr_assert_eq(got.type, CHANNEL_DISPATCH);
	cr_assert_eq(got.arg, 42);
	cr_assert(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(channel_memfd_read(fds[1], &data, &len, 1024), 0);
	cr_assert_eq(len, 18);
	cr_assert_eq(memcmp(data, "GET / HTTP/1.1\r\n\r\n", 18), 0);
	cr_assert_eq(channel_memfd_read(fds[1], &data, &len, 4), -EMSGSIZE);
	free(data);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	close(p[0]);
	close(p[1]);
	close(mfd);
}

Test(channel, nothing_waiting_and_eof)
{
	struct channel_msg got;
	int fds[2];
	size_t n;

	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), -EAGAIN);
	close(sv[0]);
	sv[0] = -1;
	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), 0);
}

/*
 * A worker that dies with a message of the master's unread: the kernel
 * reports ECONNRESET once, ahead of what the worker had sent (a client
 * handed over just before), and that still arrives.
 */
Test(channel, what_a_dead_peer_sent_is_read_past_its_reset)
{
	struct channel_msg enq = { .magic = CHANNEL_MAGIC, .type = CHANNEL_ENQUEUE };
	struct channel_msg quit = { .magic = CHANNEL_MAGIC, .type = CHANNEL_QUIT };
	struct channel_msg got;
	int p[2], fds[2], more[2];
	size_t n = 0;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(channel_send(sv[1], &enq, p, 2), 0);
	cr_assert_eq(channel_send(sv[0], &quit, NULL, 0), 0);
	close(sv[1]);
	sv[1] = -1;
	cr_assert_eq(channel_recv(sv[0], &got, fds, &n), 1);
	cr_assert_eq(got.type, CHANNEL_ENQUEUE);
	cr_assert_eq(n, 2);
	cr_assert_eq(channel_recv(sv[0], &got, more, &n), 0, "then the end");
	close(fds[0]);
	close(fds[1]);
	close(p[0]);
	close(p[1]);
}

/* The master never trusts a worker: anything malformed is refused whole. */
Test(channel, malformed_messages_are_refused_and_their_fds_closed)
{
	struct channel_msg bad_magic = { .magic = 0x1234, .type = CHANNEL_IDLE };
	struct channel_msg bad_type = { .magic = CHANNEL_MAGIC, .type = 99 };
	struct channel_msg got;
	char shortmsg[5] = "hello";
	int p[2], fds[2];
	size_t n = 7;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(channel_send(sv[0], &bad_magic, &p[0], 1), 0);
	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), -EBADMSG);
	cr_assert_eq(n, 0);
	cr_assert_eq(channel_send(sv[0], &bad_type, NULL, 0), 0);
	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), -EBADMSG);
	cr_assert_eq(send(sv[0], shortmsg, sizeof(shortmsg), 0), (ssize_t)sizeof(shortmsg));
	cr_assert_eq(channel_recv(sv[1], &got, fds, &n), -EBADMSG);
	/* The refused message's fd was closed on the receiving side: only our
	 * own copy of the pipe's read end remains, so closing it gives EPIPE. */
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(write(p[1], "x", 1), -1);
	cr_assert_eq(errno, EPIPE);
	close(p[1]);
}

Test(channel, more_than_two_fds_cannot_be_sent)
{
	struct channel_msg m = { .magic = CHANNEL_MAGIC, .type = CHANNEL_ENQUEUE };
	int fds[3] = { 0, 1, 2 };

	cr_assert_eq(channel_send(sv[0], &m, fds, 3), -EINVAL);
}
