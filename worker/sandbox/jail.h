/*
 * Jails. A jail is built with namespaces, the policy's mounts, the job
 * directory at the box, and goboxd-init as pid 1 (worker/sandbox/init.c). The
 * build step and every test then run inside it as separate programs
 * (sandbox_run). A worker starts its jail ahead of time, so that the
 * jail's creation is off the request's path, and after each job resets
 * it for the next (jail_recycle), up to --jobs-per-jail jobs; a jail whose
 * reset fails in any way is torn down and a new one started.
 *
 * The drivers (jail_bwrap.c, jail_nsjail.c, behind jail_driver.h) express
 * one jail of worker/sandbox/policy.h as a command line; jail.c starts it,
 * recycles it and tears it down, and jail_ready.c waits for the init's
 * hello.
 */
#ifndef GOBOXD_JAIL_H
#define GOBOXD_JAIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/jail_driver.h"
#include "worker/sandbox/policy.h"
#include "worker/sandbox/seccomp.h"
#include "worker/sandbox/initmsg.h"

/* ---- one jail ---------------------------------------------------------- */

struct jail;
struct jobdir;
struct cgroup_tree;

/*
 * What every jail of one sandbox takes from it, as data
 * (sandbox_jail_shared): the sandbox made it at sandbox_open and owns it;
 * a jail only reads it, and knows nothing of the sandbox beyond it.
 */
struct disks;

struct jail_shared {
	const struct jail_driver *driver;
	char *path;             /* jail binary */
	char *init_path;        /* goboxd-init */
	char *jail_dir;         /* where job directories are made */
	struct disks *disks;    /* each jail's own disk; NULL: its job directory is in jail_dir */
	struct cgroup_tree *cgroups; /* the worker's sub-tree: each jail's cgroups */
	struct seccomp_set *seccomp;
	struct jail_mount *mounts;
	size_t nmounts;
	char **ro_mounts;       /* NULL-terminated */
	uid_t uid;              /* its programs' host ids, unless jail_opts says */
	gid_t gid;
	unsigned jobs_per_jail; /* jail_recycle's bound; 1: a new jail a job */
};

/*
 * Start a jail: make its job directory (or bind box_dir when not NULL),
 * its cgroup and its socket, and fork the jail binary. Does not wait for
 * it: jail_ready does. 0 and *out, or negative errno with a reason.
 */
int jail_start(const struct jail_shared *shared, const char *box_dir, struct jail **out,
	       char *err, size_t errlen);

struct jail_opts {
	const char *box_dir;    /* as for jail_start; NULL: a job directory */
	uid_t uid;              /* host ids of its programs; 0: the sandbox's */
	gid_t gid;
	/*
	 * Also make a control directory: root's, group-readable by gid, under
	 * the jail dir and removed with the jail, shown read-only inside at
	 * JAILPATH_CONTROL. The worker puts what an interactor reads there
	 * (worker/sandbox/procctl.h).
	 */
	bool control_dir;
};

/* jail_start with options: an interactor's jail runs under a uid of its
 * own and sees a control directory. */
int jail_start_with(const struct jail_shared *shared, const struct jail_opts *o,
		    struct jail **out, char *err, size_t errlen);
/*
 * Wait (up to timeout_ms) for the init's hello and hand it the seccomp
 * filter. 0 once ready (at once when it already is), or negative errno with
 * what the jail binary said.
 */
int jail_ready(struct jail *j, int timeout_ms, char *err, size_t errlen);
/* How long a step waits for the jail's init to say it is ready. */
#define JAIL_READY_MS 10000
/*
 * After its job, once every step of it has ended: make the jail serve the
 * next job as a new one would. The init kills and reaps every process and
 * proves none is left, unmounts the last /tmp, moves to a new network
 * namespace and sets the pid counter back (init.c, reset_steps); the
 * first cgroup, holding the init alone, counts from zero again
 * (cgroup_step_rebase); the job directory is emptied and its inode cleared
 * (jobdir_reset). 0: jail_ready is at once true again. Negative errno with
 * the reason (the jail broken, or it has served --jobs-per-jail jobs,
 * -EDQUOT): the caller destroys it and starts another.
 */
int jail_recycle(struct jail *j, char *err, size_t errlen);
/* Kill everything in it, reap it, remove its cgroup and its directory. */
void jail_destroy(struct jail *j);
/*
 * The cgroup the init entered for the jail's first program (once ready),
 * or NULL while another program holds it (or it could not be set back
 * for this one): every program of a job is born there, one after the
 * other, and needs no migration. The jail keeps and removes it; its
 * limits are the taker's to set, and cgroup_step_kill spares the init in
 * it. Given back once the taker's processes are gone, and set back for
 * the next taker when it is taken.
 */
struct cgroup_step *jail_take_first_cgroup(struct jail *j);
void jail_give_back_first_cgroup(struct jail *j);
/*
 * Remove the jail's job directory (with its snapshot), its disk and its
 * control directory now, while the jail itself may wait for a later
 * teardown: their pages are memory, and a control directory shares the
 * worker's job disk with the next job's. 0 or -errno (the sweeper
 * retries what was left).
 */
int jail_discard_files(struct jail *j);

/* Host path of the box (the job directory, or box_dir). */
const char *jail_box_dir(const struct jail *j);
/* The job directory this jail made, or NULL when it was given box_dir. */
struct jobdir *jail_jobdir(struct jail *j);
/* Its control directory, or NULL when it has none. */
struct jobdir *jail_control_dir(struct jail *j);
/* The host uid and gid its programs run as. */
uid_t jail_uid(const struct jail *j);
gid_t jail_gid(const struct jail *j);
/* What it was started with (jail_start's shared). */
const struct jail_shared *jail_shared_of(const struct jail *j);
/* The socket to the init, for a run's loop (sandbox_run.c). */
int jail_sock(const struct jail *j);
/*
 * The init's user and network namespaces, as two fds (NETWORK, initmsg.h),
 * for a job's network (worker/sandbox/network.h). From then on, until the
 * job's reset, the programs it starts may make internet sockets, and that
 * reset gives the jail a new network namespace. 0, or negative errno with
 * the reason in err.
 */
int jail_namespaces(struct jail *j, int fds[2], char *err, size_t errlen);
/* The init's pid on this host, once it waits in the jail's first cgroup
 * (jail_ready); 0 while it is not known. */
pid_t jail_init_pid(const struct jail *j);
/*
 * In a child the worker forked for a jail, before its exec (async-signal-
 * safe): down to the jail's ids, groups and gid first, with the proof
 * that root cannot come back; then killed with the thread that forked it
 * (parent: the worker's pid), exiting at once if that is gone already.
 * 0 or -errno.
 */
int jail_child_drop_ids(uid_t uid, gid_t gid);
int jail_child_die_with(pid_t parent);
/* A new id for a RUN message. */
uint32_t jail_next_id(struct jail *j);
/* Mark a jail unusable (its init died or broke the protocol). */
void jail_break(struct jail *j);
bool jail_broken(const struct jail *j);

#endif
