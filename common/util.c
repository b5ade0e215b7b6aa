#include "autoconf.h"

#include "common/util.h"

#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t now_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000ull;
}

uint64_t now_us(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000ull;
}

uint64_t wall_ms(void)
{
	return clock_ns(CLOCK_REALTIME) / 1000000ull;
}

static char self_path[PATH_MAX];

static void read_self_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	self_path[n > 0 ? n : 0] = '\0';
}

const char *self_exe(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, read_self_exe);
	return self_path;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_small_fd(int fd, char *buf, size_t size)
{
	size_t off = 0;
	ssize_t n = 0;

	while (off + 1 < size) {
		n = pread(fd, buf + off, size - 1 - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	return n < 0 ? -errno : (ssize_t)off;
}

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_small_fd(fd, buf, size);
	close(fd);
	return n;
}

int write_file_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, s, strlen(s));
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Turn one bit of an fd's flags (F_GETFL/F_SETFL) or fd flags
 * (F_GETFD/F_SETFD) on or off. */
static int set_fd_bit(int fd, int get, int set, int bit, bool on)
{
	int fl = fcntl(fd, get);

	if (fl < 0)
		return -errno;
	fl = on ? (fl | bit) : (fl & ~bit);
	return fcntl(fd, set, fl) < 0 ? -errno : 0;
}

int set_nonblock(int fd, bool on)
{
	return set_fd_bit(fd, F_GETFL, F_SETFL, O_NONBLOCK, on);
}

int pipe_cloexec(int *rd, int *wr)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	*rd = p[0];
	*wr = p[1];
	return 0;
}

int set_cloexec(int fd, bool on)
{
	return set_fd_bit(fd, F_GETFD, F_SETFD, FD_CLOEXEC, on);
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void close_fds_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd < 65536; fd++)
		close(fd);
}

int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void random_hex(char *out, size_t nbytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[64];

	if (nbytes > sizeof(raw))
		nbytes = sizeof(raw);
	if (getrandom(raw, nbytes, 0) != (ssize_t)nbytes) {
		uint64_t t = now_us() ^ (uint64_t)getpid();

		for (size_t i = 0; i < nbytes; i++)
			raw[i] = (unsigned char)(t >> ((i % 8) * 8));
	}
	for (size_t i = 0; i < nbytes; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * nbytes] = '\0';
}

void *xmalloc(size_t sz)
{
	void *p = malloc(sz ? sz : 1);

	if (!p)
		abort();
	return p;
}

void *xreallocarray(void *p, size_t n, size_t sz)
{
	void *q = reallocarray(p, n ? n : 1, sz ? sz : 1);

	if (!q)
		abort();
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		abort();
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		abort();
	return p;
}

ssize_t send_fds(int sock, struct iovec *iov, size_t iovcnt, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SEND_FDS_MAX)];
	} ctl;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = iovcnt };
	ssize_t n;

	if (nfds > SEND_FDS_MAX)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *nfds,
		 int flags)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SEND_FDS_MAX)];
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < max)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}
