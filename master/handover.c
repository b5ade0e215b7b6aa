/*
 * The hand-over of jobs to workers: a client's connection from the
 * worker that took it in, through the queue, to an idle worker of the
 * current generation (or a stored submission's RUN), and the 503s of the
 * master itself. What goes next is master/dispatch.c's.
 */
#include "autoconf.h"

#include "master/handover.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/channel.h"
#include "common/log.h"
#include "common/stats.h"
#include "common/util.h"
#include "master/dispatch.h"
#include "master/master_state.h"
#include "master/queue.h"

static void reply_503(int fd, const char *code, const char *msg, unsigned retry_after)
{
	char body[256], resp[512];
	int blen = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}",
			    code, msg);
	int rlen = snprintf(resp, sizeof(resp),
			    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
			    "Content-Length: %d\r\nRetry-After: %u\r\nConnection: close\r\n\r\n%s",
			    blen, retry_after, body);

	/* Best effort on a non-blocking socket: the answer is tiny. */
	if (send(fd, resp, (size_t)rlen, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("send(503): %s", strerror(errno));
}

void handover_refuse(struct master *m, struct queue_entry *e, const char *code, const char *msg)
{
	unsigned retry = m->cfg.queue_timeout_ms / 2000 + 1;

	reply_503(e->fd, code, msg, retry);
	close(e->fd);
	close(e->memfd);
}

static struct wslot *idle_worker(struct master *m)
{
	for (size_t k = 0; k < STATS_MAX_WORKERS; k++) {
		size_t i = (m->rr + k) % STATS_MAX_WORKERS;
		struct wslot *s = &m->slots[i];

		if (s->pid > 0 && s->idle && !s->quitting && s->gen == m->gen) {
			m->rr = (unsigned)(i + 1);
			return s;
		}
	}
	return NULL;
}

static struct admit *admit_of(struct master *m)
{
	return &m->stats->admit;
}

void handover_publish(struct master *m)
{
	/* a shared store's queue is the fleet's: /metrics shows it apart */
	size_t subs = m->shared ? 0 : m->subs.len + m->later.len;

	atomic_store(&m->stats->queued, (int64_t)(m->q.len + subs));
	/* what an idle worker must not overtake with a request it reads */
	admit_set_waiting(admit_of(m), m->q.len + (m->stopping ? 0 : m->subs.len));
}

/* 0 when the worker runs the stored submission, or -errno. */
static int send_sub(struct master *m, struct wslot *s, const struct queue_entry *e)
{
	struct channel_run run = { .id = e->sub, .queued_ms = now_ms() - e->enq_ms };
	int rc = channel_send(s->channel, CHANNEL_RUN, &run, sizeof(run), NULL, 0);

	if (rc < 0)
		return rc;
	s->idle = false;
	s->busy = true;
	s->sub = e->sub;
	return 0;
}

/* 0 when the worker has the job (the master's copies closed), or -errno. */
static int send_job(struct master *m, struct wslot *s, const struct queue_entry *e)
{
	uint64_t waited_ms = now_ms() - e->enq_ms;
	int fds[2] = { e->fd, e->memfd };
	int rc;

	if (e->sub)
		return send_sub(m, s, e);
	rc = channel_send(s->channel, CHANNEL_DISPATCH, &waited_ms, sizeof(waited_ms), fds, 2);

	if (rc < 0)
		return rc;
	close(e->fd);
	close(e->memfd);
	s->idle = false;
	s->busy = true;
	return 0;
}

/*
 * The worker's end of the channel is gone (it died and is not reaped yet)
 * or it does not read it (its queue is full): it cannot take this job or
 * any other.
 */
static bool is_unreachable(int rc)
{
	return rc == -EPIPE || rc == -ECONNRESET || rc == -ECONNREFUSED || rc == -ENOTCONN ||
	       rc == -EAGAIN;
}

/*
 * Give a job to an idle worker of the current generation, its job slot
 * reserved (master/dispatch.c). 0: one took it. -EAGAIN: none could; the
 * job is still the caller's, to queue. Another negative errno: the
 * message could not be sent at all (memory), and the caller answers the
 * client. A worker that runs a job it read itself is not idle until its
 * DONE; one that cannot be reached is killed so that it is reaped and
 * replaced, and the next idle one is tried.
 */
static int hand_over(struct master *m, const struct queue_entry *e)
{
	struct wslot *s;

	while ((s = idle_worker(m))) {
		size_t i = (size_t)(s - m->slots);
		int rc;

		if (!admit_take(admit_of(m), i)) {
			s->idle = false;
			continue;
		}
		rc = send_job(m, s, e);
		if (rc == 0)
			return 0;
		admit_untake(admit_of(m), i);
		if (!is_unreachable(rc)) {
			log_error("dispatch to worker pid %d failed: %s", s->pid, strerror(-rc));
			return rc;
		}
		log_warn("dispatch to worker pid %d failed: %s; replacing it", s->pid,
			 strerror(-rc));
		s->idle = false;
		kill(s->pid, SIGKILL);
	}
	return -EAGAIN;
}

/* The queue whose head goes next (master/dispatch.h). */
static struct queue *next_queue(struct master *m)
{
	return dispatch_next(&m->q, &m->subs, m->stopping);
}

static int hand_over_hook(void *arg, const struct queue_entry *e)
{
	return hand_over(arg, e);
}

static void refuse_overloaded(void *arg, struct queue_entry *e)
{
	handover_refuse(arg, e, "overloaded", "could not hand the job to a sandbox; retry later");
}

static struct dispatch_hooks hooks_of(struct master *m)
{
	return (struct dispatch_hooks){ .arg = m, .hand_over = hand_over_hook,
					.overloaded = refuse_overloaded };
}

void handover_dispatch(struct master *m)
{
	const struct dispatch_hooks hooks = hooks_of(m);

	dispatch_run(&m->q, &m->subs, m->stopping, admit_of(m), m->cfg.max_concurrency, &hooks);
	handover_publish(m);
}

void handover_expire(struct master *m)
{
	uint64_t now = now_ms();
	struct queue_entry e;

	while (m->q.len > 0 && now - queue_oldest_ms(&m->q) > m->cfg.queue_timeout_ms) {
		queue_pop(&m->q, &e);
		handover_refuse(m, &e, "queue_timeout",
				"no sandbox became free in time; retry later");
		atomic_fetch_add(&m->stats->queue_rejected_timeout, 1);
	}
	handover_publish(m);
}

void handover_enqueue(struct master *m, int fd, int memfd)
{
	struct queue_entry e = { .fd = fd, .memfd = memfd, .enq_ms = now_ms() };

	if (m->stopping) {
		handover_refuse(m, &e, "shutting_down", "the server is stopping; retry later");
		return;
	}
	/* A free slot and nobody ahead: no queueing at all. */
	if (!next_queue(m)) {
		const struct dispatch_hooks hooks = hooks_of(m);
		int rc = dispatch_one(admit_of(m), m->cfg.max_concurrency, &hooks, &e);

		if (rc == 0)
			return;
		if (rc != -EAGAIN) {
			handover_refuse(m, &e, "overloaded",
					"could not hand the job to a sandbox; retry later");
			return;
		}
	}
	if (queue_push(&m->q, &e) < 0) {
		handover_refuse(m, &e, "queue_full", "too many jobs waiting; retry later");
		atomic_fetch_add(&m->stats->queue_rejected_full, 1);
		return;
	}
	handover_dispatch(m);
}

void handover_job_done(struct master *m, struct wslot *s, bool dispatched)
{
	if (dispatched) {
		s->sub = 0;
		s->busy = false;
	}
	/* one that runs what the master dispatched since is not idle */
	if (!s->quitting && !s->busy)
		s->idle = true;
}

void handover_worker_gone(struct master *m, struct wslot *s)
{
	s->sub = 0;
	s->busy = false;
	s->idle = false;
	/* whoever started its job, the master's dispatch or the worker itself */
	admit_end(admit_of(m), (size_t)(s - m->slots));
}

void handover_worker_starts(struct master *m, struct wslot *s)
{
	admit_reset(admit_of(m), (size_t)(s - m->slots));
}
