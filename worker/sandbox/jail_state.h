/*
 * A jail as its two files see it: jail.c starts it, recycles it and
 * tears it down, jail_ready.c holds the handshake with its init
 * (jail_ready). Nothing outside worker/sandbox/jail*.c includes this.
 */
#ifndef GOBOXD_JAIL_STATE_H
#define GOBOXD_JAIL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/sandbox/jobdir.h"

struct cgroup_step;
struct jail_shared;

struct jail {
	const struct jail_shared *shared; /* what every jail of its sandbox takes */
	pid_t pid;              /* the jail binary */
	int sock;               /* our end of the init's socketpair */
	int log_r;              /* the jail binary's stdout and stderr */
	int exec_r;             /* silent unless the pre-exec child failed */
	struct cgroup_step *cg;     /* the jail binary and the init */
	/* The first program's cgroup, which the init enters while the jail
	 * waits (ENTER); taken by each program's step in turn, and set back
	 * between them (first_used: a program ran in it since). */
	struct cgroup_step *first;
	bool first_sent, first_ready, first_taken, first_used;
	struct jobdir dir;
	bool own_dir;
	/* A disk of its own (worker/sandbox/disks.h), mounted at this
	 * directory of the jail dir; dir is its box. */
	struct jobdir disk;
	bool own_disk;
	int next_box;           /* the next job's box, for the RESET; or -1 */
	struct jobdir ctl;      /* the control directory, when ctl.fd >= 0 */
	uid_t uid;              /* its programs' host ids */
	gid_t gid;
	char box[4096];
	bool ready, broken;
	uint32_t next_id;
	unsigned jobs;          /* jobs it has served (jail_recycle) */
};

/* What the jail binary said, first line that says anything; "" when
 * nothing. */
void jail_said(struct jail *j, char *out, size_t outlen);
/* The name of the launcher's step at this index (launched reads it from
 * the error pipe), "?" for one out of range. */
const char *jail_launch_step(int i);

#endif
