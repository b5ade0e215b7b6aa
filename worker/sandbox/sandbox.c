#include "autoconf.h"

/*
 * The worker's sandbox context: the jail driver and binary chosen, the
 * init found, the mounts every jail shows, the job disk; opened once per
 * worker. A program's run is sandbox_run.c's, an interactive test's two
 * programs sandbox_interact.c's.
 */
#include "worker/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/caps.h"
#include "worker/sandbox/jobdir.h"
#include "common/strv.h"
#include "common/util.h"
#include "worker/sandbox/policy.h"
#include "worker/cgroup/cgroup.h"
#include "worker/sandbox/disks.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/network.h"
#include "worker/sandbox/sandbox_ctx.h"
#include "worker/sandbox/seccomp.h"

const char *const sandbox_base_env[5] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=" JAILPATH_TMP,
	"TMPDIR=" JAILPATH_TMP,
	"LANG=C.UTF-8",
	NULL,
};

#define INIT_NAME "goboxd-init"

/* ---- opening ---------------------------------------------------------- */

static bool is_executable(const char *path)
{
	struct stat st;

	return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static int use_driver(struct sandbox *sandbox, const struct jail_driver *drv, const char *path,
		      char *err, size_t errlen)
{
	if (!is_executable(path)) {
		snprintf(err, errlen, "jail %s: %s is not an executable file", drv->name, path);
		return -ENOENT;
	}
	sandbox->shared.driver = drv;
	sandbox->shared.path = xstrdup(path);
	return 0;
}

static int pick_driver(const struct sandbox_opts *o, struct sandbox *sandbox, char *err,
		       size_t errlen)
{
	const char *nsj = o->nsjail_path ? o->nsjail_path : "/usr/local/bin/nsjail";
	const char *bw = o->bwrap_path ? o->bwrap_path : "/usr/bin/bwrap";

	switch (o->jail) {
	case JAIL_KIND_AUTO:
		if (is_executable(nsj))
			return use_driver(sandbox, &jail_nsjail, nsj, err, errlen);
		if (is_executable(bw))
			return use_driver(sandbox, &jail_bwrap, bw, err, errlen);
		snprintf(err, errlen, "no jail binary: neither %s nor %s is executable", nsj, bw);
		return -ENOENT;
	case JAIL_KIND_NSJAIL:
		return use_driver(sandbox, &jail_nsjail, nsj, err, errlen);
	case JAIL_KIND_BWRAP:
		return use_driver(sandbox, &jail_bwrap, bw, err, errlen);
	}
	snprintf(err, errlen, "unknown jail kind %d", (int)o->jail);
	return -EINVAL;
}

/*
 * goboxd-init: the configured path, else next to the running binary (the
 * build tree, or an installation that keeps both in one place), else where
 * `make install` puts it.
 */
static int find_init(const struct sandbox_opts *o, struct sandbox *sandbox, char *err,
		     size_t errlen)
{
	char self[PATH_MAX], cand[PATH_MAX + sizeof(INIT_NAME)];
	char *slash;

	if (o->init_path) {
		if (!is_executable(o->init_path)) {
			snprintf(err, errlen, "init %s is not an executable file", o->init_path);
			return -ENOENT;
		}
		sandbox->shared.init_path = xstrdup(o->init_path);
		return 0;
	}
	snprintf(self, sizeof(self), "%s", self_exe());
	slash = strrchr(self, '/');
	if (slash) {
		*slash = '\0';
		snprintf(cand, sizeof(cand), "%s/%s", self, INIT_NAME);
		if (is_executable(cand)) {
			sandbox->shared.init_path = xstrdup(cand);
			return 0;
		}
	}
	if (is_executable(GOBOXD_PKGLIBEXECDIR "/" INIT_NAME)) {
		sandbox->shared.init_path = xstrdup(GOBOXD_PKGLIBEXECDIR "/" INIT_NAME);
		return 0;
	}
	snprintf(err, errlen, "%s not found next to goboxd (%s) nor in %s (set --init-path)",
		 INIT_NAME, self_exe()[0] ? self_exe() : "its path unknown", GOBOXD_PKGLIBEXECDIR);
	return -ENOENT;
}

/* First line of "<jail> --version"; "" when the jail has no such flag. */
static void read_version(struct sandbox *sandbox)
{
	const struct jail_shared *shared = &sandbox->shared;
	char buf[256];
	size_t off = 0;
	int p[2];
	pid_t pid;

	sandbox->version[0] = '\0';
	if (!shared->driver->version_arg || pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(p[1], 1);
		dup2(nul, 2);
		close_fds_from(3);
		execl(shared->path, shared->path, shared->driver->version_arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0) {
		ssize_t n;

		while (off + 1 < sizeof(buf) &&
		       ((n = read(p[0], buf + off, sizeof(buf) - 1 - off)) > 0 ||
			(n < 0 && errno == EINTR)))
			off += n > 0 ? (size_t)n : 0;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(p[0]);
	buf[off] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(sandbox->version, sizeof(sandbox->version), "%s", buf);
}

/* A mount at path in every jail, of src on the host (a bind's). */
static void add_mount_of(struct jail_shared *shared, enum jail_mount_kind k, const char *src,
			 const char *path, const char *target)
{
	struct jail_mount *m;

	shared->mounts = xreallocarray(shared->mounts, shared->nmounts + 1, sizeof(*shared->mounts));
	m = &shared->mounts[shared->nmounts++];
	m->kind = k;
	m->path = xstrdup(path);
	m->src = xstrdup(src);
	m->target = target ? xstrdup(target) : NULL;
}

static void add_mount(struct jail_shared *shared, enum jail_mount_kind k, const char *path,
		      const char *target)
{
	add_mount_of(shared, k, path, path, target);
}

/* Match the policy against this host: what exists, and what is a symlink. */
static void resolve_mounts(struct jail_shared *shared)
{
	for (size_t i = 0; i < policy_mounts_count; i++) {
		const struct policy_mount *pm = &policy_mounts[i];
		char target[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (pm->kind == POLICY_MOUNT_SYMLINK) {
			add_mount(shared, JAIL_MOUNT_SYMLINK, pm->path, pm->target);
			continue;
		}
		if (lstat(pm->path, &st) < 0)
			continue;
		if (pm->kind == POLICY_MOUNT_DEVICE) {
			if (S_ISCHR(st.st_mode))
				add_mount(shared, JAIL_MOUNT_DEV_BIND, pm->path, NULL);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			n = readlink(pm->path, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			/* /etc/localtime and friends point outside the policy:
			 * bind what they resolve to instead of a dangling link. */
			if (strncmp(pm->path, "/etc/", 5) == 0) {
				if (stat(pm->path, &st) == 0)
					add_mount(shared, JAIL_MOUNT_RO_BIND, pm->path, NULL);
				continue;
			}
			add_mount(shared, JAIL_MOUNT_SYMLINK, pm->path, target);
			continue;
		}
		if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
			add_mount(shared, JAIL_MOUNT_RO_BIND, pm->path, NULL);
	}
}

/*
 * A job's network asks slirp4netns's resolver (network.h): the jail's
 * /etc/resolv.conf says so, bound from a file of the jail dir (on the job
 * disk when there is one, which this process sees alone), written whole
 * under a name of its own first, as workers that share the jail dir each
 * write it.
 */
static int add_resolv_conf(struct jail_shared *shared, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	size_t len = strlen(NETWORK_RESOLV_CONF);
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", shared->jail_dir, NETWORK_RESOLV_CONF_NAME);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, NETWORK_RESOLV_CONF, len) != (ssize_t)len ||
	    fchmod(fd, 0644) < 0 || rename(tmp, path) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		unlink(tmp);
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
		return rc;
	}
	add_mount_of(shared, JAIL_MOUNT_RO_BIND, path, "/etc/resolv.conf", NULL);
	return 0;
}

/* The languages' extra paths, each once. */
static void copy_ro_mounts(struct jail_shared *shared, const char *const *in)
{
	size_t n = 0, k = 0;

	while (in && in[n])
		n++;
	shared->ro_mounts = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp(shared->ro_mounts[j], in[i]) == 0;
		if (!dup)
			shared->ro_mounts[k++] = xstrdup(in[i]);
	}
}

/*
 * The job disk: a tmpfs over the jail directory, capped in bytes and files,
 * seen by this process and the jails it starts only. Its pages are charged
 * to the cgroup of whoever wrote them, and it vanishes with the last
 * process of the namespace, so a crash leaves nothing on the host's disk.
 * Mounts made here must not reach the host: the namespace is made a slave
 * of the host's before anything is mounted (host mounts still show).
 */
static int mount_job_disk(const struct sandbox_opts *o, char *err, size_t errlen)
{
	char opts[96];
	int rc;

	if (unshare(CLONE_NEWNS) < 0) {
		rc = -errno;
		snprintf(err, errlen, "unshare(CLONE_NEWNS) for the job disk: %s", strerror(errno));
		return rc;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "making / a mount slave: %s", strerror(errno));
		return rc;
	}
	snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu,mode=0711",
		 (unsigned long long)o->disk_bytes, (unsigned long long)o->disk_files);
	if (mount("goboxd-jobs", o->jail_dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		rc = -errno;
		snprintf(err, errlen, "mounting the job disk (tmpfs %s) on %s: %s", opts,
			 o->jail_dir, strerror(errno));
		return rc;
	}
	return 0;
}

/*
 * Launching jails needs root's uid but only these; docs/architecture.md
 * says why each one is kept.
 */
int sandbox_keep_caps(void)
{
	static const cap_value_t keep[] = {
		CAP_CHOWN,        /* job directory and files to the sandbox uid */
		CAP_DAC_OVERRIDE, /* remove what the sandbox wrote; cgroupfs */
		CAP_FOWNER,       /* chmod/unlink files owned by the sandbox uid */
		CAP_KILL,         /* kill jailed processes running as the sandbox uid */
		CAP_SETUID,       /* the jail child drops to the sandbox uid */
		CAP_SETGID,
	};

	return caps_keep(keep, ARRAY_SIZE(keep));
}

int sandbox_open(const struct sandbox_opts *o, struct sandbox **out, char *err, size_t errlen)
{
	struct sandbox *sandbox = xcalloc(1, sizeof(*sandbox));
	int rc;

	rc = pick_driver(o, sandbox, err, errlen);
	if (rc == 0)
		rc = find_init(o, sandbox, err, errlen);
	if (rc < 0)
		goto fail;
	if (o->uid == 0 || o->gid == 0) {
		snprintf(err, errlen, "sandbox uid/gid must not be root");
		rc = -EINVAL;
		goto fail;
	}
	if (!o->jail_dir || o->jail_dir[0] != '/') {
		snprintf(err, errlen, "the jail directory must be an absolute path");
		rc = -EINVAL;
		goto fail;
	}
	sandbox->shared.jail_dir = xstrdup(o->jail_dir);
	sandbox->shared.uid = o->uid;
	sandbox->shared.gid = o->gid;
	sandbox->shared.jobs_per_jail = o->jobs_per_jail ? o->jobs_per_jail : 1;
	sandbox->tmpfs_kb = o->tmpfs_kb ? o->tmpfs_kb : 65536;
	sandbox->tmp_files = o->disk_files;
	if (o->disk_bytes) {
		rc = mount_job_disk(o, err, errlen);
		if (rc == 0)
			rc = disks_open(o->jail_dir, o->disk_bytes, o->disk_files,
					&sandbox->shared.disks, err, errlen);
		if (rc < 0)
			goto fail;
		sandbox->disk_quota = true;
	}
	sandbox->cpu = o->has_cpu || o->pin_cpu ? (int)o->cpu : -1;
	sandbox->pin_all = o->pin_cpu;
	_Static_assert(sizeof(*o->program_cpus) == sizeof(sandbox->program_cpus),
		       "initmsg_run.cpus holds a cpu_set_t");
	if (o->program_cpus)
		memcpy(sandbox->program_cpus, o->program_cpus, sizeof(sandbox->program_cpus));
	rc = seccomp_set_build(&sandbox->shared.seccomp, err, errlen);
	if (rc < 0)
		goto fail;
	rc = cgroup_tree_open(o->cgroup_root, o->cgroup_name, &sandbox->shared.cgroups, err, errlen);
	if (rc < 0)
		goto fail;
	resolve_mounts(&sandbox->shared);
	if (o->network && (rc = add_resolv_conf(&sandbox->shared, err, errlen)) < 0)
		goto fail;
	copy_ro_mounts(&sandbox->shared, o->ro_mounts);
	read_version(sandbox);
	*out = sandbox;
	return 0;
fail:
	sandbox_close(sandbox);
	return rc;
}

void sandbox_close(struct sandbox *sandbox)
{
	struct jail_shared *shared;

	if (!sandbox)
		return;
	shared = &sandbox->shared;
	if (shared->cgroups)
		cgroup_tree_close(shared->cgroups);
	seccomp_set_free(shared->seccomp);
	for (size_t i = 0; i < shared->nmounts; i++) {
		free(shared->mounts[i].path);
		free(shared->mounts[i].src);
		free(shared->mounts[i].target);
	}
	free(shared->mounts);
	strv_free(shared->ro_mounts);
	free(shared->path);
	free(shared->init_path);
	free(shared->jail_dir);
	disks_close(shared->disks);
	free(sandbox);
}

const char *sandbox_driver_name(const struct sandbox *sandbox)
{
	return sandbox->shared.driver->name;
}

const char *sandbox_driver_version(const struct sandbox *sandbox)
{
	return sandbox->version;
}

const char *sandbox_driver_path(const struct sandbox *sandbox)
{
	return sandbox->shared.path;
}

const struct jail_shared *sandbox_jail_shared(const struct sandbox *sandbox)
{
	return &sandbox->shared;
}

void sandbox_step_result_init(struct step_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out, 0);
	buf_init(&r->err, 0);
	buf_init(&r->interleaved, 0);
}

void sandbox_step_result_free(struct step_result *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
	buf_free(&r->interleaved);
}
