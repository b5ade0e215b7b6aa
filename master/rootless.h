/*
 * Rootless: goboxd started by an unprivileged user, or by root without
 * CAP_SYS_ADMIN (an unprivileged container's root).
 *
 * Before anything else, the master enters a user namespace of its own in
 * which it is root, and a mount namespace owned by it: uid and gid 0 map
 * to the user's own, and ids 1..count to the user's subordinate range
 * (/etc/subuid, /etc/subgid, written by the setuid newuidmap and
 * newgidmap). Every later step runs as it does for root: the sandbox uids
 * are ids of that range, distinct from the user's own; the workers keep
 * the same capabilities, over that namespace only; cgroups are the ones
 * the user was delegated (a unit with Delegate=yes), which the user owns.
 * What no namespace gives (raising a hard rlimit, writing where the user
 * may not) stays out of reach. Where cgroup2 is mounted read-only (as an
 * unprivileged container has it), it is mounted anew, writable, in a
 * cgroup namespace of goboxd's own rooted at its cgroup: the cgroup's
 * files are the container root's own there.
 */
#ifndef GOBOXD_ROOTLESS_H
#define GOBOXD_ROOTLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/types.h>

#include "common/config.h"

#define ROOTLESS_NEWUIDMAP "/usr/bin/newuidmap"
#define ROOTLESS_NEWGIDMAP "/usr/bin/newgidmap"

/* One subordinate range: ids 1..count inside are start..start+count-1. */
struct rootless_range {
	uint32_t start, count;
};

struct rootless {
	bool active;            /* entered: the process is root of its own namespace */
	bool cgroups_remounted; /* cgroup2 mounted anew, writable, in its own cgroupns */
	uid_t uid;              /* the user's own ids, 0 inside */
	gid_t gid;
	struct rootless_range uids, gids;
};

/*
 * The first range of /etc/subuid-like text for a user, by name or by uid,
 * that holds at least need ids. 0 and *out; -ENOENT when none does.
 */
int rootless_find_range(const char *text, const char *name, uid_t uid, uint32_t need,
			struct rootless_range *out);
/*
 * Root without CAP_SYS_ADMIN maps uid 0 onto itself, and newuidmap and
 * newgidmap run with root's own capabilities (its setuid bit adds
 * nothing): that takes CAP_SETUID, CAP_SETGID and, for uid 0 (Linux 5.12
 * and later), CAP_SETFCAP. The ones caps lacks, comma-separated, in out;
 * their count. (An unprivileged user's newuidmap brings its own.)
 */
int rootless_root_lacks(cap_t caps, char *out, size_t outlen);
/* The ids the sandbox takes, 0 to the last one; the range must hold them. */
uint32_t rootless_ids_needed(const struct config *cfg);
/*
 * As root with CAP_SYS_ADMIN, nothing (r->active false). Otherwise enter
 * the namespaces as above: 0 and *r, or negative errno with the reason and its remedy in
 * err. The process must be single-threaded.
 */
int rootless_enter(const struct config *cfg, struct rootless *r, char *err, size_t errlen);
/* One line for the start-up log and --check: who, which ranges. */
void rootless_describe(const struct rootless *r, char *out, size_t outlen);

#endif
