/*
 * The master's state, as the files of the master's process share it:
 * master.c (its start, loop, children, reload and stop), handover.c (the
 * clients' queue and the hand-over of jobs to workers), stored.c (the
 * stored submissions' queues) and from_worker.c (the workers' messages).
 * Nothing outside master/ includes this.
 */
#ifndef GOBOXD_MASTER_STATE_H
#define GOBOXD_MASTER_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/stats.h"
#include "master/queue.h"
#include "master/sweeper.h"

struct langtab;
struct probe_table;
struct auth_shared;

struct wslot {
	pid_t pid;
	int channel;            /* master's end of the socketpair */
	uint32_t gen;
	bool idle;           /* may receive a dispatch */
	bool busy;           /* has a job the master dispatched (its slot: common/admit.h) */
	int64_t sub;         /* the stored submission it runs, 0: none */
	bool quitting;       /* told to finish and exit */
	bool config_fail;    /* exited with WORKER_EXIT_CONFIG */
	uint64_t started_ms;
	unsigned fails;      /* quick deaths in a row, for backoff */
	uint64_t respawn_at; /* 0: no respawn pending */
};

struct master {
	struct config cfg;
	struct langtab *langs;
	uint32_t gen;
	int argc;
	char **argv;
	char **envp;
	int listen_fd;
	int epfd;
	int sigfd;
	struct stats *stats;
	struct probe_table *probes;
	struct auth_shared *auth;  /* the tokens in force, for every generation */
	struct wslot slots[STATS_MAX_WORKERS];
	struct queue q;
	/* stored submissions waiting (common/store.h): unbounded, never
	 * expired, and taken in turn with the clients by their age */
	struct queue subs;
	/* stored submissions a worker could not start or finish because the
	 * store failed (CHANNEL_DEFER), each until DEFER_MS after it came
	 * (its enq_ms), then into subs */
	struct queue later;
	/* The store's claim (store_claim), held for the master's life and
	 * by no child: -1 when there is no store, or it is shared. The master
	 * keeps no connection to the store past its start: a child must not
	 * inherit a SQLite connection, or its locks. */
	int store_claim;
	/* Why there is none (a SQLite store that did not open): the workers
	 * never open it either, and answer 503 with this. */
	char store_refused[512];
	/* A shared store (PostgreSQL): nodes lease their work from it, so
	 * subs holds leases to take (CHANNEL_RUN_LEASE), one per submission a
	 * worker here took in and one each look, never an id. */
	bool shared;
	uint64_t next_look_ms;
	unsigned rr;          /* round-robin start for dispatch */
	pid_t prober;
	bool reprobe;         /* start a prober when the running one has ended */
	uint64_t next_probe_ms;
	uint64_t next_sweep_ms;
	struct sweeper sweeper; /* removes job directories off this loop */
	uint64_t sweeper_retry_ms;
	bool stopping;
	bool fast;
	bool quit_sent;       /* graceful stop: workers told to finish */
	uint64_t stop_deadline_ms;
	/* the cgroup place chosen at start-up holds for the process's life */
	char *cgroup_option;      /* --cgroup-root as given then (NULL: none) */
	char *cgroup_root;        /* what workers get as cgroup_root (NULL: discover) */
};

#endif
