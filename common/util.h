/* Small helpers shared by every module. */
#ifndef GOBOXD_UTIL_H
#define GOBOXD_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* CLOCK_MONOTONIC in milliseconds / microseconds; CLOCK_REALTIME in ms. */
uint64_t now_ms(void);
uint64_t now_us(void);
uint64_t wall_ms(void);

/* Write/read all of a buffer, retrying on EINTR. 0 or negative errno. */
int write_all(int fd, const void *buf, size_t len);
/* Read a whole small file (procfs, cgroupfs), NUL-terminated in buf.
 * Returns bytes read or -errno. */
ssize_t read_small_file(const char *path, char *buf, size_t size);
/* The same through fd, from its start (pread from 0): an fd kept open
 * reads the file anew each time. */
ssize_t read_small_fd(int fd, char *buf, size_t size);
/* Write a string to a file (cgroupfs). 0 or negative errno. */
int write_file_str(const char *path, const char *s);

int set_nonblock(int fd, bool on);
/* A pipe, both ends CLOEXEC. 0 or negative errno; *rd and *wr set on success. */
int pipe_cloexec(int *rd, int *wr);
int set_cloexec(int fd, bool on);

/* strtoull over the whole string with range check. 0 or -EINVAL/-ERANGE. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Most fds send_fds passes in one message. */
#define SEND_FDS_MAX 8
struct iovec;
/*
 * sendmsg of iov[0..iovcnt) with fds[0..nfds) alongside (SCM_RIGHTS;
 * none when nfds is 0), MSG_NOSIGNAL, again on EINTR. Bytes sent, or
 * negative errno (-EINVAL: more than SEND_FDS_MAX fds).
 */
ssize_t send_fds(int sock, struct iovec *iov, size_t iovcnt, const int *fds, size_t nfds);
/*
 * recvmsg of one message into buf (len bytes at most) with the fds it
 * carries, close-on-exec: at most max of them into fds (*nfds says how
 * many), any more closed; flags as recv's, again on EINTR. Bytes read,
 * or negative errno.
 */
ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *nfds,
		 int flags);

/*
 * This program's path as /proc/self/exe gave it the first time ("" when
 * it could not be read). The first call comes before the process leaves
 * the mount namespace it was started in (goboxd does, rootless): once
 * that namespace is gone, the kernel gives the path from the root of the
 * mount the program lies on ("/build/goboxd" for a checkout bound at a
 * place of its own), which names nothing.
 */
const char *self_exe(void);

/* Close every fd >= lowfd (pre-exec, async-signal-safe). */
void close_fds_from(int lowfd);

/* The value of a hex digit (either case), -1 for any other byte. */
int hex_digit_value(char c);

/* Random hex id of 2*nbytes characters (getrandom). */
void random_hex(char *out, size_t nbytes);

/*
 * Allocation. These abort when the allocator fails, and nothing in goboxd
 * allocates any other way or returns -ENOMEM (docs/architecture.md,
 * "Conventions"): every size is bounded by a limit, and on Linux a failed
 * malloc means the process is about to be OOM-killed anyway; a worker that
 * dies is respawned by the master. Size arithmetic that would overflow
 * also aborts.
 */
void *xmalloc(size_t sz);
void *xcalloc(size_t n, size_t sz);
void *xreallocarray(void *p, size_t n, size_t sz);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
