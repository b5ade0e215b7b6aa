/*
 * A worker as the files of its process share it: worker.c (its start,
 * its loop, what a request means), to_master.c (what it tells the
 * master), from_master.c (what the master sends it) and answer.c (its
 * job's answer, whole or streamed). Nothing but these four includes it.
 */
#ifndef GOBOXD_WORKER_STATE_H
#define GOBOXD_WORKER_STATE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "worker/conn.h"
#include "worker/http/routes.h"
#include "worker/jobthread.h"
#include "worker/sandbox/network.h"
#include "worker/outbox.h"
#include "worker/submissions.h"
#include "worker/worker_ctx.h"

struct auth_view;
struct buildcache;
struct sandbox;
struct session;

struct worker {
	const struct worker_ctx *ctx;
	const struct config *cfg;
	int epfd, sigfd, evfd;
	bool listening;
	uint64_t accept_resume_ms; /* accepting paused (out of fds) until then */
	bool stop_now;
	struct conn_set conns;    /* its draining is the worker's */
	struct sandbox *sandbox;
	/* Its CPU (has_cpu: one was found), where it keeps itself and its
	 * jails when kept; cpus: the ones this process could use before. */
	cpu_set_t cpus;
	unsigned cpu;
	bool has_cpu, kept;
	struct buildcache *cache; /* NULL: --build-cache-mb 0, or it could not open */
	char sandbox_error[256];
	struct route_ctx rctx;
	struct jobthread job;
	/* The loop's own notes on the job in the thread. */
	struct conn *job_conn;  /* whose it is; NULL once its client is gone */
	uint64_t job_started_ms;
	char job_method[16];
	char job_path[64];
	uid_t uid;
	gid_t gid;
	struct network_policy network; /* its jobs' network, where --network allows one */
	uid_t judge_uid;        /* its jobs' judge programs (gid the same) */
	struct submissions subs;  /* Judge0's, kept in the store */
	struct outbox callbacks;
	int64_t job_sub;        /* the stored submission the job runs, 0: none */
	uint64_t job_queued_ms;
	struct auth_view *auth; /* its copy of the tokens in force */
	struct session *session;  /* its live session (worker/session.c), NULL: none */
	/* The session's side of its job, called by answer.c (which
	 * worker/session.c itself uses: set by worker.c): news, the end. */
	void (*session_progress)(struct worker *w);
	void (*session_job_done)(struct worker *w);
};

#endif
