#include "autoconf.h"

#include "common/channel.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

int channel_send(int sock, const struct channel_msg *m, const int *fds, size_t nfds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > 2)
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
	return n == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

int channel_recv(int sock, struct channel_msg *m, int *fds, size_t *nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	ssize_t n;
	size_t got = 0;
	bool bad = false;

	*nfds = 0;
	for (bool reset = false;;) {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
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
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[4];

		if (k > 4)
			k = 4;
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (got < 2)
				fds[got++] = tmp[i];
			else {
				close(tmp[i]);
				bad = true;
			}
		}
	}
	if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n != (ssize_t)sizeof(*m) ||
	    m->magic != CHANNEL_MAGIC || m->type < CHANNEL_ENQUEUE || m->type > CHANNEL_QUIT) {
		for (size_t i = 0; i < got; i++)
			close(fds[i]);
		return -EBADMSG;
	}
	*nfds = got;
	return 1;
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
	p = malloc((size_t)st.st_size + 1);
	if (!p)
		return -ENOMEM;
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
