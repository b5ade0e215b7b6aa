#include "autoconf.h"

#include "master/rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/stats.h"
#include "common/util.h"
#include "worker/cgroup/cgroup_place.h"

#define SUBID_FILE_MAX 65536

int rootless_find_range(const char *text, const char *name, uid_t uid, uint32_t need,
			struct rootless_range *out)
{
	char num[24];

	snprintf(num, sizeof(num), "%u", (unsigned)uid);
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		size_t wl = c1 ? (size_t)(c1 - line) : 0;
		bool who = c1 && ((name && strlen(name) == wl && memcmp(line, name, wl) == 0) ||
				  (strlen(num) == wl && memcmp(line, num, wl) == 0));

		if (who) {
			char rest[64];
			unsigned long long start, count;
			char *end;

			if (len - wl - 1 < sizeof(rest)) {
				memcpy(rest, c1 + 1, len - wl - 1);
				rest[len - wl - 1] = '\0';
				errno = 0;
				start = strtoull(rest, &end, 10);
				if (!errno && end != rest && *end == ':') {
					const char *c = end + 1;

					count = strtoull(c, &end, 10);
					if (!errno && end != c && *end == '\0' && start > 0 &&
					    count >= need && start + count <= UINT32_MAX) {
						out->start = (uint32_t)start;
						out->count = (uint32_t)count;
						return 0;
					}
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

uint32_t rootless_ids_needed(const struct config *cfg)
{
	return config_sandbox_uid(cfg, CONFIG_SANDBOX_JUDGE, STATS_MAX_WORKERS - 1) + 1;
}

/* Run prog (newuidmap or newgidmap) for pid: 0 to own, 1.. to r. */
static int run_map(const char *prog, pid_t pid, unsigned own, const struct rootless_range *r)
{
	char a_pid[24], a_own[24], a_start[24], a_count[24];
	char *argv[] = { (char *)prog, a_pid, "0", a_own, "1", "1", a_start, a_count, NULL };
	pid_t child;
	int status;

	snprintf(a_pid, sizeof(a_pid), "%d", (int)pid);
	snprintf(a_own, sizeof(a_own), "%u", own);
	snprintf(a_start, sizeof(a_start), "%u", r->start);
	snprintf(a_count, sizeof(a_count), "%u", r->count);
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		execv(prog, argv);
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The helper: waits until its parent is in the new namespace, maps it. */
static void mapper(int ready, pid_t parent, const struct rootless *r)
{
	char c;
	ssize_t n;

	while ((n = read(ready, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(2);
	if (run_map(ROOTLESS_NEWUIDMAP, parent, (unsigned)r->uid, &r->uids) < 0)
		_exit(3);
	if (run_map(ROOTLESS_NEWGIDMAP, parent, (unsigned)r->gid, &r->gids) < 0)
		_exit(4);
	_exit(0);
}

static int read_ranges(const struct config *cfg, struct rootless *r, char *err, size_t errlen)
{
	static const char *const files[2] = { "/etc/subuid", "/etc/subgid" };
	const struct passwd *pw = getpwuid(r->uid);
	const char *name = pw ? pw->pw_name : NULL;
	uint32_t need = rootless_ids_needed(cfg);
	char *text = xmalloc(SUBID_FILE_MAX);
	int rc = 0;

	for (int i = 0; i < 2 && rc == 0; i++) {
		struct rootless_range *out = i == 0 ? &r->uids : &r->gids;
		ssize_t n = read_small_file(files[i], text, SUBID_FILE_MAX);

		if (n < 0)
			text[0] = '\0';
		rc = rootless_find_range(text, name, r->uid, need, out);
		if (rc < 0)
			snprintf(err, errlen,
				 "rootless: %s gives %s (uid %u) no range of %u ids or more, which "
				 "the sandbox uids (--sandbox-uid-base %u and up) need; remedy: "
				 "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s",
				 files[i], name ? name : "this user", (unsigned)r->uid, need,
				 (unsigned)cfg->sandbox_uid_base, name ? name : "<user>");
	}
	free(text);
	return rc;
}

int rootless_root_lacks(cap_t caps, char *out, size_t outlen)
{
	static const struct {
		cap_value_t cap;
		const char *name;
	} needs[] = {
		{ CAP_SETUID, "CAP_SETUID" },
		{ CAP_SETGID, "CAP_SETGID" },
		{ CAP_SETFCAP, "CAP_SETFCAP" },
	};
	size_t used = 0;
	int lacking = 0;

	if (outlen)
		out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(needs); i++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(caps, needs[i].cap, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET)
			continue;
		if (used < outlen)
			used += (size_t)snprintf(out + used, outlen - used, "%s%s",
						 lacking ? ", " : "", needs[i].name);
		lacking++;
	}
	return lacking;
}

/*
 * Root's way, read from its capabilities once: 1 with CAP_SYS_ADMIN (what
 * goboxd runs as without a namespace of its own; also where they cannot
 * be read), 0 without it (an unprivileged container's root, which takes
 * the rootless way), or -EPERM with the reason in err when it also lacks
 * what newuidmap needs.
 */
static int root_with_sys_admin(char *err, size_t errlen)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v = CAP_SET;
	char lacks[64];
	int n;

	if (!caps)
		return 1;
	if (cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &v) < 0)
		v = CAP_SET;
	n = v == CAP_SET ? 0 : rootless_root_lacks(caps, lacks, sizeof(lacks));
	cap_free(caps);
	if (v == CAP_SET)
		return 1;
	if (n > 0) {
		snprintf(err, errlen,
			 "rootless: root without CAP_SYS_ADMIN maps uid 0 onto itself in "
			 "goboxd's user namespace with newuidmap, which needs CAP_SETUID, "
			 "CAP_SETGID and CAP_SETFCAP; it lacks %s; remedy: give the container "
			 "%s (deploy/kubernetes-unprivileged)", lacks, n > 1 ? "them" : "it");
		return -EPERM;
	}
	return 0;
}

/*
 * A read-only cgroup2 mount (an unprivileged container's): in a cgroup
 * namespace of its own, rooted at its cgroup, the namespace's root may
 * mount the hierarchy anew, writable; whether it may write there is the
 * files' owners' to say, as ever. Nothing else is done.
 */
static int remount_cgroups(struct rootless *r, char *err, size_t errlen)
{
	struct cgroup_host h;
	char where[PATH_MAX];
	bool ro = false;
	int rc;

	if ((rc = cgroup_place_read_host(&h, err, errlen)) < 0)
		return rc;
	rc = cgroup_place_find_v2_mount(h.mountinfo, where, sizeof(where), &ro);
	cgroup_place_free_host(&h);
	if (rc == 0 && ro) {
		int fs = -1, mnt = -1;

		/* On top, moved there detached: the mount found came locked
		 * from a more privileged namespace and may not be taken away,
		 * and mount(2) refuses the same cgroup on the same place. */
		rc = unshare(CLONE_NEWCGROUP) < 0 ||
		     (fs = fsopen("cgroup2", FSOPEN_CLOEXEC)) < 0 ||
		     fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
		     (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
							 MOUNT_ATTR_NOEXEC)) < 0 ||
		     move_mount(mnt, "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH) < 0 ? -errno : 0;
		if (mnt >= 0)
			close(mnt);
		if (fs >= 0)
			close(fs);
		if (rc < 0) {
			snprintf(err, errlen, "rootless: mounting cgroup2 anew at %s in a cgroup "
				 "namespace of its own (the one found is read-only): %s", where,
				 strerror(-rc));
			return rc;
		}
		r->cgroups_remounted = true;
	}
	return 0;
}

int rootless_enter(const struct config *cfg, struct rootless *r, char *err, size_t errlen)
{
	int ready[2];
	pid_t parent = getpid(), child;
	int status, rc;

	memset(r, 0, sizeof(*r));
	if (geteuid() == 0 && (rc = root_with_sys_admin(err, errlen)) != 0)
		return rc < 0 ? rc : 0;
	r->uid = getuid();
	r->gid = getgid();
	if ((rc = read_ranges(cfg, r, err, errlen)) < 0)
		return rc;
	if (access(ROOTLESS_NEWUIDMAP, X_OK) < 0 || access(ROOTLESS_NEWGIDMAP, X_OK) < 0) {
		snprintf(err, errlen, "rootless: %s or %s is missing; remedy: apt-get install uidmap",
			 ROOTLESS_NEWUIDMAP, ROOTLESS_NEWGIDMAP);
		return -ENOENT;
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		rc = -errno;
		snprintf(err, errlen, "rootless: pipe: %s", strerror(-rc));
		return rc;
	}
	child = fork();
	if (child < 0) {
		rc = -errno;
		close(ready[0]);
		close(ready[1]);
		snprintf(err, errlen, "rootless: fork: %s", strerror(-rc));
		return rc;
	}
	if (child == 0) {
		close(ready[1]);
		mapper(ready[0], parent, r);
	}
	close(ready[0]);
	rc = unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ? -errno : 0;
	if (rc == 0 && write(ready[1], "x", 1) != 1)
		rc = -errno;
	close(ready[1]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		snprintf(err, errlen,
			 "rootless: unshare(user and mount namespaces): %s; remedy: allow "
			 "unprivileged user namespaces (sysctl user.max_user_namespaces, and "
			 "kernel.unprivileged_userns_clone=1 where it exists)", strerror(-rc));
		return rc;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen,
			 "rootless: %s %s failed (the helper's status %d); they take the ranges "
			 "of /etc/subuid and /etc/subgid", ROOTLESS_NEWUIDMAP, ROOTLESS_NEWGIDMAP,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return -EPERM;
	}
	if (setresgid(0, 0, 0) < 0 || setgroups(0, NULL) < 0 || setresuid(0, 0, 0) < 0) {
		rc = -errno;
		snprintf(err, errlen, "rootless: becoming root of the user namespace: %s",
			 strerror(-rc));
		return rc;
	}
	/* nothing mounted here reaches the user's own mount namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "rootless: making the mount namespace private: %s",
			 strerror(-rc));
		return rc;
	}
	if ((rc = remount_cgroups(r, err, errlen)) < 0)
		return rc;
	r->active = true;
	return 0;
}

void rootless_describe(const struct rootless *r, char *out, size_t outlen)
{
	if (!r->active) {
		snprintf(out, outlen, "root");
		return;
	}
	snprintf(out, outlen,
		 "rootless: uid %u%s and gid %u are root of goboxd's own user namespace; its "
		 "uids 1-%u are %u-%u (/etc/subuid), its gids 1-%u are %u-%u (/etc/subgid)%s",
		 (unsigned)r->uid, r->uid == 0 ? " (without CAP_SYS_ADMIN)" : "",
		 (unsigned)r->gid, r->uids.count, r->uids.start,
		 r->uids.start + r->uids.count - 1, r->gids.count, r->gids.start,
		 r->gids.start + r->gids.count - 1,
		 r->cgroups_remounted ? "; cgroup2 mounted anew in its own cgroup namespace, "
					"the one found being read-only" : "");
}
