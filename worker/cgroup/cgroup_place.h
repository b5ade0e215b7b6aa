/*
 * Where cgroups live (cgroup_place.c), as the rest of the cgroup module
 * and the unit tests use it. The master's part (choosing and preparing
 * the place once) is in host.h.
 */
#ifndef GOBOXD_CGROUP_PLACE_H
#define GOBOXD_CGROUP_PLACE_H

#include <stdbool.h>
#include <stddef.h>

struct cgroup_layout;

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
