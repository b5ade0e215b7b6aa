/*
 * The shared-memory statistics region: mapped by the master before fork,
 * written by workers (and the master's queue), read by any worker for /info
 * and /metrics. Lock-free: counters are atomics, the ring of recent job
 * records is a per-slot seqlock so a reader never sees a half-written
 * record and a writer that dies mid-write leaves only that slot unreadable.
 */
#ifndef GOBOXD_STATS_H
#define GOBOXD_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/admit.h"
#include "common/store.h"

#define STATS_RING_SIZE 2048
#define STATS_MAX_WORKERS ADMIT_MAX_WORKERS
#define STATS_MAX_LANGS 128
#define STATS_NSTATUS 12           /* enum test_status values, see verdict.h */
#define STATS_NBUCKETS 12

/* Upper bounds (ms) of the duration histogram buckets; the last is +Inf. */
extern const uint32_t stats_bucket_ms[STATS_NBUCKETS - 1];

enum worker_state { WS_EMPTY, WS_IDLE, WS_BUSY, WS_DRAINING };

struct job_record {
	uint64_t end_wall_ms;     /* CLOCK_REALTIME */
	char lang[32];
	uint8_t status;           /* enum test_status of the job (top level) */
	/* its API: its wire format's stats_id (worker/http/api.c): 0 /run,
	 * 1 /v1/run, 2 Judge0, 3 Piston */
	uint8_t api;
	uint32_t queue_ms, build_ms, run_ms, cpu_ms;
	uint64_t memory_peak_kb;
};

struct ring_slot {
	_Atomic uint64_t seq;     /* odd while being written */
	struct job_record rec;
};

struct worker_slot {
	_Atomic int32_t pid;
	_Atomic uint32_t generation;
	_Atomic int32_t state;    /* enum worker_state */
	_Atomic uint64_t job_started_ms;
	_Atomic uint64_t jobs_done;
	_Atomic uint64_t callbacks_bytes; /* its callbacks waiting (worker/outbox.c) */
};

struct lang_stats {
	_Atomic uint32_t used;    /* 0 free, 1 claiming, 2 ready */
	char id[32];
	_Atomic uint64_t by_status[STATS_NSTATUS];
	_Atomic uint64_t buckets[STATS_NBUCKETS];
	_Atomic uint64_t duration_sum_ms;
	_Atomic uint64_t count;
};

/* The submission store as its watcher (worker 0's submissions_tick) last
 * saw it: written under a sequence lock, read by any worker's /metrics. */
struct store_seen {
	uint64_t wall_ms;         /* when; 0: never yet */
	bool up;                  /* the last look worked */
	char error[256];          /* why it is down */
	struct store_overview ov;
};

struct stats {
	_Atomic uint64_t started_wall_ms;
	_Atomic uint64_t requests_total;
	_Atomic uint64_t jobs_total;
	/* jobs a worker ran for a request it read itself (common/admit.h) */
	_Atomic uint64_t jobs_taken_directly;
	_Atomic uint64_t jobs_failed_internal;
	_Atomic uint64_t last_internal_error_ms;   /* CLOCK_REALTIME, 0: never */
	_Atomic int64_t in_flight;
	_Atomic int64_t queued;                    /* written by the master */
	/* who may start a job, and where (common/admit.h) */
	struct admit admit;
	_Atomic uint64_t queue_rejected_full;
	_Atomic uint64_t queue_rejected_timeout;
	/* Judge0 answers of many submissions refused for their size
	 * (--max-batch-answer-size; worker/submissions.c). */
	_Atomic uint64_t batch_answers_refused;
	_Atomic uint64_t workers_respawned;
	_Atomic uint64_t reloads;
	_Atomic uint32_t generation;               /* current worker generation */
	/* The build cache (worker/judge/buildcache.c): its bytes as the last sweep
	 * left them (a gauge), and counters. */
	_Atomic uint64_t build_cache_hits;
	_Atomic uint64_t build_cache_misses;
	_Atomic uint64_t build_cache_evictions;
	_Atomic uint64_t build_cache_bytes;
	/* Callbacks a bound on waiting ones left no room for (worker/outbox.c). */
	_Atomic uint64_t callbacks_refused;
	_Atomic uint64_t by_status[STATS_NSTATUS];
	_Atomic uint64_t store_seq;                /* odd while store_seen is written */
	struct store_seen store_seen;
	_Atomic uint64_t ring_head;
	struct ring_slot ring[STATS_RING_SIZE];
	struct worker_slot workers[STATS_MAX_WORKERS];
	struct lang_stats langs[STATS_MAX_LANGS];
};

/* Map the anonymous shared region (before fork). NULL on failure. */
struct stats *stats_map(void);
void stats_unmap(struct stats *s);

/* Record one finished job: ring, totals, per-language counters. */
void stats_push(struct stats *s, const struct job_record *r, bool internal_error);
/*
 * Copy up to max of the most recent readable records, newest first.
 * Returns the count.
 */
size_t stats_recent(const struct stats *s, struct job_record *out, size_t max);

/* The store as last seen: publish (the watcher), read (a copy; zeroed
 * when a writer died in the middle). */
void stats_store_publish(struct stats *s, const struct store_seen *seen);
void stats_store_read(const struct stats *s, struct store_seen *out);

/* Latency percentile (p in 0..100) of queue+build+run over recs. */
uint32_t stats_percentile(const struct job_record *recs, size_t n, unsigned p);

#endif
