#include "autoconf.h"

#include "common/channel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

/*
 * Every message there is. A message whose type is not here, or that
 * differs from its line in any column, is refused on receipt, whoever
 * sent it.
 */
static const struct channel_rule {
	enum channel_type type;
	enum channel_direction to;
	unsigned nfds;
	mode_t fd_kinds[CHANNEL_MAX_FDS]; /* S_IFSOCK, S_IFREG (a memfd) */
	unsigned payload;                 /* bytes after the header, exactly */
	const char *name;
} channel_rules[] = {
	{ CHANNEL_ENQUEUE, CHANNEL_TO_MASTER, 2, { S_IFSOCK, S_IFREG }, 0, "ENQUEUE" },
	{ CHANNEL_IDLE, CHANNEL_TO_MASTER, 0, { 0 }, 0, "IDLE" },
	{ CHANNEL_DONE, CHANNEL_TO_MASTER, 0, { 0 }, sizeof(uint32_t), "DONE" },
	{ CHANNEL_EMPTY, CHANNEL_TO_MASTER, 0, { 0 }, sizeof(uint32_t), "EMPTY" },
	{ CHANNEL_DISPATCH, CHANNEL_TO_WORKER, 2, { S_IFSOCK, S_IFREG }, sizeof(uint64_t),
	  "DISPATCH" },
	{ CHANNEL_QUIT, CHANNEL_TO_WORKER, 0, { 0 }, 0, "QUIT" },
	{ CHANNEL_SUBMITTED, CHANNEL_TO_MASTER, 0, { 0 }, sizeof(int64_t), "SUBMITTED" },
	{ CHANNEL_DEFER, CHANNEL_TO_MASTER, 0, { 0 }, sizeof(int64_t), "DEFER" },
	{ CHANNEL_RUN, CHANNEL_TO_WORKER, 0, { 0 }, sizeof(struct channel_run), "RUN" },
};

_Static_assert(sizeof(uint64_t) <= CHANNEL_MAX_PAYLOAD, "DISPATCH's payload fits a channel_msg");
_Static_assert(sizeof(struct channel_run) <= CHANNEL_MAX_PAYLOAD, "RUN's payload fits too");

/* More than any message carries, so that too many is seen as such. */
#define RECV_MAX_FDS (CHANNEL_MAX_FDS + 2)

static const struct channel_rule *rule_for(uint32_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(channel_rules); i++)
		if ((uint32_t)channel_rules[i].type == type)
			return &channel_rules[i];
	return NULL;
}

static const char *fd_kind_name(mode_t kind)
{
	return kind == S_IFSOCK ? "socket" : "regular file";
}

__attribute__((format(printf, 3, 4)))
static int reject(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

int channel_check(enum channel_direction to, const void *data, size_t len, const int *fds,
		  size_t nfds, char *err, size_t errlen)
{
	const struct channel_rule *r;
	struct channel_header h;

	if (len < sizeof(h))
		return reject(err, errlen, "%zu bytes, shorter than a header", len);
	memcpy(&h, data, sizeof(h));
	if (h.magic != CHANNEL_MAGIC)
		return reject(err, errlen, "magic %#x", h.magic);
	r = rule_for(h.type);
	if (!r)
		return reject(err, errlen, "unknown type %u", h.type);
	if (r->to != to)
		return reject(err, errlen, "%s goes to the %s, not here", r->name,
			      r->to == CHANNEL_TO_MASTER ? "master" : "worker");
	if (len - sizeof(h) != r->payload)
		return reject(err, errlen, "%s with %zu bytes of payload, not %u", r->name,
			      len - sizeof(h), r->payload);
	if (nfds != r->nfds)
		return reject(err, errlen, "%s with %zu fds, not %u", r->name, nfds, r->nfds);
	for (size_t i = 0; i < nfds; i++) {
		struct stat st;

		if (fstat(fds[i], &st) < 0)
			return reject(err, errlen, "fstat(fd %zu of %s): %s", i, r->name,
				      strerror(errno));
		if ((st.st_mode & S_IFMT) != r->fd_kinds[i])
			return reject(err, errlen, "fd %zu of %s is not a %s", i, r->name,
				      fd_kind_name(r->fd_kinds[i]));
	}
	return 0;
}

int channel_send(int sock, enum channel_type type, const void *payload, size_t len,
		 const int *fds, size_t nfds)
{
	const struct channel_rule *r = rule_for(type);
	struct channel_header h = { .magic = CHANNEL_MAGIC, .type = type };
	union {
		char buf[CMSG_SPACE(CHANNEL_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	ssize_t n;

	if (!r || nfds != r->nfds || len != r->payload)
		return -EINVAL;
	if (nfds > 0) {
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
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)(sizeof(h) + len) ? 0 : -EIO;
}

/* The fds of every SCM_RIGHTS that came, up to RECV_MAX_FDS (the control
 * buffer holds no more: past it the kernel sets MSG_CTRUNC). */
static size_t take_fds(struct msghdr *mh, int *fds)
{
	size_t got = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (k > RECV_MAX_FDS - got)
			k = RECV_MAX_FDS - got;
		memcpy(fds + got, CMSG_DATA(c), k * sizeof(int));
		got += k;
	}
	return got;
}

int channel_recv(int sock, enum channel_direction to, const char *peer, struct channel_msg *m)
{
	union {
		unsigned char bytes[sizeof(struct channel_header) + CHANNEL_MAX_PAYLOAD];
		struct channel_header h;
	} data;
	union {
		char buf[CMSG_SPACE(RECV_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = data.bytes, .iov_len = sizeof(data.bytes) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	int fds[RECV_MAX_FDS];
	char err[160];
	size_t got;
	ssize_t n;
	int rc;

	for (bool reset = false;;) {
		/* MSG_TRUNC: n is the datagram's whole size, also past the buffer */
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT | MSG_TRUNC);
		if (n >= 0 || (errno != EINTR && (errno != ECONNRESET || reset)))
			break;
		/*
		 * A peer that closed with messages of ours unread is reported
		 * once, ahead of the messages it had sent: those still count
		 * (a worker may hand over a client and die).
		 */
		reset |= errno == ECONNRESET;
	}
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	got = take_fds(&mh, fds);
	if (mh.msg_flags & MSG_CTRUNC)
		rc = reject(err, sizeof(err), "more fds than any message carries");
	else
		rc = channel_check(to, data.bytes, (size_t)n, fds, got, err, sizeof(err));
	if (rc < 0) {
		for (size_t i = 0; i < got; i++)
			close(fds[i]);
		log_warn("refused a message from %s: %s", peer, err);
		return rc;
	}
	m->type = (enum channel_type)data.h.type;
	m->len = (size_t)n - sizeof(data.h);
	memcpy(m->payload, data.bytes + sizeof(data.h), m->len);
	memcpy(m->fds, fds, got * sizeof(int));
	m->nfds = got;
	return 1;
}

int channel_readable(int sock, enum channel_direction to, const char *peer,
		     channel_handler *handle, void *arg)
{
	for (;;) {
		struct channel_msg m;
		int rc = channel_recv(sock, to, peer, &m);

		if (rc == 1) {
			handle(arg, &m);
			continue;
		}
		if (rc == -EBADMSG) /* logged, dropped */
			continue;
		if (rc == -EAGAIN)
			return 0;
		if (rc == 0)
			return -EPIPE;
		log_error("recvmsg from %s: %s", peer, strerror(-rc));
		return rc;
	}
}

int channel_memfd_from(const void *data, size_t len)
{
	int fd = memfd_create("goboxd-conn", MFD_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, data, len);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int channel_memfd_read(int fd, char **data, size_t *len, size_t max)
{
	struct stat st;
	char *p;
	size_t off = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < 0 || (size_t)st.st_size > max)
		return -EMSGSIZE;
	p = xcalloc(1, (size_t)st.st_size + 1);
	while (off < (size_t)st.st_size) {
		ssize_t n = pread(fd, p + off, (size_t)st.st_size - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(p);
			return n < 0 ? -errno : -EIO;
		}
		off += (size_t)n;
	}
	p[off] = '\0';
	*data = p;
	*len = off;
	return 0;
}
