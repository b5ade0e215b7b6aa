/*
 * Master <-> worker messages over a SOCK_SEQPACKET socketpair, one
 * datagram each: a fixed header (magic, type), then the payload its type
 * takes, with the fds its type carries. One table in channel.c says, for
 * every type, who sends it, how many fds of which kind it carries and how
 * big its payload is; channel_check holds each message received against
 * it before anyone acts on it, because the master never trusts a worker.
 * A connection moves between processes as two fds: the client socket and
 * a memfd holding the bytes already read from it.
 */
#ifndef GOBOXD_CHANNEL_H
#define GOBOXD_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#define CHANNEL_MAGIC 0x67626f78u /* "gbox" */
/* The most any type carries (the table's largest). */
#define CHANNEL_MAX_FDS 2
#define CHANNEL_MAX_PAYLOAD 16

enum channel_type {
	/* worker -> master */
	CHANNEL_ENQUEUE = 1, /* a validated job request to queue */
	CHANNEL_IDLE,        /* no job running: may receive CHANNEL_DISPATCH */
	CHANNEL_DONE,        /* the job it held finished (implies idle); payload: who
				held it (uint32, enum admit_holder: common/admit.h) */
	CHANNEL_SUBMITTED,   /* a submission is in the store; payload: its id (int64) */
	CHANNEL_EMPTY,       /* RUN with CHANNEL_RUN_LEASE found nothing to run (implies
				done); payload: as DONE's */
	CHANNEL_DEFER,       /* run this stored submission again later (the store failed
				here); payload: its id (int64) */
	/* master -> worker */
	CHANNEL_DISPATCH,    /* run this job now; payload: ms it waited in the queue */
	CHANNEL_QUIT,        /* finish what you have and exit (reload, stop) */
	CHANNEL_RUN,         /* run this stored submission now; payload: struct channel_run */
};

/* CHANNEL_RUN's payload. */
struct channel_run {
	int64_t id;          /* the submission's, in the store; or CHANNEL_RUN_LEASE */
	uint64_t queued_ms;  /* how long it waited in the master's queue */
};

/* A shared store's RUN: lease whichever submission waited longest. */
#define CHANNEL_RUN_LEASE (-1)

/* Which end receives a message type: the other one sends it. */
enum channel_direction {
	CHANNEL_TO_MASTER,
	CHANNEL_TO_WORKER,
};

/* On the wire, ahead of the payload. */
struct channel_header {
	uint32_t magic;
	uint32_t type;
};

/* A message received, and accepted by channel_check. */
struct channel_msg {
	enum channel_type type;
	unsigned char payload[CHANNEL_MAX_PAYLOAD];
	size_t len;                 /* bytes of payload */
	int fds[CHANNEL_MAX_FDS];   /* the receiver's to close */
	size_t nfds;
};

/*
 * Send one message. 0, or a negative errno: -EINVAL for one that the
 * table does not allow (a bug of the sender's: its fd count or payload
 * size is not its type's).
 */
int channel_send(int sock, enum channel_type type, const void *payload, size_t len,
		 const int *fds, size_t nfds);

/*
 * Whether a message that reached `to` fits the table: data holds the
 * header and the payload (len bytes in all), fds the descriptors that
 * came with it. 0, or -EBADMSG with the reason in err: too short for a
 * header, a wrong magic, an unknown type, a type the other end never
 * sends, a payload or an fd count that is not its type's, an fd of the
 * wrong kind.
 */
int channel_check(enum channel_direction to, const void *data, size_t len, const int *fds,
		  size_t nfds, char *err, size_t errlen);

/*
 * Receive one message at `to`'s end. 1 when one came that channel_check
 * accepts (its fds are the caller's), 0 on EOF (once every message the
 * peer sent before it closed has been read, even when it left ours
 * unread), -EAGAIN when none is waiting, -EBADMSG for one refused (its
 * fds closed, the reason logged with `peer`, a name for the log:
 * "worker pid 42", "the master"), another negative errno on failure.
 */
int channel_recv(int sock, enum channel_direction to, const char *peer, struct channel_msg *m);

typedef void channel_handler(void *arg, struct channel_msg *m);

/*
 * The channel is readable: every message waiting, in order, checked,
 * each accepted one to handle (which owns its fds), the refused ones
 * dropped. 0 when none is left waiting, -EPIPE when the peer has closed
 * and all it sent was read, another negative errno (logged) when the
 * socket failed.
 */
int channel_readable(int sock, enum channel_direction to, const char *peer,
		     channel_handler *handle, void *arg);

/* Bytes <-> memfd for moving a connection's unparsed input. */
int channel_memfd_from(const void *data, size_t len);
/* Read a whole memfd (from offset 0) into a malloc'd buffer. */
int channel_memfd_read(int fd, char **data, size_t *len, size_t max);

#endif
