#include "autoconf.h"

/*
 * An interactive test: the solution and the interactor run at once, each
 * a run of sandbox_run.h, joined by two pipes; the process management
 * protocol's view of the solution; the pair's timers, deadlock and end.
 */
#include "worker/sandbox/sandbox.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "worker/sandbox/jobdir.h"
#include "common/limits.h"
#include "common/util.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/procctl.h"
#include "worker/sandbox/sandbox_run.h"

/* ---- an interactive test ------------------------------------------------ */

/* After the solution has ended, the interactor may go on until the wall
 * limit or this long, whichever comes later. */
#define INTERACT_TAIL_MS 1000
/*
 * A deadlock is told at the wall limit: over the last IDLE_WINDOW_MS (half
 * the run when it is shorter, so that start-up does not count) both sides
 * together used at most IDLE_CPU_PERMILLE of one CPU. Blocked in read,
 * they use none.
 */
#define IDLE_WINDOW_MS 500
#define IDLE_CPU_PERMILLE 20
#define IDLE_SAMPLES 32

struct cpu_sample {
	uint64_t ms;
	uint64_t us;            /* both sides' CPU time together */
};

struct pair {
	struct run solution, interactor;
	const struct interact_spec *s;
	struct interact_result *r;
	struct procctl *procctl;
	uint64_t deadline_ms;   /* the pair's wall limit, 0: none */
	uint64_t interactor_deadline_ms; /* set when the solution has ended */
	uint64_t term_at_ms;    /* end of the terminate grace, 0: none */
	uint64_t next_cpu_ms;
	uint64_t loop_start_ms;
	bool solution_end_seen, interactor_end_seen;
	struct cpu_sample samples[IDLE_SAMPLES];
	size_t nsamples;
};

void sandbox_interact_result_init(struct interact_result *r)
{
	memset(r, 0, sizeof(*r));
	sandbox_step_result_init(&r->solution);
	sandbox_step_result_init(&r->interactor);
}

void sandbox_interact_result_free(struct interact_result *r)
{
	sandbox_step_result_free(&r->solution);
	sandbox_step_result_free(&r->interactor);
}

static uint64_t both_cpu_us(const struct pair *pair)
{
	uint64_t a = 0, b = 0;

	cgroup_step_cpu_us(pair->solution.cg, &a);
	cgroup_step_cpu_us(pair->interactor.cg, &b);
	return a + b;
}

static void push_sample(struct pair *pair, uint64_t now, uint64_t us)
{
	pair->samples[pair->nsamples++ % IDLE_SAMPLES] = (struct cpu_sample){ now, us };
}

static bool was_idle(const struct pair *pair, uint64_t now)
{
	uint64_t window = (now - pair->loop_start_ms) / 2;
	const struct cpu_sample *best = NULL;
	size_t n = pair->nsamples < IDLE_SAMPLES ? pair->nsamples : IDLE_SAMPLES;

	if (window > IDLE_WINDOW_MS)
		window = IDLE_WINDOW_MS;
	/* the newest sample at least a window old */
	for (size_t i = 0; i < n; i++) {
		const struct cpu_sample *c = &pair->samples[i];

		if (c->ms + window <= now && (!best || c->ms > best->ms))
			best = c;
	}
	if (!best || now == best->ms)
		return false;
	return (both_cpu_us(pair) - best->us) <= (now - best->ms) * IDLE_CPU_PERMILLE;
}

/* ---- the protocol's view of the solution -------------------------------- */

/*
 * The solution's state: running, or its end as its verdict will read it
 * (read_end's limits, in verdict_for_test's order), unless goboxd ended
 * it for a terminate wait.
 */
static void protocol_status(void *arg, struct procctl_status *st)
{
	struct pair *pair = arg;
	struct run *run = &pair->solution;
	struct run_outcome o = run->r->outcome;
	struct cgroup_stats cs;

	cgroup_step_cpu_us(run->cg, &st->cpu_us);
	cgroup_step_memory_now(run->cg, &st->memory_bytes);
	st->state = PCS_RUNNING;
	if (!run->reaped)
		return;
	if (pair->r->terminated) {
		st->state = PCS_TERMINATED;
		return;
	}
	if (cgroup_step_stats(run->cg, &cs) < 0)
		cs = (struct cgroup_stats){ 0 };
	sandbox_run_read_end(run, &cs, &o);
	switch (verdict_for_test(&o, false, CMP_EQUAL)) {
	case TS_MEMORY_EXCEEDED:
		st->state = PCS_MEMORY;
		return;
	case TS_TIME_EXCEEDED:
		st->state = PCS_TIME;
		return;
	case TS_WRONG_OUTPUT:   /* with nothing to compare: the output cap */
		st->state = PCS_OUTPUT;
		return;
	default:
		break;
	}
	st->state = o.exited ? PCS_EXITED : PCS_SIGNALED;
	st->code = o.exited ? o.exit_code : o.term_signal;
}

static void protocol_terminate(void *arg)
{
	struct pair *pair = arg;

	if (!pair->solution.reaped && !pair->term_at_ms)
		pair->term_at_ms = now_ms() + SANDBOX_TERMINATE_GRACE_MS;
}

static bool protocol_ended(void *arg)
{
	const struct pair *pair = arg;

	return pair->solution.reaped;
}

static const struct procctl_ops protocol_ops = { protocol_status, protocol_terminate,
						 protocol_ended };

/* ---- the loop ------------------------------------------------------------ */

static int pair_timeout(const struct pair *pair, uint64_t now)
{
	uint64_t next = pair->next_cpu_ms;

	if (!pair->solution.killed && !pair->solution.reaped) {
		sandbox_run_min_at(&next, pair->deadline_ms);
		sandbox_run_min_at(&next, pair->term_at_ms);
	}
	if (pair->solution.reaped && !pair->interactor.killed)
		sandbox_run_min_at(&next, pair->interactor_deadline_ms);
	if (pair->solution.killed && !pair->solution.reaped)
		sandbox_run_min_at(&next, pair->solution.reap_by_ms);
	if (pair->interactor.killed && !pair->interactor.reaped)
		sandbox_run_min_at(&next, pair->interactor.reap_by_ms);
	return sandbox_run_poll_ms(next, now);
}

/* The interactor's exit lets the solution run on. */
static bool solution_continues(const struct pair *pair)
{
	const struct run *interactor = &pair->interactor;
	const struct run_outcome *o = &interactor->r->outcome;
	int code;

	if (!WIFEXITED(interactor->status) || o->timed_out || o->output_limited)
		return false;
	code = WEXITSTATUS(interactor->status);
	return code < 32 && (pair->s->solution_continues & (1u << code));
}

static void pair_ends(struct pair *pair, uint64_t now)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;

	if (solution->reaped && !pair->solution_end_seen) {
		pair->solution_end_seen = true;
		pair->interactor_deadline_ms = now + INTERACT_TAIL_MS;
		if (pair->deadline_ms > pair->interactor_deadline_ms)
			pair->interactor_deadline_ms = pair->deadline_ms;
	}
	if (interactor->reaped && !pair->interactor_end_seen) {
		pair->interactor_end_seen = true;
		if (!solution->reaped && !solution->killed && !solution_continues(pair)) {
			pair->r->stopped = true;
			sandbox_run_kill(solution);
		}
	}
}

static void pair_timers(struct pair *pair, uint64_t now)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;

	if (sandbox_run_past(pair->term_at_ms, now) && !solution->reaped && !solution->killed) {
		pair->r->terminated = true;
		sandbox_run_kill(solution);
	}
	if (sandbox_run_past(pair->deadline_ms, now) && !solution->reaped && !solution->killed) {
		if (!interactor->reaped) {
			pair->r->wall_limit = true;
			pair->r->idle = was_idle(pair, now);
			sandbox_run_kill(interactor);
		}
		sandbox_run_time_out(solution);
	}
	if (solution->reaped && !interactor->reaped && !interactor->killed &&
	    now >= pair->interactor_deadline_ms)
		sandbox_run_time_out(interactor);
	if (now >= pair->next_cpu_ms) {
		/* one reading of each side serves its limit and the idle check */
		uint64_t su = 0, iu = 0;

		cgroup_step_cpu_us(solution->cg, &su);
		cgroup_step_cpu_us(interactor->cg, &iu);
		if (!solution->reaped)
			sandbox_run_cpu_limit(solution, su);
		if (!interactor->reaped)
			sandbox_run_cpu_limit(interactor, iu);
		cgroup_step_sample(solution->cg);
		cgroup_step_sample(interactor->cg);
		push_sample(pair, now, su + iu);
		pair->next_cpu_ms = now + CPU_POLL_MS;
	}
}

/*
 * A kill finds the solution dying on its own when its init had not yet
 * reported the end (a process frees its memory before its parent learns of
 * its death): then goboxd did not stop or terminate it, its own end stands.
 * Only SIGKILL is goboxd's.
 */
static void solution_reaped(struct pair *pair)
{
	int st = pair->solution.status;

	if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
		pair->r->stopped = pair->r->terminated = false;
}

static int pair_events(struct pair *pair, const struct pollfd *pf, int nf)
{
	bool serve = false;
	int rc = 0;

	for (int i = 0; i < nf && rc == 0; i++) {
		int fd = pf[i].fd;

		if (!pf[i].revents)
			continue;
		if (!pair->solution.reaped && fd == jail_sock(pair->solution.j)) {
			rc = sandbox_run_init_message(&pair->solution);
			if (pair->solution.reaped)
				solution_reaped(pair);
		} else if (!pair->interactor.reaped && fd == jail_sock(pair->interactor.j))
			rc = sandbox_run_init_message(&pair->interactor);
		else if (fd == pair->solution.err_r)
			sandbox_run_pump_read(&pair->solution, &pair->solution.err_r);
		else if (fd == pair->interactor.err_r)
			sandbox_run_pump_read(&pair->interactor, &pair->interactor.err_r);
		else if (pair->procctl && procctl_owns_fd(pair->procctl, fd))
			serve = true;
		else if (fd == pair->solution.s->cancel_fd && sandbox_run_watch_cancel(&pair->solution)) {
			/* the client went away: both sides go */
			pair->solution.r->cancelled = pair->interactor.r->cancelled = true;
			if (!pair->solution.reaped)
				sandbox_run_kill(&pair->solution);
			if (!pair->interactor.reaped)
				sandbox_run_kill(&pair->interactor);
		}
	}
	if (rc == 0 && pair->procctl && (serve || pair->solution.reaped))
		procctl_service(pair->procctl);
	return rc;
}

static void poll_in(struct pollfd *pf, int *nf, int fd)
{
	pf[(*nf)++] = (struct pollfd){ .fd = fd, .events = POLLIN };
}

static int pair_loop(struct pair *pair)
{
	struct run *solution = &pair->solution, *interactor = &pair->interactor;
	uint64_t now = now_ms();
	int rc;

	pair->deadline_ms = pair->s->wall_ms ? solution->start_ms + pair->s->wall_ms : 0;
	pair->next_cpu_ms = now + CPU_POLL_MS;
	pair->loop_start_ms = now;
	push_sample(pair, now, both_cpu_us(pair));
	while (!(solution->reaped && interactor->reaped)) {
		struct pollfd pf[7];
		int nf = 0;

		if (sandbox_run_watch_cancel(solution))
			poll_in(pf, &nf, solution->s->cancel_fd);
		if (!solution->reaped)
			poll_in(pf, &nf, jail_sock(solution->j));
		if (!interactor->reaped)
			poll_in(pf, &nf, jail_sock(interactor->j));
		if (solution->err_r >= 0)
			poll_in(pf, &nf, solution->err_r);
		if (interactor->err_r >= 0)
			poll_in(pf, &nf, interactor->err_r);
		if (pair->procctl)
			nf += procctl_pollfds(pair->procctl, pf + nf);
		if (poll(pf, (nfds_t)nf, pair_timeout(pair, now)) < 0 && errno != EINTR)
			return sandbox_run_internal(solution, -errno, "poll: %s", strerror(errno));
		rc = pair_events(pair, pf, nf);
		if (rc < 0)
			return rc;
		now = now_ms();
		pair_ends(pair, now);
		pair_timers(pair, now);
		rc = sandbox_run_reap_overdue(solution, now);
		if (rc == 0)
			rc = sandbox_run_reap_overdue(interactor, now);
		if (rc < 0)
			return rc;
	}
	/* a terminate answer waits for the end, which has come */
	if (pair->procctl)
		procctl_service(pair->procctl);
	return 0;
}

/* ---- set-up -------------------------------------------------------------- */

/*
 * The two pipes of the dialogue, handed to the inits (the worker keeps no
 * end). Each end belongs to a program of another uid, and both ends share
 * one inode, so no single owner lets both sides reopen their end by name
 * (/dev/stdin): the inode is opened to all instead. Only a process that
 * may look into the owner's /proc/<pid>/fd could name it.
 */
static int dialogue_pipes(struct pair *pair)
{
	/* solution -> interactor, then interactor -> solution; run_release
	 * closes whatever was made */
	int rc = pipe_cloexec(&pair->interactor.in_r, &pair->solution.out_w);

	if (rc == 0)
		rc = pipe_cloexec(&pair->solution.in_r, &pair->interactor.out_w);
	if (rc < 0)
		return sandbox_run_internal(&pair->solution, rc, "pipe2: %s", strerror(-rc));
	if (fchmod(pair->interactor.in_r, 0666) < 0 || fchmod(pair->solution.in_r, 0666) < 0)
		return sandbox_run_internal(&pair->solution, -errno, "fchmod(pipe): %s", strerror(errno));
	return 0;
}

static int pair_ready(struct pair *pair)
{
	char err[256];
	int rc = jail_ready(pair->solution.j, JAIL_READY_MS, err, sizeof(err));

	if (rc < 0)
		return sandbox_run_internal(&pair->solution, rc, "%s", err);
	rc = jail_ready(pair->interactor.j, JAIL_READY_MS, err, sizeof(err));
	if (rc < 0)
		return sandbox_run_internal(&pair->interactor, rc, "the interactor's jail: %s", err);
	pair->solution.id = jail_next_id(pair->solution.j);
	pair->interactor.id = jail_next_id(pair->interactor.j);
	return 0;
}

static int pair_protocol(struct pair *pair)
{
	struct run *interactor = &pair->interactor;
	struct jobdir *ctl = jail_control_dir(interactor->j);
	char err[256];
	int rc;

	if (!pair->s->protocol)
		return 0;
	if (!ctl)
		return sandbox_run_internal(interactor, -EINVAL,
				"the interactor's jail has no control directory");
	rc = procctl_start(ctl->fd, jail_uid(interactor->j), jail_gid(interactor->j), &protocol_ops,
			   pair, &pair->procctl, err, sizeof(err));
	if (rc < 0)
		return sandbox_run_internal(interactor, rc, "%s", err);
	return 0;
}

int sandbox_interact(struct jail *solution_jail, struct jail *interactor_jail,
		     const struct interact_spec *s, struct interact_result *r)
{
	struct pair pair;
	sigset_t old;
	int rc;

	memset(&pair, 0, sizeof(pair));
	pair.s = s;
	pair.r = r;
	r->terminated = r->stopped = r->wall_limit = r->idle = false;
	r->protocol_errors = 0;
	r->protocol_error[0] = '\0';
	sandbox_run_init(&pair.solution, solution_jail, s->solution, &r->solution);
	sandbox_run_init(&pair.interactor, interactor_jail, s->interactor, &r->interactor);
	pair.solution.dialogue = pair.interactor.dialogue = true;
	/* An interactor writing to a solution that has gone gets EPIPE, and
	 * says so, instead of dying as if it had failed. */
	pair.interactor.run_flags = INITMSG_RUN_SIGPIPE_IGNORED;

	rc = pair_ready(&pair);
	if (rc < 0)
		return rc;
	sandbox_run_sigpipe_hold(&old);
	rc = dialogue_pipes(&pair);
	if (rc == 0)
		rc = sandbox_run_prepare(&pair.solution);
	if (rc == 0)
		rc = sandbox_run_prepare(&pair.interactor);
	if (rc == 0)
		rc = pair_protocol(&pair);
	if (rc == 0)
		rc = sandbox_run_send(&pair.solution);
	if (rc == 0)
		rc = sandbox_run_send(&pair.interactor);
	if (rc == 0)
		rc = pair_loop(&pair);
	if (rc == 0) {
		sandbox_run_drain(&pair.solution);
		sandbox_run_drain(&pair.interactor);
		rc = sandbox_run_finish(&pair.solution);
		if (rc == 0)
			rc = sandbox_run_finish(&pair.interactor);
	}
	if (pair.procctl) {
		r->protocol_errors = procctl_errors(pair.procctl);
		snprintf(r->protocol_error, sizeof(r->protocol_error), "%s",
			 procctl_last_error(pair.procctl));
		procctl_stop(pair.procctl);
	}
	sandbox_run_release(&pair.solution);
	sandbox_run_release(&pair.interactor);
	sandbox_run_sigpipe_release(&old);
	return rc;
}
