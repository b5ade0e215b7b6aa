/*
 * The worker's sandbox context, and one sandboxed step: run a program in a
 * jail (worker/jail.h) in a fresh cgroup, feed stdin, capture stdout and
 * stderr up to their caps, enforce wall and CPU time, collect CPU, peak
 * memory and OOM from the cgroup, clean the cgroup up.
 *
 * Blocking: the caller is the worker's job thread.
 */
#ifndef GOBOXD_SANDBOX_H
#define GOBOXD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/limits.h"
#include "common/verdict.h"

/* Process-wide sandbox context, made once per worker. */
struct sandbox;

struct sandbox_opts {
	enum jail_kind jail;        /* auto resolves to nsjail, then bwrap */
	const char *nsjail_path;
	const char *bwrap_path;
	const char *cgroup_root;    /* NULL: discover */
	const char *cgroup_name;    /* this worker's sub-tree, e.g. "w3" */
	const char *init_path;      /* goboxd-init; NULL: next to goboxd, then installed */
	const char *jail_dir;       /* where jails make their job directories */
	const char *const *ro_mounts; /* extra host paths bound read-only (the
				       * languages'), NULL-terminated or NULL */
	uid_t uid;                  /* host uid the jailed program runs as */
	gid_t gid;
	uint64_t tmpfs_kb;          /* each program's fresh /tmp */
	bool pin_cpu;               /* every program on CPU cpu */
	unsigned cpu;
};

/*
 * 0 and *out, or negative errno with a reason in err (no jail binary, no
 * usable cgroup hierarchy...).
 */
int sandbox_open(const struct sandbox_opts *o, struct sandbox **out, char *err, size_t errlen);
void sandbox_close(struct sandbox *sb);
/* "nsjail" or "bwrap", and the jail binary's version line (may be ""). */
const char *sandbox_driver_name(const struct sandbox *sb);
const char *sandbox_driver_version(const struct sandbox *sb);
const char *sandbox_driver_path(const struct sandbox *sb);

struct jail;

struct step_spec {
	const char *const *argv;    /* argv[0]: absolute, or relative to the box */
	const char *const *envp;    /* whole environment of the program */
	struct limits limits;
	bool tmp_exec;              /* /tmp without noexec */
	unsigned open_files;        /* RLIMIT_NOFILE; 0: POLICY_NOFILE */
	const char *stdin_data;     /* may be NULL: empty stdin */
	size_t stdin_len;
	/* Caps on what is kept; going past a cap kills the program and sets
	 * output_limited. Zero: limits.output_kb for each stream. */
	size_t stdout_cap;
	size_t stderr_cap;
	size_t combined_cap;        /* 0: no cap on stdout+stderr together */
	bool want_interleaved;      /* also record both streams in write order */
};

struct step_result {
	struct run_outcome outcome;
	struct buf out;             /* captured stdout (truncated at cap) */
	struct buf err;             /* captured stderr (truncated at cap) */
	struct buf interleaved;     /* only if want_interleaved */
	bool out_truncated, err_truncated;
	uint64_t wall_ms;
	uint64_t cpu_ms;
	uint64_t memory_peak_kb;
	char internal_msg[256];     /* set when outcome.internal_error */
};

void step_result_init(struct step_result *r);
void step_result_free(struct step_result *r);

/*
 * Run one step in jail j, from a fresh /tmp, in a cgroup of its own.
 * Returns 0 when the step ran (whatever the program did: see r->outcome),
 * or negative errno when the sandbox itself failed (then
 * r->outcome.internal_error is set and r->internal_msg says why).
 */
int sandbox_run(struct jail *j, const struct step_spec *s, struct step_result *r);
/* The same in a jail of its own around box_dir (probes, tests). */
int sandbox_run_once(struct sandbox *sb, const char *box_dir, const struct step_spec *s,
		     struct step_result *r);

/* The marker appended to a captured stream that hit its cap. */
#define TRUNCATION_MARKER "\n[goboxd: output truncated]\n"

#endif
