/*
 * The handshake with a started jail (jail_ready): the launcher reached
 * its exec, the init said hello in this goboxd's protocol, entered the
 * first program's cgroup, and holds the seccomp filter. Until it returns
 * no RUN is sent; a step that fails breaks the jail.
 */
#include "autoconf.h"

#include "worker/sandbox/jail.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/jail_state.h"

/*
 * The handshake's steps: each returns 0 or -errno with a reason in err,
 * and its comment says why it stands where it does; ready_steps lists
 * them in that order.
 */

/*
 * First: a launcher that never reached its exec sends no hello, and what
 * it says is better than a time-out. Its CLOEXEC error pipe closes at the
 * exec (end of file), or carries errno and the failed step's index.
 */
static int launched(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd pf = { .fd = j->exec_r, .events = POLLIN };
	int e[2], rc;
	const char *step;
	ssize_t n;

	if (j->exec_r < 0)
		return 0;
	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		snprintf(err, errlen, "starting %s: no exec within %d ms", j->shared->path, timeout_ms);
		return -ETIMEDOUT;
	}
	do
		n = read(j->exec_r, e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(j->exec_r);
	j->exec_r = -1;
	if (n != (ssize_t)sizeof(e))
		return 0;
	step = jail_launch_step(e[1]);
	while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
		;
	j->pid = -1;
	snprintf(err, errlen, "starting %s: %s: %s", j->shared->path, step, strerror(e[0]));
	return -e[0];
}

/* Then the init's hello, which it sends once the jail is sealed and its
 * network empty; it must speak this goboxd's protocol. */
static int heard_hello(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	struct {
		struct initmsg_hdr h;
		struct initmsg_hello hello;
	} m;
	struct pollfd pf = { .fd = j->sock, .events = POLLIN };
	char said[256];
	ssize_t n;
	int rc;

	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		snprintf(err, errlen, "the jail did not start within %d ms", timeout_ms);
		return -ETIMEDOUT;
	}
	n = recv(j->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(m) || m.h.magic != INITMSG_MAGIC || m.h.type != INITMSG_HELLO) {
		jail_said(j, said, sizeof(said));
		snprintf(err, errlen, "the jail did not start: %s",
			 said[0] ? said : n == 0 ? "it exited without a word" :
			 "its init sent no hello");
		return -EIO;
	}
	if (m.hello.version != INITMSG_VERSION) {
		snprintf(err, errlen, "goboxd-init speaks protocol %u, this goboxd %u: install both "
			 "from the same build", (unsigned)m.hello.version, (unsigned)INITMSG_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* After the hello, which the init sends before it reads the ENTER queued
 * at the start: its answer. Then the first cgroup holds the init alone,
 * whose pid the step's kills must spare. A refusal only costs the first
 * program its head start. */
static int entered(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	struct {
		struct initmsg_hdr h;
		struct initmsg_failed f;
	} m;
	struct pollfd pf = { .fd = j->sock, .events = POLLIN };
	pid_t pids[2];
	ssize_t n;
	int rc;

	if (!j->first_sent)
		return 0;
	do
		rc = poll(&pf, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0) {
		snprintf(err, errlen, "the jail's init did not answer ENTER: %s", strerror(ETIMEDOUT));
		return -ETIMEDOUT;
	}
	n = recv(j->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n < (ssize_t)sizeof(m.h) || m.h.magic != INITMSG_MAGIC) {
		snprintf(err, errlen, "the jail's init did not answer ENTER: %s", strerror(EPROTO));
		return -EPROTO;
	}
	if (m.h.type != INITMSG_ENTERED) {
		log_warn("the jail's init could not enter its first cgroup: %s",
			 m.h.type == INITMSG_FAILED && n == (ssize_t)sizeof(m) ? strerror(m.f.err) : "?");
		return 0;
	}
	if (cgroup_step_pids(j->first, pids, ARRAY_SIZE(pids)) != 1)
		return 0;
	cgroup_step_spare(j->first, pids[0]);
	/* the init alone, before any program: what its own memory is,
	 * all a rebase may ever count as its */
	if ((rc = cgroup_step_note_own(j->first)) < 0) {
		log_warn("the jail's first cgroup: its init's memory: %s", strerror(-rc));
		return 0;
	}
	j->first_ready = true;
	return 0;
}

/* Last: the init applies the filter to every program it starts, and no
 * RUN is sent before jail_ready returns. This is the one for a job
 * without a network; a job with one brings its own (jail_namespaces). */
static int send_filter(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	size_t len;
	const void *bpf = seccomp_set_bpf(j->shared->seccomp, false, &len);
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_FILTER, 0, (uint32_t)len };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)bpf, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	(void)timeout_ms;
	if (sendmsg(j->sock, &mh, MSG_NOSIGNAL) < 0) {
		snprintf(err, errlen, "sending the seccomp filter to the init: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* The handshake with a started jail, in order (each step says why). */
static int (*const ready_steps[])(struct jail *j, int timeout_ms, char *err, size_t errlen) = {
	launched,
	heard_hello,
	entered,
	send_filter,
};

int jail_ready(struct jail *j, int timeout_ms, char *err, size_t errlen)
{
	if (j->broken) {
		snprintf(err, errlen, "the jail broke in an earlier step");
		return -EIO;
	}
	if (j->ready)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(ready_steps); i++) {
		int rc = ready_steps[i](j, timeout_ms, err, errlen);

		if (rc < 0) {
			j->broken = true;
			return rc;
		}
	}
	j->ready = true;
	return 0;
}
