#include "autoconf.h"

#include "worker/sandbox/procctl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

/* Requests read but not answered yet; a client that writes more than this
 * without reading a status is breaking the rules, and the rest is dropped. */
#define QUEUE_MAX 64
#define STATUS_NEW PROCCTL_STATUS ".new"

enum req_kind {
	RQ_KEEP,                /* '1' */
	RQ_TERMINATE,           /* the first '0' */
	RQ_AFTER_TERMINATE,     /* anything after it */
	RQ_GARBAGE,             /* a byte that is no request */
};

struct req {
	enum req_kind kind;
	unsigned char byte;
};

struct procctl {
	int dirfd;
	uid_t uid;
	gid_t gid;
	const struct procctl_ops *ops;
	void *arg;
	int wait_fd;            /* O_RDWR: never end of file, never blocks a client */
	int status_fd;          /* the open a client made, until answered */
	int go_w, go_r;         /* loop -> opener: 'g' open again, 'q' quit */
	int got_w, got_r;       /* opener -> loop: an fd, or -errno */
	pthread_t opener;
	bool thread_started;
	bool terminate_seen;
	struct req q[QUEUE_MAX];
	size_t nq;
	unsigned errors;
	char last_error[128];
};

/* ---- answers ----------------------------------------------------------- */

static void state_line(const struct procctl_status *st, char *buf, size_t len)
{
	const char *abbr;

	switch (st->state) {
	case PCS_RUNNING:
		snprintf(buf, len, "running");
		return;
	case PCS_EXITED:
		snprintf(buf, len, "exited with code %d", st->code);
		return;
	case PCS_SIGNALED:
		abbr = sigabbrev_np(st->code);
		if (abbr)
			snprintf(buf, len, "killed by signal %d (SIG%s)", st->code, abbr);
		else
			snprintf(buf, len, "killed by signal %d", st->code);
		return;
	case PCS_TIME:
		snprintf(buf, len, "killed: time limit");
		return;
	case PCS_MEMORY:
		snprintf(buf, len, "killed: memory limit");
		return;
	case PCS_OUTPUT:
		snprintf(buf, len, "killed: output limit");
		return;
	case PCS_TERMINATED:
		snprintf(buf, len, "killed: terminated");
		return;
	}
	snprintf(buf, len, "unknown");
}

size_t procctl_format(const struct procctl_status *st, const char *error, char *buf, size_t len)
{
	char line[96];
	int n;

	if (error)
		snprintf(line, sizeof(line), "error: %s", error);
	else
		state_line(st, line, sizeof(line));
	n = snprintf(buf, len, "%llu\n%llu\n%s\n", (unsigned long long)st->cpu_us,
		     (unsigned long long)st->memory_bytes, line);
	return n < 0 ? 0 : (size_t)n;
}

static void rule_broken(struct procctl *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rule_broken(struct procctl *p, const char *fmt, ...)
{
	va_list ap;

	p->errors++;
	va_start(ap, fmt);
	vsnprintf(p->last_error, sizeof(p->last_error), fmt, ap);
	va_end(ap);
}

/* ---- the FIFOs --------------------------------------------------------- */

static int make_fifo(struct procctl *p, const char *name, mode_t mode)
{
	if (unlinkat(p->dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	/* owner and mode set after creation: the umask must not decide them */
	if (mkfifoat(p->dirfd, name, 0600) < 0 ||
	    fchownat(p->dirfd, name, p->uid, p->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(p->dirfd, name, mode, 0) < 0)
		return -errno;
	return 0;
}

/*
 * A fresh status FIFO in place of the one a client holds: renamed over it
 * in one step, so that a later open never finds the name missing.
 */
static int renew_status(struct procctl *p)
{
	int rc = make_fifo(p, STATUS_NEW, 0400);

	if (rc == 0 && renameat(p->dirfd, STATUS_NEW, p->dirfd, PROCCTL_STATUS) < 0)
		rc = -errno;
	return rc;
}

static void tell_opener(struct procctl *p, char tok)
{
	ssize_t n;

	do
		n = write(p->go_w, &tok, 1);
	while (n < 0 && errno == EINTR);
}

/*
 * The opener thread: each 'g' is one blocking open of the status FIFO,
 * which returns when a client opens it for reading; the fd (or -errno)
 * goes to the loop. It never touches anything else.
 */
static void *opener_main(void *arg)
{
	struct procctl *p = arg;

	for (;;) {
		char tok;
		ssize_t n;
		int fd;

		do
			n = read(p->go_r, &tok, 1);
		while (n < 0 && errno == EINTR);
		if (n <= 0 || tok != 'g')
			break;
		do
			fd = openat(p->dirfd, PROCCTL_STATUS, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		while (fd < 0 && errno == EINTR);
		if (fd < 0)
			fd = -errno;
		do
			n = write(p->got_w, &fd, sizeof(fd));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(fd)) {
			if (fd >= 0)
				close(fd);
			break;
		}
	}
	return NULL;
}

/* ---- serving ----------------------------------------------------------- */

static void enqueue(struct procctl *p, enum req_kind k, unsigned char byte)
{
	if (p->nq == QUEUE_MAX) {
		rule_broken(p, "more than %d waits without reading the status pipe", QUEUE_MAX);
		return;
	}
	p->q[p->nq++] = (struct req){ k, byte };
}

static void take_requests(struct procctl *p)
{
	unsigned char buf[256];
	ssize_t n;

	while ((n = read(p->wait_fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		bool garbage = false;

		for (ssize_t i = 0; i < n; i++) {
			unsigned char c = buf[i];

			if (c == '\n' || c == '\r' || c == ' ' || c == '\t')
				continue;
			if (c != '0' && c != '1') {
				/* one answer for a run of garbage, not one per byte */
				if (!garbage)
					enqueue(p, RQ_GARBAGE, c);
				garbage = true;
				continue;
			}
			garbage = false;
			if (p->terminate_seen) {
				enqueue(p, RQ_AFTER_TERMINATE, c);
			} else if (c == '0') {
				p->terminate_seen = true;
				enqueue(p, RQ_TERMINATE, c);
				p->ops->terminate(p->arg);
			} else {
				enqueue(p, RQ_KEEP, c);
			}
		}
	}
}

static void take_status_fd(struct procctl *p)
{
	ssize_t n;
	int fd;

	if (p->status_fd >= 0)
		return;
	do
		n = read(p->got_r, &fd, sizeof(fd));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(fd))
		return;
	if (fd < 0) {
		/* nothing a client can cause: the directory is the worker's */
		log_error("open(%s): %s", PROCCTL_STATUS, strerror(-fd));
		rule_broken(p, "the status pipe could not be opened: %s", strerror(-fd));
		return;
	}
	set_nonblock(fd, true);
	p->status_fd = fd;
}

/* Answer on the status fd held, then make way for the next client. */
static void answer(struct procctl *p, const char *error)
{
	struct procctl_status st;
	char buf[256];
	size_t len;
	int rc;

	memset(&st, 0, sizeof(st));
	p->ops->status(p->arg, &st);
	len = procctl_format(&st, error, buf, sizeof(buf));
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	/* a client that already went away is its own business */
	(void)!write(p->status_fd, buf, len);
	rc = renew_status(p);
	if (rc < 0)
		log_error("renewing the status FIFO: %s", strerror(-rc));
	close(p->status_fd);
	p->status_fd = -1;
	if (rc == 0)
		tell_opener(p, 'g');
}

static void pop(struct procctl *p)
{
	memmove(p->q, p->q + 1, (p->nq - 1) * sizeof(p->q[0]));
	p->nq--;
}

void procctl_service(struct procctl *p)
{
	char why[96];

	/*
	 * The status fd first, then the requests: a client writes its wait
	 * before it opens the status pipe, so once its fd is here its wait is
	 * in the wait FIFO, and a status fd with no request before it is a
	 * rule broken, never a request not read yet. (Reading the requests
	 * first would miss a wait written between the two reads.)
	 */
	take_status_fd(p);
	take_requests(p);
	while (p->status_fd >= 0) {
		if (p->nq == 0) {
			rule_broken(p, "the status pipe was opened without a wait");
			answer(p, "status pipe opened without a wait");
			break;
		}
		switch (p->q[0].kind) {
		case RQ_KEEP:
			answer(p, NULL);
			break;
		case RQ_TERMINATE:
			/* answered once the program has ended */
			if (!p->ops->ended(p->arg))
				return;
			answer(p, NULL);
			break;
		case RQ_AFTER_TERMINATE:
			rule_broken(p, "a wait after the terminate wait");
			answer(p, "wait after terminate");
			break;
		case RQ_GARBAGE:
			snprintf(why, sizeof(why), "unknown wait request 0x%02x (write 0 or 1)",
				 p->q[0].byte);
			rule_broken(p, "%s", why);
			answer(p, why);
			break;
		}
		pop(p);
		take_status_fd(p);
		take_requests(p);
	}
}

/* ---- life -------------------------------------------------------------- */

static int start_opener(struct procctl *p)
{
	sigset_t all, old;
	int rc;

	/* the thread must never take a signal meant for the worker */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&p->opener, NULL, opener_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		p->thread_started = true;
	return rc;
}

int procctl_start(int dirfd, uid_t uid, gid_t gid, const struct procctl_ops *ops, void *arg,
		  struct procctl **out, char *err, size_t errlen)
{
	struct procctl *p = xcalloc(1, sizeof(*p));
	int rc;

	p->dirfd = dirfd;
	p->uid = uid;
	p->gid = gid;
	p->ops = ops;
	p->arg = arg;
	p->wait_fd = p->status_fd = -1;
	p->go_r = p->go_w = p->got_r = p->got_w = -1;
	rc = make_fifo(p, PROCCTL_WAIT, 0200);
	if (rc == 0)
		rc = make_fifo(p, PROCCTL_STATUS, 0400);
	if (rc < 0) {
		snprintf(err, errlen, "making the protocol FIFOs: %s", strerror(-rc));
		goto fail;
	}
	p->wait_fd = openat(dirfd, PROCCTL_WAIT, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (p->wait_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open(%s): %s", PROCCTL_WAIT, strerror(errno));
		goto fail;
	}
	rc = pipe_cloexec(&p->go_r, &p->go_w);
	if (rc == 0)
		rc = pipe_cloexec(&p->got_r, &p->got_w);
	if (rc == 0 && set_nonblock(p->got_r, true) < 0)
		rc = -errno;
	if (rc < 0) {
		snprintf(err, errlen, "pipe2: %s", strerror(-rc));
		goto fail;
	}
	rc = start_opener(p);
	if (rc < 0) {
		snprintf(err, errlen, "pthread_create: %s", strerror(-rc));
		goto fail;
	}
	tell_opener(p, 'g');
	*out = p;
	return 0;
fail:
	procctl_stop(p);
	return rc;
}

int procctl_pollfds(const struct procctl *p, struct pollfd *pf)
{
	pf[0] = (struct pollfd){ .fd = p->wait_fd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = p->got_r, .events = POLLIN };
	return 2;
}

bool procctl_owns_fd(const struct procctl *p, int fd)
{
	return fd >= 0 && (fd == p->wait_fd || fd == p->got_r);
}

unsigned procctl_errors(const struct procctl *p)
{
	return p->errors;
}

const char *procctl_last_error(const struct procctl *p)
{
	return p->last_error;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/*
 * The opener may be blocked in its open: a reader of our own releases it
 * (the FIFO is never replaced while the thread may be in that open, so
 * this reaches the one it waits on). It then reads 'q' and returns.
 */
static void stop_opener(struct procctl *p)
{
	int release;
	int fd;

	tell_opener(p, 'q');
	release = openat(p->dirfd, PROCCTL_STATUS, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	pthread_join(p->opener, NULL);
	if (release >= 0)
		close(release);
	while (read(p->got_r, &fd, sizeof(fd)) == (ssize_t)sizeof(fd))
		if (fd >= 0)
			close(fd);
}

void procctl_stop(struct procctl *p)
{
	if (!p)
		return;
	if (p->thread_started)
		stop_opener(p);
	close_fd(&p->status_fd);
	close_fd(&p->wait_fd);
	close_fd(&p->go_r);
	close_fd(&p->go_w);
	close_fd(&p->got_r);
	close_fd(&p->got_w);
	free(p);
}
