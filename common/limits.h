/* Resource limits of one sandboxed step, and their merge rules. */
#ifndef GOBOXD_LIMITS_H
#define GOBOXD_LIMITS_H

#include <stdint.h>

struct limits {
	uint32_t wall_ms;       /* wall-clock limit, enforced by goboxd's timer */
	uint32_t cpu_ms;        /* CPU time limit (RLIMIT_CPU and cgroup usage) */
	uint64_t memory_kb;     /* cgroup memory limit */
	uint32_t max_processes; /* cgroup pids limit */
	uint64_t fsize_kb;      /* RLIMIT_FSIZE: largest file the step may write */
	uint64_t output_kb;     /* cap on captured stdout and on stderr, each */
};

/* A partial override: a zero field means "not given". */
struct limits_override {
	struct limits v;
};

/*
 * Merge: start from the language default, apply every field the request
 * gave, then clamp each field to the server maximum. Never fails: asking for
 * more than the maximum gets the maximum.
 */
void limits_merge(struct limits *out, const struct limits *lang_default,
		  const struct limits *request, const struct limits *server_max);

#endif
