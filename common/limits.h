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

/*
 * Merge: start from the language default, apply every field the request
 * gave (a zero field is one it did not give), then clamp each field to the
 * server maximum. Never fails: asking for more than the maximum gets the
 * maximum.
 */
void limits_merge(struct limits *out, const struct limits *lang_default,
		  const struct limits *request, const struct limits *server_max);

/* A program's /tmp: its size in bytes and its cap on files (0: none). */
struct tmp_size {
	uint64_t bytes;
	uint64_t files;
};

#define LIMITS_TMP_MIN_BYTES (64u * 1024u)
#define LIMITS_TMP_PAGE 4096u

/*
 * The /tmp of a program with limits l, on a server whose --tmpfs-size is
 * tmpfs_kb and whose file cap is max_files (0: none): at most a quarter
 * of its memory limit and at most tmpfs_kb, and at least twice as many
 * files as it has pages, so that it fills up in bytes first.
 */
void limits_tmp(const struct limits *l, uint64_t tmpfs_kb, uint64_t max_files,
		struct tmp_size *out);

#endif
