/*
 * The worker's sandbox context as its parts see it: sandbox.c makes it
 * (sandbox_open), a program's run (sandbox_run.c) reads it. Nothing
 * outside worker/sandbox/sandbox*.c includes this.
 */
#ifndef GOBOXD_SANDBOX_CTX_H
#define GOBOXD_SANDBOX_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/sandbox/initmsg.h"
#include "worker/sandbox/jail.h"

/* The worker's sandbox context, made once per worker (sandbox_open). */
struct sandbox {
	struct jail_shared shared; /* what every jail takes from it */
	char version[256];      /* the jail binary's version line */
	uint64_t tmpfs_kb;      /* each program's fresh /tmp */
	uint64_t tmp_files;     /* nr_inodes of each /tmp; 0: no cap */
	bool disk_quota;        /* jail_dir is the capped job disk */
	int cpu;                /* the CPU of pinned steps; -1: none */
	bool pin_all;           /* every step on cpu, not only those that ask */
	/* the other steps' CPUs, as initmsg_run.cpus; none: the init's */
	uint64_t program_cpus[INITMSG_CPU_WORDS];
};

#endif
