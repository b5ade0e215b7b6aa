/*
 * Where cgroups live (cgroup_place.c), for the master, which chooses and
 * prepares the place once at start-up (goboxd --check and a rootless
 * start look at the host the same way), and for the rest of the cgroup
 * module and the unit tests, which open trees in its layout.
 */
#ifndef GOBOXD_CGROUP_PLACE_H
#define GOBOXD_CGROUP_PLACE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- The place: the master's part ---- */

enum cgroup_version { CGROUP_V1 = 1, CGROUP_V2 = 2 };

/*
 * Where goboxd's cgroups live, chosen once by the master at start-up, in
 * this order: --cgroup-root when given (nothing else is tried); on v2 the
 * cgroup goboxd was started in when it is delegated (offers memory and
 * pids, writable: a unit with Delegate=yes, a container with its own
 * cgroup namespace); on v2, as root, a goboxd subtree at the cgroup2 root
 * when that is writable (a host without delegation, the way isolate's
 * service does it); v1's memory, pids and cpuacct hierarchies.
 */
enum cgroup_source { CGROUP_SRC_OPTION, CGROUP_SRC_OWN, CGROUP_SRC_ROOT, CGROUP_SRC_V1 };

struct cgroup_place {
	enum cgroup_version ver;
	enum cgroup_source source;
	/* what every later call takes as root_override: the v2 base cgroup,
	 * or on v1 the operator's --cgroup-root ("" when discovered) */
	char root[PATH_MAX];
	unsigned ndirs;
	char dirs[3][PATH_MAX];  /* the goboxd/ directories (v1: one per controller) */
	/* one line: what discovery found, what goboxd needs, what it takes */
	char report[1024];
};

/* What discovery looks at: the daemon reads its own, tests pass a fake. */
struct cgroup_host {
	const char *mountinfo;     /* a /proc/self/mountinfo text */
	const char *proc_cgroup;   /* a /proc/self/cgroup text */
	bool root;                 /* effective uid 0 */
	char *mountinfo_buf, *proc_cgroup_buf;  /* owned by cgroup_place_read_host */
};

/* This process's view. 0, or negative errno with err. */
int cgroup_place_read_host(struct cgroup_host *h, char *err, size_t errlen);
void cgroup_place_free_host(struct cgroup_host *h);
/*
 * Choose the place (reads cgroupfs files, writes nothing). 0 and *out, its
 * report the line goboxd says at start and in --check; or -ENOTSUP (or
 * another negative errno) with the same line, ending "none usable", in err.
 */
int cgroup_place_locate(const struct cgroup_host *h, const char *root_override,
			struct cgroup_place *out, char *err, size_t errlen);
/*
 * Make the place usable. v2: a cgroup with member processes cannot hand
 * controllers to its children, so when the base refuses, every process of
 * it moves into the leaf "<base>/goboxd-daemon" first; then memory/pids
 * (and cpu when available) are enabled in the base and in "<base>/goboxd".
 * v1: nothing to do. 0 or negative errno with err.
 */
int cgroup_place_prepare(const struct cgroup_place *p, char *err, size_t errlen);
/* cgroup_place_read_host + cgroup_place_locate + cgroup_place_prepare: the
 * master's start-up, once, before forking workers (and the sandbox tests'
 * set-up). */
int cgroup_place_start(const char *root_override, struct cgroup_place *out, char *err,
		       size_t errlen);
const char *cgroup_place_source_name(enum cgroup_source s);
/* The first cgroup2 mount of a mountinfo text: 0, its mount point and
 * whether it is read-only; -ENOENT or -ENAMETOOLONG. */
int cgroup_place_find_v2_mount(const char *mountinfo, char *mount_point, size_t len,
			       bool *read_only);

/* ---- The layout: the cgroup module's part ---- */

/*
 * v1 keeps one directory per controller, indexed as below; v2 has a single
 * directory (index 0) holding every controller's files. On v1 two of them
 * may be the same hierarchy (co-mounted), hence the duplicate checks.
 */
enum { CGROUP_MEM, CGROUP_PIDS, CGROUP_CPU, CGROUP_NCTRL };

/* goboxd's subtree below the base, and (v2) the leaf the daemon's own
 * processes move to when the base must hand controllers down */
#define CGROUP_TOP "goboxd"
#define CGROUP_DAEMON_LEAF "goboxd-daemon"

/* Where trees are opened: cgroup_place_layout. */
struct cgroup_layout {
	enum cgroup_version ver;
	unsigned ndirs;
	char base[CGROUP_NCTRL][PATH_MAX]; /* v1: controller mounts; v2: base cgroup */
};

/*
 * The layout of the place this process uses: root_override (--cgroup-root)
 * when given, else the one chosen from the host as at start-up. What
 * cgroup_tree_open and cgroup_sweep work in. 0, or negative errno with the
 * reason in err.
 */
int cgroup_place_layout(const char *root_override, struct cgroup_layout *lay, char *err,
			size_t errlen);
/*
 * v2: enable memory and pids in dir's cgroup.subtree_control (and cpu
 * when offered; its stats need no more). -EBUSY while dir has member
 * processes (not the cgroup2 root).
 */
int cgroup_place_v2_enable(const char *dir, char *err, size_t errlen);

/* Parsing helpers (pure, no I/O; unit-tested). */

/* One line of /proc/self/mountinfo; octal escapes (\040) decoded. */
struct cgroup_mount {
	char root[4096];        /* the mounted subtree of the hierarchy */
	char mount_point[4096];
	char mount_opts[256];   /* this mount's: "ro,nosuid,..." when read-only */
	char fstype[64];        /* "cgroup" or "cgroup2" for ours */
	char super_opts[512];   /* v1: names the controllers, e.g. "rw,cpu,cpuacct" */
};
/* 0, or -EINVAL on a malformed line, -ENAMETOOLONG if a field overflows. */
int cgroup_place_parse_mountinfo_line(const char *line, struct cgroup_mount *out);
/* Is word one of the tokens of list (separated by commas or blanks)? */
bool cgroup_place_has_word(const char *list, const char *word);
/*
 * The path of a /proc/<pid>/cgroup text for a v1 controller, or for the v2
 * hierarchy when controller is NULL ("0::/path"). 0, -ENOENT, -ENAMETOOLONG.
 */
int cgroup_place_parse_proc_cgroup(const char *text, const char *controller, char *out,
				   size_t outlen);
/*
 * goboxd's v2 base, relative to a cgroup2 mount whose root is mount_root,
 * given the process's cgroup path: the mount root is stripped and a final
 * "goboxd-daemon" component (where cgroup_place_prepare put the daemon)
 * dropped. Always starts with '/'. 0, -ENOENT (not below the mount),
 * -EINVAL ("..", relative), -ENAMETOOLONG.
 */
int cgroup_place_v2_base_rel(const char *cgroup_path, const char *mount_root, char *out,
			     size_t outlen);

#endif
