/*
 * Master <-> worker messages over a SOCK_SEQPACKET socketpair. Fixed-size,
 * checked on receipt: the master never trusts a worker. A connection moves
 * between processes as two fds: the client socket and a memfd holding the
 * bytes already read from it.
 */
#ifndef GOBOXD_CHANNEL_H
#define GOBOXD_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#define CHANNEL_MAGIC 0x67626f78u /* "gbox" */

enum channel_type {
	/* worker -> master */
	CHANNEL_ENQUEUE = 1,  /* fds: client, memfd. A validated job request to queue. */
	CHANNEL_IDLE,         /* no job running: may receive CHANNEL_DISPATCH */
	CHANNEL_DONE,         /* the dispatched job finished (implies idle) */
	/* master -> worker */
	CHANNEL_DISPATCH,     /* fds: client, memfd. Run this job now. arg: queued ms */
	CHANNEL_QUIT,         /* finish what you have and exit (reload, stop) */
};

struct channel_msg {
	uint32_t magic;
	uint32_t type;
	uint32_t worker;      /* sender's worker index (checked against the channel) */
	uint32_t generation;
	uint64_t arg;
};

/* 0, or negative errno. nfds is 0..2. */
int channel_send(int sock, const struct channel_msg *m, const int *fds, size_t nfds);
/*
 * Receive one message. 1 when one came (fds in fds[0..*nfds)), 0 on EOF
 * (once every message the peer sent before it closed has been read, even
 * when it left ours unread), -EAGAIN when none is waiting, -EBADMSG for a
 * malformed one (its fds are closed), other negative errno on failure.
 */
int channel_recv(int sock, struct channel_msg *m, int *fds, size_t *nfds);

/* Bytes <-> memfd for moving a connection's unparsed input. */
int channel_memfd_from(const void *data, size_t len);
/* Read a whole memfd (from offset 0) into a malloc'd buffer. */
int channel_memfd_read(int fd, char **data, size_t *len, size_t max);

#endif
