#include "autoconf.h"

/*
 * A live session's program: one run of sandbox_run.h whose pipes go to
 * the worker's loop as soon as it starts; this side, in the job thread,
 * only waits for its end (the jail's init says it), its CPU time and its
 * wall cap, the client's signals and the cancel. Its poll blocks: the
 * thread never spins while the loop moves the bytes.
 */
#include "worker/sandbox/sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/sandbox_run.h"

/* The pipes' parent ends are the loop's now: the run forgets them. */
static void hand_over(struct run *run, const struct session_spec *s)
{
	s->started(s->arg, run->in_w, run->out_r, run->err_r);
	run->in_w = run->out_r = run->err_r = -1;
}

static void deliver_signal(struct run *run, const struct session_spec *s)
{
	uint64_t v;
	int sig;

	while (read(s->ctl_fd, &v, sizeof(v)) > 0)
		;
	while ((sig = s->take_signal(s->arg)) > 0)
		if (!run->killed && !run->reaped)
			cgroup_step_signal(run->cg, sig);
}

static int session_timeout(const struct run *run, uint64_t now)
{
	uint64_t next = run->next_cpu_ms;

	sandbox_run_min_at(&next, run->killed ? run->reap_by_ms : run->deadline_ms);
	return sandbox_run_poll_ms(next, now);
}

static int session_events(struct run *run, const struct session_spec *s,
			  const struct pollfd *pf, int nf)
{
	for (int i = 0; i < nf; i++) {
		if (!pf[i].revents)
			continue;
		if (pf[i].fd == run->s->cancel_fd) {
			run->r->cancelled = true;
			sandbox_run_kill(run);
		} else if (pf[i].fd == s->ctl_fd) {
			deliver_signal(run, s);
		} else {
			int rc = sandbox_run_init_message(run);

			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int session_loop(struct run *run, const struct session_spec *s)
{
	uint64_t now = now_ms();
	int rc;

	run->deadline_ms = s->max_ms ? run->start_ms + s->max_ms : 0;
	run->next_cpu_ms = now + CPU_POLL_MS;
	while (!run->reaped) {
		struct pollfd pf[3];
		int nf = 0;

		if (sandbox_run_watch_cancel(run))
			pf[nf++] = (struct pollfd){ .fd = run->s->cancel_fd, .events = POLLIN };
		pf[nf++] = (struct pollfd){ .fd = s->ctl_fd, .events = POLLIN };
		pf[nf++] = (struct pollfd){ .fd = jail_sock(run->j), .events = POLLIN };
		if (poll(pf, (nfds_t)nf, session_timeout(run, now)) < 0 && errno != EINTR)
			return sandbox_run_internal(run, -errno, "poll: %s", strerror(errno));
		rc = session_events(run, s, pf, nf);
		if (rc < 0)
			return rc;
		now = now_ms();
		if (sandbox_run_past(run->deadline_ms, now) && !run->killed)
			sandbox_run_time_out(run);
		if (now >= run->next_cpu_ms) {
			uint64_t us;

			if (cgroup_step_cpu_us(run->cg, &us) == 0)
				sandbox_run_cpu_limit(run, us);
			cgroup_step_sample(run->cg);
			run->next_cpu_ms = now + CPU_POLL_MS;
		}
		rc = sandbox_run_reap_overdue(run, now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sandbox_session(struct jail *j, const struct session_spec *s, struct step_result *r)
{
	struct run run;
	char err[256];
	sigset_t old;
	int rc;

	sandbox_run_init(&run, j, s->step, r);
	if (s->tty)
		run.tty = s;
	rc = jail_ready(j, JAIL_READY_MS, err, sizeof(err));
	if (rc < 0)
		return sandbox_run_internal(&run, rc, "%s", err);
	run.id = jail_next_id(j);
	sandbox_run_sigpipe_hold(&old);
	rc = sandbox_run_prepare(&run);
	if (rc == 0)
		rc = sandbox_run_send(&run);
	if (rc == 0) {
		hand_over(&run, s);
		rc = session_loop(&run, s);
	}
	if (rc == 0) {
		/* what is left in the cgroup goes; the pipes reach their end */
		sandbox_run_emptied(&run);
		rc = sandbox_run_finish(&run);
	}
	sandbox_run_release(&run);
	sandbox_run_sigpipe_release(&old);
	return rc;
}
